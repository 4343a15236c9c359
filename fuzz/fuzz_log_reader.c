/* libFuzzer target: the log reader (lexer, pass grouping, statistics) and
 * the timeline writer on arbitrary bytes. The input is not NUL-terminated,
 * so any read past its end is an ASan report. */
#include <stdint.h>
#include <stdio.h>

#include "tools/phstats.h"
#include "tools/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    ps_options o = {size && (data[0] & 1), true};
    ps_log L;
    if (ps_read(&L, "fuzz.log", (const char *)data, size, &o) == HBG_OK) {
        if (L.nused) {
            st_result R;
            st_compute(&L, &R);
        }
        if (sink) {
            dg_list w;
            dg_init(&w, 100);
            tl_report rep;
            tl_write(&L, NULL, 0, sink, &rep, &w);
            dg_free(&w);
        }
    }
    ps_free(&L);
    return 0;
}
