/* Reserved address space (see reserve.h). */
#include <sys/mman.h>

#include "util/reserve.h"

void hbg__commit(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    /* One call maps them all (refused before Linux 5.14: the writes below
     * then fault each page in themselves). */
    (void)madvise(p, bytes, MADV_POPULATE_WRITE);
#endif
    /* Each page written back with what it holds: committed, unchanged. */
    volatile unsigned char *b = p;
    for (size_t i = 0; i < bytes; i += 4096)
        b[i] = b[i];
}

void *hbg__reserve_hot(size_t bytes, size_t hot)
{
    if (bytes == 0)
        bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_NOHUGEPAGE
    /* Where transparent huge pages are on for every mapping, a reservation
     * of 2 MiB or more comes back aligned for them, and its first touch
     * (the commit below) would fault in 2 MiB at a time: more than the
     * prefix, and slow (reserve.h). */
    (void)madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
    hbg__commit(p, bytes < hot ? bytes : hot);
    return p;
}

void *hbg__reserve(size_t bytes)
{
    return hbg__reserve_hot(bytes, HBG_RESERVE_HOT);
}

void hbg__unreserve(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}
