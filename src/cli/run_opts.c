/* `hbg run`'s command line (see run_opts.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/case_opts.h"
#include "cli/longopt.h"
#include "tools/diag.h"
#include "cli/run_opts.h"
#include "hbg/device.h"
#include "hostmem.h"
#include "trace/level.h"
#include "util/bytecount.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg run CASE [options]\n"
            "       hbg run --list [CASE]\n\n"
            "Binds CASE and runs it on the simulated device, N rounds, one process per rank.\n"
            "Each round is one bind pass per rank (chip.run), followed by the device run\n"
            "unless it is skipped. stdout: the per-pass figures, then one result line per rank.\n\n"
            "options:\n"
            "  --rounds N            bind passes per rank, 1 to 100000 (default 1)\n"
            "  -o, --log LOG         write the log to LOG (refuses an existing file, and '-'); the\n"
            "                        first line is the stamp. Without -o the log, stamp first,\n"
            "                        goes to stderr.\n"
            "  --out-dir DIR         artifacts (host_phase_records.jsonl) under DIR/<case>_<time>_<pid>/\n"
            "                        (default: outputs)\n"
            "  --ranks N             rank processes, 1 to 8 (default: the case's; dsv4 runs on\n"
            "                        exactly 2, synth on exactly 1)\n"
            "  --mode numbers        breakdown lines on, device run skipped (the original runtime's numbers mode)\n"
            "  --mode timeline       breakdown lines and per-op records on, device run skipped\n"
            "  --skip-device-run     bind fully, then return before the device run\n"
            "  --skip-golden         do not check the outputs against the golden\n"
            "  --keep-definitions    reuse Definitions across passes (no re-recording)\n"
            "  --no-journal          walk the tensor map for every dependency query, submit\n"
            "                        every task and record every node in full, even in a pass\n"
            "                        (the third on) that repeats the last one's (same image,\n"
            "                        slower)\n"
            "  --log-level LEVEL     debug|info|timing|warn|error|off (default timing)\n"
            "  --tile-unit U         the case's size unit (default: the case's; qwen: a multiple of\n"
            "                        16 from 16 to 1024, vector: 1 to 524288, dsv4 and synth: none)\n"
            "  --NAME N              a case's own parameter (synth: --tasks N and others;\n"
            "                        `hbg run --list` names each case's)\n"
            "  --records-per-thread N  per-op record pool size per thread, 1 to 16777216 (default 65536)\n"
            "  --device-memory B     the simulated device's memory per rank: allocations past B\n"
            "                        bytes in all are refused (a suffix K, M or G: KiB, MiB, GiB;\n"
            "                        default: no limit)\n"
            "  --device-steps N      the simulated device's bound on one run's work: a run whose\n"
            "                        image asks for more than N steps (a task or replayed node\n"
            "                        each, a kernel's one a block) is refused; 1 to 2^62 (default\n"
            "                        16777216). A case that knows its count (synth) is refused\n"
            "                        before any rank starts.\n"
            "  --peer-timeout S      bound on cross-rank waits, and on how long the other ranks\n"
            "                        may run on once one has failed, died or finished its rounds,\n"
            "                        in whole seconds, 1 to 86400 (default 30)\n"
            "  --time-limit S        kill every rank still running after S seconds, 1 to 864000\n"
            "                        (default: none)\n"
            "  --list                list the cases and their parameters (with CASE: that one\n"
            "                        alone); no other option goes with it\n"
            "  -h, --help            this text\n\n"
            "Switches (environment; values 0/false/off/no/empty mean off):\n"
            "  HBG_BIND_BREAKDOWN (SIMPLER_HBG_BIND_BREAKDOWN_ENABLE)      bind phase lines\n"
            "  HBG_HOST_PHASE_RECORDS (SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE) per-op records\n"
            "  HBG_SKIP_DEVICE_RUN (SIMPLER_SKIP_DEVICE_RUN)               skip the device run\n"
            "  HBG_LOG_LEVEL (SIMPLER_LOG_LEVEL)                           log threshold\n"
            "Precedence: --mode presets, then the environment, then explicit options.\n"
            "Progress on stderr (not when the log goes there): a line kept up to date on a\n"
            "terminal; elsewhere one after 10 s, then every HBG_PROGRESS_S seconds (default 30; 0: none).\n"
            "A case whose parameters need more memory than a run may use (MemAvailable + free\n"
            "swap, or the memory cgroup's room; HBG_HOST_MEMORY=BYTES instead, 0 or off: no check) is\n"
            "refused before any rank starts.\n\n"
            "Exit status: 0 every rank succeeded (and its golden passed or was skipped),\n"
            "1 a rank failed or a write to the log or stdout failed, 2 bad usage or parameters\n"
            "refused before anything ran.\n");
}

static int fail_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "hbg run: ");
    fprintf(stderr, fmt, arg ? dg_shown(arg) : arg);
    fprintf(stderr, " (see `hbg run --help`)\n");
    return 2;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || !*s || *end || s[0] < '0' || s[0] > '9' || v < lo || v > hi)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* B, or B with a suffix K, M or G (util/bytecount.h), from 1 byte to
 * 2^62: a device's memory. */
