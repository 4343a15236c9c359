/* hbg — cross-rank services: receive windows and arrival counters shared by
 * the rank processes of one run.
 *
 * Contract with the driver (`hbg run`) and with kernels:
 *
 *   - The driver calls hbg_xrank_create() ONCE, in the parent, BEFORE it
 *     forks the rank processes. The object lives in one MAP_SHARED anonymous
 *     mapping, so every rank sees it at the same address and `hbg_xrank *` is
 *     a valid pointer in all of them.
 *   - Each rank passes that pointer to its case's own code and as its
 *     device's `hbg_device.services`; kernels receive it as
 *     `hbg_kernel_args.services`, and an eager golden run gets it as the
 *     `services` argument of hbg_eager_run().
 *   - After the ranks have exited, the parent calls hbg_xrank_destroy().
 *     A rank may call it before exiting too; it only unmaps its own view.
 *
 * Protocol: a sender copies its payload into the receiver's window, then
 * calls hbg_xrank_signal(receiver, epoch); the receiver calls
 * hbg_xrank_wait(self, epoch, expected senders) and reads its window. The
 * signal publishes the copy (release/acquire). Epochs must be unique per
 * exchange for the life of the object (device runs and golden runs alike):
 * a counter that both ranks advance identically is the intended source.
 * Counters live in HBG_XRANK_SLOTS slots indexed by epoch, tagged with it,
 * so ranks may drift apart by fewer than that many epochs.
 *
 * A wait never spins forever: it sleeps on a futex between checks and gives
 * up with HBG_E_PEER_TIMEOUT once the object's timeout has passed, or at
 * once with HBG_E_PEER_GONE when the driver has said a rank has ended
 * (hbg_xrank_abandon): a survivor then reports its own failure rather
 * than sit out the timeout, by whose end the driver may have killed it.
 */
#ifndef HBG_XRANK_H
#define HBG_XRANK_H

#include <stdint.h>
#include "hbg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HBG_XRANK_MAX_RANKS 64
#define HBG_XRANK_SLOTS 1024
#define HBG_XRANK_DEFAULT_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)

typedef struct hbg_xrank hbg_xrank;

/* `window_bytes` per rank (rounded up to a page); `timeout_ns` bounds every
 * wait (0: HBG_XRANK_DEFAULT_TIMEOUT_NS). */
hbg_status hbg_xrank_create(uint32_t nranks, uint64_t window_bytes, uint64_t timeout_ns, hbg_xrank **out);
void hbg_xrank_destroy(hbg_xrank *x);

uint32_t hbg_xrank_nranks(const hbg_xrank *x);
uint64_t hbg_xrank_window_bytes(const hbg_xrank *x);
uint64_t hbg_xrank_timeout_ns(const hbg_xrank *x);

/* Base of `rank`'s receive window (NULL for a rank out of range). */
void *hbg_xrank_window(hbg_xrank *x, uint32_t rank);

/* One arrival at `rank` for `epoch`. Everything the caller wrote before
 * this call is visible to a waiter that sees the arrival. */
hbg_status hbg_xrank_signal(hbg_xrank *x, uint32_t rank, uint64_t epoch);

/* Blocks until `rank` has `expected` arrivals for `epoch`, or the timeout
 * passes (HBG_E_PEER_TIMEOUT), or a rank has been abandoned
 * (HBG_E_PEER_GONE, checked only while the arrivals are short: a wait
 * already answered stays answered). */
hbg_status hbg_xrank_wait(hbg_xrank *x, uint32_t rank, uint64_t epoch, uint32_t expected);

/* Says `rank` has ended for good (the driver, when a rank process dies or
 * fails, or cannot be started) and wakes every waiter: each wait under way
 * or to come whose arrivals are short ends with HBG_E_PEER_GONE, whichever
 * peer it waits for, since the run they belong to cannot finish. Safe from
 * any process of the mapping, at any time; HBG_E_INVAL for a rank out of
 * range. */
hbg_status hbg_xrank_abandon(hbg_xrank *x, uint32_t rank);

#ifdef __cplusplus
}
#endif
#endif
