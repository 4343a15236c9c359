/* The tensor map's journal (see "The journal" in tensormap.h).
 *
 * The map's answers are a function of the calls since its reset, so an
 * epoch whose calls so far equal the journal's first calls gets, from the
 * journal, exactly what the walks would give. Following costs a compare of
 * each call (the view is 96 bytes) and the replay of a query's reports;
 * walking costs the buffer lookup, the bucket lists and the box tests,
 * several times that on the cases' passes. While following, the map's
 * tables are stale (empty) but three things a caller can see are kept
 * true: the address filter (hbg__tmap_may_hold), and the entry, link and
 * buffer counts hbg__tmap_fits reads, each set from what the journal
 * recorded the write added. Anything that needs the tables themselves
 * catches the map up first.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "orch/tensormap.h"
#include "util/reserve.h"

/* The journal commits what a pass of the cases fills (a dsv4 rank's pass
 * makes some 4,200 calls, its Definition's recording 2,700) at creation, so
 * the first pass, which writes the journal from scratch, takes no page
 * faults for it. */
#define JOURNAL_HOT_CALLS 4608u
#define JOURNAL_HOT_REPORTS 16384u

hbg_status hbg__tmap_journal_init(hbg__tmap *m, uint32_t calls, uint32_t reports)
{
    hbg__tmap_journal *j = &m->j;
    if (j->calls || !calls || !reports)
        return HBG_E_INVAL;
    size_t cb = (size_t)calls * sizeof *j->calls, rb = (size_t)reports * sizeof *j->reports;
    size_t ch = (size_t)(calls < JOURNAL_HOT_CALLS ? calls : JOURNAL_HOT_CALLS) * sizeof *j->calls;
    size_t rh = (size_t)(reports < JOURNAL_HOT_REPORTS ? reports : JOURNAL_HOT_REPORTS) * sizeof *j->reports;
    j->calls = hbg__reserve_hot(cb, ch);
    j->reports = j->calls ? hbg__reserve_hot(rb, rh) : NULL;
    if (!j->reports) {
        hbg__unreserve(j->calls, cb);
        memset(j, 0, sizeof *j);
        return HBG_E_NOMEM;
    }
    j->cap_calls = calls;
    j->cap_reports = reports;
    return HBG_OK;
}

void hbg__tmap_journal_free(hbg__tmap *m)
{
    hbg__tmap_journal *j = &m->j;
    hbg__unreserve(j->calls, (size_t)j->cap_calls * sizeof *j->calls);
    hbg__unreserve(j->reports, (size_t)j->cap_reports * sizeof *j->reports);
    memset(j, 0, sizeof *j);
}

/* The call equals c. The view is compared as raw bytes: hbg_tensor has
 * no padding (its reserved fields are zero). On x86-64 six 16-byte
 * compares, cheaper than a call to memcmp; the cheap, discriminating
 * fields go first. */
static inline bool same_view(const hbg_tensor *a, const hbg_tensor *b)
{
#if defined(__SSE2__)
    const __m128i *x = (const __m128i *)(const void *)a, *y = (const __m128i *)(const void *)b;
    __m128i d = _mm_xor_si128(_mm_loadu_si128(x), _mm_loadu_si128(y));
    for (unsigned i = 1; i < sizeof(hbg_tensor) / 16; i++)
        d = _mm_or_si128(d, _mm_xor_si128(_mm_loadu_si128(x + i), _mm_loadu_si128(y + i)));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
#else
    return memcmp(a, b, sizeof *a) == 0;
#endif
}

static inline bool same_call(const hbg__tmap_jcall *c, uint8_t op, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                             uint8_t dense, uint32_t aux)
{
    return c->op == op && c->lo == lo && c->hi == hi && c->dense == dense &&
           (op == HBG__TMAP_JREAD || c->aux == aux) && same_view(&c->view, t);
}

_Static_assert(sizeof(hbg_tensor) % 16 == 0, "hbg_tensor is compared 16 bytes at a time");

/* Stops following: the map applies the journal's writes before the
 * current call (the same puts, in the same order, as the epoch that wrote
 * the journal made), and the journal becomes this epoch's calls so far,
 * to be extended from here. The entries of the writes applied point at
 * the journal's copies of their views, which stay put for the epoch. */
static hbg_status catch_up(hbg__tmap *m)
{
    hbg__tmap_journal *j = &m->j;
    j->following = false;
    j->ncalls = j->at;
    j->nreports = j->at_report;
    hbg__tmap_clear(m);
    for (uint32_t i = 0; i < j->ncalls; i++) {
        const hbg__tmap_jcall *c = &j->calls[i];
        if (c->op == HBG__TMAP_JREAD)
            continue;
        hbg_status st = hbg__tmap_put(m, &c->view, c->lo, c->hi, c->dense, c->aux, c->op == HBG__TMAP_JRETIRE);
        if (st) {
            /* Cannot happen: the same puts fitted before. Keep the map
             * consistent with what was applied and record nothing more. */
            j->ncalls = i;
            j->stopped = true;
            return st;
        }
    }
    return HBG_OK;
}