static bool parse_bytes(const char *s, uint64_t *out)
{
    uint64_t v;
    if (!hbg__byte_count(s, strlen(s), &v) || v == 0 || v > 1ull << 62)
        return false;
    *out = v;
    return true;
}

/* A decimal count from 1 to 2^62: the device's steps. No suffix: a K of
 * steps would be a guess between 1000 and 1024. */
static bool parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || s[0] < '0' || s[0] > '9' || v == 0 || v > 1ull << 62)
        return false;
    *out = v;
    return true;
}

/* Reads one switch into *on, naming the variable when its value is bad. */
static bool read_switch(const char *ours, const char *original, bool *on)
{
    if (hbg_switch_read(ours, original, on) == HBG_OK)
        return true;
    const char *which = hbg_switch_which(ours, original);
    fprintf(stderr, "hbg run: %s=%s is not a switch value (expected 1/true/on/yes or 0/false/off/no/empty)\n",
            which, dg_shown(getenv(which)));
    return false;
}

/* --ranks and --tile-unit against what the case accepts: a value it
 * cannot take is a usage error naming the allowed values, not a set-up
 * that fails in every rank (nor a tile unit silently ignored). */
static int check_case_fit(const run_opts *o)
{
    const hbg_case *c = o->c;
    if (o->ranks < c->min_ranks || o->ranks > c->max_ranks) {
        if (c->min_ranks == c->max_ranks)
            fprintf(stderr, "hbg run: %s runs on exactly %u rank%s, got --ranks %u (see `hbg run --help`)\n", c->name,
                    c->min_ranks, c->min_ranks == 1 ? "" : "s", o->ranks);
        else
            fprintf(stderr, "hbg run: %s runs on %u to %u ranks, got --ranks %u (see `hbg run --help`)\n", c->name,
                    c->min_ranks, c->max_ranks, o->ranks);
        return 1;
    }
    if (!o->tile_given)
        return 0;
    if (!c->tile_max) {
        /* synth's sizes are its own parameters, not fixed shapes */
        if (c->params && c->params[0].name)
            fprintf(stderr,
                    "hbg run: %s has no tile unit (its sizes are its own parameters: `hbg run --list %s`); "
                    "--tile-unit is refused (see `hbg run --help`)\n",
                    c->name, c->name);
        else
            fprintf(stderr,
                    "hbg run: %s has no tile unit (its shapes are fixed); --tile-unit is refused (see `hbg run "
                    "--help`)\n",
                    c->name);
        return 1;
    }
    if (o->tile_unit < c->tile_min || o->tile_unit > c->tile_max || o->tile_unit % c->tile_step) {
        if (c->tile_step > 1)
            fprintf(stderr, "hbg run: %s takes a --tile-unit that is a multiple of %u from %u to %u, got %u (see "
                            "`hbg run --help`)\n", c->name, c->tile_step, c->tile_min, c->tile_max, o->tile_unit);
        else
            fprintf(stderr, "hbg run: %s takes a --tile-unit from %u to %u, got %u (see `hbg run --help`)\n",
                    c->name, c->tile_min, c->tile_max, o->tile_unit);
        return 1;
    }
    return 0;
}

/* Whether the letter is also a long option's (-o for --log). */
static bool short_alias(const struct option *opts, int letter)
{
    for (const struct option *p = opts; p->name; p++)
        if (p->val == letter)
            return true;
    return false;
}

/* A numeric value without its leading zeros; any other as given. */
static const char *canonical_value(const char *v)
{
    if (!*v || strspn(v, "0123456789") != strlen(v))
        return v;
    while (v[0] == '0' && v[1])
        v++;
    return v;
}

