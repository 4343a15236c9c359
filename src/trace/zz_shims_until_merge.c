/* TEMPORARY: removed when the trace and device branches merge. */
#include <time.h>
#include "hbg/trace.h"
#include "hbg/kernel.h"
struct hbg_kernel_table { hbg_kernel_fn fn[HBG_MAX_KERNELS]; };
#include <stdlib.h>
hbg_status hbg_kernel_table_create(hbg_kernel_table **out) { *out = calloc(1, sizeof **out); return *out ? HBG_OK : HBG_E_NOMEM; }
void hbg_kernel_table_destroy(hbg_kernel_table *kt) { free(kt); }
hbg_status hbg_kernel_register(hbg_kernel_table *kt, uint16_t id, const char *name, hbg_kernel_fn fn) { (void)name; if (id >= HBG_MAX_KERNELS) return HBG_E_INVAL; kt->fn[id] = fn; return HBG_OK; }
hbg_kernel_fn hbg_kernel_lookup(const hbg_kernel_table *kt, uint16_t id) { return id < HBG_MAX_KERNELS ? kt->fn[id] : NULL; }
