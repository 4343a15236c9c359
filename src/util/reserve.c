/* Reserved address space (see reserve.h). */
#include <sys/mman.h>

#include "util/reserve.h"

/* One write per page: the kernel maps a zeroed page on each, the same
 * work the first pass would have done, but here, at creation. */
static void commit(void *p, size_t bytes)
{
    volatile unsigned char *b = p;
    for (size_t i = 0; i < bytes; i += 4096)
        b[i] = 0;
}

void *hbg__reserve(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    commit(p, bytes < HBG_RESERVE_HOT ? bytes : HBG_RESERVE_HOT);
    return p;
}

void hbg__unreserve(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}
