/* The log lexer: finds the records the tools read in a log buffer.
 *
 * A record may follow other text on its physical line and two records may
 * share one, so nothing is anchored at a line start: the lexer walks the
 * buffer from one '=' to the next (memchr) and recognises a marker by the
 * few bytes before it ("bind phase=", "host-orch phase=", "[STRACE] v=",
 * "[CLOCK_ANCHOR] v="; a run of blanks between the words, as between
 * fields, reads as one space). A record ends at a line end ('\n', a CR before
 * one or at the end of the text, any CR in a text of CR-only lines) or
 * where the next record's "[mono_ns=" prefix begins; a NUL or another CR
 * inside it makes it malformed, and so does a log's end without a line end
 * (lx_pos.log). Stamp lines are found
 * separately, at physical line starts only (the original runtime writes them first;
 * a UTF-8 byte order mark before the text's first line is passed over).
 *
 * One ERROR record is recognised too, by its whole text: the one `hbg run`
 * ends a log with when a stop signal or its --time-limit cut the run
 * (LX_STOPPED), so that no tool takes such a log for a whole run of fewer
 * rounds. Any other ERROR text is passed over as before.
 *
 * Grammar: docs/log-format.md (records, anchor, spans, bind-phase lines,
 * the stopped run's record) and the stamp in docs/run.md. */
#ifndef HBG_TOOLS_LOGLEX_H
#define HBG_TOOLS_LOGLEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lx_slice {
    const char *p;
    size_t n;
} lx_slice;

typedef enum lx_kind { LX_BIND, LX_ORCH, LX_SPAN, LX_ANCHOR, LX_STAMP, LX_STOPPED } lx_kind;

/* A line's attributes past this many, and a segment or kind name longer
 * than LX_MAX_NAME, make the line malformed, said so in its warning: the
 * logs carry a handful of each and names of a dozen characters. */
#define LX_MAX_ATTRS 64
#define LX_MAX_NAME 64

/* A duration of 2^62 ns (146 years) or more is no measurement but a
 * clock that went backwards and wrapped, or a corrupted digit: the lexer
 * refuses such a dur_ns or total_ns as malformed, a pass whose
 * control-plane sum reaches it is excluded (PS_D_LONG), and a span that
 * long is not kept for the span tools (passes.c, keep_span). Below it, the tools' arithmetic has room: a sum of a
 * pass's three control-plane segments, or a median kept doubled (exact
 * halves), stays below 2^64. */
#define LX_DUR_LIMIT_NS ((uint64_t)1 << 62)

typedef struct lx_attr {
    lx_slice key, val;
    uint64_t num;
    bool is_num;       /* val is a decimal integer that fits 64 bits */
} lx_attr;

typedef struct lx_rec {
    lx_kind kind;
    size_t off;         /* byte offset of the record (its prefix when it has one) */
    size_t line;        /* its physical line, from 1 */
    bool line_first;    /* no record before it on that line (writes interleaved put several on one) */
    const char *at;     /* where off is in the buffer scanned */
    const char *prefix; /* the record's "[mono_ns=...][T0x...]" prefix, or NULL ... */
    const char *mark;   /* ... up to its marker; see lx_thread */
    lx_slice name;      /* bind: segment; orch: kind; span: name (still %-encoded); stamp: text;
                           stopped: "hbg run stopped ... after K of M passes" */
    bool name_ok;       /* bind, orch: name is a [a-z0-9_]{1,64} name */
    uint64_t start, dur;                 /* bind: start_ns dur_ns; span: ts dur */
    bool has_pid, has_inv;
    uint64_t pid, inv;
    uint64_t total_ns, count, detail_sum, dropped;   /* orch */
    uint64_t tid, depth;                 /* span */
    lx_slice hid;                        /* span */
    bool dev_clock;                      /* span: clk=dev */
    uint64_t mono, wall;                 /* anchor */
    uint64_t ran, planned;               /* stopped: its K and M */
    int nattr;                           /* bind: the segment's attributes; span: extras */
    lx_attr attr[LX_MAX_ATTRS];
    uint64_t attr_keys;                  /* a filter of their keys (loglex.c, add_attr) */
    lx_slice attr_text;                  /* the raw text those attributes came from */
} lx_rec;

typedef struct lx_sink {
    void *ctx;
    /* A well-formed record. */
    void (*on_rec)(void *ctx, const lx_rec *r);
    /* A record whose marker was found but whose fields do not follow the
     * grammar (torn, overflowing, missing a field). msg says what was
     * expected. r has the kind, offset and line, and what could be read
     * before and after the fault: name when name_ok, pid and inv when
     * has_pid and has_inv (a pid= or inv= that is itself bad is not set),
     * so the line can still be charged to its pass. */
    void (*on_bad)(void *ctx, const lx_rec *r, const char *msg);
    /* Bind-phase and host-orch lines are passed over as plain text: a
     * reader of spans alone (hbg spans) does not pay for lexing them. */
    bool spans_only;
} lx_sink;

