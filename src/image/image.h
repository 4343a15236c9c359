/* The host mirror of the task image: one worst-case array per arena
 * section, appended to by the orchestrator (tasks, fanins, tensors,
 * scalars, predicates) and by Graphs (replays, boundary tensors and
 * scalars, the def table), then packed into the arena by bind.
 *
 * Everything is reserved when the mirror is created, sized from the task
 * window, so an append never checks capacity and never allocates: the
 * limits that make that true are checked by the callers before they
 * append (window, per-task counts, boundary width). Arrays are reserved,
 * not touched: pages a pass never reaches are never committed, so a
 * 16384-task window costs what a pass uses.
 *
 * The arena layout itself is the device ABI, include/hbg/image.h.
 */
#ifndef HBG_IMAGE_IMAGE_H
#define HBG_IMAGE_IMAGE_H

#include <stdint.h>

#include "hbg/image.h"
#include "hbg/status.h"

/* The def table's capacity: Definitions one pass can replay, as many as a
 * device accepts. */
#define HBG_DEF_CACHE_CAP HBG_IMG_MAX_DEFS

typedef struct hbg__image {
    uint32_t window;  /* tasks; every other capacity follows from it */
    /* live counts */
    uint32_t ntasks, nfanin, ntensor, nscalar, npred, nreplay, nbtensor, nbscalar, ndeftab;
    /* this pass's refused appends (rolled back, or a Graph call's scan
     * that failed): each may have written past the live counts, over the
     * last pass's records (orch/taskmemo.h) */
    uint32_t rollbacks;
    hbg_img_task *tasks;
    uint32_t *fanins;
    hbg_tensor *tensors;
    uint64_t *scalars;
    hbg_img_pred *preds;
    hbg_img_replay *replays;
    hbg_img_btensor *btensors;
    uint64_t *bscalars;
    hbg_img_def *deftab;
} hbg__image;

/* The live lengths at one point: what a failed submit rolls back to. */
typedef struct hbg__image_mark {
    uint32_t ntasks, nfanin, ntensor, nscalar, npred;
} hbg__image_mark;

/* The arena layout of one pass: the header and where each section goes. */
typedef struct hbg__layout {
    uint64_t header_bytes;
    uint64_t image_bytes, subs_bytes, total;
    hbg_img_header h;
} hbg__layout;

hbg_status hbg__image_create(hbg__image *im, uint32_t window);
void hbg__image_destroy(hbg__image *im);
/* Empties every section for a new pass. */
void hbg__image_reset(hbg__image *im);

static inline hbg__image_mark hbg__image_mark_now(const hbg__image *im)
{
    return (hbg__image_mark){im->ntasks, im->nfanin, im->ntensor, im->nscalar, im->npred};
}

static inline void hbg__image_rollback(hbg__image *im, hbg__image_mark m)
{
    im->ntasks = m.ntasks, im->nfanin = m.nfanin, im->ntensor = m.ntensor;
    im->nscalar = m.nscalar, im->npred = m.npred;
    im->rollbacks++;
}

/* Lays the live sections out back to back, each on an HBG_IMG_ALIGN
 * boundary, after the header. */
void hbg__image_layout(const hbg__image *im, uint32_t rank, uint32_t nranks, uint64_t pass, hbg__layout *l);
/* Copies the task image (TASKS..FLAGS) into `arena` at the layout's
 * offsets; completion flags start clear except for host-completed tasks.
 * Returns the bytes it covers. */
uint64_t hbg__image_pack_tasks(const hbg__image *im, const hbg__layout *l, unsigned char *arena);
/* The same for the submission block (REPLAYS..DEFTAB). */
uint64_t hbg__image_pack_subs(const hbg__image *im, const hbg__layout *l, unsigned char *arena);
/* Overwrites the live prefix of every section with `pattern`. */
void hbg__image_poison(hbg__image *im, unsigned char pattern);

#endif
