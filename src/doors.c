/* SPDX-License-Identifier: MIT */
/*
 * The doors: every way a program reaches cuMemcpy3DBatchAsync and
 * cuMemcpyBatchAsync, their CUDA 13.2 single-op forms
 * (cuMemcpy3DWithAttributesAsync, cuMemcpyWithAttributesAsync) and the CUDA
 * 13.5 cuFabricCpyBatchAsync.  Each one is a thin function that names its
 * API variant and door and hands over to cbt_batch(), cbt_batch1d(),
 * cbt_copy1d() or cbt_fabric(), after the one check that lets a call nobody
 * listens to go straight to the driver (DOOR_* below).
 *
 *   symbol          the fourteen exported functions (direct link, dlsym)
 *   getprocaddress  the wrappers cuGetProcAddress(_v2) hands out
 *   binding         memcpy_3d_batch_async_v2() and memcpy_batch_async_v2(),
 *                   the binding-shaped entries
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include <cubatchtrace/cuda13x.h>

#include "batch.h"
#include "graph.h"
#include "memwrap.h"
#include "settings.h"
#include "tp.h"

#define CALLER() __builtin_return_address(0)

/* Forward to the real driver's exported function of that variant. */
#define REAL(api) (cbt_real()->batch[api])
/* Forward to what the program's call would have reached without the shim:
 * the next definition of the exported name (src/driver.c). */
#define NEXT(api) (cbt_real()->next_batch[api])

/*
 * The body of every door: straight to the driver when nobody listens
 * (cbt_quiet: two flags and the batch event's tracepoint state), else the
 * common path.  This check is the only logic a door holds.
 * Kept in the door so the quiet case costs no call with nine arguments.
 */
#define DOOR_V2(api, door, fn_expr, n, ops, flags, s)                                       \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet()))                             \
            return ((cbt_batch_v2_fn)fn_)(n, ops, flags, s);                                \
        return cbt_batch(api, door, fn_, n, ops, NULL, flags, s, CALLER());                 \
    } while (0)
#define DOOR_V1(api, door, fn_expr, n, ops, fail, flags, s)                                 \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet()))                             \
            return ((cbt_batch_v1_fn)fn_)(n, ops, fail, flags, s);                          \
        return cbt_batch(api, door, fn_, n, ops, fail, flags, s, CALLER());                 \
    } while (0)

#define DOOR1D_V2(api, door, fn_expr, d, s_, z, n, a, ai, na, st)                            \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet1d()))                           \
            return ((cbt_batch1d_v2_fn)fn_)(d, s_, z, n, a, ai, na, st);                    \
        return cbt_batch1d(api, door, fn_, d, s_, z, n, a, ai, na, NULL, st, CALLER());     \
    } while (0)
#define DOOR1D_V1(api, door, fn_expr, d, s_, z, n, a, ai, na, fail, st)                      \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet1d()))                           \
            return ((cbt_batch1d_v1_fn)fn_)(d, s_, z, n, a, ai, na, fail, st);              \
        return cbt_batch1d(api, door, fn_, d, s_, z, n, a, ai, na, fail, st, CALLER());     \
    } while (0)

/* The single-op forms: one op (copy) as a batch of one. */
#define DOOR_ONE3D(api, door, fn_expr, op, flags, s)                                        \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet()))                             \
            return ((cbt_one3d_fn)fn_)(op, flags, s);                                       \
        return cbt_batch(api, door, fn_, 1, op, NULL, flags, s, CALLER());                  \
    } while (0)
#define DOOR_ONE1D(api, door, fn_expr, dst, src, size, attr, s)                             \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet1d()))                           \
            return ((cbt_one1d_fn)fn_)(dst, src, size, attr, s);                            \
        return cbt_copy1d(api, door, fn_, dst, src, size, attr, s, CALLER());               \
    } while (0)
#define DOOR_FABRIC(api, door, fn_expr, n, ops, flags, s)                                   \
    do {                                                                                    \
        void *fn_ = (fn_expr);                                                              \
        if (cbt_likely(fn_ != NULL) && cbt_likely(cbt_quiet_fabric()))                      \
            return ((cbt_fabric_fn)fn_)(n, ops, flags, s);                                  \
        return cbt_fabric(api, door, fn_, n, ops, flags, s, CALLER());                      \
    } while (0)

