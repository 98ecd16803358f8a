/* SPDX-License-Identifier: MIT */
/* Every rule of the catalogue: one case that fires it, one that must not. */
#include "vtest.h"

static struct cbt_validator *V;
static struct vt_res R;

/* The base case of the facts file: a D2D copy of 256x4x2 inside two 64 MiB allocations. */
#define SRC_BASE 0x7f0000000000ull
#define DST_BASE 0x7f1000000000ull
static CUDA_MEMCPY3D_BATCH_OP ops[4];
static struct cbt_operand_info si[4], di[4];
static struct cbt_batch_view B;

static void base(void)
{
    for (int i = 0; i < 4; i++) {
        ops[i] = vt_op(vt_ptr(SRC_BASE + (uint64_t)i * VT_MIB), vt_ptr(DST_BASE + (uint64_t)i * VT_MIB), 256, 4, 2);
        si[i] = vt_mem(CBT_MEM_DEVICE, SRC_BASE, 64 * VT_MIB);
        di[i] = vt_mem(CBT_MEM_DEVICE, DST_BASE, 64 * VT_MIB);
    }
    B = vt_batch(1, ops, si, di);
}

/* Exactly one finding of `rule`, with these fields; the description says what behaviour is checked. */
static void expect(const char *what, unsigned rule, uint64_t op, uint64_t other, unsigned side, uint64_t value,
                   uint64_t limit)
{
    vt_expect(V, &B, &R, what, rule, op, other, side, value, limit);
}

static void expect_none(const char *what, unsigned rule)
{
    vt_run(V, &B, &R);
    if (!tap_ok(vt_count(&R, rule) == 0, "%s: %s", cbt_rules[rule].name, what))
        vt_dump(&R);
}

/* No finding at all. */
static void expect_clean(const char *what) { vt_expect_clean(V, &B, &R, what); }

