/* dsv4 kernels: synthetic, exact, and sensitive to every input.
 *
 * The generic kernel digests every IN tensor (all of it, in order) together
 * with its salt and scalars, then writes each output element as a hash of
 * that digest, its index, the matching element of the first input and, for
 * INOUT, the element's old value. Reading a stale or half-written input,
 * skipping a task, binding a wrong view or scalar in a replay: each changes
 * the digest and so every word downstream. Blocks split the *outputs* only,
 * so no block reads what another block of the same task writes.
 *
 * The MoE and head kernels do real work on top: routing picks the top-K
 * experts, dispatch packs tokens and pushes them into the peer rank's
 * window, permute lays out each local expert's rows and counts (the
 * predicate words), merge finds each token's row in the owning rank's
 * expert output and sums it with the routing weight.
 */
#include <string.h>

#include "dsv4/dsv4.h"
#include "hbg/kernel.h"
#include "hbg/xrank.h"

static inline uint32_t mix(uint32_t h, uint32_t v)
{
    v *= 0xcc9e2d51u;
    v = (v << 15) | (v >> 17);
    h ^= v * 0x1b873593u;
    h = (h << 13) | (h >> 19);
    return h * 5u + 0xe6546b64u;
}

static inline uint32_t fmix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static bool contiguous(const hbg_tensor *t)
{
    int64_t s = 1;
    for (int d = (int)t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != s)
            return false;
        s *= t->shape[d];
    }
    return true;
}

/* Element j (row-major over the view's shape) of a u32 view. */
static uint32_t *at(const hbg_tensor *t, uint64_t j)
{
    uint32_t *base = hbg_kernel_ptr(t);
    int64_t off = 0;
    for (int d = (int)t->ndim - 1; d >= 0; d--) {
        off += (int64_t)(j % t->shape[d]) * t->strides[d];
        j /= t->shape[d];
    }
    return base + off;
}

static uint32_t digest(uint32_t h, const hbg_tensor *t)
{
    uint64_t n = hbg_tensor_numel(t);
    h = mix(h, (uint32_t)n);
    if (contiguous(t)) {
        const uint32_t *p = hbg_kernel_ptr(t);
        for (uint64_t j = 0; j < n; j++)
            h = mix(h, p[j]);
    } else {
        for (uint64_t j = 0; j < n; j++)
            h = mix(h, *at(t, j));
    }
    return h;
}

static bool all_u32(const hbg_kernel_args *a)
{
    for (uint32_t i = 0; i < a->ntensors; i++)
        if (a->tensors[i].dtype != HBG_U32)
            return false;
    return true;
}

/* The digest of salt, scalars and IN tensors shared by every block. */
static bool parse(const hbg_kernel_args *a, unsigned *nin, unsigned *nio, unsigned *nout, uint32_t *d)
{
    if (a->nscalars < 1 || !all_u32(a))
        return false;
    uint64_t desc = a->scalars[0];
    *nin = desc & 0xff, *nio = (desc >> 8) & 0xff, *nout = (desc >> 16) & 0xff;
    if (*nin + *nio + *nout != a->ntensors)
        return false;
    uint32_t h = mix(0x9747b28cu, (uint32_t)(desc >> 32));
    for (uint32_t s = 1; s < a->nscalars; s++)
        h = mix(mix(h, (uint32_t)a->scalars[s]), (uint32_t)(a->scalars[s] >> 32));
    for (unsigned i = 0; i < *nin; i++)
        h = digest(h, &a->tensors[i]);
    *d = h;
    return true;
}

static int k_gen(const hbg_kernel_args *a)
{
    unsigned nin, nio, nout;
    uint32_t d;
    if (!parse(a, &nin, &nio, &nout, &d))
        return 1;
    const hbg_tensor *first = nin ? &a->tensors[0] : NULL;
    uint64_t n0 = first ? hbg_tensor_numel(first) : 0;
    for (unsigned q = 0; q < nio + nout; q++) {
        const hbg_tensor *t = &a->tensors[nin + q];
        uint64_t n = hbg_tensor_numel(t);
        uint64_t lo = n * a->block / a->nblocks, hi = n * (a->block + 1) / a->nblocks;
        uint32_t dq = mix(d, q);
        for (uint64_t j = lo; j < hi; j++) {
            uint32_t *p = at(t, j);
            uint32_t v = mix(dq, (uint32_t)j);
            if (n0)
                v = mix(v, *at(first, j % n0));
            if (q < nio)
                v = mix(v, *p);
            *p = fmix(v);
        }
    }
    return 0;
}

