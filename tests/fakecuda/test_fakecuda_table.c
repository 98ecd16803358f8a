/* SPDX-License-Identifier: MIT */
/*
 * Pins the fake driver (tests/fakecuda) to what the real one does on an H200
 * (shared/facts/h200-driver.md).  Every row of the facts file's accept/reject
 * table is walked through all four batch entry points, which the H200 showed
 * to agree; then the bytes the copies move, the 12.8 ABI's failIdx,
 * cuGetProcAddress's answers and the crash on an unmapped host address.
 *
 * The double is dlopen()ed from $CBT_FAKECUDA_DIR, the way the shim finds a
 * driver.  Its "device" memory is host memory, so the test fills and reads it
 * directly: that is the one liberty taken with the real driver's rules.
 */
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "fakecuda.h"
#include "opbuild.h"

static void *lib;

static struct {
    PFN_cuInit_v2000 Init;
    PFN_cuDeviceGet_v2000 DeviceGet;
    PFN_cuDeviceGetCount_v2000 DeviceGetCount;
    PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
    PFN_cuMemAlloc_v3020 MemAlloc;
    PFN_cuMemFree_v3020 MemFree;
    PFN_cuMemAllocHost_v3020 MemAllocHost;
    PFN_cuMemAllocManaged_v6000 MemAllocManaged;
    PFN_cuMemGetAddressRange_v3020 MemGetAddressRange;
    PFN_cuPointerGetAttribute_v4000 PointerGetAttribute;
    PFN_cuPointerGetAttributes_v7000 PointerGetAttributes;
    PFN_cuStreamCreate_v2000 StreamCreate;
    PFN_cuStreamGetId_v12000 StreamGetId;
    PFN_cuStreamGetCtx_v9020 StreamGetCtx;
    PFN_cuStreamIsCapturing_v10000 StreamIsCapturing;
    PFN_cuArray3DCreate_v3020 Array3DCreate;
    PFN_cuArrayDestroy_v2000 ArrayDestroy;
    PFN_cuGetErrorName_v6000 GetErrorName;
    PFN_cuGetProcAddress_v11030 GetProcAddress4;
    PFN_cuGetProcAddress_v12000 GetProcAddress5;
    PFN_cuMemcpy3DBatchAsync_v13000 BatchV2;
    PFN_cuMemcpy3DBatchAsync_v13000_ptsz BatchV2Ptsz;
    PFN_cuMemcpy3DBatchAsync_v12080 BatchV1;
    PFN_cuMemcpy3DBatchAsync_v12080_ptsz BatchV1Ptsz;
    fakecuda_batch_calls_fn batch_calls;
    fakecuda_reset_counts_fn reset_counts;
} cu;

static int load(const char *path)
{
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        tap_diag("dlopen(%s): %s", path, dlerror());
        return 0;
    }
    int ok = 1;
#define LOAD(field, sym)                                              \
    do {                                                              \
        *(void **)&cu.field = dlsym(lib, sym);                        \
        if (!cu.field) {                                              \
            tap_diag("the double does not export %s", sym);           \
            ok = 0;                                                   \
        }                                                             \
    } while (0)
    LOAD(Init, "cuInit");
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(DeviceGetCount, "cuDeviceGetCount");
    LOAD(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(CtxSetCurrent, "cuCtxSetCurrent");
    LOAD(MemAlloc, "cuMemAlloc_v2");
    LOAD(MemFree, "cuMemFree_v2");
    LOAD(MemAllocHost, "cuMemAllocHost_v2");
    LOAD(MemAllocManaged, "cuMemAllocManaged");
    LOAD(MemGetAddressRange, "cuMemGetAddressRange_v2");
    LOAD(PointerGetAttribute, "cuPointerGetAttribute");
    LOAD(PointerGetAttributes, "cuPointerGetAttributes");
    LOAD(StreamCreate, "cuStreamCreate");
    LOAD(StreamGetId, "cuStreamGetId");
    LOAD(StreamGetCtx, "cuStreamGetCtx");
    LOAD(StreamIsCapturing, "cuStreamIsCapturing");
    LOAD(Array3DCreate, "cuArray3DCreate_v2");
    LOAD(ArrayDestroy, "cuArrayDestroy");
    LOAD(GetErrorName, "cuGetErrorName");
    LOAD(GetProcAddress4, "cuGetProcAddress");
    LOAD(GetProcAddress5, "cuGetProcAddress_v2");
    LOAD(BatchV2, "cuMemcpy3DBatchAsync_v2");
    LOAD(BatchV2Ptsz, "cuMemcpy3DBatchAsync_v2_ptsz");
    LOAD(BatchV1, "cuMemcpy3DBatchAsync");
    LOAD(BatchV1Ptsz, "cuMemcpy3DBatchAsync_ptsz");
    LOAD(batch_calls, "fakecuda_batch_calls");
    LOAD(reset_counts, "fakecuda_reset_counts");
#undef LOAD
    return ok;
}

