/* hbg_orch_last_error: the facts of a pass's first failure, in words.
 *
 * The code that refuses a call stores numbers (orch_internal.h, hbg__fault)
 * and never formats; this file alone turns them into text, when a caller
 * asks, so a pass that fails costs its hot path nothing it did not already
 * pay.
 */
#include <stdarg.h>
#include <stdio.h>

#include "orch/orch_internal.h"
#include "util/printable.h"

typedef struct msgbuf {
    char *p;
    size_t n, cap;
} msgbuf;

static void put(msgbuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(msgbuf *m, const char *fmt, ...)
{
    if (m->n >= m->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(m->p + m->n, m->cap - m->n, fmt, ap);
    va_end(ap);
    if (k > 0 && (size_t)k >= m->cap - m->n) /* cut: at a whole character */
        m->n = m->cap; /* nothing more goes in */
    else if (k > 0)
        m->n += (size_t)k;
    if (m->n == m->cap)
        hbg__utf8_trim(m->p);
}

static const char *dir_name(int64_t d)
{
    static const char *const names[] = {"HBG_IN", "HBG_OUT_ALLOC", "HBG_INOUT", "HBG_OUT", "HBG_NO_DEP"};
    return d >= 0 && d < (int64_t)(sizeof names / sizeof names[0]) ? names[d] : "unknown";
}

static const char *core_name(int64_t c)
{
    return c == HBG_CORE_AIC ? "AIC" : c == HBG_CORE_AIV ? "AIV" : c == HBG_CORE_MIX ? "MIX" : "unknown";
}

static const char *count_name(int64_t what)
{
    static const char *const names[] = {"tensor arguments", "scalars", "explicit deps",      "boundary tensors",
                                        "boundary scalars", "blocks",  "tensors to allocate"};
    return what >= 0 && what < (int64_t)(sizeof names / sizeof names[0]) ? names[what] : "items";
}

static void slot_ref(msgbuf *m, int64_t k)
{
    if (k < 0)
        put(m, "no other slot's");
    else
        put(m, "slot %lld's", (long long)k);
}

/* Which pool filled and its size: one status names several pools (docs/
 * orchestration.md, "Limits"), and the fix differs for each. */
static void pool_full(msgbuf *m, int64_t pool, int64_t size)
{
    long long n = (long long)size;
    switch (pool) {
    case HBG_POOL_MAP_ENTRIES:
        put(m, "the tensor map's %lld entries (writes) are all taken", n);
        break;
    case HBG_POOL_MAP_BUFFERS:
        put(m, "the tensor map's table of %lld written buffers is full", n);
        break;
    case HBG_POOL_MAP_COPIES:
        put(m, "the tensor map's %lld copies of written tensors are all taken", n);
        break;
    case HBG_POOL_DEF_NODES:
        put(m, "the Definition's %lld nodes are all taken (HBG_MAX_DEF_NODES)", n);
        break;
    case HBG_POOL_DEF_KEYS:
        put(m, "Definition cache full: %lld keys, each recorded or replayed this pass", n);
        break;
    default:
        put(m, "the host's %lld-byte pool of Definition images is full", n);
        break;
    }
}

/* The reason, after "<where>: ". */
static void reason(msgbuf *m, const hbg__fault *f)
{
    const int64_t *n = f->n;
    switch (f->why) {
    case HBG_WHY_TOO_MANY:
        put(m, "%lld %s, the limit is %lld", (long long)n[0], count_name(n[2]), (long long)n[1]);
        break;
    case HBG_WHY_CORE:
        if (n[0] != HBG_CORE_AIC && n[0] != HBG_CORE_AIV && n[0] != HBG_CORE_MIX) {
            put(m, "core %lld is none of HBG_CORE_AIC, HBG_CORE_AIV and HBG_CORE_MIX", (long long)n[0]);
            break;
        }
        put(m, "core %s needs %s (kernel_aic %lld, kernel_aiv %lld; HBG_KERNEL_NONE is %u)", core_name(n[0]),
            n[0] == HBG_CORE_AIC ? "kernel_aic" : n[0] == HBG_CORE_AIV ? "kernel_aiv" : "both kernels",
            (long long)n[1], (long long)n[2], HBG_KERNEL_NONE);
        break;
    case HBG_WHY_NULL_TENSOR: put(m, "no tensor (NULL)"); break;
    case HBG_WHY_DIR: put(m, "direction %lld is not one this argument takes", (long long)n[0]); break;
    case HBG_WHY_HAS_BUFFER:
        put(m, "a tensor to allocate already names buffer 0x%llx (write into it with HBG_OUT)",
            (unsigned long long)n[0]);
        break;
    case HBG_WHY_NO_BUFFER:
        if (n[1] == HBG_DTYPE_COUNT) { /* a description that failed: its arguments are the mistake */
            put(m, "the tensor is the invalid tensor (dtype HBG_DTYPE_COUNT) that a tensor constructor returns for "
                   "bad arguments, and names no buffer");
            break;
        }
        put(m, "the tensor names no buffer (addr 0; allocate it with HBG_OUT_ALLOC)");
        break;
    case HBG_WHY_BAD_VIEW:
        if (n[0] == HBG_DTYPE_COUNT) {
            put(m, "the tensor is the invalid tensor (dtype HBG_DTYPE_COUNT) that a tensor constructor returns for "
                   "bad arguments");
            break;
        }
        if (n[2]) {
            put(m,
                "the view's byte range is past 64 bits (dtype %lld, %lld dims: its offset, shape and strides "
                "reach beyond byte 2^64)",
                (long long)n[0], (long long)n[1]);
            break;
        }
        put(m, "the view has no byte range (dtype %lld, %lld dims; an empty or negative-stride view?)",
            (long long)n[0], (long long)n[1]);
        break;
    case HBG_WHY_VIEW_OUTSIDE:
        put(m, "view [%llu, %llu) outside its %llu-byte buffer", (unsigned long long)n[0], (unsigned long long)n[1],
            (unsigned long long)n[2]);
        break;
    case HBG_WHY_HEAP:
        put(m, "GM heap exhausted: %llu bytes requested, %llu free of %llu", (unsigned long long)n[0],
            (unsigned long long)n[1], (unsigned long long)n[2]);
        break;
    case HBG_WHY_DEP:
        put(m, "dep %lld names 0x%llx, which is no earlier %s (%lld so far)", (long long)n[0],
            (unsigned long long)n[1], f->where == HBG_AT_NODE ? "node of this body" : "task", (long long)n[2]);
        break;
    case HBG_WHY_WINDOW: put(m, "task window full (%lld tasks)", (long long)n[0]); break;
    case HBG_WHY_CAPTURE:
        put(m, "%s is neither a boundary tensor, a view inside one, nor a node's output",
            n[0] ? "the predicate's tensor" : "the tensor");
        break;
    case HBG_WHY_NESTED: put(m, "a Graph inside a Graph body"); break;
    case HBG_WHY_B_COUNT:
        put(m, "%lld tensors and %lld scalars, the Definition's %lld and %lld", (long long)n[0], (long long)n[1],
            (long long)n[2], (long long)n[3]);
        break;
    case HBG_WHY_B_DIR: put(m, "direction %s, the Definition's %s", dir_name(n[0]), dir_name(n[1])); break;
    case HBG_WHY_B_DTYPE:
        put(m, "dtype %s, the Definition's %s", hbg_dtype_name((hbg_dtype)n[0]), hbg_dtype_name((hbg_dtype)n[1]));
        break;
    case HBG_WHY_B_NDIM: put(m, "%lld dims, the Definition's %lld", (long long)n[0], (long long)n[1]); break;
    case HBG_WHY_B_SHAPE:
        put(m, "shape[%lld] is %lld, the Definition's %lld", (long long)n[2], (long long)n[0], (long long)n[1]);
        break;
    case HBG_WHY_B_STRIDE:
        put(m, "strides[%lld] is %lld, the Definition's %lld", (long long)n[2], (long long)n[0], (long long)n[1]);
        break;
    case HBG_WHY_B_ALIAS:
        put(m, "shares ");
        slot_ref(m, n[0]);
        put(m, " buffer, where the Definition's shares ");
        slot_ref(m, n[1]);
        break;
    case HBG_WHY_B_ALIAS_AT:
        put(m, "starts %lld bytes from slot %lld's start in their buffer, the Definition's %lld", (long long)n[1],
            (long long)n[0], (long long)n[2]);
        break;
    case HBG_WHY_REC_BUFFER:
        /* a body's buffer kept past its body, or an address that is no
         * buffer at all: from HBG_REC_BASE up they cannot be told apart */
        put(m, "the tensor names address 0x%llx, no buffer outside a Graph body: from 0x%llx up, addresses are a "
               "Graph body's own buffers (HBG_OUT_ALLOC inside the body), which exist only in that body's replays",
            (unsigned long long)n[0], (unsigned long long)HBG_REC_BASE);
        break;
    case HBG_WHY_NULL_INPUT:
        put(m, "no %s (NULL)",
            n[0] == 0   ? "task"
            : n[0] == 1 ? "list of tensors to allocate"
            : n[0] == 2 ? "body function"
            : n[0] == 3 ? "bound"
                        : "boundary");
        break;
    case HBG_WHY_SCALAR_SLOT:
        if (n[2] == -2)
            put(m, "scalar %lld is marked %lld: a mark is -1 (a static scalar) or a boundary scalar's index",
                (long long)n[0], (long long)n[1]);
        else if (n[2] < 0)
            put(m, "scalar %lld is marked boundary scalar %lld outside any Graph body (-1 marks a static scalar)",
                (long long)n[0], (long long)n[1]);
        else
            put(m, "scalar %lld is marked boundary scalar %lld, but the Graph's boundary has %lld scalars",
                (long long)n[0], (long long)n[1], (long long)n[2]);
        break;
    case HBG_WHY_SCOPE:
        if (n[0] == 0)
            put(m, "scopes nested past %lld deep", (long long)n[1]);
        else if (n[0] == 1)
            put(m, "an AUTO scope inside a MANUAL one");
        else if (n[0] == 2)
            put(m, "hbg_scope_end with no scope open");
        else if (n[0] == 3)
            put(m, "hbg_scope_end in a Graph body ends a scope of its caller's");
        else
            put(m, "a Graph body left %lld scope%s open", (long long)n[1], n[1] == 1 ? "" : "s");
        break;
    case HBG_WHY_BOUND_REST:
        put(m, "%s ", n[1] ? "the task" : "`rest`");
        if (n[0])
            put(m, "names %lld tensors", (long long)n[0]);
        else
            put(m, "has a tensor list (args)");
        put(m, "; a bound call's tensors are the bound's");
        break;
    case HBG_WHY_SCOPE_MODE:
        put(m, "scope mode %lld is neither HBG_SCOPE_AUTO nor HBG_SCOPE_MANUAL", (long long)n[0]);
        break;
    case HBG_WHY_NULL_ARRAY: put(m, "%lld %s but no array of them (NULL)", (long long)n[1], count_name(n[0])); break;
    case HBG_WHY_PRED:
        switch (n[0]) {
        case HBG_PRED_NO_TENSOR: put(m, "the predicate has no tensor (NULL)"); break;
        case HBG_PRED_ELEM_SIZE: put(m, "the predicate's elem_size is %lld; it takes 1, 2, 4 or 8", (long long)n[1]); break;
        case HBG_PRED_OP:
            put(m, "the predicate's op is %lld; it takes HBG_CMP_EQ to HBG_CMP_GE (0 to %d)", (long long)n[1], HBG_CMP_GE);
            break;
        default:
            put(m, "the predicate's word at byte %llu lies past its %llu-byte buffer", (unsigned long long)n[1],
                (unsigned long long)n[2]);
            break;
        }
        break;
    case HBG_WHY_KEY_BODY: put(m, "the key was recorded with another body function"); break;
    case HBG_WHY_KEY_CONTENT:
        put(m, "the body submitted other content than the Definition holds (HBG_GRAPH_CHECK_BODY)");
        break;
    case HBG_WHY_PRED_NO_BUFFER: put(m, "the predicate's tensor names no buffer (addr 0)"); break;
    case HBG_WHY_SCOPE_OPEN:
        if (n[1])
            put(m, "the pass ended inside a Graph body");
        else
            put(m, "the pass ended with %lld scope(s) open (an hbg_scope_begin without its hbg_scope_end)",
                (long long)n[0]);
        break;
    case HBG_WHY_GRAPH_FLAGS:
        put(m, "flags 0x%llx: bits 0x%llx are no flag (HBG_GRAPH_FALLBACK, HBG_GRAPH_CHECK_BODY)",
            (unsigned long long)n[0], (unsigned long long)n[1]);
        break;
    case HBG_WHY_IN_SLOT_WRITE:
        put(m,
            "writes boundary slot %lld, which the call passes as HBG_IN: the outer task would not count as "
            "writing it (pass the slot as HBG_INOUT or HBG_OUT)",
            (long long)n[0]);
        break;
    case HBG_WHY_KEPT_WRITE:
        put(m,
            "writes caller tensor %lld, which is persistent: its device copy is kept and not staged again, so the "
            "write would outlive the pass (mark persistent only what no task writes)",
            (long long)n[0]);
        break;
    case HBG_WHY_POOL:
        pool_full(m, n[0], n[1]);
        break;
    case HBG_WHY_BODY_DEP:
        put(m, "dep %lld names 0x%llx, which is no earlier task of this Graph body (its first is 0x%llx)",
            (long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2]);
        break;
    case HBG_WHY_USER: put(m, "%s", f->text && *f->text ? f->text : hbg_strerror(f->st)); break;
    default: put(m, "%s", hbg_strerror(f->st)); break;
    }
}

void hbg__fault_format(const hbg__fault *f, char *buf, size_t cap)
{
    msgbuf m = {buf, 0, cap};
    if (!cap)
        return;
    buf[0] = 0;
    /* The orchestration's own failure is at no task or node of its own:
     * it says how far the program had got. */
    if (f->why == HBG_WHY_USER) {
        const char *s = f->task == 1 ? "" : "s";
        if (f->where == HBG_AT_NODE)
            put(&m, "graph key 0x%llx body (%u node%s recorded): ", (unsigned long long)f->key, f->task, s);
        else
            put(&m, "orchestration (%u task%s submitted): ", f->task, s);
        reason(&m, f);
        return;
    }
    switch (f->where) {
    case HBG_AT_GRAPH: put(&m, "task %u (graph key 0x%llx)", f->task, (unsigned long long)f->key); break;
    case HBG_AT_NODE: put(&m, "graph key 0x%llx node %u", (unsigned long long)f->key, f->task); break;
    default: put(&m, "task %u", f->task); break;
    }
    if (f->arg >= 0)
        put(&m, f->where == HBG_AT_GRAPH ? " slot %d" : " arg %d", f->arg);
    put(&m, ": ");
    reason(&m, f);
}

hbg_status hbg_orch_fail(hbg_orch *o, hbg_status st, const char *fmt, ...)
{
    if (!o)
        return HBG_E_INVAL;
    if (!o->in_pass)
        return HBG_E_STATE;
    if (st == HBG_OK)
        st = HBG_E_INVAL;
    else if ((unsigned)st >= HBG_STATUS_COUNT) /* the program's own code: a status a caller can name */
        st = HBG_E_ORCH;
    /* Formatted only when it will be the one reported: a failing pass
     * whose program goes on calling this formats once. */
    if (o->err == HBG_OK) {
        /* Not the kept failure's text, which a Graph body run inline
         * (hbg__err_take) may be waiting to put back. */
        char *t = o->fault.text == o->utext[0] ? o->utext[1] : o->utext[0];
        t[0] = 0;
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            hbg__vformat(t, HBG_ORCH_MSG_MAX, fmt, ap);
            va_end(ap);
        }
        hbg__mask_controls(t); /* one line in the log's ERROR record, whatever the program wrote */
        hbg__why_clear(o);
        hbg__why(o, HBG_WHY_USER, -1, 0, 0, 0);
        o->why.text = t;
    }
    return hbg__orch_fail(o, st);
}

hbg_status hbg__orch_returned(hbg_orch *o, hbg_status ost, bool body)
{
    if ((unsigned)ost < HBG_STATUS_COUNT)
        return ost;
    return hbg_orch_fail(o, HBG_E_ORCH, "the %s returned %d, which is no hbg_status",
                         body ? "Graph body" : "orchestration function", (int)ost);
}

const char *hbg_orch_last_error(const hbg_orch *o)
{
    if (!o)
        return "no orchestrator";
    o->msg[0] = 0;
    if (o->err != HBG_OK)
        hbg__fault_format(&o->fault, o->msg, HBG_ORCH_MSG_MAX);
    return o->msg;
}