/* The AIV half of a MIX block: rewrites what the AIC half of the same
 * block just wrote, so running the halves out of order shows. */
static int k_mix_aiv(const hbg_kernel_args *a)
{
    if (a->nscalars < 1 || !all_u32(a))
        return 1;
    uint64_t desc = a->scalars[0];
    unsigned nin = desc & 0xff, nio = (desc >> 8) & 0xff, nout = (desc >> 16) & 0xff;
    if (nin + nio + nout != a->ntensors)
        return 1;
    uint32_t salt = (uint32_t)(desc >> 32) * 0x9e3779b9u;
    for (unsigned q = 0; q < nio + nout; q++) {
        const hbg_tensor *t = &a->tensors[nin + q];
        uint64_t n = hbg_tensor_numel(t);
        uint64_t lo = n * a->block / a->nblocks, hi = n * (a->block + 1) / a->nblocks;
        for (uint64_t j = lo; j < hi; j++) {
            uint32_t *p = at(t, j);
            *p = fmix(*p ^ salt ^ (uint32_t)j);
        }
    }
    return 0;
}

/* Top-K experts per token: by gate logit, or (hash-routed layers) by a
 * hash of the token id and the layer. Ties go to the lower expert. */
static int k_route(const hbg_kernel_args *a)
{
    unsigned nin, nio, nout;
    uint32_t d;
    if (!parse(a, &nin, &nio, &nout, &d) || a->nscalars < 2 || nout != 1 || nio != 0)
        return 1;
    bool hash = (a->scalars[0] >> 24) & DSV4_FLAG_HASH_ROUTE;
    const hbg_tensor *logits = &a->tensors[0], *topk = &a->tensors[nin];
    if (hbg_tensor_numel(logits) != DSV4_T * DSV4_E || hbg_tensor_numel(topk) != DSV4_T * DSV4_K ||
        (hash && (nin != 2 || hbg_tensor_numel(&a->tensors[1]) != DSV4_T)))
        return 1;
    if (a->block != 0)
        return 0;
    uint32_t layer = (uint32_t)a->scalars[1];
    for (uint32_t t = 0; t < DSV4_T; t++) {
        uint32_t score[DSV4_E];
        bool taken[DSV4_E] = {false};
        uint32_t tok = hash ? *at(&a->tensors[1], t) : 0;
        for (uint32_t x = 0; x < DSV4_E; x++)
            score[x] = hash ? fmix(mix(mix(0x51ed270bu, tok), layer * DSV4_E + x)) : *at(logits, t * DSV4_E + x);
        for (uint32_t k = 0; k < DSV4_K; k++) {
            int best = -1;
            for (uint32_t x = 0; x < DSV4_E; x++)
                if (!taken[x] && (best < 0 || score[x] > score[best]))
                    best = (int)x;
            taken[best] = true;
            *at(topk, t * DSV4_K + k) = (uint32_t)best;
        }
    }
    return 0;
}

/* Packs [quantized tokens | top-K ids] for the peer and counts this rank's
 * assignments into the running expert load. */
static int k_dispatch_meta(const hbg_kernel_args *a)
{
    if (a->ntensors != 4 || !all_u32(a))
        return 1;
    const hbg_tensor *xq = &a->tensors[0], *topk = &a->tensors[1], *load = &a->tensors[2], *pkt = &a->tensors[3];
    if (hbg_tensor_numel(xq) != DSV4_T * DSV4_D || hbg_tensor_numel(topk) != DSV4_T * DSV4_K ||
        hbg_tensor_numel(load) != DSV4_E || hbg_tensor_numel(pkt) != DSV4_T * (DSV4_D + DSV4_K))
        return 1;
    if (a->block != 0)
        return 0;
    for (uint32_t j = 0; j < DSV4_T * DSV4_D; j++)
        *at(pkt, j) = *at(xq, j);
    for (uint32_t j = 0; j < DSV4_T * DSV4_K; j++) {
        uint32_t x = *at(topk, j);
        if (x >= DSV4_E)
            return 1;
        *at(pkt, DSV4_T * DSV4_D + j) = x;
        *at(load, x) += 1;
    }
    return 0;
}

