/* The kernel table: registration rules and lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/kernel.h"
#include "hbg/orch.h"

static int k_one(const hbg_kernel_args *a)
{
    (void)a;
    return 1;
}

static int k_two(const hbg_kernel_args *a)
{
    (void)a;
    return 2;
}

static void register_and_look_up(void **state)
{
    (void)state;
    hbg_kernel_table *kt = NULL;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    char name[16] = "matmul";
    assert_int_equal(hbg_kernel_register(kt, 0, name, k_one), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, HBG_MAX_KERNELS - 1, "last", k_two), HBG_OK);
    strcpy(name, "clobbered"); /* the table keeps its own copy */
    assert_ptr_equal(hbg_kernel_lookup(kt, 0), k_one);
    assert_string_equal(hbg_kernel_name(kt, 0), "matmul");
    assert_ptr_equal(hbg_kernel_lookup(kt, HBG_MAX_KERNELS - 1), k_two);
    assert_string_equal(hbg_kernel_name(kt, HBG_MAX_KERNELS - 1), "last");
    assert_null(hbg_kernel_lookup(kt, 1));
    assert_null(hbg_kernel_name(kt, 1));
    assert_int_equal(hbg_kernel_register(kt, 5, NULL, k_one), HBG_OK);
    assert_string_equal(hbg_kernel_name(kt, 5), "");
    hbg_kernel_table_destroy(kt);
}

static void refusals(void **state)
{
    (void)state;
    hbg_kernel_table *kt = NULL;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 3, "a", k_one), HBG_OK);
    /* Twice under one id: the first registration stays. */
    assert_int_equal(hbg_kernel_register(kt, 3, "b", k_two), HBG_E_INVAL);
    assert_ptr_equal(hbg_kernel_lookup(kt, 3), k_one);
    assert_string_equal(hbg_kernel_name(kt, 3), "a");
    assert_int_equal(hbg_kernel_register(kt, HBG_MAX_KERNELS, "big", k_one), HBG_E_INVAL);
    assert_int_equal(hbg_kernel_register(kt, 0xffff, "none", k_one), HBG_E_INVAL);
    assert_int_equal(hbg_kernel_register(kt, 4, "nofn", NULL), HBG_E_INVAL);
    assert_int_equal(hbg_kernel_register(NULL, 4, "nokt", k_one), HBG_E_INVAL);
    assert_null(hbg_kernel_lookup(kt, HBG_MAX_KERNELS));
    assert_null(hbg_kernel_lookup(NULL, 3));
    assert_int_equal(hbg_kernel_table_create(NULL), HBG_E_INVAL);
    hbg_kernel_table_destroy(kt);
    hbg_kernel_table_destroy(NULL);
}

/* A table registers in order and stops at the first refusal. */
static void register_a_table(void **state)
{
    (void)state;
    hbg_kernel_table *kt = NULL;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    static const hbg_kernel_def ok[] = {{1, "one", k_one}, {2, "two", k_two}};
    assert_int_equal(hbg_kernel_register_all(kt, ok, 2), HBG_OK);
    assert_ptr_equal(hbg_kernel_lookup(kt, 2), k_two);
    assert_string_equal(hbg_kernel_name(kt, 1), "one");
    static const hbg_kernel_def bad[] = {{3, "three", k_one}, {1, "again", k_two}, {4, "four", k_one}};
    assert_int_equal(hbg_kernel_register_all(kt, bad, 3), HBG_E_INVAL);
    assert_ptr_equal(hbg_kernel_lookup(kt, 3), k_one);
    assert_ptr_equal(hbg_kernel_lookup(kt, 1), k_one);
    assert_null(hbg_kernel_lookup(kt, 4));
    assert_int_equal(hbg_kernel_register_all(kt, NULL, 0), HBG_OK);
    hbg_kernel_table_destroy(kt);
}

/* Float and double scalars: written by hbg_scalar_f32 / _f64, read back
 * by the kernel with hbg_kernel_f32 / _f64, bit for bit. */
static void float_scalars(void **state)
{
    (void)state;
    assert_true(hbg_scalar_f32(1.0f) == 0x3f800000u);
    assert_true(hbg_scalar_f32(-2.5f) == 0xc0200000u); /* high 32 bits zero */
    assert_true(hbg_scalar_f64(1.0) == 0x3ff0000000000000ull);
    uint64_t sc[] = {hbg_scalar_f32(0.1f), hbg_scalar_f64(-1e300), hbg_scalar_f32(-0.0f)};
    hbg_kernel_args a = {.nscalars = 3, .scalars = sc};
    assert_true(hbg_kernel_f32(&a, 0) == 0.1f);
    assert_true(hbg_kernel_f64(&a, 1) == -1e300);
    assert_true(hbg_kernel_f32(&a, 2) == 0.0f && signbit(hbg_kernel_f32(&a, 2)));
    /* an index past the scalars reads as NaN, not past the array */
    assert_true(isnan(hbg_kernel_f32(&a, 3)));
    assert_true(isnan(hbg_kernel_f64(&a, 3)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(register_and_look_up),
        cmocka_unit_test(refusals),
        cmocka_unit_test(register_a_table),
        cmocka_unit_test(float_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
