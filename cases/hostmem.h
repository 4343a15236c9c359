/* How much memory the host can still give a case's set-up: MemAvailable
 * plus free swap, from /proc/meminfo. A case whose arrays cannot fit
 * refuses with a message before it allocates them, instead of filling
 * memory page by page until the kernel kills the rank. */
#ifndef HBG_CASES_HOSTMEM_H
#define HBG_CASES_HOSTMEM_H

#include <stdbool.h>
#include <stdint.h>

/* False where the host does not say (no /proc/meminfo, or no
 * MemAvailable line): the caller then does not refuse. */
bool case_host_available(uint64_t *bytes);

/* b as a memory size for a message: "388.5 MB" below 1 GB, else
 * "106.4 GB" (decimal units, one decimal). */
typedef struct case_mem_text {
    char s[24];
} case_mem_text;
case_mem_text case_mem(uint64_t b);

#endif