static const char *errname(CUresult r)
{
    const char *s = NULL;
    static char buf[32];
    if (cu.GetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

/* ------------------------------------------------------------ the batch */

enum api { API_V2, API_V2_PTSZ, API_V1, API_V1_PTSZ, API_COUNT };
static const char *const api_names[API_COUNT] = { "cuMemcpy3DBatchAsync_v2", "cuMemcpy3DBatchAsync_v2_ptsz",
                                                  "cuMemcpy3DBatchAsync(12.8)", "cuMemcpy3DBatchAsync_ptsz(12.8)" };

/* A NULL stream leaves *failIdx as the caller set it (measured on the H200). */
#define UNTOUCHED ((size_t)12345)

static CUresult call_api(enum api a, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s,
                         size_t *fail_idx)
{
    *fail_idx = SIZE_MAX;
    switch (a) {
    case API_V2:
        return cu.BatchV2(n, ops, flags, s);
    case API_V2_PTSZ:
        return cu.BatchV2Ptsz(n, ops, flags, s);
    case API_V1:
        *fail_idx = 12345; /* must be overwritten */
        return cu.BatchV1(n, ops, fail_idx, flags, s);
    default:
        *fail_idx = 12345;
        return cu.BatchV1Ptsz(n, ops, fail_idx, flags, s);
    }
}

/* One call's arguments; ops[] holds up to three ops. */
struct call {
    size_t n;
    CUDA_MEMCPY3D_BATCH_OP ops[3];
    bool null_list; /* pass opList = NULL instead of ops */
    unsigned long long flags;
    CUstream stream;
};

static CUstream stream, stream2;
static CUdeviceptr dsrc, ddst, dbig, dlin;
static void *pinned, *pageable;
static CUdeviceptr managed;
static CUarray arr_f4, arr_u8, arr_f1a, arr_f1b;
static CUcontext ctx0;

#define PTR_BYTES 8192 /* each small buffer of the D2D rows */

/* The order of every op this test builds (tests/opbuild.h). */
#define ORDER_STREAM CU_MEMCPY_SRC_ACCESS_ORDER_STREAM

/* The table's reference call: one D2D pointer copy of extent 256x4x2. */
static struct call base_call(void)
{
    struct call c;
    memset(&c, 0, sizeof c);
    c.n = 1;
    c.ops[0] = ob_op(ob_ptr(dsrc, 0, 0), ob_ptr(ddst, 0, 0), 256, 4, 2, ORDER_STREAM);
    c.ops[1] = c.ops[0];
    c.ops[2] = c.ops[0];
    c.stream = stream;
    return c;
}

/*
 * Walks one row of the table through the four entry points.  want_idx is what
 * the 12.8 ABI must leave in *failIdx.  Measured on the H200 (tests/gpu): the
 * bad op's index for what the driver checks op by op first (extent, rowLength,
 * layerHeight, srcAccessOrder, flags, operand types, element sizes); SIZE_MAX
 * for a NULL pointer and for footprints past an allocation or an array, which
 * it finds later, and for batch-level errors; untouched for a NULL stream.
 */
static void row(const char *name, const struct call *c0, CUresult want, size_t want_idx)
{
    for (int a = 0; a < API_COUNT; a++) {
        struct call c = *c0; /* a fresh copy: nothing leaks from one entry point to the next */
        size_t idx;
        CUresult r = call_api((enum api)a, c.n, c.null_list ? NULL : c.ops, c.flags, c.stream, &idx);
        bool v1 = a == API_V1 || a == API_V1_PTSZ;
        bool ok = r == want && (!v1 || idx == want_idx);
        if (v1)
            tap_ok(ok, "table row '%s' via %s -> %s, failIdx %s", name, api_names[a], errname(want),
                   want_idx == SIZE_MAX ? "SIZE_MAX" : want_idx == UNTOUCHED ? "untouched" : want_idx == 0 ? "0" : want_idx == 1 ? "1" : "2");
        else
            tap_ok(ok, "table row '%s' via %s -> %s", name, api_names[a], errname(want));
        if (!ok)
            tap_diag("  got %s, failIdx %zu", errname(r), idx);
    }
}

#define IV CUDA_ERROR_INVALID_VALUE
#define OK CUDA_SUCCESS
#define NOIDX SIZE_MAX

static void walk_table(void)
{
    struct call c;

    tap_diag("accept/reject table of shared/facts/h200-driver.md, D2D pointer copy 256x4x2");
    c = base_call();
    row("valid", &c, OK, NOIDX);

    c = base_call();
    c.n = 0;
    row("numOps = 0", &c, IV, NOIDX);
    c = base_call();
    c.null_list = true;
    row("opList = NULL, numOps = 1", &c, IV, NOIDX);
    c = base_call();
    c.flags = 1;
    row("flags = 1", &c, IV, NOIDX);
    c = base_call();
    c.stream = NULL;
    row("stream NULL (0)", &c, IV, UNTOUCHED);
    c = base_call();
    c.stream = CU_STREAM_LEGACY;
    row("stream CU_STREAM_LEGACY (0x1)", &c, IV, NOIDX);
    c = base_call();
    c.stream = CU_STREAM_PER_THREAD;
    row("stream CU_STREAM_PER_THREAD (0x2)", &c, OK, NOIDX);

    c = base_call();
    c.ops[0].extent.width = 0;
    row("extent width = 0", &c, IV, 0);
    c = base_call();
    c.ops[0].extent.height = 0;
    row("extent height = 0", &c, IV, 0);
    c = base_call();
    c.ops[0].extent.depth = 0;
    row("extent depth = 0", &c, IV, 0);

    c = base_call();
    c.ops[0].src.op.ptr.rowLength = 100;
    row("src rowLength 100 < width 256", &c, IV, 0);
    c = base_call();
    c.ops[0].src.op.ptr.rowLength = 512;
    row("src rowLength 512 >= width", &c, OK, NOIDX);
    c = base_call();
    c.ops[0].dst.op.ptr.layerHeight = 2;
    row("dst layerHeight 2 < height 4", &c, IV, 0);

    static const unsigned bad_orders[] = { 0, 4, 7 };
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        c = base_call();
        c.ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)bad_orders[i];
        snprintf(name, sizeof name, "srcAccessOrder %u", bad_orders[i]);
        row(name, &c, IV, 0);
    }
    c = base_call();
    c.ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    row("srcAccessOrder DURING_API_CALL on device memory", &c, OK, NOIDX);
    c = base_call();
    c.ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    row("srcAccessOrder ANY on device memory", &c, OK, NOIDX);

    c = base_call();
    c.ops[0].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    row("op flags 1 (PREFER_OVERLAP_WITH_COMPUTE)", &c, OK, NOIDX);
    c = base_call();
    c.ops[0].flags = 2;
    row("op flags 2", &c, IV, 0);
    c = base_call();
    c.ops[0].flags = 0x80;
    row("op flags 0x80", &c, IV, 0);

    c = base_call();
    c.ops[0].src.type = (CUmemcpy3DOperandType)0;
    row("src operand type 0", &c, IV, 0);
    c = base_call();
    c.ops[0].src.type = (CUmemcpy3DOperandType)3;
    row("src operand type 3", &c, IV, 0);
    c = base_call();
    c.ops[0].dst.type = (CUmemcpy3DOperandType)0;
    row("dst operand type 0", &c, IV, 0);
    c = base_call();
    c.ops[0].dst.type = (CUmemcpy3DOperandType)3;
    row("dst operand type 3", &c, IV, 0);
    c = base_call();
    c.ops[0].src.op.ptr.ptr = 0;
    row("src ptr = 0", &c, IV, NOIDX);
    c = base_call();
    c.ops[0].dst.op.ptr.ptr = 0;
    row("dst ptr = 0", &c, IV, NOIDX);

    static const struct {
        const char *name;
        int type, id;
    } hints[] = { { "locHint type DEVICE id 0", CU_MEM_LOCATION_TYPE_DEVICE, 0 },
                  { "locHint type 9", 9, 0 },
                  { "locHint type 99", 99, 0 },
                  { "locHint type DEVICE id 77", CU_MEM_LOCATION_TYPE_DEVICE, 77 } };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        c = base_call();
        c.ops[0].src.op.ptr.locHint.type = (CUmemLocationType)hints[i].type;
        c.ops[0].src.op.ptr.locHint.id = hints[i].id;
        c.ops[0].dst.op.ptr.locHint = c.ops[0].src.op.ptr.locHint;
        row(hints[i].name, &c, OK, NOIDX);
    }

    static const struct {
        const char *name;
        CUmemcpySrcAccessOrder order;
    } orders[] = { { "STREAM", CU_MEMCPY_SRC_ACCESS_ORDER_STREAM },
                   { "DURING_API_CALL", CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL },
                   { "ANY", CU_MEMCPY_SRC_ACCESS_ORDER_ANY } };
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        c = base_call();
        c.ops[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pinned;
        c.ops[0].srcAccessOrder = orders[i].order;
        snprintf(name, sizeof name, "H2D from pinned host, %s", orders[i].name);
        row(name, &c, OK, NOIDX);
        c.ops[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pageable;
        snprintf(name, sizeof name, "H2D from pageable malloc, %s", orders[i].name);
        row(name, &c, OK, NOIDX);
    }

    c = base_call();
    c.ops[0].dst.op.ptr.ptr = managed;
    c.ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    c.ops[0].dst.op.ptr.locHint.id = 0;
    row("D2managed with locHint DEVICE", &c, OK, NOIDX);

    c = base_call();
    c.ops[0] = ob_op(ob_ptr(dbig + (16u << 20), 0, 0), ob_ptr(dbig + (40u << 20), 0, 0), 1u << 20, 1, 1, ORDER_STREAM);
    row("D2D 1 MiB inside a 64 MiB allocation", &c, OK, NOIDX);
    c = base_call();
    c.ops[0].src.op.ptr.ptr = dsrc + PTR_BYTES - 1024; /* footprint 2048 */
    row("D2D whose src footprint runs past the end of the device allocation", &c, IV, NOIDX);
    c = base_call();
    c.ops[0].dst.op.ptr.ptr = ddst + PTR_BYTES - 2047; /* one byte too far */
    row("D2D whose dst footprint runs past the end by one byte", &c, IV, NOIDX);
    c = base_call();
    c.ops[0].dst.op.ptr.ptr = ddst + PTR_BYTES - 2048;
    row("D2D whose dst footprint ends exactly at the end of the allocation", &c, OK, NOIDX);
    c = base_call();
    c.ops[0].src.op.ptr.rowLength = 1024; /* footprint (1*4+3)*1024+256 = 7424 */
    c.ops[0].src.op.ptr.ptr = dsrc + 1024;
    row("pitched src footprint runs past the end (rowLength counts)", &c, IV, NOIDX);

    c = base_call();
    c.n = 2;
    row("two ops whose destinations overlap", &c, OK, NOIDX);
    for (size_t bad = 0; bad < 3; bad++) {
        char name[64];
        c = base_call();
        c.n = 3;
        c.ops[bad].extent.width = 0;
        snprintf(name, sizeof name, "one bad op (index %zu) of three", bad);
        row(name, &c, IV, bad);
    }

    tap_diag("array rows: float4 array 64x64x4, extent in elements");
    c = base_call();
    c.ops[0] = ob_op(ob_ptr(dlin, 0, 0), ob_array(arr_f4, 0, 0, 0), 64, 64, 4, ORDER_STREAM);
    row("device -> float4 CUDA array 64x64x4", &c, OK, NOIDX);
    c.ops[0].extent.width = 65;
    row("device -> float4 array, width 65 (past the array)", &c, IV, NOIDX);
    c.ops[0].extent.width = 64;
    c.ops[0].dst.op.array.offset.x = 1;
    row("device -> float4 array, offset.x 1 with width 64", &c, IV, NOIDX);
    c.ops[0].dst.op.array.offset.x = 0;
    c.ops[0].dst.op.array.offset.z = 1;
    row("device -> float4 array, offset.z 1 with depth 4", &c, IV, NOIDX);
    c = base_call();
    c.ops[0] = ob_op(ob_array(arr_f4, 0, 0, 0), ob_ptr(dlin, 0, 0), 64, 64, 4, ORDER_STREAM);
    row("float4 CUDA array -> device", &c, OK, NOIDX);
    c.ops[0].src.op.array.array = NULL;
    row("array operand with a NULL CUarray", &c, IV, 0);
    c.ops[0].src.op.array.array = (CUarray)&c;
    row("array operand with a CUarray never created", &c, IV, 0);
    c = base_call();
    c.ops[0] = ob_op(ob_array(arr_u8, 0, 0, 0), ob_array(arr_f1a, 0, 0, 0), 64, 64, 4, ORDER_STREAM);
    row("u8 array -> float array (element sizes differ)", &c, IV, 0);
    c.ops[0] = ob_op(ob_array(arr_f1a, 0, 0, 0), ob_array(arr_f1b, 0, 0, 0), 64, 64, 4, ORDER_STREAM);
    row("float array -> float array", &c, OK, NOIDX);
    c.ops[0] = ob_op(ob_ptr(dlin + 2 * 64 * 64 * 4 * 16 - 16, 0, 0), ob_array(arr_f4, 0, 0, 0), 2, 1, 1, ORDER_STREAM);
    row("device -> array whose pointer footprint (in elements of 16 bytes) runs past", &c, IV, NOIDX);

    tap_diag("rows the double adds (the table leaves them open)");
    c = base_call();
    c.stream = (CUstream)(uintptr_t)0x5000;
    row("a stream handle never created", &c, CUDA_ERROR_INVALID_HANDLE, NOIDX);
    c = base_call();
    c.stream = stream2;
    row("a second created stream", &c, OK, NOIDX);
}

