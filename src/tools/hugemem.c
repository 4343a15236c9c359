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
    /* A huge page is cleared whole when first touched (2 MiB, some 100 us
     * and far more on a loaded machine), a small page one at a time. The
     * arrays are reserved for the worst case a file allows and touched
     * only as far as it goes, so a block under one huge page stays on
     * small pages: a small log then costs a few of them, where a huge
     * page an array cost hbg compare over 2000 small logs 1 to 17 s of
     * clearing (0.4 s without). A block past 2 MiB is a large log's,
     * touched through: on `hbg phases` of a 200 MB log the threshold moved
     * from 64 KiB to 2 MiB cost some 900 more faults and no time seen. */
    if (n < HM_HUGE)
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
