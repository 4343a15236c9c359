#include "support/compare_gen.h"
#include "support/tools_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const segs[10] = {"args", "arena_build", "static_arena", "gm_heap", "shared_mem",
                                     "runtime_init", "host_orch", "graph_upload", "arena_h2d", "host_view_close"};
static const uint64_t base_ns[10] = {50000, 400, 300, 20, 60, 9000, 100000, 5000, 900, 70000};
static const char *const attrs[10] = {"ntensor=20 staged=19 bytes=40859999040", "bytes=9437184 device=704",
                                      "heap=268435456 arena=1048576", "", "bytes=177152", "",
                                      NULL /* host_orch: tasks and heap_used */,
                                      "defs=1 bytes=130432 submissions=40",
                                      "nt=47 bytes=180480 copied=704 sm=56320 subs=40 args=96/40/0",
                                      "count=19 bytes=40859999040"};
static const char *const ops[5] = {"submit_task", "alloc_tensors", "record_node", "graph_submit", "build_definition"};
static const int op_count[5] = {5, 2, 277, 40, 1};

cg_spec cg_default(const char *commit, uint64_t seed)
{
    cg_spec s = {false, commit, NULL, 1, 6, seed, 0.01, 0, 1.0, 1.0, 1.0, 0, false};
    return s;
}

char *cg_tempdir(void)
{
    return ts_tempdir("compare");
}

/* xorshift64: the same seed, the same log */
static double jitter(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return (double)(*r % 2000001) / 1000000.0 - 1.0;   /* [-1, 1] */
}

static void stamp(FILE *f, const cg_spec *s)
{
    if (!s->commit)
        return;
    if (s->original)
        fprintf(f, "[stamp] %s env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 SIMPLER_SKIP_DEVICE_RUN=1%s%s python "
                   "examples/a2a3/host_build_graph/qwen3_14b_decode/main.py -p a2a3 --rounds %d --log-level timing\n",
                s->commit, s->env_extra ? " " : "", s->env_extra ? s->env_extra : "", s->rounds);
    else
        fprintf(f, "[stamp] %s env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=1 "
                   "HBG_LOG_LEVEL=timing%s%s hbg run qwen --mode numbers --rounds %d\n",
                s->commit, s->env_extra ? " " : "", s->env_extra ? s->env_extra : "", s->rounds);
}

static void pass(FILE *f, const cg_spec *s, int rank, int inv, uint64_t *mono, uint64_t *rnd)
{
    static const int order_ours[10] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8};
    static const int order_up[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int *order = s->original ? order_up : order_ours;
    int pid = 4242 + rank * 11;
    char tail[64] = "";
    if (!s->original)
        snprintf(tail, sizeof tail, " pid=%d inv=%d", pid, inv);
    uint64_t dur[10], t0 = *mono, t = *mono;
    for (int i = 0; i < 10; i++) {
        double noise = i == 5 && s->control_noise ? s->control_noise : s->noise;
        double v = (double)base_ns[i] * s->all_scale * (1 + noise * jitter(rnd));
        if (i == 6)
            v *= s->host_orch_scale;
        if (i == 5)
            v *= s->control_scale;
        dur[i] = (uint64_t)(v + 0.5);
    }
    for (int k = 0; k < 10; k++) {
        int i = order[k];
        if (i == 7 && s->drop_graph_upload)
            continue;
        char a[128];
        if (i == 6)
            snprintf(a, sizeof a, "tasks=47 heap_used=%" PRIu64, s->heap_used ? s->heap_used : 127673344u);
        else
            snprintf(a, sizeof a, "%s", attrs[i]);
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f00aa00064%d][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=%s "
                "start_ns=%" PRIu64 " dur_ns=%" PRIu64 " %s%s\n",
                t + dur[i], rank, segs[i], t, dur[i], a, tail);
        t += dur[i] + 1;
    }
    for (int o = 0; o < 5; o++)
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f00aa00064%d][TIMING] bind_trace_end: [bind_trace.c:230] host-orch "
                "phase=%s total_ns=%d count=%d detail_sum=0 dropped=0%s\n",
                t, rank, ops[o], 100 * op_count[o], op_count[o], tail);
    fprintf(f,
            "[mono_ns=%" PRIu64 "][T0x7f00aa00064%d][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%d "
            "hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ts=%" PRIu64 " dur=%" PRIu64 "\n",
            t + 10, rank, pid, pid + 8, inv, t0, t - t0);
    *mono = t + 1000000;
}

char *cg_write(const char *dir, const char *name, const cg_spec *s)
{
    char *path;
    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    stamp(f, s);
    uint64_t mono = 5000000000000ull, rnd = s->seed * 2654435761u + 88172645463325252ull;
    for (int round = 1; round <= s->rounds; round++)
        for (int r = 0; r < s->ranks; r++)
            pass(f, s, r, round, &mono, &rnd);
    assert_int_equal(fclose(f), 0);
    return path;
}
