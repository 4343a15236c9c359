/* The arena layout and the packing of live prefixes.
 *
 * The host mirror keeps each section in its own worst-case array; the
 * device gets them back to back, each only as long as this pass filled it,
 * at offsets recorded in the header. Sections start on 64-byte boundaries
 * so every struct is aligned wherever the arena lands.
 */
#include <string.h>

#include "bind/bind_internal.h"

#define A64(x) (((x) + 63) & ~(uint64_t)63)

void hbg_arena_layout(const hbg_orch *o, uint32_t rank, uint32_t nranks, uint64_t pass, hbg_layout *l)
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
        [HBG_SEC_TASKS] = {o->ntasks, sizeof(hbg_img_task)},
        [HBG_SEC_FANINS] = {o->nfanin, sizeof(uint32_t)},
        [HBG_SEC_TENSORS] = {o->ntensor, sizeof(hbg_tensor)},
        [HBG_SEC_SCALARS] = {o->nscalar, sizeof(uint64_t)},
        [HBG_SEC_PREDS] = {o->npred, sizeof(hbg_img_pred)},
        [HBG_SEC_FLAGS] = {o->ntasks, sizeof(uint32_t)},
        [HBG_SEC_REPLAYS] = {o->nreplay, sizeof(hbg_img_replay)},
        [HBG_SEC_BTENSORS] = {o->nbtensor, sizeof(hbg_img_btensor)},
        [HBG_SEC_BSCALARS] = {o->nbscalar, sizeof(uint64_t)},
        [HBG_SEC_DEFTAB] = {o->ndeftab, sizeof(hbg_img_def)},
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

uint64_t hbg_arena_pack_image(const hbg_orch *o, const hbg_layout *l, unsigned char *arena)
{
    const hbg_img_section *s = l->h.sec;
    put(arena, &s[HBG_SEC_TASKS], o->tasks);
    put(arena, &s[HBG_SEC_FANINS], o->fanins);
    put(arena, &s[HBG_SEC_TENSORS], o->tensors);
    put(arena, &s[HBG_SEC_SCALARS], o->scalars);
    put(arena, &s[HBG_SEC_PREDS], o->preds);
    /* Completion flags start clear, except for tasks the host completed. */
    uint32_t *flags = (uint32_t *)(void *)(arena + s[HBG_SEC_FLAGS].off);
    for (uint32_t i = 0; i < o->ntasks; i++)
        flags[i] = o->tasks[i].kind == HBG_TASK_ALLOC;
    return l->image_bytes;
}

uint64_t hbg_arena_pack_subs(const hbg_orch *o, const hbg_layout *l, unsigned char *arena)
{
    const hbg_img_section *s = l->h.sec;
    put(arena, &s[HBG_SEC_REPLAYS], o->replays);
    put(arena, &s[HBG_SEC_BTENSORS], o->btensors);
    put(arena, &s[HBG_SEC_BSCALARS], o->bscalars);
    put(arena, &s[HBG_SEC_DEFTAB], o->deftab);
    return l->subs_bytes;
}
