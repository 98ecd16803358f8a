/*
 * The common path behind every door: validate the batch (when anyone will
 * hear of it), record it, refuse it in strict mode, forward it.
 *
 * Cost discipline: with CUBATCHTRACE_MODE=observe, no session listening and
 * no stderr report, a batch costs two loads and a few branches on top of the
 * driver call; operand queries, validation and clock reads only happen when
 * their result goes somewhere.  With a session in observe mode the calling
 * thread hands the batch to the recorder thread (batch_deferred, recorder.c),
 * which validates it and writes its events (cbt_record_deferred); strict
 * mode, the stderr report and CUBATCHTRACE_RECORD=inline do it all here.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"
#include "recorder.h"
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
    struct cbt_tp_ops ops;
};

static CBT_TLS struct scratch *tls_scratch;
static CBT_TLS int tls_depth; /* > 0 while this thread is inside cbt_batch */
static pthread_key_t scratch_key;
static pthread_once_t scratch_key_once = PTHREAD_ONCE_INIT;
static uint64_t next_batch_id;
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

static CUresult forward(enum cbt_api api, void *fn, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                        unsigned long long flags, CUstream stream)
{
    if (api == CBT_API_V1 || api == CBT_API_V1_PTSZ)
        return ((cbt_batch_v1_fn)fn)(n, ops, fail_idx, flags, stream);
    return ((cbt_batch_v2_fn)fn)(n, ops, flags, stream);
}

