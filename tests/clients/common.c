/* SPDX-License-Identifier: MIT */
/* Shared set-up of the test clients (see common.h). */
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opbuild.h"

struct cc_driver cc;
CUcontext cc_ctx;
uint64_t cc_batches, cc_ops, cc_bytes;

void cc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("client: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

void cc_check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS)
        cc_fail("%s failed: CUresult %d", what, (int)r);
}

void cc_load_gpa(cc_gpa5_fn gpa)
{
#define GET(field, name)                                                                      \
    do {                                                                                      \
        void *p_ = NULL;                                                                      \
        CUdriverProcAddressQueryResult st_;                                                   \
        if (gpa(name, &p_, 12000, 0, &st_) != CUDA_SUCCESS || !p_)                            \
            cc_fail("cuGetProcAddress(%s) failed", name);                                     \
        *(void **)&cc.field = p_;                                                             \
    } while (0)
    GET(Init, "cuInit");
    GET(DeviceGet, "cuDeviceGet");
    GET(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    GET(CtxSetCurrent, "cuCtxSetCurrent");
    GET(MemAlloc, "cuMemAlloc");
    GET(MemFree, "cuMemFree");
    GET(MemAllocHost, "cuMemAllocHost");
    GET(MemFreeHost, "cuMemFreeHost");
    GET(MemAllocManaged, "cuMemAllocManaged");
    GET(StreamCreate, "cuStreamCreate");
    GET(StreamSynchronize, "cuStreamSynchronize");
    GET(Array3DCreate, "cuArray3DCreate");
    GET(ArrayDestroy, "cuArrayDestroy");
#undef GET
}

CUstream cc_setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    cc_check(cc.Init(0), "cuInit");
    cc_check(cc.DeviceGet(&dev, 0), "cuDeviceGet");
    cc_check(cc.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    cc_check(cc.CtxSetCurrent(ctx), "cuCtxSetCurrent");
    cc_ctx = ctx;
    cc_check(cc.StreamCreate(&s, 0), "cuStreamCreate");
    return s;
}

void cc_say_pid(void)
{
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
}

static void *cc_thread_main(void *arg)
{
    CUstream s;
    cc_check(cc.CtxSetCurrent(cc_ctx), "cuCtxSetCurrent");
    cc_check(cc.StreamCreate(&s, 0), "cuStreamCreate");
    ((void (*)(CUstream))arg)(s);
    return NULL;
}

void cc_threads(size_t t, void (*body)(CUstream s))
{
    pthread_t *th = calloc(t, sizeof *th);
    if (!th)
        cc_fail("out of memory");
    for (size_t i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, cc_thread_main, (void *)body))
            cc_fail("pthread_create");
    for (size_t i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    free(th);
}

/* ---- buffers ---- */

static unsigned char pattern(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 151u + i * 7u + (i >> 8) * 13u + 1u);
}

