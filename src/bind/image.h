/* The bound image: what one bind pass ships to the device in one copy.
 *
 * Layout of the device arena after arena_h2d (all offsets are bytes from the
 * arena start, so the image is valid wherever the arena lands):
 *
 *   [hbg_img_header][tasks][fanins][tensors][scalars][preds][flags]
 *   [submission block: replays | boundary tensors | boundary scalars | def table]
 *
 * Every reference inside is an index or an offset; the only absolute values
 * are device addresses of buffers (tensor addr, predicate word, GM heap
 * blocks, Definition images), and those are written only once the region
 * they point into is final. The host mirror keeps one worst-case-sized array
 * per section and packs only their live prefixes (shared_mem), so nothing
 * here is ever resized on the hot path.
 */
#ifndef HBG_BIND_IMAGE_H
#define HBG_BIND_IMAGE_H

#include <stdint.h>
#include "hbg/tensor.h"

#define HBG_IMG_MAGIC 0x31474248u /* "HBG1" */
#define HBG_IMG_VERSION 1u

enum hbg_img_kind {
    HBG_TASK_KERNEL = 0, /* runs kernel_aic / kernel_aiv over `blocks` */
    HBG_TASK_DUMMY = 1,  /* completes when its fanins have */
    HBG_TASK_ALLOC = 2,  /* alloc_tensors: completed on the host (flag preset) */
    HBG_TASK_REPLAY = 3  /* expands Definition replays[replay] on the device */
};

typedef struct hbg_img_task {
    uint8_t kind;
    uint8_t core;        /* hbg_core */
    uint8_t sync_start;
    uint8_t has_pred;
    uint16_t kernel_aic;
    uint16_t kernel_aiv;
    uint32_t blocks;
    uint32_t fanin_off, fanin_cnt;   /* into fanins[] (task indices) */
    uint32_t tensor_off, tensor_cnt; /* into tensors[] */
    uint32_t scalar_off, scalar_cnt; /* into scalars[] */
    uint32_t pred;                   /* into preds[] when has_pred */
    uint32_t replay;                 /* into replays[] when kind == REPLAY */
} hbg_img_task;

typedef struct hbg_img_pred {
    uint64_t addr;  /* device address of the word */
    uint64_t value;
    uint8_t op;     /* hbg_cmp */
    uint8_t elem_size;
    uint8_t pad[6];
} hbg_img_pred;

/* One replay of a Definition: its boundary image and its GM block. */
typedef struct hbg_img_replay {
    uint32_t def;          /* into deftab[] */
    uint32_t task;         /* the outer task */
    uint32_t btensor_off;  /* into btensors[] (hbg_img_btensor, nbt of the Definition) */
    uint32_t bscalar_off;  /* into bscalars[] */
    uint64_t heap_base;    /* device address of this replay's node outputs */
} hbg_img_replay;

/* A boundary tensor of one replay: what changes between replays. Shape,
 * strides and dtype are fixed by the boundary signature and live in the
 * Definition's btemplates. */
typedef struct hbg_img_btensor {
    uint64_t addr;
    uint64_t nbytes;
    uint64_t offset;
} hbg_img_btensor;

typedef struct hbg_img_def {
    uint64_t addr;   /* device address of the Definition image */
    uint64_t bytes;
    uint64_t hash;
} hbg_img_def;

typedef struct hbg_img_section {
    uint64_t off;    /* bytes from the arena start */
    uint32_t count;  /* elements */
    uint32_t elem;   /* bytes per element */
} hbg_img_section;

enum hbg_img_sec {
    HBG_SEC_TASKS = 0, HBG_SEC_FANINS, HBG_SEC_TENSORS, HBG_SEC_SCALARS, HBG_SEC_PREDS,
    HBG_SEC_FLAGS, HBG_SEC_REPLAYS, HBG_SEC_BTENSORS, HBG_SEC_BSCALARS, HBG_SEC_DEFTAB,
    HBG_SEC_COUNT
};

/* The runtime header: first bytes of the arena. */
typedef struct hbg_img_header {
    uint32_t magic, version;
    uint32_t rank, nranks;
    uint64_t total_bytes;         /* header + image + submission block */
    uint64_t image_off, image_bytes;   /* task image: TASKS..FLAGS */
    uint64_t subs_off, subs_bytes;     /* submission block: REPLAYS..DEFTAB */
    uint64_t pass;                /* bind pass number (1-based) */
    hbg_img_section sec[HBG_SEC_COUNT];
} hbg_img_header;

static inline const void *hbg_img_sec_ptr(const void *arena, const hbg_img_header *h, int s)
{
    return (const unsigned char *)arena + h->sec[s].off;
}

#endif
