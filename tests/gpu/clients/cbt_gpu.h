/* SPDX-License-Identifier: MIT */
/*
 * Shared part of the GPU test clients (tests/gpu): the data suite every
 * client runs through its own door, and the manifest it prints so that
 * tests/gpu/suite.py can hold the trace against what was really called.
 *
 * Manifest lines on stdout (one fact per line, key=value):
 *   PID <pid>
 *   BATCH <k> n=<numOps> rc=<CUresult> failidx=<n|-> expect=ok|fail
 *   OP <k> <i> src_type=.. src_mem=.. [src_addr=0x..] ... bytes=..
 *   CHECK <name> ok|FAIL|skip [detail]
 *   RESULT ok|FAIL
 * <k> counts this client's own batch calls from 0; with the shim preloaded
 * it is the batch_id the shim gives the call (batch ids are per process and
 * nothing else in these programs makes a batch).
 *
 * Memory kinds are printed with the shim's numbering (catalog.h cbt_memkind):
 * 1 device, 2 host_pinned, 3 host_pageable, 4 managed, 5 array.
 *
 * The clients also run over the CPU test double (tests/fakecuda) so that
 * their logic can be checked on a machine without a GPU: its "device" memory
 * is host memory, and it lacks cuMemcpyDtoH; the independent read-back is
 * then skipped (reported as skip).
 */
#ifndef CBT_GPU_H
#define CBT_GPU_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opbuild.h"

#ifdef __cplusplus
#define CBT_GPU_STATIC_ASSERT static_assert
#else
#define CBT_GPU_STATIC_ASSERT _Static_assert
#endif
CBT_GPU_STATIC_ASSERT(sizeof(CUDA_MEMCPY3D_BATCH_OP) == 112, "CUDA_MEMCPY3D_BATCH_OP is 112 bytes on CUDA 13");
CBT_GPU_STATIC_ASSERT(sizeof(CUmemcpy3DOperand) == 40, "CUmemcpy3DOperand is 40 bytes on CUDA 13");

enum { MK_DEVICE = 1, MK_PINNED = 2, MK_PAGEABLE = 3, MK_MANAGED = 4, MK_ARRAY = 5 };

static int g_failed;   /* a CHECK failed */
static int g_batches;  /* batch calls made so far by this client */