/* The parameter lists of the 1D batch, CUDA 13 and CUDA 12.8. */
#define P1D CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, \
            size_t *attrsIdxs, size_t numAttrs
#define A1D dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs
/* Expands A1D before the door macro counts its arguments. */
#define EXPAND(m, ...) m(__VA_ARGS__)

/* ---- door "symbol" ---- */

/*
 * The exported batch functions, which direct links bind.  They forward to
 * the next definition of their name (another interposer loaded after the
 * shim, or the program's libcuda).  dlsym on the driver hands out the
 * dlsym_* functions below instead, which forward to exactly the driver's
 * function the lookup found.
 */
CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                            unsigned long long flags, CUstream hStream)
{
    DOOR_V2(CBT_API_V2, CBT_DOOR_SYMBOL, NEXT(CBT_API_V2), numOps, opList, flags, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                                 unsigned long long flags, CUstream hStream)
{
    DOOR_V2(CBT_API_V2_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_V2_PTSZ), numOps, opList, flags, hStream);
}

/* The CUDA 12.8 ABI (cuda.h 13 no longer declares it). */
CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                         unsigned long long flags, CUstream hStream)
{
    DOOR_V1(CBT_API_V1, CBT_DOOR_SYMBOL, NEXT(CBT_API_V1), numOps, opList, failIdx, flags, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                              unsigned long long flags, CUstream hStream)
{
    DOOR_V1(CBT_API_V1_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_V1_PTSZ), numOps, opList, failIdx, flags, hStream);
}

static CUresult dlsym_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_V2(CBT_API_V2, CBT_DOOR_SYMBOL, REAL(CBT_API_V2), n, ops, flags, s);
}

static CUresult dlsym_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_V2(CBT_API_V2_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_V2_PTSZ), n, ops, flags, s);
}

static CUresult dlsym_v1(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long flags, CUstream s)
{
    DOOR_V1(CBT_API_V1, CBT_DOOR_SYMBOL, REAL(CBT_API_V1), n, ops, fail, flags, s);
}

static CUresult dlsym_v1_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long flags,
                              CUstream s)
{
    DOOR_V1(CBT_API_V1_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_V1_PTSZ), n, ops, fail, flags, s);
}

/* The 1D batch (cuMemcpyBatchAsync), in the same four variants. */
CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyBatchAsync_v2(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_V2), A1D, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyBatchAsync_v2_ptsz(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_V2_PTSZ), A1D, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyBatchAsync(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_V1), A1D, failIdx, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyBatchAsync_ptsz(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_V1_PTSZ), A1D, failIdx, hStream);
}

static CUresult dlsym_1d_v2(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_V2), A1D, hStream);
}

static CUresult dlsym_1d_v2_ptsz(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_V2_PTSZ), A1D, hStream);
}

static CUresult dlsym_1d_v1(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_V1), A1D, failIdx, hStream);
}

static CUresult dlsym_1d_v1_ptsz(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_V1_PTSZ), A1D, failIdx, hStream);
}

/* The CUDA 13.2 single-op forms and the CUDA 13.5 fabric batch, each with
 * its per-thread-stream variant.  On a driver that lacks them, NEXT() and
 * REAL() are NULL and the door answers as no driver would
 * (CUDA_ERROR_SHARED_OBJECT_INIT_FAILED); dlsym never hands them out there
 * (cbt_dlsym_hook), so only a program linked against a newer libcuda than
 * it runs with calls them. */
CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags,
                                                             CUstream hStream)
{
    DOOR_ONE3D(CBT_API_3D_ONE, CBT_DOOR_SYMBOL, NEXT(CBT_API_3D_ONE), op, flags, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpy3DWithAttributesAsync_ptsz(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags,
                                                                  CUstream hStream)
{
    DOOR_ONE3D(CBT_API_3D_ONE_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_3D_ONE_PTSZ), op, flags, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                                           CUmemcpyAttributes *attr, CUstream hStream)
{
    DOOR_ONE1D(CBT_API_1D_ONE, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_ONE), dst, src, size, attr, hStream);
}

CBT_HOT_FN CBT_EXPORT CUresult cuMemcpyWithAttributesAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                                                CUmemcpyAttributes *attr, CUstream hStream)
{
    DOOR_ONE1D(CBT_API_1D_ONE_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_1D_ONE_PTSZ), dst, src, size, attr, hStream);
}

CBT_EXPORT CUresult cuFabricCpyBatchAsync(size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList, unsigned long long flags,
                                          CUstream hStream)
{
    DOOR_FABRIC(CBT_API_FABRIC, CBT_DOOR_SYMBOL, NEXT(CBT_API_FABRIC), numOps, opList, flags, hStream);
}

CBT_EXPORT CUresult cuFabricCpyBatchAsync_ptsz(size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList,
                                               unsigned long long flags, CUstream hStream)
{
    DOOR_FABRIC(CBT_API_FABRIC_PTSZ, CBT_DOOR_SYMBOL, NEXT(CBT_API_FABRIC_PTSZ), numOps, opList, flags, hStream);
}

static CUresult dlsym_3d_one(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream s)
{
    DOOR_ONE3D(CBT_API_3D_ONE, CBT_DOOR_SYMBOL, REAL(CBT_API_3D_ONE), op, flags, s);
}

static CUresult dlsym_3d_one_ptsz(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream s)
{
    DOOR_ONE3D(CBT_API_3D_ONE_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_3D_ONE_PTSZ), op, flags, s);
}

static CUresult dlsym_1d_one(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream s)
{
    DOOR_ONE1D(CBT_API_1D_ONE, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_ONE), dst, src, size, attr, s);
}

static CUresult dlsym_1d_one_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream s)
{
    DOOR_ONE1D(CBT_API_1D_ONE_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_1D_ONE_PTSZ), dst, src, size, attr, s);
}

static CUresult dlsym_fabric(size_t n, CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_FABRIC(CBT_API_FABRIC, CBT_DOOR_SYMBOL, REAL(CBT_API_FABRIC), n, ops, flags, s);
}

static CUresult dlsym_fabric_ptsz(size_t n, CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_FABRIC(CBT_API_FABRIC_PTSZ, CBT_DOOR_SYMBOL, REAL(CBT_API_FABRIC_PTSZ), n, ops, flags, s);
}

/* ---- door "binding" ---- */

/*
 * The binding-shaped entry of cuda.bindings' memcpy_3d_batch_async_v2:
 * integers for the op list and the stream, so any FFI (ctypes, cffi, Julia,
 * Rust) can call it.  Validates, records and forwards to
 * cuMemcpy3DBatchAsync_v2; returns the CUresult.
 */
CBT_EXPORT CUresult memcpy_3d_batch_async_v2(size_t num_ops, intptr_t op_list, unsigned long long flags,
                                             intptr_t h_stream)
{
    DOOR_V2(CBT_API_V2, CBT_DOOR_BINDING, NEXT(CBT_API_V2), num_ops, (CUDA_MEMCPY3D_BATCH_OP *)op_list, flags,
            (CUstream)h_stream);
}

/*
 * The binding-shaped entry of cuda.bindings' memcpy_batch_async_v2 (the 1D
 * batch): integers for the arrays and the stream.  Forwards to
 * cuMemcpyBatchAsync_v2.
 */
CBT_EXPORT CUresult memcpy_batch_async_v2(intptr_t dsts, intptr_t srcs, intptr_t sizes, size_t count, intptr_t attrs,
                                          intptr_t attrs_idxs, size_t num_attrs, intptr_t h_stream)
{
    DOOR1D_V2(CBT_API_1D_V2, CBT_DOOR_BINDING, NEXT(CBT_API_1D_V2), (CUdeviceptr *)dsts, (CUdeviceptr *)srcs,
              (size_t *)sizes, count, (CUmemcpyAttributes *)attrs, (size_t *)attrs_idxs, num_attrs,
              (CUstream)h_stream);
}