int main(void)
{
    V = cbt_validator_new();
    if (!V)
        tap_skip_all("out of memory");

    base();
    expect_clean("the facts file's valid D2D 256x4x2 copy has no finding");

    /* ---- batch level ---- */
    base();
    B.num_ops = 0;
    expect("numOps 0 is an error on the batch", CBT_RULE_num_ops_zero, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 1);
    base();
    expect_none("numOps 1 is fine", CBT_RULE_num_ops_zero);

    base();
    B.ops = NULL;
    expect("opList NULL with numOps 1 is an error", CBT_RULE_op_list_null, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0,
           0);
    base();
    B.ops = NULL;
    B.num_ops = 0;
    expect_none("opList NULL with numOps 0 reports only num_ops_zero", CBT_RULE_op_list_null);
    tap_ok(R.n == 1 && R.f[0].rule == CBT_RULE_num_ops_zero, "num_ops_zero: the only finding of (0, NULL)");

    base();
    B.flags = 1;
    expect("batch flags 1 is an error", CBT_RULE_flags_nonzero, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 1, 0);
    base();
    expect_none("batch flags 0 is fine", CBT_RULE_flags_nonzero);

    base();
    B.stream = NULL;
    expect("stream NULL is an error", CBT_RULE_stream_null, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 0, 0);
    base();
    B.stream = CU_STREAM_PER_THREAD;
    expect_none("CU_STREAM_PER_THREAD (0x2) is not the NULL stream", CBT_RULE_stream_null);

    base();
    B.stream = CU_STREAM_LEGACY;
    expect("CU_STREAM_LEGACY (0x1) is an error", CBT_RULE_stream_legacy, CBT_NO_OP, CBT_NO_OP, CBT_SIDE_NONE, 1, 0);
    base();
    B.stream = CU_STREAM_PER_THREAD;
    expect_none("CU_STREAM_PER_THREAD (0x2) is accepted", CBT_RULE_stream_legacy);
    tap_ok(R.n == 0, "stream_legacy: CU_STREAM_PER_THREAD batch has no finding at all");

    /* ---- per op ---- */
    base();
    ops[0].extent.height = 0;
    expect("height 0 is an error (limit names dimension 1)", CBT_RULE_extent_zero, 0, CBT_NO_OP, CBT_SIDE_NONE, 0,
           1);
    base();
    ops[0].extent.width = 0;
    ops[0].extent.depth = 0;
    expect("width 0 and depth 0 give one finding naming width", CBT_RULE_extent_zero, 0, CBT_NO_OP, CBT_SIDE_NONE,
           0, 0);
    base();
    ops[0].extent.width = ops[0].extent.height = ops[0].extent.depth = 1;
    expect_none("a 1x1x1 extent is fine", CBT_RULE_extent_zero);

    base();
    ops[0].src.op.ptr.rowLength = 100;
    expect("src rowLength 100 < width 256 is an error on src", CBT_RULE_row_length_too_small, 0, CBT_NO_OP,
           CBT_SIDE_SRC, 100, 256);
    base();
    ops[0].src.op.ptr.rowLength = 256;
    expect_none("src rowLength 256 == width is fine", CBT_RULE_row_length_too_small);
    base();
    ops[0].src.op.ptr.rowLength = 512;
    expect_clean("row_length_too_small: src rowLength 512 >= width gives no finding at all");

    base();
    ops[0].dst.op.ptr.layerHeight = 2;
    expect("dst layerHeight 2 < height 4 is an error on dst", CBT_RULE_layer_height_too_small, 0, CBT_NO_OP,
           CBT_SIDE_DST, 2, 4);
    base();
    ops[0].dst.op.ptr.layerHeight = 4;
    expect_none("dst layerHeight 4 == height is fine", CBT_RULE_layer_height_too_small);

    base();
    ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)4;
    expect("srcAccessOrder 4 is an error", CBT_RULE_access_order_invalid, 0, CBT_NO_OP, CBT_SIDE_NONE, 4, 3);
    base();
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
    expect("srcAccessOrder 0 (INVALID) is an error", CBT_RULE_access_order_invalid, 0, CBT_NO_OP, CBT_SIDE_NONE, 0,
           3);
    base();
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    expect_none("srcAccessOrder ANY is fine", CBT_RULE_access_order_invalid);

    base();
    ops[0].flags = 0x80;
    expect("op flags 0x80 is an error", CBT_RULE_op_flags_invalid, 0, CBT_NO_OP, CBT_SIDE_NONE, 0x80, 1);
    base();
    ops[0].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    expect_none("op flags PREFER_OVERLAP_WITH_COMPUTE is fine", CBT_RULE_op_flags_invalid);

    base();
    ops[0].dst.type = (CUmemcpy3DOperandType)3;
    expect("dst operand type 3 is an error on dst", CBT_RULE_operand_type_invalid, 0, CBT_NO_OP, CBT_SIDE_DST, 3, 2);
    base();
    ops[0].src.type = (CUmemcpy3DOperandType)0;
    expect("src operand type 0 is an error on src", CBT_RULE_operand_type_invalid, 0, CBT_NO_OP, CBT_SIDE_SRC, 0, 2);
    base();
    ops[0].dst = vt_arr(0xa000, 0, 0, 0);
    di[0] = vt_array_info(256, 4, 2, 4);
    expect_none("an ARRAY dst is a valid operand type", CBT_RULE_operand_type_invalid);

    base();
    ops[0].src.op.ptr.ptr = 0;
    expect("src ptr 0 is an error on src", CBT_RULE_pointer_null, 0, CBT_NO_OP, CBT_SIDE_SRC, 0, 0);
    base();
    expect_none("non-NULL pointers are fine", CBT_RULE_pointer_null);

    base();
    ops[0].src.op.ptr.ptr = 0xdead0000;
    si[0] = vt_mem(CBT_MEM_UNMAPPED, 0, 0);
    expect("src 0xdead0000, unmapped, is an error on src", CBT_RULE_pointer_unmapped, 0, CBT_NO_OP, CBT_SIDE_SRC,
           0xdead0000, 0);
    base();
    ops[0].src.op.ptr.ptr = 0xdead0000;
    si[0] = vt_mem(CBT_MEM_HOST_PAGEABLE, 0, 0);
    expect_none("src 0xdead0000 as pageable host memory is not unmapped", CBT_RULE_pointer_unmapped);
    base();
    ops[0].src.op.ptr.ptr = 0xdead0000;
    si[0] = vt_mem(CBT_MEM_UNKNOWN, 0, 0);
    expect_none("src 0xdead0000 with unknown kind stays silent", CBT_RULE_pointer_unmapped);

    base();
    ops[0].dst = vt_arr(0, 0, 0, 0);
    di[0] = vt_array_info(256, 4, 2, 1);
    expect("a NULL dst CUarray is an error on dst", CBT_RULE_array_null, 0, CBT_NO_OP, CBT_SIDE_DST, 0, 0);
    base();
    ops[0].dst = vt_arr(0xa000, 0, 0, 0);
    di[0] = vt_array_info(256, 4, 2, 1);
    expect_none("a non-NULL dst CUarray is fine", CBT_RULE_array_null);
    tap_ok(R.n == 0, "array_null: D2A 256x4x2 into a u8 array of exactly that size has no finding");

    base();
    ops[0] = vt_op(vt_ptr(SRC_BASE), vt_arr(0xa000, 0, 0, 0), 65, 64, 4);
    di[0] = vt_array_info(64, 64, 4, 16);
    expect("width 65 into a 64-wide float4 array is an error on dst", CBT_RULE_array_out_of_bounds, 0, CBT_NO_OP,
           CBT_SIDE_DST, 65, 64);
    base();
    ops[0] = vt_op(vt_arr(0xa000, 0, 1, 0), vt_ptr(DST_BASE), 64, 64, 4);
    si[0] = vt_array_info(64, 64, 4, 16);
    expect("offset.y 1 + height 64 past a 64-high array is an error on src", CBT_RULE_array_out_of_bounds, 0,
           CBT_NO_OP, CBT_SIDE_SRC, 65, 64);
    base();
    ops[0] = vt_op(vt_ptr(SRC_BASE), vt_arr(0xa000, 0, 0, 0), 64, 1, 1);
    di[0] = vt_array_info(64, 0, 0, 4);
    expect_none("a 1D array (height/depth 0) takes a 64x1x1 copy", CBT_RULE_array_out_of_bounds);
    base();
    ops[0] = vt_op(vt_ptr(SRC_BASE), vt_arr(0xa000, 0, 0, 0), 64, 64, 4);
    di[0] = vt_array_info(64, 64, 4, 16);
    expect_none("64x64x4 into a 64x64x4 array is fine", CBT_RULE_array_out_of_bounds);

    base();
    ops[0] = vt_op(vt_arr(0xa000, 0, 0, 0), vt_arr(0xb000, 0, 0, 0), 8, 8, 1);
    si[0] = vt_array_info(8, 8, 0, 1);
    di[0] = vt_array_info(8, 8, 0, 4);
    expect("u8 array -> float array is an error", CBT_RULE_array_element_size_mismatch, 0, CBT_NO_OP, CBT_SIDE_NONE,
           1, 4);
    base();
    ops[0] = vt_op(vt_arr(0xa000, 0, 0, 0), vt_arr(0xb000, 0, 0, 0), 8, 8, 1);
    si[0] = vt_array_info(8, 8, 0, 4);
    di[0] = vt_array_info(8, 8, 0, 4);
    expect_none("float array -> float array is fine", CBT_RULE_array_element_size_mismatch);
    base();
    ops[0] = vt_op(vt_arr(0xa000, 0, 0, 0), vt_arr(0xb000, 0, 0, 0), 8, 8, 1);
    si[0] = vt_array_info(8, 8, 0, 0);
    di[0] = vt_array_info(8, 8, 0, 4);
    expect_none("an unknown element size cannot mismatch", CBT_RULE_array_element_size_mismatch);

    base();
    ops[0].src.op.ptr.ptr = SRC_BASE + 64 * VT_MIB - 1000;
    /* end = ptr + ((2-1)*4 + 3)*256 + 256 = ptr + 2048: offset 64 MiB + 1048 */
    expect("a src footprint 1048 bytes past the 64 MiB allocation is an error on src",
           CBT_RULE_device_out_of_bounds, 0, CBT_NO_OP, CBT_SIDE_SRC, 64 * VT_MIB + 1048, 64 * VT_MIB);
    base();
    ops[0].dst.op.ptr.ptr = DST_BASE - 16;
    expect("a dst below its allocation's base is an error on dst", CBT_RULE_device_out_of_bounds, 0, CBT_NO_OP,
           CBT_SIDE_DST, DST_BASE - 16, DST_BASE);
    base();
    ops[0].src.op.ptr.ptr = SRC_BASE + 64 * VT_MIB - 2048;
    expect_none("a src footprint ending exactly at the allocation's end is fine", CBT_RULE_device_out_of_bounds);
    base();
    ops[0].src = vt_pitched(SRC_BASE + 64 * VT_MIB - 2048, 512, 0);
    expect("rowLength 512 doubles the pitch: the same start now runs past", CBT_RULE_device_out_of_bounds, 0,
           CBT_NO_OP, CBT_SIDE_SRC, 64 * VT_MIB - 2048 + (7 * 512 + 256), 64 * VT_MIB);
    base();
    ops[0].src.op.ptr.ptr = SRC_BASE + 64 * VT_MIB - 1000;
    si[0] = vt_mem(CBT_MEM_HOST_PINNED, SRC_BASE, 64 * VT_MIB);
    expect_none("pinned host memory is not bounds-checked", CBT_RULE_device_out_of_bounds);
    base();
    ops[0].src.op.ptr.ptr = SRC_BASE + 64 * VT_MIB - 1000;
    si[0] = vt_mem(CBT_MEM_MANAGED, SRC_BASE, 64 * VT_MIB);
    expect("managed memory is bounds-checked", CBT_RULE_device_out_of_bounds, 0, CBT_NO_OP, CBT_SIDE_SRC,
           64 * VT_MIB + 1048, 64 * VT_MIB);

    /* ---- hazards ---- */
    base();
    B.num_ops = 2;
    ops[1].dst.op.ptr.ptr = ops[0].dst.op.ptr.ptr + 2047; /* shares the last byte of op 0's dst */
    expect("op 1's dst starts on op 0's last dst byte", CBT_RULE_overlap_dst_dst, 0, 1, CBT_SIDE_DST,
           DST_BASE + 2047, 0);
    base();
    B.num_ops = 2;
    ops[1].dst.op.ptr.ptr = ops[0].dst.op.ptr.ptr + 2048;
    expect_none("op 1's dst starts right after op 0's", CBT_RULE_overlap_dst_dst);
    tap_ok(R.n == 0, "overlap_dst_dst: adjacent destinations give no finding at all");

    base();
    B.num_ops = 2;
    ops[1].src.op.ptr.ptr = ops[0].dst.op.ptr.ptr;
    si[1] = di[0];
    expect("op 1 reads what op 0 writes: op 0 (writer), other 1 (reader)", CBT_RULE_overlap_src_dst, 0, 1,
           CBT_SIDE_DST, DST_BASE, 0);
    base();
    B.num_ops = 2;
    ops[0].dst.op.ptr.ptr = ops[1].src.op.ptr.ptr + 1024;
    di[0] = si[1];
    expect("op 0 writes into what op 1 reads: the writer is op 0 again", CBT_RULE_overlap_src_dst, 0, 1,
           CBT_SIDE_DST, SRC_BASE + VT_MIB + 1024, 0);
    base();
    B.num_ops = 2;
    ops[1].src.op.ptr.ptr = ops[0].src.op.ptr.ptr;
    expect_none("two ops reading the same bytes is no hazard", CBT_RULE_overlap_src_dst);
    tap_ok(R.n == 0, "overlap_src_dst: shared sources give no finding at all");

    base();
    ops[0].dst.op.ptr.ptr = ops[0].src.op.ptr.ptr + 100;
    di[0] = si[0];
    expect("dst = src + 100 overlaps itself", CBT_RULE_overlap_self, 0, 0, CBT_SIDE_NONE, SRC_BASE + 100, 0);
    base();
    ops[0].dst.op.ptr.ptr = ops[0].src.op.ptr.ptr + 2048;
    di[0] = si[0];
    expect_none("dst right after src does not", CBT_RULE_overlap_self);

    base();
    B.num_ops = 2;
    ops[1].dst.op.ptr.ptr = ops[0].dst.op.ptr.ptr;
    ops[1].extent.width = 0;
    expect_none("an op with an error takes no part in the hazard sweep", CBT_RULE_overlap_dst_dst);

    /* ---- warnings ---- */
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ops[0].dst.op.ptr.locHint.id = 0;
    expect("locHint DEVICE 0 on device memory is ignored (warning on dst)", CBT_RULE_lochint_ignored, 0, CBT_NO_OP,
           CBT_SIDE_DST, CBT_LOC_DEVICE, CBT_MEM_DEVICE);
    tap_ok(vt_errors(&R) == 0 && R.f[0].severity == CBT_SEV_WARNING,
           "lochint_ignored: a warning, not an error (the driver accepts it)");
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    di[0] = vt_mem(CBT_MEM_MANAGED, DST_BASE, 64 * VT_MIB);
    expect_none("locHint DEVICE on managed memory is honoured", CBT_RULE_lochint_ignored);
    tap_ok(R.n == 0, "lochint_ignored: D2managed with locHint DEVICE has no finding at all");

    base();
    ops[0].src.op.ptr.locHint.type = (CUmemLocationType)9;
    expect("locHint type 9 is outside the enum (warning on src)", CBT_RULE_lochint_invalid, 0, CBT_NO_OP,
           CBT_SIDE_SRC, 9, 4);
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ops[0].dst.op.ptr.locHint.id = 77;
    expect("locHint DEVICE 77 with 8 devices names a device the system lacks", CBT_RULE_lochint_invalid, 0,
           CBT_NO_OP, CBT_SIDE_DST, 77, 8);
    tap_ok(vt_count(&R, CBT_RULE_lochint_ignored) == 0, "lochint_invalid: takes precedence over lochint_ignored");
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ops[0].dst.op.ptr.locHint.id = -1;
    expect("locHint DEVICE -1 is invalid", CBT_RULE_lochint_invalid, 0, CBT_NO_OP, CBT_SIDE_DST, (uint64_t)-1, 8);
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ops[0].dst.op.ptr.locHint.id = 77;
    B.device_count = 0;
    expect_none("device 77 with the device count unknown is not judged", CBT_RULE_lochint_invalid);
    base();
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    expect_none("locHint HOST_NUMA_CURRENT (4) is inside the enum", CBT_RULE_lochint_invalid);

    base();
    si[0] = vt_mem(CBT_MEM_HOST_PAGEABLE, 0, 0);
    expect("a pageable source with STREAM order warns on src", CBT_RULE_pageable_stream_order, 0, CBT_NO_OP,
           CBT_SIDE_SRC, CBT_ORDER_STREAM, 0);
    base();
    si[0] = vt_mem(CBT_MEM_HOST_PAGEABLE, 0, 0);
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    expect_none("a pageable source with DURING_API_CALL does not", CBT_RULE_pageable_stream_order);
    tap_ok(R.n == 0, "pageable_stream_order: pageable DURING_API_CALL has no finding at all");

    base();
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    expect("DURING_API_CALL on a device source warns on src", CBT_RULE_during_api_call_device_source, 0, CBT_NO_OP,
           CBT_SIDE_SRC, CBT_ORDER_DURING_API_CALL, 0);
    base();
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    si[0] = vt_mem(CBT_MEM_HOST_PINNED, SRC_BASE, 64 * VT_MIB);
    expect_none("DURING_API_CALL on a pinned host source does not", CBT_RULE_during_api_call_device_source);

    /* ---- unknown info ---- */
    base();
    B.src_info = B.dst_info = NULL;
    ops[0].src.op.ptr.ptr = 0xdead0000;
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    vt_run(V, &B, &R);
    tap_ok(R.n == 0, "unknown info (NULL arrays) keeps every memory-kind rule silent");
    base();
    B.src_info = B.dst_info = NULL;
    ops[0].src.op.ptr.rowLength = 100;
    ops[1].dst.op.ptr.ptr = ops[0].dst.op.ptr.ptr;
    vt_run(V, &B, &R);
    tap_ok(vt_count(&R, CBT_RULE_row_length_too_small) == 1, "unknown info still runs the structural rules");
    base();
    B.src_info = B.dst_info = NULL;
    B.num_ops = 2;
    ops[1].dst.op.ptr.ptr = ops[0].dst.op.ptr.ptr;
    vt_run(V, &B, &R);
    tap_ok(R.n == 1 && R.f[0].rule == CBT_RULE_overlap_dst_dst, "unknown info still runs the overlap rules");

    /* ---- order, cap, return value ---- */
    base();
    B.num_ops = 3;
    B.flags = 4;
    ops[0].dst.op.ptr.ptr = ops[2].dst.op.ptr.ptr; /* hazard 0/2 */
    ops[1].src.op.ptr.rowLength = 1;               /* error on op 1 */
    ops[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; /* warning on op 1 */
    vt_run(V, &B, &R);
    tap_ok(R.n == 4 && R.f[0].rule == CBT_RULE_flags_nonzero && R.f[1].rule == CBT_RULE_row_length_too_small &&
               R.f[1].op == 1 && R.f[2].rule == CBT_RULE_during_api_call_device_source && R.f[2].op == 1 &&
               R.f[3].rule == CBT_RULE_overlap_dst_dst && R.f[3].op == 0 && R.f[3].other_op == 2,
           "order: batch finding, then op 1's error and warning, then the hazard of ops 0/2");
    if (R.n != 4)
        vt_dump(&R);
    {
        struct cbt_finding f[3];
        memset(f, 0xee, sizeof f);
        size_t n = cbt_validate(V, &B, f, 2);
        unsigned char *p = (unsigned char *)&f[2];
        int untouched = 1;
        for (size_t k = 0; k < sizeof f[2]; k++)
            untouched &= p[k] == 0xee;
        tap_ok(n == 4 && untouched && f[1].rule == CBT_RULE_row_length_too_small,
               "cap: returns the total (4) and writes only the first 2");
        tap_is_u64(cbt_validate(V, &B, NULL, 0), 4, "cap: out NULL with cap 0 counts");
        /* Regression (found by fuzz_validate): findings were written field by field, leaving
         * the padding after `side` as whatever the caller's buffer held. */
        struct cbt_finding g[4], want;
        memset(g, 0xee, sizeof g);
        cbt_validate(V, &B, g, 4);
        memset(&want, 0, sizeof want);
        want.rule = CBT_RULE_overlap_dst_dst;
        want.severity = CBT_SEV_HAZARD;
        want.side = CBT_SIDE_DST;
        want.op = 0;
        want.other_op = 2;
        want.value = g[3].value;
        tap_ok(memcmp(&g[3], &want, sizeof want) == 0, "findings are fully initialised, padding bytes included");
        tap_is_u64(cbt_validate(NULL, &B, f, 2), 4, "a NULL validator works (with a temporary one)");
    }

    /* ---- element size and bytes ---- */
    {
        CUDA_MEMCPY3D_BATCH_OP op = vt_op(vt_ptr(1), vt_ptr(2), 256, 4, 2);
        struct cbt_operand_info a = vt_array_info(64, 64, 4, 16), u8 = vt_array_info(64, 64, 4, 1);
        tap_is_u64(cbt_op_elem_size(&op, NULL, NULL), 1, "elem size: pointer to pointer is 1");
        tap_is_u64(cbt_op_bytes(&op, NULL, NULL), 2048, "bytes: 256x4x2 pointer to pointer is 2048");
        op.dst = vt_arr(0xa000, 0, 0, 0);
        tap_is_u64(cbt_op_elem_size(&op, NULL, &a), 16, "elem size: D2A takes the array's (16)");
        tap_is_u64(cbt_op_bytes(&op, NULL, &a), 2048 * 16, "bytes: D2A 256x4x2 of float4 is 32768");
        tap_is_u64(cbt_op_elem_size(&op, NULL, NULL), 0, "elem size: D2A with unknown array is 0");
        tap_is_u64(cbt_op_bytes(&op, NULL, NULL), 0, "bytes: D2A with unknown array is 0");
        op.src = vt_arr(0xb000, 0, 0, 0);
        tap_is_u64(cbt_op_elem_size(&op, &u8, &a), 1, "elem size: A2A takes the source array's");
        op.extent.width = op.extent.height = op.extent.depth = (size_t)1 << 40;
        tap_is_u64(cbt_op_bytes(&op, &u8, &a), UINT64_MAX, "bytes: saturates when the product overflows");
    }

    cbt_validator_free(V);
    return tap_done();
}
