/* Runtimes on threads, as an embedder uses them (run under ThreadSanitizer
 * too): runtimes of their own sharing one device, one kernel table and one
 * log at once; one runtime run from two threads (the second is refused,
 * its report untouched); and a kernel table that gets a kernel while a
 * runtime that uses the table runs, or two registrations of one id at once;
 * and kernels on two threads that run each other's devices (refused, not
 * a hang). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/runtime.h"

enum { K_ADD = 1, K_DOUBLE = 2, K_LATE = 3, K_TO_A = 4, K_TO_B = 5, N = 16, THREADS = 4, PASSES = 20 };

static int k_add(const hbg_kernel_args *a)
{
    const float *x = hbg_kernel_ptr(&a->tensors[0]);
    float *y = hbg_kernel_ptr(&a->tensors[1]);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        y[i] += x[i];
    return 0;
}

static int k_double(const hbg_kernel_args *a)
{
    float *y = hbg_kernel_ptr(&a->tensors[0]);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        y[i] *= 2.0f;
    return 0;
}

/* The second task's kernel id, and how long the orchestration sleeps (a
 * slow pass, so that two threads' runs overlap). */
typedef struct orch_ctx {
    uint16_t second;
    unsigned sleep_us;
} orch_ctx;

static hbg_status orchestrate(hbg_orch *o, void *ctx)
{
    const orch_ctx *c = ctx;
    hbg_tensor x = *hbg_orch_arg(o, 0), y = *hbg_orch_arg(o, 1);
    hbg_task_id id;
    hbg_arg add_args[] = {{&x, HBG_IN}, {&y, HBG_INOUT}};
    hbg_task add = {.kernel_aic = HBG_KERNEL_NONE,
                    .kernel_aiv = K_ADD,
                    .core = HBG_CORE_AIV,
                    .blocks = 1,
                    .ntensors = 2,
                    .args = add_args};
    hbg_submit_task(o, &add, &id);
    hbg_arg second_args[] = {{&y, HBG_INOUT}};
    hbg_task second = {.kernel_aic = HBG_KERNEL_NONE,
                       .kernel_aiv = c->second,
                       .core = HBG_CORE_AIV,
                       .blocks = 1,
                       .ntensors = 1,
                       .args = second_args};
    hbg_submit_task(o, &second, &id);
    if (c->sleep_us)
        usleep(c->sleep_us);
    return hbg_orch_error(o);
}

/* One pass of y = 2 * (y + x) (or y + x, then the late kernel); the report's status. */
static hbg_status one_pass(hbg_runtime *rt, const orch_ctx *c, float base, float *y, hbg_pass_report *rep)
{
    float x[N];
    uint32_t n = N;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = base;
    }
    hbg_host_tensor args[] = {
        {.name = "x", .host = x, .layout = hbg_tensor_desc(HBG_F32, 1, &n), .dir = HBG_IN},
        {.name = "y", .host = y, .layout = hbg_tensor_desc(HBG_F32, 1, &n), .dir = HBG_INOUT},
    };
    hbg_program prog = {.name = "threads", .orch = orchestrate, .ctx = (void *)c, .nargs = 2, .args = args};
    return hbg_runtime_run(rt, &prog, false, rep);
}

typedef struct worker {
    hbg_device *dev;
    const hbg_kernel_table *kt;
    hbg_log *log;
    pthread_barrier_t *go;
    unsigned idx;
    unsigned wrong; /* passes that failed or gave a wrong y */
} worker;

static void *run_passes(void *arg)
{
    worker *w = arg;
    hbg_runtime_config rc = {.device = w->dev, .kernels = w->kt, .log = w->log, .breakdown = true};
    hbg_runtime *rt = NULL;
    pthread_barrier_wait(w->go);
    if (hbg_runtime_create(&rc, &rt)) {
        w->wrong = PASSES;
        return NULL;
    }
    static const orch_ctx c = {.second = K_DOUBLE};
    for (unsigned k = 0; k < PASSES; k++) {
        float y[N];
        hbg_pass_report rep;
        float base = (float)(w->idx * 100 + k);
        if (one_pass(rt, &c, base, y, &rep)) {
            w->wrong++;
            continue;
        }
        for (int i = 0; i < N; i++)
            if (y[i] != 2.0f * (base + (float)i)) {
                w->wrong++;
                break;
            }
    }
    hbg_runtime_destroy(rt);
    return NULL;
}

