/* The log tools' hash map alone: what a put makes, what a get finds, when
 * the table grows, keys that share a first slot, keys the words do not
 * decide alone, and a refused allocation that leaves the map as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "tools/hmap.h"

static void test_empty(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 2);
    assert_int_equal(m.cap, 0);
    assert_int_equal(m.n, 0);
    assert_int_equal(hmap_get2(&m, 1, 2), 0);
    assert_int_equal(m.cap, 0); /* a get allocates nothing */
    hmap_free(&m);
    hmap_free(&m);
    assert_int_equal(m.kw, 2);
}

static void test_insert_find(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 2);
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t *s = hmap_put2(&m, i, 1000 - i);
        assert_non_null(s);
        assert_int_equal(*s, 0);
        *s = i + 1;
    }
    assert_int_equal(m.n, 1000);
    assert_int_equal(m.cap, 2048);
    for (uint32_t i = 0; i < 1000; i++) {
        assert_int_equal(hmap_get2(&m, i, 1000 - i), i + 1);
        assert_int_equal(hmap_get2(&m, 1000 - i, i + 2000), 0);
    }
    /* a present key's slot is its own: no new entry */
    uint32_t *s = hmap_put2(&m, 7, 993);
    assert_non_null(s);
    assert_int_equal(*s, 8);
    assert_int_equal(m.n, 1000);
    /* the words are the key, in order */
    assert_int_equal(hmap_get2(&m, 0, 1000), 1);
    assert_int_equal(hmap_get2(&m, 1000, 0), 0);
    hmap_free(&m);
    assert_int_equal(m.cap, 0);
    assert_int_equal(hmap_get2(&m, 7, 993), 0);
}

static void test_three_words(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 3);
    const uint64_t a[3] = {0, 42, 0}, b[3] = {1, 42, 0}, c[3] = {1, 42, 5};
    *hmap_put(&m, a) = 1;
    *hmap_put(&m, b) = 2;
    *hmap_put(&m, c) = 3;
    assert_int_equal(hmap_get(&m, a), 1);
    assert_int_equal(hmap_get(&m, b), 2);
    assert_int_equal(hmap_get(&m, c), 3);
    const uint64_t d[3] = {0, 42, 5};
    assert_int_equal(hmap_get(&m, d), 0);
    assert_int_equal(m.n, 3);
    hmap_free(&m);
}

static void test_grow(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 1);
    for (uint64_t k = 0; k < 32; k++)
        *hmap_put(&m, &k) = (uint32_t)(k + 1);
    /* at most half full: 32 entries fit the first table of 64 slots ... */
    assert_int_equal(m.cap, HMAP_MINCAP);
    assert_int_equal(m.n, 32);
    uint64_t k = 32;
    *hmap_put(&m, &k) = 33;
    /* ... the 33rd doubles it, and every entry moves with its value */
    assert_int_equal(m.cap, 2 * HMAP_MINCAP);
    assert_int_equal(m.n, 33);
    for (k = 0; k <= 32; k++)
        assert_int_equal(hmap_get(&m, &k), k + 1);
    /* reserving room it already has changes nothing; more doubles it */
    assert_true(hmap_reserve(&m, 64));
    assert_int_equal(m.cap, 128);
    assert_true(hmap_reserve(&m, 65));
    assert_int_equal(m.cap, 256);
    for (k = 0; k <= 32; k++)
        assert_int_equal(hmap_get(&m, &k), k + 1);
    hmap_free(&m);
}

static void test_slot_left_empty(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 1);
    uint64_t k = 5;
    uint32_t *s = hmap_put(&m, &k);
    assert_non_null(s);
    assert_int_equal(m.n, 1); /* counted until the table is next rebuilt */
    assert_int_equal(hmap_get(&m, &k), 0);
    assert_true(hmap_reserve(&m, 100));
    assert_int_equal(m.n, 0);
    assert_int_equal(hmap_get(&m, &k), 0);
    hmap_free(&m);
}

/* Keys that all start at the table's last slot: the probe wraps to the
 * front, and every one is found, before and after a grow. */
