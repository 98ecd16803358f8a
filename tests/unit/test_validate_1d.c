/* SPDX-License-Identifier: MIT */
/*
 * The validator on the 1D batch (cuMemcpyBatchAsync): every 1D rule fires
 * on one case and not on the valid one, attribute errors keep the copies
 * unexamined, copies are exact 1D intervals for the overlap rules, and the
 * reference over random batches agrees with a pairwise check.
 */
#include "vtest.h"

#include <stdlib.h>

static struct cbt_validator *V;
static struct vt_res R;

#define DEV_A 0x7f0000000000ull
#define DEV_B 0x7f1000000000ull
#define N 6

static CUdeviceptr dsts[N], srcs[N];
static size_t sizes[N], idxs[N];
static CUmemcpyAttributes attrs[N];
static CUDA_MEMCPY3D_BATCH_OP ops[N];
static struct cbt_operand_info si[N], di[N];
static struct cbt_batch_view B;
static size_t count, num_attrs;

static CUmemcpyAttributes attr(unsigned order)
{
    CUmemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = (CUmemcpySrcAccessOrder)order;
    return a;
}

/* Rebuild the view from the arrays (as the shim and the reader do: copies as ops). */
static void view(void)
{
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        while (k + 1 < num_attrs && idxs[k + 1] <= i)
            k++;
        cbt_copy_op(&ops[i], dsts[i], srcs[i], sizes[i], &attrs[k]);
    }
    B = vt_batch(count, ops, si, di);
    B.copies = 1;
    B.dsts = dsts;
    B.srcs = srcs;
    B.sizes = sizes;
    B.attrs = attrs;
    B.attrs_idxs = idxs;
    B.num_attrs = num_attrs;
    B.attrs_read = num_attrs;
}

/* Four device-to-device copies of 4 KiB, two attributes {0, 2}. */
static void base(void)
{
    count = 4;
    num_attrs = 2;
    for (size_t i = 0; i < N; i++) {
        dsts[i] = DEV_B + i * 8192;
        srcs[i] = DEV_A + i * 8192;
        sizes[i] = 4096;
        si[i] = vt_mem(CBT_MEM_DEVICE, DEV_A, 64 * VT_MIB);
        di[i] = vt_mem(CBT_MEM_DEVICE, DEV_B, 64 * VT_MIB);
        attrs[i] = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        idxs[i] = 0;
    }
    idxs[1] = 2;
    view();
}

static void expect(const char *what, unsigned rule, uint64_t op, uint64_t other, unsigned side, uint64_t value,
                   uint64_t limit)
{
    vt_expect(V, &B, &R, what, rule, op, other, side, value, limit);
}

static void expect_clean(const char *what) { vt_expect_clean(V, &B, &R, what); }

/* Only these rules, in this order. */
static void expect_only(const char *what, int n, const unsigned *rules)
{
    vt_run(V, &B, &R);
    int good = (int)R.n == n;
    for (int i = 0; good && i < n; i++)
        good = R.f[i].rule == rules[i];
    if (!tap_ok(good, "%s", what))
        vt_dump(&R);
}