static void check(const char *name, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(const char *name, int ok, const char *fmt, ...)
{
    char detail[512] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    printf("CHECK %s %s%s%s\n", name, ok ? "ok" : "FAIL", detail[0] ? " " : "", detail);
    if (!ok)
        g_failed = 1;
    fflush(stdout);
}

static void skip(const char *name, const char *why)
{
    printf("CHECK %s skip %s\n", name, why);
    fflush(stdout);
}

/*
 * What a client allocates with: the driver API (cbt_gpu_driver_backend) or,
 * in the runtime client, the runtime API.  Every function returns 0 on
 * success; on failure it has printed a CHECK line saying why.
 */
struct backend {
    const char *(*err_name)(int rc);
    int (*dev_alloc)(CUdeviceptr *p, size_t n);
    int (*host_alloc)(void **p, size_t n);
    int (*managed_alloc)(CUdeviceptr *p, size_t n);
    /* a 3D CUDA array of floats with 1 or 4 channels (runtime arrays are CUarrays) */
    int (*array3d)(CUarray *a, size_t w, size_t h, size_t d, int channels);
    int (*sync)(CUstream s);
    /* device -> host copy outside the batch API; NULL: not available */
    int (*dtoh)(void *dst, CUdeviceptr src, size_t n);
};

static void setup_fail(const char *what, const char *err, int line)
{
    printf("CHECK setup FAIL %s -> %s (line %d)\n", what, err, line);
    printf("RESULT FAIL\n");
    fflush(stdout);
    exit(1);
}

/* Setup steps that must succeed (the data suite cannot go on without them). */
#define SETUP(call)                                          \
    do {                                                     \
        if ((call) != 0)                                     \
            setup_fail(#call, "failed", __LINE__);           \
    } while (0)

/* ---- ops and their manifest ---- */

/* What the client knows of one operand beyond the op itself. */
struct side_info {
    int mem;          /* MK_* */
    int print_addr;   /* 0: the address the driver sees may differ (runtime arrays) */
};

struct op_info {
    struct side_info src, dst;
    unsigned long long bytes; /* bytes moved: extent * element size */
};

static CUmemcpy3DOperand host_operand(const void *p, size_t row_length, size_t layer_height)
{
    return ob_ptr((CUdeviceptr)(uintptr_t)p, row_length, layer_height);
}

static void print_side(const char *side, const CUmemcpy3DOperand *o, const struct side_info *si)
{
    printf(" %s_type=%d %s_mem=%d", side, (int)o->type, side, si->mem);
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
        if (si->print_addr)
            printf(" %s_addr=0x%llx", side, (unsigned long long)(uintptr_t)o->op.array.array);
        printf(" %s_x=%zu %s_y=%zu %s_z=%zu", side, o->op.array.offset.x, side, o->op.array.offset.y, side,
               o->op.array.offset.z);
    } else {
        if (si->print_addr)
            printf(" %s_addr=0x%llx", side, (unsigned long long)o->op.ptr.ptr);
        printf(" %s_row_length=%zu %s_layer_height=%zu %s_lochint_type=%d %s_lochint_id=%d", side,
               o->op.ptr.rowLength, side, o->op.ptr.layerHeight, side, (int)o->op.ptr.locHint.type, side,
               o->op.ptr.locHint.id);
    }
}

/* Print the manifest of batch k (call after the batch call). */
static void print_batch(int k, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, const struct op_info *info, CUresult rc,
                        size_t fail_idx, int has_fail_idx, int expect_ok)
{
    printf("BATCH %d n=%zu rc=%d", k, n, (int)rc);
    if (has_fail_idx)
        printf(" failidx=%zu", fail_idx);
    else
        printf(" failidx=-");
    printf(" expect=%s\n", expect_ok ? "ok" : "fail");
    for (size_t i = 0; i < n; i++) {
        printf("OP %d %zu", k, i);
        print_side("src", &ops[i].src, &info[i].src);
        print_side("dst", &ops[i].dst, &info[i].dst);
        printf(" width=%zu height=%zu depth=%zu access_order=%d op_flags=%u bytes=%llu\n", ops[i].extent.width,
               ops[i].extent.height, ops[i].extent.depth, (int)ops[i].srcAccessOrder, ops[i].flags, info[i].bytes);
    }
    fflush(stdout);
}

/* ---- the batch call, through the client's door ---- */

/* Calls the batch through the door under test.  has_fail_idx: the 12.8 ABI. */
struct door {
    const char *name;
    int has_fail_idx;
    int (*call)(const struct door *d, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, CUstream s);
    void *fn; /* the function pointer the door resolved, if any */
};

static const struct backend *g_be;

/* One batch: call, print the manifest, check the result (and failIdx). */
static int do_batch(const struct door *d, const char *name, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops,
                    const struct op_info *info, CUstream s, int expect_ok, size_t want_fail_idx)
{
    size_t fail_idx = (size_t)12345;
    int k = g_batches++;
    int rc = d->call(d, n, ops, &fail_idx, s);
    print_batch(k, n, ops, info, (CUresult)rc, fail_idx, d->has_fail_idx, expect_ok);
    char cname[96];
    snprintf(cname, sizeof cname, "batch%d-%s", k, name);
    if (expect_ok)
        check(cname, rc == 0, "%s via %s", g_be->err_name(rc), d->name);
    else
        check(cname, rc == 1, "%s via %s (want INVALID_VALUE)", g_be->err_name(rc), d->name);
    if (d->has_fail_idx) {
        snprintf(cname, sizeof cname, "batch%d-failidx", k);
        check(cname, fail_idx == want_fail_idx, "failIdx %zu, want %zu", fail_idx, want_fail_idx);
    }
    return rc;
}

/* ---- the data suite ---- */

static unsigned char pat_a(size_t i) { return (unsigned char)(i * 7 + 3); }
static unsigned char pat_b(size_t i) { return (unsigned char)(i * 13 + 5); }
static unsigned char pat_c(size_t i) { return (unsigned char)(i * 31 + 1); }
static unsigned char pat_arr(size_t i) { return (unsigned char)(i * 3 + 7); }
static unsigned char pat_box(size_t i) { return (unsigned char)(i % 251 + 1); }

static void compare(const char *name, const unsigned char *got, const unsigned char *want, size_t n)
{
    size_t bad = 0, first = (size_t)-1;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            bad++;
            if (first == (size_t)-1)
                first = i;
        }
    if (bad)
        check(name, 0, "%zu of %zu bytes wrong, first at %zu (got 0x%02x want 0x%02x)", bad, n, first, got[first],
              want[first]);
    else
        check(name, 1, "%zu bytes", n);
}

