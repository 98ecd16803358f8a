/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's capture of a batch, and its recording.
 *
 * Everything happens on the thread that made the call, while it makes it:
 * a batch whose call returned is in LTTng's ring buffer (shared memory that
 * the consumer daemon reads even after the process is gone), whatever way
 * the process ends next.
 *
 * The ops are recorded as they were passed (the bytes of
 * CUDA_MEMCPY3D_BATCH_OP), each chunk with the distinct operands its ops use
 * and two one-byte indices per op; the reader reassembles and validates.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "memwrap.h"
#include "operands.h"
#include "tp.h"

_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == CBT_EV_OP_SIZE, "the recorded op size is CUDA 13's");
_Static_assert(sizeof(struct cbt_ev_operand) == 8 * CBT_EV_OPERAND_WORDS, "struct cbt_ev_operand has no padding");
_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == 8 * CBT_EV_OP_WORDS, "ops travel as 64-bit words");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the recorded words are the ops' bytes, little-endian");
_Static_assert(2 * CBT_EV_OPS_PER_EVENT <= 256, "operand indices of a chunk fit one byte");

#define CHUNK CBT_EV_OPS_PER_EVENT

struct cbt_captured {
    size_t cap;                    /* ops the arrays below have room for */
    size_t n;                      /* ops captured */
    size_t nchunks;
    struct cbt_op_infos *idx;      /* cap: op i's operands, chunk-local */
    uint16_t *operand_of;          /* cap: source | destination << 8 */
    struct cbt_operand_info *infos; /* 2 * cap: chunk c's at [c * 2 * CHUNK, + k[c]) */
    uint32_t *k;                   /* cap / CHUNK + 1: distinct operands per chunk */
    bool risky;
    struct cbt_ev_operand wire[2 * CHUNK]; /* one chunk's operands as recorded */
};

static CBT_TLS struct cbt_captured *tls_capture;
static pthread_key_t capture_key;
static pthread_once_t capture_key_once = PTHREAD_ONCE_INIT;

static void capture_free(void *p)
{
    struct cbt_captured *c = p;
    if (c) {
        free(c->idx);
        free(c->operand_of);
        free(c->infos);
        free(c->k);
        free(c);
    }
}

static void make_capture_key(void) { (void)pthread_key_create(&capture_key, capture_free); }

/* Room for n ops, or NULL (no memory, or more than memory can hold). */
static struct cbt_captured *capture_for(size_t n)
{
    struct cbt_captured *c = tls_capture;
    if (cbt_unlikely(!c)) {
        pthread_once(&capture_key_once, make_capture_key);
        if (!(c = calloc(1, sizeof *c)))
            return NULL;
        tls_capture = c;
        (void)pthread_setspecific(capture_key, c);
    }
    if (cbt_likely(n <= c->cap))
        return c;
    /* Whole chunks: chunk c's operands live at a fixed offset. */
    size_t chunks = n / CHUNK + 1;
    if (chunks > SIZE_MAX / (2 * CHUNK * sizeof(struct cbt_operand_info)))
        return NULL;
    size_t cap = chunks * CHUNK;
    struct cbt_op_infos *idx = realloc(c->idx, cap * sizeof *idx);
    if (idx)
        c->idx = idx;
    uint16_t *of = realloc(c->operand_of, cap * sizeof *of);
    if (of)
        c->operand_of = of;
    struct cbt_operand_info *infos = realloc(c->infos, 2 * cap * sizeof *infos);
    if (infos)
        c->infos = infos;
    uint32_t *k = realloc(c->k, chunks * sizeof *k);
    if (k)
        c->k = k;
    if (!idx || !of || !infos || !k)
        return NULL;
    c->cap = cap;
    return c;
}

size_t cbt_ops_driver_reads(size_t num_ops, const CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                            CUstream stream, bool stream_known)
{
    if (num_ops == 0 || !ops || flags || stream == NULL || stream == CU_STREAM_LEGACY || !stream_known)
        return 0;
    for (size_t i = 0; i < num_ops; i++)
        if (cbt_unlikely(!cbt_op_well_formed_inline(&ops[i])))
            return i + 1;
    return num_ops;
}

