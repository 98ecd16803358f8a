/* SPDX-License-Identifier: MIT */
/*
 * Op lists and operands the driver reads only in part: with the shim the
 * program must get exactly what the driver alone gives it.
 *
 *   client_reads partial    2 readable ops then an unreadable page, op 1 bad,
 *                           numOps 3, 100000 and 16M (v2 and the 12.8 ABI)
 *   client_reads unread     an unreadable op list with a NULL or legacy
 *                           stream, flags 1, an unknown stream
 *   client_reads absurd     numOps 2^40 and SIZE_MAX with a NULL list; 2^40
 *                           with a readable first op that is bad
 *   client_reads straddle   a pageable source that runs into an unmapped page
 *   client_reads steady     after a good batch (the thread's steady state):
 *                           lists in one page whose op 2, then op 1, is bad,
 *                           and 3 ops before an unreadable page, op 0 bad
 *                           (v2 and the 12.8 ABI each)
 *   client_reads repeat     three times each: 16 ops in one page, 40 ops,
 *                           130 ops (more than a chunk), 400 ops and 300
 *                           ops alike but for their pointers, the same lists
 *                           (the first of each size after a cuMemAlloc and
 *                           cuMemFree: through the steps);
 *                           then 1D batches of 5, 40 and 400 copies
 * Prints one line per call: "NAME result=R fail_idx=F" (F: - when SIZE_MAX).
 */
#define _GNU_SOURCE
#include "common.h"
#include "opbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, CUstream);
#undef cuMemcpy3DBatchAsync
CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                              unsigned long long flags, CUstream hStream);

static CUstream stream;
static struct cc_buf *dev;

static void say(const char *name, CUresult r, size_t fail)
{
    if (fail == SIZE_MAX)
        printf("%s result=%d fail_idx=-\n", name, (int)r);
    else
        printf("%s result=%d fail_idx=%zu\n", name, (int)r, fail);
    fflush(stdout);
}

static CUDA_MEMCPY3D_BATCH_OP good_op(void) { return cc_op(cc_ptr(dev, 0, 0, 0), cc_ptr(dev, 8192, 0, 0), 256, 4, 2); }

/* `n` ops that end exactly where an unreadable page starts. */
static CUDA_MEMCPY3D_BATCH_OP *before_hole(size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + page, (size_t)page, PROT_NONE))
        cc_fail("mmap");
    return (CUDA_MEMCPY3D_BATCH_OP *)(m + page) - n;
}

static int do_partial(void)
{
    CUDA_MEMCPY3D_BATCH_OP *ops = before_hole(2);
    ops[0] = good_op();
    ops[1] = good_op();
    ops[1].src.op.ptr.rowLength = 100; /* < width 256: the driver rejects op 1 */
    const size_t counts[] = {3, 100000, 16u << 20};
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        size_t fail = 7;
        snprintf(name, sizeof name, "partial-%zu-v2", counts[i]);
        say(name, cuMemcpy3DBatchAsync_v2(counts[i], ops, 0, stream), SIZE_MAX);
        snprintf(name, sizeof name, "partial-%zu-12.8", counts[i]);
        CUresult r = cuMemcpy3DBatchAsync(counts[i], ops, &fail, 0, stream);
        say(name, r, fail);
    }
    return 0;
}

static int do_unread(void)
{
    CUDA_MEMCPY3D_BATCH_OP *ops = before_hole(0); /* the unreadable page itself */
    say("unread-null-stream", cuMemcpy3DBatchAsync_v2(4, ops, 0, NULL), SIZE_MAX);
    say("unread-legacy-stream", cuMemcpy3DBatchAsync_v2(4, ops, 0, CU_STREAM_LEGACY), SIZE_MAX);
    say("unread-flags", cuMemcpy3DBatchAsync_v2(4, ops, 1, stream), SIZE_MAX);
    CUstream gone;
    cc_check(cc.StreamCreate(&gone, 0), "cuStreamCreate");
    cc_check(cuStreamDestroy(gone), "cuStreamDestroy");
    CUstream other;
    cc_check(cc.StreamCreate(&other, 0), "cuStreamCreate"); /* may reuse the handle: destroy it too */
    cc_check(cuStreamDestroy(other), "cuStreamDestroy");
    say("unread-unknown-stream", cuMemcpy3DBatchAsync_v2(4, ops, 0, other), SIZE_MAX);
    return 0;
}

