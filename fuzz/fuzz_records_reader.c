/* libFuzzer target: the host_phase_records.jsonl reader on arbitrary bytes,
 * and the timeline writer joining what it read to a fixed two-pass log. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/records.h"
#include "tools/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char LOG[] =
    "[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=5 wall_ns=1787400000000000000\n"
    "[mono_ns=20][T0x1][TIMING] f: bind phase=host_orch start_ns=100 dur_ns=50 tasks=3 heap_used=4096 pid=7 inv=1\n"
    "[mono_ns=20][T0x1][TIMING] f: bind phase=arena_h2d start_ns=160 dur_ns=5 bytes=64 pid=7 inv=1\n"
    "[mono_ns=30][T0x1][TIMING] s: [STRACE] v=1 pid=7 tid=8 inv=1 hid=ab depth=1 name=chip.run.bind ts=90 dur=100\n"
    "[mono_ns=40][T0x1][TIMING] f: bind phase=host_orch start_ns=300 dur_ns=40 pid=7 inv=2\n"
    "[mono_ns=40][T0x1][TIMING] f: bind phase=arena_h2d start_ns=350 dur_ns=5 pid=7 inv=2\n"
    "[mono_ns=50][T0x1][TIMING] s: [STRACE] v=1 pid=7 tid=8 inv=2 hid=ab depth=1 name=chip.run.bind ts=290 dur=100\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    dg_list w;
    dg_init(&w, 100);
    rc_file f;
    if (rc_parse(&f, "fuzz.jsonl", (const char *)data, size, &w) == HBG_OK && sink) {
        ps_log L;
        ps_options o = {.keep_first = true, .keep_spans = true};
        if (ps_read(&L, "fuzz.log", LOG, sizeof LOG - 1, &o) == HBG_OK) {
            tl_report rep;
            tl_write(&L, &f, 1, sink, &rep, &w);
        }
        ps_free(&L);
    }
    rc_free(&f);
    dg_free(&w);
    return 0;
}
