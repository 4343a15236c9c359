/* The task memo: a submit that repeats the last pass's, answered from it.
 *
 * A decode step submits the same kernel tasks on the same views pass after
 * pass. A task's record in the image (its header, tensors, scalars and
 * fanins) is a function of what the caller passed and of the state the
 * submit met: the window's and the heap's fill, and the tensor map. The
 * tensor map's journal already knows when the map is in the state it was
 * in at the same point of the last pass (it is *following*, tensormap.h);
 * the image's fill and the heap's are two counters. So when, at window
 * slot n,
 *   - the last pass put a kernel task at slot n and noted it here,
 *   - the map follows its journal at the call where that task's calls
 *     began, and the heap is filled to where it was then,
 *   - the image's sections are filled to the offsets the record at slot n
 *     names (the host mirror still holds the last pass's records: a pass
 *     rewrites them in place and nothing else touches them), and
 *   - the caller's task equals that record byte for byte (directions,
 *     tensors, scalars, explicit dependencies, the predicate, whose
 *     tensor the memo keeps beside the record: the image keeps only its
 *     word's address),
 * then validating and inferring it again would write the bytes that are
 * already there. The memo compares instead: the record is kept, the counts
 * move past it, an allocating argument gets the buffer it got last pass,
 * and the map moves past the task's journaled calls exactly as following
 * them would (counts and address filter, tensormap.h). Anything that
 * differs takes the full path, which follows or catches up the journal as
 * before. Nothing is answered from the memo that the full path would not
 * write; the images and the dependencies are the same byte for byte.
 *
 * alloc_tensors is memoized the same way; it makes no map calls, so
 * neither the journal nor its position enter (only the heap's fill), but
 * it too is noted from the second pass on: the cold pass touches no note.
 *
 * Not memoized: tasks inside a Graph body (their scalars come from the
 * boundary), dummies, and any submit in a pass that
 * has rolled the image back (a refused submit may have written past the
 * live counts, over the last pass's records). A pass that failed, a moved
 * heap and a poisoned mirror forget the memo. It lives and dies with the
 * journal: an orchestrator without one (`no_journal`, eager) has none.
 */
#ifndef HBG_ORCH_TASKMEMO_H
#define HBG_ORCH_TASKMEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "hbg/image.h"
#include "hbg/orch.h"
#include "orch/tensormap.h"

/* What slot n's task of the last pass met and did, beyond its record (and,
 * in the node memo, what node n of the last capture did). */
typedef struct hbg__memo {
    union {
        uint64_t dirs[2]; /* a kernel task: 3 bits per argument (21 per word) */
        struct {
            uint32_t gen;   /* a replay: its Definition entry's gen (replaymemo.c) */
            uint64_t bound; /* and its bound's stamp, 0 for a boundary passed as such */
        } r;
    } u;
    uint64_t heap0, heap1;   /* heap fill before and after */
    uint32_t stamp;          /* the pass (node memo: capture) that noted it, low 32 bits */
    hbg__tmap_jspan j;       /* its calls in the map's journal */
    uint16_t ndeps;          /* explicit dependencies: the first fanins */
    uint8_t infer;           /* inference was on (no MANUAL scope open) */
} hbg__memo;

_Static_assert(sizeof(hbg__memo) == 64, "a note is one cache line");

/* Where the journal and the heap stand before a submit, for the notes. */
typedef struct hbg__memo_at {
    uint32_t jat, jrep; /* hbg__tmap_span_mark */
    uint64_t heap;
    bool ok; /* there is a memo, and the journal is keeping calls */
} hbg__memo_at;

/* The steps every memo shares, on the map and heap it keeps notes for
 * (the orchestrator's, or the recorder's for the node memo). */

/* Where the map's journal and the heap stand before a submit. ok: the
 * journal keeps calls (the caller adds whether it keeps notes at all). */
static inline hbg__memo_at hbg__memo_mark(const hbg__tmap *map, uint64_t heap)
{
    hbg__memo_at at = {.heap = heap, .ok = hbg__tmap_span_kept(map)};
    hbg__tmap_span_mark(map, &at.jat, &at.jrep);
    return at;
}

/* Fills a note's journal span, heap fills, stamp and inference flag from
 * `at` and the state now; false (and no note) when the journal stopped
 * keeping calls meanwhile. */
static inline bool hbg__memo_seal(const hbg__tmap *map, hbg__memo *m, hbg__memo_at at, uint64_t heap1, uint64_t stamp,
                                  bool infer)
{
    hbg__tmap_jspan j = {.at = at.jat, .rep = at.jrep};
    if (!at.ok || !hbg__tmap_span_close(map, &j))
        return false;
    m->j = j;
    m->heap0 = at.heap;
    m->heap1 = heap1;
    m->stamp = (uint32_t)stamp;
    m->infer = infer;
    return true;
}

/* Whether the map and heap are where they were when the note began. */
static inline bool hbg__memo_meets(const hbg__memo *m, const hbg__tmap *map, uint64_t heap, bool infer)
{
    return hbg__tmap_span_next(map, &m->j) && m->heap0 == heap && m->infer == infer;
}

hbg_status hbg__memo_init(hbg_orch *o);
void hbg__memo_free(hbg_orch *o);
/* Forgets every note (before the next pass). */
void hbg__memo_forget(hbg_orch *o);
/* At a pass's start: forgets the notes when the heap moved. */
void hbg__memo_begin_pass(hbg_orch *o, uint64_t heap_base);

/* The parts a kernel task's and a replay's memo share. */
hbg__memo_at hbg__memo_here(const hbg_orch *o);
/* Whether slot n's note is from the last pass, which is still trusted,
 * and the map and heap are where they were when it began. */
bool hbg__memo_usable(const hbg_orch *o, uint32_t n);
/* Whether the n explicit dependencies lead slot d's fanins (they do unless
 * one repeats; a note is made only then, and a hit compares them there). */
bool hbg__memo_deps_lead(const hbg_orch *o, const hbg_img_task *d, const hbg_task_id *deps, uint32_t n);
/* Fills a note's journal span, heap fills and pass, from `at`; false (and
 * no note) when the journal stopped keeping calls meanwhile. */
bool hbg__memo_close(hbg_orch *o, hbg__memo *m, hbg__memo_at at);
/* Makes the answer of slot n's note: the heap and the window move past it,
 * the map past its journaled calls as following them would, *id = n. */
void hbg__memo_answer(hbg_orch *o, hbg__memo *m, hbg_task_id *id);

/* After kernel task `tid` was submitted the full way, from `at`.
 * `stamp`: the stamp of the bound its arguments came from, as the submit
 * read it, or 0 for arguments passed as such. */
void hbg__memo_note(hbg_orch *o, const hbg_task *t, uint64_t stamp, uint32_t tid, hbg__memo_at at);
/* True when the task repeats slot ntasks's of the last pass, and then it is
 * submitted: *id is set, allocating arguments name their buffers. A task
 * whose arguments came from a bound is compared by its stamp, not by
 * its arguments' bytes: then t's own list is empty and `ntensors` is the
 * bound's count (else t->ntensors), and the list is never read. */
bool hbg__memo_hit(hbg_orch *o, const hbg_task *t, uint32_t ntensors, uint64_t stamp, hbg_task_id *id);

/* The same for alloc_tensors, which makes no map calls: its record is a
 * function of the descriptions and the heap's fill alone. */
void hbg__memo_note_alloc(hbg_orch *o, uint32_t tid, uint64_t heap0);
bool hbg__memo_hit_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);

#endif
