/* The task image's host mirror: reservation, layout and packing.
 *
 * The host mirror keeps each section in its own worst-case array; the
 * device gets them back to back, each only as long as this pass filled it,
 * at offsets recorded in the header.
 */
#include <stddef.h>
#include <string.h>

#include "hbg/graph.h"
#include "hbg/orch.h"
#include "image/image.h"
#include "util/reserve.h"

/* Each section's worst case for a window of W tasks: per-task limits times
 * the window; the def table holds one entry per cached Definition. The
 * third column is the prefix committed at creation (util/reserve.h): the
 * default, but for the tensor records, which outgrow it first (96 bytes
 * each, several a task: a dsv4 rank's pass writes some 3,400, 330 KB, and
 * past the prefix each new page was a fault in the cold pass). */
#define W ((size_t)im->window)
#define HOT HBG_RESERVE_HOT
#define SECTIONS(X)                                                                \
    X(tasks, W, HOT)                                                               \
    X(fanins, W * HBG_MAX_FANINS, HOT)                                             \
    X(tensors, W * HBG_MAX_TASK_TENSORS, (size_t)1 << 20)                          \
    X(scalars, W * HBG_MAX_TASK_SCALARS, HOT)                                      \
    X(preds, W, HOT)                                                               \
    X(replays, W, HOT)                                                             \
    X(btensors, W * HBG_MAX_BOUNDARY_TENSORS, HOT)                                 \
    X(bscalars, W * HBG_MAX_BOUNDARY_SCALARS, HOT)                                 \
    X(deftab, HBG_DEF_CACHE_CAP, HOT)

hbg_status hbg__image_create(hbg__image *im, uint32_t window)
{
    memset(im, 0, sizeof *im);
    im->window = window;
    bool ok = true;
#define RESERVE(name, n, hot) ok = ok && (im->name = hbg__reserve_hot((n) * sizeof *im->name, hot)) != NULL;
    SECTIONS(RESERVE)
#undef RESERVE
    if (!ok) {
        hbg__image_destroy(im);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void hbg__image_destroy(hbg__image *im)
{
#define UNRESERVE(name, n, hot)                                                    \
    hbg__unreserve(im->name, (n) * sizeof *im->name);                              \
    im->name = NULL;
    SECTIONS(UNRESERVE)
#undef UNRESERVE
}

void hbg__image_reset(hbg__image *im)
{
    im->ntasks = im->nfanin = im->ntensor = im->nscalar = im->npred = 0;
    im->nreplay = im->nbtensor = im->nbscalar = im->ndeftab = 0;
    im->rollbacks = 0;
}

#define A64(x) (((x) + (HBG_IMG_ALIGN - 1)) & ~(uint64_t)(HBG_IMG_ALIGN - 1))

void hbg__image_layout(const hbg__image *im, uint32_t rank, uint32_t nranks, uint64_t pass, hbg__layout *l)
{
    hbg_img_header *h = &l->h;
    memset(h, 0, sizeof *h);
    h->magic = HBG_IMG_MAGIC;
    h->version = HBG_IMG_VERSION;
    h->rank = rank;
    h->nranks = nranks;
    h->pass = pass;
    const struct {
        uint32_t count, elem;
    } sec[HBG_SEC_COUNT] = {
        [HBG_SEC_TASKS] = {im->ntasks, sizeof(hbg_img_task)},
        [HBG_SEC_FANINS] = {im->nfanin, sizeof(uint32_t)},
        [HBG_SEC_TENSORS] = {im->ntensor, sizeof(hbg_tensor)},
        [HBG_SEC_SCALARS] = {im->nscalar, sizeof(uint64_t)},
        [HBG_SEC_PREDS] = {im->npred, sizeof(hbg_img_pred)},
        [HBG_SEC_FLAGS] = {im->ntasks, sizeof(uint32_t)},
        [HBG_SEC_REPLAYS] = {im->nreplay, sizeof(hbg_img_replay)},
        [HBG_SEC_BTENSORS] = {im->nbtensor, sizeof(hbg_img_btensor)},
        [HBG_SEC_BSCALARS] = {im->nbscalar, sizeof(uint64_t)},
        [HBG_SEC_DEFTAB] = {im->ndeftab, sizeof(hbg_img_def)},
    };
    uint64_t off = l->header_bytes = A64(sizeof *h);
    h->image_off = off;
    for (int s = 0; s < HBG_SEC_COUNT; s++) {
        if (s == HBG_SEC_REPLAYS) {
            h->image_bytes = off - h->image_off;
            h->subs_off = off;
        }
        h->sec[s] = (hbg_img_section){.off = off, .count = sec[s].count, .elem = sec[s].elem};
        off = A64(off + (uint64_t)sec[s].count * sec[s].elem);
    }
    h->subs_bytes = off - h->subs_off;
    h->total_bytes = off;
    l->image_bytes = h->image_bytes;
    l->subs_bytes = h->subs_bytes;
    l->total = off;
}

static void put(unsigned char *arena, const hbg_img_section *s, const void *src)
{
    memcpy(arena + s->off, src, (size_t)s->count * s->elem);
}

uint64_t hbg__image_pack_tasks(const hbg__image *im, const hbg__layout *l, unsigned char *arena)
{
    const hbg_img_section *s = l->h.sec;
    put(arena, &s[HBG_SEC_TASKS], im->tasks);
    put(arena, &s[HBG_SEC_FANINS], im->fanins);
    put(arena, &s[HBG_SEC_TENSORS], im->tensors);
    put(arena, &s[HBG_SEC_SCALARS], im->scalars);
    put(arena, &s[HBG_SEC_PREDS], im->preds);
    /* Completion flags start clear, except for tasks the host completed. */
    uint32_t *flags = (uint32_t *)(void *)(arena + s[HBG_SEC_FLAGS].off);
    for (uint32_t i = 0; i < im->ntasks; i++)
        flags[i] = im->tasks[i].kind == HBG_TASK_ALLOC;
    return l->image_bytes;
}

uint64_t hbg__image_pack_subs(const hbg__image *im, const hbg__layout *l, unsigned char *arena)
{
    const hbg_img_section *s = l->h.sec;
    put(arena, &s[HBG_SEC_REPLAYS], im->replays);
    put(arena, &s[HBG_SEC_BTENSORS], im->btensors);
    put(arena, &s[HBG_SEC_BSCALARS], im->bscalars);
    put(arena, &s[HBG_SEC_DEFTAB], im->deftab);
    return l->subs_bytes;
}

void hbg__image_poison(hbg__image *im, unsigned char pattern)
{
    memset(im->tasks, pattern, (size_t)im->ntasks * sizeof *im->tasks);
    memset(im->fanins, pattern, (size_t)im->nfanin * sizeof *im->fanins);
    memset(im->tensors, pattern, (size_t)im->ntensor * sizeof *im->tensors);
    memset(im->scalars, pattern, (size_t)im->nscalar * sizeof *im->scalars);
    memset(im->preds, pattern, (size_t)im->npred * sizeof *im->preds);
    memset(im->replays, pattern, (size_t)im->nreplay * sizeof *im->replays);
    memset(im->btensors, pattern, (size_t)im->nbtensor * sizeof *im->btensors);
    memset(im->bscalars, pattern, (size_t)im->nbscalar * sizeof *im->bscalars);
    memset(im->deftab, pattern, (size_t)im->ndeftab * sizeof *im->deftab);
}
