/* Graph internals shared by recorder.c, graph.c and the bind pipeline.
 *
 * The Graph layer sits on top of the orchestrator: it installs itself as
 * the orchestrator's extension (hbg__orch_ext), so a submit made while a
 * body records arrives here, and it keeps its own state (the recorder, the
 * Definition cache and the pool their images live in) in struct hbg__graph,
 * which the orchestrator holds only as an opaque pointer.
 */
#ifndef HBG_GRAPH_INTERNAL_H
#define HBG_GRAPH_INTERNAL_H

#include <stddef.h>
#include <string.h>

#include "hbg/image.h"
#include "orch/orch_internal.h"
#include "orch/taskmemo.h"
#include "util/hash.h"

/* One slot of a boundary signature. A replay whose slot matches the layout
 * differs from the recording only in addr, nbytes and offset, so the extent
 * is kept here and its byte range costs a compare, a multiply and an add
 * instead of a walk over the dimensions. */
#define HBG_BSLOT_LAYOUT_BYTES 64

typedef struct hbg__bslot {
    /* hbg_tensor's fields from strides to reserved, in its order, unused
     * dimensions zero: a view whose 64 bytes there are equal has this
     * layout, which a replay tests with four 16-byte compares (a view
     * with stray values in unused dimensions is tested field by field). */
    int64_t strides[HBG_MAX_DIMS];
    uint32_t shape[HBG_MAX_DIMS];
    uint8_t ndim, dtype;
    uint16_t reserved;
    uint64_t extent;          /* sum of (shape[d] - 1) * strides[d], in elements */
    /* The largest offset whose byte range fits 64 bits, and the range's
     * length, (extent + 1) * esize: a view at offset o <= max_offset spans
     * [o * esize, o * esize + span), computed without overflow checks. */
    uint64_t max_offset, span;
    uint8_t ranged;           /* some offset has a range (else every replay fails) */
    uint8_t dir;
    uint8_t esize;            /* 0: the layout has no valid byte range */
    uint8_t dense;            /* hbg__tmap_dense of the layout (0 without a range) */
    uint16_t alias;           /* first slot on the same buffer, or self */
    /* Where a slot that shares its buffer lies from the first slot on it:
     * the byte offset of its view less the first's, modulo 2^64 (0 for a
     * first slot), and whether a replay must find it there (fixed: the
     * slots of a buffer that a node writes through, or that a node's
     * tensor was found in by content where another slot on the buffer
     * held it too; graph.c, fill_signature). */
    uint64_t alias_delta;
    uint8_t fixed;
} hbg__bslot;

_Static_assert(offsetof(hbg__bslot, shape) == offsetof(hbg_tensor, shape) - offsetof(hbg_tensor, strides) &&
                   offsetof(hbg__bslot, ndim) == offsetof(hbg_tensor, ndim) - offsetof(hbg_tensor, strides) &&
                   offsetof(hbg__bslot, dtype) == offsetof(hbg_tensor, dtype) - offsetof(hbg_tensor, strides) &&
                   offsetof(hbg__bslot, reserved) == offsetof(hbg_tensor, reserved) - offsetof(hbg_tensor, strides) &&
                   offsetof(hbg__bslot, extent) == HBG_BSLOT_LAYOUT_BYTES &&
                   offsetof(hbg_tensor, reserved) + 2 - offsetof(hbg_tensor, strides) == HBG_BSLOT_LAYOUT_BYTES,
               "a slot's layout bytes are hbg_tensor's");

/* The signature a replay's boundary must match. */
typedef struct hbg__bsig {
    uint32_t nbt, nbs;
    hbg__bslot slot[HBG_MAX_BOUNDARY_TENSORS];
} hbg__bsig;

typedef struct hbg__def_entry {
    uint64_t key;
    hbg_graph_body body;      /* the body the key names (one key, one body) */
    uint64_t pass;            /* pass that recorded it (or kept it) */
    const hbg_def_header *img;/* inside the def pool */
    hbg__bsig sig;
    uint32_t deftab_stamp_pass; /* deftab index valid when == current pass */
    uint32_t deftab_index;
    /* What a replay depends on (the image's place and bytes, the
     * signature) has not changed while gen has not: a replay noted in the
     * task memo under this gen is valid for it (replaymemo.c). gen_img and
     * gen_hash are the image it was given for. */
    uint32_t gen;
    const hbg_def_header *gen_img;
    uint64_t gen_hash;
} hbg__def_entry;

/* An entry of the boundary address table. Entries whose stamp is not the
 * table's current one are empty, so starting a new boundary clears nothing. */
typedef struct hbg__btab_ent {
    uint64_t addr;
    uint32_t stamp;
    uint16_t slot, last;      /* first and last boundary slot on the buffer */
} hbg__btab_ent;

#define HBG_BTAB_SIZE (2 * HBG_MAX_BOUNDARY_TENSORS) /* power of two, under half full */

