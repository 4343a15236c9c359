/* The bind pipeline's insides, shared by runtime.c, segments.c
 * and the tests that poison the host mirror. */
#ifndef HBG_BIND_INTERNAL_H
#define HBG_BIND_INTERNAL_H

#include <stdatomic.h>

#include "hbg/image.h"
#include "hbg/runtime.h"
#include "orch/orch_internal.h"
#include "util/stack.h"

#define HBG_MAX_PROGRAM_ARGS 256
#define HBG_DEVTABLE_CAP 256
_Static_assert(HBG_MAX_PROGRAM_ARGS <= HBG_ORCH_MAX_KEPT, "every caller tensor may be kept");
#define HBG_ARENA_INITIAL (1ull << 20)
/* Definitions carved from the device pool start on a cache line. */
#define HBG_DEFPOOL_ALIGN 64u

/* A caller tensor's device buffer, kept across passes. */
typedef struct hbg__argbuf {
    uint64_t dev;          /* device address, 0 if none */
    uint64_t cap;          /* bytes reserved */
    const void *staged_from; /* host pointer of the last persistent staging */
    uint64_t staged_bytes;
} hbg__argbuf;

/* A Definition image on the device, keyed by its content hash. */
typedef struct hbg__devdef {
    uint64_t hash, bytes, dev;
    bool pooled;           /* carved from the Definition pool: not freed alone */
} hbg__devdef;

/* A host view opened in `args`: where an output is read back to. */
typedef struct hbg__hostview {
    void *host;
    uint64_t dev, bytes;
} hbg__hostview;

typedef enum hbg__argfault {
    HBG_ARGF_NONE,
    HBG_ARGF_TOO_MANY,   /* value: nargs */
    HBG_ARGF_NO_ARRAY,   /* value: nargs */
    HBG_ARGF_NO_HOST,
    HBG_ARGF_EMPTY,
    HBG_ARGF_DIR,        /* value: the direction */
    HBG_ARGF_DTYPE,      /* value: the dtype */
    HBG_ARGF_PERSISTENT, /* value: the direction (not HBG_IN) */
    HBG_ARGF_INVALID,    /* the invalid tensor a constructor returns for bad arguments */
} hbg__argfault;

/* A refused caller tensor: what (an hbg__argfault), which, and a value. */
typedef struct hbg__argfault_at {
    uint8_t what;
    uint32_t index;
    uint64_t value;
} hbg__argfault_at;

struct hbg_runtime {
    hbg_runtime_config cfg;
    hbg_device *dev;
    hbg_orch *orch;
    /* A call of hbg_runtime_run is under way, bind or device run: another
     * (a kernel of this run calling it, a second thread) is refused.
     * Atomic, as the kernel's thread is not the caller's. */
    atomic_bool running;

    /* static arena: committed on the first pass, kept */
    bool committed;
    uint64_t heap_dev, heap_bytes;
    uint64_t arena_dev, arena_cap;
    unsigned char *staging;      /* host side of the arena, arena_cap bytes */
    uint64_t staging_committed;  /* its prefix made resident (commit_staging) */
    uint64_t defpool_dev, defpool_bytes, defpool_used; /* Definitions, filled from the front */

    hbg__argbuf argbufs[HBG_MAX_PROGRAM_ARGS];
    hbg_tensor devargs[HBG_MAX_PROGRAM_ARGS];
    hbg__hostview views[HBG_MAX_PROGRAM_ARGS];
    uint32_t nviews;

    hbg__devdef devdefs[HBG_DEVTABLE_CAP];
    uint32_t ndevdefs;

    hbg__layout layout;
    bool bound;                  /* an image is on the device, ready to run */
    uint64_t dev_seq;            /* the device's message count (hbg__exec_error_seq) after
                                    the last device refusal this pass recovered from, or
                                    at its start: a message past it is this pass's failure */
    hbg__stack stack;            /* the creating thread's, committed by the first pass */
    /* Why args refused the program's caller tensors, formatted after the
     * pass (pass_error). */
    hbg__argfault_at argfault;
};

/* Caller tensors (callerargs.c), checked alike by bind and the eager
 * reference: true when p's can be passed, else *f says why. */
bool hbg__caller_args_ok(const hbg_program *p, hbg__argfault_at *f);
/* f's words, "args: caller tensor 2 (x): ...", for program p. */
void hbg__argfault_format(const hbg__argfault_at *f, const hbg_program *p, char *buf, size_t len);
/* Hands o the persistent caller tensors of p (args[i]: caller tensor i
 * where the pass has it, device buffer or host memory): a task that
 * writes one is refused, as its write would outlive the pass. */
void hbg__set_kept(hbg_orch *o, const hbg_program *p, const hbg_tensor *args);

/* One bind pass: the ten segments. Fills rep->trace for the segments that
 * ran; on failure names the segment. */
hbg_status hbg__bind_pass(hbg_runtime *rt, const hbg_program *p, hbg_pass_report *rep);
/* The device run of the bound image, then outputs read back. */
hbg_status hbg__runner_run(hbg_runtime *rt, hbg_pass_report *rep);

/* Overwrites every host-side copy of the image (mirror and staging) with a
 * poison pattern: a run that still succeeds read only the device. */
void hbg__runtime_poison_host(hbg_runtime *rt, unsigned char pattern);

#endif
