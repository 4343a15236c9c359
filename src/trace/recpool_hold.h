/* A record pool held by the runtime that arms it.
 *
 * A pool serves one pass at a time: arming resets every buffer, and the
 * jsonl line is formatted in the pool's one buffer. Two runtimes running
 * passes at once on one pool (a config copied to several threads after
 * hbg_runtime_config_from_env made its pool) corrupted each other's
 * records: lines of another pass's inv, records of other threads, lines
 * that were not JSON. So a runtime holds its pool from create to
 * destroy, and a second runtime is refused the pool at create, where the
 * mistake is made, not at a pass that happens to overlap.
 */
#ifndef HBG_TRACE_RECPOOL_HOLD_H
#define HBG_TRACE_RECPOOL_HOLD_H

#include <stdbool.h>

#include "hbg/trace.h"

/* Takes p for who; false when another holder has it. */
bool hbg__recpool_hold(hbg_recpool *p, const void *who);
/* Gives p up, when who holds it. */
void hbg__recpool_release(hbg_recpool *p, const void *who);

#endif
