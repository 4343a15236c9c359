#include "tools/hugemem.h"

#include <stdint.h>
#include <sys/mman.h>

#define HM_HUGE ((size_t)2 << 20)

int hm_alloc(hm_block *b, size_t n)
{
    size_t len = (n + HM_HUGE - 1) & ~(HM_HUGE - 1);
    if (len == 0)
        len = HM_HUGE;
    size_t maplen = len + HM_HUGE;
    /* NORESERVE: a reservation sized for the worst case costs nothing
     * until it is touched */
    void *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    uintptr_t a = ((uintptr_t)m + HM_HUGE - 1) & ~(uintptr_t)(HM_HUGE - 1);
    madvise((void *)a, len, MADV_HUGEPAGE); /* advice: refused where unsupported */
    b->base = m;
    b->maplen = maplen;
    b->p = (void *)a;
    b->len = len;
    return 0;
}

void hm_free(hm_block *b)
{
    if (b->base)
        munmap(b->base, b->maplen);
    b->base = b->p = NULL;
    b->maplen = b->len = 0;
}