static hbg_kernel_table *table_with(const hbg_kernel_def *defs, size_t n)
{
    hbg_kernel_table *kt = NULL;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_kernel_register_all(kt, defs, n), HBG_OK);
    return kt;
}

static const hbg_kernel_def two[] = {{K_ADD, "add", k_add}, {K_DOUBLE, "double", k_double}};

/* Four runtimes on four threads at once, sharing one device, one kernel
 * table and one log: every pass right, every log record one whole line. */
static void runtimes_share_a_device_a_table_and_a_log(void **state)
{
    (void)state;
    hbg_device *dev = NULL;
    hbg_sim_config sc = {0};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    hbg_kernel_table *kt = table_with(two, 2);
    FILE *f = tmpfile();
    assert_non_null(f);
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fileno(f), HBG_LOG_TIMING, &lg), HBG_OK);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS);
    pthread_t th[THREADS];
    worker w[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (worker){.dev = dev, .kt = kt, .log = lg, .go = &go, .idx = i};
        assert_int_equal(pthread_create(&th[i], NULL, run_passes, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].wrong, 0);
    }
    pthread_barrier_destroy(&go);
    assert_int_equal(hbg_log_write_error(lg), 0);
    rewind(f);
    char line[8192];
    unsigned lines = 0, anchors = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        assert_true(strncmp(line, "[mono_ns=", 9) == 0);
        assert_non_null(strchr(line, '\n'));
        anchors += strstr(line, "[CLOCK_ANCHOR]") != NULL;
    }
    assert_int_equal(anchors, 1);
    assert_true(lines > THREADS * PASSES);
    fclose(f);
    hbg_log_close(lg);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
}

typedef struct racer {
    hbg_runtime *rt;
    pthread_barrier_t *go;
    unsigned ok, refused, other, touched;
} racer;

static void *race_runs(void *arg)
{
    racer *r = arg;
    static const orch_ctx c = {.second = K_DOUBLE, .sleep_us = 2000};
    pthread_barrier_wait(r->go);
    for (unsigned k = 0; k < PASSES; k++) {
        float y[N];
        hbg_pass_report rep;
        memset(&rep, 0x5a, sizeof rep);
        hbg_status st = one_pass(r->rt, &c, 1.0f, y, &rep);
        if (st == HBG_OK)
            r->ok++;
        else if (st == HBG_E_STATE) {
            r->refused++;
            r->touched += ((const unsigned char *)&rep)[0] != 0x5a;
        } else
            r->other++;
    }
    return NULL;
}

/* A device, a table of the two kernels and a runtime on them. */
typedef struct rig {
    hbg_device *dev;
    hbg_kernel_table *kt;
    hbg_runtime *rt;
} rig;

static rig rig_open(void)
{
    rig r = {NULL, NULL, NULL};
    hbg_sim_config sc = {0};
    assert_int_equal(hbg_sim_open(&sc, &r.dev), HBG_OK);
    r.kt = table_with(two, 2);
    hbg_runtime_config rc = {.device = r.dev, .kernels = r.kt};
    assert_int_equal(hbg_runtime_create(&rc, &r.rt), HBG_OK);
    return r;
}

/* The runtime first: the device and table outlive it. */
static void rig_close(rig *r)
{
    hbg_runtime_destroy(r->rt);
    hbg_kernel_table_destroy(r->kt);
    hbg_device_close(r->dev);
}

/* One runtime run from two threads at once: a run that finds another under
 * way is HBG_E_STATE with its report untouched, and every pass that ran
 * is whole. */
