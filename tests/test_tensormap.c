/* The bucketed tensor map against a brute-force reference: random writes
 * and reads of 1-D ranges and 2-D tiles on a few buffers must produce the
 * same dependency sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "orch/tensormap.h"

#define OPS 4000

typedef struct ref_entry {
    hbg_tensor view;
    uint64_t lo, hi;
    uint32_t writer;
    bool live;
} ref_entry;

static ref_entry ref[OPS];
static hbg_tensor views[OPS];
static uint32_t nref;
static uint8_t got[OPS], want[OPS];

static hbg_status mark(void *ctx, uint32_t writer)
{
    (void)ctx;
    got[writer] = 1;
    return HBG_OK;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* The matrix shapes buffers take: the 64 x 64 one alone (`mixed` off), or
 * one of these by address, from a scalar-sized buffer (a few buckets, so
 * no bucket block) to wide matrices whose column tiles span more fine
 * buckets than a writer may take and land in the coarse ones. */
static const uint32_t shapes[][2] = {{64, 64}, {1, 16}, {2, 8}, {16, 512}, {256, 256}, {4, 2048}};
static bool mixed;

static hbg_tensor random_view(uint64_t *s, uint64_t addr)
{
    /* an R x C f32 matrix; half the time a row range, half a tile */
    const uint32_t *shape = shapes[mixed ? addr / 0x100000ull % (sizeof shapes / sizeof shapes[0]) : 0];
    uint32_t R = shape[0], C = shape[1];
    hbg_tensor base = hbg_tensor_at(addr, HBG_F32, 2, shape);
    uint32_t r0 = (uint32_t)(rnd(s) % R), c0 = (uint32_t)(rnd(s) % C);
    uint32_t nr = 1 + (uint32_t)(rnd(s) % (rnd(s) % 4 == 0 || r0 + 4 > R ? R - r0 : 4));
    uint32_t nc = rnd(s) % 2 ? C : 1 + (uint32_t)(rnd(s) % (C - c0));
    if (nc == C)
        c0 = 0;
    uint32_t vs[2] = {nr, nc};
    return hbg_tensor_view(&base, (uint64_t)r0 * C + c0, 2, vs, base.strides);
}

/* The overlap and cover predicates on known views of a 64 x 64 f32
 * matrix, exact: the reference above is built on them. */
static void overlap_and_cover_on_known_views(void **state)
{
    (void)state;
    uint32_t shape[2] = {64, 64};
    hbg_tensor m = hbg_tensor_at(0x100000, HBG_F32, 2, shape);
    uint32_t half[2] = {64, 32}, rows[2] = {8, 64}, tile[2] = {8, 32}, wide[2] = {2, 96};
    hbg_tensor left = hbg_tensor_view(&m, 0, 2, half, m.strides);
    hbg_tensor right = hbg_tensor_view(&m, 32, 2, half, m.strides);
    hbg_tensor band = hbg_tensor_view(&m, 8 * 64, 2, rows, m.strides);
    hbg_tensor tl = hbg_tensor_view(&m, 8 * 64, 2, tile, m.strides);
    hbg_tensor tr = hbg_tensor_view(&m, 8 * 64 + 32, 2, tile, m.strides);
    /* 96 columns in a 64-wide stride: runs past its row, not a box */
    hbg_tensor past = hbg_tensor_view(&m, 8 * 64 + 16, 2, wide, m.strides);
    hbg_tensor *v[] = {&left, &right, &band, &tl, &tr, &past};
    uint64_t lo[6], hi[6];
    for (int i = 0; i < 6; i++)
        assert_true(hbg_tensor_byte_range(v[i], &lo[i], &hi[i]));
    static const bool overlap[6][6] = {
        {1, 0, 1, 1, 0, 1}, {0, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 1, 1},
        {1, 0, 1, 1, 0, 1}, {0, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 1, 1},
    };
    static const bool covers[6][6] = {
        {1, 0, 0, 1, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 1, 1, 1},
        {0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 1, 0}, {0, 0, 0, 0, 0, 1},
    };
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            assert_int_equal(hbg__views_overlap(v[i], lo[i], hi[i], v[j], lo[j], hi[j]), overlap[i][j]);
            assert_int_equal(hbg__view_covers(v[i], lo[i], hi[i], v[j], lo[j], hi[j]), covers[i][j]);
        }
}