/* ---- door "getprocaddress" ---- */

/*
 * The pointer the driver handed out for each variant.  It is the exported
 * symbol on the drivers measured, but the wrappers call what the driver
 * handed out, so a driver that answers with another address is still
 * forwarded to exactly what the caller would have called.
 */
static void *gpa_target[CBT_API_COUNT_];

static void *gpa_fn(enum cbt_api api)
{
    void *p = __atomic_load_n(&gpa_target[api], __ATOMIC_ACQUIRE);
    return p ? p : REAL(api);
}

static CUresult gpa_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_V2(CBT_API_V2, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_V2), n, ops, flags, s);
}

static CUresult gpa_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_V2(CBT_API_V2_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_V2_PTSZ), n, ops, flags, s);
}

static CUresult gpa_v1(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long flags, CUstream s)
{
    DOOR_V1(CBT_API_V1, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_V1), n, ops, fail, flags, s);
}

static CUresult gpa_v1_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long flags,
                            CUstream s)
{
    DOOR_V1(CBT_API_V1_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_V1_PTSZ), n, ops, fail, flags, s);
}

static CUresult gpa_1d_v2(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_V2), A1D, hStream);
}

static CUresult gpa_1d_v2_ptsz(P1D, CUstream hStream)
{
    EXPAND(DOOR1D_V2, CBT_API_1D_V2_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_V2_PTSZ), A1D, hStream);
}

static CUresult gpa_1d_v1(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_V1), A1D, failIdx, hStream);
}

static CUresult gpa_1d_v1_ptsz(P1D, size_t *failIdx, CUstream hStream)
{
    EXPAND(DOOR1D_V1, CBT_API_1D_V1_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_V1_PTSZ), A1D, failIdx, hStream);
}

static CUresult gpa_3d_one(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream s)
{
    DOOR_ONE3D(CBT_API_3D_ONE, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_3D_ONE), op, flags, s);
}

static CUresult gpa_3d_one_ptsz(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream s)
{
    DOOR_ONE3D(CBT_API_3D_ONE_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_3D_ONE_PTSZ), op, flags, s);
}

static CUresult gpa_1d_one(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream s)
{
    DOOR_ONE1D(CBT_API_1D_ONE, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_ONE), dst, src, size, attr, s);
}

static CUresult gpa_1d_one_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream s)
{
    DOOR_ONE1D(CBT_API_1D_ONE_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_1D_ONE_PTSZ), dst, src, size, attr, s);
}

static CUresult gpa_fabric(size_t n, CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_FABRIC(CBT_API_FABRIC, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_FABRIC), n, ops, flags, s);
}

static CUresult gpa_fabric_ptsz(size_t n, CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    DOOR_FABRIC(CBT_API_FABRIC_PTSZ, CBT_DOOR_GETPROCADDRESS, gpa_fn(CBT_API_FABRIC_PTSZ), n, ops, flags, s);
}

static void *const gpa_wrapper[CBT_API_COUNT_] = {
    [CBT_API_V2] = (void *)gpa_v2,
    [CBT_API_V2_PTSZ] = (void *)gpa_v2_ptsz,
    [CBT_API_V1] = (void *)gpa_v1,
    [CBT_API_V1_PTSZ] = (void *)gpa_v1_ptsz,
    [CBT_API_1D_V2] = (void *)gpa_1d_v2,
    [CBT_API_1D_V2_PTSZ] = (void *)gpa_1d_v2_ptsz,
    [CBT_API_1D_V1] = (void *)gpa_1d_v1,
    [CBT_API_1D_V1_PTSZ] = (void *)gpa_1d_v1_ptsz,
    [CBT_API_3D_ONE] = (void *)gpa_3d_one,
    [CBT_API_3D_ONE_PTSZ] = (void *)gpa_3d_one_ptsz,
    [CBT_API_1D_ONE] = (void *)gpa_1d_one,
    [CBT_API_1D_ONE_PTSZ] = (void *)gpa_1d_one_ptsz,
    [CBT_API_FABRIC] = (void *)gpa_fabric,
    [CBT_API_FABRIC_PTSZ] = (void *)gpa_fabric_ptsz,
};

