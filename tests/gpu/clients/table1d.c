/* SPDX-License-Identifier: MIT */
/*
 * GPU test client: what the driver answers to the 1D batch call,
 * cuMemcpyBatchAsync, row by row (the accept/reject table of docs/rules.md).
 *
 *   table1d list                 the row names, one a line
 *   table1d run [ROW...]         every row (or the ones named), each in a
 *                                forked child that initialises CUDA itself
 *
 * The parent makes no CUDA call.  A child sets up a context, a non-blocking
 * stream and its buffers, builds the batch of its row (by default four
 * device-to-device copies of 4 KiB, one attribute with STREAM order), calls
 * the door of the row, synchronizes, and checks which copies arrived.  Rows
 * that would crash the process only crash their child.
 *
 * Doors: v2     cuMemcpyBatchAsync_v2 (CUDA 13 signature)
 *        v1     cuMemcpyBatchAsync (CUDA 12.8 signature, size_t *failIdx)
 *        v1-failidx-null  the same with failIdx NULL
 *        v2as1  the CUDA 13 function called with the 12.8 arguments
 *        v1as2  the 12.8 function called with the CUDA 13 arguments (the
 *               ninth argument, which the 12.8 function reads as its
 *               stream, is given explicitly: 0, the stream, or 0xdeadbeef)
 *
 * Output, one line per row and door, in the order of the rows below:
 *   ROW <name> door=<door> pid=<child> kind=result rc=<CUresult> rcname=<name> failidx=<n|-> sync=<name> ctxsync=<name> arrived=<mask>
 *   ROW <name> door=<door> pid=<child> kind=signal sig=<n>
 *   ROW <name> door=<door> pid=<child> kind=timeout
 *   ROW <name> door=<door> pid=<child> kind=setup code=<n>
 * arrived: one character per copy, 1 when its destination holds its source
 * after the stream synchronized, 0 when not, - when the row does not check.
 *
 * Deferred rows (deferred_*): a host function that sleeps 300 ms holds the
 * stream back while the call is made, and the host source is overwritten as
 * soon as the call returns: arrived 1 means the copy had read the source by
 * then (during the call), 0 that it read it later, in stream order.
 *
 * Holes: some rows place an array so that it ends exactly where a PROT_NONE
 * page begins: a driver that reads past what it answers on dies with SIGSEGV.
 *
 * The same program runs over the CPU test double (tests/fakecuda), whose
 * "device" memory is host memory: tests/fakecuda/table1d.sh compares its
 * answers with the H200's, tests/gpu/measured/table1d-h200.txt.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#undef cuMemcpyBatchAsync
extern CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                      CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream s);
extern CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                   CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                   CUstream s);
typedef CUresult (*v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                          size_t *, CUstream);
typedef CUresult (*v2_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                          CUstream);

#define MAXC 1024
#define SLOT 8192           /* bytes between two copies' operands */
#define BUF (MAXC * SLOT)   /* each buffer */
#define COPY 4096           /* default bytes per copy */
#define FAIL_PRESET ((size_t)12345)

enum door { D_V2, D_V1, D_V1NULL, D_V2AS1, D_V1AS2_0, D_V1AS2_S, D_V1AS2_X };
static const char *door_names[] = {"v2", "v1", "v1-failidx-null", "v2as1", "v1as2-ninth0", "v1as2-ninthstream",
                                   "v1as2-ninthgarbage"};

/* The batch a row builds. */
struct batch {
    CUdeviceptr *dsts, *srcs;
    size_t *sizes;
    size_t count;
    CUmemcpyAttributes *attrs;
    size_t *idxs;
    size_t num_attrs;
    CUstream stream;
    int check_data; /* compare destinations with sources afterwards */
    int deferred;   /* the stream is held back while the call is made; the host
                       source is overwritten as soon as the call returns */
};

/* What a child has. */
static CUdeviceptr ddst, dsrc, mdst, msrc;
static unsigned char *pinned_src, *pinned_dst, *pageable_src, *pageable_dst;
static CUstream g_stream;
static long pg;

/* Arrays with room for MAXC entries; the hole variants end at a PROT_NONE page. */
static CUdeviceptr a_dsts[MAXC], a_srcs[MAXC];
static size_t a_sizes[MAXC], a_idxs[MAXC];
static CUmemcpyAttributes a_attrs[MAXC];