/* The stamp's command, from the command line getopt has just accepted
 * (taken before it permutes argv): the words in the order given, every
 * long option spelled in full as `--name value`, a repeated option once
 * (its last value, where it was last given), and without the artifact
 * paths, which differ between otherwise identical runs (the log name
 * carries the commit and the repetition). Two runs under the same
 * conditions get the same stamp however they were typed (`--ro 3`,
 * `--rounds=03`); a command typed in full is stamped as typed. */
typedef struct stamp_word {
    const char *name, *value; /* name NULL: a word kept as it is (the case) */
} stamp_word;

static void stamp_command(int argc, char **argv, const struct option *opts, char *out, size_t cap)
{
    stamp_word w[256];
    char mem[32]; /* --device-memory's value (given twice: the last, the one kept) */
    int nw = 0;
    for (int i = 0; i < argc && nw < (int)(sizeof w / sizeof w[0]); i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o")) {
            i++;
            continue;
        }
        if (!strncmp(a, "-o", 2) || !strcmp(a, "--")) /* -oLOG; -- ends nothing hbg run takes */
            continue;
        if (strncmp(a, "--", 2)) {
            w[nw++] = (stamp_word){NULL, a};
            continue;
        }
        const char *eq = strchr(a + 2, '=');
        const struct option *p = hbg_cli_long_option(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
        if (!p) { /* getopt refused it before this is called: kept as is */
            w[nw++] = (stamp_word){NULL, a};
            continue;
        }
        const char *v = NULL;
        if (p->has_arg == required_argument)
            v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : "");
        if (p->val == 'o' || !strcmp(p->name, "out-dir"))
            continue;
        for (int k = 0; k < nw; k++)
            if (w[k].name == p->name) {
                memmove(&w[k], &w[k + 1], (size_t)(nw - k - 1) * sizeof w[0]);
                nw--;
                break;
            }
        hbg_level lv; /* the level it names, spelled as the stamp's HBG_LOG_LEVEL= is */
        if (v && !strcmp(p->name, "log-level") && hbg_level_parse(v, &lv) == HBG_OK)
            v = hbg__level_lower(lv);
        uint64_t bytes; /* in its largest whole unit: 1g, 1024M and 1073741824 are 1G */
        if (v && !strcmp(p->name, "device-memory") && parse_bytes(v, &bytes)) {
            static const char unit[] = "GMK";
            int u = 0;
            while (u < 3 && bytes % (1ull << (10 * (3 - u))))
                u++;
            if (u < 3)
                snprintf(mem, sizeof mem, "%llu%c", (unsigned long long)(bytes >> (10 * (3 - u))), unit[u]);
            else
                snprintf(mem, sizeof mem, "%llu", (unsigned long long)bytes);
            v = mem;
        }
        w[nw++] = (stamp_word){p->name, v ? canonical_value(v) : NULL};
    }
    size_t n = (size_t)snprintf(out, cap, "hbg");
    for (int k = 0; k < nw && n < cap; k++) {
        if (!w[k].name)
            n += (size_t)snprintf(out + n, cap - n, " %s", w[k].value);
        else if (!w[k].value)
            n += (size_t)snprintf(out + n, cap - n, " --%s", w[k].name);
        else
            n += (size_t)snprintf(out + n, cap - n, " --%s %s", w[k].name, w[k].value);
    }
}

/* What the command line set explicitly: it wins over the environment. */
typedef struct explicit_opts {
    bool skip_device, level;
    hbg_level level_value;
    case_opts co;       /* the cases' own options, applied once the case is known */
} explicit_opts;

/* The options, into o and x, and the stamp's command from `words`, argv
 * as it was before getopt permuted it; 1 to go on, else parse's return
 * value. */
enum { O_ROUNDS = 256, O_OUTDIR, O_RANKS, O_MODE, O_SKIPDEV, O_SKIPGOLD, O_KEEP, O_NOJOURNAL, O_LEVEL, O_TILE, O_LIST,
       O_RECCAP, O_PEER, O_TLIMIT, O_DEVMEM, O_DEVSTEPS, O_CASE };

/* hbg run's long options, the cases' own after them (co), ended by a
 * zeroed entry. */
