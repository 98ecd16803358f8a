/* SPDX-License-Identifier: MIT */
/*
 * Validation and strict mode.  Linked to libcuda; the batch is called through
 * the linked cuMemcpy3DBatchAsync_v2 and cuMemcpy3DBatchAsync (12.8 ABI).
 * fakecuda_batch_calls() (the test double's count of calls that reached it,
 * found with dlsym) tells whether a batch was forwarded.
 *
 *   client_strict refuse   a batch whose op 1 is bad, by both ABIs, then a good one
 *   client_strict overlap  two ops writing the same bytes (a hazard, no error)
 *   client_strict crash    a source at the unmapped address 0xdead0000
 *   client_strict guard    a source in a mapped page that cannot be read (PROT_NONE)
 *   client_strict table    the H200 accept/reject table, one batch per case
 *   client_strict report   the same bad batch twice from one call site, once from another
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>

#undef cuMemcpy3DBatchAsync
CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                              unsigned long long flags, CUstream hStream);

static unsigned long long (*batch_calls)(void);

static unsigned long long reached(void) { return batch_calls ? batch_calls() : 0; }

static CUstream stream;

/* ---- refuse ---- */

static int do_refuse(void)
{
    struct cc_buf *src = cc_buf_new(CC_DEVICE, 4096), *dst = cc_buf_new(CC_DEVICE, 4096);
    struct cc_batch bt = {0};
    cc_blocks(&bt, src, dst, 3, 1024);
    bt.ops[1].src.op.ptr.rowLength = 100; /* < width 1024: row_length_too_small */
    unsigned long long before = reached();
    CUresult r = cuMemcpy3DBatchAsync_v2(bt.n, bt.ops, 0, stream);
    printf("v2 bad op 1: result=%d forwarded=%llu\n", (int)r, reached() - before);
    size_t fail = 12345;
    before = reached();
    r = cuMemcpy3DBatchAsync(bt.n, bt.ops, &fail, 0, stream);
    printf("12.8 bad op 1: result=%d fail_idx=%zu forwarded=%llu\n", (int)r, fail, reached() - before);
    bt.ops[1].src.op.ptr.rowLength = 0;
    before = reached();
    r = cuMemcpy3DBatchAsync_v2(bt.n, bt.ops, 0, stream);
    printf("v2 good: result=%d forwarded=%llu\n", (int)r, reached() - before);
    cc_buf_free(src), cc_buf_free(dst); /* LeakSanitizer (scripts/check-sanitizers) */
    return 0;
}

/* ---- overlap ---- */

static int do_overlap(void)
{
    struct cc_buf *src = cc_buf_new(CC_DEVICE, 4096), *dst = cc_buf_new(CC_DEVICE, 4096);
    struct cc_batch bt = {0};
    cc_add(&bt, src, cc_ptr(src, 0, 0, 0), dst, cc_ptr(dst, 0, 0, 0), 1024, 1, 1);
    cc_add(&bt, src, cc_ptr(src, 2048, 0, 0), dst, cc_ptr(dst, 512, 0, 0), 1024, 1, 1); /* writes 512..1535 again */
    unsigned long long before = reached();
    CUresult r = cuMemcpy3DBatchAsync_v2(bt.n, bt.ops, 0, stream);
    printf("overlapping destinations: result=%d forwarded=%llu\n", (int)r, reached() - before);
    cc_buf_free(src), cc_buf_free(dst); /* LeakSanitizer (scripts/check-sanitizers) */
    return 0;
}

/* ---- crash ---- */

static int do_crash(bool guard)
{
    struct cc_buf *dst = cc_buf_new(CC_DEVICE, 4096);
    CUDA_MEMCPY3D_BATCH_OP op = cc_op(cc_ptr(dst, 0, 0, 0), cc_ptr(dst, 0, 0, 0), 256, 4, 2);
    if (guard) {
        void *p = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            cc_fail("mmap PROT_NONE");
        op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)p;
        printf("calling with src in a PROT_NONE page\n");
    } else {
        op.src.op.ptr.ptr = (CUdeviceptr)0xdead0000u;
        printf("calling with src 0xdead0000\n");
    }
    fflush(stdout);
    unsigned long long before = reached();
    CUresult r = cuMemcpy3DBatchAsync_v2(1, &op, 0, stream);
    printf("unmapped source: result=%d forwarded=%llu\n", (int)r, reached() - before);
    return 0;
}

/* ---- the accept/reject table (shared/facts/h200-driver.md) ---- */

enum { BIG = 64 << 20 };
static struct cc_buf *dev_a, *dev_b, *big, *pinned, *pageable, *managed, *f4, *f4src, *u8arr, *farr, *farr2;