/* `n` entries of `size` bytes ending where a PROT_NONE page begins. */
static void *before_hole(size_t n, size_t size)
{
    size_t bytes = n * size;
    size_t span = (bytes + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    unsigned char *m = mmap(NULL, span + (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + span, (size_t)pg, PROT_NONE) != 0)
        _exit(41);
    return m + span - bytes;
}

/* Move array `which` onto `keep` readable entries before a hole (contents kept). */
static void holed(struct batch *b, const char *which, size_t keep)
{
    if (!strcmp(which, "dsts")) {
        CUdeviceptr *p = before_hole(keep, sizeof *p);
        memcpy(p, b->dsts, keep * sizeof *p);
        b->dsts = p;
    } else if (!strcmp(which, "srcs")) {
        CUdeviceptr *p = before_hole(keep, sizeof *p);
        memcpy(p, b->srcs, keep * sizeof *p);
        b->srcs = p;
    } else if (!strcmp(which, "sizes")) {
        size_t *p = before_hole(keep, sizeof *p);
        memcpy(p, b->sizes, keep * sizeof *p);
        b->sizes = p;
    } else if (!strcmp(which, "attrs")) {
        CUmemcpyAttributes *p = before_hole(keep, sizeof *p);
        memcpy(p, b->attrs, keep * sizeof *p);
        b->attrs = p;
    } else if (!strcmp(which, "idxs")) {
        size_t *p = before_hole(keep, sizeof *p);
        memcpy(p, b->idxs, keep * sizeof *p);
        b->idxs = p;
    }
}

static void all_holed(struct batch *b)
{
    holed(b, "dsts", 0);
    holed(b, "srcs", 0);
    holed(b, "sizes", 0);
    holed(b, "attrs", 0);
    holed(b, "idxs", 0);
}

static CUmemcpyAttributes attr(CUmemcpySrcAccessOrder order)
{
    CUmemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = order;
    a.srcLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.srcLocHint.id = 0;
    a.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.dstLocHint.id = 0;
    return a;
}

/* The default batch: `count` device-to-device copies, one STREAM attribute. */
static void base(struct batch *b, size_t count)
{
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < count; i++) {
        a_dsts[i] = ddst + i * SLOT;
        a_srcs[i] = dsrc + i * SLOT;
        a_sizes[i] = COPY;
    }
    a_attrs[0] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    a_idxs[0] = 0;
    b->dsts = a_dsts;
    b->srcs = a_srcs;
    b->sizes = a_sizes;
    b->count = count;
    b->attrs = a_attrs;
    b->idxs = a_idxs;
    b->num_attrs = 1;
    b->stream = g_stream;
    b->check_data = 1;
}

static void host_side(struct batch *b, int src_side, void *host)
{
    for (size_t i = 0; i < b->count; i++) {
        CUdeviceptr p = (CUdeviceptr)(uintptr_t)((unsigned char *)host + i * SLOT);
        if (src_side)
            b->srcs[i] = p;
        else
            b->dsts[i] = p;
    }
}