/* ---------------------------------------------------- bytes that move */

static unsigned char *host(CUdeviceptr p) { return (unsigned char *)(uintptr_t)p; }

static CUresult batch1(CUDA_MEMCPY3D_BATCH_OP op) { return cu.BatchV2(1, &op, 0, stream); }

static void check_pitched_pointer_copy(void)
{
    /* src rowLength 300, layerHeight 6; dst rowLength 260, layerHeight 5 */
    unsigned char *s = host(dsrc), *d = host(ddst);
    for (size_t i = 0; i < PTR_BYTES; i++)
        s[i] = (unsigned char)(i * 7 + 3);
    memset(d, 0xEE, PTR_BYTES);
    CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(dsrc, 0, 0), ob_ptr(ddst, 0, 0), 256, 4, 2, ORDER_STREAM);
    op.src.op.ptr.rowLength = 300;
    op.src.op.ptr.layerHeight = 6;
    op.dst.op.ptr.rowLength = 260;
    op.dst.op.ptr.layerHeight = 5;
    CUresult r = batch1(op);
    size_t bad = 0, first_bad = SIZE_MAX;
    for (size_t i = 0; i < PTR_BYTES; i++) {
        size_t z = i / (260 * 5), y = i % (260 * 5) / 260, x = i % 260;
        int want = x < 256 && y < 4 && z < 2 ? s[(z * 6 + y) * 300 + x] : 0xEE;
        if (d[i] != want) {
            bad++;
            if (first_bad == SIZE_MAX)
                first_bad = i;
        }
    }
    tap_ok(r == OK && bad == 0, "pitched pointer copy puts every byte where rowLength/layerHeight say and no other");
    if (bad)
        tap_diag("  %zu wrong bytes, first at %zu", bad, first_bad);
}

