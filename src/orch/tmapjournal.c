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

#include "orch/tensormap.h"
#include "util/reserve.h"

/* The journal commits what a pass of the cases fills (a dsv4 rank's pass
 * makes some 4,200 calls, its Definition's recording 2,700) at creation, so
 * the second pass, which writes the journal from scratch (the first makes
 * none), takes no page faults for it. */
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


/* Stops following: the map applies the journal's writes before the
 * current call (the same puts, in the same order, as the epoch that wrote
 * the journal made), and the journal becomes this epoch's calls so far,
 * to be extended from here. The entries of the writes applied point at
 * the journal's copies of their views, which stay put for the epoch. */
hbg_status hbg__tmap_catch_up(hbg__tmap *m)
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
    /* An epoch that kept its calls and made none (a body whose nodes
     * only read its boundary) leaves an empty journal, which the next
     * epoch follows as well as any: without it the node memo could never
     * answer such a body. One that kept nothing (the first) is not. */
    j->following = j->ncalls > 0 || (j->calls && !j->stopped);
    j->at = j->at_report = 0;
    /* The first epoch (a runtime's cold pass, a Definition's first
     * recording) makes no journal: a program bound once never pays for
     * one, and the cold pass, which has page faults and cold caches
     * enough, is not made longer by it. The second writes it. */
    if (j->epochs < 2)
        j->epochs++;
    j->stopped = j->epochs < 2;
}

bool hbg__tmap_fits_slow(hbg__tmap *m, const uint64_t *addr, uint32_t n)
{
    /* Near a full buffer table the answer needs the table itself. */
    if (m->j.following && hbg__tmap_catch_up(m))
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

hbg_status hbg__tmap_readers_deps_slow(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                      uint8_t dense, hbg__tmap_visit add, void *ctx)
{
    hbg__tmap_journal *j = &m->j;
    hbg_status st;
    if (j->following && (st = hbg__tmap_catch_up(m)))
        return st;
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

hbg_status hbg__tmap_write_slow(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                               uint32_t writer, bool retire)
{
    hbg__tmap_journal *j = &m->j;
    uint8_t op = retire ? HBG__TMAP_JRETIRE : HBG__TMAP_JWRITE;
    hbg_status st;
    if (j->following && (st = hbg__tmap_catch_up(m)))
        return st;
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
