/* SPDX-License-Identifier: MIT */
/*
 * The common path behind every door: capture the batch, validate it when
 * the calling thread is asked to (strict mode, the stderr report), record
 * it, refuse it in strict mode, forward it.
 *
 * With CUBATCHTRACE_MODE=observe, no session listening and no stderr
 * report, a batch costs two loads and a few branches on top of the driver
 * call (the doors test cbt_quiet first).  With a session, the calling
 * thread learns the operands' memory kinds, forwards, and writes the batch
 * into LTTng's ring buffer before it returns; the tool validates it when
 * the trace is read.  A batch with an operand the driver may crash on is
 * written before it is forwarded (outcome "pending"), its result after.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "capture.h"
#include "gputime.h"
#include "operands.h"
#include "process.h"
#include "memwrap.h"
#include "report.h"
#include "settings.h"
#include "tp.h"

/* Per-thread scratch memory, grown on demand and reused, so the steady state
 * allocates nothing.  Only a pointer lives in TLS (initial-exec TLS is scarce
 * when the shim is dlopened rather than preloaded). */
struct scratch {
    struct cbt_validator *validator;
    size_t cap_ops;
    struct cbt_operand_info *src, *dst;
    size_t cap_findings;
    struct cbt_finding *findings;
    size_t cap_copies;
    CUDA_MEMCPY3D_BATCH_OP *copies; /* a 1D batch's copies as ops */
};

static CBT_TLS struct scratch *tls_scratch;
static CBT_TLS int tls_depth; /* > 0 while this thread is inside cbt_batch */
static pthread_key_t scratch_key;
static pthread_once_t scratch_key_once = PTHREAD_ONCE_INIT;
static int no_memory_warned;

static void scratch_free(void *p)
{
    struct scratch *s = p;
    if (!s)
        return;
    cbt_validator_free(s->validator);
    free(s->src);
    free(s->dst);
    free(s->findings);
    free(s->copies);
    free(s);
}

static void make_scratch_key(void) { (void)pthread_key_create(&scratch_key, scratch_free); }

/* Room for `want` elements (doubling); false when out of memory or beyond any
 * size memory can hold (a corrupt numOps must not loop or overflow). */
static bool grow(void **p, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap)
        return true;
    if (want > SIZE_MAX / 4 / elem)
        return false;
    size_t n = *cap ? *cap : 64;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static struct scratch *scratch_for(size_t num_ops)
{
    struct scratch *s = tls_scratch;
    if (cbt_unlikely(!s)) {
        pthread_once(&scratch_key_once, make_scratch_key);
        s = calloc(1, sizeof *s);
        if (!s || !(s->validator = cbt_validator_new())) {
            free(s);
            return NULL;
        }
        tls_scratch = s;
        (void)pthread_setspecific(scratch_key, s);
    }
    if (num_ops > s->cap_ops) {
        size_t c1 = s->cap_ops, c2 = s->cap_ops;
        if (!grow((void **)&s->src, &c1, num_ops, sizeof *s->src) ||
            !grow((void **)&s->dst, &c2, num_ops, sizeof *s->dst))
            return NULL;
        s->cap_ops = c1 < c2 ? c1 : c2;
    }
    if (!s->findings && !grow((void **)&s->findings, &s->cap_findings, 64, sizeof *s->findings))
        return NULL;
    return s;
}

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

static CUresult forward(const struct call *k, size_t n, size_t num_attrs)
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
    default:
        return ((cbt_batch_v2_fn)k->fn)(n, k->ops, k->flags, k->stream);
    }
}

