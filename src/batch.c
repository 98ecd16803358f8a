/* SPDX-License-Identifier: MIT */
/*
 * The common path behind every door: the hub that hands a batch down to the
 * steps below, each of which keeps its knowledge in its own file.
 *
 *   per batch  describe    ids; the stream's context and device (stream.c;
 *                          driver: cuStreamGetCtx, cuCtxGetDevice on a
 *                          stream first seen); strict mode: whether it is
 *                          being captured (cuStreamIsCapturing)
 *              read        how far the driver reads the op list or the copy
 *                          arrays (oplist.c; no driver call)
 *   per op     learn       each operand's dictionary index (operands.c and
 *                          record.c; driver: cuPointerGetAttributes,
 *                          cuMemGetAddressRange, cuArray3DGetDescriptor on a
 *                          cache miss); the dictionary entries written
 *   per batch  validate    strict mode and the stderr report only: the
 *                          findings, and whether strict mode refuses
 *              call        refuse, or forward (GPU time around it:
 *                          gputime.c); a batch the driver may crash on is
 *                          written before it is forwarded ("pending")
 *              finish      the stream's id and capture state (stream.c;
 *                          driver: cuStreamGetId on a stream first seen and
 *                          not being captured), the driver's result checked
 *   per chunk  record      the batch events (record.c), a chunk of ops
 *                          or copies each (cbt_chunk3d, cbt_chunk1d)
 *
 * A batch like the thread's previous one skips the steps (steady_path, per
 * op: the refs from the ranges of the thread's latest batches, the form
 * check before the list's last page; no driver call but the batch itself
 * and, timed, GPU time's; one event up to CBT_EV_INLINE3D ops or
 * CBT_EV_INLINE1D copies).  One like it but for operands none of those
 * ranges holds runs the read and learn steps instead of that lookup
 * (steady_learn: the driver asked about a new buffer only), then goes on as
 * such a batch.  The steps leave the thread's state (src/thread.h) ready
 * for it.
 *
 * With CUBATCHTRACE_MODE=observe, no session listening and no stderr report,
 * a batch costs a few loads and branches on top of the driver call: the
 * doors read the next function, test cbt_quiet (two flags and the batch
 * event's tracepoint state) and call it.  With a session, the calling thread learns
 * the operands, forwards, and writes the batch into LTTng's ring buffer
 * before it returns; the tool validates it when the trace is read.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "gputime.h"
#include "nodes.h"
#include "memwrap.h"
#include "operands.h"
#include "oplist.h"
#include "process.h"
#include "record.h"
#include "alert.h"
#include "settings.h"
#include "stream.h"
#include "thread.h"
#include "tp.h"

/* ---- the calling thread's memory ---- */

static int no_memory_warned;

/* The validator's memory for n ops (false: none to be had). */
static bool validator_room(struct cbt_thread *t, size_t n)
{
    if (!t->validator && !(t->validator = cbt_validator_new()))
        return false;
    if (n > t->cap_ops) {
        size_t c1 = t->cap_ops, c2 = t->cap_ops;
        if (!cbt_grow((void **)&t->src, &c1, n, sizeof *t->src) || !cbt_grow((void **)&t->dst, &c2, n, sizeof *t->dst))
            return false;
        t->cap_ops = c1 < c2 ? c1 : c2;
    }
    return t->findings || cbt_grow((void **)&t->findings, &t->cap_findings, 64, sizeof *t->findings);
}

/* ---- one call ---- */

/* One call as a door received it: the 3D or the 1D batch. */
struct call {
    enum cbt_api api;
    enum cbt_door door;
    void *fn;
    size_t n;                      /* numOps, count */
    size_t *fail_idx;              /* the 12.8 ABI's, else NULL */
    CUstream stream;
    CUDA_MEMCPY3D_BATCH_OP *ops;   /* 3D: opList */
    unsigned long long flags;      /* 3D */
    CUdeviceptr *dsts, *srcs;      /* 1D */
    size_t *sizes;
    CUmemcpyAttributes *attrs;
    size_t *attrs_idxs;
    size_t num_attrs;
};

CBT_HOT_FN static CUresult forward(const struct call *k, size_t n, size_t num_attrs)
{
    switch (k->api) {
    case CBT_API_V1:
    case CBT_API_V1_PTSZ:
        return ((cbt_batch_v1_fn)k->fn)(n, k->ops, k->fail_idx, k->flags, k->stream);
    case CBT_API_1D_V2:
    case CBT_API_1D_V2_PTSZ:
        return ((cbt_batch1d_v2_fn)k->fn)(k->dsts, k->srcs, k->sizes, n, k->attrs, k->attrs_idxs, num_attrs,
                                          k->stream);
    case CBT_API_1D_V1:
    case CBT_API_1D_V1_PTSZ:
        return ((cbt_batch1d_v1_fn)k->fn)(k->dsts, k->srcs, k->sizes, n, k->attrs, k->attrs_idxs, num_attrs,
                                          k->fail_idx, k->stream);
    case CBT_API_3D_ONE:
    case CBT_API_3D_ONE_PTSZ:
        return ((cbt_one3d_fn)k->fn)(k->ops, k->flags, k->stream);
    case CBT_API_1D_ONE:
    case CBT_API_1D_ONE_PTSZ: /* a batch of one copy: n is 1 (strict mode refuses it whole) */
        return ((cbt_one1d_fn)k->fn)(k->dsts[0], k->srcs[0], k->sizes[0], k->attrs, k->stream);
    default:
        return ((cbt_batch_v2_fn)k->fn)(n, k->ops, k->flags, k->stream);
    }
}

CBT_COLD_FN static CUresult no_driver(enum cbt_api api)
{
    cbt_warn_no_driver(cbt_api_name(api));
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

/*
 * The failIdx the driver gives a batch it rejects (measured on the H200,
 * modelled by the test double): untouched for a NULL stream (the caller
 * skips that), SIZE_MAX for the other batch-level errors, the index of the
 * first op whose form it rejects, else SIZE_MAX (errors found later, in its
 * pass over memory, and batches it would crash on).
 */
static size_t driver_fail_idx(const struct call *k, size_t n_read, const CUDA_MEMCPY3D_BATCH_OP *ops)
{
    if (!ops || k->flags || k->stream == CU_STREAM_LEGACY)
        return SIZE_MAX;
    for (size_t i = 0; i < n_read; i++)
        if (!cbt_op_well_formed(&ops[i]))
            return i;
    return SIZE_MAX;
}

/* ---- the 1D batch: what its arguments give away ---- */

static bool on_my_stack(struct cbt_thread *t, const void *p)
{
    if (cbt_unlikely(!t->stack_hi)) {
        pthread_attr_t a;
        void *lo = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &lo, &size) != 0)
                size = 0;
            pthread_attr_destroy(&a);
        }
        t->stack_lo = (uintptr_t)lo;
        t->stack_hi = size ? (uintptr_t)lo + size : 1; /* 1: unknown, nothing is on it */
    }
    return (uintptr_t)p >= t->stack_lo && (uintptr_t)p < t->stack_hi;
}

