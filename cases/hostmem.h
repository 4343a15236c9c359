/* How much memory the host can still give a run, and what a case's run
 * needs, for the check `hbg run` makes before any rank starts (the
 * `fits` hook of case.h): a run the host cannot hold is refused with a
 * message instead of filling memory page by page until the kernel kills
 * a rank.
 */
#ifndef HBG_CASES_HOSTMEM_H
#define HBG_CASES_HOSTMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a rank process holds beside a case's own arrays and the runtime's
 * pools (code, libraries, stacks, the log's buffers), rounded up. */
#define CASE_PROCESS_BYTES ((uint64_t)32 << 20)

/* The memory a run may use: MemAvailable plus free swap from
 * /proc/meminfo, or less where the process's memory cgroup sets a limit,
 * here or in an ancestor (v2: memory.max; v1: memory.limit_in_bytes;
 * each where /proc/self/mountinfo says, else at its usual place under
 * /sys/fs/cgroup): the least room any of
 * them has left, limit less usage less reclaimable file cache. *from
 * says which figure it is, for a message.
 * False where /proc/meminfo does not say (no file, no MemAvailable): the
 * caller then does not refuse. */
bool case_host_available(uint64_t *bytes, const char **from);

/* The same, reading /proc and the cgroup mounts under `root` ("" for
 * the real ones): for the tests. */
bool case_host_available_at(const char *root, uint64_t *bytes, const char **from);

/* b as a memory size for a message: under 1000 in bytes ("1 byte",
 * "512 bytes"), else in decimal units with one decimal: "40.0 KB",
 * "388.5 MB", "106.4 GB". */
typedef struct case_mem_text {
    char s[24];
} case_mem_text;
case_mem_text case_mem(uint64_t b);

#endif
