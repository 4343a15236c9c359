/* Two stamps, the commit aside: the same ruler or not (stampdiff.h says
 * what "the same" is). Each stamp is cut into words once; the words point
 * into the caller's text, nothing is copied. */
#include "tools/stampdiff.h"
#include "tools/diag.h"

#include <stdio.h>
#include <string.h>

#include "tools/loglex.h"
#include "util/bytecount.h"

#define SD_WORDS 256

/* An option of the command: its name (up to any '='), and its value, the
 * text after '=' or the words that follow it. */
typedef struct sd_opt {
    lx_slice name, inl;  /* inl: after '=', when has_inl */
    bool has_inl;
    int vfrom, vto;      /* else the value is w[vfrom, vto) */
} sd_opt;

typedef struct stamp_words {
    lx_slice w[SD_WORDS];          /* the last holds whatever text is left past the others */
    int n, env_from, env_to;       /* w[env_from, env_to) are the assignments */
    lx_slice commit, commit_dirty; /* without and with its "-dirty" */
    int env[SD_WORDS], nenv;       /* the assignments, ordered by variable (stably) */
    int pos[SD_WORDS], npos;       /* the command's positional words, in order */
    sd_opt opt[SD_WORDS];          /* its options, ordered by name (stably) */
    int nopt;
} stamp_words;

static bool lower_is(lx_slice x, size_t from, const char *s)
{
    size_t n = strlen(s);
    if (x.n - from != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((x.p[from + i] | 0x20) != s[i])
            return false;
    return true;
}

static bool is_option(lx_slice x)
{
    if (x.n < 2 || x.p[0] != '-')
        return false;
    char c = x.p[1];
    if ((c >= '0' && c <= '9') || c == '.') /* -1, -.5: values */
        return false;
    /* -inf, -nan, -infinity: values too */
    return !lower_is(x, 1, "inf") && !lower_is(x, 1, "nan") && !lower_is(x, 1, "infinity");
}

/* Is the option left out of the comparison? *skip: how many words after it
 * are its value (1 for "-o LOG", "--log LOG"; 0 for "--log=LOG"). Only "-o"
 * alone: "-oLOG" is one spelling of it, but "-opt-level=3" and "-offload"
 * are other programs' options, which are conditions. */
static bool left_out(lx_slice name, bool has_eq, int *skip)
{
    *skip = 0;
    static const char *const out[] = {"-o", "--log", "--out-dir", "--time-limit", "--peer-timeout"};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        if (lx_slice_eq(name, out[i])) {
            *skip = !has_eq;
            return true;
        }
    return false;
}

static int name_cmp(lx_slice a, lx_slice b)
{
    int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);
    return c ? c : (a.n > b.n) - (a.n < b.n);
}

/* The words past the assignments: positional words in order, options with
 * their values, the left-out options dropped. */
static void split_command(stamp_words *s)
{
    int cur = -1; /* the option the next plain word is a value of */
    bool ended = false;
    for (int k = s->env_to; k < s->n; k++) {
        lx_slice x = s->w[k];
        if (!ended && x.n == 2 && x.p[0] == '-' && x.p[1] == '-') {
            ended = true;
            cur = -1;
            s->pos[s->npos++] = k;
            continue;
        }
        /* the rest of a stamp past its 255th word is one plain word */
        bool rest = k == SD_WORDS - 1;
        if (ended || rest || !is_option(x)) {
            if (cur >= 0)
                s->opt[cur].vto = k + 1;
            else
                s->pos[s->npos++] = k;
            continue;
        }
        cur = -1;
        const char *eq = memchr(x.p, '=', x.n);
        lx_slice name = {x.p, eq ? (size_t)(eq - x.p) : x.n};
        int skip;
        if (left_out(name, eq != NULL, &skip)) {
            if (skip && k + 1 < s->n && k + 1 < SD_WORDS - 1 && !is_option(s->w[k + 1]))
                k++;
            continue;
        }
        sd_opt *o = &s->opt[s->nopt++];
        *o = (sd_opt){.name = name, .vfrom = k + 1, .vto = k + 1};
        if (eq) {
            o->inl = (lx_slice){eq + 1, (size_t)(x.p + x.n - eq - 1)};
            o->has_inl = true;
        }
        /* the plain words after it join its value, after "--x=v" too:
         * "--rounds=6 qwen" is "--rounds 6 qwen" */
        cur = s->nopt - 1;
    }
    /* insertion sort: stable, so one option's occurrences keep their order */
    for (int i = 1; i < s->nopt; i++) {
        sd_opt t = s->opt[i];
        int j = i;
        for (; j > 0 && name_cmp(s->opt[j - 1].name, t.name) > 0; j--)
            s->opt[j] = s->opt[j - 1];
        s->opt[j] = t;
    }
}