/* What dlsym on the driver hands out.  Static functions: their addresses are
 * the shim's own, whatever library's definition the exported names bind to. */
static void *const dlsym_door[CBT_API_COUNT_] = {
    [CBT_API_V2] = (void *)dlsym_v2,
    [CBT_API_V2_PTSZ] = (void *)dlsym_v2_ptsz,
    [CBT_API_V1] = (void *)dlsym_v1,
    [CBT_API_V1_PTSZ] = (void *)dlsym_v1_ptsz,
    [CBT_API_1D_V2] = (void *)dlsym_1d_v2,
    [CBT_API_1D_V2_PTSZ] = (void *)dlsym_1d_v2_ptsz,
    [CBT_API_1D_V1] = (void *)dlsym_1d_v1,
    [CBT_API_1D_V1_PTSZ] = (void *)dlsym_1d_v1_ptsz,
    [CBT_API_3D_ONE] = (void *)dlsym_3d_one,
    [CBT_API_3D_ONE_PTSZ] = (void *)dlsym_3d_one_ptsz,
    [CBT_API_1D_ONE] = (void *)dlsym_1d_one,
    [CBT_API_1D_ONE_PTSZ] = (void *)dlsym_1d_one_ptsz,
    [CBT_API_FABRIC] = (void *)dlsym_fabric,
    [CBT_API_FABRIC_PTSZ] = (void *)dlsym_fabric_ptsz,
};

static CUresult handed_gpa4(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
static CUresult handed_gpa5(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *symbolStatus);

static void trace_lookup(const char *via, const char *symbol, int version, cuuint64_t flags, int api, void *ip);

/*
 * The variant a cuGetProcAddress request names: the batch calls by the
 * version asked for (13000 on: the CUDA 13 ABI), the single-op and fabric
 * calls by name alone (one ABI each); the per-thread-stream flag picks the
 * _ptsz variant.  -1: a name the shim does not hook.  Which versions the
 * driver hands them out at is the driver's answer, not decided here.
 */
static int gpa_api(const char *symbol, int version, cuuint64_t flags)
{
    static const struct {
        const char *name;
        enum cbt_api v2, v1; /* v1: below 13000 */
    } names[] = {
        {"cuMemcpy3DBatchAsync", CBT_API_V2, CBT_API_V1},
        {"cuMemcpyBatchAsync", CBT_API_1D_V2, CBT_API_1D_V1},
        {"cuMemcpy3DWithAttributesAsync", CBT_API_3D_ONE, CBT_API_3D_ONE},
        {"cuMemcpyWithAttributesAsync", CBT_API_1D_ONE, CBT_API_1D_ONE},
        {"cuFabricCpyBatchAsync", CBT_API_FABRIC, CBT_API_FABRIC},
    };
    if (!symbol || symbol[0] != 'c' || symbol[1] != 'u')
        return -1;
    const bool ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(symbol, names[i].name)) {
            enum cbt_api a = version >= 13000 ? names[i].v2 : names[i].v1;
            return ptsz ? (int)a + 1 : (int)a; /* each _ptsz variant follows its own in the catalogue */
        }
    return -1;
}

/* Map a pointer the driver handed out (by cuGetProcAddress or dlsym) to the
 * shim's wrapper for it; returns `p` itself when it is not one the shim hooks. */