static void check_array_round_trip(void)
{
    /* float4 array 8x6x3; write box at (1,2,1) of 4x3x2 from a pitched pointer, read all back */
    enum { W = 8, H = 6, D = 3, E = 16, BW = 4, BH = 3, BD = 2, OX = 1, OY = 2, OZ = 1 };
    CUDA_ARRAY3D_DESCRIPTOR desc = { W, H, D, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUarray a = NULL;
    CUresult r0 = cu.Array3DCreate(&a, &desc);
    CUdeviceptr zero, box, out;
    cu.MemAlloc(&zero, W * H * D * E);
    cu.MemAlloc(&box, 5 * 4 * BD * E); /* rowLength 5, layerHeight 4 elements */
    cu.MemAlloc(&out, W * H * D * E);
    memset(host(zero), 0, W * H * D * E);
    for (size_t i = 0; i < 5 * 4 * BD * E; i++)
        host(box)[i] = (unsigned char)(i % 251 + 1);
    memset(host(out), 0xEE, W * H * D * E);

    CUresult r1 = batch1(ob_op(ob_ptr(zero, 0, 0), ob_array(a, 0, 0, 0), W, H, D, ORDER_STREAM));
    CUDA_MEMCPY3D_BATCH_OP in = ob_op(ob_ptr(box, 0, 0), ob_array(a, OX, OY, OZ), BW, BH, BD, ORDER_STREAM);
    in.src.op.ptr.rowLength = 5;
    in.src.op.ptr.layerHeight = 4;
    CUresult r2 = batch1(in);
    CUresult r3 = batch1(ob_op(ob_array(a, 0, 0, 0), ob_ptr(out, 0, 0), W, H, D, ORDER_STREAM));

    size_t bad = 0;
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++) {
                const unsigned char *got = host(out) + ((z * H + y) * W + x) * E;
                unsigned char want[E];
                bool inside = x >= OX && x < OX + BW && y >= OY && y < OY + BH && z >= OZ && z < OZ + BD;
                if (inside)
                    memcpy(want, host(box) + (((z - OZ) * 4 + (y - OY)) * 5 + (x - OX)) * E, E);
                else
                    memset(want, 0, E);
                bad += memcmp(got, want, E) != 0;
            }
    tap_ok(r0 == OK && r1 == OK && r2 == OK && r3 == OK && bad == 0,
           "pointer -> array at an offset and array -> pointer move whole 16-byte elements, x fastest");
    if (bad)
        tap_diag("  %zu wrong elements", bad);

    /* array -> array: box (2,1,0) 5x4x2 of a float array into another at (3,0,1) */
    enum { AW = 16, AH = 8, AD = 3 };
    CUDA_ARRAY3D_DESCRIPTOR fd = { AW, AH, AD, CU_AD_FORMAT_FLOAT, 1, 0 };
    CUarray fa = NULL, fb = NULL;
    cu.Array3DCreate(&fa, &fd);
    cu.Array3DCreate(&fb, &fd);
    CUdeviceptr pat, res;
    cu.MemAlloc(&pat, AW * AH * AD * 4);
    cu.MemAlloc(&res, AW * AH * AD * 4);
    for (size_t i = 0; i < AW * AH * AD; i++)
        ((uint32_t *)host(pat))[i] = (uint32_t)(i + 1);
    memset(host(zero), 0, AW * AH * AD * 4);
    CUresult q1 = batch1(ob_op(ob_ptr(pat, 0, 0), ob_array(fa, 0, 0, 0), AW, AH, AD, ORDER_STREAM));
    CUresult q2 = batch1(ob_op(ob_ptr(zero, 0, 0), ob_array(fb, 0, 0, 0), AW, AH, AD, ORDER_STREAM));
    CUresult q3 = batch1(ob_op(ob_array(fa, 2, 1, 0), ob_array(fb, 3, 0, 1), 5, 4, 2, ORDER_STREAM));
    CUresult q4 = batch1(ob_op(ob_array(fb, 0, 0, 0), ob_ptr(res, 0, 0), AW, AH, AD, ORDER_STREAM));
    bad = 0;
    for (size_t z = 0; z < AD; z++)
        for (size_t y = 0; y < AH; y++)
            for (size_t x = 0; x < AW; x++) {
                uint32_t got = ((uint32_t *)host(res))[(z * AH + y) * AW + x];
                uint32_t want = 0;
                if (x >= 3 && x < 8 && y < 4 && z >= 1 && z < 3)
                    want = (uint32_t)(((z - 1) * AH + (y + 1)) * AW + (x - 3 + 2) + 1);
                bad += got != want;
            }
    tap_ok(q1 == OK && q2 == OK && q3 == OK && q4 == OK && bad == 0,
           "array -> array copies the box from the source offset to the destination offset");
    if (bad)
        tap_diag("  %zu wrong elements", bad);

    tap_ok(cu.ArrayDestroy(a) == OK && cu.ArrayDestroy(fa) == OK && cu.ArrayDestroy(fb) == OK,
           "cuArrayDestroy releases the arrays");
    tap_is_u64(cu.ArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE, "cuArrayDestroy of a destroyed array is INVALID_HANDLE");
    cu.MemFree(zero);
    cu.MemFree(box);
    cu.MemFree(out);
    cu.MemFree(pat);
    cu.MemFree(res);
}