#define OPTS_BASE 18
#define OPTS_CAP (OPTS_BASE + CASE_OPTS_MAX + 1)
static void options_table(struct option *opts, case_opts *co)
{
    static const struct option base[OPTS_BASE] = {
        {"rounds", required_argument, NULL, O_ROUNDS},
        {"log", required_argument, NULL, 'o'},
        {"out-dir", required_argument, NULL, O_OUTDIR},
        {"ranks", required_argument, NULL, O_RANKS},
        {"mode", required_argument, NULL, O_MODE},
        {"skip-device-run", no_argument, NULL, O_SKIPDEV},
        {"skip-golden", no_argument, NULL, O_SKIPGOLD},
        {"keep-definitions", no_argument, NULL, O_KEEP},
        {"no-journal", no_argument, NULL, O_NOJOURNAL},
        {"log-level", required_argument, NULL, O_LEVEL},
        {"tile-unit", required_argument, NULL, O_TILE},
        {"records-per-thread", required_argument, NULL, O_RECCAP},
        {"peer-timeout", required_argument, NULL, O_PEER},
        {"time-limit", required_argument, NULL, O_TLIMIT},
        {"device-memory", required_argument, NULL, O_DEVMEM},
        {"device-steps", required_argument, NULL, O_DEVSTEPS},
        {"list", no_argument, NULL, O_LIST},
        {"help", no_argument, NULL, 'h'},
    };
    memcpy(opts, base, sizeof base);
    case_opts_table(co, opts, OPTS_BASE, OPTS_CAP, O_CASE);
}

const char *run_opts_long_name(const char *word)
{
    if (strncmp(word, "--", 2) || !word[2])
        return NULL;
    case_opts co;
    memset(&co, 0, sizeof co);
    struct option opts[OPTS_CAP];
    options_table(opts, &co);
    const char *eq = strchr(word + 2, '=');
    const struct option *p = hbg_cli_long_option(opts, word + 2, eq ? (size_t)(eq - word - 2) : strlen(word + 2));
    return p ? p->name : NULL;
}

void run_opts_stamp_command(int argc, char **argv, char *out, size_t cap)
{
    case_opts co;
    memset(&co, 0, sizeof co);
    struct option opts[OPTS_CAP];
    options_table(opts, &co);
    stamp_command(argc, argv, opts, out, cap);
}

