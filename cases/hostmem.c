/* The memory a run may use (see hostmem.h). */
#include "hostmem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

/* The least room any level of cgroup `dir` (a path under its hierarchy's
 * mount, ending in the cgroup's own path) has left, from the cgroup up to
 * the mount: limit less usage, each read with the file names the version
 * uses (v2: memory.max, memory.current; v1: memory.limit_in_bytes,
 * memory.usage_in_bytes). The walk up also covers a container whose mount
 * is its own cgroup, where the path /proc/self/cgroup gives, the host's,
 * names no folder. */
static void cgroup_room(char *dir, size_t mount_len, const char *max_name, const char *cur_name, uint64_t *room,
                        bool *limited)
{
    char path[4096];
    for (;;) {
        uint64_t max, cur;
        int n = snprintf(path, sizeof path, "%s/%s", dir, max_name);
        if (n > 0 && (size_t)n < sizeof path && read_u64(path, &max)) {
            snprintf(path, sizeof path, "%s/%s", dir, cur_name);
            if (!read_u64(path, &cur))
                cur = 0;
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
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = 0;
        const char *ctrl = c1 + 1, *cg = c2 + 1;
        bool v2 = !strcmp(line, "0") && !*ctrl, v1 = !v2 && has_item(ctrl, "memory");
        if (!v1 && !v2)
            continue;
        char dir[4096];
        int n = snprintf(dir, sizeof dir, "%s/sys/fs/cgroup%s", root, v1 ? "/memory" : "");
        if (n < 0 || (size_t)n >= sizeof dir)
            continue;
        size_t mount_len = (size_t)n;
        if (snprintf(dir + n, sizeof dir - (size_t)n, "%s", strcmp(cg, "/") ? cg : "") >= (int)(sizeof dir - (size_t)n))
            continue;
        if (v1)
            cgroup_room(dir, mount_len, "memory.limit_in_bytes", "memory.usage_in_bytes", room, limited);
        else
            cgroup_room(dir, mount_len, "memory.max", "memory.current", room, limited);
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
