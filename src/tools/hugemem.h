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
    void *p;         /* start of the usable bytes (2 MiB-aligned when on huge pages) */
    size_t len;      /* usable bytes (n rounded up to the page size used) */
} hm_block;

/* Zero-filled; returns 0, or -1 when the mapping fails. A block under
 * 2 MiB stays on small pages: a huge page is cleared whole. */
int hm_alloc(hm_block *b, size_t n);
void hm_free(hm_block *b);

#endif