int main(void)
{
    V = cbt_validator_new();
    if (!V)
        tap_skip_all("out of memory");

    base();
    expect_clean("four D2D copies under two attributes {0, 2}: no finding");

    /* ---- the arguments ---- */
    base();
    B.num_ops = 0;
    expect("count 0", CBT_RULE_num_ops_zero, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 1);
    base();
    B.srcs = NULL;
    B.attrs_idxs = NULL;
    expect("srcs and attrsIdxs NULL: one finding, a bit each", CBT_RULE_copy_array_null, CBT_NO_OP, CBT_NO_OP,
           CBT_SIDE_NONE, 2 | 16, 0);
    base();
    B.num_attrs = 0;
    expect("numAttrs 0", CBT_RULE_num_attrs_zero, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 1);
    base();
    B.num_attrs = 5;
    expect("numAttrs 5 above count 4", CBT_RULE_num_attrs_above_count, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 5, 4);
    base();
    B.stream = NULL;
    expect("a NULL stream", CBT_RULE_stream_null, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 0);
    base();
    B.stream = CU_STREAM_PER_THREAD;
    expect_clean("CU_STREAM_PER_THREAD is a stream the 1D call accepts");
    base();
    B.abi = CBT_ABI_STREAM_ON_STACK;
    B.stream = (CUstream)(uintptr_t)0x7ffc00001000ull;
    expect("the stream on the caller's stack", CBT_RULE_stream_on_stack, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE,
           0x7ffc00001000ull, 0);
    base();
    B.abi = CBT_ABI_FAIL_IDX_IS_STREAM;
    expect("failIdx that names a stream", CBT_RULE_fail_idx_is_stream, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 0);
    base();
    B.num_attrs = 0;
    attrs[0].srcAccessOrder = 0;
    sizes[1] = 0;
    B.attrs_read = 0;
    {
        static const unsigned only[] = {CBT_RULE_num_attrs_zero};
        expect_only("an argument error: neither attributes nor copies are examined", 1, only);
    }

    /* ---- the attributes ---- */
    base();
    idxs[0] = 1;
    view();
    expect("attrsIdxs[0] 1", CBT_RULE_attrs_idx_first_not_zero, CBT_NO_OP, 0, CBT_SIDE_NONE, 1, 0);
    base();
    idxs[1] = 0;
    view();
    expect("attrsIdxs {0, 0}: not increasing (limit: at least 1)", CBT_RULE_attrs_idxs_not_start_indices,
           CBT_NO_OP, 1, CBT_SIDE_NONE, 0, 1);
    base();
    idxs[1] = 4;
    view();
    expect("attrsIdxs {0, 4} with count 4: past the copies", CBT_RULE_attrs_idxs_not_start_indices, CBT_NO_OP, 1,
           CBT_SIDE_NONE, 4, 4);
    /* the misreading seen in public code: one attribute per copy, every index 0 */
    base();
    num_attrs = 4;
    for (int i = 0; i < 4; i++)
        idxs[i] = 0;
    view();
    vt_run(V, &B, &R);
    tap_ok(vt_count(&R, CBT_RULE_attrs_idxs_not_start_indices) == 3 && R.n == 3,
           "attrs_idxs_not_start_indices: attrsIdxs {0,0,0,0} (one entry per copy, all 0) names attributes 1, 2, 3");
    base();
    num_attrs = 4;
    for (int i = 0; i < 4; i++)
        idxs[i] = (size_t)i;
    view();
    expect_clean("attrsIdxs {0,1,2,3}: one attribute per copy, correctly");
    base();
    attrs[1].srcAccessOrder = 0;
    view();
    expect("attrs[1] order 0", CBT_RULE_attr_access_order_invalid, CBT_NO_OP, 1, CBT_SIDE_NONE, 0, CBT_ORDER_ANY);
    base();
    attrs[0].flags = 2;
    view();
    expect("attrs[0] flags 2", CBT_RULE_attr_flags_invalid, CBT_NO_OP, 0, CBT_SIDE_NONE, 2, 1);
    base();
    attrs[1].dstLocHint.type = (CUmemLocationType)9;
    view();
    expect("attrs[1] dst locHint type 9, on device memory", CBT_RULE_attr_lochint_invalid, CBT_NO_OP, 1,
           CBT_SIDE_DST, 9, CBT_LOC_HOST_NUMA_CURRENT);
    base();
    attrs[0].srcLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    attrs[0].srcLocHint.id = 77;
    view();
    expect("attrs[0] src locHint DEVICE 77 of 8 devices", CBT_RULE_attr_lochint_invalid, CBT_NO_OP, 0,
           CBT_SIDE_SRC, 77, 8);
    base();
    attrs[0].srcLocHint.type = CU_MEM_LOCATION_TYPE_INVALID;
    attrs[0].srcLocHint.id = 77;
    attrs[1].dstLocHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    view();
    expect_clean("a locHint of type 0 with any id, and HOST_NUMA_CURRENT, are accepted");
    base();
    attrs[1].flags = 4;
    sizes[0] = 0;
    view();
    {
        static const unsigned only[] = {CBT_RULE_attr_flags_invalid};
        expect_only("an attribute error: the copies are not examined (size 0 unreported)", 1, only);
    }

    /* ---- the copies ---- */
    base();
    sizes[2] = 0;
    view();
    expect("copy 2 of size 0", CBT_RULE_copy_size_zero, 2, CBT_NO_OP, CBT_SIDE_NONE, 0, 1);
    vt_run(V, &B, &R);
    tap_ok(vt_count(&R, CBT_RULE_extent_zero) == 0, "copy_size_zero: not reported as extent_zero too");
    base();
    srcs[1] = 0;
    view();
    expect("copy 1's source NULL", CBT_RULE_pointer_null, 1, CBT_NO_OP, CBT_SIDE_SRC, 0, 0);
    base();
    dsts[3] = DEV_B + 64 * VT_MIB - 1024;
    view();
    expect("copy 3 runs 3 KiB past its allocation", CBT_RULE_device_out_of_bounds, 3, CBT_NO_OP, CBT_SIDE_DST,
           64 * VT_MIB + 3072, 64 * VT_MIB);
    base();
    si[1] = vt_mem(CBT_MEM_UNMAPPED, 0, 0);
    expect("copy 1's source unmapped", CBT_RULE_pointer_unmapped, 1, CBT_NO_OP, CBT_SIDE_SRC, srcs[1], 0);
    base();
    B.partial = 1;
    B.num_read = 2;
    sizes[1] = 0;
    view();
    B.partial = 1;
    B.num_read = 2;
    {
        static const unsigned only[] = {CBT_RULE_ops_not_read, CBT_RULE_copy_size_zero};
        expect_only("2 of 4 copies read, the second of size 0: ops_not_read, then copy_size_zero", 2, only);
    }
    base();
    attrs[0].dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    view();
    expect_clean("a valid locHint on device memory: no lochint_ignored for the 1D call (it is per attribute)");
    base();
    si[0] = vt_mem(CBT_MEM_HOST_PAGEABLE, 0, 0);
    expect("copy 0 from pageable memory with STREAM order", CBT_RULE_pageable_stream_order, 0, CBT_NO_OP,
           CBT_SIDE_SRC, CBT_ORDER_STREAM, 0);

    /* ---- overlaps: exact intervals ---- */
    base();
    dsts[1] = dsts[0] + 4096; /* adjacent, not overlapping */
    view();
    expect_clean("two destinations that touch end to start do not overlap");
    base();
    dsts[1] = dsts[0] + 4095; /* one byte shared */
    view();
    expect("two destinations sharing one byte", CBT_RULE_overlap_dst_dst, 0, 1, CBT_SIDE_DST, dsts[0] + 4095, 0);
    base();
    srcs[2] = dsts[3] + 100;
    si[2] = di[3];
    view();
    expect("copy 2 reads what copy 3 writes", CBT_RULE_overlap_src_dst, 3, 2, CBT_SIDE_DST, dsts[3] + 100, 0);

    /* random batches against a pairwise reference */
    srand(7);
    int agree = 1;
    for (int t = 0; t < 2000 && agree; t++) {
        base();
        for (int i = 0; i < 4; i++) {
            dsts[i] = DEV_B + (uint64_t)(rand() % 64) * 64;
            srcs[i] = DEV_A + (uint64_t)(rand() % 64) * 64;
            sizes[i] = 1 + (size_t)(rand() % 300);
        }
        view();
        vt_run(V, &B, &R);
        size_t want = 0;
        for (int i = 0; i < 4; i++) {
            int hit = 0;
            for (int j = i + 1; j < 4; j++)
                hit |= dsts[i] < dsts[j] + sizes[j] && dsts[j] < dsts[i] + sizes[i];
            want += hit;
        }
        agree = vt_count(&R, CBT_RULE_overlap_dst_dst) == want;
        if (!agree)
            vt_dump(&R);
    }
    tap_ok(agree, "overlap_dst_dst: 2000 random batches of 4 copies agree with a pairwise interval check");

    cbt_validator_free(V);
    return tap_done();
}