static void check_rejected_batch_copies_nothing(void)
{
    memset(host(dsrc), 0x5A, PTR_BYTES);
    memset(host(ddst), 0xEE, PTR_BYTES);
    struct call c = base_call();
    c.n = 3;
    c.ops[1].dst.op.ptr.ptr = ddst + 4096;
    c.ops[2].flags = 0x80;
    for (int a = 0; a < API_COUNT; a++) {
        size_t idx;
        CUresult r = call_api((enum api)a, c.n, c.ops, 0, stream, &idx);
        size_t touched = 0;
        for (size_t i = 0; i < PTR_BYTES; i++)
            touched += host(ddst)[i] != 0xEE;
        tap_ok(r == IV && touched == 0, "a batch rejected for its third op copies nothing, not even ops 0 and 1 (%s)",
               api_names[a]);
        if (touched)
            tap_diag("  %zu bytes written", touched);
    }
    CUresult r = cu.BatchV2(2, c.ops, 0, stream);
    size_t copied = 0;
    for (size_t i = 0; i < PTR_BYTES; i++)
        copied += host(ddst)[i] == 0x5A;
    tap_ok(r == OK && copied == 4096, "the same two good ops alone copy their 2 x 2048 bytes");
}

static void check_call_counter(void)
{
    cu.reset_counts();
    tap_is_u64(cu.batch_calls(), 0, "fakecuda_reset_counts zeroes the batch call counter");
    struct call c = base_call();
    size_t idx;
    for (int a = 0; a < API_COUNT; a++)
        call_api((enum api)a, 1, c.ops, 0, stream, &idx);
    call_api(API_V2, 0, c.ops, 0, stream, &idx);
    call_api(API_V1, 1, c.ops, 0, NULL, &idx);
    c.ops[0].extent.depth = 0;
    call_api(API_V2_PTSZ, 1, c.ops, 0, stream, &idx);
    tap_is_u64(cu.batch_calls(), 7, "fakecuda_batch_calls counts calls to all four entry points, rejected ones too");
}

/* The H200 crashes on an unmapped host source; the double must too, so that
 * tests show only the shim's strict mode saves the process. */