/* The base case: a D2D pointer copy of extent 256x4x2. */
static CUDA_MEMCPY3D_BATCH_OP base_op(void)
{
    return cc_op(cc_ptr(dev_a, 0, 0, 0), cc_ptr(dev_b, 0, 0, 0), 256, 4, 2);
}

struct tcase {
    const char *name;
    size_t n;
    CUDA_MEMCPY3D_BATCH_OP ops[3];
    int null_list;
    unsigned long long flags;
    CUstream stream;
};

static void table_cases(struct tcase *c, size_t *count)
{
    size_t n = 0;
#define CASE(nm) (c[n] = (struct tcase){.name = nm, .n = 1, .stream = stream}, c[n].ops[0] = base_op(), &c[n++])
    struct tcase *t;
    CASE("valid");
    t = CASE("numOps = 0"); t->n = 0;
    t = CASE("opList = NULL, numOps = 1"); t->null_list = 1;
    t = CASE("flags = 1"); t->flags = 1;
    t = CASE("stream NULL"); t->stream = NULL;
    t = CASE("stream CU_STREAM_LEGACY"); t->stream = CU_STREAM_LEGACY;
    t = CASE("stream CU_STREAM_PER_THREAD"); t->stream = CU_STREAM_PER_THREAD;
    t = CASE("extent width = 0"); t->ops[0].extent.width = 0;
    t = CASE("extent depth = 0"); t->ops[0].extent.depth = 0;
    t = CASE("src rowLength 100 < width 256"); t->ops[0].src.op.ptr.rowLength = 100;
    t = CASE("src rowLength 512 >= width"); t->ops[0].src.op.ptr.rowLength = 512;
    t = CASE("dst layerHeight 2 < height 4"); t->ops[0].dst.op.ptr.layerHeight = 2;
    t = CASE("srcAccessOrder 0"); t->ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)0;
    t = CASE("srcAccessOrder 4"); t->ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)4;
    t = CASE("srcAccessOrder 7"); t->ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)7;
    t = CASE("srcAccessOrder DURING_API_CALL on device memory");
    t->ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    t = CASE("srcAccessOrder ANY on device memory"); t->ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    t = CASE("op flags 1 (PREFER_OVERLAP_WITH_COMPUTE)"); t->ops[0].flags = 1;
    t = CASE("op flags 2"); t->ops[0].flags = 2;
    t = CASE("op flags 0x80"); t->ops[0].flags = 0x80;
    t = CASE("src operand type 0"); t->ops[0].src.type = (CUmemcpy3DOperandType)0;
    t = CASE("src operand type 3"); t->ops[0].src.type = (CUmemcpy3DOperandType)3;
    t = CASE("src ptr = 0"); t->ops[0].src.op.ptr.ptr = 0;
    t = CASE("locHint DEVICE id 0 on device memory");
    t->ops[0].src.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    t = CASE("locHint type 9 on device memory"); t->ops[0].src.op.ptr.locHint.type = (CUmemLocationType)9;
    t = CASE("locHint type 99 on device memory"); t->ops[0].src.op.ptr.locHint.type = (CUmemLocationType)99;
    t = CASE("locHint device id 77 on device memory");
    t->ops[0].src.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    t->ops[0].src.op.ptr.locHint.id = 77;
    t = CASE("H2D from pinned host"); t->ops[0].src = cc_ptr(pinned, 0, 0, 0);
    t = CASE("H2D from pageable, STREAM"); t->ops[0].src = cc_ptr(pageable, 0, 0, 0);
    t = CASE("H2D from pageable, DURING_API_CALL"); t->ops[0].src = cc_ptr(pageable, 0, 0, 0);
    t->ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    t = CASE("H2D from pageable, ANY"); t->ops[0].src = cc_ptr(pageable, 0, 0, 0);
    t->ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    t = CASE("D2managed with locHint DEVICE"); t->ops[0].dst = cc_ptr(managed, 0, 0, 0);
    t->ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    t = CASE("D2D 1 MiB inside a 64 MiB allocation");
    t->ops[0] = cc_op(cc_ptr(big, 0, 0, 0), cc_ptr(big, 32 << 20, 0, 0), 1 << 20, 1, 1);
    t = CASE("D2D footprint past the end of the allocation");
    t->ops[0].src = cc_ptr(dev_a, dev_a->size - 1000, 0, 0);
    t = CASE("two ops whose destinations overlap"); t->n = 2;
    t->ops[1] = cc_op(cc_ptr(dev_a, 8192, 0, 0), cc_ptr(dev_b, 1024, 0, 0), 256, 4, 2);
    t = CASE("one bad op in the middle of three"); t->n = 3;
    t->ops[1] = cc_op(cc_ptr(dev_a, 8192, 0, 0), cc_ptr(dev_b, 8192, 0, 0), 256, 4, 2);
    t->ops[1].dst.op.ptr.layerHeight = 2;
    t->ops[2] = cc_op(cc_ptr(dev_a, 16384, 0, 0), cc_ptr(dev_b, 16384, 0, 0), 256, 4, 2);
    t = CASE("device -> float4 array 64x64x4");
    t->ops[0] = cc_op(cc_ptr(f4src, 0, 0, 0), cc_arr(f4, 0, 0, 0), 64, 64, 4);
    t = CASE("device -> float4 array, width 65");
    t->ops[0] = cc_op(cc_ptr(f4src, 0, 0, 0), cc_arr(f4, 0, 0, 0), 65, 64, 4);
    t = CASE("device -> float4 array, offset.x 1 with width 64");
    t->ops[0] = cc_op(cc_ptr(f4src, 0, 0, 0), cc_arr(f4, 1, 0, 0), 64, 64, 4);
    t = CASE("u8 array -> float array");
    t->ops[0] = cc_op(cc_arr(u8arr, 0, 0, 0), cc_arr(farr, 0, 0, 0), 16, 16, 1);
    t = CASE("float array -> float array");
    t->ops[0] = cc_op(cc_arr(farr2, 0, 0, 0), cc_arr(farr, 0, 0, 0), 16, 16, 1);
