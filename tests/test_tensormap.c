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
#define NBUF 3

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

static hbg_tensor random_view(uint64_t *s, uint64_t addr)
{
    /* a 64 x 64 f32 matrix; half the time a row range, half a tile */
    uint32_t shape[2] = {64, 64};
    hbg_tensor base = hbg_tensor_at(addr, HBG_F32, 2, shape);
    uint32_t r0 = (uint32_t)(rnd(s) % 64), c0 = (uint32_t)(rnd(s) % 64);
    uint32_t nr = 1 + (uint32_t)(rnd(s) % (rnd(s) % 4 == 0 ? 64 - r0 : (r0 < 60 ? 4 : 64 - r0)));
    uint32_t nc = rnd(s) % 2 ? 64 : 1 + (uint32_t)(rnd(s) % (64 - c0));
    if (nc == 64)
        c0 = 0;
    uint32_t vs[2] = {nr, nc};
    return hbg_tensor_view(&base, (uint64_t)r0 * 64 + c0, 2, vs, base.strides);
}

static void random_against_reference(void **state)
{
    (void)state;
    hbg__tmap m;
    assert_int_equal(hbg__tmap_init(&m, 64, OPS), HBG_OK);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 3; round++) {
        hbg__tmap_reset(&m);
        nref = 0;
        for (uint32_t op = 0; op < OPS; op++) {
            uint64_t addr = 0x100000ull * (1 + rnd(&seed) % NBUF);
            hbg_tensor v = random_view(&seed, addr);
            uint64_t lo, hi;
            assert_true(hbg_tensor_byte_range(&v, &lo, &hi));
            memset(got, 0, sizeof got);
            memset(want, 0, sizeof want);
            assert_int_equal(hbg__tmap_readers_deps(&m, &v, lo, hi, mark, NULL), HBG_OK);
            for (uint32_t i = 0; i < nref; i++)
                if (ref[i].live && ref[i].view.addr == addr &&
                    hbg__views_overlap(&v, lo, hi, &ref[i].view, ref[i].lo, ref[i].hi))
                    want[ref[i].writer] = 1;
            assert_memory_equal(got, want, op + 1);
            if (rnd(&seed) % 3 == 0)
                continue; /* a read only */
            bool retire = rnd(&seed) % 2;
            views[op] = v;
            assert_int_equal(hbg__tmap_write(&m, &views[op], lo, hi, op, retire), HBG_OK);
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
        st = hbg__tmap_write(&m, &v[i], lo, hi, (uint32_t)i, false);
    }
    assert_int_equal(st, HBG_E_POOL_EXHAUSTED);
    assert_int_equal(i, 9);
    hbg__tmap_reset(&m);
    hbg__tmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(pool_exhaustion_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
