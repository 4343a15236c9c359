/* Tensor helpers: dtype facts, constructors, numel, byte ranges, bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/tensor.h"
#include "orch/range.h"

static void dtypes(void **state)
{
    (void)state;
    static const struct {
        hbg_dtype dt;
        unsigned size;
        const char *name;
    } want[] = {{HBG_F32, 4, "f32"}, {HBG_F16, 2, "f16"}, {HBG_BF16, 2, "bf16"}, {HBG_I8, 1, "i8"},
                {HBG_U8, 1, "u8"},   {HBG_I16, 2, "i16"}, {HBG_I32, 4, "i32"},   {HBG_U32, 4, "u32"},
                {HBG_I64, 8, "i64"}, {HBG_U64, 8, "u64"}};
    assert_int_equal(sizeof want / sizeof want[0], HBG_DTYPE_COUNT);
    for (size_t i = 0; i < HBG_DTYPE_COUNT; i++) {
        assert_int_equal(hbg_dtype_size(want[i].dt), want[i].size);
        assert_string_equal(hbg_dtype_name(want[i].dt), want[i].name);
    }
    assert_int_equal(hbg_dtype_size(HBG_DTYPE_COUNT), 0);
    assert_int_equal(hbg_dtype_size((hbg_dtype)-1), 0);
    assert_string_equal(hbg_dtype_name(HBG_DTYPE_COUNT), "unknown");
}

static void constructors(void **state)
{
    (void)state;
    const uint32_t shape[3] = {2, 3, 4};
    hbg_tensor d = hbg_tensor_desc(HBG_F16, 3, shape);
    assert_int_equal(d.addr, 0);
    assert_int_equal(d.nbytes, 2 * 3 * 4 * 2);
    assert_int_equal(d.offset, 0);
    assert_int_equal(d.ndim, 3);
    assert_int_equal(d.dtype, HBG_F16);
    assert_int_equal(d.creator, 0);
    assert_int_equal(d.strides[0], 12);
    assert_int_equal(d.strides[1], 4);
    assert_int_equal(d.strides[2], 1);
    assert_int_equal(d.strides[3], 0);
    assert_int_equal(d.shape[3], 0);
    assert_int_equal(hbg_tensor_numel(&d), 24);

    hbg_tensor a = hbg_tensor_at(0x1000, HBG_F32, 3, shape);
    assert_int_equal(a.addr, 0x1000);
    assert_int_equal(a.nbytes, 96);
    assert_true(hbg_tensor_in_bounds(&a));
    uint64_t lo, hi;
    assert_true(hbg_tensor_byte_range(&a, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 96);

    /* A scalar: no dimensions, one element. */
    hbg_tensor s = hbg_tensor_at(0x2000, HBG_I64, 0, NULL);
    assert_int_equal(hbg_tensor_numel(&s), 1);
    assert_int_equal(s.nbytes, 8);
    assert_true(hbg_tensor_byte_range(&s, &lo, &hi));
    assert_int_equal(hi - lo, 8);

    /* Bad arguments give the invalid dtype, which every check rejects. */
    const uint32_t six[6] = {1, 1, 1, 1, 1, 1};
    hbg_tensor bad[] = {hbg_tensor_desc(HBG_F32, 6, six), hbg_tensor_desc(HBG_F32, 2, NULL),
                        hbg_tensor_desc(HBG_DTYPE_COUNT, 3, shape), hbg_tensor_view(NULL, 0, 1, shape, NULL)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(bad[i].dtype, HBG_DTYPE_COUNT);
        assert_false(hbg_tensor_in_bounds(&bad[i]));
        assert_false(hbg_tensor_byte_range(&bad[i], &lo, &hi));
    }
}

