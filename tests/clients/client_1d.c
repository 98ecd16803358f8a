/* SPDX-License-Identifier: MIT */
/*
 * The 1D batch (cuMemcpyBatchAsync) through one door, every byte checked.
 *
 *   client_1d DOOR
 *   client_1d DOOR big N   one batch of N device-to-device copies of 256 bytes
 *                          (each reversed block to block), then their read-back
 *                          into pinned memory as a second batch of N copies
 *   client_1d DOOR streams N   the same, the device-to-device batch made 9
 *                          times, batch j on stream j % 3 of three (as a
 *                          program that spreads its copies over a few
 *                          streams), the streams drained before the read-back
 *   client_1d DOOR renew N   the same, the device-to-device batch made 9
 *                          times on one stream, its destination freed and
 *                          allocated again before each (an operand new to
 *                          the shim every batch)
 *
 * DOOR: v2, v2_ptsz      the exported cuMemcpyBatchAsync_v2(_ptsz), linked
 *       v1, v1_ptsz      the exported CUDA 12.8 cuMemcpyBatchAsync(_ptsz) (failIdx)
 *       dlsym_v2, dlsym_v1  dlsym(dlopen("libcuda.so.1"), name)
 *       gpa13000, gpa13000_ptsz, gpa12080, gpa12080_ptsz
 *                        cuGetProcAddress_v2("cuMemcpyBatchAsync", version, flags)
 *       binding          the shim's memcpy_batch_async_v2 (integers for the arrays)
 *
 * Three batches, then one that reads everything back into pinned memory:
 *   1. pinned -> device, 3 copies, one STREAM attribute
 *   2. device -> device, 8 copies, two attributes (attrsIdxs {0, 5}: STREAM,
 *      then ANY with PREFER_OVERLAP_WITH_COMPUTE)
 *   3. pageable -> managed, 2 copies, DURING_API_CALL
 *   4. device and managed -> pinned, 13 copies (the read-back)
 * Says its pid on stderr; prints "batches=N copies=M bytes=B" and exits 0 when every byte arrived,
 * 1 when not, 2 when the door or the set-up fails.
 */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#undef cuMemcpyBatchAsync
extern CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, CUstream);
extern CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                                           size_t *, size_t, CUstream);
extern CUresult cuMemcpyBatchAsync(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                   size_t, size_t *, CUstream);
extern CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                                        size_t *, size_t, size_t *, CUstream);

typedef CUresult (*v2_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                          CUstream);
typedef CUresult (*v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                          size_t *, CUstream);
typedef CUresult (*binding_fn)(intptr_t, intptr_t, intptr_t, size_t, intptr_t, intptr_t, size_t, intptr_t);

static v2_fn door_v2;
static v1_fn door_v1;
static binding_fn door_binding;
static unsigned long long batches, copies, bytes;

static void resolve(const char *door)
{
    if (!strcmp(door, "v2")) {
        door_v2 = cuMemcpyBatchAsync_v2;
    } else if (!strcmp(door, "v2_ptsz")) {
        door_v2 = cuMemcpyBatchAsync_v2_ptsz;
    } else if (!strcmp(door, "v1")) {
        door_v1 = cuMemcpyBatchAsync;
    } else if (!strcmp(door, "v1_ptsz")) {
        door_v1 = cuMemcpyBatchAsync_ptsz;
    } else if (!strcmp(door, "dlsym_v2") || !strcmp(door, "dlsym_v1")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        void *p = h ? dlsym(h, door[7] == '2' ? "cuMemcpyBatchAsync_v2" : "cuMemcpyBatchAsync") : NULL;
        if (!p)
            cc_fail("dlsym for %s: not found", door);
        if (door[7] == '2')
            door_v2 = (v2_fn)p;
        else
            door_v1 = (v1_fn)p;
    } else if (!strncmp(door, "gpa", 3)) {
        int version = atoi(door + 3);
        cuuint64_t flags = strstr(door, "ptsz") ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
        void *p = NULL;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult r = cuGetProcAddress_v2("cuMemcpyBatchAsync", &p, version, flags, &st);
        if (r != CUDA_SUCCESS || !p || st != CU_GET_PROC_ADDRESS_SUCCESS)
            cc_fail("cuGetProcAddress_v2(cuMemcpyBatchAsync, %d, %llu): CUresult %d", version,
                    (unsigned long long)flags, (int)r);
        if (version >= 13000)
            door_v2 = (v2_fn)p;
        else
            door_v1 = (v1_fn)p;
    } else if (!strcmp(door, "binding")) {
        door_binding = (binding_fn)dlsym(RTLD_DEFAULT, "memcpy_batch_async_v2");
        if (!door_binding)
            cc_fail("memcpy_batch_async_v2: not found (is the shim preloaded?)");
    } else {
        cc_fail("unknown door %s", door);
    }
}