static void one_runtime_two_threads_is_refused(void **state)
{
    (void)state;
    rig g = rig_open();
    hbg_runtime *rt = g.rt;
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    racer r[2] = {{.rt = rt, .go = &go}, {.rt = rt, .go = &go}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_runs, &r[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].other, 0);
        assert_int_equal(r[i].touched, 0);
        assert_int_equal(r[i].ok + r[i].refused, PASSES);
    }
    /* how many ran depends on the interleaving (a refused thread may burn
     * its attempts while the other sleeps in one pass): some did */
    assert_true(r[0].ok + r[1].ok > 0);
    rig_close(&g);
}

typedef struct late {
    hbg_kernel_table *kt;
    pthread_barrier_t *go;
    hbg_status st;
} late;

static void *register_late(void *arg)
{
    late *l = arg;
    pthread_barrier_wait(l->go);
    l->st = hbg_kernel_register(l->kt, K_LATE, "late", k_double);
    return NULL;
}

/* A kernel registered while a runtime that uses the table runs passes
 * naming it: each pass either finds no kernel (refused) or the whole
 * entry, and once registered it stays found. */
static void a_kernel_registered_while_a_runtime_runs(void **state)
{
    (void)state;
    rig g = rig_open();
    hbg_runtime *rt = g.rt;
    hbg_kernel_table *kt = g.kt;
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    late l = {.kt = kt, .go = &go};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, register_late, &l), 0);
    pthread_barrier_wait(&go);
    static const orch_ctx c = {.second = K_LATE};
    bool found = false;
    for (unsigned k = 0; k < 4 * PASSES; k++) {
        float y[N];
        hbg_pass_report rep;
        hbg_status st = one_pass(rt, &c, 1.0f, y, &rep);
        if (st == HBG_OK) {
            found = true;
            assert_true(y[3] == 2.0f * (1.0f + 3.0f));
        } else {
            assert_false(found); /* found once, found for good */
            assert_int_not_equal(st, HBG_E_STATE);
        }
    }
    pthread_join(th, NULL);
    pthread_barrier_destroy(&go);
    assert_int_equal(l.st, HBG_OK);
    assert_string_equal(hbg_kernel_name(kt, K_LATE), "late");
    rig_close(&g);
}

/* Two threads registering one id at once: exactly one wins, the other is
 * refused as a second registration is, and the winner's entry is whole. */
static void one_id_registered_twice_at_once(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        hbg_kernel_table *kt = table_with(two, 2);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        late l[2] = {{.kt = kt, .go = &go}, {.kt = kt, .go = &go}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, register_late, &l[i]), 0);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        assert_int_equal((l[0].st == HBG_OK) + (l[1].st == HBG_OK), 1);
        assert_int_equal((l[0].st == HBG_E_INVAL) + (l[1].st == HBG_E_INVAL), 1);
        assert_ptr_equal(hbg_kernel_lookup(kt, K_LATE), k_double);
        assert_string_equal(hbg_kernel_name(kt, K_LATE), "late");
        hbg_kernel_table_destroy(kt);
    }
}

/* Two threads run devices A and B, and a kernel of each then runs the
 * other device (through a second runtime on it) while both runs are under
 * way: each run waits for its kernel, each kernel for the other's run.
 * That hung for ever; now the run that would close the cycle is refused
 * (HBG_E_STATE), its kernel returns, its device's run ends, and the other
 * kernel's run goes on. Either may be the one refused, so both orders are
 * tried in many rounds; SIGALRM ends a hang. */
static struct {
    hbg_runtime *inner[2]; /* [0] on B, run by A's kernel; [1] on A, by B's */
    pthread_barrier_t both_in;
    hbg_status st[2];
    char error[2][HBG_PASS_ERROR_MAX];
} cross;

static int k_cross(int i)
{
    static const orch_ctx c = {.second = K_DOUBLE};
    pthread_barrier_wait(&cross.both_in);
    float y[N];
    hbg_pass_report rep;
    cross.st[i] = one_pass(cross.inner[i], &c, 1.0f, y, &rep);
    snprintf(cross.error[i], sizeof cross.error[i], "%s", rep.error);
    if (!cross.st[i] && y[5] != 2.0f * (1.0f + 5.0f))
        cross.st[i] = HBG_E_INVAL;
    return 0;
}