static void views(void **state)
{
    (void)state;
    const uint32_t shape[2] = {4, 8};
    hbg_tensor t = hbg_tensor_at(0x10000, HBG_F32, 2, shape); /* 128 bytes */
    t.creator = 5;

    /* Row 2, contiguous: keeps addr, moves offset. */
    const uint32_t row[1] = {8};
    hbg_tensor r = hbg_tensor_view(&t, 16, 1, row, NULL);
    assert_int_equal(r.addr, t.addr);
    assert_int_equal(r.nbytes, t.nbytes);
    assert_int_equal(r.creator, 5);
    assert_int_equal(r.offset, 16);
    assert_int_equal(r.strides[0], 1);
    uint64_t lo, hi;
    assert_true(hbg_tensor_byte_range(&r, &lo, &hi));
    assert_int_equal(lo, 64);
    assert_int_equal(hi, 96);
    assert_true(hbg_tensor_in_bounds(&r));

    /* Column 3, strided: elements 3, 11, 19, 27. */
    const uint32_t col[1] = {4};
    const int64_t cs[1] = {8};
    hbg_tensor c = hbg_tensor_view(&t, 3, 1, col, cs);
    assert_int_equal(hbg_tensor_numel(&c), 4);
    assert_true(hbg_tensor_byte_range(&c, &lo, &hi));
    assert_int_equal(lo, 12);
    assert_int_equal(hi, 112);
    assert_true(hbg_tensor_in_bounds(&c));

    /* The last element of the buffer is in, one past is out. */
    const uint32_t one[1] = {1};
    hbg_tensor last = hbg_tensor_view(&t, 31, 1, one, NULL);
    assert_true(hbg_tensor_in_bounds(&last));
    hbg_tensor past = hbg_tensor_view(&t, 32, 1, one, NULL);
    assert_false(hbg_tensor_in_bounds(&past));
    assert_true(hbg_tensor_byte_range(&past, &lo, &hi));
    assert_int_equal(lo, 128);
    assert_int_equal(hi, 132);

    /* A broadcast (stride 0) view touches one row's bytes. */
    const uint32_t b[2] = {100, 8};
    const int64_t bs[2] = {0, 1};
    hbg_tensor bc = hbg_tensor_view(&t, 8, 2, b, bs);
    assert_true(hbg_tensor_byte_range(&bc, &lo, &hi));
    assert_int_equal(lo, 32);
    assert_int_equal(hi, 64);
    assert_true(hbg_tensor_in_bounds(&bc));

    /* Negative strides are invalid. */
    const int64_t neg[1] = {-1};
    hbg_tensor n = hbg_tensor_view(&t, 8, 1, row, neg);
    assert_false(hbg_tensor_byte_range(&n, &lo, &hi));
    assert_false(hbg_tensor_in_bounds(&n));
}

static void empty_and_overflow(void **state)
{
    (void)state;
    const uint32_t shape[2] = {4, 8};
    hbg_tensor t = hbg_tensor_at(0x10000, HBG_F32, 2, shape);
    const uint32_t zero[2] = {0, 8};
    hbg_tensor e = hbg_tensor_view(&t, 32, 2, zero, NULL);
    assert_int_equal(hbg_tensor_numel(&e), 0);
    uint64_t lo = 7, hi = 9;
    assert_false(hbg_tensor_byte_range(&e, &lo, &hi));
    assert_int_equal(lo, 7); /* untouched */
    assert_int_equal(hi, 9);
    assert_true(hbg_tensor_in_bounds(&e)); /* starts at the buffer's end */
    e.offset = 33;
    assert_false(hbg_tensor_in_bounds(&e));

    const uint32_t huge[5] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, 2, 2};
    hbg_tensor h = hbg_tensor_desc(HBG_U8, 5, huge);
    assert_int_equal(hbg_tensor_numel(&h), UINT64_MAX);
    assert_int_equal(h.dtype, HBG_DTYPE_COUNT); /* its size overflows */

    /* a 0 extent after extents whose product overflows: still empty,
     * and in bounds where it starts inside the buffer */
    const uint32_t late_zero[4] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, 0};
    hbg_tensor z = hbg_tensor_view(&t, 8, 4, late_zero, NULL);
    assert_int_equal(z.dtype, HBG_F32);
    assert_int_equal(hbg_tensor_numel(&z), 0);
    assert_false(hbg_tensor_byte_range(&z, &lo, &hi));
    assert_true(hbg_tensor_in_bounds(&z));
    /* the constructors take it as the empty tensor it is, not as one
     * whose size overflows */
    hbg_tensor zd = hbg_tensor_at(0x10000, HBG_F32, 4, late_zero);
    assert_int_equal(zd.dtype, HBG_F32);
    assert_int_equal(zd.nbytes, 0);
    assert_int_equal(zd.strides[0], 0);
    assert_int_equal(zd.strides[3], 1);

    const uint32_t one[1] = {2};
    const int64_t far[1] = {INT64_MAX};
    hbg_tensor f = hbg_tensor_view(&t, 0, 1, one, far);
    assert_false(hbg_tensor_byte_range(&f, &lo, &hi));
    assert_false(hbg_tensor_in_bounds(&f));
    hbg_tensor o = hbg_tensor_view(&t, UINT64_MAX / 2, 1, one, NULL);
    assert_false(hbg_tensor_byte_range(&o, &lo, &hi));
    assert_false(hbg_tensor_in_bounds(&o));
    assert_int_equal(hbg_tensor_numel(NULL), 0);
    assert_false(hbg_tensor_in_bounds(NULL));
}

