/* The host's available memory (see hostmem.h). */
#include "hostmem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool case_host_available(uint64_t *bytes)
{
    FILE *f = fopen("/proc/meminfo", "r");
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
    return have;
}

case_mem_text case_mem(uint64_t b)
{
    case_mem_text t;
    if (b < 1000000000u)
        snprintf(t.s, sizeof t.s, "%.1f MB", (double)b / 1e6);
    else
        snprintf(t.s, sizeof t.s, "%.1f GB", (double)b / 1e9);
    return t;
}