static void sort_env(stamp_words *s);
static lx_slice var_name(lx_slice w);

/* `hbg run`'s options whose whole effect is a switch (--mode presets the
 * switches, --skip-device-run and --log-level set one), for a stamp whose
 * assignments give each switch resolved, as `hbg run` writes them: the
 * assignments say all there is, and `--mode numbers` is the run that
 * `HBG_BIND_BREAKDOWN=1 HBG_SKIP_DEVICE_RUN=1` in the environment makes. */
static const char *const run_switches[] = {"HBG_BIND_BREAKDOWN", "HBG_HOST_PHASE_RECORDS", "HBG_SKIP_DEVICE_RUN",
                                           "HBG_LOG_LEVEL"};
static const char *const run_switch_options[] = {"--mode", "--skip-device-run", "--log-level"};

static bool is_hbg_run(const stamp_words *s)
{
    if (s->npos < 2)
        return false;
    lx_slice prog = s->w[s->pos[0]];
    size_t b = prog.n; /* the program's name past its folders: build/hbg is hbg */
    while (b > 0 && prog.p[b - 1] != '/')
        b--;
    return lx_slice_eq((lx_slice){prog.p + b, prog.n - b}, "hbg") && lx_slice_eq(s->w[s->pos[1]], "run");
}

static bool has_var(const stamp_words *s, const char *name)
{
    for (int k = s->env_from; k < s->env_to; k++)
        if (lx_slice_eq(var_name(s->w[k]), name))
            return true;
    return false;
}

static void drop_switch_options(stamp_words *s)
{
    if (!is_hbg_run(s))
        return;
    for (size_t i = 0; i < sizeof run_switches / sizeof run_switches[0]; i++)
        if (!has_var(s, run_switches[i]))
            return;
    int kept = 0;
    for (int i = 0; i < s->nopt; i++) {
        bool drop = false;
        for (size_t k = 0; k < sizeof run_switch_options / sizeof run_switch_options[0]; k++)
            drop = drop || lx_slice_eq(s->opt[i].name, run_switch_options[k]);
        if (!drop)
            s->opt[kept++] = s->opt[i];
    }
    s->nopt = kept;
}

/* Is c a git commit as hbg writes one (`git rev-parse --short=7`), or as
 * git abbreviates one at all: 4 hex digits or more? Only such a commit
 * stands for "this log's commit" inside a stamp's other words. A
 * program's own stamp may give any commit, and of commits 1 and 2 the
 * values of `--rounds 1` and `--rounds 2` were taken for the commits:
 * the two stamps compared equal. */
static bool git_hash(lx_slice c)
{
    if (c.n < 4)
        return false;
    for (size_t i = 0; i < c.n; i++) {
        unsigned char u = (unsigned char)c.p[i];
        if (!((u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'f')))
            return false;
    }
    return true;
}

