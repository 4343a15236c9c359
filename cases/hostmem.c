/* The memory a run may use (see hostmem.h). */
#include "hostmem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Undoes mountinfo's octal escapes (a space is "\\040") in place. */
static void unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r; w++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
            r[3] <= '7') {
            *w = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
            r += 4;
        } else {
            *w = *r++;
        }
    }
    *w = 0;
}

/* Where a cgroup hierarchy is mounted: the folder, and the cgroup the
 * mount shows at that folder (mountinfo's root field; "/" unless the
 * mount is of a cgroup below the hierarchy's root, as a container's is). */
typedef struct cg_mount {
    char point[CG_PATH], root[CG_PATH];
} cg_mount;

/* Whether `p` is `dir` or a path under it. */
static bool path_under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    return !strcmp(dir, "/") || (!strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/'));
}

/* The mount of the memory controller's hierarchy from ROOT's
 * /proc/self/mountinfo: a cgroup2 file system (v2), or a cgroup one
 * whose options name memory, alone or beside others (v1, "cpu,memory").
 * Of several, the first that shows cgroup `cg`. False when the file
 * cannot be read or names none; the caller then takes the usual place. */
static bool find_mount(const char *root, bool v1, const char *cg, cg_mount *out)
{
    char path[CG_PATH];
    snprintf(path, sizeof path, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool found = false, fallback = false;
    while (!found && getline(&line, &cap, f) > 0) {
        /* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        char *field[6], *save = NULL, *tok = strtok_r(line, " \n", &save);
        int n = 0;
        for (; tok && n < 6; tok = strtok_r(NULL, " \n", &save))
            field[n++] = tok;
        while (tok && strcmp(tok, "-"))
            tok = strtok_r(NULL, " \n", &save);
        char *type = tok ? strtok_r(NULL, " \n", &save) : NULL;
        char *source = type ? strtok_r(NULL, " \n", &save) : NULL;
        char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
        if (n < 6 || !super || strcmp(type, v1 ? "cgroup" : "cgroup2") || (v1 && !has_item(super, "memory")))
            continue;
        unescape(field[3]);
        unescape(field[4]);
        if (strlen(field[3]) >= CG_PATH || strlen(field[4]) >= CG_PATH)
            continue;
        found = path_under(cg, field[3]);
        if (found || !fallback) {
            strcpy(out->root, field[3]);
            strcpy(out->point, field[4]);
            fallback = true;
        }
    }
    free(line);
    fclose(f);
    return fallback;
}

/* Walks the process's memory cgroup (v2 line "0::PATH", v1 line
 * "N:...memory...:PATH"), lowering *room to what its levels leave. The
 * hierarchy is found where mountinfo says it is mounted (a v1 memory
 * controller may share a mount, /sys/fs/cgroup/cpu,memory; a hybrid
 * host's v2 is at /sys/fs/cgroup/unified), else at /sys/fs/cgroup (v2)
 * or /sys/fs/cgroup/memory (v1). */
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
        cg_mount m;
        if (!find_mount(root, v1, cg, &m)) {
            strcpy(m.point, v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup");
            strcpy(m.root, "/");
        }
        char dir[CG_PATH];
        int n = snprintf(dir, sizeof dir, "%s%s", root, m.point);
        if (n < 0 || (size_t)n >= sizeof dir)
            goto next;
        /* The cgroup's folder is its path below the mount's root. A path
         * the mount does not show (a container's mount of its own cgroup,
         * named by the host's path), cut short, or too long to add: the
         * mount's own level is still read. */
        size_t mount_len = (size_t)n;
        const char *rel = path_under(cg, m.root) ? cg + (strcmp(m.root, "/") ? strlen(m.root) : 0) : "";
        if (whole && strcmp(rel, "/") && strlen(rel) < sizeof dir - mount_len)
            memcpy(dir + n, rel, strlen(rel) + 1);
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
    /* Under 1 KB in bytes: "0.0 KB" said that 1 byte was nothing. Each
     * unit ends where its one decimal would round up to 1000.0, so 999,950
     * bytes are "1.0 MB", not "1000.0 KB". */
    if (b < 1000u)
        snprintf(t.s, sizeof t.s, "%u byte%s", (unsigned)b, b == 1 ? "" : "s");
    else if (b < 999950u)
        snprintf(t.s, sizeof t.s, "%.1f KB", (double)b / 1e3);
    else if (b < 999950000u)
        snprintf(t.s, sizeof t.s, "%.1f MB", (double)b / 1e6);
    else
        snprintf(t.s, sizeof t.s, "%.1f GB", (double)b / 1e9);
    return t;
}