/* A view that visits elements twice can have as many elements as its
 * byte range has places yet skip some: shape {2, 2}, strides {3, 0} of an
 * f32 buffer touches elements 0 and 3 only, over bytes [0, 16). It covers
 * neither element 1 nor a row-major view of all four; a write through it
 * retires nothing it skips, and a later reader of element 1 still finds
 * that element's writer. Dense views, permuted or with unit dimensions,
 * still cover their range. */
static void a_view_with_repeats_covers_only_what_it_touches(void **state)
{
    (void)state;
    uint32_t four = 4, one = 1;
    hbg_tensor buf = hbg_tensor_at(0x100000, HBG_F32, 1, &four);
    hbg_tensor e1 = hbg_tensor_view(&buf, 1, 1, &one, NULL);
    uint32_t rs[2] = {2, 2};
    int64_t rst[2] = {3, 0};
    hbg_tensor rep = hbg_tensor_view(&buf, 0, 2, rs, rst);
    uint64_t lo1, hi1, lor, hir, lob, hib;
    assert_true(hbg_tensor_byte_range(&e1, &lo1, &hi1));
    assert_true(hbg_tensor_byte_range(&rep, &lor, &hir));
    assert_true(hbg_tensor_byte_range(&buf, &lob, &hib));
    assert_int_equal(lor, 0);
    assert_int_equal(hir, 16);
    assert_false(hbg__view_covers(&rep, lor, hir, &e1, lo1, hi1));
    assert_false(hbg__view_covers(&rep, lor, hir, &buf, lob, hib));
    assert_true(hbg__view_covers(&buf, lob, hib, &rep, lor, hir));
    /* a transposed dense view, and one with a unit dimension */
    uint32_t ts[2] = {2, 2}, us[3] = {2, 1, 2};
    int64_t tst[2] = {1, 2}, ust[3] = {2, 7, 1};
    hbg_tensor tr = hbg_tensor_view(&buf, 0, 2, ts, tst), un = hbg_tensor_view(&buf, 0, 3, us, ust);
    uint64_t lot, hit, lou, hiu;
    assert_true(hbg_tensor_byte_range(&tr, &lot, &hit));
    assert_true(hbg_tensor_byte_range(&un, &lou, &hiu));
    assert_true(hbg__view_covers(&tr, lot, hit, &e1, lo1, hi1));
    assert_true(hbg__view_covers(&un, lou, hiu, &e1, lo1, hi1));
    /* the same answers as the hints a replay passes */
    assert_int_equal(hbg__tmap_dense(&rep, lor, hir), HBG_TMAP_DENSE_NO);
    assert_int_equal(hbg__tmap_dense(&buf, lob, hib), HBG_TMAP_DENSE_YES);
    assert_int_equal(hbg__tmap_dense(&e1, lo1, hi1), HBG_TMAP_DENSE_YES);
    assert_int_equal(hbg__tmap_dense(&tr, lot, hit), HBG_TMAP_DENSE_YES);
    assert_int_equal(hbg__tmap_dense(&un, lou, hiu), HBG_TMAP_DENSE_YES);

    hbg__tmap m;
    assert_int_equal(hbg__tmap_init(&m, 16, 16), HBG_OK);
    hbg__tmap_reset(&m);
    assert_int_equal(hbg__tmap_write(&m, &e1, lo1, hi1, 0, 7, true), HBG_OK);
    assert_int_equal(hbg__tmap_write(&m, &rep, lor, hir, 0, 8, true), HBG_OK);
    memset(got, 0, sizeof got);
    assert_int_equal(hbg__tmap_readers_deps(&m, &e1, lo1, hi1, 0, mark, NULL), HBG_OK);
    assert_int_equal(got[7], 1);
    hbg__tmap_free(&m);
}