static int do_absurd(void)
{
    size_t fail = 7;
    say("absurd-2^40-null", cuMemcpy3DBatchAsync_v2((size_t)1 << 40, NULL, 0, stream), SIZE_MAX);
    CUresult r = cuMemcpy3DBatchAsync(SIZE_MAX, NULL, &fail, 0, stream);
    say("absurd-max-null", r, fail);
    CUDA_MEMCPY3D_BATCH_OP *ops = before_hole(1);
    ops[0] = good_op();
    ops[0].extent.width = 0; /* the driver rejects op 0 */
    fail = 7;
    r = cuMemcpy3DBatchAsync((size_t)1 << 40, ops, &fail, 0, stream);
    say("absurd-2^40-bad-first", r, fail);
    return 0;
}

static int do_straddle(void)
{
    /* A first batch, so that what the shim maps at its first batch cannot
     * land in the hole below. */
    CUDA_MEMCPY3D_BATCH_OP warm = good_op();
    cc_check(cuMemcpy3DBatchAsync_v2(1, &warm, 0, stream), "the first batch");
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        cc_fail("mmap");
    memset(m, 7, (size_t)page);
    munmap(m + page, (size_t)page);
    CUDA_MEMCPY3D_BATCH_OP op = good_op();
    op.src = ob_ptr((CUdeviceptr)(uintptr_t)(m + page - 64), 0, 0);
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    op.extent.height = op.extent.depth = 1; /* 256 bytes from 64 bytes before the hole */
    printf("straddle calling\n");
    fflush(stdout);
    say("straddle", cuMemcpy3DBatchAsync_v2(1, &op, 0, stream), SIZE_MAX);
    return 0;
}

/* Batches like the thread's previous one: the shim reads their ops no
 * further than the driver, and records as many as it reads. */
static int do_steady(void)
{
    long page = sysconf(_SC_PAGESIZE);
    CUDA_MEMCPY3D_BATCH_OP *in_page = aligned_alloc((size_t)page, (size_t)page);
    if (!in_page)
        cc_fail("aligned_alloc");
    for (int i = 0; i < 4; i++)
        in_page[i] = good_op();
    say("steady-warm", cuMemcpy3DBatchAsync_v2(2, in_page, 0, stream), SIZE_MAX);
    struct {
        const char *name;
        CUDA_MEMCPY3D_BATCH_OP *ops;
        size_t n, bad;
    } cases[] = {{"steady-last-bad", in_page, 3, 2}, {"steady-mid-bad", in_page, 4, 1}, {"steady-hole", NULL, 3, 0}};
    cases[2].ops = before_hole(2);
    cases[2].ops[0] = good_op();
    cases[2].ops[1] = good_op();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CUDA_MEMCPY3D_BATCH_OP *ops = cases[c].ops;
        CUDA_MEMCPY3D_BATCH_OP keep = ops[cases[c].bad];
        ops[cases[c].bad].src.op.ptr.rowLength = 100; /* < width 256: the driver rejects it */
        char name[64];
        snprintf(name, sizeof name, "%s-v2", cases[c].name);
        say(name, cuMemcpy3DBatchAsync_v2(cases[c].n, ops, 0, stream), SIZE_MAX);
        size_t fail = 7;
        CUresult r = cuMemcpy3DBatchAsync(cases[c].n, ops, &fail, 0, stream);
        snprintf(name, sizeof name, "%s-12.8", cases[c].name);
        say(name, r, fail);
        ops[cases[c].bad] = keep;
        say("steady-good", cuMemcpy3DBatchAsync_v2(2, in_page, 0, stream), SIZE_MAX);
    }
    return 0;
}