static void check_unmapped_source_crashes(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit no_core = { 0, 0 };
        setrlimit(RLIMIT_CORE, &no_core);
        struct call c = base_call();
        c.ops[0].src.op.ptr.ptr = 0xdead0000;
        CUresult r = cu.BatchV2(1, c.ops, 0, stream);
        _exit(r == OK ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
           "table row 'src ptr = 0xdead0000 (unmapped host address)': the process dies of SIGSEGV");
    if (!WIFSIGNALED(st))
        tap_diag("  child exited with status %d", WEXITSTATUS(st));
    else if (WTERMSIG(st) != SIGSEGV)
        tap_diag("  child killed by signal %d", WTERMSIG(st));
}

/* ------------------------------------------------------ cuGetProcAddress */

/*
 * An interposer, as the shim is: this program is linked with -export-dynamic,
 * so this definition is first in the global scope and would win any lookup
 * the double made of its own exported name.  cuGetProcAddress must still hand
 * out the double's function, or the shim would be given its own wrapper back
 * and recurse.
 */
#define INTERPOSED_RESULT ((CUresult)999)
__attribute__((visibility("default"), noinline)) CUresult cuMemcpy3DBatchAsync_v2(size_t numOps,
                                                                                    CUDA_MEMCPY3D_BATCH_OP *opList,
                                                                                    unsigned long long flags,
                                                                                    CUstream hStream)
{
    return INTERPOSED_RESULT;
}

static void proc(const char *sym, int ver, cuuint64_t flags, const char *want_sym, CUresult want_r,
                 CUdriverProcAddressQueryResult want_status)
{
    void *fn = (void *)1, *want = want_sym ? dlsym(lib, want_sym) : NULL;
    CUdriverProcAddressQueryResult status = (CUdriverProcAddressQueryResult)77;
    CUresult r = cu.GetProcAddress5(sym, &fn, ver, flags, &status);
    bool ok = r == want_r && status == want_status && fn == want && (!want_sym || want);
    tap_ok(ok, "cuGetProcAddress_v2(\"%s\", %d, %llu) -> %s, status %d, %s", sym, ver, (unsigned long long)flags,
           errname(want_r), (int)want_status, want_sym ? want_sym : "NULL");
    if (!ok)
        tap_diag("  got %s, status %d, %p (want %p)", errname(r), (int)status, fn, want);
}

static void check_get_proc_address(void)
{
    /* not handed out: CUDA_SUCCESS with NULL, symbolStatus saying why, as the
     * 13.0 driver answers (measured: docs/gpu-results.md) */
    const CUresult NF = CUDA_SUCCESS;
    const CUdriverProcAddressQueryResult S = CU_GET_PROC_ADDRESS_SUCCESS,
                                         VNS = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
                                         SNF = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    proc("cuMemcpy3DBatchAsync", 13000, 0, "cuMemcpy3DBatchAsync_v2", OK, S);
    proc("cuMemcpy3DBatchAsync", 13000, 1, "cuMemcpy3DBatchAsync_v2", OK, S);
    proc("cuMemcpy3DBatchAsync", 13000, 2, "cuMemcpy3DBatchAsync_v2_ptsz", OK, S);
    proc("cuMemcpy3DBatchAsync", 13020, 0, "cuMemcpy3DBatchAsync_v2", OK, S);
    proc("cuMemcpy3DBatchAsync", 12080, 0, "cuMemcpy3DBatchAsync", OK, S);
    proc("cuMemcpy3DBatchAsync", 12090, 0, "cuMemcpy3DBatchAsync", OK, S);
    proc("cuMemcpy3DBatchAsync", 12080, 1, "cuMemcpy3DBatchAsync", OK, S);
    proc("cuMemcpy3DBatchAsync", 12080, 2, "cuMemcpy3DBatchAsync_ptsz", OK, S);
    proc("cuMemcpy3DBatchAsync", 12000, 0, NULL, NF, VNS);
    proc("cuMemcpy3DBatchAsync", 12070, 2, NULL, NF, VNS);
    /* The 1D batch, cuMemcpyBatchAsync: the same versions (tests/gpu/clients/gpa_table.c). */
    proc("cuMemcpyBatchAsync", 13000, 0, "cuMemcpyBatchAsync_v2", OK, S);
    proc("cuMemcpyBatchAsync", 13000, 1, "cuMemcpyBatchAsync_v2", OK, S);
    proc("cuMemcpyBatchAsync", 13000, 2, "cuMemcpyBatchAsync_v2_ptsz", OK, S);
    proc("cuMemcpyBatchAsync", 12080, 0, "cuMemcpyBatchAsync", OK, S);
    proc("cuMemcpyBatchAsync", 12090, 0, "cuMemcpyBatchAsync", OK, S);
    proc("cuMemcpyBatchAsync", 12080, 1, "cuMemcpyBatchAsync", OK, S);
    proc("cuMemcpyBatchAsync", 12080, 2, "cuMemcpyBatchAsync_ptsz", OK, S);
    proc("cuMemcpyBatchAsync", 12000, 0, NULL, NF, VNS);
    proc("cuMemcpyBatchAsync_v2", 13000, 0, NULL, NF, SNF);
    proc("cuGetProcAddress", 11030, 0, "cuGetProcAddress", OK, S);
    proc("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2", OK, S);
    proc("cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2", OK, S);
    proc("cuMemAlloc", 13000, 0, "cuMemAlloc_v2", OK, S);
    proc("cuMemAlloc", 13000, 2, "cuMemAlloc_v2", OK, S);
    proc("cuStreamGetId", 13000, 0, "cuStreamGetId", OK, S);
    proc("cuStreamGetId", 13000, 2, "cuStreamGetId_ptsz", OK, S);
    proc("cuStreamIsCapturing", 13000, 2, "cuStreamIsCapturing_ptsz", OK, S);
    proc("cuStreamGetCtx", 9020, 0, "cuStreamGetCtx", OK, S);
    proc("cuStreamGetCtx", 13000, 0, "cuStreamGetCtx_v2", OK, S);
    proc("cuCtxGetDevice", 12000, 0, "cuCtxGetDevice", OK, S);
    proc("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2", OK, S);
    proc("cuCtxCreate", 13000, 0, "cuCtxCreate_v4", OK, S);
    proc("cuPointerGetAttributes", 13000, 0, "cuPointerGetAttributes", OK, S);
    proc("cuNoSuchFunction", 13000, 0, NULL, NF, SNF);
    proc("cuMemcpy3DBatchAsync_v2", 13000, 0, NULL, NF, SNF);

    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = cu.GetProcAddress5("cuMemcpy3DBatchAsync", &fn, 13000, 0, &st);
    tap_ok(r == OK && fn == (void *)cu.BatchV2 && fn != (void *)&cuMemcpy3DBatchAsync_v2 &&
               ((PFN_cuMemcpy3DBatchAsync_v13000)fn)(0, NULL, 0, stream) == IV,
           "with cuMemcpy3DBatchAsync_v2 interposed, cuGetProcAddress_v2 still hands out the double's own");

    fn = NULL;
    r = cu.GetProcAddress4("cuMemcpy3DBatchAsync", &fn, 13000, 2);
    tap_ok(r == OK && fn == dlsym(lib, "cuMemcpy3DBatchAsync_v2_ptsz"),
           "the 4-argument cuGetProcAddress resolves the same table");
    fn = (void *)1;
    r = cu.GetProcAddress4("cuMemcpy3DBatchAsync", &fn, 12000, 0);
    tap_ok(r == CUDA_ERROR_NOT_FOUND && fn == (void *)1,
           "the 4-argument cuGetProcAddress answers a too-old version with NOT_FOUND, the pointer not written");
}