static CUresult no_driver(enum cbt_api api)
{
    cbt_warn_no_driver(cbt_api_name(api));
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

/* Fill the structure-of-arrays chunk [first, first+count) of the ops. */
static void fill_ops(struct cbt_tp_ops *t, uint64_t batch_id, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t first,
                     uint32_t count, const struct cbt_operand_info *src, const struct cbt_operand_info *dst)
{
    t->batch_id = batch_id;
    t->first = first;
    t->count = count;
    for (uint32_t k = 0; k < count; k++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[first + k];
        const struct cbt_operand_info *si = &src[first + k], *di = &dst[first + k];
#define OPERAND(side, o, info)                                                              \
        t->side##_type[k] = (uint8_t)(o).type;                                             \
        t->side##_mem[k] = (info)->kind;                                                   \
        t->side##_device[k] = (info)->device;                                              \
        if ((o).type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {                                    \
            t->side##_addr[k] = (uint64_t)(uintptr_t)(o).op.array.array;                   \
            t->side##_row_length[k] = t->side##_layer_height[k] = 0;                       \
            t->side##_lochint_type[k] = 0;                                                 \
            t->side##_lochint_id[k] = 0;                                                   \
            t->side##_x[k] = (o).op.array.offset.x;                                        \
            t->side##_y[k] = (o).op.array.offset.y;                                        \
            t->side##_z[k] = (o).op.array.offset.z;                                        \
        } else {                                                                           \
            t->side##_addr[k] = (uint64_t)(o).op.ptr.ptr;                                  \
            t->side##_row_length[k] = (o).op.ptr.rowLength;                                \
            t->side##_layer_height[k] = (o).op.ptr.layerHeight;                            \
            t->side##_lochint_type[k] = (uint8_t)(o).op.ptr.locHint.type;                  \
            t->side##_lochint_id[k] = (o).op.ptr.locHint.id;                               \
            t->side##_x[k] = t->side##_y[k] = t->side##_z[k] = 0;                          \
        }
        OPERAND(src, op->src, si)
        OPERAND(dst, op->dst, di)
#undef OPERAND
        t->width[k] = op->extent.width;
        t->height[k] = op->extent.height;
        t->depth[k] = op->extent.depth;
        t->access_order[k] = (uint8_t)op->srcAccessOrder;
        t->op_flags[k] = op->flags;
        t->elem_size[k] = cbt_op_elem_size(op, si, di);
        t->bytes[k] = cbt_op_bytes(op, si, di);
    }
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
/* The calling thread's own memory: the stream slots and the learned
 * operands of its current batch (grown on demand, kept, freed at exit). */
struct caller {
    struct stream_slot streams[STREAM_SLOTS];
    size_t cap_n;
    struct cbt_op_infos *idx;       /* cap_n */
    struct cbt_operand_info *infos; /* 2 * cap_n */
};
static CBT_TLS struct caller *tls_caller;
static pthread_key_t caller_key;
static pthread_once_t caller_key_once = PTHREAD_ONCE_INIT;

static void caller_free(void *p)
{
    struct caller *c = p;
    if (c) {
        free(c->idx);
        free(c->infos);
        free(c);
    }
}
static void make_caller_key(void) { (void)pthread_key_create(&caller_key, caller_free); }

static struct caller *caller_for(size_t n)
{
    struct caller *c = tls_caller;
    if (cbt_unlikely(!c)) {
        pthread_once(&caller_key_once, make_caller_key);
        if (!(c = calloc(1, sizeof *c)))
            return NULL;
        tls_caller = c;
        (void)pthread_setspecific(caller_key, c);
    }
    if (cbt_unlikely(n > c->cap_n)) {
        if (n > SIZE_MAX / 4 / (2 * sizeof(struct cbt_operand_info)))
            return NULL;
        size_t cap = c->cap_n ? c->cap_n : 64;
        while (cap < n)
            cap *= 2;
        struct cbt_op_infos *idx = realloc(c->idx, cap * sizeof *idx);
        if (idx)
            c->idx = idx;
        struct cbt_operand_info *infos = realloc(c->infos, 2 * cap * sizeof *infos);
        if (infos)
            c->infos = infos;
        if (!idx || !infos)
            return NULL;
        c->cap_n = cap;
    }
    return c;
}

static struct stream_slot *stream_slots(void)
{
    struct caller *c = caller_for(0);
    return c ? c->streams : NULL;
}

/* Stream, context, device and capture state of a batch, for the record. */
static void describe_stream(const struct cbt_real *real, enum cbt_api api, CUstream stream, struct cbt_tp_batch *b)
{
    int ptsz = api == CBT_API_V2_PTSZ || api == CBT_API_V1_PTSZ;
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
}

/* Inlined into both threads' callers, so a profile can tell them apart (bench/profile). */
static inline __attribute__((always_inline)) void record_batch(struct scratch *s, struct cbt_tp_batch *b, const CUDA_MEMCPY3D_BATCH_OP *ops,
                         const struct cbt_operand_info *src, const struct cbt_operand_info *dst, void *caller)
{
    size_t n = ops ? (size_t)b->num_ops : 0;
    bool per_op = cbt_tp_enabled(op);
    size_t first = 0;
    do {
        uint32_t count = n - first < CBT_TP_OPS_PER_EVENT ? (uint32_t)(n - first) : CBT_TP_OPS_PER_EVENT;
        fill_ops(&s->ops, b->batch_id, ops, first, count, src, dst);
        if (first == 0)
            cbt_tp(batch, b, &s->ops, caller);
        else
            cbt_tp(batch_ops, &s->ops, caller);
        if (per_op)
            for (uint32_t k = 0; k < count; k++)
                cbt_tp(op, &s->ops, k, caller);
        first += count;
    } while (first < n);
}

/* Run the validator over a batch whose operands are learned; the findings
 * are in s->findings (as many as fit); returns how many there were. */
static inline __attribute__((always_inline)) size_t validate(struct scratch *s, size_t num_ops, const CUDA_MEMCPY3D_BATCH_OP *ops,
                       unsigned long long flags, CUstream stream, const struct cbt_operand_info *src,
                       const struct cbt_operand_info *dst, int device_count)
{
    size_t n = ops ? num_ops : 0;
    struct cbt_batch_view view = {
        .num_ops = num_ops, .ops = ops, .flags = flags, .stream = stream,
        .src_info = n ? src : NULL, .dst_info = n ? dst : NULL, .device_count = device_count,
    };
    size_t nf = cbt_validate(s->validator, &view, s->findings, s->cap_findings);
    if (nf != (size_t)-1 && nf > s->cap_findings &&
        grow((void **)&s->findings, &s->cap_findings, nf, sizeof *s->findings))
        nf = cbt_validate(s->validator, &view, s->findings, s->cap_findings);
    return nf == (size_t)-1 ? 0 : nf;
}

static inline __attribute__((always_inline)) void emit_finding(uint64_t batch_id, const struct cbt_finding *f, void *caller, uint32_t tid)
{
    struct cbt_tp_finding tf = {
        .batch_id = batch_id, .rule = f->rule, .severity = f->severity, .side = f->side, .op = f->op,
        .other_op = f->other_op, .value = f->value, .limit = f->limit, .caller = (uint64_t)(uintptr_t)caller,
        .tid = tid,
    };
    cbt_tp(finding, &tf, caller);
}

static inline __attribute__((always_inline)) void emit_findings(struct scratch *s, size_t nf, uint64_t batch_id, void *caller, uint32_t tid)
{
    if (!cbt_tp_enabled(finding))
        return;
    size_t kept = nf < s->cap_findings ? nf : s->cap_findings;
    for (size_t i = 0; i < kept; i++)
        emit_finding(batch_id, &s->findings[i], caller, tid);
}

/* On the recorder thread: validate (unless done already), write the events. */
void cbt_record_deferred(struct cbt_rec *r)
{
    struct scratch *s = scratch_for(r->n);
    if (!s) {
        cbt_warn_once(&no_memory_warned, "out of memory: batches are forwarded without validation or record");
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        s->src[i] = r->infos[r->idx[i].src];
        s->dst[i] = r->infos[r->idx[i].dst];
    }
    if (r->driver_ticks)
        r->b.driver_ns = cbt_ticks_to_ns(r->b.driver_ns);
    if (!r->validated) {
        size_t nf = validate(s, r->b.num_ops, r->n ? r->ops : NULL, r->b.flags, (CUstream)(uintptr_t)r->b.stream,
                             s->src, s->dst, r->device_count);
        r->b.findings = (uint32_t)nf;
        emit_findings(s, nf, r->b.batch_id, r->caller, r->b.tid);
    }
    if (cbt_tp_enabled(batch))
        record_batch(s, &r->b, r->n ? r->ops : NULL, s->src, s->dst, r->caller);
}

/* Set once configuration is read and the provider loaded; until then every
 * batch takes the slow path, which does both. */
int cbt_ready;
bool cbt_always_validate;

static void first_batch(void)
{
    cbt_ticks_init();
    const struct cbt_config *cfg = cbt_config();
    cbt_always_validate = cfg->mode == CBT_MODE_STRICT || cfg->report_stderr;
    if (cfg->mode != CBT_MODE_OFF)
        cbt_tracing_init();
    __atomic_store_n(&cbt_ready, 1, __ATOMIC_RELEASE);
}

/* Does any operand read as unmapped memory?  The driver may crash on it. */
static bool any_unmapped(size_t k, const struct cbt_operand_info *infos)
{
    for (size_t i = 0; i < k; i++)
        if (cbt_unlikely(infos[i].kind == CBT_MEM_UNMAPPED))
            return true;
    return false;
}


/*
 * Built with -DCBT_CHECKPOINTS (bench/checkpoints only, never installed):
 * the calling thread's deferred path timed segment by segment with the TSC,
 * averages printed on stderr at exit.
 */
#if defined(CBT_CHECKPOINTS) && defined(__x86_64__)
enum { CP_ENTRY, CP_LEARN, CP_RESERVE, CP_COPY, CP_DRIVER, CP_STREAM, CP_COMMIT, CP_EMPTY, CP_N };
static const char *const cp_name[CP_N] = {
    "cbt_batch entry -> deferred path", "learn operands", "reserve a record", "copy ops, header",
    "driver call", "stream queries", "commit, return", "(an empty segment: the probe)"};
#define CP_BUCKETS 5 /* 1, 2-4, 5-16, 17-64, more ops */
static const char *const cp_bucket[CP_BUCKETS] = {"1 op", "2-4 ops", "5-16 ops", "17-64 ops", ">64 ops"};
static uint64_t cp_sum[CP_BUCKETS][CP_N], cp_batches[CP_BUCKETS]; /* the benchmark's one calling thread */
static CBT_TLS uint64_t cp_t0, cp_first_done;
static CBT_TLS unsigned cp_b;
#define CP_START() (cp_t0 = cbt_ticks())
#define CP(i)                                    \
    do {                                         \
        uint64_t t_ = cbt_ticks();               \
        cp_sum[cp_b][i] += t_ - cp_t0;           \
        cp_t0 = t_;                              \
    } while (0)
#define CP_SIZE(n) (cp_b = (n) <= 1 ? 0 : (n) <= 4 ? 1 : (n) <= 16 ? 2 : (n) <= 64 ? 3 : 4)
#define CP_DONE()                                \
    do {                                         \
        CP(CP_EMPTY);                            \
        CP(CP_EMPTY);                            \
        if (cp_first_done++)                     \
            cp_batches[cp_b]++;                  \
        else                                     \
            memset(cp_sum, 0, sizeof cp_sum);    \
    } while (0)
__attribute__((destructor)) static void cp_report(void)
{
    double ns = cbt_ticks_ok ? (double)cbt_ticks_to_ns(1000000000) / 1e9 : 0;
    for (int b = 0; b < CP_BUCKETS; b++) {
        if (!cp_batches[b])
            continue;
        fprintf(stderr, "cubatchtrace checkpoints, %s: %llu deferred batches, mean ns per batch (probe included):\n",
                cp_bucket[b], (unsigned long long)cp_batches[b]);
        for (int i = 0; i < CP_N; i++)
            fprintf(stderr, "  %-34s %9.1f\n", cp_name[i],
                    (double)cp_sum[b][i] / (double)cp_batches[b] * ns / (i == CP_EMPTY ? 2 : 1));
    }
}
#else
#define CP_START() ((void)0)
#define CP(i) ((void)0)
#define CP_SIZE(n) ((void)0)
#define CP_DONE() ((void)0)
#endif

/*
 * Observe mode, recorded by the recorder thread: what stays on the calling
 * thread is the copy of the op list, the memory kinds, the driver call and
 * the stream queries.  A batch with an unmapped operand is validated here,
 * and its findings written, before it is forwarded: the driver may not
 * return from it.
 */
/* Up to this many ops, a batch is learned straight into its record. */
#define SMALL_BATCH 16

static bool batch_deferred(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                           CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                           void *caller, uint64_t id, CUresult *res_out)
{
    CP(CP_ENTRY);
    const struct cbt_real *real = cbt_real();
    size_t n = ops ? num_ops : 0, k = 0;
    struct cbt_rec *r;
    if (n <= SMALL_BATCH) {
        /* Room for the worst case (every operand distinct), learned straight
         * into the record: fewer lines touched than a copy through scratch. */
        r = cbt_rec_reserve(n, 2 * n);
        if (!r)
            return false; /* recorded inline */
        CP(CP_RESERVE);
        for (size_t i = 0; i < n; i++)
            r->ops[i] = ops[i];
        if (n)
            k = cbt_learn_indexed(real, n, r->ops, r->idx, r->infos);
        r->k = k;
        CP(CP_LEARN);
    } else {
        struct caller *c = caller_for(n);
        if (!c)
            return false;
        k = cbt_learn_indexed(real, n, ops, c->idx, c->infos);
        CP(CP_LEARN);
        r = cbt_rec_reserve(n, k);
        if (!r)
            return false; /* recorded inline */
        CP(CP_RESERVE);
        memcpy(r->ops, ops, n * sizeof *ops);
        memcpy(r->idx, c->idx, n * sizeof *c->idx);
        memcpy(r->infos, c->infos, k * sizeof *c->infos);
    }
    r->caller = caller;
    r->device_count = cbt_device_count(real);
    r->validated = 0;
    r->b = (struct cbt_tp_batch){
        .batch_id = id, .api = (uint8_t)api, .door = (uint8_t)door, .capture = CBT_CAPTURE_UNKNOWN,
        .num_ops = num_ops, .flags = flags, .op_list = (uint64_t)(uintptr_t)ops,
        .stream = (uint64_t)(uintptr_t)stream, .device = -1, .caller = (uint64_t)(uintptr_t)caller,
        .tid = cbt_tid(), .validated = 1,
    };
    if (cbt_unlikely(any_unmapped(k, r->infos))) {
        struct scratch *s = scratch_for(n);
        if (s) {
            for (size_t i = 0; i < n; i++) {
                s->src[i] = r->infos[r->idx[i].src];
                s->dst[i] = r->infos[r->idx[i].dst];
            }
            size_t nf = validate(s, num_ops, r->ops, flags, stream, s->src, s->dst, r->device_count);
            r->b.findings = (uint32_t)nf;
            emit_findings(s, nf, id, caller, r->b.tid);
            r->validated = 1;
        }
    }
    CUresult res;
    r->driver_ticks = cbt_ticks_ok;
    CP(CP_COPY);
    if (cbt_unlikely(!real_fn)) {
        res = no_driver(api);
        r->b.outcome = CBT_OUTCOME_NO_DRIVER;
    } else {
        uint64_t t0 = cbt_call_clock();
        res = forward(api, real_fn, num_ops, ops, fail_idx, flags, stream);
        r->b.driver_ns = cbt_call_clock() - t0; /* in ticks when driver_ticks */
        r->b.outcome = CBT_OUTCOME_FORWARDED;
        CP(CP_DRIVER);
        describe_stream(real, api, stream, &r->b);
        CP(CP_STREAM);
    }
    r->b.result = (uint32_t)res;
    r->b.fail_idx = (fail_idx && (api == CBT_API_V1 || api == CBT_API_V1_PTSZ)) ? (uint64_t)*fail_idx : UINT64_MAX;
    cbt_rec_commit(r);
    *res_out = res;
    CP(CP_COMMIT);
    CP_DONE();
    return true;
}

CUresult cbt_batch(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                   CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                   void *caller)
{
    CP_START();
    CP_SIZE(num_ops);
    if (cbt_unlikely(!__atomic_load_n(&cbt_ready, __ATOMIC_ACQUIRE)))
        first_batch();
    /* Straight through when nobody listens (the doors test cbt_quiet first;
     * this is for the first batch), when the shim is off, and for a batch the
     * driver makes from inside a batch. */
    const struct cbt_config *cfg = cbt_config();
    if ((cbt_likely(real_fn != NULL) && cbt_quiet()) || cfg->mode == CBT_MODE_OFF || tls_depth > 0)
        return real_fn ? forward(api, real_fn, num_ops, ops, fail_idx, flags, stream) : no_driver(api);
    tls_depth++;

    bool trace_batch = cbt_tp_enabled(batch);
    bool trace_findings = cbt_tp_enabled(finding);
    bool want_findings = trace_findings || cbt_always_validate;
    uint64_t id = __atomic_fetch_add(&next_batch_id, 1, __ATOMIC_RELAXED);

    /* Observe mode with nothing asked of the calling thread: defer to the recorder. */
    if (!cbt_always_validate && !cfg->record_inline && (trace_batch || trace_findings)) {
        CUresult res;
        if (batch_deferred(api, door, real_fn, num_ops, ops, fail_idx, flags, stream, caller, id, &res)) {
            tls_depth--;
            return res;
        }
    }

    const struct cbt_real *real = cbt_real();
    struct scratch *s = NULL;
    size_t nf = 0;
    bool refuse = false;
    uint64_t first_bad = UINT64_MAX;

    if (trace_batch || want_findings) {
        s = scratch_for(num_ops);
        if (!s) {
            cbt_warn_once(&no_memory_warned, "out of memory: batches are forwarded without validation or record");
            trace_batch = want_findings = false;
        }
    }
    uint32_t tid = cbt_tid();
    if (s) {
        size_t n = ops ? num_ops : 0;
        if (n)
            cbt_learn_operands(real, n, ops, s->src, s->dst);
        nf = validate(s, num_ops, ops, flags, stream, s->src, s->dst, cbt_device_count(real));
        size_t kept = nf < s->cap_findings ? nf : s->cap_findings;
        for (size_t i = 0; i < kept; i++) {
            const struct cbt_finding *f = &s->findings[i];
            if (trace_findings)
                emit_finding(id, f, caller, tid);
            if (cfg->report_stderr)
                cbt_report_finding(f, ops, num_ops, id, api, door, caller);
            if (cfg->mode == CBT_MODE_STRICT &&
                (f->severity == CBT_SEV_ERROR || (cfg->strict_hazards && f->severity == CBT_SEV_HAZARD))) {
                refuse = true;
                if (f->op < first_bad)
                    first_bad = f->op;
            }
        }
    }

    CUresult res;
    uint8_t outcome;
    uint64_t t0 = 0, t1 = 0;
    if (refuse) {
        /* Refused before the driver sees it; the 12.8 ABI learns the first bad op. */
        res = CUDA_ERROR_INVALID_VALUE;
        outcome = CBT_OUTCOME_REFUSED;
        if (fail_idx)
            *fail_idx = first_bad == UINT64_MAX ? SIZE_MAX : (size_t)first_bad;
    } else if (cbt_unlikely(!real_fn)) {
        res = no_driver(api);
        outcome = CBT_OUTCOME_NO_DRIVER;
    } else {
        if (trace_batch)
            t0 = cbt_mono_ns();
        res = forward(api, real_fn, num_ops, ops, fail_idx, flags, stream);
        if (trace_batch)
            t1 = cbt_mono_ns();
        outcome = CBT_OUTCOME_FORWARDED;
    }

    if (trace_batch) {
        struct cbt_tp_batch b = {
            .batch_id = id, .api = (uint8_t)api, .door = (uint8_t)door, .outcome = outcome,
            .capture = CBT_CAPTURE_UNKNOWN, .num_ops = num_ops, .flags = flags,
            .op_list = (uint64_t)(uintptr_t)ops, .stream = (uint64_t)(uintptr_t)stream, .device = -1,
            .result = (uint32_t)res,
            .fail_idx = (fail_idx && (api == CBT_API_V1 || api == CBT_API_V1_PTSZ)) ? (uint64_t)*fail_idx
                                                                                   : UINT64_MAX,
            .driver_ns = t1 - t0, .caller = (uint64_t)(uintptr_t)caller, .tid = tid, .findings = (uint32_t)nf,
            .validated = 1,
        };
        /* Never query a stream the shim refused or could not forward: it may be garbage. */
        if (outcome == CBT_OUTCOME_FORWARDED)
            describe_stream(real, api, stream, &b);
        record_batch(s, &b, ops, s->src, s->dst, caller);
    }
    tls_depth--;
    return res;
}