void hbg__tmap_reset(hbg__tmap *m)
{
    hbg__tmap_journal *j = &m->j;
    /* A followed journal stays whole even when this epoch made fewer
     * calls: any prefix of it is a valid start for the next. */
    hbg__tmap_clear(m);
    j->following = j->ncalls > 0;
    j->at = j->at_report = 0;
    j->stopped = false;
}

bool hbg__tmap_fits_slow(hbg__tmap *m, const uint64_t *addr, uint32_t n)
{
    /* Near a full buffer table the answer needs the table itself. */
    if (m->j.following && catch_up(m))
        return false;
    return hbg__tmap_room_slow(m, addr, n);
}

typedef struct jvisit_ctx {
    hbg__tmap_journal *j;
    hbg__tmap_visit add;
    void *ctx;
    bool full;
} jvisit_ctx;

static hbg_status jvisit(void *vc, uint32_t writer)
{
    jvisit_ctx *c = vc;
    hbg__tmap_journal *j = c->j;
    if (j->nreports < j->cap_reports)
        j->reports[j->nreports++] = writer;
    else
        c->full = true;
    return c->add(c->ctx, writer);
}

hbg_status hbg__tmap_readers_deps(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                                 hbg__tmap_visit add, void *ctx)
{
    if (!hbg__tmap_may_hold(m, t->addr))
        return HBG_OK;
    hbg__tmap_journal *j = &m->j;
    hbg_status st;
    if (j->following) {
        if (j->at < j->ncalls && same_call(&j->calls[j->at], HBG__TMAP_JREAD, t, lo, hi, dense, 0)) {
            const hbg__tmap_jcall *c = &j->calls[j->at];
            const uint32_t *w = j->reports + j->at_report;
            for (uint32_t i = 0; i < c->aux; i++) {
                if ((st = add(ctx, w[i]))) {
                    /* The walk would have stopped at the same report;
                     * the journal ends before this call. */
                    if (!catch_up(m))
                        j->stopped = true;
                    return st;
                }
            }
            j->at++;
            j->at_report += c->aux;
            return HBG_OK;
        }
        if ((st = catch_up(m)))
            return st;
    }
    if (!j->calls || j->stopped)
        return hbg__tmap_walk_readers(m, t, lo, hi, dense, add, ctx);
    if (j->ncalls == j->cap_calls) {
        j->stopped = true;
        return hbg__tmap_walk_readers(m, t, lo, hi, dense, add, ctx);
    }
    uint32_t r0 = j->nreports;
    jvisit_ctx c = {j, add, ctx, false};
    st = hbg__tmap_walk_readers(m, t, lo, hi, dense, jvisit, &c);
    if (st || c.full) {
        j->nreports = r0;
        j->stopped = true;
        return st;
    }
    hbg__tmap_jcall *e = &j->calls[j->ncalls++];
    e->view = *t;
    e->lo = lo, e->hi = hi;
    e->aux = j->nreports - r0;
    e->op = HBG__TMAP_JREAD;
    e->dense = dense;
    e->links = e->newbuf = 0;
    return HBG_OK;
}

hbg_status hbg__tmap_write(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                          uint32_t writer, bool retire)
{
    if (hi <= lo)
        return HBG_OK;
    hbg__tmap_journal *j = &m->j;
    uint8_t op = retire ? HBG__TMAP_JRETIRE : HBG__TMAP_JWRITE;
    hbg_status st;
    if (j->following) {
        hbg__tmap_jcall *c = &j->calls[j->at];
        if (j->at < j->ncalls && same_call(c, op, t, lo, hi, dense, writer)) {
            /* What the put would have changed that callers can see. */
            m->nentries++;
            m->nlinks += c->links;
            if (c->newbuf) {
                uint32_t f = hbg__tmap_filter_bit(t->addr);
                m->filter[f >> 6] |= 1ull << (f & 63);
                m->nbufs++;
            }
            j->at++;
            return HBG_OK;
        }
        if ((st = catch_up(m)))
            return st;
    }
    uint32_t links0 = m->nlinks, bufs0 = m->nbufs;
    st = hbg__tmap_put(m, t, lo, hi, dense, writer, retire);
    if (!j->calls || j->stopped)
        return st;
    if (st || j->ncalls == j->cap_calls) {
        j->stopped = true;
        return st;
    }
    hbg__tmap_jcall *e = &j->calls[j->ncalls++];
    e->view = *t;
    e->lo = lo, e->hi = hi;
    e->aux = writer;
    e->op = op;
    e->dense = dense;
    e->links = (uint8_t)(m->nlinks - links0);
    e->newbuf = (uint8_t)(m->nbufs - bufs0);
    return HBG_OK;
}