static void *cbt_wrap_proc(const char *symbol, void *p, int version, cuuint64_t flags, enum cbt_door door)
{
    if (!p)
        return p;
    const struct cbt_real *real = cbt_real();
    /* By pointer: what the driver returned is one of its exported entries. */
    for (int a = 0; a < CBT_API_COUNT_; a++) {
        if (p == real->batch[a]) {
            trace_lookup(door == CBT_DOOR_SYMBOL ? "dlsym" : "cuGetProcAddress", symbol, version, flags, a, p);
            return door == CBT_DOOR_SYMBOL ? dlsym_door[a] : gpa_wrapper[a];
        }
    }
    if (p == (void *)real->gpa5)
        return (void *)handed_gpa5;
    if (p == (void *)real->gpa4)
        return (void *)handed_gpa4;
    /* By name, version and flags (the driver's table) for a driver that hands
     * out internal addresses: remember the pointer and hand out the wrapper.
     * Without a driver the shim could load, the wrapper answers the error of
     * every batch door (nothing is remembered: it forwards nowhere). */
    int by_name = door == CBT_DOOR_GETPROCADDRESS ? gpa_api(symbol, version, flags) : -1;
    if (by_name >= 0) {
        enum cbt_api a = (enum cbt_api)by_name;
        if (real->handle)
            __atomic_store_n(&gpa_target[a], p, __ATOMIC_RELEASE);
        trace_lookup("cuGetProcAddress", symbol, version, flags, a, p);
        return gpa_wrapper[a];
    }
    if (door == CBT_DOOR_GETPROCADDRESS && symbol && !strcmp(symbol, "cuGetProcAddress"))
        return version >= 12000 ? (void *)handed_gpa5 : (void *)handed_gpa4;
    /* The graph functions (graph.c), by pointer. */
    void *gw = cbt_graph_wrap(p);
    if (gw)
        return gw;
    /* The memory-management functions (memwrap.c), by pointer. */
    void *mw = cbt_memwrap_for_pointer(p);
    if (mw)
        return mw;
    /* A memory-management function the shim cannot wrap (an internal
     * address, or an export it does not know): calls through it would go
     * unseen, so memory kinds are no longer kept across batches. */
    if (door == CBT_DOOR_GETPROCADDRESS && symbol && symbol[0] == 'c' && symbol[1] == 'u' &&
        cbt_memwrap_gpa_name(symbol))
        cbt_kind_cache_disable();
    return p;
}

/*
 * cuGetProcAddress(_v2): the exported functions forward to the next
 * definition (like the batch doors); the ones handed out in place of the
 * driver's (by dlsym, or by cuGetProcAddress asked for itself) forward to
 * the driver's.  Either way the pointers the answer holds are swapped for
 * the shim's wrappers.
 */
static CUresult gpa5_via(cbt_gpa5_fn fn, const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *symbolStatus)
{
    if (cbt_unlikely(!fn)) {
        cbt_warn_no_driver("cuGetProcAddress_v2");
        if (pfn)
            *pfn = NULL;
        return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    }
    CUresult r = fn(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS && pfn && cbt_config()->mode != CBT_MODE_OFF)
        *pfn = cbt_wrap_proc(symbol, *pfn, cudaVersion, flags, CBT_DOOR_GETPROCADDRESS);
    return r;
}

static CUresult gpa4_via(cbt_gpa4_fn fn, const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    if (cbt_unlikely(!fn)) {
        cbt_warn_no_driver("cuGetProcAddress");
        if (pfn)
            *pfn = NULL;
        return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    }
    CUresult r = fn(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn && cbt_config()->mode != CBT_MODE_OFF)
        *pfn = cbt_wrap_proc(symbol, *pfn, cudaVersion, flags, CBT_DOOR_GETPROCADDRESS);
    return r;
}

CBT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *symbolStatus)
{
    return gpa5_via(cbt_real()->next_gpa5, symbol, pfn, cudaVersion, flags, symbolStatus);
}

CBT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return gpa4_via(cbt_real()->next_gpa4, symbol, pfn, cudaVersion, flags);
}

static CUresult handed_gpa5(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *symbolStatus)
{
    return gpa5_via(cbt_real()->gpa5, symbol, pfn, cudaVersion, flags, symbolStatus);
}

static CUresult handed_gpa4(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return gpa4_via(cbt_real()->gpa4, symbol, pfn, cudaVersion, flags);
}

/* ---- dlsym ---- */

/*
 * Called by the dlsym entry stub (dlsym_stub.S) with the caller's arguments.
 * Returns the shim's door when the lookup would have found one of the real
 * driver's hooked functions, CBT_DLSYM_NOT_FOUND when it would have found
 * nothing but the shim's own export (the stub then returns NULL), or NULL:
 * the stub then jumps to the real dlsym
 * with the caller's own return address, so RTLD_NEXT and RTLD_DEFAULT are
 * resolved from the caller's point of view, exactly as without the shim.
 */