/* The predicates against the elements themselves: random strided views
 * of a 512-element buffer, row-major with padding or not, shapes that run
 * past their stride (windows whose rows overlap) or not, strides that do
 * not nest (no box) or do. Two views that share an element must be said
 * to overlap, and a view said to cover another must hold every element of
 * it; when both are boxes inside their strides, the overlap answer is
 * exact. */
#define EL 512

typedef struct elems {
    uint64_t bit[EL / 64];
} elems;

static hbg_tensor strided_view(uint64_t *s, uint64_t addr, const hbg_tensor *like)
{
    unsigned nd;
    int64_t st[3];
    if (like) {
        nd = like->ndim;
        for (unsigned d = 0; d < nd; d++)
            st[d] = like->strides[d];
    } else {
        nd = 1 + (unsigned)(rnd(s) % 3);
        st[nd - 1] = rnd(s) % 5 ? 1 : 2;
        for (unsigned d = nd - 1; d > 0; d--)
            /* nested (a multiple of the inner stride) but one time in eight */
            st[d - 1] = rnd(s) % 8 ? st[d] * (int64_t)(1 + rnd(s) % 6) : 1 + (int64_t)(rnd(s) % 9);
    }
    uint32_t sh[3];
    uint64_t extent = 0;
    for (unsigned d = 0; d < nd; d++) {
        /* up to twice the room the stride above leaves: often past it */
        int64_t room = d == 0 ? 4 : st[d - 1] / st[d];
        sh[d] = 1 + (uint32_t)(rnd(s) % (uint64_t)(2 * (room > 0 ? room : 1)));
        extent += (uint64_t)(sh[d] - 1) * (uint64_t)st[d];
    }
    if (extent >= EL) /* too big for the buffer: one element per dimension */
        for (unsigned d = 0; d < nd; d++)
            sh[d] = 1, extent = 0;
    uint64_t off = rnd(s) % (EL - extent);
    uint32_t n = EL;
    hbg_tensor base = hbg_tensor_at(addr, HBG_F32, 1, &n);
    return hbg_tensor_view(&base, off, nd, sh, st);
}

static elems elements_of(const hbg_tensor *t)
{
    elems e;
    memset(&e, 0, sizeof e);
    uint32_t sh[3] = {1, 1, 1};
    int64_t st[3] = {0, 0, 0};
    for (unsigned d = 0; d < t->ndim; d++)
        sh[d] = t->shape[d], st[d] = t->strides[d];
    for (uint32_t i = 0; i < sh[0]; i++)
        for (uint32_t j = 0; j < sh[1]; j++)
            for (uint32_t k = 0; k < sh[2]; k++) {
                uint64_t x = t->offset + i * (uint64_t)st[0] + j * (uint64_t)st[1] + k * (uint64_t)st[2];
                assert_true(x < EL);
                e.bit[x / 64] |= 1ull << (x % 64);
            }
    return e;
}

/* Inside its strides: no dimension but the outermost runs past the one
 * above it, and the strides nest. */
static bool a_box(const hbg_tensor *t)
{
    for (unsigned d = 1; d < t->ndim; d++)
        if (t->strides[d - 1] % t->strides[d] != 0)
            return false;
    uint64_t rem = t->offset;
    for (unsigned d = 0; d < t->ndim; d++) {
        uint64_t start = rem / (uint64_t)t->strides[d];
        rem %= (uint64_t)t->strides[d];
        if (d > 0 && start + t->shape[d] > (uint64_t)(t->strides[d - 1] / t->strides[d]))
            return false;
    }
    return rem == 0; /* an offset between two elements of the innermost stride: no box */
}

