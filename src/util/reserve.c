/* Reserved address space (see reserve.h). */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/reserve.h"

void hbg__commit(void *p, size_t bytes)
{
    if (!bytes)
        return;
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
#ifdef MADV_POPULATE_WRITE
    /* One call maps them all (refused before Linux 5.14: the writes below
     * then fault each page in themselves). It changes no byte, so the
     * whole pages may be given even where p is a heap block that shares
     * its first and last page with others. */
    uintptr_t a = (uintptr_t)p, lo = a & ~(uintptr_t)(page - 1), hi = (a + bytes + page - 1) & ~(uintptr_t)(page - 1);
    (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
    /* A byte of each page written back with what it holds: committed,
     * unchanged. Only bytes inside the range: p may be a heap block whose
     * page it shares with others. */
    volatile unsigned char *b = p;
    for (size_t i = 0; i < bytes; i += page)
        b[i] = b[i];
    b[bytes - 1] = b[bytes - 1];
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