/* CBT_ABI_* bits: the 12.8 and 13.0 signatures mixed up. */
CBT_HOT_FN static unsigned abi_signs(struct cbt_thread *t, const struct call *k)
{
    unsigned abi = 0;
    if (t && (uintptr_t)k->stream > (uintptr_t)CU_STREAM_PER_THREAD && on_my_stack(t, k->stream))
        abi |= CBT_ABI_STREAM_ON_STACK;
    if (k->fail_idx && ((void *)k->fail_idx == (void *)k->stream || cbt_names_a_stream(t, k->fail_idx)))
        abi |= CBT_ABI_FAIL_IDX_IS_STREAM;
    return abi;
}

/*
 * Strict mode refuses a 1D batch the way the driver rejects one: when the
 * first finding that refuses it is about copy j, the copies before j are
 * made (as the driver makes them) and failIdx is j.  Returns j, or SIZE_MAX
 * when the refusal is about the batch as a whole.
 */
static size_t refused_copy(const struct cbt_thread *s, size_t kept, bool hazards)
{
    size_t j = SIZE_MAX;
    for (size_t i = 0; i < kept; i++) {
        const struct cbt_finding *f = &s->findings[i];
        bool refusing = f->severity == CBT_SEV_ERROR || (hazards && f->severity == CBT_SEV_HAZARD);
        if (!refusing || f->rule == CBT_RULE_ops_not_read)
            continue;
        if (f->op == CBT_NO_OP)
            return SIZE_MAX;
        if (f->op < j)
            j = f->op;
    }
    return j;
}


/* Copies [0, n) as ops, each with its attribute (attrsIdxs well formed): for the validator. */
static CUDA_MEMCPY3D_BATCH_OP *copies_as_ops(struct cbt_thread *t, const struct call *k, size_t n)
{
    if (n > t->cap_copies && !cbt_grow((void **)&t->copies, &t->cap_copies, n, sizeof *t->copies))
        return NULL;
    size_t a = 0;
    for (size_t i = 0; i < n; i++) {
        while (a + 1 < k->num_attrs && k->attrs_idxs[a + 1] <= i)
            a++;
        cbt_copy_op(&t->copies[i], k->dsts[i], k->srcs[i], k->sizes[i], &k->attrs[a]);
    }
    return t->copies;
}

/* ---- the first batch, and a fork ---- */

/* Set once configuration is read and the provider loaded; until then every
 * batch takes the slow path, which does both. */
CBT_HOT int cbt_ready;
CBT_HOT bool cbt_always_validate;

/*
 * A forked child has one thread, none of its parent's driver state, and is
 * an image of its own.  One function, registered once, resets every module
 * in this order: the process image (a new id and batch counter, its process
 * event to write again); the record (the write lock, the writers, the
 * thread ids, the fence); what is known of memory and streams (forgotten:
 * the child's driver state is not the parent's); GPU time (no contexts,
 * reader or other threads' rings); the graphs known (nodes.c).  Last, the
 * next batch is made a first batch again, which writes the child's process
 * event.
 */
static void after_fork_child(void)
{
    cbt_process_after_fork_child();
    cbt_record_after_fork_child();
    cbt_mem_forget_all();
    cbt_gpu_after_fork_child();
    cbt_graph_after_fork_child();
    __atomic_store_n(&cbt_ready, 0, __ATOMIC_RELEASE);
}

/* The modules tied together once: the after-fork function registered, GPU
 * time told of every context going (memwrap.c sees them).  At load, so that
 * a child forked before the first batch is an image of its own too, and
 * before the first batch (another library's constructor may make one
 * before this library's constructors ran). */
static pthread_once_t tie_once = PTHREAD_ONCE_INIT;
static void tie(void)
{
    cbt_mem_tell_contexts(cbt_gpu_context_going, cbt_gpu_context_gone);
    (void)pthread_atfork(NULL, NULL, after_fork_child);
}
__attribute__((constructor)) static void tie_at_load(void) { pthread_once(&tie_once, tie); }

CBT_COLD_FN static void first_batch(void)
{
    pthread_once(&tie_once, tie);
    const struct cbt_config *cfg = cbt_config();
    /* atomic: threads of a first batch each set it (the same value) while others read it */
    __atomic_store_n(&cbt_always_validate, cfg->mode == CBT_MODE_STRICT || cfg->report_stderr, __ATOMIC_RELAXED);
    cbt_record_init();
    if (cfg->stack_depth)
        cbt_record_stack_init();
    if (cfg->mode != CBT_MODE_OFF) {
        cbt_tracing_init();
        cbt_trace_process(); /* once per process, with the provider loaded */
    }
    __atomic_store_n(&cbt_ready, 1, __ATOMIC_RELEASE);
}

/* ---- the steps of one batch ---- */

/* A batch on its way down the steps. */
struct batch {
    const struct call *k;
    void *caller;
    struct cbt_thread *t;
    const struct cbt_real *real;
    const struct cbt_config *cfg;
    bool d1, recording, validating, timed;
    bool stream_known, capturing, risky, refuse, pending;
    unsigned abi;
    struct cbt_stream_look look;
    struct cbt_ev_batch b;
    struct cbt_ev_batch1d b1;
    size_t n, attrs_read, refuse_at;
    uint8_t stream_index;               /* the stream's in the dictionary (step_record) */
    struct cbt_dict *dict;
    uint16_t *refs;                     /* 2 per op read; NULL: not learned */
    const CUDA_MEMCPY3D_BATCH_OP *ops;  /* 3D: the op list; 1D: the copies as ops, for the validator */
    CUresult res;
    struct cbt_gpu_call gt;             /* GPU time (timed: cbt_gpu_before ran) */
};

static void emit_finding(uint64_t batch_id, const struct cbt_finding *f, void *caller, int32_t tid)
{
    struct cbt_ev_finding ev = {
        .batch_id = batch_id, .rule = f->rule, .severity = f->severity, .side = f->side, .op = f->op,
        .other_op = f->other_op, .value = f->value, .limit = f->limit, .caller = (uint64_t)(uintptr_t)caller,
        .tid = tid,
    };
    cbt_record_finding(&ev, caller);
}

/* A batch id (process.h): from the thread's block of them, a new block
 * when it is spent; without the thread's state, from the image's counter
 * itself.  The steady path's ids are the steps': one thread alone numbers
 * its batches 0, 1, 2, ...  The steps drop a block of another image (a
 * forked child's) first; the steady path, which a fork leaves until the
 * steps ran, need not. */
CBT_COLD_FN static uint64_t thread_batch_ids(struct cbt_steady *s)
{
    return cbt_batch_ids_take(s->id_next & 0xffffffff00000000ull, &s->id_next, &s->id_left);
}

static inline uint64_t thread_batch_id(struct cbt_steady *s)
{
    if (cbt_likely(s->id_left)) {
        s->id_left--;
        return s->id_next++;
    }
    return thread_batch_ids(s);
}

/* The steps' batch id: the thread's block first made the image's. */
static uint64_t steps_batch_id(struct cbt_thread *t)
{
    if (!t)
        return cbt_next_batch_id();
    const uint64_t tag = cbt_image_id() & 0xffffffff00000000ull;
    if ((t->steady.id_next ^ tag) >> 32) {
        t->steady.id_next = tag;
        t->steady.id_left = 0;
    }
    return thread_batch_id(&t->steady);
}

