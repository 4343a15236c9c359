/* Large arrays of the log tools on transparent huge pages.
 *
 * The pass array of a large log is tens of megabytes, walked a few times.
 * On 4 KiB pages every walk takes a TLB miss per page, which under a
 * hypervisor's nested paging costs more than the work itself; on 2 MiB
 * pages the same walks cost a handful. Where the kernel offers no huge
 * pages this is an ordinary anonymous mapping. */
#ifndef HBG_TOOLS_HUGEMEM_H
#define HBG_TOOLS_HUGEMEM_H

#include <stddef.h>

typedef struct hm_block {
    void *base;      /* the mapping, for hm_free */
    size_t maplen;
    void *p;         /* 2 MiB-aligned start of the usable bytes */
    size_t len;      /* usable bytes (n rounded up to 2 MiB) */
} hm_block;

/* Zero-filled; returns 0, or -1 when the mapping fails. */
int hm_alloc(hm_block *b, size_t n);
/* The same on small pages: for a reservation of which only a little may
 * ever be touched (a column per segment, sized for the worst case). */
int hm_reserve(hm_block *b, size_t n);
void hm_free(hm_block *b);

#endif