void *cbt_dlsym_hook(void *handle, const char *name) __attribute__((visibility("hidden")));
/* What cbt_dlsym_hook answers for a lookup that must find nothing (the stub returns NULL). */
#define CBT_DLSYM_NOT_FOUND ((void *)1)
/* Not instrumented: a sanitizer runtime calls dlsym while it starts, before
 * its shadow memory exists (scripts/check-sanitizers). */
__attribute__((no_sanitize_address, no_sanitize_thread))
void *cbt_dlsym_hook(void *handle, const char *name)
{
    /* Cheap filter first: every name of interest starts with "cu": the
     * sixteen batch, single-op, fabric and lookup functions, the wrapped
     * memory functions (memwrap.c) and graph functions (graph.c). */
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    bool batch_name = !strncmp(name, "cuMemcpy3DBatchAsync", 20) || !strncmp(name, "cuMemcpyBatchAsync", 18) ||
                      !strncmp(name, "cuMemcpy3DWithAttributesAsync", 29) ||
                      !strncmp(name, "cuMemcpyWithAttributesAsync", 27) || !strncmp(name, "cuFabricCpyBatchAsync", 21);
    if (strcmp(name, "cuGetProcAddress_v2") && strcmp(name, "cuGetProcAddress") && !batch_name &&
        !cbt_memwrap_exports(name) && !cbt_graph_name(name))
        return NULL;
    if (cbt_config()->mode == CBT_MODE_OFF)
        return NULL;
    /* Asked of the dlsym that comes after the shim (glibc's, or another
     * library's wrapper), from the shim's point of view; for RTLD_NEXT that
     * finds the driver where the caller's view might have found this shim
     * first: both map to the shim's door. */
    void *(*next)(void *, const char *) = (void *(*)(void *, const char *))cbt_next_dlsym_fn();
    void *p = next ? next(handle, name) : NULL;
    void *w = cbt_wrap_proc(name, p, 0, 0, CBT_DOOR_SYMBOL);
    if (w != p)
        return w;
    /* The shim's own export of a function that neither the driver nor any
     * library after the shim has (a CUDA 13.0 driver and the 13.2 single-op
     * calls): without the shim the lookup finds nothing, so it finds nothing
     * with it.  The failing lookup on the driver leaves dlerror() saying so. */
    if (batch_name && p && cbt_in_shim(p) && cbt_real()->handle) {
        for (int a = 0; a < CBT_API_COUNT_; a++)
            if (!strcmp(name, cbt_api_name(a)) && !cbt_real()->next_batch[a]) {
                (void)cbt_real_dlsym(cbt_real()->handle, name);
                return CBT_DLSYM_NOT_FOUND;
            }
    }
    /* No driver the shim could load: a batch function found elsewhere (the
     * program's own libcuda) is answered by the door, which says why it
     * cannot forward; every other name is left alone. */
    if (batch_name && p && !cbt_real()->handle && !cbt_in_shim(p)) {
        for (int a = 0; a < CBT_API_COUNT_; a++)
            if (!strcmp(name, cbt_api_name(a)))
                return dlsym_door[a];
    }
    return NULL;
}

/* ---- lookup events ---- */

static void trace_lookup(const char *via, const char *symbol, int version, cuuint64_t flags, int api, void *ip)
{
    cbt_trace_lookup(via, symbol ? symbol : "", version, flags, api, ip);
}

#if !defined(__x86_64__)
/* Without the assembly stub, lookups are made from the shim's point of view:
 * RTLD_NEXT and RTLD_DEFAULT then search as if the shim had called. */
CBT_EXPORT void *dlsym(void *handle, const char *name)
{
    void *w = cbt_dlsym_hook(handle, name);
    if (w == CBT_DLSYM_NOT_FOUND)
        return NULL;
    if (w)
        return w;
    void *(*next)(void *, const char *) = (void *(*)(void *, const char *))cbt_next_dlsym_fn();
    return next ? next(handle, name) : NULL;
}
#endif