/* describe: ids, the stream (before the call), the signs of mixed-up ABIs. */
static void step_describe(struct batch *x)
{
    const struct call *k = x->k;
    x->b = (struct cbt_ev_batch){
        .format = CBT_EV_FORMAT, .rules = CBT_RULES_VERSION,
        .batch_id = steps_batch_id(x->t),
        .api = (uint8_t)k->api,
        .door = (uint8_t)k->door, .capture = CBT_CAPTURE_UNKNOWN, .num_ops = k->n, .flags = k->flags,
        .op_list = (uint64_t)(uintptr_t)(x->d1 ? (void *)k->dsts : (void *)k->ops),
        .stream = (uint64_t)(uintptr_t)k->stream, .device = -1, .fail_idx = UINT64_MAX,
        .caller = (uint64_t)(uintptr_t)x->caller, .tid = cbt_tid(), .device_count = cbt_device_count(x->real),
    };
    x->b1 = (struct cbt_ev_batch1d){
        .srcs = (uint64_t)(uintptr_t)k->srcs, .sizes = (uint64_t)(uintptr_t)k->sizes,
        .attrs = (uint64_t)(uintptr_t)k->attrs, .attrs_idxs = (uint64_t)(uintptr_t)k->attrs_idxs,
        .num_attrs = k->num_attrs,
    };
    /* A 1D call whose stream or failIdx is another argument in disguise: the
     * driver is not asked about that "stream", and no array is read. */
    x->abi = x->d1 ? abi_signs(x->t, k) : 0;
    x->b1.abi = (uint8_t)x->abi;
    /* Whether the driver knows the stream decides whether it reads the op list at all. */
    x->stream_known = x->abi  ? false
                      : k->fn ? cbt_stream_before(x->t, x->real, k->api, k->stream, &x->b, &x->look)
                              : true;
    /* Strict mode refuses nothing on a stream being captured: the driver
     * refuses every batch there itself (900, the capture going on), and
     * reads no memory first (an unmapped source does not crash it). */
    if (x->cfg->mode == CBT_MODE_STRICT && x->stream_known && !x->abi && k->fn) {
        x->b.capture = cbt_stream_capture(x->real, cbt_api_is_ptsz(k->api), k->stream);
        x->capturing = x->b.capture == CBT_CAPTURE_ACTIVE || x->b.capture == CBT_CAPTURE_INVALIDATED;
    }
}

/* read: how far the driver reads the op list or the copy arrays. */
static void step_read(struct batch *x)
{
    const struct call *k = x->k;
    if (x->d1) {
        x->n = cbt_copies_driver_reads(k->n, k->dsts, k->srcs, k->sizes, k->attrs, k->attrs_idxs, k->num_attrs,
                                       k->stream, x->stream_known, x->b.device_count, &x->attrs_read);
        x->b1.attrs_recorded = x->attrs_read;
    } else {
        x->n = cbt_ops_driver_reads(k->n, k->ops, k->flags, k->stream, x->stream_known);
        x->ops = k->ops;
    }
    x->b.ops_recorded = x->n;
}

/* learn: each operand's dictionary index. */
static void step_learn(struct batch *x)
{
    if (!x->recording && !x->validating && !x->timed)
        return;
    x->dict = x->t ? cbt_dict_for_batch(&x->t->dict, x->recording, x->b.batch_id, x->b.tid, cbt_mono_coarse_ns())
                   : NULL;
    x->refs = x->dict ? cbt_dict_refs(x->dict, x->n) : NULL;
    if (cbt_unlikely(!x->refs)) {
        /* Without memory for it, the batch is recorded without its operands. */
        cbt_warn_once(&no_memory_warned, "out of memory: batches are recorded without their operands");
        return;
    }
    if (x->d1)
        cbt_learn_refs1d(x->real, &x->t->cache, x->dict, x->n, x->k->dsts, x->k->srcs, x->refs, &x->risky);
    else
        cbt_learn_refs(x->real, &x->t->cache, x->dict, x->n, x->k->ops, x->refs, &x->risky);
}

/* validate: strict mode and the stderr report, before the call. */
static void step_validate(struct batch *x)
{
    if (!x->validating)
        return;
    const struct call *k = x->k;
    struct cbt_thread *t = x->t;
    if (x->d1 && x->n)
        x->ops = t ? copies_as_ops(t, k, x->n) : NULL;
    if (!t || (x->n && !x->refs) || !validator_room(t, x->n) || (x->n && !x->ops)) {
        cbt_warn_once(&no_memory_warned, "out of memory: batches are forwarded without validation");
        return;
    }
    if (x->n) {
        cbt_check_footprints(x->dict, x->ops, x->n, x->refs, &x->risky);
        cbt_refs_expand(x->dict, x->refs, x->n, t->src, t->dst);
    }
    struct cbt_batch_view view = {
        .num_ops = k->n, .ops = x->d1 ? x->ops : k->ops, .flags = k->flags, .stream = k->stream,
        .src_info = x->n ? t->src : NULL, .dst_info = x->n ? t->dst : NULL, .device_count = x->b.device_count,
        .partial = (x->d1 ? x->n > 0 : k->ops != NULL) && x->n < k->n, .num_read = x->n,
        .copies = x->d1, .dsts = k->dsts, .srcs = k->srcs, .sizes = k->sizes, .attrs = k->attrs,
        .attrs_idxs = k->attrs_idxs, .num_attrs = k->num_attrs, .attrs_read = x->attrs_read, .abi = x->abi,
    };
    size_t nf = cbt_validate(t->validator, &view, t->findings, t->cap_findings);
    if (nf != (size_t)-1 && nf > t->cap_findings &&
        cbt_grow((void **)&t->findings, &t->cap_findings, nf, sizeof *t->findings))
        nf = cbt_validate(t->validator, &view, t->findings, t->cap_findings);
    if (nf == (size_t)-1)
        nf = 0;
    size_t kept = nf < t->cap_findings ? nf : t->cap_findings;
    x->b.validated = 1;
    x->b.findings = (uint32_t)nf;
    for (size_t i = 0; i < kept; i++) {
        const struct cbt_finding *f = &t->findings[i];
        emit_finding(x->b.batch_id, f, x->caller, x->b.tid);
        if (x->cfg->report_stderr)
            cbt_alert_finding(f, x->ops, x->n, x->b.batch_id, k->api, k->door, x->caller);
        if (x->cfg->mode == CBT_MODE_STRICT && !x->capturing && f->rule != CBT_RULE_ops_not_read &&
            (f->severity == CBT_SEV_ERROR || (x->cfg->strict_hazards && f->severity == CBT_SEV_HAZARD)))
            x->refuse = true;
    }
    x->refuse_at = x->refuse && x->d1 ? refused_copy(t, kept, x->cfg->strict_hazards) : SIZE_MAX;
}