/*
 * Three dependent batches (uploads; device-side moves; read-backs), then the
 * bytes are compared on the host, then one batch whose third op is bad and
 * one good batch after it.  Covers pointer<->pointer between pageable,
 * pinned, device and managed memory with row and layer pitches,
 * pointer<->CUDA array at an offset with a pitched pointer, and array->array
 * between two float arrays at offsets.
 */
static void data_suite(const struct backend *be, const struct door *d, CUstream s)
{
    enum { AW = 8, AH = 6, AD = 3, AE = 16 };        /* float4 array A */
    enum { BW = 16, BH = 8, BD = 3, BE = 4 };        /* float arrays B, C */
    const size_t a_bytes = AW * AH * AD * AE, b_bytes = BW * BH * BD * BE;
    g_be = be;

    /* pageable host buffers */
    unsigned char *h_a = (unsigned char *)malloc(3600), *h_c = (unsigned char *)malloc(4096);
    unsigned char *h_z = (unsigned char *)calloc(1, b_bytes);
    unsigned char *h_out_e = (unsigned char *)malloc(2048), *h_out_A = (unsigned char *)malloc(a_bytes);
    /* pinned host buffers */
    unsigned char *p_b, *p_A, *p_box, *p_B, *p_out_b, *p_out_f, *p_out_C;
    SETUP(be->host_alloc((void **)&p_b, 1200));
    SETUP(be->host_alloc((void **)&p_A, a_bytes));
    SETUP(be->host_alloc((void **)&p_box, 640));
    SETUP(be->host_alloc((void **)&p_B, b_bytes));
    SETUP(be->host_alloc((void **)&p_out_b, 1200));
    SETUP(be->host_alloc((void **)&p_out_f, 4096));
    SETUP(be->host_alloc((void **)&p_out_C, b_bytes));
    for (size_t i = 0; i < 3600; i++) h_a[i] = pat_a(i);
    for (size_t i = 0; i < 1200; i++) p_b[i] = pat_b(i);
    for (size_t i = 0; i < 4096; i++) h_c[i] = pat_c(i);
    for (size_t i = 0; i < a_bytes; i++) p_A[i] = pat_arr(i);
    for (size_t i = 0; i < 640; i++) p_box[i] = pat_box(i);
    for (size_t i = 0; i < b_bytes / 4; i++) ((uint32_t *)p_B)[i] = (uint32_t)(i + 1);
    memset(h_out_e, 0xEE, 2048);
    memset(h_out_A, 0xEE, a_bytes);
    memset(p_out_b, 0xEE, 1200);
    memset(p_out_f, 0xEE, 4096);
    memset(p_out_C, 0xEE, b_bytes);

    /* device, managed, arrays */
    CUdeviceptr d_a, d_b, d_e, d_f, m_c;
    SETUP(be->dev_alloc(&d_a, 2600));
    SETUP(be->dev_alloc(&d_b, 3072));
    SETUP(be->dev_alloc(&d_e, 2048));
    SETUP(be->dev_alloc(&d_f, 4096));
    SETUP(be->managed_alloc(&m_c, 4096));
    CUarray A, B, C;
    SETUP(be->array3d(&A, AW, AH, AD, 4));
    SETUP(be->array3d(&B, BW, BH, BD, 1));
    SETUP(be->array3d(&C, BW, BH, BD, 1));

    const struct side_info DEV = {MK_DEVICE, 1}, PIN = {MK_PINNED, 1}, PAG = {MK_PAGEABLE, 1},
                           MAN = {MK_MANAGED, 1}, ARR = {MK_ARRAY, 1};
    const CUmemcpySrcAccessOrder STREAM = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
                                 DURING = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
                                 ANY = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;

    /* batch 1: uploads */
    CUDA_MEMCPY3D_BATCH_OP b1[6];
    struct op_info i1[6] = {
        {PAG, DEV, 2048}, {PIN, DEV, 1200}, {PAG, MAN, 4096}, {PIN, ARR, a_bytes}, {PIN, ARR, b_bytes}, {PAG, ARR, b_bytes},
    };
    b1[0] = ob_op(host_operand(h_a, 300, 6), ob_ptr(d_a, 260, 5), 256, 4, 2, STREAM);
    b1[1] = ob_op(host_operand(p_b, 0, 0), ob_ptr(d_b, 512, 0), 200, 3, 2, STREAM);
    b1[2] = ob_op(host_operand(h_c, 0, 0), ob_ptr(m_c, 0, 0), 4096, 1, 1, DURING);
    b1[2].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    b1[2].dst.op.ptr.locHint.id = 0;
    b1[3] = ob_op(host_operand(p_A, 0, 0), ob_array(A, 0, 0, 0), AW, AH, AD, STREAM);
    b1[4] = ob_op(host_operand(p_B, 0, 0), ob_array(B, 0, 0, 0), BW, BH, BD, STREAM);
    b1[5] = ob_op(host_operand(h_z, 0, 0), ob_array(C, 0, 0, 0), BW, BH, BD, DURING);
    do_batch(d, "uploads", 6, b1, i1, s, 1, SIZE_MAX);
    SETUP(be->sync(s));

    /* batch 2: moves on the device side */
    CUDA_MEMCPY3D_BATCH_OP b2[4];
    struct op_info i2[4] = {{DEV, DEV, 2048}, {PIN, ARR, 4 * 3 * 2 * AE}, {MAN, DEV, 4096}, {ARR, ARR, 5 * 4 * 2 * BE}};
    b2[0] = ob_op(ob_ptr(d_a, 260, 5), ob_ptr(d_e, 0, 0), 256, 4, 2, ANY);
    b2[1] = ob_op(host_operand(p_box, 5, 4), ob_array(A, 1, 2, 1), 4, 3, 2, STREAM);
    b2[2] = ob_op(ob_ptr(m_c, 0, 0), ob_ptr(d_f, 0, 0), 4096, 1, 1, STREAM);
    b2[3] = ob_op(ob_array(B, 2, 1, 0), ob_array(C, 3, 0, 1), 5, 4, 2, STREAM);
    do_batch(d, "device-moves", 4, b2, i2, s, 1, SIZE_MAX);
    SETUP(be->sync(s));

    /* batch 3: read-backs into host memory */
    CUDA_MEMCPY3D_BATCH_OP b3[5];
    struct op_info i3[5] = {{DEV, PAG, 2048}, {DEV, PIN, 1200}, {DEV, PIN, 4096}, {ARR, PAG, a_bytes}, {ARR, PIN, b_bytes}};
    b3[0] = ob_op(ob_ptr(d_e, 0, 0), host_operand(h_out_e, 0, 0), 256, 4, 2, STREAM);
    b3[1] = ob_op(ob_ptr(d_b, 512, 3), host_operand(p_out_b, 0, 0), 200, 3, 2, STREAM);
    b3[2] = ob_op(ob_ptr(d_f, 0, 0), host_operand(p_out_f, 0, 0), 4096, 1, 1, STREAM);
    b3[3] = ob_op(ob_array(A, 0, 0, 0), host_operand(h_out_A, 0, 0), AW, AH, AD, STREAM);
    b3[4] = ob_op(ob_array(C, 0, 0, 0), host_operand(p_out_C, 0, 0), BW, BH, BD, STREAM);
    do_batch(d, "readbacks", 5, b3, i3, s, 1, SIZE_MAX);
    SETUP(be->sync(s));

    /* what should have arrived */
    unsigned char *want = (unsigned char *)malloc(a_bytes > 4096 ? a_bytes : 4096);
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 4; y++)
            for (size_t x = 0; x < 256; x++)
                want[(z * 4 + y) * 256 + x] = h_a[(z * 6 + y) * 300 + x];
    compare("data-pageable>device>device>pageable-pitched", h_out_e, want, 2048);
    compare("data-pinned>device>pinned-pitched", p_out_b, p_b, 1200);
    compare("data-pageable>managed>device>pinned", p_out_f, h_c, 4096);
    compare("data-managed-host-view", (const unsigned char *)(uintptr_t)m_c, h_c, 4096);
    for (size_t z = 0; z < AD; z++)
        for (size_t y = 0; y < AH; y++)
            for (size_t x = 0; x < AW; x++) {
                size_t e = (z * AH + y) * AW + x;
                int inside = x >= 1 && x < 5 && y >= 2 && y < 5 && z >= 1 && z < 3;
                for (size_t b = 0; b < AE; b++)
                    want[e * AE + b] = inside ? p_box[(((z - 1) * 4 + (y - 2)) * 5 + (x - 1)) * AE + b]
                                              : p_A[e * AE + b];
            }
    compare("data-pinned>float4-array(offset,pitched)>pageable", h_out_A, want, a_bytes);
    for (size_t z = 0; z < BD; z++)
        for (size_t y = 0; y < BH; y++)
            for (size_t x = 0; x < BW; x++) {
                uint32_t v = 0;
                if (x >= 3 && x < 8 && y < 4 && z >= 1 && z < 3)
                    v = (uint32_t)(((z - 1) * BH + (y + 1)) * BW + (x - 3 + 2) + 1);
                memcpy(want + ((z * BH + y) * BW + x) * 4, &v, 4);
            }
    compare("data-array>array(offsets)>pinned", p_out_C, want, b_bytes);

    /* an independent read-back of one device buffer, where the driver has it */
    if (be->dtoh) {
        unsigned char back[1200];
        int r = be->dtoh(back, d_b, 1200); /* d_b's first row is p_b's first 200 bytes */
        check("data-independent-readback", r == 0 && memcmp(back, p_b, 200) == 0, "%s", be->err_name(r));
    } else {
        skip("data-independent-readback", "no cuMemcpyDtoH_v2 in this driver (test double)");
    }

    /* batch 4: three D2D ops, the third with width 0: the whole call fails */
    CUDA_MEMCPY3D_BATCH_OP b4[3];
    struct op_info i4[3] = {{DEV, DEV, 2048}, {DEV, DEV, 2048}, {DEV, DEV, 0}};
    for (int i = 0; i < 3; i++)
        b4[i] = ob_op(ob_ptr(d_e, 0, 0), ob_ptr(d_f, 0, 0), 256, 4, 2, STREAM);
    b4[2].extent.width = 0;
    do_batch(d, "third-op-bad", 3, b4, i4, s, 0, 2);
    SETUP(be->sync(s));
    /* one more good batch after the failed one: the door still works */
    struct op_info i5[1] = {{DEV, DEV, 2048}};
    do_batch(d, "after-failure", 1, b4, i5, s, 1, SIZE_MAX);
    SETUP(be->sync(s));
    free(want);
}