static CUresult no_driver(enum cbt_api api)
{
    cbt_warn_no_driver(cbt_api_name(api));
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

/*
 * What a stream handle names: its id, context and device.  A created
 * stream's are fixed for its life, and its life ends with cuStreamDestroy
 * or its context's destruction, which memwrap.c wraps (they move
 * cbt_mem_generation on): each thread keeps the answers for a few handles
 * while the generation stays.  The special handles (NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD) name the calling thread's current context, which
 * changes unseen: they are asked every time, as is the capture state.
 */
#define STREAM_SLOTS 8
struct stream_slot {
    CUstream stream;
    uint64_t generation;
    unsigned long long id;
    CUcontext ctx;
    int32_t device;
    uint8_t ptsz, valid;
};
static CBT_TLS struct stream_slot *tls_streams;
static pthread_key_t streams_key;
static pthread_once_t streams_key_once = PTHREAD_ONCE_INIT;

static void make_streams_key(void) { (void)pthread_key_create(&streams_key, free); }

static struct stream_slot *stream_slots(void)
{
    struct stream_slot *s = tls_streams;
    if (cbt_unlikely(!s)) {
        pthread_once(&streams_key_once, make_streams_key);
        if (!(s = calloc(STREAM_SLOTS, sizeof *s)))
            return NULL;
        tls_streams = s;
        (void)pthread_setspecific(streams_key, s);
    }
    return s;
}

/* Stream, context, device and capture state of a batch, for the record. */
static bool describe_stream(const struct cbt_real *real, enum cbt_api api, CUstream stream, struct cbt_ev_batch *b)
{
    bool known = true;
    int ptsz = cbt_api_is_ptsz(api);
    unsigned long long id = 0;
    CUcontext ctx = NULL;
    CUstreamCaptureStatus cap;
    b->capture = CBT_CAPTURE_UNKNOWN;
    b->device = -1;
    bool special = (uintptr_t)stream <= (uintptr_t)CU_STREAM_PER_THREAD;
    uint64_t gen = __atomic_load_n(&cbt_mem_generation, __ATOMIC_ACQUIRE);
    struct stream_slot *slots = special ? NULL : stream_slots();
    struct stream_slot *slot = slots ? &slots[((uintptr_t)stream >> 4) % STREAM_SLOTS] : NULL;
    if (slot && slot->valid && slot->stream == stream && slot->ptsz == ptsz && slot->generation == gen &&
        cbt_kind_cache_enabled()) {
        b->stream_id = slot->id;
        b->context = (uint64_t)(uintptr_t)slot->ctx;
        b->device = slot->device;
    } else {
        bool id_ok = real->stream_get_id[ptsz] && real->stream_get_id[ptsz](stream, &id) == CUDA_SUCCESS;
        bool ctx_ok = real->stream_get_ctx[ptsz] && real->stream_get_ctx[ptsz](stream, &ctx) == CUDA_SUCCESS;
        /* A stream the driver does not know: it rejects the batch without reading the ops. */
        if (real->stream_get_ctx[ptsz] && !ctx_ok && !special)
            known = false;
        if (id_ok)
            b->stream_id = id;
        if (ctx_ok) {
            b->context = (uint64_t)(uintptr_t)ctx;
            CUdevice dev;
            if (ctx && real->ctx_get_device_v2 && real->ctx_get_device_v2(&dev, ctx) == CUDA_SUCCESS)
                b->device = dev;
        }
        if (slot && id_ok && ctx_ok && b->device >= 0) {
            *slot = (struct stream_slot){.stream = stream, .generation = gen, .id = id, .ctx = ctx,
                                         .device = b->device, .ptsz = (uint8_t)ptsz, .valid = 1};
        }
    }
    if (real->stream_is_capturing[ptsz] && real->stream_is_capturing[ptsz](stream, &cap) == CUDA_SUCCESS)
        b->capture = (uint8_t)cap;
    return known;
}


/* Run the validator over the captured ops; the findings are in s->findings
 * (as many as fit); returns how many there were. */
static size_t validate(struct scratch *s, const struct cbt_captured *c, const struct call *k, size_t n_read,
                       const CUDA_MEMCPY3D_BATCH_OP *ops, int device_count, size_t attrs_read, unsigned abi)
{
    if (n_read)
        cbt_capture_expand(c, s->src, s->dst);
    bool d1 = cbt_api_is_1d(k->api);
    struct cbt_batch_view view = {
        .num_ops = k->n, .ops = ops, .flags = k->flags, .stream = k->stream,
        .src_info = n_read ? s->src : NULL, .dst_info = n_read ? s->dst : NULL, .device_count = device_count,
        .partial = (d1 ? n_read > 0 : ops != NULL) && n_read < k->n, .num_read = n_read,
        .copies = d1, .dsts = k->dsts, .srcs = k->srcs, .sizes = k->sizes, .attrs = k->attrs,
        .attrs_idxs = k->attrs_idxs, .num_attrs = k->num_attrs, .attrs_read = attrs_read, .abi = abi,
    };
    size_t nf = cbt_validate(s->validator, &view, s->findings, s->cap_findings);
    if (nf != (size_t)-1 && nf > s->cap_findings &&
        grow((void **)&s->findings, &s->cap_findings, nf, sizeof *s->findings))
        nf = cbt_validate(s->validator, &view, s->findings, s->cap_findings);
    return nf == (size_t)-1 ? 0 : nf;
}

static void emit_finding(uint64_t batch_id, const struct cbt_finding *f, void *caller, int32_t tid)
{
    struct cbt_ev_finding ev = {
        .batch_id = batch_id, .rule = f->rule, .severity = f->severity, .side = f->side, .op = f->op,
        .other_op = f->other_op, .value = f->value, .limit = f->limit, .caller = (uint64_t)(uintptr_t)caller,
        .tid = tid,
    };
    cbt_capture_record_finding(&ev, caller);
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

/* The calling thread's stack, learned once per thread. */
static CBT_TLS uintptr_t tls_stack_lo, tls_stack_hi;

static bool on_my_stack(const void *p)
{
    if (cbt_unlikely(!tls_stack_hi)) {
        pthread_attr_t a;
        void *lo = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &lo, &size) != 0)
                size = 0;
            pthread_attr_destroy(&a);
        }
        tls_stack_lo = (uintptr_t)lo;
        tls_stack_hi = size ? (uintptr_t)lo + size : 1; /* 1: unknown, nothing is on it */
    }
    return (uintptr_t)p >= tls_stack_lo && (uintptr_t)p < tls_stack_hi;
}

