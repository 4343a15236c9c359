/* The calling thread's stack committed ahead of host_orch (util/stack.h):
 * its bounds, the pages a commit makes resident (read back with mincore),
 * and the cases where it must do nothing: another thread's bounds, a
 * stack too small to spare the pages, bounds unknown. Each case runs on a
 * fresh thread, whose stack pages below its first frames were never
 * touched. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/resident.h"
#include "util/stack.h"

typedef struct job {
    int kind;         /* 0: own stack, 1: the main thread's, 2: no bounds,
                         3: own bounds but another thread's, 4: an ended
                         thread's (reuse below) */
    hbg__stack main;  /* the main thread's */
    hbg__stack own;
    size_t before, after; /* resident pages in the window below the frame */
    size_t pages;         /* the window's */
} job;

/* The window a commit from the caller's frame covers, less a margin for
 * the frames between: from 48 KB to 8 KB below this frame. */
__attribute__((noinline)) static void run(job *j)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo = sp - (48 << 10), hi = sp - (8 << 10);
    j->own = hbg__stack_of_caller();
    j->before = ts_resident(lo, hi, NULL);
    hbg__stack s = j->own;
    if (j->kind == 1)
        s = j->main;
    else if (j->kind == 2)
        s.lo = s.hi = 0;
    else if (j->kind == 3)
        s.owner = j->main.owner;
    else if (j->kind == 4)
        s = j->main; /* an ended thread's, with this one's pthread_t */
    hbg__stack_commit(s);
    j->after = ts_resident(lo, hi, &j->pages);
}

static void *thread_main(void *arg)
{
    run(arg);
    return NULL;
}

/* Runs the job on a thread whose stack is a fresh mapping (glibc would
 * hand a new thread a cached stack, pages and all). */
static job on_thread(int kind, size_t stack_bytes)
{
    job j = {.kind = kind, .main = hbg__stack_of_caller()};
    void *stack = mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(stack != MAP_FAILED);
    pthread_attr_t at;
    assert_int_equal(pthread_attr_init(&at), 0);
    assert_int_equal(pthread_attr_setstack(&at, stack, stack_bytes), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, &at, thread_main, &j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&at);
    munmap(stack, stack_bytes);
    return j;
}

static void bounds_hold_the_caller(void **st)
{
    (void)st;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    hbg__stack s = hbg__stack_of_caller();
    assert_true(s.lo != 0 && s.lo < here && here < s.hi);
    assert_int_equal(s.owner, hbg__thread_serial());
    job j = on_thread(0, (size_t)1 << 20);
    assert_int_equal(j.own.hi - j.own.lo, (size_t)1 << 20);
    /* Another thread's stack is elsewhere. */
    assert_true(j.own.hi <= s.lo || j.own.lo >= s.hi);
}

static void commit_makes_the_pages_below_resident(void **st)
{
    (void)st;
    job j = on_thread(0, (size_t)1 << 20);
    assert_int_equal(j.before, 0);
    assert_true(j.pages >= 10);
    assert_int_equal(j.after, j.pages);
}

static void nothing_on_another_threads_bounds_or_none(void **st)
{
    (void)st;
    job j = on_thread(1, (size_t)1 << 20);
    assert_int_equal(j.before, 0);
    assert_int_equal(j.after, 0);
    j = on_thread(2, (size_t)1 << 20);
    assert_int_equal(j.after, 0);
    /* The right bounds, the wrong thread: a stack that outlived its
     * thread's record. */
    j = on_thread(3, (size_t)1 << 20);
    assert_int_equal(j.after, 0);
}

/* A thread that ends leaves its pthread_t to the next thread whose stack
 * ends where its did (glibc's pthread_t is its descriptor, at the stack's
 * top). Thread A, on a 16 MB stack, notes its stack and ends; thread B, on
 * the top 64 KB of the same mapping, has A's pthread_t, and its frame lies
 * inside A's bounds with room to spare by them: only the thread serial
 * tells them apart. Once the commit ran on B and wrote 64 KB below a frame
 * that had less than that (a crash on a stack of its own mapping). */
typedef struct reuse {
    void *stack;
    size_t bytes;
    pthread_t self;
    hbg__stack noted;
    job j;
} reuse;

static void *note_and_end(void *arg)
{
    reuse *r = arg;
    r->self = pthread_self();
    r->noted = hbg__stack_of_caller();
    return NULL;
}

static void *commit_noted(void *arg)
{
    reuse *r = arg;
    assert_true(pthread_equal(pthread_self(), r->self)); /* the case this test is about */
    r->j.kind = 4;
    run(&r->j);
    return NULL;
}

static void start(reuse *r, void *stack, size_t bytes, void *(*fn)(void *))
{
    pthread_attr_t at;
    assert_int_equal(pthread_attr_init(&at), 0);
    assert_int_equal(pthread_attr_setstack(&at, stack, bytes), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, &at, fn, r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&at);
}

static void nothing_on_a_reused_pthread_t(void **st)
{
    (void)st;
    reuse r = {.bytes = (size_t)16 << 20};
    r.stack = mmap(NULL, r.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(r.stack != MAP_FAILED);
    start(&r, r.stack, r.bytes, note_and_end);
    r.j.main = r.noted;
    size_t small = (size_t)64 << 10;
    start(&r, (char *)r.stack + r.bytes - small, small, commit_noted);
    assert_int_equal(r.j.after, 0);
    /* nothing below B's stack either */
    assert_int_equal(ts_resident((uintptr_t)r.stack + r.bytes - 2 * small, (uintptr_t)r.stack + r.bytes - small,
                                 NULL),
                     0);
    munmap(r.stack, r.bytes);
}

/* A stack that cannot spare twice HBG_STACK_HOT below the frame is left
 * alone (the commit would eat its margin). */
static void nothing_on_a_small_stack(void **st)
{
    (void)st;
    job j = on_thread(0, 2 * HBG_STACK_HOT);
    assert_int_equal(j.after, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounds_hold_the_caller),
        cmocka_unit_test(commit_makes_the_pages_below_resident),
        cmocka_unit_test(nothing_on_another_threads_bounds_or_none),
        cmocka_unit_test(nothing_on_a_small_stack),
        cmocka_unit_test(nothing_on_a_reused_pthread_t),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