/* --------------------------------------------- pointers, streams, devices */

static void check_pointers_and_streams(void)
{
    unsigned int mt = 99;
    bool managed_flag = true;
    int ordinal = -1;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUcontext pctx = NULL;

    tap_ok(cu.PointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dsrc + 100) == OK &&
               mt == CU_MEMORYTYPE_DEVICE,
           "an interior device pointer has MEMORY_TYPE DEVICE");
    tap_ok(cu.PointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, dsrc + 100) == OK && start == dsrc &&
               cu.PointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, dsrc + 100) == OK && size == PTR_BYTES,
           "an interior device pointer resolves to its allocation's start and size");
    tap_ok(cu.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dsrc) == OK && ordinal == 0 &&
               cu.PointerGetAttribute(&pctx, CU_POINTER_ATTRIBUTE_CONTEXT, dsrc) == OK && pctx == ctx0,
           "a device pointer carries the device and context current at allocation");
    mt = 99;
    tap_ok(cu.PointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pinned + 5) == OK &&
               mt == CU_MEMORYTYPE_HOST,
           "pinned host memory has MEMORY_TYPE HOST");
    mt = 99;
    managed_flag = false;
    tap_ok(cu.PointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, managed) == OK &&
               mt == CU_MEMORYTYPE_DEVICE &&
               cu.PointerGetAttribute(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed) == OK && managed_flag,
           "managed memory has MEMORY_TYPE DEVICE and IS_MANAGED");
    tap_is_u64(cu.PointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pageable),
               IV, "cuPointerGetAttribute on pageable memory is INVALID_VALUE");

    CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                     CU_POINTER_ATTRIBUTE_RANGE_SIZE };
    mt = 99;
    managed_flag = true;
    size = 99;
    void *data[3] = { &mt, &managed_flag, &size };
    tap_ok(cu.PointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)pageable) == OK && mt == 0 &&
               !managed_flag && size == 0,
           "cuPointerGetAttributes on pageable memory succeeds with memory type 0 and zeroes");
    tap_ok(cu.PointerGetAttributes(3, attrs, data, dbig + 12345) == OK && mt == CU_MEMORYTYPE_DEVICE &&
               !managed_flag && size == (64u << 20),
           "cuPointerGetAttributes on an interior device pointer");

    CUdeviceptr base = 0;
    size = 0;
    tap_ok(cu.MemGetAddressRange(&base, &size, dbig + (3u << 20)) == OK && base == dbig && size == (64u << 20),
           "cuMemGetAddressRange maps an interior pointer to its allocation");
    tap_is_u64(cu.MemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)pageable), CUDA_ERROR_NOT_FOUND,
               "cuMemGetAddressRange on memory the driver does not know is NOT_FOUND");

    unsigned long long id1 = 0, id2 = 0, idl = 0, idp = 0;
    tap_ok(cu.StreamGetId(stream, &id1) == OK && cu.StreamGetId(stream2, &id2) == OK && id1 != id2 &&
               cu.StreamGetId(CU_STREAM_LEGACY, &idl) == OK && cu.StreamGetId(CU_STREAM_PER_THREAD, &idp) == OK &&
               idl != idp && idl != id1 && idp != id1 && idl != id2 && idp != id2,
           "cuStreamGetId gives distinct ids to created and special streams");
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    tap_ok(cu.StreamIsCapturing(stream, &cs) == OK && cs == CU_STREAM_CAPTURE_STATUS_NONE,
           "cuStreamIsCapturing is NONE");
    cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    tap_ok(cu.StreamIsCapturing(CU_STREAM_PER_THREAD, &cs) == OK && cs == CU_STREAM_CAPTURE_STATUS_NONE,
           "cuStreamIsCapturing works on CU_STREAM_PER_THREAD");
    pctx = NULL;
    tap_ok(cu.StreamGetCtx(stream, &pctx) == OK && pctx == ctx0, "cuStreamGetCtx gives the stream's context");
    pctx = NULL;
    tap_ok(cu.StreamGetCtx(CU_STREAM_LEGACY, &pctx) == OK && pctx == ctx0,
           "cuStreamGetCtx on CU_STREAM_LEGACY gives the current context");
}

