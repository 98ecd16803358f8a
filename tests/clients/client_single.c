/* SPDX-License-Identifier: MIT */
/*
 * The CUDA 13.2 single-op calls (cuMemcpy3DWithAttributesAsync,
 * cuMemcpyWithAttributesAsync) through one door, every byte checked.
 *
 *   client_single DOOR
 *   client_single DOOR fabric   cuFabricCpyBatchAsync (CUDA 13.5) through the
 *                          same door (not runtime): 2 pointer ops, then
 *                          the same with flags 1; prints "fabric=R fabric_bad=R"
 *   client_single DOOR loop N   N times: one copy of 100 + i bytes
 *                          (cuMemcpyWithAttributesAsync, device -> device)
 *                          and one 3D op of 1000 bytes (device -> pinned), at
 *                          offsets that move by 4 KiB each time; prints
 *                          "loop=N failed=F bytes=B steps=S" (S: the calls
 *                          that took the shim's full steps, from its
 *                          cubatchtrace_thread_steps; -1 without the shim)
 *
 * DOOR: sym, sym_ptsz     the exported functions, linked weakly (a driver
 *                         without them leaves them NULL: exit 3)
 *       dlsym             dlsym(dlopen("libcuda.so.1"), name)
 *       gpa13020, gpa13020_ptsz   cuGetProcAddress_v2(name, 13020, flags)
 *       runtime           as the CUDA runtime: dlsym(handle, "cuGetProcAddress_v2"),
 *                         then cuGetProcAddress asked for itself at 12000, then
 *                         the pointer it gave asked for name at 13020
 *
 * Four calls, on one stream:
 *   one3d  cuMemcpy3DWithAttributesAsync: pinned -> device, 4096x1x1, STREAM
 *   one1d  cuMemcpyWithAttributesAsync: device -> pinned, 4096 bytes, STREAM
 *   bad3d  the same 3D op with an extent of width 0 (extent_zero)
 *   bad1d  the same copy with size 0 (copy_size_zero)
 * Prints "one3d=R one1d=R bad3d=R bad1d=R bytes=same|differ" (R: the
 * CUresults) and exits 0; 2 when the set-up fails, 3 when the door finds no
 * function.
 */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/cuda13x.h>
#undef cuMemcpy3DWithAttributesAsync
#undef cuMemcpyWithAttributesAsync
#undef cuFabricCpyBatchAsync

/* Weak: the program still starts on a driver that lacks them. */
#pragma weak cuMemcpy3DWithAttributesAsync
#pragma weak cuMemcpy3DWithAttributesAsync_ptsz
#pragma weak cuMemcpyWithAttributesAsync
#pragma weak cuMemcpyWithAttributesAsync_ptsz
#pragma weak cuFabricCpyBatchAsync
#pragma weak cuFabricCpyBatchAsync_ptsz

typedef CUresult (*one3d_fn)(CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*one1d_fn)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *, CUstream);
typedef CUresult (*fabric_fn)(size_t, CUDA_FABRIC_COPY_BATCH_OP *, unsigned long long, CUstream);

static one3d_fn door3d;
static one1d_fn door1d;
static fabric_fn door_fabric;

static void *gpa_lookup(cc_gpa5_fn gpa, const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = gpa(name, &p, version, flags, &st);
    return r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS ? p : NULL;
}