/* How a node's tensor was expressed against the boundary. The low byte:
 * 1 + the slot whose own tensor it was (the pointer the call passed for
 * that slot alone, its view unchanged), 0 when it was found by its
 * content; HBG_VIA_AMBIGUOUS when then another slot on its buffer would
 * have explained it too. */
#define HBG_VIA_SLOT_MASK 0xffu
#define HBG_VIA_AMBIGUOUS 0x100u

/* The node builder used while a Graph body is being recorded. */
typedef struct hbg__recorder {
    const hbg__range *brng;             /* b's slots' byte ranges, from the call's scan */
    uint64_t key;                       /* of the body being recorded */
    uint64_t heap_used;                 /* recording-local GM block */
    uint32_t nnodes, nfanin, ntarg, nsarg, npred;
    hbg_def_node *nodes;                /* HBG_MAX_DEF_NODES */
    uint32_t *fanins;                   /* HBG_MAX_DEF_NODES * HBG_MAX_FANINS */
    hbg_def_targ *targs;                /* HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS */
    hbg_def_sarg *sargs;                /* HBG_MAX_DEF_NODES * HBG_MAX_TASK_SCALARS */
    hbg_def_pred *preds;                /* HBG_MAX_DEF_NODES */
    /* How each targ and each predicate was found among the boundary
     * slots (HBG_VIA_*), by targ and by pred: what the Definition's
     * signature asks of slots that share a buffer (graph.c,
     * fill_signature). Kept in place, like the sections, by a node the
     * memo answers. */
    uint16_t *tvia, *pvia;
    hbg_tensor *views;                  /* the writer views the record map points at */
    uint64_t *node_stamp;               /* fanin de-duplication */
    uint64_t stamp_node;
    uint32_t nviews;
    hbg__tmap map;                       /* writers inside the body, by node id */
    /* boundary buffer lookup: addr -> first slot, chained through bnext;
     * replays use the table alone, to find buffers their signature says
     * are distinct but are not */
    hbg__btab_ent btab[HBG_BTAB_SIZE];
    uint16_t bnext[HBG_MAX_BOUNDARY_TENSORS];
    uint32_t bstamp;
    /* The boundary as the call passed it (bpassed, over copies of its
     * tensors, scalars and dependencies). A call reads its boundary once:
     * the nodes are validated and expressed against it (the ranges in
     * brng are its tensors' too), the Definition's signature is made from
     * it and the call is replayed with it, whatever the body does to the
     * caller's boundary or tensors while it runs. Until the next capture
     * begins, it is the last capture's. */
    hbg_boundary bpassed;
    hbg_tensor bsnap[HBG_MAX_BOUNDARY_TENSORS];
    const hbg_tensor *bptr[HBG_MAX_BOUNDARY_TENSORS]; /* the tensors as passed: the slots' own */
    hbg_arg bargs[HBG_MAX_BOUNDARY_TENSORS];
    uint64_t bscalars[HBG_MAX_BOUNDARY_SCALARS];
    hbg_task_id bdeps[HBG_MAX_FANINS];
    /* The node memo (nodememo.c); notes == NULL: none. */
    hbg__memo *notes;                   /* HBG_MAX_DEF_NODES, by node (stamp: the capture) */
    hbg_tensor *intens;                 /* arguments as the body passed them, by targ */
    hbg_tensor *inpred;                 /* predicate tensors, by pred */
    uint32_t capture;                   /* captures begun (low 32 bits) */
    bool last_clean;                    /* the last capture's notes vouch for its records */
    bool hits_on;                       /* this capture began as the last one did */
    bool wrote;                         /* this capture recorded a node the full way */
    uint64_t node_hits;                 /* nodes answered from the memo, ever (tests) */
} hbg__recorder;

/* The Graph layer's state, one per orchestrator. */
struct hbg__graph {
    hbg__recorder rec;
    hbg__def_entry defs[HBG_DEF_CACHE_CAP];
    uint32_t ndefs;
    uint32_t deftab_entry[HBG_DEF_CACHE_CAP]; /* def table index -> cache index, this pass */
    unsigned char *def_pool;
    uint64_t def_pool_used, def_pool_cap;
    bool orphans;              /* a place was given to a new key (record): its old image
                                  is in the pool, named by no entry, until drop_unused packs */
    uint32_t defs_built;       /* this pass */
    /* The n-th Definition the last pass built: where, how large, the
     * hash of the bytes it wrote there, and the capture whose recorder
     * arrays those bytes hold (build_definition). */
    struct {
        const unsigned char *img;
        uint64_t bytes, hash;
        uint32_t capture;
    } built[HBG_DEF_CACHE_CAP];
    uint32_t fallbacks;        /* this pass: bodies run as ordinary tasks */
    hbg__fault first_fallback; /* the mismatch behind the first of them */
    uint32_t gen_next;         /* the last gen given to an entry */
    /* The task memo's part of each boundary image slot (replaymemo.c):
     * the fields of the slot's tensor that neither the signature nor the
     * slot's image record hold. NULL without a task memo. */
    uint64_t *memo_bx;
};