/* A view byte for byte, field by field as expected (the memos compare
 * views as bytes, so stray bytes would be misses): bad arguments and
 * row-major strides at the edge of int64 included. */

static hbg_tensor want_view(const hbg_tensor *t, uint64_t offset, unsigned nd, const uint32_t *shape,
                            const int64_t *strides, bool valid)
{
    hbg_tensor v;
    memset(&v, 0, sizeof v);
    v.addr = t->addr, v.nbytes = t->nbytes, v.creator = t->creator, v.offset = offset;
    v.dtype = valid ? t->dtype : HBG_DTYPE_COUNT;
    if (nd > HBG_MAX_DIMS || (nd && !shape))
        return v;
    v.ndim = (uint8_t)nd;
    for (unsigned i = 0; i < nd; i++)
        v.shape[i] = shape[i], v.strides[i] = strides[i];
    return v;
}

static void view_bytes(void **state)
{
    (void)state;
    const uint32_t s2[2] = {4, 8};
    hbg_tensor t = hbg_tensor_at(0x10000, HBG_F16, 2, s2);
    t.creator = 9;
    const uint32_t row[3] = {2, 3, 5}, big[3] = {2, UINT32_MAX, UINT32_MAX}, edge[3] = {7, 1u << 31, 1u << 31},
                   over[5] = {1, 1, 2, 1u << 31, 1u << 31},
                   /* 7 x 331974727 x 3969050863 = INT64_MAX exactly */
                   exact[4] = {5, 7, 331974727u, 3969050863u}, six[6] = {1, 1, 1, 1, 1, 1};
    const int64_t given[3] = {40, 0, 2};
    const int64_t row_st[3] = {15, 5, 1}, big_st[3] = {0, UINT32_MAX, 1},
                  edge_st[3] = {1ll << 62, 1ll << 31, 1},
                  exact_st[4] = {INT64_MAX, INT64_MAX / 7, 3969050863ll, 1}, over_st[5] = {0, 0, 1ll << 62, 1ll << 31, 1};
    struct {
        uint64_t off;
        unsigned nd;
        const uint32_t *shape;
        const int64_t *strides, *want;
        bool valid;
    } cases[] = {
        {3, 3, row, NULL, row_st, true},       /* row-major */
        {1, 3, row, given, given, true},       /* given strides, a broadcast among them */
        {0, 0, NULL, NULL, NULL, true},        /* a scalar view */
        {0, 3, big, NULL, big_st, false},      /* (2^32 - 1)^2 does not fit int64 (strides[0] never set) */
        {0, 3, edge, NULL, edge_st, true},     /* 2^62 does */
        {0, 4, exact, NULL, exact_st, true},   /* and INT64_MAX itself */
        {0, 5, over, NULL, over_st, false},    /* 2^63 does not */
        {0, 2, NULL, NULL, NULL, false},       /* no shape */
        {0, 6, six, NULL, NULL, false},        /* too many dimensions */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hbg_tensor want = want_view(&t, cases[k].off, cases[k].nd, cases[k].shape, cases[k].want, cases[k].valid);
        hbg_tensor v = hbg_tensor_view(&t, cases[k].off, cases[k].nd, cases[k].shape, cases[k].strides);
        assert_memory_equal(&v, &want, sizeof want);
        memset(&v, 0xa5, sizeof v); /* every byte written */
        hbg_tensor_view_into(&v, &t, cases[k].off, cases[k].nd, cases[k].shape, cases[k].strides);
        assert_memory_equal(&v, &want, sizeof want);
    }
    hbg_tensor none = hbg_tensor_view(NULL, 5, 1, row, NULL);
    hbg_tensor zero;
    memset(&zero, 0, sizeof zero);
    zero.dtype = HBG_DTYPE_COUNT;
    assert_memory_equal(&none, &zero, sizeof zero);
    memset(&none, 0xa5, sizeof none);
    hbg_tensor_view_into(&none, NULL, 5, 1, row, NULL);
    assert_memory_equal(&none, &zero, sizeof zero);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* hbg_tensor_view_into, computed in registers, against hbg_tensor_view
 * over random arguments: dimensions at the edges of uint32 (row-major
 * strides that overflow int64 at every position), given strides of
 * either sign, any dtype byte and creator, more dimensions than allowed,
 * no shape, no tensor. */
static void view_into_matches_view(void **state)
{
    (void)state;
    static const uint32_t dims[] = {0, 1, 2, 3, 7, 64, 1000, 1u << 16, 1u << 31, UINT32_MAX - 1, UINT32_MAX};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int n = 0; n < 200000; n++) {
        hbg_tensor t;
        unsigned char *tb = (unsigned char *)&t;
        for (size_t i = 0; i < sizeof t; i++)
            tb[i] = (unsigned char)xorshift(&seed);
        uint64_t r = xorshift(&seed);
        unsigned nd = (unsigned)(r % 7);
        uint32_t shape[6];
        int64_t strides[6];
        for (unsigned d = 0; d < 6; d++) {
            uint64_t x = xorshift(&seed);
            shape[d] = x & 1 ? dims[(x >> 1) % (sizeof dims / sizeof dims[0])] : (uint32_t)(x >> 8);
            strides[d] = (int64_t)xorshift(&seed) >> (x >> 58);
        }
        uint64_t off = xorshift(&seed);
        bool no_t = (r >> 8) % 50 == 0, no_shape = (r >> 16) % 50 == 0, given = (r >> 24) & 1;
        const hbg_tensor *tp = no_t ? NULL : &t;
        const uint32_t *sp = no_shape ? NULL : shape;
        const int64_t *stp = given ? strides : NULL;
        hbg_tensor want = hbg_tensor_view(tp, off, nd, sp, stp), got;
        memset(&got, (int)(r >> 32) & 0xff, sizeof got);
        hbg_tensor_view_into(&got, tp, off, nd, sp, stp);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("case %d: nd %u, shape %s, strides %s, tensor %s: the two views differ", n, nd,
                     sp ? "given" : "NULL", stp ? "given" : "NULL", tp ? "given" : "NULL");
    }
}

