/* Reserved address space: which pages a reservation commits at once (the
 * hot prefix) and which it leaves to their first touch, read back from the
 * kernel with mincore(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/resident.h"
#include "util/reserve.h"

static size_t PAGE;

/* How many of the n pages from p are resident. */
static size_t resident(void *p, size_t n)
{
    return ts_resident((uintptr_t)p, (uintptr_t)p + n * PAGE, NULL);
}

static void hot_prefix_is_resident_and_the_rest_is_not(void **st)
{
    (void)st;
    size_t bytes = (size_t)4 << 20, hot = (size_t)1 << 20;
    unsigned char *p = hbg__reserve_hot(bytes, hot);
    assert_non_null(p);
    assert_int_equal(resident(p, hot / PAGE), hot / PAGE);
    assert_int_equal(resident(p + hot, (bytes - hot) / PAGE), 0);
    /* zeroed, and writable past the prefix */
    for (size_t i = 0; i < bytes; i += PAGE)
        assert_int_equal(p[i], 0);
    p[bytes - 1] = 7;
    hbg__unreserve(p, bytes);
}

static void plain_reserve_commits_its_default_prefix(void **st)
{
    (void)st;
    size_t bytes = (size_t)2 << 20;
    unsigned char *p = hbg__reserve(bytes);
    assert_non_null(p);
    assert_int_equal(resident(p, HBG_RESERVE_HOT / PAGE), HBG_RESERVE_HOT / PAGE);
    assert_int_equal(resident(p + HBG_RESERVE_HOT, (bytes - HBG_RESERVE_HOT) / PAGE), 0);
    hbg__unreserve(p, bytes);
    /* A reservation smaller than its prefix commits itself only. */
    p = hbg__reserve_hot(3 * PAGE, (size_t)1 << 20);
    assert_non_null(p);
    assert_int_equal(resident(p, 3), 3);
    hbg__unreserve(p, 3 * PAGE);
}

static void commit_makes_a_lazy_mapping_resident(void **st)
{
    (void)st;
    size_t n = 64;
    unsigned char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    assert_int_equal(resident(p, n), 0);
    memset(p + 5 * PAGE, 9, 10); /* data already there survives */
    hbg__commit(p + PAGE, (n - 2) * PAGE);
    assert_int_equal(resident(p, 1), 0);
    assert_int_equal(resident(p + PAGE, n - 2), n - 2);
    assert_int_equal(resident(p + (n - 1) * PAGE, 1), 0);
    assert_int_equal(p[5 * PAGE], 9);
    assert_int_equal(p[5 * PAGE + 9], 9);
    munmap(p, n * PAGE);
}

/* A range that starts and ends inside pages (a heap block): every page
 * it touches resident, its last page too (whose only bytes in the range
 * are its first ten), the pages beside it not, and no byte changed. */
static void commit_of_an_unaligned_range(void **st)
{
    (void)st;
    size_t n = 16;
    unsigned char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    p[2 * PAGE + 99] = 5, p[2 * PAGE + 100] = 6; /* page 2 resident, one byte in the range */
    hbg__commit(p + 2 * PAGE + 100, 6 * PAGE - 100 + 10); /* [2.100, 8.10): pages 2 .. 8 */
    assert_int_equal(resident(p, 2), 0);
    assert_int_equal(resident(p + 2 * PAGE, 7), 7);
    assert_int_equal(resident(p + 9 * PAGE, n - 9), 0);
    assert_int_equal(p[2 * PAGE + 99], 5);
    assert_int_equal(p[2 * PAGE + 100], 6);
    for (size_t i = 2 * PAGE + 101; i < 9 * PAGE; i++)
        if (p[i])
            fail_msg("byte %zu changed to %d", i, p[i]);
    /* One byte, at the end of a page: its page only. */
    hbg__commit(p + 11 * PAGE - 1, 1);
    assert_int_equal(resident(p + 10 * PAGE, 1), 1);
    assert_int_equal(resident(p + 11 * PAGE, 1), 0);
    hbg__commit(p, 0); /* nothing */
    assert_int_equal(resident(p, 1), 0);
    munmap(p, n * PAGE);
}

int main(void)
{
    PAGE = (size_t)sysconf(_SC_PAGESIZE);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hot_prefix_is_resident_and_the_rest_is_not),
        cmocka_unit_test(plain_reserve_commits_its_default_prefix),
        cmocka_unit_test(commit_makes_a_lazy_mapping_resident),
        cmocka_unit_test(commit_of_an_unaligned_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