/* The rows: a name and what it changes in the default batch of four copies. */
#define ROWS(X)                                                                                           \
    X(valid, {})                                                                                          \
    X(valid_one, { b->count = 1; })                                                                       \
    X(lochint_zeroed, { memset(&a_attrs[0].srcLocHint, 0, sizeof a_attrs[0].srcLocHint);                  \
                        memset(&a_attrs[0].dstLocHint, 0, sizeof a_attrs[0].dstLocHint); })               \
    X(attrs_all_zero, { memset(&a_attrs[0], 0, sizeof a_attrs[0]); })                                     \
    X(count0, { b->count = 0; })                                                                          \
    X(dsts_null, { b->dsts = NULL; })                                                                     \
    X(srcs_null, { b->srcs = NULL; })                                                                     \
    X(sizes_null, { b->sizes = NULL; })                                                                   \
    X(attrs_null, { b->attrs = NULL; })                                                                   \
    X(idxs_null, { b->idxs = NULL; })                                                                     \
    X(attrs_null_numattrs0, { b->attrs = NULL; b->idxs = NULL; b->num_attrs = 0; })                       \
    X(numattrs0, { b->num_attrs = 0; })                                                                   \
    X(numattrs_gt_count, { b->count = 2; b->num_attrs = 3; a_idxs[1] = 1; a_idxs[2] = 2;                  \
                           a_attrs[1] = a_attrs[2] = a_attrs[0]; })                                       \
    X(idx0_is_1, { a_idxs[0] = 1; })                                                                      \
    X(idx_two, { b->num_attrs = 2; a_idxs[1] = 2; a_attrs[1] = a_attrs[0]; })                             \
    X(idx_equal, { b->num_attrs = 3; a_idxs[1] = 2; a_idxs[2] = 2; a_attrs[1] = a_attrs[2] = a_attrs[0]; }) \
    X(idx_decreasing, { b->num_attrs = 3; a_idxs[1] = 3; a_idxs[2] = 1;                                   \
                        a_attrs[1] = a_attrs[2] = a_attrs[0]; })                                          \
    X(idx_last_eq_count, { b->num_attrs = 2; a_idxs[1] = 4; a_attrs[1] = a_attrs[0]; })                   \
    X(idx_per_copy_zeros, { b->num_attrs = 4; for (int i = 0; i < 4; i++) { a_idxs[i] = 0;                \
                            a_attrs[i] = a_attrs[0]; } })                                                 \
    X(idx_per_copy_iota, { b->num_attrs = 4; for (int i = 0; i < 4; i++) { a_idxs[i] = (size_t)i;         \
                           a_attrs[i] = a_attrs[0]; } })                                                  \
    X(size0_one, { a_sizes[2] = 0; })                                                                     \
    X(size0_all, { for (int i = 0; i < 4; i++) a_sizes[i] = 0; })                                         \
    X(stream_null, { b->stream = NULL; })                                                                 \
    X(stream_legacy, { b->stream = CU_STREAM_LEGACY; })                                                   \
    X(stream_ptds, { b->stream = CU_STREAM_PER_THREAD; })                                                 \
    X(order0, { a_attrs[0].srcAccessOrder = 0; })                                                         \
    X(order4, { a_attrs[0].srcAccessOrder = 4; })                                                         \
    X(order7, { a_attrs[0].srcAccessOrder = 7; })                                                         \
    X(order_during, { a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; })          \
    X(order_any, { a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY; })                         \
    X(order0_second_attr, { b->num_attrs = 2; a_idxs[1] = 2; a_attrs[1] = a_attrs[0];                     \
                            a_attrs[1].srcAccessOrder = 0; })                                             \
    X(flags1, { a_attrs[0].flags = 1; })                                                                  \
    X(flags2, { a_attrs[0].flags = 2; })                                                                  \
    X(flags80, { a_attrs[0].flags = 0x80; })                                                              \
    X(lochint_type9, { a_attrs[0].srcLocHint.type = 9; a_attrs[0].dstLocHint.type = 9; })                 \
    X(lochint_dev77, { a_attrs[0].srcLocHint.id = 77; a_attrs[0].dstLocHint.id = 77; })                   \
    X(lochint_host, { a_attrs[0].srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST;                             \
                      a_attrs[0].dstLocHint.type = CU_MEM_LOCATION_TYPE_HOST; })                          \
    X(lochint_numa, { a_attrs[0].srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;                        \
                      a_attrs[0].dstLocHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; })                     \
    X(lochint_numa_current, { a_attrs[0].srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;        \
                              a_attrs[0].dstLocHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; })     \
    X(lochint_dev_neg, { a_attrs[0].srcLocHint.id = -1; })                                                \
    X(lochint_none_id77, { memset(&a_attrs[0].srcLocHint, 0, sizeof a_attrs[0].srcLocHint);               \
                           a_attrs[0].srcLocHint.id = 77; })                                              \
    X(lochint_dst_type9, { a_attrs[0].dstLocHint.type = 9; })                                             \
    X(lochint_src_dev77_second_attr, { b->num_attrs = 2; a_idxs[1] = 2; a_attrs[1] = a_attrs[0];          \
                                       a_attrs[1].srcLocHint.id = 77; })                                  \
    X(managed_lochint_dev, { for (int i = 0; i < 4; i++) { a_srcs[i] = msrc + i * SLOT;                   \
                             a_dsts[i] = mdst + i * SLOT; } })                                            \
    X(managed_lochint_type9, { for (int i = 0; i < 4; i++) { a_srcs[i] = msrc + i * SLOT;                 \
                               a_dsts[i] = mdst + i * SLOT; }                                             \
                               a_attrs[0].srcLocHint.type = 9; a_attrs[0].dstLocHint.type = 9; })         \
    X(managed_lochint_dev77, { for (int i = 0; i < 4; i++) { a_srcs[i] = msrc + i * SLOT;                 \
                               a_dsts[i] = mdst + i * SLOT; }                                             \
                               a_attrs[0].srcLocHint.id = 77; a_attrs[0].dstLocHint.id = 77; })           \
    X(managed_lochint_zeroed, { for (int i = 0; i < 4; i++) { a_srcs[i] = msrc + i * SLOT;                \
                                a_dsts[i] = mdst + i * SLOT; }                                            \
                                memset(&a_attrs[0].srcLocHint, 0, sizeof a_attrs[0].srcLocHint);          \
                                memset(&a_attrs[0].dstLocHint, 0, sizeof a_attrs[0].dstLocHint); })       \
    X(src_null, { a_srcs[1] = 0; })                                                                       \
    X(dst_null, { a_dsts[1] = 0; })                                                                       \
    X(src_unmapped, { a_srcs[1] = 0xdead0000; })                                                          \
    X(dst_unmapped, { a_dsts[1] = 0xdead0000; })                                                          \
    X(h2d_pinned, { host_side(b, 1, pinned_src); })                                                       \
    X(d2h_pinned, { host_side(b, 0, pinned_dst); })                                                       \
    X(h2d_pageable_stream, { host_side(b, 1, pageable_src); })                                            \
    X(h2d_pageable_during, { host_side(b, 1, pageable_src);                                               \
                             a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; })    \
    X(h2d_pageable_any, { host_side(b, 1, pageable_src);                                                  \
                          a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY; })                  \
    X(d2h_pageable_stream, { host_side(b, 0, pageable_dst); })                                            \
    X(h2h_pageable, { host_side(b, 1, pageable_src); host_side(b, 0, pageable_dst); })                    \
    X(h2h_pinned, { host_side(b, 1, pinned_src); host_side(b, 0, pinned_dst); })                          \
    X(deferred_pageable_stream, { host_side(b, 1, pageable_src); b->deferred = 1; })                      \
    X(deferred_pageable_during, { host_side(b, 1, pageable_src); b->deferred = 1;                         \
                                  a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; }) \
    X(deferred_pageable_any, { host_side(b, 1, pageable_src); b->deferred = 1;                            \
                               a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY; })             \
    X(deferred_pinned_stream, { host_side(b, 1, pinned_src); b->deferred = 1; })                          \
    X(deferred_pinned_during, { host_side(b, 1, pinned_src); b->deferred = 1;                             \
                                a_attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; }) \
    X(past_alloc, { a_dsts[3] = ddst + BUF - 1024; })                                                     \
    X(past_alloc_src, { a_srcs[3] = dsrc + BUF - 1024; })                                                 \
    X(inside_big, { a_sizes[0] = 1 << 20; a_dsts[0] = ddst + (1 << 22); b->count = 1; })                  \
    X(overlap_dst, { a_dsts[1] = a_dsts[0] + 1024; b->check_data = 0; })                                  \
    X(same_src_dst, { a_dsts[1] = a_srcs[1]; b->check_data = 0; })                                        \
    X(bad_third_size0, { a_sizes[2] = 0; })                                                               \
    X(bad_third_srcnull, { a_srcs[2] = 0; })                                                              \
    X(bad_third_pastalloc, { a_dsts[2] = ddst + BUF - 1024; })                                            \
    X(bad_last_of_1000, { b->count = 1000; base_more(b, 1000); a_srcs[999] = 0; })                        \
    X(big_1000, { b->count = 1000; base_more(b, 1000); })                                                 \
    X(hole_count0, { b->count = 0; all_holed(b); })                                                       \
    X(hole_numattrs0, { b->num_attrs = 0; all_holed(b); })                                                \
    X(hole_numattrs_gt, { b->num_attrs = 5; all_holed(b); })                                              \
    X(hole_stream_null, { b->stream = NULL; all_holed(b); })                                              \
    X(hole_stream_legacy, { b->stream = CU_STREAM_LEGACY; all_holed(b); })                                \
    X(hole_copies_idx0_bad, { a_idxs[0] = 1; holed(b, "dsts", 0); holed(b, "srcs", 0);                    \
                              holed(b, "sizes", 0); })                                                    \
    X(hole_copies_order0, { a_attrs[0].srcAccessOrder = 0; holed(b, "dsts", 0); holed(b, "srcs", 0);      \
                            holed(b, "sizes", 0); })                                                      \
    X(hole_copies_flags2, { a_attrs[0].flags = 2; holed(b, "dsts", 0); holed(b, "srcs", 0);               \
                            holed(b, "sizes", 0); })                                                      \
    X(hole_attrs_idx_decreasing, { b->num_attrs = 3; a_idxs[1] = 3; a_idxs[2] = 1;                        \
                                   a_attrs[1] = a_attrs[2] = a_attrs[0]; holed(b, "idxs", 2);             \
                                   holed(b, "attrs", 0); })                                               \
    X(hole_attrs_only1, { holed(b, "attrs", 1); holed(b, "idxs", 1); })                                   \
    X(hole_attrs_before_idx, { b->num_attrs = 2; a_idxs[1] = 2; a_attrs[1] = a_attrs[0];                  \
                               holed(b, "attrs", 1); })                                                   \
    X(hole_idx_before_attrs, { b->num_attrs = 2; a_idxs[1] = 2; a_attrs[1] = a_attrs[0];                  \
                               holed(b, "idxs", 1); })                                                    \
    X(hole_after_size0, { b->count = 1000; base_more(b, 1000); a_sizes[1] = 0; holed(b, "sizes", 2); })   \
    X(hole_after_srcnull, { b->count = 1000; base_more(b, 1000); a_srcs[1] = 0; holed(b, "srcs", 2); })   \
    X(hole_after_srcnull_dsts, { b->count = 1000; base_more(b, 1000); a_srcs[1] = 0; holed(b, "dsts", 2); }) \
    X(hole_after_srcnull_sizes, { b->count = 1000; base_more(b, 1000); a_srcs[1] = 0; holed(b, "sizes", 2); }) \
    X(hole_after_valid, { b->count = 1000; base_more(b, 1000); holed(b, "dsts", 2); })                    \
    X(hole_sizes_after_valid, { b->count = 1000; base_more(b, 1000); holed(b, "sizes", 2); })             \
    X(hole_srcs_after_valid, { b->count = 1000; base_more(b, 1000); holed(b, "srcs", 2); })

