/* Reserved address space for the runtime's worst-case arrays.
 *
 * The orchestrator, the tensor map, the Graph recorder and the image
 * mirror each size their arrays for the worst case the task window allows,
 * at creation, so nothing on the bind path allocates. Reserving is not
 * committing: a page costs memory only once touched, so a 16384-task
 * window costs what a pass uses.
 *
 * What the first pass of a rank will certainly touch is committed at
 * creation instead: a page fault costs a microsecond or more, and a dsv4
 * rank's first bind took some 1,840 of them in host_orch alone. Every
 * reservation commits its first HBG_RESERVE_HOT bytes (the arrays fill
 * from the front, and that is what a pass of a few thousand tasks uses;
 * the tensor map's hashed buffer table starts inside that prefix and
 * doubles as a pass needs, so it too touches only what a pass uses).
 * Measured with getrusage around host_orch of a cold pass: dsv4 1,842
 * faults -> 107, qwen 152 -> 5, for a few MB more resident memory per
 * rank (the prefixes). The arrays a dsv4 rank's first pass still filled
 * past the prefix (the image's tensor records, the tensor map's blocks
 * and spare) commit a larger one of their own, and the runtime commits
 * its staging buffer and the stack host_orch runs on (util/stack.h),
 * both in the first pass's static_arena:
 * perf's page-fault samples of a dsv4 rank's cold pass, 60 -> 2 in
 * host_orch and 15 -> 0 in arena_h2d.
 * Transparent huge pages would cut the count, but on a fragmented machine a
 * huge-page fault waits for compaction and made cold passes far slower.
 */
#ifndef HBG_UTIL_RESERVE_H
#define HBG_UTIL_RESERVE_H

#include <stddef.h>

#define HBG_RESERVE_HOT ((size_t)256 << 10)

/* `bytes` of zeroed, private address space, the first HBG_RESERVE_HOT
 * bytes committed now and the rest on first touch; NULL when refused. */
void *hbg__reserve(size_t bytes);
/* The same with the first `hot` bytes committed, for an array whose first
 * pass is known to reach further. */
void *hbg__reserve_hot(size_t bytes, size_t hot);

/* Makes the pages of [p, p + bytes) resident: mapped, then written once
 * each. Mapping alone (MAP_POPULATE, MADV_POPULATE_WRITE) is not enough
 * in a virtual machine whose host backs a guest page only when the guest
 * first writes it: measured here, a 1 MiB region mapped that way still
 * cost ~4 us per page at its first write, ~0.5 ms for 478 KB, and 10 us
 * per page once written page by page; mapped and then written, 4.6 us per
 * page here and nothing at first use. */
void hbg__commit(void *p, size_t bytes);
void hbg__unreserve(void *p, size_t bytes);

#endif
