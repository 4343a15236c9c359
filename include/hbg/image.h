/* hbg — the bound image: the device ABI.
 *
 * One bind pass ships one arena to the device in one copy; a device backend
 * parses it with this header alone (and runs it through hbg/device.h). The
 * layout is described in docs/device.md; this header is its definition.
 *
 * The arena (all offsets are bytes from the arena start, so the image is
 * valid wherever the arena lands):
 *
 *   [hbg_img_header][tasks][fanins][tensors][scalars][preds][flags]
 *   [submission block: replays | boundary tensors | boundary scalars | def table]
 *
 * Every section starts on a 64-byte boundary and is described by the
 * header's sec[] (offset, element count, element size). Every reference
 * inside is an index or an offset; the only absolute values are device
 * addresses of buffers (tensor addr, predicate word, GM heap blocks,
 * Definition images).
 *
 * A Definition image is one contiguous, relocatable byte array of its own,
 * uploaded once and referred to by the def table:
 *
 *   [hbg_def_header][nodes][fanins][targs][sargs][preds][btemplates]
 *
 * Nodes refer to each other by index, tensors to the boundary by slot or to
 * the replay's GM block by byte offset; nothing in it is an address, so the
 * same bytes are valid on the host, on the device, and under any key. Its
 * content hash covers every byte with the `hash` field zeroed.
 *
 * Versioning: HBG_IMG_VERSION changes whenever any struct here changes
 * size, order or meaning. A backend refuses an arena whose magic or version
 * it does not know; there is no compatibility across versions.
 */
#ifndef HBG_IMAGE_H
#define HBG_IMAGE_H

#include <stdint.h>
#include "hbg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HBG_IMG_MAGIC 0x31474248u /* "HBG1" */
#define HBG_IMG_VERSION 1u
#define HBG_DEF_MAGIC 0x46454448u /* "HDEF" */
#define HBG_IMG_ALIGN 64u         /* every arena section starts on this boundary */

/* --- the task image ---------------------------------------------------- */

enum hbg_img_kind {
    HBG_TASK_KERNEL = 0, /* runs kernel_aic / kernel_aiv over `blocks` */
    HBG_TASK_DUMMY = 1,  /* completes when its fanins have */
    HBG_TASK_ALLOC = 2,  /* alloc_tensors: completed on the host (flag preset) */
    HBG_TASK_REPLAY = 3  /* expands Definition replays[replay] on the device */
};

typedef struct hbg_img_task {
    uint8_t kind;        /* enum hbg_img_kind */
    uint8_t core;        /* hbg_core */
    uint8_t sync_start;
    uint8_t has_pred;
    uint16_t kernel_aic;
    uint16_t kernel_aiv;
    uint32_t blocks;
    uint32_t fanin_off, fanin_cnt;   /* into fanins[] (task indices, each below the task's own) */
    uint32_t tensor_off, tensor_cnt; /* into tensors[] */
    uint32_t scalar_off, scalar_cnt; /* into scalars[] */
    uint32_t pred;                   /* into preds[] when has_pred */
    uint32_t replay;                 /* into replays[] when kind == REPLAY */
} hbg_img_task;

/* A dispatch predicate: the task runs when (word at addr, elem_size bytes,
 * little-endian, unsigned) `op` value holds. */
typedef struct hbg_img_pred {
    uint64_t addr;  /* device address of the word */
    uint64_t value;
    uint8_t op;     /* hbg_cmp */
    uint8_t elem_size; /* 1, 2, 4 or 8 */
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

/* The def table's most entries: the Definitions one pass replays. A device
 * refuses a longer table, as it refuses more than HBG_MAX_TASK_WINDOW tasks
 * or a Definition of more than HBG_MAX_DEF_NODES nodes. */
#define HBG_IMG_MAX_DEFS 64

/* An entry of the def table: a Definition image on the device. */
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
    uint64_t total_bytes;              /* header + image + submission block */
    uint64_t image_off, image_bytes;   /* task image: TASKS..FLAGS */
    uint64_t subs_off, subs_bytes;     /* submission block: REPLAYS..DEFTAB */
    uint64_t pass;                     /* bind pass number (1-based) */
    hbg_img_section sec[HBG_SEC_COUNT];
} hbg_img_header;

static inline const void *hbg_img_sec_ptr(const void *arena, const hbg_img_header *h, int s)
{
    return (const unsigned char *)arena + h->sec[s].off;
}

/* --- a Definition image ------------------------------------------------ */

enum hbg_targ_cls {
    HBG_TARG_BOUNDARY = 0, /* boundary tensor `ref` exactly */
    HBG_TARG_BVIEW = 1,    /* a view of boundary tensor `ref`: offset delta + own layout */
    HBG_TARG_NODE_OUT = 2, /* output of an earlier node: replay heap_base + heap_off */
    HBG_TARG_OWN_OUT = 3   /* this node's own OUTPUT: replay heap_base + heap_off */
};

typedef struct hbg_def_node {
    uint8_t kind;        /* hbg_img_kind: KERNEL, DUMMY or ALLOC */
    uint8_t core;
    uint8_t sync_start;
    uint8_t has_pred;
    uint16_t kernel_aic, kernel_aiv;
    uint32_t blocks;
    uint32_t fanin_off, fanin_cnt;  /* node indices (each below the node's own), into fanins[] */
    uint32_t targ_off, targ_cnt;
    uint32_t sarg_off, sarg_cnt;
    uint32_t pred;                  /* into preds[] */
} hbg_def_node;

typedef struct hbg_def_targ {
    uint8_t cls;         /* hbg_targ_cls */
    uint8_t dir;         /* hbg_dir as submitted */
    uint16_t pad;
    uint32_t ref;        /* boundary slot (BOUNDARY, BVIEW) */
    int64_t delta;       /* BVIEW: element offset added to the boundary view's offset */
    uint64_t heap_off;   /* NODE_OUT / OWN_OUT: byte offset of the buffer in the replay block */
    hbg_tensor layout;   /* shape/strides/dtype/nbytes/offset as recorded (addr 0) */
} hbg_def_targ;

typedef struct hbg_def_sarg {
    int32_t slot;        /* -1: static `value`; k: boundary scalar k */
    uint32_t pad;
    uint64_t value;
} hbg_def_sarg;

typedef struct hbg_def_pred {
    hbg_def_targ where;  /* the tensor holding the word (resolved like a targ) */
    uint64_t byte_offset;
    uint64_t value;
    uint8_t op, elem_size;
    uint8_t pad[6];
} hbg_def_pred;

typedef struct hbg_def_header {
    uint32_t magic;
    uint32_t nnodes;
    uint64_t hash;       /* zero while hashing */
    uint64_t key;
    uint64_t bytes;      /* whole image */
    uint64_t heap_bytes; /* one replay's GM block */
    uint32_t nbt, nbs;   /* boundary tensors / scalars */
    uint32_t nfanin, ntarg, nsarg, npred;
    uint64_t off_nodes, off_fanins, off_targs, off_sargs, off_preds, off_btemplates;
} hbg_def_header;
/* btemplates: nbt hbg_tensor records, the boundary as recorded (the
 * signature later calls are matched against), addr zeroed. */

#ifdef __cplusplus
}
#endif
#endif