/* The byte range as it was computed before it was summed in 128 bits:
 * every product and partial sum checked. The reference the fast one is
 * held to. */
static bool checked_range(const hbg_tensor *t, uint64_t *lo, uint64_t *hi)
{
    if (t->ndim > HBG_MAX_DIMS)
        return false;
    uint64_t es = hbg_dtype_size((hbg_dtype)t->dtype);
    if (!es)
        return false;
    uint64_t last = t->offset;
    for (unsigned i = 0; i < t->ndim; i++) {
        uint64_t step;
        if (t->shape[i] == 0 || t->strides[i] < 0 ||
            __builtin_mul_overflow((uint64_t)(t->shape[i] - 1), (uint64_t)t->strides[i], &step) ||
            __builtin_add_overflow(last, step, &last))
            return false;
    }
    uint64_t b0, b1;
    if (__builtin_mul_overflow(t->offset, es, &b0) || __builtin_add_overflow(last, 1, &last) ||
        __builtin_mul_overflow(last, es, &b1))
        return false;
    *lo = b0, *hi = b1;
    return true;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Random views, many near the 64-bit edges (huge offsets, strides and
 * shapes, negative strides, zero extents, bad dtypes and ranks): the
 * inline range and the public one agree with the checked reference on
 * every one, and a view of no dimensions spans one element of its dtype. */
static void the_range_against_the_checked_reference(void **state)
{
    (void)state;
    for (int dt = 0; dt <= HBG_DTYPE_COUNT; dt++) {
        hbg_tensor t = {.dtype = (uint8_t)dt, .ndim = 0};
        uint64_t lo = 0, hi = 0;
        bool ok = hbg__byte_range(&t, &lo, &hi);
        assert_int_equal(ok, dt < HBG_DTYPE_COUNT);
        if (ok)
            assert_int_equal(hi, hbg_dtype_size((hbg_dtype)dt));
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    static const uint64_t big[] = {0, 1, 2, 7, 1000, 1ull << 31, (1ull << 32) - 1, 1ull << 40, 1ull << 61,
                                   (1ull << 62) - 1, 1ull << 63, UINT64_MAX / 8, UINT64_MAX / 2, UINT64_MAX - 1,
                                   UINT64_MAX};
    int agreed_ok = 0, agreed_bad = 0;
    for (int n = 0; n < 200000; n++) {
        hbg_tensor t;
        memset(&t, 0, sizeof t);
        t.ndim = (uint8_t)(rnd(&s) % 8 == 0 ? HBG_MAX_DIMS + rnd(&s) % 3 : rnd(&s) % (HBG_MAX_DIMS + 1));
        t.dtype = (uint8_t)(rnd(&s) % 16 == 0 ? HBG_DTYPE_COUNT : rnd(&s) % HBG_DTYPE_COUNT);
        bool edge = rnd(&s) % 2;
        t.offset = edge ? big[rnd(&s) % (sizeof big / sizeof big[0])] : rnd(&s) % 4096;
        for (unsigned d = 0; d < HBG_MAX_DIMS; d++) {
            t.shape[d] = (uint32_t)(edge && rnd(&s) % 3 == 0 ? UINT32_MAX - rnd(&s) % 2 : rnd(&s) % 70);
            t.strides[d] = edge && rnd(&s) % 3 == 0 ? (int64_t)big[rnd(&s) % (sizeof big / sizeof big[0])]
                                                    : (int64_t)(rnd(&s) % 5000) - (rnd(&s) % 50 == 0 ? 2500 : 0);
        }
        uint64_t lo1 = 1, hi1 = 1, lo2 = 2, hi2 = 2, lo3 = 3, hi3 = 3;
        bool a = checked_range(&t, &lo1, &hi1);
        bool b = hbg__byte_range(&t, &lo2, &hi2);
        bool c = hbg_tensor_byte_range(&t, &lo3, &hi3);
        assert_int_equal(a, b);
        assert_int_equal(a, c);
        if (a) {
            assert_int_equal(lo1, lo2);
            assert_int_equal(hi1, hi2);
            assert_int_equal(lo1, lo3);
            assert_int_equal(hi1, hi3);
            agreed_ok++;
        } else {
            agreed_bad++;
        }
    }
    /* both outcomes were exercised in earnest */
    assert_true(agreed_ok > 10000 && agreed_bad > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtypes),
        cmocka_unit_test(constructors),
        cmocka_unit_test(views),
        cmocka_unit_test(empty_and_overflow),
        cmocka_unit_test(view_bytes),
        cmocka_unit_test(view_into_matches_view),
        cmocka_unit_test(the_range_against_the_checked_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