#undef CASE
    *count = n;
}

static int do_table(void)
{
    dev_a = cc_buf_new(CC_DEVICE, 64 << 10);
    dev_b = cc_buf_new(CC_DEVICE, 64 << 10);
    big = cc_buf_new(CC_DEVICE, BIG);
    pinned = cc_buf_new(CC_PINNED, 64 << 10);
    pageable = cc_buf_new(CC_PAGEABLE, 64 << 10);
    managed = cc_buf_new(CC_MANAGED, 64 << 10);
    f4 = cc_array_new(64, 64, 4, CU_AD_FORMAT_FLOAT, 4);
    f4src = cc_buf_new(CC_DEVICE, 64 * 64 * 4 * 16);
    u8arr = cc_array_new(16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1);
    farr = cc_array_new(16, 16, 0, CU_AD_FORMAT_FLOAT, 1);
    farr2 = cc_array_new(16, 16, 0, CU_AD_FORMAT_FLOAT, 1);
    static struct tcase c[64];
    size_t n;
    table_cases(c, &n);
    /* One batch per case, in order: case i is the process's batch i. */
    for (size_t i = 0; i < n; i++) {
        CUresult r = cuMemcpy3DBatchAsync_v2(c[i].n, c[i].null_list ? NULL : c[i].ops, c[i].flags, c[i].stream);
        printf("case %zu | %s | %d\n", i, c[i].name, (int)r);
    }
    return 0;
}

/* ---- report: once per (rule, call site) ---- */

static CUDA_MEMCPY3D_BATCH_OP bad_op;

/* noipa: two identical functions would otherwise be folded into one (one call site). */
static volatile int site_b_calls;

__attribute__((noipa)) static CUresult site_a(void)
{
    CUresult r = cuMemcpy3DBatchAsync_v2(1, &bad_op, 0, stream);
    __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
    return r;
}

__attribute__((noipa)) static CUresult site_b(void)
{
    site_b_calls++;
    CUresult r = cuMemcpy3DBatchAsync_v2(1, &bad_op, 0, stream);
    __asm__ volatile("" ::: "memory");
    return r;
}

static int do_report(void)
{
    struct cc_buf *a = cc_buf_new(CC_DEVICE, 4096), *b = cc_buf_new(CC_DEVICE, 4096);
    bad_op = cc_op(cc_ptr(a, 0, 100, 0), cc_ptr(b, 0, 0, 0), 256, 4, 1); /* row_length_too_small */
    for (int i = 0; i < 2; i++)
        printf("site A call %d: result=%d\n", i + 1, (int)site_a());
    printf("site B call 1: result=%d\n", (int)site_b());
    cc_buf_free(a), cc_buf_free(b);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h)
        batch_calls = (unsigned long long (*)(void))dlsym(h, "fakecuda_batch_calls");
    if (!batch_calls && strcmp(mode, "crash") && strcmp(mode, "guard") && strcmp(mode, "report"))
        cc_fail("fakecuda_batch_calls not found: run over the test double");
    cc_load_direct();
    stream = cc_setup();
    int r;
    if (!strcmp(mode, "refuse")) r = do_refuse();
    else if (!strcmp(mode, "overlap")) r = do_overlap();
    else if (!strcmp(mode, "crash")) r = do_crash(false);
    else if (!strcmp(mode, "guard")) r = do_crash(true);
    else if (!strcmp(mode, "table")) r = do_table();
    else if (!strcmp(mode, "report")) r = do_report();
    else cc_fail("usage: client_strict refuse|overlap|crash|guard|table|report");
    fflush(stdout);
    return r;
}