static void resolve(const char *door)
{
    if (!strcmp(door, "sym")) {
        door3d = cuMemcpy3DWithAttributesAsync;
        door1d = cuMemcpyWithAttributesAsync;
        door_fabric = cuFabricCpyBatchAsync;
    } else if (!strcmp(door, "sym_ptsz")) {
        door3d = cuMemcpy3DWithAttributesAsync_ptsz;
        door1d = cuMemcpyWithAttributesAsync_ptsz;
        door_fabric = cuFabricCpyBatchAsync_ptsz;
    } else if (!strcmp(door, "dlsym")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        door3d = h ? (one3d_fn)dlsym(h, "cuMemcpy3DWithAttributesAsync") : NULL;
        door1d = h ? (one1d_fn)dlsym(h, "cuMemcpyWithAttributesAsync") : NULL;
        door_fabric = h ? (fabric_fn)dlsym(h, "cuFabricCpyBatchAsync") : NULL;
    } else if (!strncmp(door, "gpa", 3)) {
        int version = atoi(door + 3);
        cuuint64_t flags = strstr(door, "ptsz") ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
        door3d = (one3d_fn)gpa_lookup(cuGetProcAddress_v2, "cuMemcpy3DWithAttributesAsync", version, flags);
        door1d = (one1d_fn)gpa_lookup(cuGetProcAddress_v2, "cuMemcpyWithAttributesAsync", version, flags);
        door_fabric = (fabric_fn)gpa_lookup(cuGetProcAddress_v2, "cuFabricCpyBatchAsync", version, flags);
    } else if (!strcmp(door, "runtime")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        cc_gpa5_fn first = h ? (cc_gpa5_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
        cc_gpa5_fn gpa = first ? (cc_gpa5_fn)gpa_lookup(first, "cuGetProcAddress", 12000, 0) : NULL;
        if (!gpa)
            cc_fail("runtime: no cuGetProcAddress_v2");
        door3d = (one3d_fn)gpa_lookup(gpa, "cuMemcpy3DWithAttributesAsync", 13020, 0);
        door1d = (one1d_fn)gpa_lookup(gpa, "cuMemcpyWithAttributesAsync", 13020, 0);
    } else {
        cc_fail("unknown door %s", door);
    }
    if (!door3d || !door1d) {
        printf("door %s: not found\n", door);
        exit(3);
    }
}

#define N 4096

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "fabric")) && !(argc == 4 && !strcmp(argv[2], "loop")))
        cc_fail("usage: client_single DOOR [fabric | loop N]");
    cc_load_direct();
    CUstream s = cc_setup();
    cc_say_pid();
    resolve(argv[1]);
    if (argc == 4) {
        int n = atoi(argv[3]);
        CUdeviceptr a = 0, b = 0;
        unsigned char *h = NULL;
        size_t span = (size_t)n * 4096 + 4096;
        cc_check(cc.MemAlloc(&a, span), "cuMemAlloc");
        cc_check(cc.MemAlloc(&b, span), "cuMemAlloc");
        cc_check(cc.MemAllocHost((void **)&h, span), "cuMemAllocHost");
        CUmemcpyAttributes at;
        memset(&at, 0, sizeof at);
        at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        CUDA_MEMCPY3D_BATCH_OP op;
        memset(&op, 0, sizeof op);
        op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        op.extent.width = 1000;
        op.extent.height = op.extent.depth = 1;
        op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        unsigned long long bytes = 0;
        int failed = 0;
        for (int i = 0; i < n; i++) {
            failed += door1d(b + (size_t)i * 4096, a + (size_t)i * 4096, 100 + (size_t)i, &at, s) != CUDA_SUCCESS;
            op.src.op.ptr.ptr = a + (size_t)i * 4096;
            op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)(h + (size_t)i * 4096);
            failed += door3d(&op, 0, s) != CUDA_SUCCESS;
            bytes += 100 + (unsigned long long)i + 1000;
        }
        cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
        unsigned long long (*steps)(void) = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "cubatchtrace_thread_steps");
        printf("loop=%d failed=%d bytes=%llu steps=%lld\n", n, failed, bytes, steps ? (long long)steps() : -1LL);
        return 0;
    }
    if (argc == 3) {
        if (!door_fabric) {
            printf("door %s: no cuFabricCpyBatchAsync\n", argv[1]);
            return 3;
        }
        static unsigned char a[256], b[256];
        CUDA_FABRIC_COPY_BATCH_OP ops[2];
        memset(ops, 0, sizeof ops);
        for (int i = 0; i < 2; i++) {
            ops[i].src.type = CU_FABRIC_COPY_OPERAND_TYPE_POINTER;
            ops[i].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)(a + 128 * i);
            ops[i].dst.type = CU_FABRIC_COPY_OPERAND_TYPE_POINTER;
            ops[i].dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)(b + 128 * i);
            ops[i].size = 128;
        }
        CUresult r = door_fabric(2, ops, 0, s), bad = door_fabric(2, ops, 1, s);
        printf("fabric=%d fabric_bad=%d\n", (int)r, (int)bad);
        return 0;
    }

    unsigned char *src = NULL, *back = NULL;
    CUdeviceptr dev = 0;
    cc_check(cc.MemAllocHost((void **)&src, N), "cuMemAllocHost");
    cc_check(cc.MemAllocHost((void **)&back, N), "cuMemAllocHost");
    cc_check(cc.MemAlloc(&dev, N), "cuMemAlloc");
    for (size_t i = 0; i < N; i++) {
        src[i] = (unsigned char)(i * 7 + 1);
        back[i] = 0;
    }

    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)src;
    op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.dst.op.ptr.ptr = dev;
    op.extent.width = N;
    op.extent.height = 1;
    op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;

    CUresult one3d = door3d(&op, 0, s);
    CUresult one1d = door1d((CUdeviceptr)(uintptr_t)back, dev, N, &attr, s);
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
    CUDA_MEMCPY3D_BATCH_OP bad = op;
    bad.extent.width = 0;
    CUresult bad3d = door3d(&bad, 0, s);
    CUresult bad1d = door1d((CUdeviceptr)(uintptr_t)back, dev, 0, &attr, s);
    printf("one3d=%d one1d=%d bad3d=%d bad1d=%d bytes=%s\n", (int)one3d, (int)one1d, (int)bad3d, (int)bad1d,
           memcmp(src, back, N) ? "differ" : "same");
    cc.MemFree(dev);
    cc.MemFreeHost(src);
    cc.MemFreeHost(back);
    return 0;
}
