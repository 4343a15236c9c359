/* TEMPORARY: removed when the trace and device branches merge. */
#include <time.h>
#include "hbg/trace.h"
#include "hbg/kernel.h"
uint64_t hbg_mono_ns(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec; }
void hbg_rec(hbg_recpool *p, hbg_phase phase, uint64_t s, uint64_t e, uint64_t d) { (void)p; (void)phase; (void)s; (void)e; (void)d; }
struct hbg_kernel_table { hbg_kernel_fn fn[HBG_MAX_KERNELS]; };
#include <stdlib.h>
hbg_status hbg_kernel_table_create(hbg_kernel_table **out) { *out = calloc(1, sizeof **out); return *out ? HBG_OK : HBG_E_NOMEM; }
void hbg_kernel_table_destroy(hbg_kernel_table *kt) { free(kt); }
hbg_status hbg_kernel_register(hbg_kernel_table *kt, uint16_t id, const char *name, hbg_kernel_fn fn) { (void)name; if (id >= HBG_MAX_KERNELS) return HBG_E_INVAL; kt->fn[id] = fn; return HBG_OK; }
hbg_kernel_fn hbg_kernel_lookup(const hbg_kernel_table *kt, uint16_t id) { return id < HBG_MAX_KERNELS ? kt->fn[id] : NULL; }
