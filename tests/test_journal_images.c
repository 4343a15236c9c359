/* The tensor map's journal changes no image: the cases' passes, bound by
 * an orchestrator with journals and by one without, give the same task
 * image byte for byte (tasks, fanins in order, tensors, scalars,
 * predicates, replays, boundary records) and the same Definitions, pass
 * after pass, with Definitions re-recorded and kept, and when a pass of
 * another program comes between (its calls differ from the journal's from
 * the start, and the next pass's differ from its journal). The journaled
 * orchestrator must also have followed its journal to the end of every
 * pass that repeats the one before, so the comparison is of answers the
 * journal gave, and its task memo (src/orch/taskmemo.h) must have answered
 * some of those passes' submits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "case.h"
#include "hbg/graph.h"
#include "util/hash.h"
#include "support/orch_fixture.h"

typedef struct prog {
    const hbg_case *c;
    hbg_case_env env;
    hbg_kernel_table *kt;
    hbg_program p;
    void *state;
    hbg_tensor args[64];
} prog;

static void prog_open(prog *g, const char *name, uint32_t rank, uint32_t nranks, uint32_t tile)
{
    memset(g, 0, sizeof *g);
    g->c = hbg_case_find(name);
    assert_non_null(g->c);
    assert_int_equal(hbg_kernel_table_create(&g->kt), HBG_OK);
    g->env = (hbg_case_env){.rank = rank, .nranks = nranks, .tile_unit = tile};
    assert_int_equal(g->c->setup(&g->env, g->kt, &g->p, &g->state), HBG_OK);
    assert_true(g->p.nargs <= 64);
    /* a fake address space: nothing executes */
    for (uint32_t i = 0; i < g->p.nargs; i++) {
        g->args[i] = g->p.args[i].layout;
        g->args[i].addr = 0x4000000000ull + (uint64_t)i * (16u << 20);
        assert_true(g->args[i].nbytes < (16u << 20));
    }
}

static void prog_close(prog *g)
{
    g->c->teardown(g->state);
    hbg_kernel_table_destroy(g->kt);
}


/* Binds the programs in `order` (indices into gj and gp, each program
 * opened twice: a case keeps state across passes, such as the creator
 * its tensors were last given) on both orchestrators, comparing after
 * every pass. */
static void bind_both(prog *gj, prog *gp, const int *order, int npass, bool keep)
{
    hbg__orch_config cj = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = gj[0].c->heap_bytes, .rank = gj[0].env.rank,
                          .nranks = gj[0].env.nranks, .keep_definitions = keep};
    hbg__orch_config cp = cj;
    cp.no_journal = true;
    hbg_orch *oj, *op;
    assert_int_equal(hbg__graph_orch_create(&cj, &oj), HBG_OK);
    assert_int_equal(hbg__graph_orch_create(&cp, &op), HBG_OK);
    assert_null(op->map.j.calls);
    int followed = 0;
    for (int i = 0; i < npass; i++) {
        prog *q[2] = {&gj[order[i]], &gp[order[i]]};
        hbg_orch *both[2] = {oj, op};
        uint64_t hits = oj->memo_hits;
        for (int k = 0; k < 2; k++) {
            hbg__orch_begin_pass(both[k], FAKE_HEAP_BASE, q[k]->args, q[k]->p.nargs);
            assert_int_equal(q[k]->p.orch(both[k], q[k]->p.ctx), HBG_OK);
            assert_int_equal(hbg__orch_end_pass(both[k]), HBG_OK);
        }
        fx_same_images(oj, op);
        if (i == 0) {
            /* the cold pass makes no journal */
            assert_int_equal(oj->map.j.ncalls, 0);
        } else if (i > 1 && order[i] == order[i - 1]) {
            /* the whole pass answered from the journal the last one made */
            assert_true(oj->map.j.following);
            assert_int_equal(oj->map.j.at, oj->map.j.ncalls);
            assert_true(oj->map.j.ncalls > 100);
            /* and the Definition's recording, re-recorded, from its own */
            const hbg__tmap_journal *rj = &oj->graph->rec.map.j;
            if (!keep)
                assert_true(rj->following && rj->at == rj->ncalls && rj->ncalls > 100);
            assert_true(oj->memo_hits > hits);
            followed++;
        } else {
            assert_false(oj->map.j.following); /* it walked (and caught up if it followed) */
        }
    }
    assert_true(followed > 0);
    hbg__orch_destroy(oj);
    hbg__orch_destroy(op);
}

