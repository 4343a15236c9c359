/* hbg — bounds: tensor arguments held by the runtime.
 *
 * A decode step submits the same tasks on the same tensors pass after
 * pass, and replays each layer's Definition with the layer's own
 * tensors. Passed as hbg_arg arrays, a submit that repeats the last
 * pass's (the task memo) is known for one only after each tensor is read
 * and compared: 96 bytes an argument. A bound holds the tensors and their
 * directions in the runtime, so they change only through hbg_bound_set;
 * each content it holds has a stamp, and a submit passed a bound whose
 * stamp the last pass's submit at its window slot noted is answered
 * without reading one (hbg_submit_task_bound in orch.h,
 * hbg_submit_graph_bound in graph.h).
 *
 * hbg_bound_create copies n arguments (each tensor present; its dir
 * HBG_IN, HBG_INOUT, HBG_OUT or HBG_NO_DEP, never HBG_OUT_ALLOC, whose
 * buffer the runtime writes into the caller's tensor; n at most
 * HBG_MAX_BOUND_TENSORS) and never keeps the caller's pointers.
 * hbg_bound_set replaces one slot; a slot set to the bytes and direction
 * it holds is no change. Views are checked against their buffers where
 * the bound is used, as for arguments passed as such. Create and destroy
 * allocate and free; set copies one tensor, and a change costs the next
 * submit that passes the bound its memo answer (a new stamp): do them
 * outside the bind, or when a buffer moves, not every pass. A bound
 * belongs to one thread at a time, and must not be changed or destroyed
 * while a submit that uses it runs.
 * A Graph body is passed the bound's own tensors: what it changes while
 * it runs, the call stamps anew; a pointer kept past the call and
 * written through later changes the bound behind its stamp.
 */
#ifndef HBG_BOUND_H
#define HBG_BOUND_H

#include <stdint.h>

#include "hbg/status.h"
#include "hbg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most tensors a bound holds: a Graph call's boundary at most (a
 * task takes HBG_MAX_TASK_TENSORS of them). */
#define HBG_MAX_BOUND_TENSORS 128

typedef struct hbg_bound hbg_bound;
struct hbg_arg;

hbg_status hbg_bound_create(uint32_t n, const struct hbg_arg *args, hbg_bound **out);
hbg_status hbg_bound_set(hbg_bound *bd, uint32_t slot, const hbg_tensor *t, uint8_t dir);
/* What a bound holds: its slot count (0 for NULL), and a copy of one
 * slot's tensor and direction (HBG_E_INVAL past the count). Copies, not
 * pointers: a tensor changed behind the bound's back would keep a stamp
 * that no longer names what it holds. */
uint32_t hbg_bound_count(const hbg_bound *bd);
hbg_status hbg_bound_get(const hbg_bound *bd, uint32_t slot, hbg_tensor *t, uint8_t *dir);
void hbg_bound_destroy(hbg_bound *bd);

/* Why the last failed bound call on this thread failed, in one line
 * ("hbg_bound_set: slot 5, but the bound has 4"): bounds are made and
 * changed outside any pass, so no orchestrator holds their errors. Valid
 * until the next bound call on the thread; not cleared by a success. */
const char *hbg_bound_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