/* Is `p` a stream handle: a special one, or one this thread saw as the
 * stream of an earlier batch (and which is still alive)? */
static bool names_a_stream(const void *p)
{
    if ((uintptr_t)p == (uintptr_t)CU_STREAM_LEGACY || (uintptr_t)p == (uintptr_t)CU_STREAM_PER_THREAD)
        return true;
    struct stream_slot *slots = tls_streams;
    if (!p || !slots)
        return false;
    const struct stream_slot *slot = &slots[((uintptr_t)p >> 4) % STREAM_SLOTS];
    return slot->valid && slot->stream == (CUstream)p &&
           slot->generation == __atomic_load_n(&cbt_mem_generation, __ATOMIC_ACQUIRE);
}

/* CBT_ABI_* bits: the 12.8 and 13.0 signatures mixed up. */
static unsigned abi_signs(const struct call *k)
{
    unsigned abi = 0;
    if ((uintptr_t)k->stream > (uintptr_t)CU_STREAM_PER_THREAD && on_my_stack(k->stream))
        abi |= CBT_ABI_STREAM_ON_STACK;
    if (k->fail_idx && ((void *)k->fail_idx == (void *)k->stream || names_a_stream(k->fail_idx)))
        abi |= CBT_ABI_FAIL_IDX_IS_STREAM;
    return abi;
}

/* Copies [0, n) as ops, each with its attribute (attrsIdxs well formed). */
static CUDA_MEMCPY3D_BATCH_OP *copies_as_ops(struct scratch *s, const struct call *k, size_t n)
{
    if (n > s->cap_copies && !grow((void **)&s->copies, &s->cap_copies, n, sizeof *s->copies))
        return NULL;
    size_t a = 0;
    for (size_t i = 0; i < n; i++) {
        while (a + 1 < k->num_attrs && k->attrs_idxs[a + 1] <= i)
            a++;
        cbt_copy_op(&s->copies[i], k->dsts[i], k->srcs[i], k->sizes[i], &k->attrs[a]);
    }
    return s->copies;
}

/* Set once configuration is read and the provider loaded; until then every
 * batch takes the slow path, which does both. */
int cbt_ready;
bool cbt_always_validate;

static void first_batch(void)
{
    const struct cbt_config *cfg = cbt_config();
    cbt_always_validate = cfg->mode == CBT_MODE_STRICT || cfg->report_stderr;
    cbt_capture_init();
    if (cfg->mode != CBT_MODE_OFF) {
        cbt_tracing_init();
        cbt_trace_process(); /* once per process, with the provider loaded */
    }
    __atomic_store_n(&cbt_ready, 1, __ATOMIC_RELEASE);
}

static CUresult common(const struct call *k, void *caller);

CUresult cbt_batch(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                   CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                   void *caller)
{
    const struct call k = {.api = api, .door = door, .fn = real_fn, .n = num_ops, .fail_idx = fail_idx,
                           .stream = stream, .ops = ops, .flags = flags};
    return common(&k, caller);
}

CUresult cbt_batch1d(enum cbt_api api, enum cbt_door door, void *real_fn, CUdeviceptr *dsts, CUdeviceptr *srcs,
                     size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t num_attrs,
                     size_t *fail_idx, CUstream stream, void *caller)
{
    const struct call k = {.api = api, .door = door, .fn = real_fn, .n = count, .fail_idx = fail_idx,
                           .stream = stream, .dsts = dsts, .srcs = srcs, .sizes = sizes, .attrs = attrs,
                           .attrs_idxs = attrs_idxs, .num_attrs = num_attrs};
    return common(&k, caller);
}

