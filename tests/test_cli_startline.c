/* The start line of hbg run's ranks (src/cli/startline.c), with forked
 * processes as the ranks: nobody passes before the last arrives, a rank
 * that only arrives (a failed set-up) releases its peers, a missing rank
 * holds them for the timeout and no longer, and a rank is counted once
 * (and asked after). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/startline.h"
#include "hbg/trace.h"

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Three ranks arriving 0, 30 and 60 ms apart: each passes only after the
 * last has arrived. */
static void nobody_passes_before_the_last_arrives(void **state)
{
    (void)state;
    run_startline *s = startline_create(3);
    assert_non_null(s);
    uint64_t *passed = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(passed != MAP_FAILED);
    pid_t kid[2];
    for (int k = 0; k < 2; k++) {
        kid[k] = fork();
        assert_true(kid[k] >= 0);
        if (kid[k] == 0) {
            nap_ms(30 * k);
            bool ok = startline_wait(s, (uint32_t)k, 10ull * 1000000000ull);
            passed[k] = hbg_mono_ns();
            _exit(ok ? 0 : 1);
        }
    }
    nap_ms(60);
    uint64_t last = hbg_mono_ns();
    assert_true(startline_wait(s, 2, 10ull * 1000000000ull));
    for (int k = 0; k < 2; k++) {
        int ws;
        assert_int_equal(waitpid(kid[k], &ws, 0), kid[k]);
        assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        assert_true(passed[k] >= last);
    }
    munmap(passed, 4096);
    startline_destroy(s);
}

/* A rank that cannot start (it only arrives) does not hold its peer. */
static void a_rank_that_only_arrives_releases_its_peer(void **state)
{
    (void)state;
    run_startline *s = startline_create(2);
    assert_non_null(s);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        nap_ms(20);
        startline_arrive(s, 1);
        _exit(0);
    }
    uint64_t t0 = hbg_mono_ns();
    assert_true(startline_wait(s, 0, 10ull * 1000000000ull));
    assert_true(hbg_mono_ns() - t0 < 5000000000ull);
    int ws;
    assert_int_equal(waitpid(kid, &ws, 0), kid);
    startline_destroy(s);
}

/* A rank that never comes holds its peer for the timeout, then lets it go. */
static void a_missing_rank_holds_its_peer_for_the_timeout(void **state)
{
    (void)state;
    run_startline *s = startline_create(2);
    assert_non_null(s);
    uint64_t t0 = hbg_mono_ns();
    assert_false(startline_wait(s, 0, 50000000ull));
    uint64_t waited = hbg_mono_ns() - t0;
    assert_true(waited >= 50000000ull);
    assert_true(waited < 5000000000ull);
    startline_destroy(s);
    /* no line (one rank, or no shared page): no wait */
    assert_true(startline_wait(NULL, 0, 0));
    startline_arrive(NULL, 0);
}

/* A rank said to arrive twice (by itself, then by the parent that reaped
 * it) is counted once: its peers still wait for the rest. Ranks past the
 * line's count are ignored. */
static void a_rank_is_counted_once(void **state)
{
    (void)state;
    run_startline *s = startline_create(3);
    assert_non_null(s);
    startline_arrive(s, 1);
    startline_arrive(s, 1);
    startline_arrive(s, 7);
    assert_true(startline_arrived(s, 1));
    assert_false(startline_arrived(s, 0));
    assert_false(startline_wait(s, 0, 30000000ull)); /* rank 2 missing */
    assert_true(startline_arrived(s, 0));  /* it arrived to wait */
    assert_false(startline_arrived(s, 2));
    assert_true(startline_arrived(s, 7));  /* past the count: nobody waits for it */
    startline_arrive(s, 2);
    assert_true(startline_wait(s, 0, 0));
    assert_true(startline_arrived(NULL, 0)); /* no line */
    startline_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nobody_passes_before_the_last_arrives),
        cmocka_unit_test(a_rank_that_only_arrives_releases_its_peer),
        cmocka_unit_test(a_missing_rank_holds_its_peer_for_the_timeout),
        cmocka_unit_test(a_rank_is_counted_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