static void split_stamp(const char *p, size_t n, stamp_words *s)
{
    memset(s, 0, sizeof *s);
    size_t i = 0;
    while (i < n && s->n < SD_WORDS) {
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        size_t b = i;
        if (s->n == SD_WORDS - 1)
            i = n; /* the rest, compared as one word */
        while (i < n && p[i] != ' ' && p[i] != '\t')
            i++;
        if (i > b)
            s->w[s->n++] = (lx_slice){p + b, i - b};
    }
    if (s->n)
        s->commit = s->commit_dirty = s->w[0];
    /* the commit without "-dirty": a dirty build's log names carry it too */
    if (s->commit.n > 6 && memcmp(s->commit.p + s->commit.n - 6, "-dirty", 6) == 0)
        s->commit.n -= 6;
    if (!git_hash(s->commit))
        s->commit.n = s->commit_dirty.n = 0; /* stands for nothing in the other words */
    int k = 1;
    if (k < s->n && s->w[k].n == 3 && memcmp(s->w[k].p, "env", 3) == 0)
        k++;
    s->env_from = k;
    while (k < s->n && s->w[k].n && s->w[k].p[0] != '-' && memchr(s->w[k].p, '=', s->w[k].n))
        k++;
    s->env_to = k;
    sort_env(s);
    split_command(s);
    drop_switch_options(s);
}

/* A byte of a name or a number: a letter, a digit, or part of a
 * character past ASCII. */
