/* The tensor map's journal: a map with one must answer every call exactly
 * as a map without (the same writers reported in the same order, the same
 * statuses, the same hbg__tmap_fits and hbg__tmap_may_hold answers), over
 * epochs that repeat the last one's calls, stop early, run on past it, or
 * differ from it at any call; with a journal too small for an epoch; and
 * with a visitor that fails part-way through a query. The tests also check
 * that the journaled map did follow (answered without walking) where it
 * should, so that they cannot pass with the journal never used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "orch/tensormap.h"

#define CALLS 1500
#define MAXREP 4096

typedef struct call {
    hbg_tensor view;
    uint64_t lo, hi;
    uint8_t dense;
    bool write, retire;
    uint32_t writer;
} call;

typedef struct reports {
    uint32_t w[MAXREP];
    uint32_t n;
    uint32_t fail_at; /* the visitor refuses its fail_at-th report (0: never) */
} reports;

static hbg_status note(void *ctx, uint32_t writer)
{
    reports *r = ctx;
    if (r->fail_at && r->n + 1 == r->fail_at)
        return HBG_E_TOO_MANY_FANINS;
    assert_true(r->n < MAXREP);
    r->w[r->n++] = writer;
    return HBG_OK;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static uint32_t nbuf = 4, table = 64;

/* Row ranges and tiles of a few 64 x 256 f32 matrices, so queries meet
 * several writers, tiles overlap in bytes but not in elements, and
 * in-place writes retire some. */
static call random_call(uint64_t *s, uint32_t index)
{
    uint32_t shape[2] = {64, 256};
    uint64_t addr = 0x100000ull * (1 + rnd(s) % nbuf);
    hbg_tensor base = hbg_tensor_at(addr, HBG_F32, 2, shape);
    uint32_t r0 = (uint32_t)(rnd(s) % 64), c0 = (uint32_t)(rnd(s) % 256);
    uint32_t vs[2] = {1 + (uint32_t)(rnd(s) % (64 - r0 < 8 ? 64 - r0 : 8)), 1 + (uint32_t)(rnd(s) % (256 - c0))};
    if (rnd(s) % 4 == 0)
        c0 = 0, vs[1] = 256;
    call c = {.view = hbg_tensor_view(&base, (uint64_t)r0 * 256 + c0, 2, vs, base.strides)};
    assert_true(hbg_tensor_byte_range(&c.view, &c.lo, &c.hi));
    c.dense = rnd(s) % 2 ? hbg__tmap_dense(&c.view, c.lo, c.hi) : HBG_TMAP_DENSE_UNKNOWN;
    c.write = rnd(s) % 3 == 0;
    c.retire = rnd(s) % 2;
    c.writer = index;
    return c;
}

static call base[CALLS], epoch[2 * CALLS];
/* The views written, one copy per map: the maps keep pointers to them for
 * the epoch. */
static hbg_tensor held_j[2 * CALLS], held_p[2 * CALLS];

/* Runs the epoch's n calls on both maps and compares every answer.
 * fail_call/fail_at: the visitor of that query refuses that report. */
static void run_epoch(hbg__tmap *j, hbg__tmap *p, uint32_t n, uint32_t fail_call, uint32_t fail_at)
{
    static reports rj, rp;
    hbg__tmap_reset(j);
    hbg__tmap_reset(p);
    for (uint32_t i = 0; i < n; i++) {
        const call *c = &epoch[i];
        assert_int_equal(hbg__tmap_may_hold(j, c->view.addr), hbg__tmap_may_hold(p, c->view.addr));
        if (c->write) {
            uint64_t addr[2] = {c->view.addr, 0x100000ull * (1 + i % (nbuf + 2))};
            assert_int_equal(hbg__tmap_fits(j, addr, 2), hbg__tmap_fits(p, addr, 2));
            held_j[i] = held_p[i] = c->view;
            hbg_status sj = hbg__tmap_write(j, &held_j[i], c->lo, c->hi, c->dense, c->writer, c->retire);
            hbg_status sp = hbg__tmap_write(p, &held_p[i], c->lo, c->hi, c->dense, c->writer, c->retire);
            assert_int_equal(sj, sp);
            continue;
        }
        rj.n = rp.n = 0;
        rj.fail_at = rp.fail_at = i == fail_call ? fail_at : 0;
        hbg_status sj = hbg__tmap_readers_deps(j, &c->view, c->lo, c->hi, c->dense, note, &rj);
        hbg_status sp = hbg__tmap_readers_deps(p, &c->view, c->lo, c->hi, c->dense, note, &rp);
        assert_int_equal(sj, sp);
        assert_int_equal(rj.n, rp.n);
        assert_memory_equal(rj.w, rp.w, rj.n * sizeof rj.w[0]);
        assert_int_equal(j->nentries, p->nentries);
        assert_int_equal(j->nlinks, p->nlinks);
        assert_int_equal(j->nbufs, p->nbufs);
    }
}

static void make_base(uint64_t *s)
{
    for (uint32_t i = 0; i < CALLS; i++)
        base[i] = random_call(s, i);
}

/* The epoch: the base's first `keep` calls, then `tail` new ones. */
static uint32_t make_epoch(uint64_t *s, uint32_t keep, uint32_t tail)
{
    memcpy(epoch, base, keep * sizeof base[0]);
    for (uint32_t i = 0; i < tail; i++)
        epoch[keep + i] = random_call(s, keep + i);
    return keep + tail;
}

static void maps(hbg__tmap *j, hbg__tmap *p, uint32_t jcalls, uint32_t jreports)
{
    assert_int_equal(hbg__tmap_init(j, table, 4 * CALLS), HBG_OK);
    assert_int_equal(hbg__tmap_init(p, table, 4 * CALLS), HBG_OK);
    assert_int_equal(hbg__tmap_journal_init(j, jcalls, jreports), HBG_OK);
}

/* Both maps, with a journal of room to spare, and the epoch every call
 * of the base repeats, drawn from s. */
static uint32_t repeated_base(hbg__tmap *j, hbg__tmap *p, uint64_t *s)
{
    maps(j, p, 4 * CALLS, 64 * CALLS);
    make_base(s);
    return make_epoch(s, CALLS, 0);
}

/* The same calls epoch after epoch: the first epoch walks and makes no
 * journal, the second walks and journals, the rest follow to the end, and
 * the map's own tables stay untouched. */
static void a_repeated_epoch_is_answered_from_the_journal(void **state)
{
    (void)state;
    hbg__tmap j, p;
    uint64_t s = 0x243f6a8885a308d3ull;
    uint32_t n = repeated_base(&j, &p, &s);
    run_epoch(&j, &p, n, UINT32_MAX, 0);
    assert_false(j.j.following);
    assert_int_equal(j.j.ncalls, 0);
    run_epoch(&j, &p, n, UINT32_MAX, 0);
    assert_false(j.j.following);
    assert_int_equal(j.j.ncalls > CALLS / 3, true);
    for (int e = 0; e < 3; e++) {
        run_epoch(&j, &p, n, UINT32_MAX, 0);
        assert_true(j.j.following);
        assert_int_equal(j.j.at, j.j.ncalls);
        assert_int_equal(j.nblocks, 0); /* nothing was put in the map itself */
    }
    hbg__tmap_free(&j);
    hbg__tmap_free(&p);
}

/* Epochs that differ from the journal at a random call (or not at all,
 * or stop early, or run on), each the next epoch's journal in turn. */
static void epochs_that_differ_anywhere(void **state)
{
    (void)state;
    hbg__tmap j, p;
    maps(&j, &p, 4 * CALLS, 64 * CALLS);
    uint64_t s = 0x13198a2e03707344ull;
    make_base(&s);
    for (int e = 0; e < 40; e++) {
        uint32_t keep = (uint32_t)(rnd(&s) % (CALLS + 1)), tail;
        switch (e % 4) {
        case 0: keep = CALLS, tail = 0; break;           /* the base again */
        case 1: tail = 0; break;                         /* stops early */
        case 2: keep = CALLS, tail = 1 + rnd(&s) % 500; break; /* runs on */
        default: tail = 1 + rnd(&s) % CALLS; break;      /* differs at `keep` */
        }
        uint32_t n = make_epoch(&s, keep, tail);
        run_epoch(&j, &p, n, UINT32_MAX, 0);
        /* Half the time the next epochs repeat this one. */
        if (rnd(&s) % 2)
            memcpy(base, epoch, CALLS * sizeof base[0]);
    }
    hbg__tmap_free(&j);
    hbg__tmap_free(&p);
}

/* A journal that holds a few calls or reports: the epoch follows what it
 * holds and walks the rest. */
static void a_journal_too_small_for_the_epoch(void **state)
{
    (void)state;
    uint32_t caps[][2] = {{1, 1}, {5, 3}, {CALLS / 2, 64 * CALLS}, {4 * CALLS, 40}};
    for (unsigned c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        hbg__tmap j, p;
        maps(&j, &p, caps[c][0], caps[c][1]);
        uint64_t s = 0xa4093822299f31d0ull + c;
        make_base(&s);
        uint32_t n = make_epoch(&s, CALLS, 0);
        for (int e = 0; e < 3; e++)
            run_epoch(&j, &p, n, UINT32_MAX, 0);
        assert_true(j.j.ncalls <= caps[c][0]);
        assert_true(j.j.nreports <= caps[c][1]);
        hbg__tmap_free(&j);
        hbg__tmap_free(&p);
    }
}

/* A query whose visitor refuses a report, while walking and while
 * following: the same status after the same reports, and the epochs
 * after it are still exact. */
static void a_visitor_that_fails_part_way(void **state)
{
    (void)state;
    hbg__tmap j, p;
    uint64_t s = 0x082efa98ec4e6c89ull;
    uint32_t n = repeated_base(&j, &p, &s);
    run_epoch(&j, &p, n, UINT32_MAX, 0);
    int failed = 0;
    for (int e = 0; e < 30; e++) {
        uint32_t at = (uint32_t)(rnd(&s) % n);
        while (at < n && epoch[at].write)
            at++;
        run_epoch(&j, &p, n, at, 1 + (uint32_t)(rnd(&s) % 3));
        run_epoch(&j, &p, n, UINT32_MAX, 0);
        failed += at < n;
    }
    assert_true(failed > 0);
    hbg__tmap_free(&j);
    hbg__tmap_free(&p);
}

/* Call i of the epoch on one map; its status. */
static hbg_status call_on(hbg__tmap *m, hbg_tensor *held, uint32_t i)
{
    static reports r;
    const call *c = &epoch[i];
    if (c->write) {
        held[i] = c->view;
        return hbg__tmap_write(m, &held[i], c->lo, c->hi, c->dense, c->writer, c->retire);
    }
    r.n = r.fail_at = 0;
    return hbg__tmap_readers_deps(m, &c->view, c->lo, c->hi, c->dense, note, &r);
}

/* The memos note a submit's calls as a span and move a later epoch past
 * them whole (hbg__tmap_span_follow): the counts from the sums the span
 * took when it closed, the filter from the one buffer its writes claimed
 * (or from its calls, when they claimed more). After each span the counts
 * and the filter are those of a map that made the calls, and every way
 * (no buffer claimed, one, several) is taken. */
static void a_span_is_followed_as_its_calls(void **state)
{
    (void)state;
    nbuf = 48, table = 128; /* buffers enough that a span claims one */
    hbg__tmap j, p;
    uint64_t s = 0xbe5466cf34e90c6cull;
    uint32_t n = repeated_base(&j, &p, &s);
    run_epoch(&j, &p, n, UINT32_MAX, 0);
    run_epoch(&j, &p, n, UINT32_MAX, 0);
    /* the third epoch follows call by call and notes spans of 1 to 6 or 40 calls */
    static hbg__tmap_jspan sp[CALLS];
    static uint32_t end[CALLS];
    uint32_t ns = 0;
    hbg__tmap_reset(&j);
    hbg__tmap_reset(&p);
    for (uint32_t i = 0; i < n;) {
        uint32_t k = i + 1 + (uint32_t)(rnd(&s) % (ns % 2 ? 6 : 40));
        k = k < n ? k : n;
        hbg__tmap_span_mark(&j, &sp[ns].at, &sp[ns].rep);
        for (; i < k; i++)
            assert_int_equal(call_on(&j, held_j, i), call_on(&p, held_p, i));
        assert_true(hbg__tmap_span_close(&j, &sp[ns]));
        end[ns++] = k;
    }
    assert_true(j.j.following);
    /* the fourth moves past each span whole; the other map makes its calls */
    hbg__tmap_reset(&j);
    hbg__tmap_reset(&p);
    uint32_t ways[3] = {0, 0, 0};
    for (uint32_t q = 0, i = 0; q < ns; q++) {
        assert_true(hbg__tmap_span_next(&j, &sp[q]));
        hbg__tmap_span_follow(&j, &sp[q]);
        for (; i < end[q]; i++)
            call_on(&p, held_p, i);
        assert_int_equal(j.nentries, p.nentries);
        assert_int_equal(j.nlinks, p.nlinks);
        assert_int_equal(j.nbufs, p.nbufs);
        assert_memory_equal(j.filter, p.filter, sizeof j.filter);
        ways[sp[q].newbufs] += sp[q].writes > 0;
    }
    assert_int_equal(j.j.at, j.j.ncalls);
    print_message("spans followed with 0, 1, 2+ buffers claimed: %u %u %u\n", ways[0], ways[1], ways[2]);
    assert_true(ways[0] > 0 && ways[1] > 0 && ways[2] > 0);
    assert_int_equal(j.nblocks, 0); /* nothing was put in the map itself */
    hbg__tmap_free(&j);
    hbg__tmap_free(&p);
    nbuf = 4, table = 64;
}

/* Nine buffers and a buffer table that holds eight (16 slots, the least
 * the map makes, at half load): hbg__tmap_fits takes its slow path (which
 * needs the map's own table) and the ninth buffer's writes are refused,
 * while following and while walking. */
static void a_full_buffer_table(void **state)
{
    nbuf = 9, table = 4;
    epochs_that_differ_anywhere(state);
    a_visitor_that_fails_part_way(state);
    nbuf = 4, table = 64;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_repeated_epoch_is_answered_from_the_journal),
        cmocka_unit_test(epochs_that_differ_anywhere),
        cmocka_unit_test(a_journal_too_small_for_the_epoch),
        cmocka_unit_test(a_visitor_that_fails_part_way),
        cmocka_unit_test(a_full_buffer_table),
        cmocka_unit_test(a_span_is_followed_as_its_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
