#include "tools/hmap.h"

#include <string.h>

void hmap_init(hmap *m, unsigned kw)
{
    memset(m, 0, sizeof *m);
    m->kw = kw < 1 ? 1 : kw > HMAP_MAXKW ? HMAP_MAXKW : kw;
}

void hmap_free(hmap *m)
{
    unsigned kw = m->kw;
    hm_free(&m->mem);
    hmap_init(m, kw);
}

uint64_t hmap_hash(const uint64_t *key, unsigned kw)
{
    /* independent multiplies: the pass table is probed once per line that
     * misses the reader's one-entry cache */
    uint64_t h = key[0] * 0x9e3779b97f4a7c15ull;
    if (kw > 1)
        h ^= (key[1] + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    if (kw > 2)
        h ^= (key[2] + 0x51afd7ed558ccd1dull) * 0x94d049bb133111ebull;
    /* a multiply carries low bits only upward: keys that are multiples of
     * 2^48 (a hostile pid or inv) left the low index bits constant, and
     * linear probing made their lines quadratic. MurmurHash3's fmix64
     * finaliser makes every output bit depend on every input bit. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static bool key_eq(const uint64_t *a, const uint64_t *b, unsigned kw)
{
    switch (kw) {
    case 1: return a[0] == b[0];
    case 2: return a[0] == b[0] && a[1] == b[1];
    default: return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
    }
}

/* The first empty slot of key's probe in a table of cap slots. */
static size_t free_slot(const uint32_t *val, size_t cap, uint64_t h)
{
    size_t j = (size_t)h & (cap - 1);
    while (val[j])
        j = (j + 1) & (cap - 1);
    return j;
}

static bool grow_to(hmap *m, size_t nc)
{
    size_t slot = m->kw * sizeof(uint64_t) + sizeof(uint32_t);
    hm_block nb;
    if (nc > SIZE_MAX / slot || hm_alloc(&nb, nc * slot) != 0)
        return false;
    uint64_t *nk = nb.p;
    uint32_t *nv = (uint32_t *)(nk + (size_t)m->kw * nc);
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->val[i])
            continue;
        const uint64_t *k = &m->key[(size_t)m->kw * i];
        size_t j = free_slot(nv, nc, hmap_hash(k, m->kw));
        memcpy(&nk[(size_t)m->kw * j], k, m->kw * sizeof *k);
        nv[j] = m->val[i];
        n++;
    }
    hm_free(&m->mem);
    m->mem = nb;
    m->key = nk;
    m->val = nv;
    m->cap = nc;
    m->n = n; /* slots made but left at 0 are dropped here */
    return true;
}

bool hmap_reserve(hmap *m, size_t n)
{
    size_t nc = m->cap ? m->cap : HMAP_MINCAP;
    while (n > nc / 2) {
        if (nc > SIZE_MAX / 4)
            return false;
        nc *= 2;
    }
    return nc == m->cap || grow_to(m, nc);
}

uint32_t hmap_get(const hmap *m, const uint64_t *key)
{
    if (!m->cap)
        return 0;
    size_t j = (size_t)hmap_hash(key, m->kw) & (m->cap - 1);
    while (m->val[j]) {
        if (key_eq(&m->key[(size_t)m->kw * j], key, m->kw))
            return m->val[j];
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

uint32_t *hmap_put_eq(hmap *m, const uint64_t *key, bool (*eq)(void *ctx, uint32_t val), void *ctx)
{
    if ((m->n + 1) * 2 > m->cap && !hmap_reserve(m, m->n + 1))
        return NULL;
    size_t j = (size_t)hmap_hash(key, m->kw) & (m->cap - 1);
    while (m->val[j]) {
        if (key_eq(&m->key[(size_t)m->kw * j], key, m->kw) && (!eq || eq(ctx, m->val[j])))
            return &m->val[j];
        j = (j + 1) & (m->cap - 1);
    }
    memcpy(&m->key[(size_t)m->kw * j], key, m->kw * sizeof *key);
    m->n++;
    return &m->val[j];
}

uint32_t *hmap_put(hmap *m, const uint64_t *key)
{
    return hmap_put_eq(m, key, NULL, NULL);
}
