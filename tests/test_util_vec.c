/* vec_grow alone: the capacities it picks, what it keeps, and the sizes it
 * refuses without touching the array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "util/vec.h"

static void test_first_and_doubling(void **st)
{
    (void)st;
    int *v = NULL;
    size_t cap = 0;
    assert_true(vec_grow((void **)&v, &cap, 0, sizeof *v));
    assert_null(v); /* nothing needed, nothing allocated */
    assert_int_equal(cap, 0);
    assert_true(vec_grow((void **)&v, &cap, 1, sizeof *v));
    assert_non_null(v);
    assert_int_equal(cap, 16);
    for (int i = 0; i < 16; i++)
        v[i] = i * 3;
    int *before = v;
    assert_true(vec_grow((void **)&v, &cap, 16, sizeof *v));
    assert_ptr_equal(v, before); /* room already there: unchanged */
    assert_int_equal(cap, 16);
    assert_true(vec_grow((void **)&v, &cap, 17, sizeof *v));
    assert_int_equal(cap, 32);
    assert_true(vec_grow((void **)&v, &cap, 100, sizeof *v));
    assert_int_equal(cap, 128); /* doubled as often as it takes */
    for (int i = 0; i < 16; i++)
        assert_int_equal(v[i], i * 3);
    free(v);
}

static void test_own_first_capacity(void **st)
{
    (void)st;
    char *b = malloc(10);
    size_t cap = 10;
    assert_non_null(b);
    b[9] = 'x';
    assert_true(vec_grow((void **)&b, &cap, 11, 1));
    assert_int_equal(cap, 20); /* a caller's own first size doubles too */
    assert_int_equal(b[9], 'x');
    free(b);
}

static void test_refused(void **st)
{
    (void)st;
    long *v = NULL;
    size_t cap = 0;
    assert_true(vec_grow((void **)&v, &cap, 5, sizeof *v));
    v[4] = 77;
    long *before = v;
    /* the doubling would pass SIZE_MAX elements */
    assert_false(vec_grow((void **)&v, &cap, SIZE_MAX, sizeof *v));
    /* the elements fit a size_t, their bytes do not */
    assert_false(vec_grow((void **)&v, &cap, SIZE_MAX / 4 + 1, sizeof *v));
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 16);
    assert_int_equal(v[4], 77);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_and_doubling),
        cmocka_unit_test(test_own_first_capacity),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
