/* SPDX-License-Identifier: MIT */
/*
 * Large 3D batches through the linked cuMemcpy3DBatchAsync_v2, every byte
 * checked.
 *
 *   client_big3d K N [swap|pool|streams|streams-meet|churn|churn-threads|stream-churn|renew]
 *                      a batch of N copies of 256 bytes from pinned memory
 *                      to a device buffer, then K batches of N device-to-
 *                      device copies (block i to block N - 1 - i, the same
 *                      operands every time: the steady path from the
 *                      second on; with swap, the batches go from one buffer
 *                      to the other and back in turn, each op's refs those
 *                      of its batch's op 0 but not of the batch before;
 *                      with pool, K odd, batch j goes from buffer j % 4 to
 *                      buffer (j + 1) % 4 of four, as a program that goes
 *                      round a few buffers: one of the batch's two buffers
 *                      is the batch before's, the other one used three
 *                      batches earlier), then the read-back into pinned
 *                      memory; with streams, the K batches as without
 *                      a word but batch j on stream j % 3 of three (as a
 *                      program that spreads its copies over a few
 *                      streams: each batch's stream unlike the batch
 *                      before's), the streams drained before the read-back
 *                      (streams-meet: three streams whose handles the
 *                      shim hashes alike, picked from up to 64 made);
 *                      with churn, the K batches as without a word, with
 *                      a device buffer of 1 to 3 pages allocated and the
 *                      one before it freed ahead of each (as a program that
 *                      allocates and frees other memory between its
 *                      batches; churn-threads: the same while two more
 *                      threads allocate and free as fast as they can, so
 *                      that the shim's log of changes is written while it
 *                      is read, and runs over (400 changes) before every
 *                      other batch); with
 *                      stream-churn, a stream made and destroyed ahead of
 *                      each instead; with renew, the destination buffer
 *                      freed and allocated again ahead of each (as a
 *                      program that copies into a buffer it allocates for
 *                      that copy: an operand new to the shim every batch)
 *
 * Says its pid on stderr, and with the shim how many batches took its
 * steps (cc_say_steps); prints "batches=B ops=M" and exits 0 when every
 * byte arrived, 1 when not, 2 when the set-up fails.
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COPY 256

static unsigned long long batches, ops_made;

static CUmemcpy3DOperand ptr_of(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    return o;
}

/* One batch of n copies: op i from src + i * COPY to dst + at(i) * COPY. */
static void batch(CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, CUdeviceptr src, CUdeviceptr dst, int reverse, CUstream s)
{
    for (size_t i = 0; i < n; i++) {
        memset(&ops[i], 0, sizeof ops[i]);
        ops[i].src = ptr_of(src + i * COPY);
        ops[i].dst = ptr_of(dst + (reverse ? n - 1 - i : i) * COPY);
        ops[i].extent.width = COPY;
        ops[i].extent.height = 1;
        ops[i].extent.depth = 1;
        ops[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    cc_check(cuMemcpy3DBatchAsync(n, ops, 0, s), "cuMemcpy3DBatchAsync_v2");
    batches++;
    ops_made += n;
}

/* churn-threads: allocations and frees on another thread until told to stop */
static int stop;
static unsigned long made; /* allocations and frees the other threads made */
static void *allocating(void *ctx)
{
    cc_check(cuCtxSetCurrent((CUcontext)ctx), "cuCtxSetCurrent");
    for (unsigned i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++) {
        CUdeviceptr p;
        cc_check(cc.MemAlloc(&p, 4096 * (1 + i % 3)), "cuMemAlloc");
        cc_check(cc.MemFree(p), "cuMemFree");
        __atomic_add_fetch(&made, 2, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* churn-threads: the other threads make at least n changes before the next batch */
static void let_them(unsigned long n)
{
    unsigned long from = __atomic_load_n(&made, __ATOMIC_ACQUIRE);
    while (__atomic_load_n(&made, __ATOMIC_ACQUIRE) - from < n)
        sched_yield();
}

/* Three streams whose handles the shim hashes to the same place (its
 * cbt_stream_hash, src/util.h: Fibonacci hashing, the top six bits, of
 * which its slots use three and its stream indices four): of 64 streams,
 * some five share one of 16 places. */
static void streams_meeting(CUstream out[3])
{
    CUstream by[16][3];
    int at[16] = {0};
    for (int i = 0; i < 64; i++) {
        CUstream x;
        cc_check(cc.StreamCreate(&x, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        unsigned h = (unsigned)(((uint64_t)(uintptr_t)x * 0x9e3779b97f4a7c15ull) >> 58) & 15;
        by[h][at[h]++] = x; /* the others stay made, unused */
        if (at[h] == 3) {
            memcpy(out, by[h], sizeof by[h]);
            return;
        }
    }
    cc_fail("no three of 64 streams share a place");
}

int main(int argc, char **argv)
{
    if (argc != 3 &&
        !(argc == 4 && (!strcmp(argv[3], "swap") || !strcmp(argv[3], "pool") || !strcmp(argv[3], "streams") ||
                        !strcmp(argv[3], "streams-meet") || !strcmp(argv[3], "churn") ||
                        !strcmp(argv[3], "churn-threads") || !strcmp(argv[3], "stream-churn") ||
                        !strcmp(argv[3], "renew"))))
        cc_fail("usage: client_big3d K N [swap|pool|streams|streams-meet|churn|churn-threads|stream-churn|renew]");
    int swap = argc == 4 && !strcmp(argv[3], "swap"), pool = argc == 4 && !strcmp(argv[3], "pool");
    int meet = argc == 4 && !strcmp(argv[3], "streams-meet");
    int threads = argc == 4 && !strcmp(argv[3], "churn-threads");
    int streams = meet || (argc == 4 && !strcmp(argv[3], "streams"));
    int churn = threads || (argc == 4 && !strcmp(argv[3], "churn"));
    int stream_churn = argc == 4 && !strcmp(argv[3], "stream-churn");
    int renew = argc == 4 && !strcmp(argv[3], "renew");
    size_t k = (size_t)strtoull(argv[1], NULL, 10), n = (size_t)strtoull(argv[2], NULL, 10);
    if (n == 0 || n > (1u << 20))
        cc_fail("N must be 1..%u", 1u << 20);
    if (pool && k % 2 == 0)
        cc_fail("pool: K must be odd (the read-back expects the bytes reversed)");
    fprintf(stderr, "client_big3d: pid %d\n", (int)getpid()); /* a trace records every process of the user */
    cc_load_direct();
    CUstream s = cc_setup(), more[3] = {s, NULL, NULL};
    if (meet)
        streams_meeting(more);
    else if (streams) {
        cc_check(cc.StreamCreate(&more[1], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        cc_check(cc.StreamCreate(&more[2], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    }
    unsigned char *in, *back;
    CUdeviceptr a, b, p[4], scratch = 0;
    cc_check(cc.MemAllocHost((void **)&in, n * COPY), "cuMemAllocHost");
    cc_check(cc.MemAllocHost((void **)&back, n * COPY), "cuMemAllocHost");
    cc_check(cc.MemAlloc(&a, n * COPY), "cuMemAlloc");
    cc_check(cc.MemAlloc(&b, n * COPY), "cuMemAlloc");
    p[0] = a, p[1] = b;
    cc_check(cc.MemAlloc(&p[2], n * COPY), "cuMemAlloc");
    cc_check(cc.MemAlloc(&p[3], n * COPY), "cuMemAlloc");
    pthread_t others[2];
    CUcontext ctx = NULL;
    cc_check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    for (int i = 0; threads && i < 2; i++)
        if (pthread_create(&others[i], NULL, allocating, ctx))
            cc_fail("pthread_create");
    CUDA_MEMCPY3D_BATCH_OP *ops = calloc(n, sizeof *ops);
    if (!ops)
        cc_fail("out of memory");
    for (size_t i = 0; i < n * COPY; i++)
        in[i] = (unsigned char)(i * 31 + i / 4093);
    memset(back, 0, n * COPY);
    batch(ops, n, (CUdeviceptr)(uintptr_t)in, a, 0, s);
    /* a -> b reversed leaves b reversed; b -> a reversed leaves a as it was */
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize"); /* a is whole before the other streams read it */
    for (size_t j = 0; j < k; j++) {
        if (churn) {
            CUdeviceptr was = scratch;
            cc_check(cc.MemAlloc(&scratch, 4096 * (1 + j % 3)), "cuMemAlloc");
            if (was)
                cc_check(cc.MemFree(was), "cuMemFree");
        }
        if (threads && j % 2)
            let_them(400); /* more than the shim's log holds: every other batch, it forgets everything */
        if (stream_churn) {
            CUstream x;
            cc_check(cc.StreamCreate(&x, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            cc_check(cuStreamDestroy(x), "cuStreamDestroy");
        }
        if (renew) { /* every block of b is written again by the batch */
            cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
            cc_check(cc.MemFree(b), "cuMemFree");
            cc_check(cc.MemAlloc(&b, n * COPY), "cuMemAlloc");
        }
        if (streams)
            batch(ops, n, a, b, 1, more[j % 3]); /* each writes the same bytes into b */
        else if (pool)
            batch(ops, n, p[j % 4], p[(j + 1) % 4], 1, s);
        else if (swap && j % 2)
            batch(ops, n, b, a, 1, s);
        else
            batch(ops, n, a, b, 1, s);
    }
    if (scratch)
        cc_check(cc.MemFree(scratch), "cuMemFree");
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; threads && i < 2; i++)
        pthread_join(others[i], NULL);
    for (int i = meet ? 0 : 1; streams && i < 3; i++)
        cc_check(cc.StreamSynchronize(more[i]), "cuStreamSynchronize");
    /* pool: the bytes reversed k times (an odd number) in p[k % 4] */
    batch(ops, n, pool ? p[k % 4] : b, (CUdeviceptr)(uintptr_t)back, 0, s);
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
    int bad = cc_reversed_check("client_big3d", back, in, n, COPY);
    cc_say_steps("client_big3d");
    printf("batches=%llu ops=%llu\n", batches, ops_made);
    free(ops);
    return bad;
}
