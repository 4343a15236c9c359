/* A Definition image: one contiguous, relocatable byte array.
 *
 *   [hbg_def_header][nodes][fanins][targs][sargs][preds][btemplates]
 *
 * Nodes refer to each other by index, tensors to the boundary by slot or to
 * the replay's GM block by byte offset; nothing in it is an address, so the
 * same bytes are valid on the host, on the device, and under any key. The
 * content hash covers every byte with the `hash` field zeroed.
 */
#ifndef HBG_GRAPH_DEF_IMAGE_H
#define HBG_GRAPH_DEF_IMAGE_H

#include <stdint.h>
#include "hbg/tensor.h"

#define HBG_DEF_MAGIC 0x46454448u /* "HDEF" */

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
    uint32_t fanin_off, fanin_cnt;  /* node indices, into fanins[] */
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

#endif