void lx_scan(const char *buf, size_t len, const lx_sink *sink);

/* on_bad's msg for a record the log's end cut (lx_pos.log), whatever
 * else the cut left wrong in it: a reader tells such a record from one
 * damaged inside the log by it. */
#define LX_CUT_MSG "the log ends inside the record (cut short: no line end after it)"

/* Where a buffer sits in its file: the offset of its first byte and that
 * byte's line. For reading a file in pieces, each piece ending at a line end
 * (records never span lines); lx_scan_at advances pos past the piece.
 * seen_nl: a piece before had a '\n', so the file's lines end in '\n' and
 * a last piece without one (a final line with CRs in it) is not a text of
 * CR-only line ends.
 * log: the pieces are a whole log, so a piece that does not end in a line
 * end is its last, and was cut there. Both runtimes end every record with
 * one: a record that runs to that end was cut short (a full disk, a crash,
 * a log copied while it was written), its last value maybe with it
 * ("dur=13" of "dur=13275108"; a device span cut before "clk=dev" would
 * read as a host span at ts=0), and is malformed. lx_scan is not a log's
 * reader: its text may be a record alone. */
typedef struct lx_pos {
    size_t off;
    size_t line;
    bool seen_nl;
    bool log;
} lx_pos;
void lx_scan_at(const char *buf, size_t len, lx_pos *pos, const lx_sink *sink);

/* Whether [s, s + n) holds a bind-phase marker as the scan reads one
 * ("bind phase=", a run of blanks between its words): what a log needs
 * for hbg compare to read a pass from it. */
bool lx_has_bind_marker(const char *s, size_t n);

/* The length of the UTF-8 byte order mark at the start of a log's text
 * (an editor that saved the log may put one first), or 0: the log's
 * first line, its stamp, starts after it. */
static inline size_t lx_bom_len(const char *buf, size_t len)
{
    return len >= 3 && __builtin_memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* Decimal u64: 0 ok, -1 not a decimal integer, -2 more than 64 bits. */
int lx_parse_u64(lx_slice v, uint64_t *out);

/* A span name as written is percent-encoded (bytes outside !..~, and
 * % [ ] =, as %XX). Decodes s into out, which has room for s.n bytes;
 * returns the decoded length. A '%' not followed by two hex digits is kept
 * as it stands, and so is the %XX of a control byte (below 0x20, 0x7f): a
 * NUL decoded would cut the name short wherever it is a C string. An
 * encoded '%' that two hex digits follow stays "%25", so that every %XX
 * shown is one byte encoded. */
size_t lx_decode_name(lx_slice s, char *out);

/* Whether a span name's byte c is written as %XX: outside ! .. ~, and
 * % [ ] = (the format's rule, for every reader and writer of names). */
static inline bool lx_name_encodes(unsigned char c)
{
    return c < '!' || c > '~' || c == '%' || c == '[' || c == ']' || c == '=';
}

/* s in the one encoding a writer that follows the format gives it: a %XX
 * of a byte that needs no encoding decoded ("chip.run.bin%64" is
 * "chip.run.bind"), every other byte that needs one encoded, whether it
 * came encoded or raw ("caf\xc3\xa9" and "caf%c3%A9" are "caf%C3%A9", a
 * lone '%' is "%25"). Names are grouped and matched by this form, so one
 * name has one. Into out, which has room for 3 * s.n bytes; returns its
 * length. */
size_t lx_canon_name(lx_slice s, char *out);

/* The last handle parsed: a log's lines come from a few threads. */
typedef struct lx_thread_cache {
    char text[16];
    uint8_t n;              /* 0: empty */
    uint64_t val;
} lx_thread_cache;

/* The [T0x...] thread handle of r's prefix: false when r has no prefix or
 * the prefix has no handle. Parsed on demand: most records never need it.
 * c (zero-initialised, or NULL) remembers the last one. */
bool lx_thread(const lx_rec *r, lx_thread_cache *c, uint64_t *out);

/* The <d> of r's "[mono_ns=<d>]" prefix: false when r has none or <d> is
 * no decimal integer. Parsed on demand, as the thread handle is. */
bool lx_prefix_mono(const lx_rec *r, uint64_t *out);

/* Whether two slices hold the same bytes. */
static inline bool lx_slice_same(lx_slice a, lx_slice b)
{
    return a.n == b.n && (a.p == b.p || __builtin_memcmp(a.p, b.p, a.n) == 0);
}

static inline bool lx_slice_eq(lx_slice s, const char *lit)
{
    size_t n = __builtin_strlen(lit);
    return s.n == n && __builtin_memcmp(s.p, lit, n) == 0;
}

#endif