/* Does a gpu_time event of this batch follow its record (CBT_HDR_GPU)?  A
 * batch written before it is forwarded ("pending") is not timed when the
 * 12.8 ABI passed it (call_forward); cbt_gpu_after writes one for any other
 * timed batch while the session records gpu_time. */
static bool gpu_follows(const struct batch *x)
{
    return x->timed && !(x->b.outcome == CBT_OUTCOME_PENDING && x->abi) && cbt_tp_enabled(gpu_time);
}

/* record: the batch events (and the stream's description before them). */
static void step_record(struct batch *x)
{
    if (!x->recording)
        return;
    uint8_t si = x->dict ? cbt_dict_stream(x->dict, x->b.stream, x->b.stream_id, x->b.context, x->b.device,
                                           x->b.device_count)
                         : CBT_EV_NO_STREAM;
    x->stream_index = si;
    const bool gpu = cbt_unlikely(x->timed) && gpu_follows(x);
    if (x->d1)
        cbt_record_batch1d(x->dict, &x->b, si, gpu, &x->b1, x->k->attrs, x->k->attrs_idxs, x->k->dsts, x->k->srcs,
                           x->k->sizes, x->n, x->refs, x->caller);
    else
        cbt_record_batch(x->dict, &x->b, si, gpu, x->k->ops, x->n, x->refs, x->caller);
}

/* Strict mode and the stderr report: the findings the driver's answer adds
 * (a batch refused because its stream was being captured). */
static void validate_result(struct batch *x)
{
    struct cbt_finding f[4];
    size_t nf = cbt_validate_result((uint32_t)x->res, f, 4);
    for (size_t i = 0; i < nf && i < 4; i++) {
        emit_finding(x->b.batch_id, &f[i], x->caller, x->b.tid);
        if (x->cfg->report_stderr)
            cbt_alert_finding(&f[i], x->ops, x->n, x->b.batch_id, x->k->api, x->k->door, x->caller);
    }
    x->b.findings += (uint32_t)nf;
}

/* Refused before the driver sees it; the 12.8 ABI's failIdx as the driver would set it. */
static void call_refused(struct batch *x)
{
    const struct call *k = x->k;
    x->res = CUDA_ERROR_INVALID_VALUE;
    x->b.outcome = CBT_OUTCOME_REFUSED;
    if (x->d1 && x->refuse_at != SIZE_MAX && x->refuse_at > 0 && k->fn) {
        /* The copies before the refused one, with the attributes they use. */
        size_t na = 0;
        while (na < k->num_attrs && k->attrs_idxs[na] < x->refuse_at)
            na++;
        uint64_t t0 = cbt_mono_ns();
        CUresult r = forward(k, x->refuse_at, na);
        x->b.driver_ns = cbt_mono_ns() - t0;
        if (r != CUDA_SUCCESS)
            x->res = r;
    }
    if (k->fail_idx && cbt_api_has_fail_idx(k->api) && k->stream != NULL && !(x->abi & CBT_ABI_FAIL_IDX_IS_STREAM))
        *k->fail_idx = x->d1 ? (x->refuse_at != SIZE_MAX ? x->refuse_at
                                : x->n && !cbt_op_well_formed(&x->ops[x->n - 1]) ? x->n - 1 : SIZE_MAX)
                             : driver_fail_idx(k, x->n, x->ops);
    if (k->fn && !x->abi)
        cbt_stream_after(x->real, k->api, k->stream, &x->b, &x->look, x->res, false);
}

/* Forwarded: GPU time around the call; a batch the driver may crash on is
 * in the ring buffer before it is made. */
static void call_forward(struct batch *x)
{
    const struct call *k = x->k;
    x->pending = x->risky || x->abi;
    if (cbt_unlikely(x->pending)) {
        x->b.outcome = CBT_OUTCOME_PENDING;
        step_record(x);
    }
    const int ptsz = cbt_api_is_ptsz(k->api);
    x->timed = x->timed && !x->abi;
    if (cbt_unlikely(x->timed)) {
        x->gt.th = x->t && cbt_kind_cache_enabled() ? &x->t->gpu_state : NULL;
        cbt_gpu_before(&x->gt, &x->b, ptsz, k->stream);
    }
    uint64_t t0 = cbt_mono_ns();
    x->res = forward(k, k->n, k->num_attrs);
    x->b.driver_ns = cbt_mono_ns() - t0;
    if (cbt_unlikely(x->timed))
        cbt_gpu_end(&x->gt, x->res, ptsz, k->stream);
    if (!x->abi)
        cbt_stream_after(x->real, k->api, k->stream, &x->b, &x->look, x->res, true);
    if (cbt_unlikely(x->b.capture == CBT_CAPTURE_ACTIVE && x->res == CUDA_SUCCESS) && x->recording)
        cbt_graph_captured(k->stream, ptsz, x->b.batch_id, x->caller);
    if (cbt_unlikely(x->validating && x->res != CUDA_SUCCESS))
        validate_result(x);
    x->b.outcome = CBT_OUTCOME_FORWARDED;
    x->b.result = (uint32_t)x->res;
}

/* call: refuse, or forward. */
static void step_call(struct batch *x)
{
    const struct call *k = x->k;
    if (x->refuse)
        call_refused(x);
    else if (cbt_unlikely(!k->fn)) {
        x->res = no_driver(k->api);
        x->b.outcome = CBT_OUTCOME_NO_DRIVER;
    } else
        call_forward(x);
    x->b.result = (uint32_t)x->res;
    if (cbt_api_has_fail_idx(k->api) && k->fail_idx && !(x->abi & CBT_ABI_FAIL_IDX_IS_STREAM))
        x->b.fail_idx = (uint64_t)*k->fail_idx;
}

/* CUBATCHTRACE_GPU_TIME=N: is this batch the one in N of its stream (as this
 * thread counts its batches there: the first, then every Nth) that is timed? */
static bool gpu_sampled(const struct cbt_config *cfg, struct cbt_thread *t, CUstream s)
{
    uint32_t every = cfg->gpu_every;
    if (every <= 1 || !t)
        return true;
    unsigned i = cbt_stream_hash(s, CBT_GPU_SLOTS);
    if (t->gpu[i].stream != s) {
        t->gpu[i].stream = s;
        t->gpu[i].count = 0;
    }
    return t->gpu[i].count++ % every == 0;
}

/* ---- the steady state ---- */

/*
 * Most batches are like the thread's previous one: on the same stream (whose
 * id, context and device the thread knows; or another it knows so, which
 * steady_switch moves to) and not destroyed since (the log of streams,
 * cbt_streams_current), the dictionary in the same epoch, every operand in one
 * of the ranges or arrays its latest batches used (the recents, recents.h:
 * a program that goes round a few buffers stays steady; cbt_refs_steady;
 * a memory-management call since drops only the recents it touched,
 * cbt_cache_catch_up, so a program that allocates and frees other memory
 * between its batches stays steady too), in
 * observe mode with nobody validating.  The ops before the page the list
 * ends in are checked for form first (the driver reads the next op only
 * after one passed: the shim reads no further than it); the form of the
 * others is the driver's answer: all of them read when it took the batch,
 * else as far as cbt_ops_driver_reads says.  Such a batch takes the steady
 * path: nothing is asked of the driver but the call itself (and, timed on
 * the GPU, what gputime.c asks around it), no dictionary entry or stream
 * description is written (but at a refresh), and a small batch is one event,
 * written by cbt_record_steady3d or 1d from words it mostly keeps (the hdr
 * of the thread's previous steady batch, its image tag and thread id).
 * What it records is what the steps would: the steps leave t->steady only
 * after a batch that recorded its stream and learned its operands in the
 * current epoch.  A batch that meets all of this but for operands outside
 * the recents (a buffer allocated for this copy, more buffers than the
 * recents keep) learns them as the steps would (steady_learn) and is
 * otherwise such a batch.  Anything else takes the steps.  Its code is kept apart
 * from theirs (steps, steady_timed and the rare cases are out of line):
 * the driver's work evicts the caller's cache lines between two batches,
 * and every line of code the path spans is fetched again.
 */
