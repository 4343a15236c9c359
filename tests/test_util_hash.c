/* The content hashes: exact values for fixed inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

/* The package's own portable code, inlined here with no vector unit: an
 * independent reference for whichever path the library dispatches to. */
#define XXH_INLINE_ALL
#define XXH_VECTOR 0 /* XXH_SCALAR */
#include <xxhash.h>

#include "util/hash.h"

#define N 131144 /* the size of a qwen Definition image */

static unsigned char buf[N], moved[N + 1];

static void fill(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (unsigned char)(x >> 56);
    }
}

/* One length in each of XXH3's paths: empty, 1-3, 4-8, 9-16, 17-128,
 * 129-240, and the long loop (whole blocks, a partial block, a tail). */
static const struct {
    size_t n;
    uint64_t h;
} image_pins[] = {
    {0, 0x2d06800538d394c2ull}, /* XXH3-64 of no input, as the spec gives it */
    {3, 0x35c59c63f67c71a2ull},    {8, 0x065d72eaa49e406bull},   {16, 0x0c9057c1b3ef2e34ull},
    {100, 0xc4a7a758a227b1d7ull},  {200, 0xa7e82a3e6af888d1ull}, {240, 0xec4b87ad468105d4ull},
    {241, 0x6f7bef3ad1555088ull},  {1000, 0x3e9f8e0b11f47a63ull}, {1024, 0xc768e7d19aabf178ull},
    {4103, 0x5546c1a6d4ecf684ull}, {N, 0xad90c263fc4764cbull},
};

static void image_hash_is_xxh3(void **state)
{
    (void)state;
    fill();
    for (size_t i = 0; i < sizeof image_pins / sizeof image_pins[0]; i++) {
        size_t n = image_pins[i].n;
        assert_true(hbg__image_hash(buf, n) == image_pins[i].h);
        assert_true(XXH3_64bits(buf, n) == image_pins[i].h);
        /* The value does not depend on where the bytes lie. */
        memcpy(moved + 1, buf, n);
        assert_true(hbg__image_hash(moved + 1, n) == image_pins[i].h);
    }
}

/* Every length up to 2 KB against the reference: the vector paths switch
 * on length (stripes, blocks, the last stripe) and this covers each. */
static void image_hash_matches_reference(void **state)
{
    (void)state;
    fill();
    for (size_t n = 0; n <= 2048; n++)
        assert_true(hbg__image_hash(buf, n) == XXH3_64bits(buf, n));
    for (size_t n = N - 1100; n <= N; n += 37)
        assert_true(hbg__image_hash(buf, n) == XXH3_64bits(buf, n));
}

/* hbg__hash64 names a callable in every log (hid=): its values stay those
 * that older builds wrote, so logs of either compare. */
static void text_hash_unchanged(void **state)
{
    (void)state;
    fill();
    assert_true(hbg__hash64("qwen", 4) == 0x11fe127075f5bc00ull);
    assert_true(hbg__hash64("", 0) == 0x7c1adb6743b89d59ull);
    assert_true(hbg__hash64(buf, N) == 0x431eb1145635e2cfull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(image_hash_is_xxh3),
        cmocka_unit_test(image_hash_matches_reference),
        cmocka_unit_test(text_hash_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