/* One batch through the door; exits 1 when the driver refuses it. */
static void batch(size_t n, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, CUmemcpyAttributes *attrs,
                  size_t *idxs, size_t nattrs, CUstream s)
{
    CUresult r;
    size_t fail = 12345;
    if (door_v2)
        r = door_v2(dsts, srcs, sizes, n, attrs, idxs, nattrs, s);
    else if (door_v1)
        r = door_v1(dsts, srcs, sizes, n, attrs, idxs, nattrs, &fail, s);
    else
        r = door_binding((intptr_t)dsts, (intptr_t)srcs, (intptr_t)sizes, n, (intptr_t)attrs, (intptr_t)idxs, nattrs,
                         (intptr_t)s);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "client_1d: batch %llu: CUresult %d (failIdx %zu)\n", batches, (int)r, fail);
        exit(1);
    }
    if (door_v1 && fail != SIZE_MAX) {
        fprintf(stderr, "client_1d: batch %llu succeeded with failIdx %zu, not SIZE_MAX\n", batches, fail);
        exit(1);
    }
    batches++;
    copies += n;
    for (size_t i = 0; i < n; i++)
        bytes += sizes[i];
}

static CUmemcpyAttributes attr(CUmemcpySrcAccessOrder order, unsigned flags)
{
    CUmemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = order;
    a.flags = flags;
    return a;
}

#define DEV 65536
#define CHUNK 1024
#define BIG_COPY 256

/* One batch of n copies (with streams, 9 of them on three streams in turn)
 * and its read-back: 0 when every byte arrived. */