/* A new epoch on the steady path: the entries and the stream written again
 * first (the steady state's slot holds its stream while it holds: only
 * the steps fill a slot, and they reset the steady state); returns the
 * stream's index. */
CBT_COLD_FN static uint8_t steady_refresh(struct cbt_thread *t, const struct call *k, uint64_t batch_id, int32_t tid,
                              uint64_t now, const uint16_t *refs)
{
    const struct cbt_stream_slot *slot = &t->streams[t->steady.slot];
    struct cbt_dict *d = cbt_dict_for_batch(&t->dict, true, batch_id, tid, now);
    cbt_dict_touch(d, refs, k->n);
    cbt_recents_keep(&t->cache, d); /* the entries a later steady batch may refer to, written again too */
    uint8_t si = slot->valid && slot->stream == k->stream
                     ? cbt_dict_stream(d, (uint64_t)(uintptr_t)k->stream, slot->id, (uint64_t)(uintptr_t)slot->ctx,
                                       slot->device, cbt_device_count(cbt_real()))
                     : CBT_EV_NO_STREAM;
    t->steady.epoch = d->epoch;
    t->steady.stream_index = si;
    return si;
}

static inline uint8_t capture_of(const struct call *k, CUresult r)
{
    return r == CUDA_SUCCESS && !cbt_graph_captures_batches() ? CBT_CAPTURE_NONE
           : r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? CBT_CAPTURE_ACTIVE
           : r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ? CBT_CAPTURE_INVALIDATED
                                                        : cbt_stream_capture(cbt_real(), cbt_api_is_ptsz(k->api),
                                                                             k->stream);
}

/* The batch record of a steady batch whose hdr holds an optional value (a
 * failIdx, a result beyond w, attributes not one of one, fewer ops read than
 * passed) or that takes more than one event: the general writer. */
CBT_COLD_FN static void steady_record_general(struct cbt_thread *t, const struct call *k, bool d1, const uint16_t *refs,
                                  size_t recorded, uint8_t si, const uint64_t h[CBT_EV_HEAD_WORDS],
                                  uint8_t capture, uint64_t fail_idx, CUresult r, size_t attrs_read, bool gpu,
                                  void *caller)
{
    struct cbt_ev_batch b = {
        .batch_id = h[CBT_H_ID], .api = (uint8_t)k->api, .door = (uint8_t)k->door,
        .outcome = CBT_OUTCOME_FORWARDED, .result = (uint32_t)r, .num_ops = k->n, .ops_recorded = recorded,
        .op_list = (uint64_t)(uintptr_t)(d1 ? (void *)k->dsts : (void *)k->ops), .capture = capture,
        .fail_idx = fail_idx, .driver_ns = h[CBT_H_DRIVER_NS], .caller = h[CBT_H_CALLER],
        .tid = CBT_W_TID(h[CBT_H_W]),
    };
    if (d1) {
        const struct cbt_ev_batch1d b1 = {
            .srcs = (uint64_t)(uintptr_t)k->srcs, .sizes = (uint64_t)(uintptr_t)k->sizes,
            .attrs = (uint64_t)(uintptr_t)k->attrs, .attrs_idxs = (uint64_t)(uintptr_t)k->attrs_idxs,
            .num_attrs = k->num_attrs, .attrs_recorded = attrs_read,
        };
        cbt_record_batch1d(&t->dict, &b, si, gpu, &b1, k->attrs, k->attrs_idxs, k->dsts, k->srcs, k->sizes, k->n,
                           refs, caller);
    } else {
        cbt_record_batch(&t->dict, &b, si, gpu, k->ops, recorded, refs, caller);
    }
}

/* A steady batch's record (rec's batch id set): the lean writer where its
 * hdr holds no optional value and it fits one event, else the general one. */
static inline void steady_write(struct cbt_thread *t, const struct call *k, bool d1, const uint16_t *refs,
                                size_t recorded, uint8_t si, struct cbt_steady_rec *rec, uint8_t capture,
                                uint64_t fail_idx, CUresult r, int32_t tid, uint64_t driver_ns, size_t attrs_read,
                                void *caller)
{
    /* the result's low 16 bits: one that needs the escape is not written so
     * (cbt_record_steady_fits sends it to the general writer) */
    rec->h[CBT_H_W] = CBT_W_PACK(k->api, k->door, CBT_OUTCOME_FORWARDED, capture, false, false, (uint32_t)r, tid);
    rec->h[CBT_H_DRIVER_NS] = driver_ns;
    rec->h[CBT_H_CALLER] = (uint64_t)(uintptr_t)caller;
    if (cbt_likely(recorded == k->n &&
                   cbt_record_steady_fits(d1, k->n, fail_idx, (uint32_t)r, k->num_attrs, attrs_read))) {
        rec->list = d1 ? (const void *)k->dsts : (const void *)k->ops;
        rec->n = k->n;
        rec->refs = refs;
        rec->stream_index = si;
        rec->d1 = d1;
        rec->srcs = k->srcs;
        rec->sizes = k->sizes;
        rec->attrs = k->attrs;
        rec->attrs_idxs = k->attrs_idxs;
        if (d1)
            cbt_record_steady1d(&t->dict, rec, caller);
        else
            cbt_record_steady3d(&t->dict, rec, caller);
    } else {
        steady_record_general(t, k, d1, refs, recorded, si, rec->h, capture, fail_idx, r, attrs_read, rec->gpu,
                              caller);
    }
}

/* A steady batch timed on the GPU: the same, with gputime.c's work around
 * the call and its read-back queued once the batch is written (out of
 * line, not cold: with CUBATCHTRACE_GPU_TIME=1 every batch takes it).
 * unchecked: as on the untimed way, some 3D ops' form left to the driver. */
