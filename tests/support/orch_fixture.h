/* Test helpers for orchestrator-level tests: an orchestrator over a fake
 * device address space (non-eager) or over host memory (eager). */
#ifndef HBG_TEST_ORCH_FIXTURE_H
#define HBG_TEST_ORCH_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph_internal.h"

#define FAKE_HEAP_BASE 0x100000000ull

/* An orchestrator with `window` tasks and `heap` bytes at FAKE_HEAP_BASE,
 * already inside pass 1. */
hbg_orch *fx_orch(uint32_t window, uint64_t heap);
/* True when task `to` lists `from` among its fanins. */
bool fx_has_edge(const hbg_orch *o, uint32_t from, uint32_t to);
uint32_t fx_fanin_count(const hbg_orch *o, uint32_t task);
/* A 2-D f32 tensor over a fake buffer. */
hbg_tensor fx_buf(uint64_t addr, uint32_t rows, uint32_t cols);
/* A rows x cols view of `b` starting at (r0, c0). */
hbg_tensor fx_tile(const hbg_tensor *b, uint32_t r0, uint32_t c0, uint32_t rows, uint32_t cols);
/* Submits a one-block AIV task with the given args. */
hbg_status fx_task(hbg_orch *o, uint32_t n, hbg_arg *args, hbg_task_id *id);
/* The two orchestrators' images are the same: every section's count and
 * bytes (the def table and which cache entry each of its rows names
 * included), the heap's fill, and their Definitions by hash, nodes,
 * size and bytes. */
void fx_same_images(const hbg_orch *a, const hbg_orch *b);

#endif
