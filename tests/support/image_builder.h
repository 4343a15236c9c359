/* Test support: builds bound arenas and Definition images in host memory.
 *
 * Tests use it to feed the executors images the bind side would produce,
 * and then to corrupt one field at a time. Addresses inside are whatever the
 * test passes: host pointers for the serial executor, sim device addresses
 * for the sim backend (then the bytes are copied to the device). */
#ifndef HBG_TEST_IMAGE_BUILDER_H
#define HBG_TEST_IMAGE_BUILDER_H

#include <stdint.h>

#include "hbg/image.h"
#include "hbg/tensor.h"

/* A 1-D contiguous uint32 tensor of n elements over the buffer at addr. */
hbg_tensor ib_u32(uint64_t addr, uint32_t n);

typedef struct ib ib;

typedef struct ib_task_spec {
    uint8_t kind, core;
    uint16_t aic, aiv;
    uint32_t blocks;
    const uint32_t *fanins;
    uint32_t nfanin;
    const hbg_tensor *tensors;
    uint32_t ntensors;
    const uint64_t *scalars;
    uint32_t nscalars;
    const hbg_img_pred *pred; /* NULL: always runs */
} ib_task_spec;

ib *ib_new(void);
void ib_free(ib *b);
/* Returns the task's index. */
uint32_t ib_add_task(ib *b, const ib_task_spec *t);
uint32_t ib_add_def(ib *b, uint64_t addr, uint64_t bytes, uint64_t hash);
/* A REPLAY task of deftab[def] with its boundary image; returns the task. */
uint32_t ib_add_replay(ib *b, uint32_t def, const hbg_img_btensor *bt, uint32_t nbt, const uint64_t *bs,
                       uint32_t nbs, uint64_t heap_base, const uint32_t *fanins, uint32_t nfanin);
/* The arena: malloc'd, 8-byte aligned, flags zeroed. */
void *ib_build(const ib *b, uint64_t *bytes);

typedef struct db db;

typedef struct db_node_spec {
    uint8_t kind, core;
    uint16_t aic, aiv;
    uint32_t blocks;
    const uint32_t *fanins;
    uint32_t nfanin;
    const hbg_def_targ *targs;
    uint32_t ntarg;
    const hbg_def_sarg *sargs;
    uint32_t nsarg;
    const hbg_def_pred *pred; /* NULL: always runs */
} db_node_spec;

db *db_new(uint32_t nbt, const hbg_tensor *btemplates, uint32_t nbs, uint64_t heap_bytes, uint64_t key);
void db_free(db *d);
uint32_t db_add_node(db *d, const db_node_spec *n);
/* The Definition image (malloc'd) and its content hash. */
void *db_build(const db *d, uint64_t *bytes, uint64_t *hash);
/* FNV-1a over an image with its hash field taken as zero. */
uint64_t db_hash(const void *img, uint64_t bytes);

hbg_def_targ db_boundary(uint32_t ref);
hbg_def_targ db_bview(uint32_t ref, int64_t delta, hbg_tensor layout);
hbg_def_targ db_heap(uint8_t cls, uint64_t heap_off, hbg_tensor layout);
hbg_def_sarg db_slot(int32_t slot);
hbg_def_sarg db_static(uint64_t value);

#endif