static int k_to_b(const hbg_kernel_args *a)
{
    (void)a;
    return k_cross(0);
}

static int k_to_a(const hbg_kernel_args *a)
{
    (void)a;
    return k_cross(1);
}

typedef struct outer_run {
    hbg_runtime *rt;
    uint16_t kernel;
    hbg_status st;
} outer_run;

static void *run_outer(void *arg)
{
    outer_run *o = arg;
    orch_ctx c = {.second = o->kernel};
    float y[N];
    hbg_pass_report rep;
    o->st = one_pass(o->rt, &c, 0.0f, y, &rep);
    return NULL;
}

static void kernels_running_each_others_devices_are_refused(void **state)
{
    (void)state;
    static const hbg_kernel_def defs[] = {
        {K_ADD, "add", k_add}, {K_DOUBLE, "double", k_double}, {K_TO_A, "to_a", k_to_a}, {K_TO_B, "to_b", k_to_b}};
    hbg_kernel_table *kt = table_with(defs, 4);
    hbg_sim_config sc = {0};
    hbg_device *dev[2];
    hbg_runtime *outer[2];
    for (int d = 0; d < 2; d++)
        assert_int_equal(hbg_sim_open(&sc, &dev[d]), HBG_OK);
    for (int d = 0; d < 2; d++) {
        hbg_runtime_config rc = {.device = dev[d], .kernels = kt, .records_fd = -1};
        assert_int_equal(hbg_runtime_create(&rc, &outer[d]), HBG_OK);
        rc.device = dev[1 - d];
        assert_int_equal(hbg_runtime_create(&rc, &cross.inner[d]), HBG_OK);
    }
    unsigned refused[2] = {0, 0};
    alarm(120);
    for (int round = 0; round < 20; round++) {
        pthread_barrier_init(&cross.both_in, NULL, 2);
        outer_run o[2] = {{outer[0], K_TO_B, HBG_E_INVAL}, {outer[1], K_TO_A, HBG_E_INVAL}};
        pthread_t th[2];
        for (int d = 0; d < 2; d++)
            assert_int_equal(pthread_create(&th[d], NULL, run_outer, &o[d]), 0);
        for (int d = 0; d < 2; d++)
            pthread_join(th[d], NULL);
        pthread_barrier_destroy(&cross.both_in);
        assert_int_equal(o[0].st, HBG_OK);
        assert_int_equal(o[1].st, HBG_OK);
        /* one inner run refused, the other run whole after it */
        int r = cross.st[0] == HBG_E_STATE ? 0 : 1;
        if (cross.st[r] != HBG_E_STATE || cross.st[1 - r] != HBG_OK)
            fail_msg("round %d: inner runs %s, %s (%s | %s)", round, hbg_status_name(cross.st[0]),
                     hbg_status_name(cross.st[1]), cross.error[0], cross.error[1]);
        if (!strstr(cross.error[r], "a run of this device from a kernel whose own run it would wait for"))
            fail_msg("round %d: %s", round, cross.error[r]);
        refused[r]++;
    }
    alarm(0);
    for (int d = 0; d < 2; d++) {
        hbg_runtime_destroy(cross.inner[d]);
        hbg_runtime_destroy(outer[d]);
    }
    for (int d = 0; d < 2; d++)
        hbg_device_close(dev[d]);
    hbg_kernel_table_destroy(kt);
    assert_int_equal(refused[0] + refused[1], 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runtimes_share_a_device_a_table_and_a_log),
        cmocka_unit_test(one_runtime_two_threads_is_refused),
        cmocka_unit_test(a_kernel_registered_while_a_runtime_runs),
        cmocka_unit_test(one_id_registered_twice_at_once),
        cmocka_unit_test(kernels_running_each_others_devices_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