static int parse_options(int argc, char **argv, char **words, run_opts *o, explicit_opts *x)
{
    memset(x, 0, sizeof *x);
    x->level_value = HBG_LOG_TIMING;
    struct option opts[OPTS_CAP];
    options_table(opts, &x->co);
    optind = 0; /* glibc: a full restart, forgetting a previous scan's state */
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_ROUNDS:
            if (!parse_u32(optarg, 1, MAX_ROUNDS, &o->rounds))
                return fail_usage("--rounds expects an integer from 1 to 100000, got '%s'", optarg);
            break;
        case 'o':
            /* `--log=` names no file: said as usage, not as a failed create */
            if (!*optarg)
                return fail_usage("-o/--log expects a file name, got '%s'", optarg);
            /* the other commands read '-' as standard input or output:
             * here it would make a file named '-', and stdout carries
             * the results */
            if (!strcmp(optarg, "-"))
                return fail_usage("-o/--log expects a file name, not '%s': standard output carries the results; "
                                  "without -o the log goes to stderr (./- names a file '-')", optarg);
            o->log_path = optarg;
            break;
        case O_OUTDIR:
            if (!*optarg)
                return fail_usage("--out-dir expects a folder, got '%s'", optarg);
            /* as -o: '-' is a standard stream to the other commands, and
             * a folder named '-' would be one's surprise */
            if (!strcmp(optarg, "-"))
                return fail_usage("--out-dir expects a folder, not '%s' (./- names a folder '-')", optarg);
            o->out_dir = optarg;
            break;
        case O_RANKS:
            if (!parse_u32(optarg, 1, MAX_RANKS, &o->ranks))
                return fail_usage("--ranks expects an integer from 1 to 8, got '%s'", optarg);
            break;
        case O_MODE:
            if (strcmp(optarg, "numbers") && strcmp(optarg, "timeline"))
                return fail_usage("--mode expects 'numbers' or 'timeline', got '%s'", optarg);
            o->mode = optarg;
            break;
        case O_SKIPDEV: x->skip_device = true; break;
        case O_SKIPGOLD: o->skip_golden = true; break;
        case O_KEEP: o->keep_defs = true; break;
        case O_NOJOURNAL: o->no_journal = true; break;
        case O_LEVEL:
            if (hbg_level_parse(optarg, &x->level_value))
                return fail_usage("--log-level expects debug|info|timing|warn|error|off, got '%s'", optarg);
            x->level = true;
            break;
        case O_TILE:
            /* the case decides the range, once it is known */
            /* 0 parses here and meets the case's own range below, so
             * the message names the values this case takes */
            if (!parse_u32(optarg, 0, UINT32_MAX, &o->tile_unit))
                return fail_usage("--tile-unit expects an integer under 2^32 (each case takes its own range), got '%s'",
                                  optarg);
            o->tile_given = true;
            break;
        case O_RECCAP:
            if (!parse_u32(optarg, 1, 1u << 24, &o->records_per_thread))
                return fail_usage("--records-per-thread expects an integer from 1 to 16777216, got '%s'", optarg);
            break;
        case O_PEER:
            if (!parse_u32(optarg, 1, 86400, &o->peer_timeout_s))
                return fail_usage("--peer-timeout expects seconds from 1 to 86400, got '%s'", optarg);
            break;
        case O_TLIMIT:
            if (!parse_u32(optarg, 1, 864000, &o->time_limit_s))
                return fail_usage("--time-limit expects seconds from 1 to 864000, got '%s'", optarg);
            break;
        case O_DEVMEM:
            if (!parse_bytes(optarg, &o->device_memory))
                return fail_usage("--device-memory expects bytes from 1 to 2^62, with an optional suffix K, M or G "
                                  "(KiB, MiB, GiB), got '%s'", optarg);
            break;
        case O_DEVSTEPS:
            if (!parse_count(optarg, &o->device_steps))
                return fail_usage("--device-steps expects an integer from 1 to 2^62, got '%s'", optarg);
            break;
        case O_LIST: o->list = true; break;
        case 'h': usage(stdout); return 0;
        default:
            if (case_opts_take(&x->co, ch, optarg))
                break;
            /* in a cluster of short options (-xo) getopt has not moved
             * past the word yet: name the letter, not the word before.
             * A long option with a short alias (--log, --help) sets
             * optopt to that letter too; getopt has moved past its word
             * then, so it is named as typed (a short one's error never
             * leaves a long word before it: -h takes no value, and -o
             * fails only as the last letter of the last word). */
            if (ch == '?' && optopt > 0 && optopt < 128 &&
                !(short_alias(opts, optopt) && !strncmp(argv[optind - 1], "--", 2))) {
                char letter[3] = {'-', (char)optopt, 0};
                return fail_usage("unknown or incomplete option '%s'", letter);
            }
            if (ch == '?' && hbg_cli_flag_value("hbg run", opts, argv[optind - 1]))
                return 2;
            return fail_usage("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    stamp_command(argc, words, opts, o->stamp_cmd, sizeof o->stamp_cmd);
    return 1;
}

/* Presets, then the environment, then explicit options; 1, or 2 after
 * saying what in the environment is wrong. */
static int apply_switches(run_opts *o, const explicit_opts *x)
{
    if (o->mode) {
        o->breakdown = true;
        o->skip_device = true;
        o->records = strcmp(o->mode, "timeline") == 0;
    }
    if (!read_switch(HBG_SW_BREAKDOWN, &o->breakdown) || !read_switch(HBG_SW_RECORDS, &o->records) ||
        !read_switch(HBG_SW_SKIP_DEVICE, &o->skip_device))
        return 2;
    if (hbg_switch_level(&o->level)) {
        const char *which = hbg_switch_which(HBG_SW_LOG_LEVEL);
        fprintf(stderr, "hbg run: %s=%s is not a log level (expected debug|info|timing|warn|error|off)\n",
                which, dg_shown(getenv(which)));
        return 2;
    }
    if (x->skip_device)
        o->skip_device = true;
    if (x->level)
        o->level = x->level_value;
    return 1;
}

/* A case whose parameters pass a bound of its device run or of its
 * golden is refused before any rank starts: the device refuses such a
 * run too, but only once every rank has set up and bound its first pass,
 * and the golden's reference only after round 1's device run. The steps
 * are checked first, then the golden's cap when the golden runs. 1, or 2
 * after saying why. */
static int check_bounds(const run_opts *o)
{
    if (o->skip_device)
        return 1;
    hbg_case_env env = o->env;
    env.nranks = o->ranks, env.tile_unit = o->tile_unit;
    char msg[400];
    hbg_status st = HBG_OK;
    if (o->c->steps)
        st = o->c->steps(&env, o->device_steps ? o->device_steps : HBG_SIM_MAX_STEPS, msg, sizeof msg);
    if (st == HBG_OK && !o->skip_golden && o->c->golden_cap)
        st = o->c->golden_cap(&env, msg, sizeof msg);
    if (st == HBG_OK)
        return 1;
    fprintf(stderr, "hbg run: %s: %s\n", o->c->name, msg);
    return 2;
}

/* A case that knows what its parameters need is refused, before any
 * rank starts, when the run may use less: otherwise its set-up or its
 * passes fill memory until the kernel kills a rank. HBG_HOST_MEMORY
 * (bytes; 0, empty, off, false or no in any case: no check) stands in for the host's figure;
 * it is read for every case, so a bad value is found whatever the case.
 * 1, or 2 after saying why. */
static int check_memory(const run_opts *o)
{
    hbg_case_host h = {.device = !o->skip_device, .golden = !o->skip_golden};
    const char *v = getenv("HBG_HOST_MEMORY");
    bool on = true; /* an off value reads as the switches read one */
    if (v && hbg_switch_value(v, &on) == HBG_OK && !on)
        return 1;
    if (v) {
        char *end;
        errno = 0;
        unsigned long long b = strtoull(v, &end, 10);
        if (errno || *end || v[0] < '0' || v[0] > '9') {
            fprintf(stderr, "hbg run: HBG_HOST_MEMORY=%s is not a number of bytes below 2^64 (or 0, empty, off: no "
                            "check)\n", dg_shown(v));
            return 2;
        }
        h.avail = b;
        h.avail_from = "HBG_HOST_MEMORY";
    } else if (!case_host_available(&h.avail, &h.avail_from)) {
        return 1;
    }
    if (!o->c->fits)
        return 1;
    hbg_case_env env = o->env;
    env.nranks = o->ranks, env.tile_unit = o->tile_unit;
    char msg[400];
    if (o->c->fits(&env, &h, msg, sizeof msg) == HBG_OK)
        return 1;
    fprintf(stderr, "hbg run: %s: %s\n", o->c->name, msg);
    return 2;
}

/* The first option word other than --list in `words` (argv before getopt
 * permuted it), as typed; NULL for none. The first word that looks like
 * an option is one: a value that looks like one follows its option. */
static const char *other_option(int argc, char **words)
{
    for (int i = 1; i < argc; i++) {
        const char *w = words[i];
        if (!strcmp(w, "--"))
            return NULL; /* the rest are positional */
        if (w[0] != '-' || !w[1])
            continue;
        const char *name = run_opts_long_name(w);
        if (!name || strcmp(name, "list"))
            return w;
    }
    return NULL;
}

/* `--list [CASE]`: lists every case, or CASE alone (its parameters are
 * what one looks for before a run of it). Anything else beside it would
 * be ignored without a word, a value out of range or a case that does
 * not exist included, so each is a usage error as in a run. */
static int list_args(int argc, char **argv, run_opts *o, const char *other)
{
    if (other)
        return fail_usage("--list takes no other option (only a CASE, to list it alone), got '%s'", other);
    if (optind + 1 < argc)
        return fail_usage("unexpected argument '%s'", argv[optind + 1]);
    if (optind < argc && !(o->c = hbg_case_find(argv[optind])))
        return fail_usage("unknown case '%s'; `hbg run --list` names them", argv[optind]);
    return RUN_OPTS_LIST;
}

int run_opts_parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rounds = 1;
    o->out_dir = "outputs";
    o->level = HBG_LOG_TIMING;
    o->records_per_thread = 65536;
    o->peer_timeout_s = 30;
    char **words = malloc(((size_t)argc + 1) * sizeof *words);
    if (!words) {
        fprintf(stderr, "hbg run: out of memory\n");
        return 2;
    }
    memcpy(words, argv, (size_t)argc * sizeof *words);
    explicit_opts x;
    int rc = parse_options(argc, argv, words, o, &x);
    const char *other = rc == 1 && o->list ? other_option(argc, words) : NULL;
    free(words);
    if (rc != 1)
        return rc;
    if (o->list)
        return list_args(argc, argv, o, other);
    if (optind >= argc)
        return fail_usage("%s", "missing CASE");
    if (optind + 1 < argc)
        return fail_usage("unexpected argument '%s'", argv[optind + 1]);
    o->c = hbg_case_find(argv[optind]);
    if (!o->c)
        return fail_usage("unknown case '%s'; `hbg run --list` names them", argv[optind]);
    if (!o->ranks)
        o->ranks = o->c->default_ranks;
    if (check_case_fit(o) || case_opts_apply(&x.co, o->c, &o->env, &o->pools, stderr))
        return 2;
    rc = apply_switches(o, &x);
    if (rc == 1)
        rc = check_bounds(o);
    return rc == 1 ? check_memory(o) : rc;
}
