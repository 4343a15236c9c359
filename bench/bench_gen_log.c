/* Writes a synthetic bind log of about MB megabytes for the tool benchmarks:
 * two rank processes whose passes alternate, each pass a full burst (ten
 * segments, five host-orch lines, four spans) and a noise line, in either
 * runtime's grammar (ours: pid=/inv= on the bind lines, arena_h2d last;
 * original: neither, host_view_close after arena_h2d).
 * Usage: bench_gen_log ours|original MB OUT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const segs[10] = {"args", "arena_build", "static_arena", "gm_heap", "shared_mem",
                                     "runtime_init", "host_orch", "graph_upload", "arena_h2d", "host_view_close"};
static const char *const attrs[10] = {"ntensor=20 staged=19 bytes=40859999040", "bytes=9437184 device=704",
                                      "heap=268435456 arena=1048576", "", "bytes=177152", "",
                                      "tasks=47 heap_used=127673344", "defs=1 bytes=130432 submissions=40",
                                      "nt=47 bytes=180480 copied=704 sm=56320 subs=40 args=96/40/0",
                                      "count=19 bytes=40859999040"};
static const char *const ops[5] = {"submit_task", "alloc_tensors", "record_node", "graph_submit", "build_definition"};

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "ours") && strcmp(argv[1], "original"))) {
        fprintf(stderr, "usage: bench_gen_log ours|original MB OUT\n");
        return 2;
    }
    int ours = !strcmp(argv[1], "ours");
    /* a whole number of MB, 1 to 1 TB: strtoull alone took "-1" for
     * 2^64 - 1 and filled the disk, and "abc" for 0 */
    char *end;
    errno = 0;
    unsigned long long mb = strtoull(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || argv[2][0] < '0' || argv[2][0] > '9' || mb < 1 || mb > (1ull << 20)) {
        fprintf(stderr, "bench_gen_log: MB must be a whole number from 1 to 1048576, got '%s'\n"
                        "usage: bench_gen_log ours|original MB OUT\n",
                argv[2]);
        return 2;
    }
    uint64_t want = (uint64_t)mb << 20;
    FILE *f = fopen(argv[3], "w");
    if (!f) {
        perror(argv[3]);
        return 2;
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    uint64_t mono = 5120000000000ull, rnd = 88172645463325252ull;
    fprintf(f, "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run bench --rounds 100000 -o bench.log\n");
    for (int r = 0; r < 2; r++)
        fprintf(f, "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=%" PRIu64
                   " wall_ns=1787400000123456789\n", mono, r, 31337 + r, mono - 50);
    static const int order_ours[10] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8};
    static const int order_up[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int *order = ours ? order_ours : order_up;
    uint64_t inv[2] = {0, 0};
    for (uint64_t pass = 0; (uint64_t)ftello(f) < want; pass++) {
        int r = (int)(pass & 1);
        int pid = 31337 + r, tid = 31402 + r;
        uint64_t v = ++inv[r];
        uint64_t t0 = mono, t = mono;
        char tail[64] = "";
        if (ours)
            snprintf(tail, sizeof tail, " pid=%d inv=%" PRIu64, pid, v);
        fprintf(f, "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][INFO] run_case: [runner.c:296] progress %" PRIu64 "\n", t, r,
                pass);
        uint64_t end = t;
        for (int i = 0; i < 10; i++) {
            rnd ^= rnd << 13;
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            uint64_t d = 1000 + rnd % 900000;
            end += d + 1;
        }
        for (int k = 0; k < 10; k++) {
            int i = order[k];
            rnd ^= rnd << 13;
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            uint64_t d = 1000 + rnd % 900000;
            fprintf(f,
                    "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] host_phase_trace_end: [host_phase_trace.c:393] bind "
                    "phase=%s start_ns=%" PRIu64 " dur_ns=%" PRIu64 " %s%s\n",
                    end, r, segs[i], t, d, attrs[i], tail);
            t += d + 1;
        }
        for (int o = 0; o < 5; o++)
            fprintf(f,
                    "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] host_phase_trace_end: [host_phase_trace.c:403] "
                    "host-orch phase=%s total_ns=%d count=%d detail_sum=0 dropped=0%s\n",
                    end, r, ops[o], 700000 + o, 40 + o, tail);
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%" PRIu64
                " hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ts=%" PRIu64 " dur=%" PRIu64 " \n",
                t + 10, r, pid, tid, v, t0, t - t0 + 5);
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%" PRIu64
                " hid=8f3a1c2e9d0b4471 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=40016810 clk=dev\n",
                t + 20, r, pid, tid, v);
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%" PRIu64
                " hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.runner_run ts=%" PRIu64 " dur=40016815 \n",
                t + 30, r, pid, tid, v, t + 6);
        fprintf(f,
                "[mono_ns=%" PRIu64 "][T0x7f3c9a7fc64%d][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%" PRIu64
                " hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ts=%" PRIu64 " dur=%" PRIu64 " \n",
                t + 40, r, pid, tid, v, t0, t - t0 + 40016830);
        mono = t + 40016900;
    }
    if (fclose(f) != 0) {
        perror(argv[3]);
        return 2;
    }
    return 0;
}