__attribute__((noinline)) static CUresult steady_timed(struct cbt_thread *t, const struct call *k, void *caller,
                                                       bool d1, const uint16_t *refs, size_t attrs_read,
                                                       bool unchecked, bool uniform)
{
    const int ptsz = cbt_api_is_ptsz(k->api);
    const struct cbt_stream_slot *slot = &t->streams[t->steady.slot];
    struct cbt_steady_rec rec;
    rec.h[CBT_H_ID] = thread_batch_id(&t->steady);
    rec.uniform = uniform;
    /* what gputime.c reads of the batch; the stream's slot holds its
     * description while the steady state does */
    struct cbt_ev_batch b = {
        .batch_id = rec.h[CBT_H_ID], .api = (uint8_t)k->api, .tid = t->steady.tid,
        .stream = (uint64_t)(uintptr_t)k->stream, .stream_id = slot->id, .context = (uint64_t)(uintptr_t)slot->ctx,
        .device = slot->device,
    };
    struct cbt_gpu_call gt;
    t->depth++;
    gt.th = &t->gpu_state; /* the steady state holds while memwrap.c sees every way memory or a context goes */
    cbt_gpu_before(&gt, &b, ptsz, k->stream);
    uint64_t t0 = cbt_mono_ns();
    CUresult r = forward(k, k->n, k->num_attrs);
    uint64_t t1 = cbt_mono_ns();
    cbt_gpu_end(&gt, r, ptsz, k->stream);
    t->depth--;
    b.driver_ns = t1 - t0;
    const uint64_t fail_idx = cbt_api_has_fail_idx(k->api) && k->fail_idx ? (uint64_t)*k->fail_idx : UINT64_MAX;
    uint8_t si = t->steady.stream_index;
    if (cbt_unlikely(cbt_dict_refresh_due(&t->dict, t1)))
        si = steady_refresh(t, k, b.batch_id, b.tid, t1, refs);
    const size_t recorded = cbt_unlikely(unchecked && r != CUDA_SUCCESS)
                                ? cbt_ops_driver_reads(k->n, k->ops, 0, k->stream, true)
                                : k->n;
    rec.gpu = cbt_gpu_follows(&gt);
    const uint8_t capture = capture_of(k, r);
    if (cbt_unlikely(capture == CBT_CAPTURE_ACTIVE && r == CUDA_SUCCESS))
        cbt_graph_captured(k->stream, ptsz, rec.h[CBT_H_ID], caller);
    steady_write(t, k, d1, refs, recorded, si, &rec, capture, fail_idx, r, b.tid, b.driver_ns, attrs_read, caller);
    cbt_gpu_after(&gt, b.batch_id); /* after the batch event, which its gpu_time follows */
    return r;
}

/* A batch on another stream than the steady one's: the steady state moves
 * to it when the thread knows it as it knows the steady one (its slot holds
 * its id, context and device, not destroyed since, and the dictionary
 * describes it so in this epoch): a thread that goes round a few streams
 * stays steady.  Out of line, not cold: such a thread takes it every batch. */
__attribute__((noinline)) static bool steady_switch(struct cbt_thread *t, const struct call *k)
{
    const int ptsz = cbt_api_is_ptsz(k->api);
    if (cbt_unlikely((uintptr_t)k->stream <= (uintptr_t)CU_STREAM_PER_THREAD))
        return false;
    const struct cbt_stream_slot *slot = cbt_stream_slot_find(t, k->stream, ptsz);
    if (!slot)
        return false;
    uint8_t si = cbt_dict_stream_known(&t->dict, (uint64_t)(uintptr_t)k->stream, slot->id,
                                       (uint64_t)(uintptr_t)slot->ctx, slot->device, cbt_device_count_fast(cbt_real()));
    if (si == CBT_EV_NO_STREAM)
        return false;
    t->steady.stream = k->stream;
    t->steady.ptsz = (uint8_t)ptsz;
    t->steady.stream_index = si;
    t->steady.slot = (uint8_t)(slot - t->streams);
    return true;
}

/* A batch steady but for operands none of the recents holds (a buffer
 * allocated for this copy, one more than the recents keep): the driver's
 * reading of the list or arrays as the steps' read step finds it (all of
 * it, or the steps), then its operands learned as the steps' learn step
 * learns them (the cache, else the driver; new dictionary entries written
 * ahead of the batch) in the dictionary's current epoch, not one a refresh
 * is about to replace.  The rest of the batch is the steady path's.  An
 * operand in unmapped memory, which the steps write ahead of the call: the
 * steps.  Out of line: a thread whose buffers repeat never runs it. */
__attribute__((noinline)) static bool steady_learn(struct cbt_thread *t, const struct call *k, bool d1,
                                                   uint16_t *refs)
{
    const uint64_t now = cbt_mono_coarse_ns();
    struct cbt_dict *d = &t->dict;
    const uint64_t key = (t->steady.id_next & 0xffffffff00000000ull) | (uint32_t)t->steady.tid;
    if (d->key != key || !d->was_emitting || cbt_dict_refresh_due(d, now))
        return false;
    const struct cbt_real *real = cbt_real();
    size_t attrs_read = 0;
    const size_t read = d1 ? cbt_copies_driver_reads(k->n, k->dsts, k->srcs, k->sizes, k->attrs, k->attrs_idxs,
                                                     k->num_attrs, k->stream, true, cbt_device_count_fast(real),
                                                     &attrs_read)
                           : cbt_ops_driver_reads(k->n, k->ops, k->flags, k->stream, true);
    if (read != k->n)
        return false;
    d = cbt_dict_for_batch(d, true, t->steady.id_next, t->steady.tid, now);
    if (cbt_unlikely(!d || d->epoch != t->steady.epoch))
        return false;
    bool risky = false;
    t->depth++;
    if (d1)
        cbt_learn_refs1d(real, &t->cache, d, k->n, k->dsts, k->srcs, refs, &risky);
    else
        cbt_learn_refs(real, &t->cache, d, k->n, k->ops, refs, &risky);
    t->depth--;
    return !risky;
}