static unsigned char *slot_of(hbg_xrank *x, uint32_t rank, uint64_t key)
{
    unsigned char *w = hbg_xrank_window(x, rank);
    if (!w || hbg_xrank_window_bytes(x) < DSV4_WINDOW_BYTES)
        return NULL;
    return w + (key % DSV4_SLOTS) * DSV4_SLOT_BYTES;
}

/* scalars: desc, layer, epoch, phase. The exchange key is unique per
 * (epoch, phase), and the epoch never repeats in the life of the ranks. */
static bool exchange_key(const hbg_kernel_args *a, uint64_t *key)
{
    if (a->nscalars != 4 || a->ntensors != 2 || !all_u32(a) || !a->services || a->nranks != DSV4_RANKS)
        return false;
    *key = a->scalars[2] * 2 + a->scalars[3];
    return true;
}

static int k_push(const hbg_kernel_args *a)
{
    uint64_t key;
    if (!exchange_key(a, &key))
        return -HBG_E_STATE;
    hbg_xrank *x = a->services;
    uint32_t peer = (a->rank + 1) % a->nranks;
    const hbg_tensor *src = &a->tensors[0];
    uint64_t n = hbg_tensor_numel(src);
    uint32_t *dst = (uint32_t *)(void *)slot_of(x, peer, key);
    if (!dst || n * 4 > DSV4_SLOT_BYTES)
        return -HBG_E_INVAL;
    for (uint64_t j = 0; j < n; j++)
        dst[j] = *at(src, j);
    hbg_status st = hbg_xrank_signal(x, peer, key);
    if (st)
        return -(int)st;
    *at(&a->tensors[1], 0) = (uint32_t)n;
    return 0;
}

static int k_wait(const hbg_kernel_args *a)
{
    uint64_t key;
    if (!exchange_key(a, &key))
        return -HBG_E_STATE;
    hbg_status st = hbg_xrank_wait(a->services, a->rank, key, a->nranks - 1);
    if (st)
        return -(int)st;
    *at(&a->tensors[1], 0) = *at(&a->tensors[0], 0);
    return 0;
}

static int k_gather(const hbg_kernel_args *a)
{
    uint64_t key;
    if (!exchange_key(a, &key))
        return -HBG_E_STATE;
    const hbg_tensor *dst = &a->tensors[1];
    uint64_t n = hbg_tensor_numel(dst);
    const uint32_t *src = (const uint32_t *)(const void *)slot_of(a->services, a->rank, key);
    if (!src || n * 4 > DSV4_SLOT_BYTES || *at(&a->tensors[0], 0) != n)
        return -HBG_E_INVAL;
    for (uint64_t j = 0; j < n; j++)
        *at(dst, j) = src[j];
    return 0;
}

/* The packets of both ranks, in rank order. */
static void packets(const hbg_kernel_args *a, const hbg_tensor *own, const hbg_tensor *peer,
                    const hbg_tensor *pk[DSV4_RANKS])
{
    for (uint32_t r = 0; r < DSV4_RANKS; r++)
        pk[r] = r == a->rank ? own : peer;
}

static bool routes_to(const hbg_tensor *pkt, uint32_t t, uint32_t x)
{
    for (uint32_t k = 0; k < DSV4_K; k++)
        if (*at(pkt, DSV4_T * DSV4_D + t * DSV4_K + k) == x)
            return true;
    return false;
}

/* Rows of local expert le: every (rank, token) routed to it, in that
 * order; the rest zero. counts[le] is the predicate word of its tasks. */
