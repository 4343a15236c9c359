/* The memory a run may use (see hostmem.h). */
#include "hostmem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Room for a cgroup's path and the files under it. */
#define CG_PATH 8192

/* The first unsigned number in file `path`; false when it has none (or
 * says "max": no limit). */
static bool read_u64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fscanf(f, "%" SCNu64, out) == 1;
    fclose(f);
    return ok;
}

/* The value of `key` in a memory.stat file; false when it has none. */
static bool read_stat(const char *path, const char *key, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char k[64];
    uint64_t v;
    bool found = false;
    while (!found && fscanf(f, "%63s %" SCNu64, k, &v) == 2)
        if (!strcmp(k, key))
            *out = v, found = true;
    fclose(f);
    return found;
}

/* The file names of a cgroup version's memory controller. */
typedef struct cg_files {
    const char *max, *cur, *stat, *inactive;
} cg_files;

static const cg_files CG_V2 = {"memory.max", "memory.current", "memory.stat", "inactive_file"};
/* v1's usage and its stat's total_ include the cgroup's descendants */
static const cg_files CG_V1 = {"memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat",
                               "total_inactive_file"};

/* The least room any level of cgroup `dir` (a path under its hierarchy's
 * mount, ending in the cgroup's own path) has left, from the cgroup up to
 * the mount: limit less usage. Usage counts page cache, which the kernel
 * reclaims before it kills anything: the inactive part of the file cache
 * is taken off it (a container whose cache had filled to its limit would
 * otherwise refuse every run). The walk up also covers a container whose
 * mount is its own cgroup, where the path /proc/self/cgroup gives, the
 * host's, names no folder. */
static void cgroup_room(char *dir, size_t mount_len, const cg_files *fn, uint64_t *room, bool *limited)
{
    char path[CG_PATH + 32];
    for (;;) {
        uint64_t max, cur, cache;
        snprintf(path, sizeof path, "%s/%s", dir, fn->max);
        if (read_u64(path, &max)) {
            snprintf(path, sizeof path, "%s/%s", dir, fn->cur);
            if (!read_u64(path, &cur))
                cur = 0;
            snprintf(path, sizeof path, "%s/%s", dir, fn->stat);
            if (read_stat(path, fn->inactive, &cache))
                cur -= cache < cur ? cache : cur;
            uint64_t left = max > cur ? max - cur : 0;
            if (left < *room) {
                *room = left;
                *limited = true;
            }
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < mount_len)
            return;
        *slash = 0;
    }
}

/* Whether comma-separated `list` holds `tok` as one of its items. */
static bool has_item(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, tok, n))
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

/* Walks the process's memory cgroup (v2 line "0::PATH", v1 line
 * "N:...memory...:PATH"), lowering *room to what its levels leave. */
static void cgroups(const char *root, uint64_t *room, bool *limited)
{
    char path[CG_PATH], line[CG_PATH];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        /* a line longer than the buffer: its rest is not a line of its own */
        bool whole = strchr(line, '\n') != NULL || feof(f);
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            goto next;
        *c1 = *c2 = 0;
        const char *ctrl = c1 + 1, *cg = c2 + 1;
        bool v2 = !strcmp(line, "0") && !*ctrl, v1 = !v2 && has_item(ctrl, "memory");
        if (!v1 && !v2)
            goto next;
        char dir[CG_PATH];
        int n = snprintf(dir, sizeof dir, "%s/sys/fs/cgroup%s", root, v1 ? "/memory" : "");
        if (n < 0 || (size_t)n >= sizeof dir)
            goto next;
        /* a path cut short, or too long to add: the mount's own level
         * (a container's cgroup) is still read */
        size_t mount_len = (size_t)n;
        if (whole && strcmp(cg, "/") && strlen(cg) < sizeof dir - mount_len)
            memcpy(dir + n, cg, strlen(cg) + 1);
        cgroup_room(dir, mount_len, v1 ? &CG_V1 : &CG_V2, room, limited);
    next:
        while (!whole && fgets(line, sizeof line, f))
            whole = strchr(line, '\n') != NULL;
    }
    fclose(f);
}

bool case_host_available_at(const char *root, uint64_t *bytes, const char **from)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[256];
    uint64_t avail = 0, swap = 0, kb;
    bool have = false;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1)
            avail = kb, have = true;
        else if (sscanf(line, "SwapFree: %" SCNu64 " kB", &kb) == 1)
            swap = kb;
    }
    fclose(f);
    *bytes = (avail + swap) * 1024;
    *from = "MemAvailable + free swap";
    bool limited = false;
    cgroups(root, bytes, &limited);
    if (limited)
        *from = "the memory cgroup's limit less its use";
    return have;
}

bool case_host_available(uint64_t *bytes, const char **from)
{
    return case_host_available_at("", bytes, from);
}

case_mem_text case_mem(uint64_t b)
{
    case_mem_text t;
    if (b < 1000000u)
        snprintf(t.s, sizeof t.s, "%.1f KB", (double)b / 1e3);
    else if (b < 1000000000u)
        snprintf(t.s, sizeof t.s, "%.1f MB", (double)b / 1e6);
    else
        snprintf(t.s, sizeof t.s, "%.1f GB", (double)b / 1e9);
    return t;
}