/* 1000 copies of 4 KiB still fit: SLOT * 1000 < BUF. */
static void base_more(struct batch *b, size_t n)
{
    base(b, n);
    b->check_data = n <= MAXC;
}

#define ROW_FN(name, body) \
    static void row_##name(struct batch *b) { body; }
ROWS(ROW_FN)
#define ROW_ENTRY(name, body) {#name, row_##name},
static const struct {
    const char *name;
    void (*fn)(struct batch *);
} rows[] = {ROWS(ROW_ENTRY)};
#define NROWS (sizeof rows / sizeof rows[0])

static const char *err_name(CUresult r)
{
    const char *s = NULL;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

static unsigned char pat(size_t off) { return (unsigned char)(off * 7 + 3 + off / 4096); }

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&g_stream, CU_STREAM_NON_BLOCKING))
        _exit(42);
    if (cuMemAlloc(&ddst, BUF) || cuMemAlloc(&dsrc, BUF) || cuMemAllocManaged(&mdst, BUF, CU_MEM_ATTACH_GLOBAL) ||
        cuMemAllocManaged(&msrc, BUF, CU_MEM_ATTACH_GLOBAL) || cuMemAllocHost((void **)&pinned_src, BUF) ||
        cuMemAllocHost((void **)&pinned_dst, BUF))
        _exit(43);
    pageable_src = malloc(BUF);
    pageable_dst = malloc(BUF);
    if (!pageable_src || !pageable_dst)
        _exit(44);
    for (size_t i = 0; i < BUF; i++)
        pinned_src[i] = pageable_src[i] = ((unsigned char *)(uintptr_t)msrc)[i] = pat(i);
    memset(pinned_dst, 0, BUF);
    memset(pageable_dst, 0, BUF);
    memset((void *)(uintptr_t)mdst, 0, BUF);
    if (cuMemcpyHtoD(dsrc, pinned_src, BUF) || cuMemsetD8(ddst, 0, BUF) || cuCtxSynchronize())
        _exit(45);
}

