/* Cross-rank services: two forked processes exchange data through their
 * windows; a wait nobody answers ends with HBG_E_PEER_TIMEOUT; epoch tags
 * keep a reused counter slot from answering for an older epoch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/xrank.h"

#define N 1000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int child_status(pid_t pid)
{
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    return WEXITSTATUS(ws);
}

/* Rank 1 (the child) pushes N words into rank 0's window, signals, then
 * waits for rank 0's answer: each word plus one, in its own window. Many
 * rounds, so an ordering bug between the copy and the signal has room. */
static int rank1(hbg_xrank *x)
{
    uint32_t *to0 = hbg_xrank_window(x, 0), *mine = hbg_xrank_window(x, 1);
    for (uint32_t round = 0; round < 50; round++) {
        uint64_t ep = 2 * round;
        for (uint32_t i = 0; i < N; i++)
            to0[i] = round * 7919u + i;
        if (hbg_xrank_signal(x, 0, ep))
            return 10;
        if (hbg_xrank_wait(x, 1, ep + 1, 1))
            return 11;
        for (uint32_t i = 0; i < N; i++)
            if (mine[i] != round * 7919u + i + 1)
                return 12;
    }
    return 0;
}

static void two_processes_exchange(void **state)
{
    (void)state;
    hbg_xrank *x;
    assert_int_equal(hbg_xrank_create(2, N * 4, 10ull * 1000 * 1000 * 1000, &x), HBG_OK);
    assert_int_equal(hbg_xrank_nranks(x), 2);
    assert_true(hbg_xrank_window_bytes(x) >= N * 4);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        exit(rank1(x));
    uint32_t *mine = hbg_xrank_window(x, 0), *to1 = hbg_xrank_window(x, 1);
    for (uint32_t round = 0; round < 50; round++) {
        uint64_t ep = 2 * round;
        assert_int_equal(hbg_xrank_wait(x, 0, ep, 1), HBG_OK);
        for (uint32_t i = 0; i < N; i++)
            assert_int_equal(mine[i], round * 7919u + i);
        for (uint32_t i = 0; i < N; i++)
            to1[i] = mine[i] + 1;
        assert_int_equal(hbg_xrank_signal(x, 1, ep + 1), HBG_OK);
    }
    assert_int_equal(child_status(pid), 0);
    hbg_xrank_destroy(x);
}

/* The peer never signals: the wait gives up, with the named status, no
 * sooner than the bound. */
static void silent_peer_times_out(void **state)
{
    (void)state;
    hbg_xrank *x;
    uint64_t bound = 50ull * 1000 * 1000;
    assert_int_equal(hbg_xrank_create(2, 4096, bound, &x), HBG_OK);
    assert_int_equal(hbg_xrank_timeout_ns(x), bound);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t t0 = now_ns();
        hbg_status st = hbg_xrank_wait(x, 1, 3, 1);
        exit(st == HBG_E_PEER_TIMEOUT && now_ns() - t0 >= bound ? 0 : 1);
    }
    assert_int_equal(child_status(pid), 0);
    hbg_xrank_destroy(x);
}

/* A rank the driver abandons ends its peers' waits at once: a child
 * waiting under a 60 s bound returns HBG_E_PEER_GONE within a second of
 * the parent's abandon (a wait looks again every 5 ms at most, so this
 * holds with or without the futex wake, which only saves that nap); a
 * wait whose arrivals are there is still answered; a wait begun later
 * fails at once; a rank out of range is refused. */
static void abandon_ends_waits(void **state)
{
    (void)state;
    hbg_xrank *x;
    uint64_t bound = 60ull * 1000 * 1000 * 1000;
    assert_int_equal(hbg_xrank_create(3, 4096, bound, &x), HBG_OK);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t t0 = now_ns();
        hbg_status st = hbg_xrank_wait(x, 0, 7, 1);
        exit(st == HBG_E_PEER_GONE && now_ns() - t0 < 1000ull * 1000 * 1000 ? 0 : 1);
    }
    struct timespec nap = {0, 50 * 1000 * 1000}; /* let it sleep first */
    nanosleep(&nap, NULL);
    assert_int_equal(hbg_xrank_abandon(x, 2), HBG_OK);
    assert_int_equal(child_status(pid), 0);
    assert_int_equal(hbg_xrank_signal(x, 1, 9), HBG_OK);
    assert_int_equal(hbg_xrank_wait(x, 1, 9, 1), HBG_OK);
    uint64_t t0 = now_ns();
    assert_int_equal(hbg_xrank_wait(x, 1, 10, 1), HBG_E_PEER_GONE);
    assert_true(now_ns() - t0 < 1000ull * 1000 * 1000);
    assert_int_equal(hbg_xrank_abandon(x, 3), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_abandon(NULL, 0), HBG_E_INVAL);
    hbg_xrank_destroy(x);
}

static void epoch_tags_and_counts(void **state)
{
    (void)state;
    hbg_xrank *x;
    assert_int_equal(hbg_xrank_create(3, 4096, 1000 * 1000, &x), HBG_OK);
    /* Two senders expected: one arrival is not enough. */
    assert_int_equal(hbg_xrank_signal(x, 2, 5), HBG_OK);
    assert_int_equal(hbg_xrank_wait(x, 2, 5, 2), HBG_E_PEER_TIMEOUT);
    assert_int_equal(hbg_xrank_signal(x, 2, 5), HBG_OK);
    assert_int_equal(hbg_xrank_wait(x, 2, 5, 2), HBG_OK);
    /* Same slot, later epoch: the old arrivals do not count for it ... */
    uint64_t later = 5 + HBG_XRANK_SLOTS;
    assert_int_equal(hbg_xrank_wait(x, 2, later, 1), HBG_E_PEER_TIMEOUT);
    assert_int_equal(hbg_xrank_signal(x, 2, later), HBG_OK);
    assert_int_equal(hbg_xrank_wait(x, 2, later, 1), HBG_OK);
    /* ... and once taken over, the slot no longer answers for the old one. */
    assert_int_equal(hbg_xrank_wait(x, 2, 5, 1), HBG_E_PEER_TIMEOUT);
    /* Arrivals are per rank. */
    assert_int_equal(hbg_xrank_wait(x, 1, later, 1), HBG_E_PEER_TIMEOUT);
    assert_int_equal(hbg_xrank_wait(x, 1, later, 0), HBG_OK);
    hbg_xrank_destroy(x);
}

static void bad_arguments(void **state)
{
    (void)state;
    hbg_xrank *x = (hbg_xrank *)1;
    assert_int_equal(hbg_xrank_create(0, 4096, 0, &x), HBG_E_INVAL);
    assert_null(x);
    assert_int_equal(hbg_xrank_create(HBG_XRANK_MAX_RANKS + 1, 4096, 0, &x), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_create(2, 4096, 0, NULL), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_create(2, 4096, 0, &x), HBG_OK);
    assert_int_equal(hbg_xrank_timeout_ns(x), HBG_XRANK_DEFAULT_TIMEOUT_NS);
    assert_null(hbg_xrank_window(x, 2));
    assert_non_null(hbg_xrank_window(x, 1));
    assert_int_equal(hbg_xrank_signal(x, 2, 0), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_wait(x, 2, 0, 1), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_signal(NULL, 0, 0), HBG_E_INVAL);
    assert_int_equal(hbg_xrank_signal(x, 0, UINT64_MAX), HBG_E_INVAL);
    hbg_xrank_destroy(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_processes_exchange),
        cmocka_unit_test(silent_peer_times_out),
        cmocka_unit_test(abandon_ends_waits),
        cmocka_unit_test(epoch_tags_and_counts),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
