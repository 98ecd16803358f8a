/* SPDX-License-Identifier: MIT */
/*
 * The CUDA 12.8 ABI of the batch (with failIdx), which cuda.h 13 no longer
 * declares but the 13.0 driver still exports and hands out at version 12080.
 *
 *   client_abi128 symbol        the exported cuMemcpy3DBatchAsync (door symbol)
 *   client_abi128 symbol_ptsz   the exported cuMemcpy3DBatchAsync_ptsz
 *   client_abi128 gpa           cuGetProcAddress_v2("cuMemcpy3DBatchAsync", 12080, 0)
 *   client_abi128 gpa_ptsz      the same with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *
 * Makes a good batch (failIdx must come back SIZE_MAX) and one whose third op
 * is bad (CUDA_ERROR_INVALID_VALUE, failIdx 2); exits 1 when the caller sees
 * anything else or bytes are wrong.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef cuMemcpy3DBatchAsync
CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                              unsigned long long flags, CUstream hStream);
CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                   unsigned long long flags, CUstream hStream);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "symbol";
    cc_load_direct();
    CUstream s = cc_setup();
    struct cc_door door = {0};
    if (!strcmp(mode, "symbol")) {
        door.v1 = cuMemcpy3DBatchAsync;
    } else if (!strcmp(mode, "symbol_ptsz")) {
        door.v1 = cuMemcpy3DBatchAsync_ptsz;
    } else if (!strcmp(mode, "gpa") || !strcmp(mode, "gpa_ptsz")) {
        void *p = NULL;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        cuuint64_t flags = strcmp(mode, "gpa") ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
        CUresult r = cuGetProcAddress_v2("cuMemcpy3DBatchAsync", &p, 12080, flags, &st);
        if (r != CUDA_SUCCESS || !p || st != CU_GET_PROC_ADDRESS_SUCCESS)
            cc_fail("cuGetProcAddress_v2(cuMemcpy3DBatchAsync, 12080): CUresult %d, status %d", (int)r, (int)st);
        door.v1 = (cc_batch_v1_fn)p;
    } else {
        cc_fail("unknown mode %s", mode);
    }

    int bad = 0;
    struct cc_buf *src = cc_buf_new(CC_PINNED, 4 * 512), *dst = cc_buf_new(CC_PINNED, 4 * 512);
    cc_host_fill(src, 3);

    struct cc_batch good = {0};
    cc_blocks(&good, src, dst, 4, 512);
    size_t fail = 0;
    CUresult r = cc_call(door, &good, s, &fail);
    printf("good: result=%d fail_idx=%s\n", (int)r, fail == SIZE_MAX ? "SIZE_MAX" : "other");
    if (r != CUDA_SUCCESS || fail != SIZE_MAX) {
        fprintf(stderr, "client: good batch: CUresult %d, failIdx %zu\n", (int)r, fail);
        bad++;
    } else {
        cc_accepted(&good);
    }

    struct cc_batch worse = {0};
    cc_blocks(&worse, src, dst, 4, 512);
    worse.ops[2].src.op.ptr.rowLength = 100; /* < width 512: row_length_too_small */
    fail = 0;
    r = cc_call(door, &worse, s, &fail);
    printf("bad third op: result=%d fail_idx=%zu\n", (int)r, fail);
    if (r != CUDA_ERROR_INVALID_VALUE || fail != 2) {
        fprintf(stderr, "client: bad batch: CUresult %d, failIdx %zu (want 1, 2)\n", (int)r, fail);
        bad++;
    }

    struct cc_buf *check[] = {dst};
    bad += cc_verify(door, s, check, 1);
    cc_summary(NULL);
    return bad ? 1 : 0;
}