static void test_collisions(void **st)
{
    (void)st;
    uint64_t keys[24];
    size_t n = 0;
    for (uint64_t k = 1; n < 24; k++)
        if ((hmap_hash(&k, 1) & (HMAP_MINCAP - 1)) == HMAP_MINCAP - 1)
            keys[n++] = k;
    uint64_t other = keys[23];
    hmap m;
    hmap_init(&m, 1);
    for (size_t i = 0; i < 23; i++)
        *hmap_put(&m, &keys[i]) = (uint32_t)(100 + i);
    assert_int_equal(m.cap, HMAP_MINCAP);
    assert_int_equal(m.n, 23);
    /* the last slot and the first 22: one run */
    assert_int_not_equal(m.val[HMAP_MINCAP - 1], 0);
    assert_int_not_equal(m.val[21], 0);
    assert_int_equal(m.val[22], 0);
    for (size_t i = 0; i < 23; i++)
        assert_int_equal(hmap_get(&m, &keys[i]), 100 + i);
    assert_int_equal(hmap_get(&m, &other), 0); /* its probe ends at slot 22 */
    assert_true(hmap_reserve(&m, 40));
    assert_int_equal(m.cap, 2 * HMAP_MINCAP);
    for (size_t i = 0; i < 23; i++)
        assert_int_equal(hmap_get(&m, &keys[i]), 100 + i);
    assert_int_equal(hmap_get(&m, &other), 0);
    hmap_free(&m);
}

/* Texts keyed by (a fake hash, length): the same words, told apart by eq. */
static const char *const texts[] = {"abc", "abd", "xyz"};

typedef struct find_text {
    const char *t;
} find_text;

static bool eq_text(void *ctx, uint32_t val)
{
    return strcmp(texts[val - 1], ((find_text *)ctx)->t) == 0;
}

/* Keys that differ only in their high bits (multiples of 2^48, a hostile
 * pid) still spread over the low bits the index is taken from: 4096 such
 * keys fill about as many of 4096 buckets as random ones would (1 - 1/e,
 * 2589), not the handful that made their probes quadratic. */
static void test_high_bit_keys_spread(void **st)
{
    (void)st;
    for (unsigned kw = 1; kw <= 3; kw++) {
        static bool seen[4096];
        memset(seen, 0, sizeof seen);
        size_t used = 0;
        for (uint64_t k = 0; k < 4096; k++) {
            uint64_t key[3] = {k << 48, (k * 7) << 52, 0};
            size_t b = (size_t)hmap_hash(key, kw) & 4095;
            used += !seen[b];
            seen[b] = true;
        }
        if (used < 2400)
            fail_msg("kw %u: %zu of 4096 buckets", kw, used);
    }
}

static void test_put_eq(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 2);
    const uint64_t words[2] = {7, 3};
    for (uint32_t i = 0; i < 3; i++) {
        find_text f = {texts[i]};
        uint32_t *s = hmap_put_eq(&m, words, eq_text, &f);
        assert_non_null(s);
        assert_int_equal(*s, 0);
        *s = i + 1;
    }
    assert_int_equal(m.n, 3);
    for (uint32_t i = 0; i < 3; i++) {
        find_text f = {texts[i]};
        uint32_t *s = hmap_put_eq(&m, words, eq_text, &f);
        assert_non_null(s);
        assert_int_equal(*s, i + 1);
    }
    find_text f = {"abe"};
    uint32_t *s = hmap_put_eq(&m, words, eq_text, &f);
    assert_non_null(s);
    assert_int_equal(*s, 0);
    assert_int_equal(m.n, 4);
    /* without eq the words decide: the first of them */
    assert_int_equal(hmap_get(&m, words), 1);
    hmap_free(&m);
}

/* A table that cannot be had (more than the address space) is refused,
 * and the map goes on as it was. */
static void test_out_of_memory(void **st)
{
    (void)st;
    hmap m;
    hmap_init(&m, 2);
    for (uint32_t i = 0; i < 10; i++)
        *hmap_put2(&m, i, i) = i + 1;
    assert_false(hmap_reserve(&m, (size_t)1 << 45));
    assert_false(hmap_reserve(&m, SIZE_MAX / 2));
    assert_false(hmap_reserve(&m, SIZE_MAX));
    assert_int_equal(m.cap, HMAP_MINCAP);
    assert_int_equal(m.n, 10);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(hmap_get2(&m, i, i), i + 1);
    hmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty), cmocka_unit_test(test_high_bit_keys_spread),       cmocka_unit_test(test_insert_find),
        cmocka_unit_test(test_three_words), cmocka_unit_test(test_grow),
        cmocka_unit_test(test_slot_left_empty), cmocka_unit_test(test_collisions),
        cmocka_unit_test(test_put_eq),      cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