/* The offset of `p` in one of the source buffers, or -1. */
static long src_off(CUdeviceptr p)
{
    CUdeviceptr bases[] = {dsrc, msrc, (CUdeviceptr)(uintptr_t)pinned_src, (CUdeviceptr)(uintptr_t)pageable_src};
    for (int k = 0; k < 4; k++)
        if (p >= bases[k] && p < bases[k] + BUF)
            return (long)(p - bases[k]);
    return -1;
}

static int is_dst(CUdeviceptr p, size_t n)
{
    CUdeviceptr bases[] = {ddst, mdst, (CUdeviceptr)(uintptr_t)pinned_dst, (CUdeviceptr)(uintptr_t)pageable_dst};
    for (int k = 0; k < 4; k++)
        if (p >= bases[k] && p + n <= bases[k] + BUF)
            return 1;
    return 0;
}

static unsigned char tmp[1 << 20];

/* One character per copy (up to 64): did it arrive? */
static void arrived(const struct batch *b, char *out)
{
    size_t n = b->count < 64 ? b->count : 64;
    for (size_t i = 0; i < n; i++) {
        long so = src_off(a_srcs[i]);
        size_t len = a_sizes[i];
        if (!b->check_data || so < 0 || len == 0 || len > sizeof tmp || !is_dst(a_dsts[i], len) ||
            (size_t)so + len > BUF) {
            out[i] = '-';
            continue;
        }
        if (cuMemcpyDtoH(tmp, a_dsts[i], len) != CUDA_SUCCESS) {
            out[i] = '?';
            continue;
        }
        int same = 1;
        for (size_t k = 0; k < len && same; k++)
            same = tmp[k] == pat((size_t)so + k);
        out[i] = same ? '1' : '0';
    }
    out[n] = 0;
}