/*
 * FAKECUDA_DEVICE_COUNT is read once per process, and a forked child shares
 * the parent's already-initialised copy: so the test runs itself again.
 * Returns the exit status main() passes on; codes say which step failed.
 */
static int device_count_child(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 10;
    PFN_cuDeviceGetCount_v2000 count = (PFN_cuDeviceGetCount_v2000)dlsym(h, "cuDeviceGetCount");
    PFN_cuDeviceGet_v2000 get = (PFN_cuDeviceGet_v2000)dlsym(h, "cuDeviceGet");
    PFN_cuDevicePrimaryCtxRetain_v7000 retain = (PFN_cuDevicePrimaryCtxRetain_v7000)dlsym(h, "cuDevicePrimaryCtxRetain");
    PFN_cuCtxSetCurrent_v4000 set = (PFN_cuCtxSetCurrent_v4000)dlsym(h, "cuCtxSetCurrent");
    PFN_cuMemAlloc_v3020 alloc = (PFN_cuMemAlloc_v3020)dlsym(h, "cuMemAlloc_v2");
    PFN_cuPointerGetAttribute_v4000 attr = (PFN_cuPointerGetAttribute_v4000)dlsym(h, "cuPointerGetAttribute");
    int n = 0, ord = -1;
    CUdevice dev;
    CUcontext c;
    CUdeviceptr p;
    if (count(&n) != OK || n != 3)
        return 11;
    if (get(&dev, 3) != CUDA_ERROR_INVALID_DEVICE || get(&dev, 2) != OK)
        return 12;
    if (alloc(&p, 64) != CUDA_ERROR_INVALID_CONTEXT)
        return 13;
    if (retain(&c, dev) != OK || set(c) != OK || alloc(&p, 64) != OK)
        return 14;
    if (attr(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) != OK || ord != 2)
        return 15;
    return 0;
}

static void check_device_count_env(const char *argv0)
{
    /* argv[0] when it is a path (it still names this program under valgrind) */
    const char *self = strchr(argv0, '/') ? argv0 : "/proc/self/exe";
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("FAKECUDA_DEVICE_COUNT", "3", 1);
        execl(self, self, "--device-count-child", (char *)NULL);
        _exit(9);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "FAKECUDA_DEVICE_COUNT=3 gives 3 devices; memory belongs to the current context's device; "
           "no context, no allocation");
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        tap_diag("  child status 0x%x (exit codes: 9 exec, 10 dlopen, 11 count, 12 cuDeviceGet, "
                 "13 no-context alloc, 14 ctx, 15 ordinal)",
                 st);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    char path[4096];
    const char *dir = getenv("CBT_FAKECUDA_DIR");
    snprintf(path, sizeof path, "%s/libcuda.so.1", dir && *dir ? dir : "tests/fakecuda/lib");
    if (argc > 1 && !strcmp(argv[1], "--device-count-child"))
        return device_count_child(path);

    if (!tap_ok(load(path), "the fake driver loads from %s and exports what the test needs", path))
        return tap_done();

    int ver = 0;
    CUdevice dev = -1;
    PFN_cuDriverGetVersion_v2020 get_version = (PFN_cuDriverGetVersion_v2020)dlsym(lib, "cuDriverGetVersion");
    tap_ok(get_version && get_version(&ver) == OK && ver == 13050, "cuDriverGetVersion reports 13050");
    tap_ok(cu.Init(0) == OK && cu.DeviceGet(&dev, 0) == OK && cu.PrimaryCtxRetain(&ctx0, dev) == OK &&
               cu.CtxSetCurrent(ctx0) == OK,
           "cuInit, device 0, its primary context made current");
    CUDA_ARRAY3D_DESCRIPTOR f4 = { 64, 64, 4, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUDA_ARRAY3D_DESCRIPTOR u8 = { 64, 64, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
    CUDA_ARRAY3D_DESCRIPTOR f1 = { 64, 64, 4, CU_AD_FORMAT_FLOAT, 1, 0 };
    bool setup = cu.StreamCreate(&stream, 0) == OK && cu.StreamCreate(&stream2, 0) == OK &&
                 cu.MemAlloc(&dsrc, PTR_BYTES) == OK && cu.MemAlloc(&ddst, PTR_BYTES) == OK &&
                 cu.MemAlloc(&dbig, 64u << 20) == OK && cu.MemAlloc(&dlin, 2 * 64 * 64 * 4 * 16) == OK &&
                 cu.MemAllocHost(&pinned, PTR_BYTES) == OK &&
                 cu.MemAllocManaged(&managed, PTR_BYTES, CU_MEM_ATTACH_GLOBAL) == OK &&
                 (pageable = calloc(1, PTR_BYTES)) != NULL && cu.Array3DCreate(&arr_f4, &f4) == OK &&
                 cu.Array3DCreate(&arr_u8, &u8) == OK && cu.Array3DCreate(&arr_f1a, &f1) == OK &&
                 cu.Array3DCreate(&arr_f1b, &f1) == OK;
    if (!tap_ok(setup, "streams, device/pinned/managed/pageable buffers and four arrays are created"))
        return tap_done();

    walk_table();
    check_unmapped_source_crashes();
    check_pitched_pointer_copy();
    check_array_round_trip();
    check_rejected_batch_copies_nothing();
    check_call_counter();
    check_get_proc_address();
    check_pointers_and_streams();
    check_device_count_env(argv[0]);

    return tap_done();
}
