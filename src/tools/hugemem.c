#include "tools/hugemem.h"

#include <stdint.h>
#include <sys/mman.h>

#define HM_HUGE ((size_t)2 << 20)

/* n bytes on small pages (refused huge ones even where they are the default). */
static int hm_reserve(hm_block *b, size_t n)
{
    size_t len = (n + 4095) & ~(size_t)4095;
    if (len == 0)
        len = 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    madvise(m, len, MADV_NOHUGEPAGE);
    b->base = b->p = m;
    b->maplen = b->len = len;
    return 0;
}

int hm_alloc(hm_block *b, size_t n)
{
    /* A huge page is cleared whole, but a small-page fault costs about
     * 10 us on these virtual machines (they pay for each one twice), so
     * small pages win only for small blocks: under 64 KiB (on `hbg phases`
     * of a 200 MB log, a 512 KiB threshold cost more faults and time). */
    if (n < HM_HUGE / 32)
        return hm_reserve(b, n);
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