struct cc_buf *cc_buf_new(enum cc_kind kind, size_t size)
{
    struct cc_buf *b = calloc(1, sizeof *b);
    if (!b || !(b->shadow = calloc(1, size)))
        cc_fail("out of memory");
    b->kind = kind;
    b->size = size;
    void *p = NULL;
    switch (kind) {
    case CC_DEVICE:
        cc_check(cc.MemAlloc(&b->ptr, size), "cuMemAlloc");
        break;
    case CC_MANAGED:
        cc_check(cc.MemAllocManaged(&b->ptr, size, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
        break;
    case CC_PINNED:
        cc_check(cc.MemAllocHost(&p, size), "cuMemAllocHost");
        memset(p, 0, size);
        b->ptr = (CUdeviceptr)(uintptr_t)p;
        b->known = 1;
        break;
    case CC_PAGEABLE:
        if (!(p = calloc(1, size)))
            cc_fail("out of memory");
        b->ptr = (CUdeviceptr)(uintptr_t)p;
        b->known = 1;
        break;
    case CC_ARRAY:
        cc_fail("cc_buf_new: use cc_array_new");
    }
    return b;
}

static size_t format_size(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    default: return 4;
    }
}

struct cc_buf *cc_array_new(size_t w, size_t h, size_t d, CUarray_format format, unsigned channels)
{
    struct cc_buf *b = calloc(1, sizeof *b);
    if (!b)
        cc_fail("out of memory");
    CUDA_ARRAY3D_DESCRIPTOR desc;
    memset(&desc, 0, sizeof desc);
    desc.Width = w;
    desc.Height = h;
    desc.Depth = d;
    desc.Format = format;
    desc.NumChannels = channels;
    cc_check(cc.Array3DCreate(&b->array, &desc), "cuArray3DCreate");
    b->kind = CC_ARRAY;
    b->w = w;
    b->h = h ? h : 1;
    b->d = d ? d : 1;
    b->elem = format_size(format) * channels;
    b->size = b->w * b->h * b->d * b->elem;
    if (!(b->shadow = calloc(1, b->size)))
        cc_fail("out of memory");
    return b;
}

void cc_buf_free(struct cc_buf *b)
{
    if (!b)
        return;
    switch (b->kind) {
    case CC_DEVICE: case CC_MANAGED: cc.MemFree(b->ptr); break;
    case CC_PINNED: cc.MemFreeHost((void *)(uintptr_t)b->ptr); break;
    case CC_PAGEABLE: free((void *)(uintptr_t)b->ptr); break;
    case CC_ARRAY: cc.ArrayDestroy(b->array); break;
    }
    free(b->shadow);
    free(b);
}

void cc_host_fill(struct cc_buf *b, unsigned seed)
{
    if (b->kind != CC_PINNED && b->kind != CC_PAGEABLE)
        cc_fail("cc_host_fill on a non-host buffer");
    unsigned char *p = (unsigned char *)(uintptr_t)b->ptr;
    for (size_t i = 0; i < b->size; i++)
        p[i] = b->shadow[i] = pattern(seed, i);
    b->known = 1;
}

/* ---- ops ---- */

CUmemcpy3DOperand cc_ptr(const struct cc_buf *b, size_t off, size_t row_length, size_t layer_height)
{
    return ob_ptr(b->ptr + off, row_length, layer_height);
}

CUmemcpy3DOperand cc_arr(const struct cc_buf *b, size_t x, size_t y, size_t z)
{
    return ob_array(b->array, x, y, z);
}

CUDA_MEMCPY3D_BATCH_OP cc_op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h, size_t d)
{
    return ob_op(src, dst, w, h, d, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
}

void cc_add(struct cc_batch *bt, struct cc_buf *src, CUmemcpy3DOperand s, struct cc_buf *dst,
            CUmemcpy3DOperand d, size_t w, size_t h, size_t depth)
{
    if (bt->n == CC_MAX_OPS)
        cc_fail("too many ops");
    bt->ops[bt->n] = cc_op(s, d, w, h, depth);
    /* A pageable source is best copied during the call (no pageable_stream_order warning). */
    if (src && src->kind == CC_PAGEABLE)
        bt->ops[bt->n].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    bt->src[bt->n] = src;
    bt->dst[bt->n] = dst;
    bt->n++;
}

static size_t op_elem(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cc_buf *s, const struct cc_buf *d)
{
    if (op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return s->elem;
    if (op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return d->elem;
    return 1;
}

struct side { size_t origin, row, layer; };

static struct side side_of(const CUmemcpy3DOperand *o, const struct cc_buf *b, const CUextent3D *e, size_t elem)
{
    struct side sd;
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
        sd.row = b->w * b->elem;
        sd.layer = sd.row * b->h;
        sd.origin = o->op.array.offset.z * sd.layer + o->op.array.offset.y * sd.row + o->op.array.offset.x * b->elem;
    } else {
        sd.row = (o->op.ptr.rowLength ? o->op.ptr.rowLength : e->width) * elem;
        sd.layer = (o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e->height) * sd.row;
        sd.origin = (size_t)(o->op.ptr.ptr - b->ptr);
    }
    return sd;
}

void cc_batch_apply(const struct cc_batch *bt)
{
    for (size_t i = 0; i < bt->n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &bt->ops[i];
        struct cc_buf *s = bt->src[i], *d = bt->dst[i];
        if (!s || !d)
            continue;
        size_t elem = op_elem(op, s, d);
        struct side a = side_of(&op->src, s, &op->extent, elem), b = side_of(&op->dst, d, &op->extent, elem);
        for (size_t z = 0; z < op->extent.depth; z++)
            for (size_t y = 0; y < op->extent.height; y++)
                memmove(d->shadow + b.origin + z * b.layer + y * b.row, s->shadow + a.origin + z * a.layer + y * a.row,
                        op->extent.width * elem);
        if (op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? 1 : (b.origin == 0 && op->extent.width * elem >= d->size))
            d->known = 1;
    }
}

uint64_t cc_batch_bytes(const struct cc_batch *bt)
{
    uint64_t total = 0;
    for (size_t i = 0; i < bt->n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &bt->ops[i];
        size_t elem = bt->src[i] && bt->dst[i] ? op_elem(op, bt->src[i], bt->dst[i]) : 1;
        total += (uint64_t)op->extent.width * op->extent.height * op->extent.depth * elem;
    }
    return total;
}

void cc_accepted(const struct cc_batch *bt)
{
    /* Atomic: the threaded client counts from several threads. */
    __atomic_fetch_add(&cc_batches, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&cc_ops, bt->n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&cc_bytes, cc_batch_bytes(bt), __ATOMIC_RELAXED);
    cc_batch_apply(bt);
}

void cc_summary(const char *prefix)
{
    printf("%sbatches=%llu ops=%llu bytes=%llu\n", prefix ? prefix : "", (unsigned long long)cc_batches,
           (unsigned long long)cc_ops, (unsigned long long)cc_bytes);
    fflush(stdout);
}

void cc_say_steps(const char *who)
{
    typedef unsigned long long (*steps_fn)(void);
    steps_fn steps = (steps_fn)dlsym(RTLD_DEFAULT, "cubatchtrace_thread_steps");
    if (steps)
        fprintf(stderr, "%s: steps %llu\n", who, steps());
}

int cc_reversed_check(const char *who, const unsigned char *back, const unsigned char *in, size_t n, size_t block)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(back + (n - 1 - i) * block, in + i * block, block) != 0;
    if (bad)
        fprintf(stderr, "%s: %zu of %zu copies hold wrong bytes\n", who, bad, n);
    return bad != 0;
}

CUresult cc_call(struct cc_door door, struct cc_batch *bt, CUstream s, size_t *fail)
{
    if (door.v2)
        return door.v2(bt->n, bt->ops, 0, s);
    size_t f = 12345;
    CUresult r = door.v1(bt->n, bt->ops, &f, 0, s);
    if (fail)
        *fail = f;
    return r;
}

int cc_verify(struct cc_door door, CUstream s, struct cc_buf **bufs, size_t nbufs)
{
    struct cc_batch rb;
    struct cc_buf *back[CC_MAX_OPS];
    size_t nback = 0;
    int bad = 0;
    rb.n = 0;
    for (size_t i = 0; i < nbufs; i++) {
        struct cc_buf *b = bufs[i];
        if (b->kind == CC_PINNED || b->kind == CC_PAGEABLE)
            continue;
        struct cc_buf *p = cc_buf_new(CC_PINNED, b->size);
        if (b->kind == CC_ARRAY)
            cc_add(&rb, b, cc_arr(b, 0, 0, 0), p, cc_ptr(p, 0, 0, 0), b->w, b->h, b->d);
        else
            cc_add(&rb, b, cc_ptr(b, 0, 0, 0), p, cc_ptr(p, 0, 0, 0), b->size, 1, 1);
        back[nback++] = p;
    }
    if (rb.n) {
        size_t fail;
        CUresult r = cc_call(door, &rb, s, &fail);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "client: read-back batch failed: CUresult %d\n", (int)r);
            return (int)nbufs;
        }
        cc_accepted(&rb);
    }
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
    nback = 0;
    for (size_t i = 0; i < nbufs; i++) {
        struct cc_buf *b = bufs[i];
        const unsigned char *got;
        struct cc_buf *p = NULL;
        if (b->kind == CC_PINNED || b->kind == CC_PAGEABLE)
            got = (const unsigned char *)(uintptr_t)b->ptr;
        else
            got = (const unsigned char *)(uintptr_t)(p = back[nback++])->ptr;
        if (memcmp(got, b->shadow, b->size) != 0) {
            size_t k = 0;
            while (got[k] == b->shadow[k])
                k++;
            fprintf(stderr, "client: buffer %zu (kind %d): byte %zu is 0x%02x, want 0x%02x\n", i, (int)b->kind, k,
                    got[k], b->shadow[k]);
            bad++;
        }
        if (p)
            cc_buf_free(p);
    }
    return bad;
}