/* The recorded layout of t, everything that is the same in every replay
 * (with keep_offset_size also its offset and buffer size), into *l, which
 * the caller has zeroed: only the fields that can be non-zero are
 * written. */
static inline void hbg__layout_into(hbg_tensor *l, const hbg_tensor *t, bool keep_offset_size)
{
    l->ndim = t->ndim;
    l->dtype = t->dtype;
    for (unsigned d = 0; d < t->ndim && d < HBG_MAX_DIMS; d++) {
        l->shape[d] = t->shape[d];
        l->strides[d] = t->strides[d];
    }
    if (keep_offset_size) {
        l->offset = t->offset;
        l->nbytes = t->nbytes;
    }
}

/* An orchestrator with Graphs: hbg__orch_create() plus this layer. */
hbg_status hbg__graph_orch_create(const hbg__orch_config *cfg, hbg_orch **out);

/* A capture's start and end (recorder.c): the recorder is emptied, the
 * boundary snapshot taken, and the node memo told whether this capture
 * begins as the last one did; at the end, whether its notes hold. */
void hbg__rec_begin(hbg_orch *o, const hbg_boundary *b, const hbg__range *brng);
void hbg__rec_end(hbg__recorder *r, hbg_status st);
/* The boundary as the call whose body the last capture ran passed it,
 * for everything that call does after the body. */
static inline const hbg_boundary *hbg__rec_passed(const hbg__recorder *r)
{
    return &r->bpassed;
}

/* The node memo (nodememo.c). */
hbg_status hbg__node_memo_init(hbg__recorder *r);
void hbg__node_memo_free(hbg__recorder *r);
/* Before the full path changes anything: where the recorder's map and
 * heap stand, and (when a note can be made) the arguments as passed. */
hbg__memo_at hbg__node_memo_keep(hbg__recorder *r, const hbg_task *t);
/* After node n was recorded the full way from `at`. */
void hbg__node_memo_note(hbg_orch *o, const hbg_task *t, uint32_t n, hbg__memo_at at);
/* True when t repeats node nnodes of the last capture in the state it met;
 * the node then stands as recorded and the counts have moved past it. */
bool hbg__node_memo_hit(hbg_orch *o, const hbg_task *t, bool dummy);

/* Submits made while a body records (recorder.c). */
hbg_status hbg__record_task(hbg_orch *o, const hbg_task *t, bool dummy, hbg_task_id *id);
hbg_status hbg__record_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);

/* Indexes a boundary by buffer address; fills alias[k] with the first slot
 * on the same buffer (k itself when none). Linear in the boundary width. */
void hbg__boundary_index(hbg__recorder *r, const hbg_boundary *b, uint16_t *alias);

/* Empties the boundary address table for a new boundary. Only when the
 * stamp wraps are the entries cleared, so an old entry never reads as
 * current. */
static inline void hbg__btab_begin(hbg__recorder *r)
{
    if (++r->bstamp == 0) {
        memset(r->btab, 0, sizeof r->btab);
        r->bstamp = 1;
    }
}

/* The entry holding `addr`, or the empty one where it belongs (its stamp is
 * then not current). A boundary fills under half the table, so the probe
 * always ends. */
static inline hbg__btab_ent *hbg__btab_probe(hbg__recorder *r, uint64_t addr)
{
    uint64_t h = addr ^ addr >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    uint32_t i = (uint32_t)(h ^ h >> 32) & (HBG_BTAB_SIZE - 1);
    while (r->btab[i].stamp == r->bstamp && r->btab[i].addr != addr)
        i = (i + 1) & (HBG_BTAB_SIZE - 1);
    return &r->btab[i];
}

/* The Definition image behind a def table entry of this pass, for
 * graph_upload. */
static inline const hbg_def_header *hbg__def_image(const hbg_orch *o, uint32_t deftab_index)
{
    return o->graph->defs[o->graph->deftab_entry[deftab_index]].img;
}

/* The task memo's replays (replaymemo.c, orch/taskmemo.h): whether the
 * replay of e at the next window slot repeats the last pass's there, and
 * then it is made (*id set); and the note of one made the full way, from
 * `at`. `stamp`: the stamp of the bound the boundary's tensors came from,
 * as the call read it, or 0 for a boundary passed as such. */
bool hbg__replay_memo_hit(hbg_orch *o, hbg__def_entry *e, const hbg_boundary *b, uint64_t stamp, hbg_task_id *id);
void hbg__replay_memo_note(hbg_orch *o, const hbg__def_entry *e, const hbg_boundary *b, uint64_t stamp, uint32_t tid,
                           hbg__memo_at at);

#endif
