/* Records in a counter's ticks, for the orchestrator's operation clock.
 *
 * The operations of a pass are timed in raw TSC ticks (orch/opclock.h), and
 * converting them is no work for the hot path: they are stored as ticks,
 * flagged, and mapped to CLOCK_MONOTONIC nanoseconds when the pass's line is
 * written, with the map of the pass's two anchors.
 */
#ifndef HBG_TRACE_RECTICKS_H
#define HBG_TRACE_RECTICKS_H

#include <stdint.h>

#include "hbg/trace.h"
#include "util/clockmap.h"

/* hbg_rec, with start and end in ticks of the clock `map` will convert. */
void hbg__rec_ticks(hbg_recpool *p, hbg_phase phase, uint64_t start, uint64_t end, uint64_t detail);
/* The map of this pass's tick records (set after the pass, before the
 * write; arming forgets it). Tick records written without a map are
 * counted as dropped: a time that cannot be placed is not made up. */
void hbg__recpool_set_map(hbg_recpool *p, const hbg__clockmap *map);

#endif
