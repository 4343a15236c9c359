/* The log tools' one hash map: open addressing with linear probing, from a
 * key of one to three 64-bit words to a nonzero 32-bit value (an index + 1
 * into the caller's own array, as a rule).
 *
 * Every table of the tools is one of these: the passes by (pid, inv), the
 * open bursts by thread, the ranks, the side segments, the interned text,
 * the segment sets counted in the defect analysis, the timeline's
 * processes and threads. Nothing is ever deleted (a caller that retires an
 * entry stores a value of its own that says so), so a probe needs no
 * tombstones. The table is kept at most half full and lives on hugemem
 * blocks: the pass table of a large log is tens of megabytes. */
#ifndef HBG_TOOLS_HMAP_H
#define HBG_TOOLS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/hugemem.h"

#define HMAP_MAXKW 3
#define HMAP_MINCAP 64 /* slots of the first table */

typedef struct hmap {
    uint64_t *key;  /* kw words per slot */
    uint32_t *val;  /* per slot; 0: empty */
    size_t cap, n;  /* slots (a power of two, or 0), and those in use */
    unsigned kw;    /* key words, 1 .. HMAP_MAXKW */
    hm_block mem;
} hmap;

/* An empty map of kw-word keys; it allocates on the first put. */
void hmap_init(hmap *m, unsigned kw);
void hmap_free(hmap *m);

/* The hash of a key (the low bits pick its first slot); for tests that
 * need colliding keys. */
uint64_t hmap_hash(const uint64_t *key, unsigned kw);

/* The value of key, 0 when absent. */
uint32_t hmap_get(const hmap *m, const uint64_t *key);

/* The value slot of key, made when absent: a new key's slot holds 0 and
 * counts as an entry once the caller stores a nonzero value in it (a slot
 * left at 0 stays empty). NULL when the table had to grow and the memory
 * was refused; the map is then unchanged. */
uint32_t *hmap_put(hmap *m, const uint64_t *key);

/* The same for keys the words do not decide alone (a text by its hash and
 * length): a slot whose words match is the key's only when eq(ctx, value)
 * says so; otherwise the probe goes on, and a new slot is made with the
 * same words. */
uint32_t *hmap_put_eq(hmap *m, const uint64_t *key, bool (*eq)(void *ctx, uint32_t val), void *ctx);

/* Makes room for n entries without growing again; false when refused (the
 * map is then unchanged). */
bool hmap_reserve(hmap *m, size_t n);

/* Two-word keys, the common case, without building the array. */
static inline uint32_t hmap_get2(const hmap *m, uint64_t a, uint64_t b)
{
    const uint64_t k[2] = {a, b};
    return hmap_get(m, k);
}

static inline uint32_t *hmap_put2(hmap *m, uint64_t a, uint64_t b)
{
    const uint64_t k[2] = {a, b};
    return hmap_put(m, k);
}

#endif