size_t cbt_copies_driver_reads(size_t count, const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes,
                               const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                               CUstream stream, bool stream_known, int device_count, size_t *attrs_read)
{
    *attrs_read = 0;
    if (!count || !dsts || !srcs || !sizes || !attrs || !attrs_idxs || !num_attrs || num_attrs > count ||
        stream == NULL || stream == CU_STREAM_LEGACY || !stream_known)
        return 0;
    for (size_t k = 0; k < num_attrs; k++) {
        if (cbt_unlikely(!cbt_attr_well_formed_inline(&attrs[k], k, attrs_idxs[k], k ? attrs_idxs[k - 1] : 0, count,
                                                      device_count))) {
            *attrs_read = k + 1;
            return 0;
        }
    }
    *attrs_read = num_attrs;
    for (size_t i = 0; i < count; i++)
        if (cbt_unlikely(!sizes[i] || !dsts[i] || !srcs[i]))
            return i + 1;
    return count;
}

struct cbt_captured *cbt_capture_ops(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops)
{
    struct cbt_captured *c = capture_for(n);
    if (!c)
        return NULL;
    c->n = n;
    c->nchunks = 0;
    c->risky = false;
    for (size_t first = 0; first < n; first += CHUNK) {
        size_t count = n - first < CHUNK ? n - first : CHUNK;
        size_t ch = c->nchunks++;
        struct cbt_operand_info *infos = &c->infos[ch * 2 * CHUNK];
        size_t k = cbt_learn_indexed(real, count, ops + first, c->idx + first, infos);
        c->k[ch] = (uint32_t)k;
        for (size_t i = 0; i < count; i++)
            c->operand_of[first + i] = (uint16_t)(c->idx[first + i].src | c->idx[first + i].dst << 8);
        for (size_t j = 0; j < k; j++)
            if (cbt_unlikely(infos[j].kind == CBT_MEM_UNMAPPED))
                c->risky = true;
    }
    return c;
}

bool cbt_capture_risky(const struct cbt_captured *c) { return c->risky; }

/* The last byte of a pointer operand's footprint (ptr + the rows it spans),
 * or false when it does not fit in 64 bits. */
static bool footprint_last(const CUmemcpy3DOperand *x, const CUextent3D *e, uint64_t es, uint64_t *last)
{
    uint64_t w = e->width, h = e->height, d = e->depth, row, layer, end;
    if (!w || !h || !d)
        return false;
    uint64_t rl = x->op.ptr.rowLength ? x->op.ptr.rowLength : w;
    uint64_t lh = x->op.ptr.layerHeight ? x->op.ptr.layerHeight : h;
    if (__builtin_mul_overflow(rl, es, &row) || __builtin_mul_overflow(row, lh, &layer) ||
        __builtin_mul_overflow(layer, d - 1, &end) || __builtin_mul_overflow(row, h - 1, last) ||
        __builtin_add_overflow(end, *last, &end) || __builtin_mul_overflow(w, es, last) ||
        __builtin_add_overflow(end, *last - 1, &end) || __builtin_add_overflow(end, (uint64_t)x->op.ptr.ptr, last))
        return false;
    return true;
}

/*
 * Can every page of [p, last] be read?  One byte of each page is read with
 * process_vm_readv on the process itself, which answers a fault instead of
 * taking it (pages unmapped or PROT_NONE); where a sandbox forbids that
 * call, mincore tells at least the unmapped ones (ENOMEM).
 */
static bool range_readable(uint64_t p, uint64_t last)
{
    static uint64_t page;
    static int no_vm_readv;
    if (!page)
        page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t lo = p & ~(page - 1), pages = (last - lo) / page + 1;
    enum { BATCH = 64 };
    char sink[BATCH];
    struct iovec local = {.iov_base = sink, .iov_len = 0}, remote[BATCH];
    for (uint64_t at = 0; at < pages; at += BATCH) {
        uint64_t n = pages - at < BATCH ? pages - at : BATCH;
        if (!__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED)) {
            for (uint64_t j = 0; j < n; j++)
                remote[j] = (struct iovec){.iov_base = (void *)(uintptr_t)(at + j ? lo + (at + j) * page : p),
                                           .iov_len = 1};
            local.iov_len = n;
            ssize_t got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
            if (got == (ssize_t)n)
                continue;
            if (got >= 0 || errno == EFAULT)
                return false;
            __atomic_store_n(&no_vm_readv, 1, __ATOMIC_RELAXED); /* EPERM, ENOSYS: a sandbox */
        }
        unsigned char vec[BATCH];
        if (mincore((void *)(uintptr_t)(lo + at * page), n * page, vec) != 0 && errno == ENOMEM)
            return false;
    }
    return true;
}