static int k_permute(const hbg_kernel_args *a)
{
    if (a->ntensors != 5 || a->nscalars < 2 || !all_u32(a) || a->rank >= DSV4_RANKS)
        return 1;
    const hbg_tensor *recv = &a->tensors[2], *counts = &a->tensors[3], *y = &a->tensors[4];
    if (hbg_tensor_numel(&a->tensors[0]) != DSV4_T * (DSV4_D + DSV4_K) ||
        hbg_tensor_numel(&a->tensors[1]) != DSV4_T * (DSV4_D + DSV4_K) ||
        hbg_tensor_numel(recv) != DSV4_EL * DSV4_R * DSV4_D || hbg_tensor_numel(counts) != DSV4_EL ||
        hbg_tensor_numel(y) != DSV4_EL * DSV4_R * DSV4_D)
        return 1;
    if (a->block != 0)
        return 0;
    const hbg_tensor *pk[DSV4_RANKS];
    packets(a, &a->tensors[0], &a->tensors[1], pk);
    uint32_t layer = (uint32_t)a->scalars[1];
    for (uint32_t le = 0; le < DSV4_EL; le++) {
        uint32_t x = a->rank * DSV4_EL + le, row = 0;
        for (uint32_t r = 0; r < DSV4_RANKS; r++)
            for (uint32_t t = 0; t < DSV4_T; t++) {
                if (!routes_to(pk[r], t, x))
                    continue;
                for (uint32_t d = 0; d < DSV4_D; d++)
                    *at(recv, ((uint64_t)le * DSV4_R + row) * DSV4_D + d) = *at(pk[r], t * DSV4_D + d);
                row++;
            }
        *at(counts, le) = row;
        for (; row < DSV4_R; row++)
            for (uint32_t d = 0; d < DSV4_D; d++)
                *at(recv, ((uint64_t)le * DSV4_R + row) * DSV4_D + d) = 0;
        /* What an expert that does not run leaves behind. */
        for (uint32_t j = 0; j < DSV4_R * DSV4_D; j++)
            *at(y, (uint64_t)le * DSV4_R * DSV4_D + j) = fmix(mix(mix(0x2545f491u, layer), le * DSV4_R * DSV4_D + j));
    }
    return 0;
}

/* out[t] = sum over t's experts of weight * (that expert's row for t),
 * each row read where its owning rank's expert wrote it, then folded with
 * a digest of both ranks' whole expert outputs, so an expert that ran
 * when it should not have (or did not when it should) shows too. */
static int k_merge(const hbg_kernel_args *a)
{
    if (a->ntensors != 6 || !all_u32(a) || a->rank >= DSV4_RANKS)
        return 1;
    const hbg_tensor *wts = &a->tensors[2], *y = &a->tensors[3], *py = &a->tensors[4], *out = &a->tensors[5];
    if (hbg_tensor_numel(wts) != DSV4_T * DSV4_K || hbg_tensor_numel(y) != DSV4_EL * DSV4_R * DSV4_D ||
        hbg_tensor_numel(py) != DSV4_EL * DSV4_R * DSV4_D || hbg_tensor_numel(out) != DSV4_T * DSV4_D)
        return 1;
    if (a->block != 0)
        return 0;
    const hbg_tensor *pk[DSV4_RANKS];
    packets(a, &a->tensors[0], &a->tensors[1], pk);
    uint32_t dy = digest(digest(0x68e31da4u, y), py);
    for (uint32_t t = 0; t < DSV4_T; t++) {
        uint32_t acc[DSV4_D] = {0};
        for (uint32_t k = 0; k < DSV4_K; k++) {
            uint32_t x = *at(pk[a->rank], DSV4_T * DSV4_D + t * DSV4_K + k);
            uint32_t owner = x / DSV4_EL, le = x % DSV4_EL, p = 0;
            if (owner >= DSV4_RANKS)
                return 1;
            for (uint32_t r = 0; r < DSV4_RANKS; r++)
                for (uint32_t u = 0; u < DSV4_T; u++)
                    if ((r < a->rank || (r == a->rank && u < t)) && routes_to(pk[r], u, x))
                        p++;
            const hbg_tensor *src = owner == a->rank ? y : py;
            uint32_t w = *at(wts, t * DSV4_K + k);
            for (uint32_t d = 0; d < DSV4_D; d++)
                acc[d] += w * *at(src, ((uint64_t)le * DSV4_R + p) * DSV4_D + d);
        }
        for (uint32_t d = 0; d < DSV4_D; d++)
            *at(out, t * DSV4_D + d) = fmix(acc[d] ^ dy ^ (t * DSV4_D + d));
    }
    return 0;
}