static bool token_byte(char c)
{
    unsigned char u = (unsigned char)c;
    return (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z') || u >= 0x80;
}

/* How long a commit of stamp s starts at a word's position, 0 if none:
 * "abc1234-dirty" is tried before "abc1234" (a dirty build's log names
 * carry the suffix, older ones may not). Only a whole token counts, one
 * that no letter or digit continues on either side (run_1a2b3c4_r1.log),
 * and a commit that is no git hash stands for nothing (split_stamp): of
 * commits 1 and 2, `--rounds 10` against `--rounds 20`, and then
 * `--rounds 1` against `--rounds 2`, were once no difference. */
static size_t commit_at(const stamp_words *s, lx_slice a, size_t i)
{
    lx_slice c[2] = {s->commit_dirty, s->commit};
    for (int k = 0; k < 2; k++) {
        size_t n = c[k].n;
        if (!n || a.n - i < n || memcmp(a.p + i, c[k].p, n) != 0)
            continue;
        if (i > 0 && token_byte(a.p[i - 1]))
            continue;
        if (i + n < a.n && token_byte(a.p[i + n]))
            continue;
        return n;
    }
    return 0;
}

/* Does word a of stamp sa equal word b of stamp sb, each stamp's commit
 * standing for "this log's commit"? */
static bool same_word(lx_slice a, const stamp_words *sa, lx_slice b, const stamp_words *sb)
{
    size_t i = 0, j = 0;
    while (i < a.n && j < b.n) {
        size_t ha = commit_at(sa, a, i), hb = commit_at(sb, b, j);
        if (ha && hb) {
            i += ha;
            j += hb;
            continue;
        }
        if (a.p[i] != b.p[j])
            return false;
        i++, j++;
    }
    return i == a.n && j == b.n;
}

/* --- the assignments ----------------------------------------------------- */

static lx_slice var_name(lx_slice w)
{
    const char *eq = memchr(w.p, '=', w.n);
    return (lx_slice){w.p, (size_t)(eq - w.p)};
}

/* s->env: the assignments' indices ordered by variable (stably: one
 * variable's assignments keep their order, and the last one wins) */
static void sort_env(stamp_words *s)
{
    s->nenv = 0;
    for (int k = s->env_from; k < s->env_to; k++) {
        int j = s->nenv++;
        for (; j > 0 && name_cmp(var_name(s->w[s->env[j - 1]]), var_name(s->w[k])) > 0; j--)
            s->env[j] = s->env[j - 1];
        s->env[j] = k;
    }
}

static int env_run(const stamp_words *s, int i)
{
    int r = 1;
    while (i + r < s->nenv && !name_cmp(var_name(s->w[s->env[i + r]]), var_name(s->w[s->env[i]])))
        r++;
    return r;
}

static bool env_differ(const stamp_words *a, const stamp_words *b, const char *na, const char *nb, char *out,
                       size_t n)
{
    int i = 0, j = 0;
    while (i < a->nenv || j < b->nenv) {
        int c = i == a->nenv ? 1 : j == b->nenv ? -1 : name_cmp(var_name(a->w[a->env[i]]), var_name(b->w[b->env[j]]));
        if (c) {
            lx_slice w = c < 0 ? a->w[a->env[i]] : b->w[b->env[j]];
            snprintf(out, n, "env %.*s in %s, absent from %s", (int)w.n, w.p, c < 0 ? na : nb, c < 0 ? nb : na);
            return true;
        }
        /* env applies them in order: the last one is the variable's value */
        int ra = env_run(a, i), rb = env_run(b, j);
        lx_slice wa = a->w[a->env[i + ra - 1]], wb = b->w[b->env[j + rb - 1]];
        if (!same_word(wa, a, wb, b)) {
            snprintf(out, n, "env %.*s in %s, %.*s in %s", (int)wa.n, wa.p, na, (int)wb.n, wb.p, nb);
            return true;
        }
        i += ra;
        j += rb;
    }
    return false;
}

/* --- the command --------------------------------------------------------- */

static bool positional_differ(const stamp_words *a, const stamp_words *b, const char *na, const char *nb,
                              char *out, size_t n)
{
    for (int k = 0;; k++) {
        bool ea = k >= a->npos, eb = k >= b->npos;
        if (ea && eb)
            return false;
        if (!ea && !eb && same_word(a->w[a->pos[k]], a, b->w[b->pos[k]], b))
            continue;
        /* counted as the reader counts: the word's place in its command */
        int at = ea ? b->pos[k] - b->env_to + 1 : a->pos[k] - a->env_to + 1;
        snprintf(out, n, "command word %d: '%.*s' in %s, '%.*s' in %s", at, ea ? 5 : (int)a->w[a->pos[k]].n,
                 ea ? "(end)" : a->w[a->pos[k]].p, na, eb ? 5 : (int)b->w[b->pos[k]].n,
                 eb ? "(end)" : b->w[b->pos[k]].p, nb);
        return true;
    }
}

/* The value's words: the text after '=' (when there is one), then the
 * words after the option. */
static int value_count(const sd_opt *o)
{
    return o->has_inl + o->vto - o->vfrom;
}

static lx_slice value_word(const stamp_words *s, const sd_opt *o, int i)
{
    return o->has_inl && i == 0 ? o->inl : s->w[o->vfrom + i - o->has_inl];
}

/* Digits only, at least one (a stamp's words are not NUL-terminated). */
static bool decimal(lx_slice w)
{
    for (size_t i = 0; i < w.n; i++)
        if (w.p[i] < '0' || w.p[i] > '9')
            return false;
    return w.n > 0;
}

/* One value of an hbg run option as later revisions stamp it, against
 * the spelling an earlier one stamped as typed: a decimal with leading
 * zeros is its number (`--rounds 03` is `--rounds 3`), and a
 * --device-memory its bytes (`1g` is `1G` is `1024M`). Both stamps must
 * be hbg run's: elsewhere "007" may be a name. */
static bool same_run_value(const sd_opt *oa, lx_slice va, lx_slice vb)
{
    uint64_t x, y;
    if (lx_slice_eq(oa->name, "--device-memory"))
        return hbg__byte_count(va.p, va.n, &x) && hbg__byte_count(vb.p, vb.n, &y) && x == y;
    if (!decimal(va) || !decimal(vb))
        return false;
    while (va.n > 1 && va.p[0] == '0')
        va.p++, va.n--;
    while (vb.n > 1 && vb.p[0] == '0')
        vb.p++, vb.n--;
    return va.n == vb.n && !memcmp(va.p, vb.p, va.n);
}

static bool same_value(const stamp_words *a, const sd_opt *oa, const stamp_words *b, const sd_opt *ob)
{
    int c = value_count(oa);
    if (c != value_count(ob))
        return false;
    if (c == 1 && is_hbg_run(a) && is_hbg_run(b) &&
        same_run_value(oa, value_word(a, oa, 0), value_word(b, ob, 0)))
        return true;
    for (int i = 0; i < c; i++)
        if (!same_word(value_word(a, oa, i), a, value_word(b, ob, i), b))
            return false;
    return true;
}

/* The value as written: its words are one run of the stamp's text. */
static lx_slice value_text(const stamp_words *s, const sd_opt *o)
{
    if (o->vto == o->vfrom)
        return o->inl;
    lx_slice f = o->has_inl ? o->inl : s->w[o->vfrom], l = s->w[o->vto - 1];
    return (lx_slice){f.p, (size_t)(l.p + l.n - f.p)};
}

/* "'6'", or "no value" for a flag */
static void quoted(char *buf, size_t n, const stamp_words *s, const sd_opt *o)
{
    lx_slice v = value_text(s, o);
    if (!value_count(o))
        snprintf(buf, n, "no value");
    else
        snprintf(buf, n, "'%.*s'", (int)v.n, v.p);
}

static bool options_differ(const stamp_words *a, const stamp_words *b, const char *na, const char *nb, char *out,
                           size_t n)
{
    char va[320], vb[320];
    int i = 0, j = 0;
    while (i < a->nopt || j < b->nopt) {
        int c = i == a->nopt ? 1 : j == b->nopt ? -1 : name_cmp(a->opt[i].name, b->opt[j].name);
        if (c) { /* one side's option, absent from the other */
            const stamp_words *s = c < 0 ? a : b;
            const sd_opt *o = c < 0 ? &a->opt[i] : &b->opt[j];
            lx_slice v = value_text(s, o);
            snprintf(out, n, "command option %.*s%s%.*s in %s, absent from %s", (int)o->name.n, o->name.p,
                     value_count(o) ? " " : "", (int)v.n, v.p, c < 0 ? na : nb, c < 0 ? nb : na);
            return true;
        }
        int ra = 1, rb = 1; /* this option's occurrences on each side */
        while (i + ra < a->nopt && !name_cmp(a->opt[i + ra].name, a->opt[i].name))
            ra++;
        while (j + rb < b->nopt && !name_cmp(b->opt[j + rb].name, b->opt[j].name))
            rb++;
        for (int k = 0; k < ra && k < rb; k++)
            if (!same_value(a, &a->opt[i + k], b, &b->opt[j + k])) {
                quoted(va, sizeof va, a, &a->opt[i + k]);
                quoted(vb, sizeof vb, b, &b->opt[j + k]);
                snprintf(out, n, "command option %.*s: %s in %s, %s in %s", (int)a->opt[i].name.n,
                         a->opt[i].name.p, va, na, vb, nb);
                return true;
            }
        if (ra != rb) {
            /* both are 1 or more, and they differ: "once" stands for one,
             * the other count says "times" ("given 2 times in A, once in
             * B"; not "1 times", nor "given 2 times in A, 1 in B") */
            char ca[24] = "once", cb[24] = "once";
            if (ra != 1)
                snprintf(ca, sizeof ca, "%d times", ra);
            if (rb != 1)
                snprintf(cb, sizeof cb, "%d%s", rb, ra == 1 ? " times" : "");
            snprintf(out, n, "command option %.*s: given %s in %s, %s in %s", (int)a->opt[i].name.n, a->opt[i].name.p,
                     ca, na, cb, nb);
            return true;
        }
        i += ra;
        j += rb;
    }
    return false;
}

bool sd_differ(const char *pa, size_t alen, const char *pb, size_t blen, const char *na, const char *nb, char *out,
               size_t n)
{
    static stamp_words a, b; /* 25 KiB each: off the stack */
    split_stamp(pa, alen, &a);
    split_stamp(pb, blen, &b);
    bool d = env_differ(&a, &b, na, nb, out, n) || positional_differ(&a, &b, na, nb, out, n) ||
             options_differ(&a, &b, na, nb, out, n);
    if (d && n)
        dg_sanitize(out); /* it quotes the stamps' words */
    return d;
}