void cbt_capture_check_footprints(struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops)
{
    for (size_t i = 0; i < c->n; i++) {
        size_t ch = i / CHUNK;
        struct cbt_operand_info *infos = &c->infos[ch * 2 * CHUNK];
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        for (int side = 0; side < 2; side++) {
            const CUmemcpy3DOperand *x = side ? &op->dst : &op->src;
            uint32_t *slot = side ? &c->idx[i].dst : &c->idx[i].src;
            if (x->type != CU_MEMCPY_OPERAND_TYPE_POINTER || infos[*slot].kind != CBT_MEM_HOST_PAGEABLE)
                continue;
            uint64_t es = cbt_op_elem_size(op, &infos[c->idx[i].src], &infos[c->idx[i].dst]), last;
            if (!es)
                continue;
            if (footprint_last(x, &op->extent, es, &last) && range_readable((uint64_t)x->op.ptr.ptr, last))
                continue;
            /* The footprint runs into unmapped memory: this operand alone is
             * recorded as unmapped (a slot of its own unless the chunk is full,
             * when no operand shares one). */
            struct cbt_operand_info un = infos[*slot];
            un.kind = CBT_MEM_UNMAPPED;
            if (c->k[ch] < 2 * CHUNK)
                *slot = c->k[ch]++;
            infos[*slot] = un;
            c->operand_of[i] = (uint16_t)(c->idx[i].src | c->idx[i].dst << 8);
            c->risky = true;
        }
    }
}

void cbt_capture_expand(const struct cbt_captured *c, struct cbt_operand_info *src, struct cbt_operand_info *dst)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct cbt_operand_info *infos = &c->infos[i / CHUNK * 2 * CHUNK];
        src[i] = infos[c->idx[i].src];
        dst[i] = infos[c->idx[i].dst];
    }
}

uint64_t cbt_capture_bytes(const struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t i)
{
    const struct cbt_operand_info *infos = &c->infos[i / CHUNK * 2 * CHUNK];
    return cbt_op_bytes(&ops[i], &infos[c->idx[i].src], &infos[c->idx[i].dst]);
}

static void to_wire(struct cbt_ev_operand *w, const struct cbt_operand_info *o)
{
    *w = (struct cbt_ev_operand){
        .alloc_base = o->alloc_base, .alloc_size = o->alloc_size, .array_width = o->array_width,
        .array_height = o->array_height, .array_depth = o->array_depth, .elem_size = o->elem_size,
        .device = o->device, .kind = o->kind,
    };
}

/*
 * One writer of the process at a time: LTTng drops an event, even in
 * blocking mode, when a writer wraps around the ring onto a sub-buffer that
 * another writer, preempted between reserving and committing, still holds
 * (many threads, few CPUs, a small channel).  Serialized, the other threads
 * of the process wait for it instead.  The driver call is never under it.
 */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

_Static_assert(sizeof(CUmemcpyAttributes) == CBT_EV_ATTR_SIZE && CBT_EV_ATTR_SIZE == 8 * CBT_EV_ATTR_WORDS,
               "attributes travel as 64-bit words");
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "attrsIdxs travel as 64-bit values");