static inline __attribute__((always_inline)) bool steady_path(struct cbt_thread *t, const struct call *k,
                                                               void *caller, const bool d1, bool timed, CUresult *res)
{
    const struct cbt_steady *s = &t->steady;
    cbt_streams_current(t); /* a stream destroyed: its slot goes, and the steady state if it is its stream's */
    const uint64_t mem = __atomic_load_n(&cbt_mem_generation, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(!s->valid || !k->fn || !k->n || s->epoch != t->dict.epoch ||
                     __atomic_load_n(&cbt_kind_cache_off, __ATOMIC_ACQUIRE)))
        return false;
    if (cbt_unlikely(t->cache.generation != mem))
        cbt_cache_catch_up(&t->cache, mem); /* memory changed: what it touched goes, the recents with it */
    if (cbt_unlikely(k->stream != s->stream || s->ptsz != cbt_api_is_ptsz(k->api)) && !steady_switch(t, k))
        return false;
    /* Room only where the thread already has it: a batch larger than any
     * before takes the steps, which make room for the ops the driver reads,
     * not for numOps (a program's absurd 2^40 would ask for terabytes). */
    uint16_t *refs = cbt_likely(2 * k->n <= CBT_DICT_SMALL) ? t->dict.small_refs : cbt_dict_refs_held(&t->dict, k->n);
    if (cbt_unlikely(!refs))
        return false;
    size_t attrs_read = 0;
    bool unchecked = false; /* 3D: some ops' form left to the driver's answer */
    bool uniform = false;   /* every op's (copy's) refs are op 0's */
    if (d1) {
        /* what cbt_copies_driver_reads asks (the stream is the steady one,
         * which the driver knows), the copies' test with their refs; the
         * signatures mixed up (abi_signs) can only show in a failIdx now
         * (the steady stream is a handle the driver described, not an
         * address on this thread's stack) */
        if ((k->fail_idx && abi_signs(t, k)) || !k->dsts || !k->srcs || !k->sizes || !k->attrs || !k->attrs_idxs ||
            !k->num_attrs || k->num_attrs > k->n || k->num_attrs > CBT_EV_ATTRS1D ||
            !cbt_attrs_well_formed(k->attrs, k->attrs_idxs, k->num_attrs, k->n, cbt_device_count_fast(cbt_real()),
                                   &attrs_read))
            return false;
        if (!cbt_refs_steady1d(&t->cache, k->n, k->dsts, k->srcs, k->sizes, refs, &uniform)) {
            if (!steady_learn(t, k, d1, refs))
                return false;
            uniform = false;
        }
    } else {
        if (k->flags || !k->ops)
            return false;
        size_t checked = cbt_ops_to_check(k->ops, k->n);
        unchecked = checked < k->n;
        if (!cbt_refs_steady(&t->cache, k->n, k->ops, refs, checked, &uniform)) {
            if (!steady_learn(t, k, d1, refs))
                return false;
            unchecked = false; /* the steps' read step read them all */
            uniform = false;
        }
    }
    if (cbt_unlikely(timed)) {
        *res = steady_timed(t, k, caller, d1, refs, attrs_read, unchecked, uniform);
        return true;
    }

    struct cbt_steady_rec rec;
    rec.h[CBT_H_ID] = thread_batch_id(&t->steady);
    rec.gpu = false;
    rec.uniform = uniform;
    const int32_t tid = s->tid;
    t->depth++;
    uint64_t t0 = cbt_mono_ns();
    CUresult r = forward(k, k->n, k->num_attrs);
    uint64_t t1 = cbt_mono_ns();
    t->depth--;
    const uint8_t capture = capture_of(k, r);
    const uint64_t fail_idx = cbt_api_has_fail_idx(k->api) && k->fail_idx ? (uint64_t)*k->fail_idx : UINT64_MAX;
    /* the driver read every op of a batch it took; of one it refused, as
     * far as the first whose form it rejects */
    const size_t recorded = cbt_unlikely(unchecked && r != CUDA_SUCCESS)
                                ? cbt_ops_driver_reads(k->n, k->ops, 0, k->stream, true)
                                : k->n;
    uint8_t si = s->stream_index;
    if (cbt_unlikely(cbt_dict_refresh_due(&t->dict, t1)))
        si = steady_refresh(t, k, rec.h[CBT_H_ID], tid, t1, refs);
    if (cbt_unlikely(capture == CBT_CAPTURE_ACTIVE && r == CUDA_SUCCESS))
        cbt_graph_captured(k->stream, cbt_api_is_ptsz(k->api), rec.h[CBT_H_ID], caller);
    steady_write(t, k, d1, refs, recorded, si, &rec, capture, fail_idx, r, tid, t1 - t0, attrs_read, caller);
    *res = r;
    return true;
}

/* After the steps: whether the next batch may take the steady path. */
static void steady_after(struct cbt_thread *t, const struct batch *x)
{
    const struct cbt_stream_slot *slot = x->look.slot;
    bool ok = x->recording && !x->validating && x->dict && x->refs && !x->abi && !x->pending &&
              x->b.outcome == CBT_OUTCOME_FORWARDED && x->stream_index != CBT_EV_NO_STREAM && slot &&
              slot->valid && slot->stream == x->k->stream && cbt_kind_cache_enabled(); /* then only turned off */
    /* the ids the thread holds are kept (this batch's steps made them the
     * image's), and how far its slots follow the log of streams */
    t->steady = (struct cbt_steady){.stream = x->k->stream, .generation = t->steady.generation,
                                    .id_next = t->steady.id_next, .id_left = t->steady.id_left, .tid = cbt_tid(),
                                    .epoch = ok ? x->dict->epoch : 0, .ptsz = (uint8_t)cbt_api_is_ptsz(x->k->api),
                                    .stream_index = x->stream_index, .valid = ok,
                                    .slot = ok ? (uint8_t)(slot - t->streams) : 0};
}

/* The steps, for a batch the steady path does not take (out of line: the
 * steady path's code stays a few cache lines in a row). */
__attribute__((noinline)) static CUresult steps(const struct call *k, void *caller, struct cbt_thread *t,
                                                const struct cbt_config *cfg, bool d1, bool recording, bool timed)
{
    if (t) {
        t->depth++;
        t->steps_taken++;
    }
    struct batch x = {
        .k = k, .caller = caller, .t = t, .real = cbt_real(), .cfg = cfg, .d1 = d1,
        .recording = recording, .validating = __atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED),
        .timed = timed, .refuse_at = SIZE_MAX, .stream_index = CBT_EV_NO_STREAM,
        .gt = {.status = CBT_GPU_CALL_FAILED}, /* timed but refused, or no driver: not forwarded, no copy to time */
    };
    step_describe(&x);
    step_read(&x);
    step_learn(&x);
    step_validate(&x);
    step_call(&x);
    if (x.pending)
        cbt_record_end(&x.b, caller);
    else
        step_record(&x);
    if (cbt_unlikely(x.timed))
        cbt_gpu_after(&x.gt, x.b.batch_id); /* after the batch event, which its gpu_time follows */
    if (t) {
        t->depth--;
        steady_after(t, &x);
    }
    return x.res;
}

/* Built twice, into cbt_batch (d1 false) and cbt_batch1d (d1 true), with
 * steady_path: each kind's path holds none of the other's code between its
 * lines (the driver's work evicts them, and each is fetched again). */
static inline __attribute__((always_inline)) CUresult common(const struct call *k, void *caller, const bool d1)
{
    if (cbt_unlikely(!__atomic_load_n(&cbt_ready, __ATOMIC_ACQUIRE)))
        first_batch();
    /* Straight through when nobody listens (the doors test cbt_quiet first;
     * this is for the first batch), when the shim is off, and for a batch the
     * driver makes from inside a batch. */
    const struct cbt_config *cfg = cbt_config();
    struct cbt_thread *t = cbt_thread();
    if ((cbt_likely(k->fn != NULL) && (d1 ? cbt_quiet1d() : cbt_quiet())) || cfg->mode == CBT_MODE_OFF ||
        (t && t->depth > 0))
        return k->fn ? forward(k, k->n, k->num_attrs) : no_driver(k->api);
    const bool recording = d1 ? cbt_tp_enabled(c) : cbt_tp_enabled(b);
    const bool timed = cfg->gpu_time && gpu_sampled(cfg, t, k->stream);
    /* CUBATCHTRACE_STACK=N: the callers, just before the batch they made
     * (off: one test of a setting beside gpu_time's) */
    if (cbt_unlikely(cfg->stack_depth) && recording)
        cbt_record_stack(cfg->stack_depth, caller);
    CUresult res;
    if (!(t && recording && cfg->mode == CBT_MODE_OBSERVE && !__atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED) &&
          steady_path(t, k, caller, d1, timed, &res)))
        res = steps(k, caller, t, cfg, d1, recording, timed);
    return res;
}