static int finish(void)
{
    printf("RESULT %s\n", g_failed ? "FAIL" : "ok");
    fflush(stdout);
    return g_failed ? 1 : 0;
}

/* ---- the driver-API backend (not in the runtime client) ---- */
#ifndef CBT_GPU_NO_DRIVER_BACKEND

static const char *drv_err_name(int rc)
{
    const char *s = NULL;
    static char buf[32];
    if (cuGetErrorName((CUresult)rc, &s) == CUDA_SUCCESS && s)
        return s;
    snprintf(buf, sizeof buf, "CUresult %d", rc);
    return buf;
}

#define DRV(call)                                                  \
    do {                                                           \
        CUresult r_ = (call);                                      \
        if (r_ != CUDA_SUCCESS) {                                  \
            printf("CHECK setup FAIL %s -> %s\n", #call, drv_err_name(r_)); \
            return 1;                                              \
        }                                                          \
    } while (0)

static int drv_dev_alloc(CUdeviceptr *p, size_t n) { DRV(cuMemAlloc(p, n)); return 0; }
static int drv_host_alloc(void **p, size_t n) { DRV(cuMemAllocHost(p, n)); return 0; }
static int drv_managed_alloc(CUdeviceptr *p, size_t n) { DRV(cuMemAllocManaged(p, n, CU_MEM_ATTACH_GLOBAL)); return 0; }
static int drv_array3d(CUarray *a, size_t w, size_t h, size_t d, int channels)
{
    CUDA_ARRAY3D_DESCRIPTOR desc = {w, h, d, CU_AD_FORMAT_FLOAT, (unsigned)channels, 0};
    DRV(cuArray3DCreate(a, &desc));
    return 0;
}
static int drv_sync(CUstream s) { DRV(cuStreamSynchronize(s)); return 0; }
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
static dtoh_fn drv_dtoh_real;
static int drv_dtoh(void *dst, CUdeviceptr src, size_t n) { return (int)drv_dtoh_real(dst, src, n); }

static struct backend drv_backend = {drv_err_name, drv_dev_alloc, drv_host_alloc, drv_managed_alloc,
                                     drv_array3d, drv_sync, NULL};

/* cuInit, device 0's primary context, one stream; returns the driver backend. */
static const struct backend *drv_setup(CUstream *s)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuStreamCreate(s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        setup_fail("cuInit/cuDeviceGet/cuDevicePrimaryCtxRetain/cuCtxSetCurrent/cuStreamCreate", "failed", __LINE__);
    /* Looked up rather than linked: the test double has no cuMemcpyDtoH_v2. */
    drv_dtoh_real = (dtoh_fn)dlsym(RTLD_DEFAULT, "cuMemcpyDtoH_v2");
    drv_backend.dtoh = drv_dtoh_real ? drv_dtoh : NULL;
    return &drv_backend;
}
#endif

#endif