static void CUDA_CB sleeper(void *arg)
{
    (void)arg;
    usleep(300000);
}

static void child(int row, enum door door, int fd)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    pg = sysconf(_SC_PAGESIZE);
    setup();
    struct batch b;
    base(&b, 4);
    rows[row].fn(&b);
    size_t fidx = FAIL_PRESET;
    int has_fidx = 0;
    if (b.deferred && cuLaunchHostFunc(g_stream, sleeper, NULL) != CUDA_SUCCESS)
        _exit(47);
    CUresult r;
    switch (door) {
    case D_V2:
        r = cuMemcpyBatchAsync_v2(b.dsts, b.srcs, b.sizes, b.count, b.attrs, b.idxs, b.num_attrs, b.stream);
        break;
    case D_V1:
        has_fidx = 1;
        r = cuMemcpyBatchAsync(b.dsts, b.srcs, b.sizes, b.count, b.attrs, b.idxs, b.num_attrs, &fidx, b.stream);
        break;
    case D_V1NULL:
        r = cuMemcpyBatchAsync(b.dsts, b.srcs, b.sizes, b.count, b.attrs, b.idxs, b.num_attrs, NULL, b.stream);
        break;
    case D_V2AS1:
        r = ((v1_fn)(void *)cuMemcpyBatchAsync_v2)(b.dsts, b.srcs, b.sizes, b.count, b.attrs, b.idxs, b.num_attrs,
                                                   &fidx, b.stream);
        has_fidx = 1;
        break;
    default: {
        void *ninth = door == D_V1AS2_0 ? NULL : door == D_V1AS2_S ? (void *)b.stream : (void *)0xdeadbeefUL;
        r = ((v1_fn)(void *)cuMemcpyBatchAsync)(b.dsts, b.srcs, b.sizes, b.count, b.attrs, b.idxs, b.num_attrs,
                                                (size_t *)(void *)b.stream, (CUstream)ninth);
        break;
    }
    }
    if (b.deferred) /* the sources of these rows are host memory */
        for (size_t i = 0; i < b.count; i++)
            memset((void *)(uintptr_t)a_srcs[i], 0xee, a_sizes[i]);
    CUresult rs = cuStreamSynchronize(g_stream);
    CUresult rc2 = cuCtxSynchronize();
    char arr[80];
    arrived(&b, arr);
    char line[300];
    char fbuf[32] = "-";
    if (has_fidx)
        snprintf(fbuf, sizeof fbuf, "%zd", (ssize_t)fidx);
    int n = snprintf(line, sizeof line, "kind=result rc=%d rcname=%s failidx=%s sync=%s ctxsync=%s arrived=%s\n",
                     (int)r, err_name(r), fbuf, err_name(rs), err_name(rc2), arr[0] ? arr : "-");
    if (write(fd, line, (size_t)n) != n)
        _exit(46);
    _exit(0);
}