/* Per token: the best of this rank's vocabulary slice, as (value, id). */
static int k_argmax(const hbg_kernel_args *a)
{
    if (a->ntensors != 2 || !all_u32(a))
        return 1;
    const hbg_tensor *lg = &a->tensors[0], *am = &a->tensors[1];
    if (hbg_tensor_numel(lg) != DSV4_T * DSV4_VL || hbg_tensor_numel(am) != DSV4_T * 2)
        return 1;
    if (a->block != 0)
        return 0;
    for (uint32_t t = 0; t < DSV4_T; t++) {
        uint32_t best = 0;
        for (uint32_t c = 1; c < DSV4_VL; c++)
            if (*at(lg, t * DSV4_VL + c) > *at(lg, t * DSV4_VL + best))
                best = c;
        *at(am, t * 2) = *at(lg, t * DSV4_VL + best);
        *at(am, t * 2 + 1) = a->rank * DSV4_VL + best;
    }
    return 0;
}

/* The next token of each sequence: the better of the two ranks' best
 * (ties to the lower id), with digests of the expert load and inputs. */
static int k_sample(const hbg_kernel_args *a)
{
    if (a->ntensors != 4 || !all_u32(a))
        return 1;
    const hbg_tensor *own = &a->tensors[0], *peer = &a->tensors[1], *load = &a->tensors[2], *res = &a->tensors[3];
    if (hbg_tensor_numel(own) != DSV4_T * 2 || hbg_tensor_numel(peer) != DSV4_T * 2 ||
        hbg_tensor_numel(load) != DSV4_E || hbg_tensor_numel(res) != DSV4_T * 4)
        return 1;
    if (a->block != 0)
        return 0;
    uint32_t dl = digest(0x1b56c4e9u, load), dall = digest(digest(dl, own), peer);
    for (uint32_t t = 0; t < DSV4_T; t++) {
        uint32_t v0 = *at(own, t * 2), i0 = *at(own, t * 2 + 1), v1 = *at(peer, t * 2), i1 = *at(peer, t * 2 + 1);
        bool take_peer = v1 > v0 || (v1 == v0 && i1 < i0);
        *at(res, t * 4) = take_peer ? i1 : i0;
        *at(res, t * 4 + 1) = take_peer ? v1 : v0;
        *at(res, t * 4 + 2) = dl;
        *at(res, t * 4 + 3) = fmix(dall ^ t);
    }
    return 0;
}

hbg_status dsv4_register_kernels(hbg_kernel_table *kt)
{
    static const hbg_kernel_def ks[] = {
        {DSV4_K_GEN_AIC, "dsv4.gen_aic", k_gen},
        {DSV4_K_GEN_AIV, "dsv4.gen_aiv", k_gen},
        {DSV4_K_MIX_AIV, "dsv4.mix_aiv", k_mix_aiv},
        {DSV4_K_ROUTE, "dsv4.route", k_route},
        {DSV4_K_DISPATCH_META, "dsv4.dispatch_meta", k_dispatch_meta},
        {DSV4_K_PUSH, "dsv4.push", k_push},
        {DSV4_K_WAIT, "dsv4.wait", k_wait},
        {DSV4_K_GATHER, "dsv4.gather", k_gather},
        {DSV4_K_PERMUTE, "dsv4.permute", k_permute},
        {DSV4_K_MERGE, "dsv4.merge", k_merge},
        {DSV4_K_ARGMAX, "dsv4.argmax", k_argmax},
        {DSV4_K_SAMPLE, "dsv4.sample", k_sample},
    };
    return hbg_kernel_register_all(kt, ks, sizeof ks / sizeof ks[0]);
}