int cc_mixed_scenario(struct cc_door door, CUstream s)
{
    enum { NDEV = 4, NARR = 4, DEV_SIZE = 8192 };
    struct cc_buf *dev[NDEV], *arr[NARR], *fill[NDEV + NARR];
    struct cc_buf *pinned = cc_buf_new(CC_PINNED, 4096), *pageable = cc_buf_new(CC_PAGEABLE, 4096);
    cc_host_fill(pinned, 1);
    cc_host_fill(pageable, 2);

    /* Set-up: every device buffer and array gets a known pattern (H2D, H2A). */
    struct cc_batch setup = {0};
    for (int i = 0; i < NDEV; i++) {
        dev[i] = cc_buf_new(CC_DEVICE, DEV_SIZE);
        fill[i] = cc_buf_new(CC_PINNED, DEV_SIZE);
        cc_host_fill(fill[i], 10 + i);
        cc_add(&setup, fill[i], cc_ptr(fill[i], 0, 0, 0), dev[i], cc_ptr(dev[i], 0, 0, 0), DEV_SIZE, 1, 1);
    }
    for (int i = 0; i < NARR; i++) {
        arr[i] = cc_array_new(16, 8, 2, CU_AD_FORMAT_FLOAT, 1);
        fill[NDEV + i] = cc_buf_new(CC_PINNED, arr[i]->size);
        cc_host_fill(fill[NDEV + i], 20 + i);
        cc_add(&setup, fill[NDEV + i], cc_ptr(fill[NDEV + i], 0, 0, 0), arr[i], cc_arr(arr[i], 0, 0, 0), 16, 8, 2);
    }
    CUresult r = cc_call(door, &setup, s, NULL);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "client: set-up batch failed: CUresult %d\n", (int)r);
        return 1;
    }
    cc_accepted(&setup);

    /* The mixed batch: one op of each kind, none reading what another writes. */
    struct cc_batch mixed = {0};
    /* D2D, pitched on both sides */
    cc_add(&mixed, dev[0], cc_ptr(dev[0], 64, 128, 8), dev[1], cc_ptr(dev[1], 32, 96, 6), 64, 4, 2);
    /* H2D from pinned host memory */
    cc_add(&mixed, pinned, cc_ptr(pinned, 0, 0, 0), dev[2], cc_ptr(dev[2], 100, 0, 0), 256, 4, 1);
    /* H2D from pageable host memory, pitched source */
    cc_add(&mixed, pageable, cc_ptr(pageable, 16, 300, 0), dev[2], cc_ptr(dev[2], 4096, 0, 0), 200, 3, 2);
    /* D2A */
    cc_add(&mixed, dev[3], cc_ptr(dev[3], 0, 0, 0), arr[0], cc_arr(arr[0], 2, 1, 0), 8, 4, 2);
    /* A2D */
    cc_add(&mixed, arr[1], cc_arr(arr[1], 0, 2, 1), dev[3], cc_ptr(dev[3], 2048, 0, 0), 16, 4, 1);
    /* A2A */
    cc_add(&mixed, arr[2], cc_arr(arr[2], 4, 0, 0), arr[3], cc_arr(arr[3], 0, 0, 0), 12, 8, 2);
    r = cc_call(door, &mixed, s, NULL);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "client: mixed batch failed: CUresult %d\n", (int)r);
        return 1;
    }
    cc_accepted(&mixed);

    struct cc_buf *all[NDEV + NARR + 2];
    size_t n = 0;
    for (int i = 0; i < NDEV; i++)
        all[n++] = dev[i];
    for (int i = 0; i < NARR; i++)
        all[n++] = arr[i];
    all[n++] = pinned;
    all[n++] = pageable;
    int bad = cc_verify(door, s, all, n);
    for (size_t i = 0; i < n; i++)
        cc_buf_free(all[i]);
    for (int i = 0; i < NDEV + NARR; i++)
        cc_buf_free(fill[i]);
    return bad;
}