struct job {
    size_t slot; /* index in the work list */
    int row;
    enum door door;
    pid_t pid;
    int fd;
    double start;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The line of a finished job, kept until every job before it is printed. */
static void finish(struct job *j, int st, int timed_out, char *line, size_t cap)
{
    char buf[300] = "";
    ssize_t n = read(j->fd, buf, sizeof buf - 1);
    close(j->fd);
    int k = snprintf(line, cap, "ROW %s door=%s pid=%d ", rows[j->row].name, door_names[j->door], (int)j->pid);
    if (timed_out)
        snprintf(line + k, cap - (size_t)k, "kind=timeout\n");
    else if (n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        snprintf(line + k, cap - (size_t)k, "%.*s", (int)n, buf);
    else if (WIFSIGNALED(st))
        snprintf(line + k, cap - (size_t)k, "kind=signal sig=%d\n", WTERMSIG(st));
    else
        snprintf(line + k, cap - (size_t)k, "kind=setup code=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "list")) {
        for (size_t i = 0; i < NROWS; i++)
            printf("%s\n", rows[i].name);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "run")) {
        fprintf(stderr, "usage: table1d list | table1d run [ROW[@DOOR]...]\n");
        return 2;
    }
    /* the work: every row through v2 and v1, the mixed-up signatures on a few */
    struct job *todo = calloc(NROWS * 8 + 16, sizeof *todo);
    size_t nt = 0;
    for (size_t i = 0; i < NROWS; i++) {
        int wanted = argc == 2;
        const char *want_door = NULL;
        for (int a = 2; a < argc && !wanted; a++) {
            const char *at = strchr(argv[a], '@');
            size_t len = at ? (size_t)(at - argv[a]) : strlen(argv[a]);
            if (len == strlen(rows[i].name) && !strncmp(argv[a], rows[i].name, len)) {
                wanted = 1;
                want_door = at ? at + 1 : NULL;
            }
        }
        if (!wanted)
            continue;
        for (int d = 0; d <= D_V1AS2_X; d++) {
            int mixed = d >= D_V1NULL;
            if (want_door ? strcmp(want_door, door_names[d]) != 0
                          : mixed && strcmp(rows[i].name, "valid") && strcmp(rows[i].name, "order0") &&
                                strcmp(rows[i].name, "stream_ptds") && strcmp(rows[i].name, "size0_one"))
                continue;
            todo[nt].slot = nt;
            todo[nt].row = (int)i;
            todo[nt].door = (enum door)d;
            nt++;
        }
    }
    int par = getenv("TABLE1D_JOBS") ? atoi(getenv("TABLE1D_JOBS")) : 6;
    struct job *run = calloc((size_t)par, sizeof *run);
    size_t next = 0, done = 0, printed = 0;
    enum { LINE = 400 };
    char *lines = calloc(nt ? nt : 1, LINE);
    int active = 0;
    while (done < nt) {
        while (active < par && next < nt) {
            int p[2];
            if (pipe(p) != 0)
                return 3;
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                close(p[0]);
                child(todo[next].row, todo[next].door, p[1]);
            }
            close(p[1]);
            for (int k = 0; k < par; k++)
                if (!run[k].pid) {
                    run[k] = todo[next];
                    run[k].pid = pid;
                    run[k].fd = p[0];
                    run[k].start = now();
                    break;
                }
            next++;
            active++;
        }
        usleep(2000);
        for (int k = 0; k < par; k++) {
            if (!run[k].pid)
                continue;
            int st = 0;
            pid_t w = waitpid(run[k].pid, &st, WNOHANG);
            int to = 0;
            if (w == 0 && now() - run[k].start > 60) {
                kill(run[k].pid, SIGKILL);
                waitpid(run[k].pid, &st, 0);
                to = 1;
            } else if (w == 0) {
                continue;
            }
            finish(&run[k], st, to, lines + run[k].slot * LINE, LINE);
            run[k].pid = 0;
            active--;
            done++;
            while (printed < nt && lines[printed * LINE]) {
                fputs(lines + printed * LINE, stdout);
                printed++;
            }
            fflush(stdout);
        }
    }
    return 0;
}