void cbt_capture_record(const struct cbt_captured *c, const struct cbt_ev_batch *b, const CUDA_MEMCPY3D_BATCH_OP *ops,
                        const struct cbt_rec1d *d, void *caller)
{
    if (d ? !cbt_tp_enabled(batch1d) : !cbt_tp_enabled(batch))
        return;
    pthread_mutex_lock(&write_lock);
    /* The wire copy of one chunk's operands: the capture is the calling thread's own. */
    struct cbt_ev_operand *wire = ((struct cbt_captured *)c)->wire;
    size_t ch = 0, first = 0;
    do {
        uint32_t count = c->n - first < CHUNK ? (uint32_t)(c->n - first) : CHUNK;
        uint32_t k = count ? c->k[ch] : 0;
        const struct cbt_operand_info *infos = &c->infos[ch * 2 * CHUNK];
        for (uint32_t j = 0; j < k; j++)
            to_wire(&wire[j], &infos[j]);
        struct cbt_ev_chunk chunk = {
            .batch_id = b->batch_id, .first = first, .count = count, .noperands = k,
            .ops = ops + first, .operand_of = c->operand_of + first, .operands = wire,
        };
        if (first == 0 && d) {
            uint32_t na = d->attrs_read < CBT_EV_ATTRS_IN_HEADER ? (uint32_t)d->attrs_read : CBT_EV_ATTRS_IN_HEADER;
            struct cbt_ev_attrs a = {.batch_id = b->batch_id, .first = 0, .count = na, .attrs = d->attrs,
                                     .idxs = (const uint64_t *)d->attrs_idxs};
            cbt_tp(batch1d, b, d->fields, &a, &chunk, caller);
        } else if (first == 0) {
            cbt_tp(batch, b, &chunk, caller);
        } else {
            cbt_tp(batch_ops, &chunk, caller);
        }
        first += count;
        ch++;
    } while (first < c->n);
    /* A 1D batch's further attributes. */
    for (size_t k = CBT_EV_ATTRS_IN_HEADER; d && k < d->attrs_read; k += CBT_EV_ATTRS_PER_EVENT) {
        size_t left = d->attrs_read - k;
        struct cbt_ev_attrs a = {.batch_id = b->batch_id, .first = k,
                                 .count = left < CBT_EV_ATTRS_PER_EVENT ? (uint32_t)left : CBT_EV_ATTRS_PER_EVENT,
                                 .attrs = d->attrs + k, .idxs = (const uint64_t *)d->attrs_idxs + k};
        cbt_tp(batch_attrs, &a, caller);
    }
    pthread_mutex_unlock(&write_lock);
}

void cbt_capture_record_end(const struct cbt_ev_batch *b, void *caller)
{
    if (!cbt_tp_enabled(batch_end))
        return;
    pthread_mutex_lock(&write_lock);
    cbt_tp(batch_end, b, caller);
    pthread_mutex_unlock(&write_lock);
}

void cbt_capture_record_finding(const struct cbt_ev_finding *f, void *caller)
{
    if (!cbt_tp_enabled(finding))
        return;
    pthread_mutex_lock(&write_lock);
    cbt_tp(finding, f, caller);
    pthread_mutex_unlock(&write_lock);
}

/* ---- the calling thread's id ---- */

static unsigned fork_generation;
static CBT_TLS int32_t tls_tid;
static CBT_TLS unsigned tls_tid_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* In a forked child the thread that held the write lock is gone, and the
 * memory kinds this thread learned are not the child's driver state. */
static void after_fork_child(void)
{
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_init(&write_lock, NULL);
    __atomic_fetch_add(&cbt_mem_generation, 1, __ATOMIC_ACQ_REL);
}
static void install_atfork(void) { (void)pthread_atfork(NULL, NULL, after_fork_child); }

void cbt_capture_init(void) { pthread_once(&atfork_once, install_atfork); }

int32_t cbt_tid(void)
{
    unsigned g = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    if (cbt_unlikely(!tls_tid || tls_tid_generation != g)) {
        pthread_once(&atfork_once, install_atfork);
        tls_tid = (int32_t)syscall(SYS_gettid);
        tls_tid_generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    }
    return tls_tid;
}

uint64_t cbt_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cbt_capture_gpu_summary(const struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops, struct cbt_ev_gpu *g)
{
    g->ops = c->n;
    g->bytes = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct cbt_operand_info *infos = &c->infos[i / CHUNK * 2 * CHUNK];
        const struct cbt_operand_info *s = &infos[c->idx[i].src], *d = &infos[c->idx[i].dst];
        g->bytes += cbt_op_bytes(&ops[i], s, d);
        if (i == 0) {
            g->src_kind = s->kind;
            g->dst_kind = d->kind;
            g->src_device = s->device;
            g->dst_device = d->device;
            continue;
        }
        if (g->src_kind != s->kind)
            g->src_kind = CBT_GPU_MIXED_KIND;
        if (g->dst_kind != d->kind)
            g->dst_kind = CBT_GPU_MIXED_KIND;
        if (g->src_device != s->device)
            g->src_device = CBT_GPU_MIXED_DEVICE;
        if (g->dst_device != d->device)
            g->dst_device = CBT_GPU_MIXED_DEVICE;
    }
}