/* How many of the calling thread's batches took the steps rather than the
 * steady path (exported, libcubatchtrace(7): whether a program's batches
 * stay on the steady path). */
CBT_EXPORT unsigned long long cubatchtrace_thread_steps(void)
{
    const struct cbt_thread *t = cbt_tls_thread;
    return t ? t->steps_taken : 0;
}

CBT_HOT_FN CUresult cbt_batch(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                   CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                   void *caller)
{
    const struct call k = {.api = api, .door = door, .fn = real_fn, .n = num_ops, .fail_idx = fail_idx,
                           .stream = stream, .ops = ops, .flags = flags};
    return common(&k, caller, false);
}

CBT_HOT_FN CUresult cbt_batch1d(enum cbt_api api, enum cbt_door door, void *real_fn, CUdeviceptr *dsts, CUdeviceptr *srcs,
                     size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t num_attrs,
                     size_t *fail_idx, CUstream stream, void *caller)
{
    const struct call k = {.api = api, .door = door, .fn = real_fn, .n = count, .fail_idx = fail_idx,
                           .stream = stream, .dsts = dsts, .srcs = srcs, .sizes = sizes, .attrs = attrs,
                           .attrs_idxs = attrs_idxs, .num_attrs = num_attrs};
    return common(&k, caller, true);
}

/* The single-copy form as a batch of one: the copy's arguments become
 * one-entry arrays here, so that it is learned, validated and recorded as
 * copy 0 of a 1D batch (the recorded array addresses are these, the
 * attribute's is the caller's); forward() passes the values on. */
CUresult cbt_copy1d(enum cbt_api api, enum cbt_door door, void *real_fn, CUdeviceptr dst, CUdeviceptr src,
                    size_t size, CUmemcpyAttributes *attr, CUstream stream, void *caller)
{
    CUdeviceptr dsts[1] = {dst}, srcs[1] = {src};
    size_t sizes[1] = {size}, attrs_idxs[1] = {0};
    const struct call k = {.api = api, .door = door, .fn = real_fn, .n = 1, .stream = stream, .dsts = dsts,
                           .srcs = srcs, .sizes = sizes, .attrs = attr, .attrs_idxs = attrs_idxs, .num_attrs = 1};
    return common(&k, caller, true);
}

/* ---- the fabric batch ---- */

CUresult cbt_fabric(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                    CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream stream, void *caller)
{
    if (cbt_unlikely(!__atomic_load_n(&cbt_ready, __ATOMIC_ACQUIRE)))
        first_batch();
    if (cbt_unlikely(!real_fn))
        return no_driver(api);
    struct cbt_thread *t = cbt_thread();
    if (cbt_config()->mode == CBT_MODE_OFF || (t && t->depth > 0) || !cbt_tp_enabled(fabric))
        return ((cbt_fabric_fn)real_fn)(num_ops, ops, flags, stream);
    if (t)
        t->depth++;
    uint64_t t0 = cbt_mono_ns();
    CUresult r = ((cbt_fabric_fn)real_fn)(num_ops, ops, flags, stream);
    uint64_t t1 = cbt_mono_ns();
    if (t)
        t->depth--;
    struct cbt_ev_fabric ev = {
        .api = (uint8_t)api, .door = (uint8_t)door, .num_ops = num_ops, .op_list = (uint64_t)(uintptr_t)ops,
        .flags = flags, .stream = (uint64_t)(uintptr_t)stream, .result = (uint32_t)r, .driver_ns = t1 - t0,
        .caller = (uint64_t)(uintptr_t)caller, .tid = cbt_tid(),
    };
    cbt_tp(fabric, &ev, caller);
    return r;
}

/* ---- a batch node's parameters (src/graph.c) ---- */

bool cbt_batch_setup(void)
{
    if (cbt_unlikely(!__atomic_load_n(&cbt_ready, __ATOMIC_ACQUIRE)))
        first_batch();
    return cbt_config()->mode != CBT_MODE_OFF;
}

/*
 * A batch node's copies recorded as a 1D batch of door `door` that ran
 * nowhere: no stream, result 0, every copy (a size of 0, which disables a
 * copy in a node, does not end what is recorded as it ends a call's), its
 * operands learned as a batch's are.  The reader validates it and keeps it
 * for the launches that run it.  Returns its id; 0 when not recorded.
 */
uint64_t cbt_record_node(enum cbt_door door, const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes,
                         size_t count, const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                         void *caller)
{
    struct cbt_thread *t = cbt_thread();
    if (!t || t->depth > 0 || !cbt_tp_enabled(c))
        return 0;
    const struct cbt_real *real = cbt_real();
    t->depth++;
    size_t attrs_read = 0;
    bool attrs_ok = count && dsts && srcs && sizes && attrs && attrs_idxs && num_attrs && num_attrs <= count &&
                    cbt_attrs_well_formed(attrs, attrs_idxs, num_attrs, count, cbt_device_count(real), &attrs_read);
    const size_t n = attrs_ok ? count : 0;
    struct cbt_ev_batch b = {
        .format = CBT_EV_FORMAT, .rules = CBT_RULES_VERSION, .batch_id = steps_batch_id(t),
        .api = CBT_API_1D_V2, .door = (uint8_t)door, .outcome = CBT_OUTCOME_FORWARDED, .capture = CBT_CAPTURE_NONE,
        .num_ops = count, .ops_recorded = n, .op_list = (uint64_t)(uintptr_t)dsts, .device = -1,
        .fail_idx = UINT64_MAX, .caller = (uint64_t)(uintptr_t)caller, .tid = cbt_tid(),
        .device_count = cbt_device_count(real),
    };
    struct cbt_ev_batch1d b1 = {
        .srcs = (uint64_t)(uintptr_t)srcs, .sizes = (uint64_t)(uintptr_t)sizes, .attrs = (uint64_t)(uintptr_t)attrs,
        .attrs_idxs = (uint64_t)(uintptr_t)attrs_idxs, .num_attrs = num_attrs, .attrs_recorded = attrs_read,
    };
    struct cbt_dict *d = cbt_dict_for_batch(&t->dict, true, b.batch_id, b.tid, cbt_mono_coarse_ns());
    uint16_t *refs = d ? cbt_dict_refs(d, n) : NULL;
    bool risky = false;
    if (refs && n)
        cbt_learn_refs1d(real, &t->cache, d, n, (CUdeviceptr *)dsts, (CUdeviceptr *)srcs, refs, &risky);
    /* no stream, described as the handle 0: the record's rules version and
     * the device count travel with a stream description */
    uint8_t si = d ? cbt_dict_stream(d, 0, 0, 0, -1, b.device_count) : CBT_EV_NO_STREAM;
    if (d)
        cbt_record_batch1d(d, &b, si, false, &b1, attrs, attrs_idxs, dsts, srcs, sizes, n, refs, caller);
    t->depth--;
    /* the thread's next batch takes the steps: its record's memo is this one's */
    t->steady.valid = 0;
    return d ? b.batch_id : 0;
}