/* Re-recorded, a pass of another tile unit (other views throughout)
 * comes between; kept, a Definition's signature must match, so one
 * program throughout. */
static void qwen_passes(void **state)
{
    (void)state;
    prog gj[2], gp[2];
    for (int k = 0; k < 2; k++) {
        prog_open(&gj[k], "qwen", 0, 1, 16 * (1 + k));
        prog_open(&gp[k], "qwen", 0, 1, 16 * (1 + k));
    }
    static const int mixed[] = {0, 0, 0, 1, 0, 0, 1, 1}, same[] = {0, 0, 0, 0};
    bind_both(gj, gp, mixed, (int)(sizeof mixed / sizeof mixed[0]), false);
    bind_both(gj, gp, same, (int)(sizeof same / sizeof same[0]), true);
    for (int k = 0; k < 2; k++) {
        prog_close(&gj[k]);
        prog_close(&gp[k]);
    }
}

static void dsv4_passes(void **state)
{
    (void)state;
    for (uint32_t rank = 0; rank < 2; rank++) {
        prog gj[1], gp[1];
        prog_open(&gj[0], "dsv4", rank, 2, 0);
        prog_open(&gp[0], "dsv4", rank, 2, 0);
        static const int order[] = {0, 0, 0, 0};
        for (int keep = 0; keep < 2; keep++)
            bind_both(gj, gp, order, 4, keep);
        prog_close(&gj[0]);
        prog_close(&gp[0]);
    }
}

/* Re-recorded, a Definition built where the last pass built the same bytes
 * is compared rather than copied and hashed: its hash must still be that
 * of its bytes, pass after pass, also when the pool was scribbled over
 * between passes (the bytes then differ and it is built anew). */
static void a_rebuilt_definition_keeps_its_hash(void **state)
{
    (void)state;
    prog g;
    prog_open(&g, "qwen", 0, 1, 16);
    hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = g.c->heap_bytes, .nranks = 1};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    uint64_t first = 0;
    for (int pass = 0; pass < 6; pass++) {
        if (pass == 3 || pass == 4) /* scribbled: all of it, then one byte */
            memset(o->graph->def_pool, 0xa5, pass == 3 ? (size_t)o->graph->def_pool_used : 1);
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, g.args, g.p.nargs);
        assert_int_equal(g.p.orch(o, g.p.ctx), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        assert_int_equal(o->graph->ndefs, 1);
        const hbg_def_header *h = o->graph->defs[0].img;
        static unsigned char copy[1 << 20];
        assert_true(h->bytes <= sizeof copy);
        memcpy(copy, h, h->bytes);
        memset(copy + offsetof(hbg_def_header, hash), 0, sizeof h->hash);
        assert_int_equal(h->hash, hbg__image_hash(copy, h->bytes));
        if (!first)
            first = h->hash;
        assert_int_equal(h->hash, first);
        assert_int_equal(h->magic, HBG_DEF_MAGIC);
    }
    hbg__orch_destroy(o);
    prog_close(&g);
}

/* The Definitions the cases record are the bytes they were before the
 * journal, the compared rebuild and the recorder's in-place layouts (the
 * hashes read at 1148b45): a change to the recorder that moved one byte
 * would change the hash the device copy is found by. */
static void the_definitions_are_the_bytes_they_were(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint32_t nranks;
        uint64_t hash, bytes;
    } want[] = {{"qwen", 1, 0x4e88dd3403b0564aull, 131144}, {"dsv4", 2, 0xa36e5f192480fa68ull, 385024}};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        prog g;
        prog_open(&g, want[i].name, 0, want[i].nranks, 0);
        hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = g.c->heap_bytes, .nranks = want[i].nranks};
        hbg_orch *o;
        assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
        for (int pass = 0; pass < 3; pass++) {
            hbg__orch_begin_pass(o, FAKE_HEAP_BASE, g.args, g.p.nargs);
            assert_int_equal(g.p.orch(o, g.p.ctx), HBG_OK);
            assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
            assert_int_equal(o->graph->ndefs, 1);
            assert_int_equal(o->graph->defs[0].img->hash, want[i].hash);
            assert_int_equal(o->graph->defs[0].img->bytes, want[i].bytes);
        }
        hbg__orch_destroy(o);
        prog_close(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qwen_passes),
        cmocka_unit_test(dsv4_passes),
        cmocka_unit_test(a_rebuilt_definition_keeps_its_hash),
        cmocka_unit_test(the_definitions_are_the_bytes_they_were),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