static int big(size_t n, CUstream s, int streams, int renew)
{
    CUstream more[3] = {s, s, s};
    for (int i = 1; streams && i < 3; i++)
        cc_check(cc.StreamCreate(&more[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    size_t bytes_all = n * BIG_COPY;
    CUdeviceptr src, dst;
    unsigned char *in, *back;
    cc_check(cc.MemAllocHost((void **)&in, bytes_all), "cuMemAllocHost");
    cc_check(cc.MemAllocHost((void **)&back, bytes_all), "cuMemAllocHost");
    cc_check(cc.MemAlloc(&src, bytes_all), "cuMemAlloc");
    cc_check(cc.MemAlloc(&dst, bytes_all), "cuMemAlloc");
    CUdeviceptr *d = calloc(n, sizeof *d), *sr = calloc(n, sizeof *sr);
    size_t *z = calloc(n, sizeof *z), idx = 0;
    if (!d || !sr || !z)
        cc_fail("out of memory");
    for (size_t i = 0; i < bytes_all; i++)
        in[i] = (unsigned char)(i * 31 + i / 4093);
    memset(back, 0, bytes_all);
    CUmemcpyAttributes a = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    /* pinned -> src in one copy a block at a time would be n more copies: one batch of n does it */
    for (size_t i = 0; i < n; i++) {
        sr[i] = (CUdeviceptr)(uintptr_t)(in + i * BIG_COPY);
        d[i] = src + i * BIG_COPY;
        z[i] = BIG_COPY;
    }
    batch(n, d, sr, z, &a, &idx, 1, s);
    for (size_t i = 0; i < n; i++) {
        sr[i] = src + i * BIG_COPY;
        d[i] = dst + (n - 1 - i) * BIG_COPY;
    }
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize"); /* src is whole before the other streams read it */
    for (int j = 0; j < (streams || renew ? 9 : 1); j++) {
        if (renew) { /* every block of dst is written again by the batch */
            cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
            cc_check(cc.MemFree(dst), "cuMemFree");
            cc_check(cc.MemAlloc(&dst, bytes_all), "cuMemAlloc");
            for (size_t i = 0; i < n; i++)
                d[i] = dst + (n - 1 - i) * BIG_COPY;
        }
        batch(n, d, sr, z, &a, &idx, 1, more[j % 3]); /* each writes the same bytes into dst */
    }
    for (int i = 1; streams && i < 3; i++)
        cc_check(cc.StreamSynchronize(more[i]), "cuStreamSynchronize");
    for (size_t i = 0; i < n; i++) {
        sr[i] = dst + i * BIG_COPY;
        d[i] = (CUdeviceptr)(uintptr_t)(back + i * BIG_COPY);
    }
    batch(n, d, sr, z, &a, &idx, 1, s);
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
    int bad = cc_reversed_check("client_1d", back, in, n, BIG_COPY);
    free(d), free(sr), free(z);
    cc_check(cc.MemFree(src), "cuMemFree");
    cc_check(cc.MemFree(dst), "cuMemFree");
    cc_check(cc.MemFreeHost(in), "cuMemFreeHost");
    cc_check(cc.MemFreeHost(back), "cuMemFreeHost");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2 &&
        !(argc == 4 && (!strcmp(argv[2], "big") || !strcmp(argv[2], "streams") || !strcmp(argv[2], "renew"))))
        cc_fail("usage: client_1d DOOR [big N | streams N | renew N]");
    fprintf(stderr, "client_1d: pid %d\n", (int)getpid()); /* a trace records every process of the user */
    cc_load_direct();
    CUstream s = cc_setup();
    resolve(argv[1]);
    if (argc == 4) {
        int bad = big((size_t)strtoull(argv[3], NULL, 10), s, !strcmp(argv[2], "streams"), !strcmp(argv[2], "renew"));
        cc_say_steps("client_1d");
        printf("batches=%llu copies=%llu bytes=%llu\n", batches, copies, bytes);
        return bad;
    }

    unsigned char *pin_src, *pin_back, *pageable = malloc(4 * CHUNK);
    CUdeviceptr dev, dev2, managed;
    cc_check(cc.MemAllocHost((void **)&pin_src, 3 * CHUNK), "cuMemAllocHost");
    cc_check(cc.MemAllocHost((void **)&pin_back, 13 * CHUNK), "cuMemAllocHost");
    cc_check(cc.MemAlloc(&dev, DEV), "cuMemAlloc");
    cc_check(cc.MemAlloc(&dev2, DEV), "cuMemAlloc");
    cc_check(cc.MemAllocManaged(&managed, DEV, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    if (!pageable)
        cc_fail("malloc");
    for (size_t i = 0; i < 3 * CHUNK; i++)
        pin_src[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < 4 * CHUNK; i++)
        pageable[i] = (unsigned char)(i * 13 + 5);
    memset(pin_back, 0, 13 * CHUNK);

    CUdeviceptr d[16], sr[16];
    size_t z[16], idx[2];
    CUmemcpyAttributes a[2];

    /* 1. pinned -> dev[0, 3 chunks), the chunks reversed */
    for (int i = 0; i < 3; i++) {
        sr[i] = (CUdeviceptr)(uintptr_t)(pin_src + i * CHUNK);
        d[i] = dev + (size_t)(2 - i) * CHUNK;
        z[i] = CHUNK;
    }
    a[0] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    idx[0] = 0;
    batch(3, d, sr, z, a, idx, 1, s);

    /* 2. dev -> dev2: 8 copies of 384 bytes, from dev's first 3 chunks */
    for (int i = 0; i < 8; i++) {
        sr[i] = dev + (size_t)i * 384;
        d[i] = dev2 + (size_t)i * 512;
        z[i] = 384;
    }
    a[0] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    a[1] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_ANY, CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
    idx[0] = 0;
    idx[1] = 5;
    batch(8, d, sr, z, a, idx, 2, s);

    /* 3. pageable -> managed, 2 copies of 2 chunks, swapped */
    for (int i = 0; i < 2; i++) {
        sr[i] = (CUdeviceptr)(uintptr_t)(pageable + (size_t)i * 2 * CHUNK);
        d[i] = managed + (size_t)(1 - i) * 2 * CHUNK;
        z[i] = 2 * CHUNK;
    }
    a[0] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, 0);
    idx[0] = 0;
    batch(2, d, sr, z, a, idx, 1, s);

    /* 4. read back: dev[0, 3 chunks), dev2[0, 4 chunks), managed[0, 4 chunks) as 11 chunk copies + 2 */
    size_t n = 0;
    for (int i = 0; i < 3; i++, n++) {
        sr[n] = dev + (size_t)i * CHUNK;
        d[n] = (CUdeviceptr)(uintptr_t)(pin_back + n * CHUNK);
        z[n] = CHUNK;
    }
    for (int i = 0; i < 4; i++, n++) {
        sr[n] = dev2 + (size_t)i * CHUNK;
        d[n] = (CUdeviceptr)(uintptr_t)(pin_back + n * CHUNK);
        z[n] = CHUNK;
    }
    for (int i = 0; i < 4; i++, n++) {
        sr[n] = managed + (size_t)i * CHUNK;
        d[n] = (CUdeviceptr)(uintptr_t)(pin_back + n * CHUNK);
        z[n] = CHUNK;
    }
    a[0] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    idx[0] = 0;
    batch(n, d, sr, z, a, idx, 1, s);
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");

    /* what each byte should be */
    int bad = 0;
    unsigned char want_dev[3 * CHUNK], want_dev2[4 * CHUNK], want_man[4 * CHUNK];
    for (int i = 0; i < 3; i++)
        memcpy(want_dev + (2 - i) * CHUNK, pin_src + i * CHUNK, CHUNK);
    memset(want_dev2, 0, sizeof want_dev2);
    for (int i = 0; i < 8; i++)
        memcpy(want_dev2 + i * 512, want_dev + i * 384, 384);
    for (int i = 0; i < 2; i++)
        memcpy(want_man + (1 - i) * 2 * CHUNK, pageable + i * 2 * CHUNK, 2 * CHUNK);
    /* dev2's gaps were never written: only the copied bytes are compared */
    if (memcmp(pin_back, want_dev, 3 * CHUNK))
        bad++, fprintf(stderr, "client_1d: device memory (batch 1) holds wrong bytes\n");
    for (int i = 0; i < 8; i++)
        if (memcmp(pin_back + 3 * CHUNK + i * 512, want_dev2 + i * 512, 384))
            bad++, fprintf(stderr, "client_1d: copy %d of batch 2 holds wrong bytes\n", i);
    if (memcmp(pin_back + 7 * CHUNK, want_man, 4 * CHUNK))
        bad++, fprintf(stderr, "client_1d: managed memory (batch 3) holds wrong bytes\n");
    printf("batches=%llu copies=%llu bytes=%llu\n", batches, copies, bytes);
    return bad ? 1 : 0;
}