static void predicates_against_the_elements(void **state)
{
    (void)state;
    uint64_t seed = 0x2545f4914f6cdd1dull;
    unsigned exact = 0, past = 0;
    for (int trial = 0; trial < 60000; trial++) {
        hbg_tensor a = strided_view(&seed, 0x100000, NULL);
        hbg_tensor b = strided_view(&seed, 0x100000, rnd(&seed) % 4 ? &a : NULL);
        uint64_t alo, ahi, blo, bhi;
        assert_true(hbg_tensor_byte_range(&a, &alo, &ahi));
        assert_true(hbg_tensor_byte_range(&b, &blo, &bhi));
        elems ea = elements_of(&a), eb = elements_of(&b);
        bool meet = false, inside = true;
        for (unsigned w = 0; w < EL / 64; w++) {
            meet = meet || (ea.bit[w] & eb.bit[w]);
            inside = inside && (eb.bit[w] & ~ea.bit[w]) == 0;
        }
        bool said = hbg__views_overlap(&a, alo, ahi, &b, blo, bhi);
        if (meet && !said)
            fail_msg("trial %d: views share an element, said apart: a off %llu shape %u,%u,%u strides %lld,%lld,%lld; "
                     "b off %llu shape %u,%u,%u",
                     trial, (unsigned long long)a.offset, a.shape[0], a.shape[1], a.shape[2],
                     (long long)a.strides[0], (long long)a.strides[1], (long long)a.strides[2],
                     (unsigned long long)b.offset, b.shape[0], b.shape[1], b.shape[2]);
        if (hbg__view_covers(&a, alo, ahi, &b, blo, bhi))
            assert_true(inside);
        bool boxes = a.ndim == b.ndim && !memcmp(a.strides, b.strides, sizeof a.strides) && a_box(&a) && a_box(&b);
        if (boxes) {
            assert_int_equal(said, meet);
            exact++;
        } else if (a.ndim == b.ndim && !memcmp(a.strides, b.strides, sizeof a.strides)) {
            past++;
        }
    }
    /* the draw reaches both kinds of same-layout pair */
    assert_true(exact > 5000);
    assert_true(past > 5000);
}

/* nbuf buffers; `buffers` sizes the map (its buffer table grows from
 * 1024 slots up to twice that). */
static void against_reference(uint32_t nbuf, uint32_t buffers)
{
    hbg__tmap m;
    assert_int_equal(hbg__tmap_init(&m, buffers, OPS), HBG_OK);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 3; round++) {
        hbg__tmap_reset(&m);
        nref = 0;
        for (uint32_t op = 0; op < OPS; op++) {
            uint64_t addr = 0x100000ull * (1 + rnd(&seed) % nbuf);
            hbg_tensor v = random_view(&seed, addr);
            uint64_t lo, hi;
            assert_true(hbg_tensor_byte_range(&v, &lo, &hi));
            /* Half the calls pass the contiguity as a replay does: worked
             * out once for the layout at offset 0, whatever the offset. */
            uint8_t dense = HBG_TMAP_DENSE_UNKNOWN;
            if (rnd(&seed) % 2) {
                hbg_tensor l = v;
                l.offset = 0;
                uint64_t llo, lhi;
                assert_true(hbg_tensor_byte_range(&l, &llo, &lhi));
                dense = hbg__tmap_dense(&l, llo, lhi);
                assert_int_equal(dense, hbg__tmap_dense(&v, lo, hi));
            }
            memset(got, 0, sizeof got);
            memset(want, 0, sizeof want);
            assert_int_equal(hbg__tmap_readers_deps(&m, &v, lo, hi, dense, mark, NULL), HBG_OK);
            for (uint32_t i = 0; i < nref; i++)
                if (ref[i].live && ref[i].view.addr == addr &&
                    hbg__views_overlap(&v, lo, hi, &ref[i].view, ref[i].lo, ref[i].hi))
                    want[ref[i].writer] = 1;
            assert_memory_equal(got, want, op + 1);
            if (rnd(&seed) % 3 == 0)
                continue; /* a read only */
            bool retire = rnd(&seed) % 2;
            views[op] = v;
            assert_int_equal(hbg__tmap_write(&m, &views[op], lo, hi, dense, op, retire), HBG_OK);
            if (retire)
                for (uint32_t i = 0; i < nref; i++)
                    if (ref[i].live && ref[i].view.addr == addr &&
                        hbg__view_covers(&v, lo, hi, &ref[i].view, ref[i].lo, ref[i].hi))
                        ref[i].live = false;
            ref[nref++] = (ref_entry){v, lo, hi, op, true};
        }
    }
    hbg__tmap_free(&m);
}