void cc_blocks(struct cc_batch *bt, struct cc_buf *src, struct cc_buf *dst, size_t nops, size_t bytes)
{
    if (nops > CC_MAX_OPS || src->size < nops * bytes || dst->size < nops * bytes)
        cc_fail("cc_blocks: bad size");
    /* Op i copies block i to block nops-1-i, so a lost or misplaced op shows. */
    for (size_t i = 0; i < nops; i++)
        cc_add(bt, src, cc_ptr(src, i * bytes, 0, 0), dst, cc_ptr(dst, (nops - 1 - i) * bytes, 0, 0), bytes, 1, 1);
}

int cc_simple_batch(struct cc_door door, CUstream s, size_t nops, size_t bytes, unsigned seed)
{
    struct cc_buf *src = cc_buf_new(CC_PINNED, nops * bytes), *dst = cc_buf_new(CC_PINNED, nops * bytes);
    cc_host_fill(src, seed);
    struct cc_batch *bt = calloc(1, sizeof *bt);
    if (!bt)
        cc_fail("out of memory");
    cc_blocks(bt, src, dst, nops, bytes);
    size_t fail;
    CUresult r = cc_call(door, bt, s, &fail);
    int bad = 0;
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "client: batch failed: CUresult %d\n", (int)r);
        bad = 1;
    } else {
        cc_accepted(bt);
        struct cc_buf *check[] = {dst};
        bad = cc_verify(door, s, check, 1);
    }
    free(bt);
    cc_buf_free(src);
    cc_buf_free(dst);
    return bad;
}