/*
 * Strict mode refuses a 1D batch the way the driver rejects one: when the
 * first finding that refuses it is about copy j, the copies before j are
 * made (as the driver makes them) and failIdx is j.  Returns j, or SIZE_MAX
 * when the refusal is about the batch as a whole.
 */
static size_t refused_copy(const struct scratch *s, size_t kept, bool hazards)
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

static CUresult common(const struct call *k, void *caller)
{
    if (cbt_unlikely(!__atomic_load_n(&cbt_ready, __ATOMIC_ACQUIRE)))
        first_batch();
    const bool d1 = cbt_api_is_1d(k->api);
    /* Straight through when nobody listens (the doors test cbt_quiet first;
     * this is for the first batch), when the shim is off, and for a batch the
     * driver makes from inside a batch. */
    const struct cbt_config *cfg = cbt_config();
    if ((cbt_likely(k->fn != NULL) && (d1 ? cbt_quiet1d() : cbt_quiet())) || cfg->mode == CBT_MODE_OFF ||
        tls_depth > 0)
        return k->fn ? forward(k, k->n, k->num_attrs) : no_driver(k->api);
    tls_depth++;

    const struct cbt_real *real = cbt_real();
    bool v1 = cbt_api_has_fail_idx(k->api);
    struct cbt_ev_batch b = {
        .format = CBT_EV_FORMAT, .rules = CBT_RULES_VERSION,
        .batch_id = cbt_next_batch_id(), .api = (uint8_t)k->api,
        .door = (uint8_t)k->door, .capture = CBT_CAPTURE_UNKNOWN, .num_ops = k->n, .flags = k->flags,
        .op_list = (uint64_t)(uintptr_t)(d1 ? (void *)k->dsts : (void *)k->ops),
        .stream = (uint64_t)(uintptr_t)k->stream, .device = -1, .fail_idx = UINT64_MAX,
        .caller = (uint64_t)(uintptr_t)caller, .tid = cbt_tid(), .device_count = cbt_device_count(real),
    };
    struct cbt_ev_batch1d b1 = {
        .srcs = (uint64_t)(uintptr_t)k->srcs, .sizes = (uint64_t)(uintptr_t)k->sizes,
        .attrs = (uint64_t)(uintptr_t)k->attrs, .attrs_idxs = (uint64_t)(uintptr_t)k->attrs_idxs,
        .num_attrs = k->num_attrs,
    };
    /* A 1D call whose stream or failIdx is another argument in disguise: the
     * driver is not asked about that "stream", and no array is read. */
    unsigned abi = d1 ? abi_signs(k) : 0;
    b1.abi = (uint8_t)abi;
    /* The stream is asked about before the call: whether the driver knows it
     * decides whether it reads the op list at all. */
    bool stream_known = abi ? false : k->fn ? describe_stream(real, k->api, k->stream, &b) : true;
    size_t n, attrs_read = 0;
    CUDA_MEMCPY3D_BATCH_OP *ops = k->ops;
    struct scratch *s = NULL;
    if (d1) {
        n = cbt_copies_driver_reads(k->n, k->dsts, k->srcs, k->sizes, k->attrs, k->attrs_idxs, k->num_attrs,
                                    k->stream, stream_known, b.device_count, &attrs_read);
        ops = NULL;
        /* the copies as ops only: the operand arrays are the validator's, grown when it runs */
        if ((s = scratch_for(0)) != NULL)
            ops = copies_as_ops(s, k, n);
        if (!ops)
            n = 0;
        b1.attrs_recorded = attrs_read;
    } else {
        n = cbt_ops_driver_reads(k->n, k->ops, k->flags, k->stream, stream_known);
    }
    struct cbt_captured *c = cbt_capture_ops(real, n, ops);
    if (cbt_unlikely(!c)) {
        /* Without memory for the capture, the batch is recorded without its ops. */
        cbt_warn_once(&no_memory_warned, "out of memory: batches are recorded without their ops");
        n = 0;
        c = cbt_capture_ops(real, 0, ops);
    }
    b.ops_recorded = c ? n : 0;
    if (cbt_always_validate && c)
        cbt_capture_check_footprints(c, ops);

    bool refuse = false;
    size_t refuse_at = SIZE_MAX;
    if (cbt_always_validate) {
        s = scratch_for(n);
        if (s && c) {
            size_t nf = validate(s, c, k, n, ops, b.device_count, attrs_read, abi);
            size_t kept = nf < s->cap_findings ? nf : s->cap_findings;
            b.validated = 1;
            b.findings = (uint32_t)nf;
            for (size_t i = 0; i < kept; i++) {
                const struct cbt_finding *f = &s->findings[i];
                emit_finding(b.batch_id, f, caller, b.tid);
                if (cfg->report_stderr)
                    cbt_report_finding(f, ops, n, b.batch_id, k->api, k->door, caller);
                if (cfg->mode == CBT_MODE_STRICT && f->rule != CBT_RULE_ops_not_read &&
                    (f->severity == CBT_SEV_ERROR || (cfg->strict_hazards && f->severity == CBT_SEV_HAZARD))) {
                    refuse = true;
                }
            }
            if (refuse && d1)
                refuse_at = refused_copy(s, kept, cfg->strict_hazards);
        } else {
            cbt_warn_once(&no_memory_warned, "out of memory: batches are forwarded without validation");
        }
    }

    const struct cbt_rec1d rec1d = {.fields = &b1, .attrs = k->attrs, .attrs_idxs = k->attrs_idxs,
                                    .attrs_read = attrs_read};
    const struct cbt_rec1d *r1 = d1 ? &rec1d : NULL;
    CUresult res;
    if (refuse) {
        /* Refused before the driver sees it; the 12.8 ABI's failIdx as the driver would set it. */
        res = CUDA_ERROR_INVALID_VALUE;
        b.outcome = CBT_OUTCOME_REFUSED;
        if (d1 && refuse_at != SIZE_MAX && refuse_at > 0 && k->fn) {
            /* The copies before the refused one, with the attributes they use. */
            size_t na = 0;
            while (na < k->num_attrs && k->attrs_idxs[na] < refuse_at)
                na++;
            uint64_t t0 = cbt_mono_ns();
            CUresult r = forward(k, refuse_at, na);
            b.driver_ns = cbt_mono_ns() - t0;
            if (r != CUDA_SUCCESS)
                res = r;
        }
        if (k->fail_idx && v1 && k->stream != NULL && !(abi & CBT_ABI_FAIL_IDX_IS_STREAM))
            *k->fail_idx = d1 ? (refuse_at != SIZE_MAX ? refuse_at
                                 : n && !cbt_op_well_formed(&ops[n - 1]) ? n - 1 : SIZE_MAX)
                              : driver_fail_idx(k, n, ops);
    } else if (cbt_unlikely(!k->fn)) {
        res = no_driver(k->api);
        b.outcome = CBT_OUTCOME_NO_DRIVER;
    } else {
        bool pending = (c && cbt_capture_risky(c)) || abi;
        if (cbt_unlikely(pending)) {
            /* The driver may not return from this one: in the ring buffer first. */
            b.outcome = CBT_OUTCOME_PENDING;
            cbt_capture_record(c, &b, ops, r1, caller);
        }
        struct cbt_gpu_call gt;
        const bool timed = cfg->gpu_time && !abi;
        if (cbt_unlikely(timed))
            cbt_gpu_before(&gt, &b, cbt_api_is_ptsz(k->api), k->stream);
        uint64_t t0 = cbt_mono_ns();
        res = forward(k, k->n, k->num_attrs);
        b.driver_ns = cbt_mono_ns() - t0;
        if (cbt_unlikely(timed))
            cbt_gpu_after(&gt, res, &b, cbt_api_is_ptsz(k->api), k->stream, c, ops);
        b.outcome = CBT_OUTCOME_FORWARDED;
        b.result = (uint32_t)res;
        if (v1 && k->fail_idx && !(abi & CBT_ABI_FAIL_IDX_IS_STREAM))
            b.fail_idx = (uint64_t)*k->fail_idx;
        if (cbt_unlikely(pending)) {
            cbt_capture_record_end(&b, caller);
            tls_depth--;
            return res;
        }
    }
    b.result = (uint32_t)res;
    if (v1 && k->fail_idx && b.outcome != CBT_OUTCOME_FORWARDED && !(abi & CBT_ABI_FAIL_IDX_IS_STREAM))
        b.fail_idx = (uint64_t)*k->fail_idx;
    if (c)
        cbt_capture_record(c, &b, ops, r1, caller);
    tls_depth--;
    return res;
}