static void random_against_reference(void **state)
{
    (void)state;
    against_reference(3, 64);
}

/* Buffers of many shapes: scalar-sized ones, kept to their lists, and
 * wide matrices whose column tiles use the coarse buckets. */
static void mixed_shapes_against_reference(void **state)
{
    (void)state;
    mixed = true;
    against_reference(12, 64);
    mixed = false;
}

/* 700 buffers: the buffer table doubles (1024 -> 2048 slots) in the first
 * pass while records are live, and the answers stay the reference's. */
static void a_growing_buffer_table_against_reference(void **state)
{
    (void)state;
    against_reference(700, 4096);
}

/* The table doubles as buffers arrive, keeps its size across passes, and
 * at its largest refuses the buffer that would pass half load. */
static void the_buffer_table_grows_to_its_cap(void **state)
{
    (void)state;
    hbg__tmap m;
    assert_int_equal(hbg__tmap_init(&m, 2048, 8192), HBG_OK); /* 4096 slots at most */
    assert_int_equal(m.buf_mask, 1023);
    assert_int_equal(m.buf_max_mask, 4095);
    uint32_t shape[1] = {16};
    static hbg_tensor v[2100];
    for (int pass = 0; pass < 2; pass++) {
        hbg__tmap_reset(&m);
        hbg_status st = HBG_OK;
        uint32_t i = 0;
        for (; i < 2100 && !st; i++) {
            v[i] = hbg_tensor_at(0x40000000ull + (uint64_t)(pass * 4096 + i) * 0x1000, HBG_F32, 1, shape);
            st = hbg__tmap_write(&m, &v[i], 0, 64, 0, i, true);
        }
        /* 2048 buffers fill 4096 slots to half; the 2049th is refused */
        assert_int_equal(st, HBG_E_POOL_EXHAUSTED);
        assert_int_equal(i, 2049);
        assert_int_equal(m.nbufs, 2048);
        assert_int_equal(m.buf_mask, 4095);
        for (uint32_t k = 0; k < 2048; k++) {
            memset(got, 0, sizeof got);
            assert_int_equal(hbg__tmap_readers_deps(&m, &v[k], 0, 64, 0, mark, NULL), HBG_OK);
            assert_int_equal(got[k], 1); /* each buffer's writer, after every doubling */
            got[k] = 0;
            for (uint32_t j = 0; j < 2100; j++)
                assert_int_equal(got[j], 0);
        }
    }
    hbg__tmap_free(&m);
}

static void pool_exhaustion_is_named(void **state)
{
    (void)state;
    hbg__tmap m;
    assert_int_equal(hbg__tmap_init(&m, 4, 8), HBG_OK);
    uint32_t shape[1] = {1024};
    hbg_tensor b = hbg_tensor_at(0x1000, HBG_F32, 1, shape);
    hbg_status st = HBG_OK;
    int i = 0;
    for (; i < 100 && !st; i++) {
        uint32_t one[1] = {1};
        static hbg_tensor v[100];
        v[i] = hbg_tensor_view(&b, (uint64_t)i * 8, 1, one, NULL);
        uint64_t lo, hi;
        hbg_tensor_byte_range(&v[i], &lo, &hi);
        st = hbg__tmap_write(&m, &v[i], lo, hi, 0, (uint32_t)i, false);
    }
    assert_int_equal(st, HBG_E_POOL_EXHAUSTED);
    assert_int_equal(i, 9);
    hbg__tmap_reset(&m);
    hbg__tmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overlap_and_cover_on_known_views),
        cmocka_unit_test(a_view_with_repeats_covers_only_what_it_touches),
        cmocka_unit_test(predicates_against_the_elements),
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(mixed_shapes_against_reference),
        cmocka_unit_test(a_growing_buffer_table_against_reference),
        cmocka_unit_test(the_buffer_table_grows_to_its_cap),
        cmocka_unit_test(pool_exhaustion_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
