/* Tensor helpers: dtype facts, constructors, numel, byte ranges, bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/tensor.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtypes),
        cmocka_unit_test(constructors),
        cmocka_unit_test(views),
        cmocka_unit_test(empty_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