/* Batches repeated as they were: the second and third of each size take
 * the steady path, and must read back as the first, which takes the steps. */
static int do_repeat(void)
{
    long page = sysconf(_SC_PAGESIZE);
    CUDA_MEMCPY3D_BATCH_OP *in_page = aligned_alloc((size_t)page, (size_t)page);
    CUDA_MEMCPY3D_BATCH_OP *heap = calloc(400, sizeof *heap), *like = calloc(300, sizeof *like);
    if (!in_page || !heap || !like)
        cc_fail("alloc");
    for (int i = 0; i < 400; i++) {
        CUDA_MEMCPY3D_BATCH_OP op = cc_op(cc_ptr(dev, (size_t)(i % 16) * 1024, 0, 0),
                                          cc_ptr(dev, 32768 + (size_t)(i % 8) * 2048, 0, 0), 256 + 8 * (size_t)(i % 5),
                                          1 + (size_t)(i % 3), 1);
        heap[i] = op;
        if (i < 16)
            in_page[i] = op;
        if (i < 300) /* alike but for their pointers */
            like[i] = cc_op(cc_ptr(dev, (size_t)(i % 16) * 1024, 0, 0),
                            cc_ptr(dev, 32768 + (size_t)(i % 8) * 2048, 0, 0), 256, 1, 1);
    }
    const struct {
        const char *name;
        CUDA_MEMCPY3D_BATCH_OP *ops;
        size_t n;
    } sizes[] = {{"repeat-16", in_page, 16},
                 {"repeat-40", heap + 3, 40},
                 {"repeat-130", heap, 130},
                 {"repeat-400", heap, 400},
                 {"repeat-300", like, 300}};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        /* memory allocated and freed: the first of each size takes the
         * steps again (the memory generation moved), the others the steady path */
        CUdeviceptr tmp;
        cc_check(cc.MemAlloc(&tmp, 4096), "cuMemAlloc");
        cc_check(cc.MemFree(tmp), "cuMemFree");
        for (int k = 0; k < 3; k++)
            say(sizes[c].name, cuMemcpy3DBatchAsync_v2(sizes[c].n, sizes[c].ops, 0, stream), SIZE_MAX);
    }
    /* the arrays on the stack, the sizes and the attribute on the heap: far
     * apart, as a program's may be (the hdr that names them grows) */
    CUdeviceptr dsts[400], srcs[400];
    size_t *lens = calloc(400, sizeof *lens), idx = 0;
    CUmemcpyAttributes *a = calloc(1, sizeof *a);
    if (!lens || !a)
        cc_fail("alloc");
    for (size_t i = 0; i < 400; i++) {
        srcs[i] = dev->ptr + (i % 16) * 1024;
        dsts[i] = dev->ptr + 32768 + (i % 8) * 2048;
        lens[i] = 256 + 8 * (i % 5);
    }
    a->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    const size_t counts[] = {5, 40, 400};
    for (size_t c = 0; c < 3; c++) {
        CUdeviceptr tmp; /* as above: the first of each count through the steps */
        cc_check(cc.MemAlloc(&tmp, 4096), "cuMemAlloc");
        cc_check(cc.MemFree(tmp), "cuMemFree");
        for (int k = 0; k < 3; k++)
            say("repeat-1d", cuMemcpyBatchAsync_v2(dsts, srcs, lens, counts[c], a, &idx, 1, stream), SIZE_MAX);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cc_load_direct();
    stream = cc_setup();
    dev = cc_buf_new(CC_DEVICE, 65536);
    if (!strcmp(mode, "partial"))
        return do_partial();
    if (!strcmp(mode, "unread"))
        return do_unread();
    if (!strcmp(mode, "absurd"))
        return do_absurd();
    if (!strcmp(mode, "straddle"))
        return do_straddle();
    if (!strcmp(mode, "steady"))
        return do_steady();
    if (!strcmp(mode, "repeat"))
        return do_repeat();
    cc_fail("usage: client_reads partial|unread|absurd|straddle|steady|repeat");
}
