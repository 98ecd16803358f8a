/* SPDX-License-Identifier: MIT */
/*
 * The accept/reject table of docs' facts file (the real driver on an H200,
 * /work/shared/facts/h200-driver.md), walked through the validator: an error
 * finding exactly where the driver rejects (or crashes), none where it
 * accepts.  Warnings and hazards are allowed on accepted rows.  The table
 * walked is printed as TAP comments.
 */
#include "vtest.h"

#define SRC_BASE 0x7f0000000000ull
#define DST_BASE 0x7f1000000000ull
#define HOST_BASE 0x5600000000ull
#define ARR_A ((uintptr_t)0xa0000)
#define ARR_B ((uintptr_t)0xb0000)

struct row {
    const char *name;
    const char *driver; /* what the driver said */
    int rejects;        /* 1: INVALID_VALUE or a crash */
};

static const struct row rows[] = {
    {"valid D2D 256x4x2", "SUCCESS", 0},
    {"numOps = 0", "INVALID_VALUE", 1},
    {"opList = NULL, numOps = 1", "INVALID_VALUE", 1},
    {"flags = 1", "INVALID_VALUE", 1},
    {"stream NULL (0)", "INVALID_VALUE", 1},
    {"stream CU_STREAM_LEGACY (0x1)", "INVALID_VALUE", 1},
    {"stream CU_STREAM_PER_THREAD (0x2)", "SUCCESS", 0},
    {"extent width = 0", "INVALID_VALUE", 1},
    {"extent depth = 0", "INVALID_VALUE", 1},
    {"src rowLength 100 < width 256", "INVALID_VALUE", 1},
    {"src rowLength 512 >= width", "SUCCESS", 0},
    {"dst layerHeight 2 < height 4", "INVALID_VALUE", 1},
    {"srcAccessOrder 0", "INVALID_VALUE", 1},
    {"srcAccessOrder 4", "INVALID_VALUE", 1},
    {"srcAccessOrder 7", "INVALID_VALUE", 1},
    {"srcAccessOrder DURING_API_CALL on device memory", "SUCCESS", 0},
    {"srcAccessOrder ANY on device memory", "SUCCESS", 0},
    {"op flags 1 (PREFER_OVERLAP_WITH_COMPUTE)", "SUCCESS", 0},
    {"op flags 2", "INVALID_VALUE", 1},
    {"op flags 0x80", "INVALID_VALUE", 1},
    {"src operand type 0", "INVALID_VALUE", 1},
    {"src operand type 3", "INVALID_VALUE", 1},
    {"dst operand type 0", "INVALID_VALUE", 1},
    {"dst operand type 3", "INVALID_VALUE", 1},
    {"src ptr = 0", "INVALID_VALUE", 1},
    {"src ptr = 0xdead0000 (unmapped host address)", "SIGSEGV (crash)", 1},
    {"locHint DEVICE id 0 on device memory", "SUCCESS", 0},
    {"locHint type 9 on device memory", "SUCCESS", 0},
    {"locHint type 99 on device memory", "SUCCESS", 0},
    {"locHint DEVICE id 77 on device memory", "SUCCESS", 0},
    {"H2D from pinned host", "SUCCESS", 0},
    {"H2D from pageable malloc, STREAM", "SUCCESS", 0},
    {"H2D from pageable malloc, DURING_API_CALL", "SUCCESS", 0},
    {"H2D from pageable malloc, ANY", "SUCCESS", 0},
    {"D2managed with locHint DEVICE", "SUCCESS", 0},
    {"D2D 1 MiB inside a 64 MiB allocation", "SUCCESS", 0},
    {"D2D footprint past the end of the device allocation", "INVALID_VALUE", 1},
    {"two ops whose destinations overlap", "SUCCESS", 0},
    {"one bad op (the third) in a batch of 3", "INVALID_VALUE", 1},
    {"device -> float4 array 64x64x4, extent in elements", "SUCCESS", 0},
    {"same, width 65 (past the array)", "INVALID_VALUE", 1},
    {"same, offset.x 1 with width 64", "INVALID_VALUE", 1},
    {"u8 array -> float array", "INVALID_VALUE", 1},
    {"float array -> float array", "SUCCESS", 0},
};
#define NROWS (sizeof rows / sizeof rows[0])

static CUDA_MEMCPY3D_BATCH_OP ops[3];
static struct cbt_operand_info si[3], di[3];
static struct cbt_batch_view B;

static void build(size_t k)
{
    for (int i = 0; i < 3; i++) {
        ops[i] = vt_op(vt_ptr(SRC_BASE + (uint64_t)i * VT_MIB), vt_ptr(DST_BASE + (uint64_t)i * VT_MIB), 256, 4, 2);
        si[i] = vt_mem(CBT_MEM_DEVICE, SRC_BASE, 64 * VT_MIB);
        di[i] = vt_mem(CBT_MEM_DEVICE, DST_BASE, 64 * VT_MIB);
    }
    B = vt_batch(1, ops, si, di);
    B.device_count = 1; /* the measured machine had one H200 */
    CUDA_MEMCPY3D_BATCH_OP *o = &ops[0];
    switch (k) {
    case 0: break;
    case 1: B.num_ops = 0; break;
    case 2: B.ops = NULL; break;
    case 3: B.flags = 1; break;
    case 4: B.stream = NULL; break;
    case 5: B.stream = CU_STREAM_LEGACY; break;
    case 6: B.stream = CU_STREAM_PER_THREAD; break;
    case 7: o->extent.width = 0; break;
    case 8: o->extent.depth = 0; break;
    case 9: o->src.op.ptr.rowLength = 100; break;
    case 10: o->src.op.ptr.rowLength = 512; break;
    case 11: o->dst.op.ptr.layerHeight = 2; break;
    case 12: o->srcAccessOrder = (CUmemcpySrcAccessOrder)0; break;
    case 13: o->srcAccessOrder = (CUmemcpySrcAccessOrder)4; break;
    case 14: o->srcAccessOrder = (CUmemcpySrcAccessOrder)7; break;
    case 15: o->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; break;
    case 16: o->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY; break;
    case 17: o->flags = 1; break;
    case 18: o->flags = 2; break;
    case 19: o->flags = 0x80; break;
    case 20: o->src.type = (CUmemcpy3DOperandType)0; break;
    case 21: o->src.type = (CUmemcpy3DOperandType)3; break;
    case 22: o->dst.type = (CUmemcpy3DOperandType)0; break;
    case 23: o->dst.type = (CUmemcpy3DOperandType)3; break;
    case 24: o->src.op.ptr.ptr = 0; si[0] = vt_mem(CBT_MEM_UNKNOWN, 0, 0); break;
    case 25: o->src.op.ptr.ptr = 0xdead0000; si[0] = vt_mem(CBT_MEM_UNMAPPED, 0, 0); break;
    case 26: o->dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE; o->dst.op.ptr.locHint.id = 0; break;
    case 27: o->dst.op.ptr.locHint.type = (CUmemLocationType)9; break;
    case 28: o->dst.op.ptr.locHint.type = (CUmemLocationType)99; break;
    case 29: o->dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE; o->dst.op.ptr.locHint.id = 77; break;
    case 30:
        o->src.op.ptr.ptr = HOST_BASE;
        si[0] = vt_mem(CBT_MEM_HOST_PINNED, HOST_BASE, VT_MIB);
        break;
    case 31: case 32: case 33:
        o->src.op.ptr.ptr = HOST_BASE + 16;
        si[0] = vt_mem(CBT_MEM_HOST_PAGEABLE, 0, 0);
        o->srcAccessOrder = k == 31 ? CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
                          : k == 32 ? CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL
                                    : CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
        break;
    case 34:
        di[0] = vt_mem(CBT_MEM_MANAGED, DST_BASE, 64 * VT_MIB);
        o->dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
        o->dst.op.ptr.locHint.id = 0;
        break;
    case 35:
        o->src.op.ptr.ptr = SRC_BASE + 8 * VT_MIB;
        o->dst.op.ptr.ptr = DST_BASE + 32 * VT_MIB;
        o->extent.width = 1024;
        o->extent.height = 1024;
        o->extent.depth = 1;
        break;
    case 36: o->src.op.ptr.ptr = SRC_BASE + 64 * VT_MIB - 1024; break;
    case 37: B.num_ops = 2; ops[1].dst.op.ptr.ptr = o->dst.op.ptr.ptr + 512; break;
    case 38: B.num_ops = 3; ops[2].src.op.ptr.rowLength = 100; break;
    case 39: case 40: case 41:
        *o = vt_op(vt_ptr(SRC_BASE), vt_arr(ARR_A, k == 41 ? 1 : 0, 0, 0), k == 40 ? 65 : 64, 64, 4);
        di[0] = vt_array_info(64, 64, 4, 16);
        break;
    case 42: case 43:
        *o = vt_op(vt_arr(ARR_A, 0, 0, 0), vt_arr(ARR_B, 0, 0, 0), 64, 64, 1);
        si[0] = vt_array_info(64, 64, 0, k == 42 ? 1 : 4);
        di[0] = vt_array_info(64, 64, 0, 4);
        break;
    }
}

int main(void)
{
    struct cbt_validator *v = cbt_validator_new();
    static struct vt_res r;
    char said[NROWS][256];
    int agree[NROWS];
    if (!v)
        tap_skip_all("out of memory");
    tap_plan((int)NROWS + 1);
    for (size_t k = 0; k < NROWS; k++) {
        build(k);
        vt_run(v, &B, &r);
        size_t errs = vt_errors(&r), len = 0, first_err_op = CBT_NO_OP;
        said[k][0] = 0;
        len += (size_t)snprintf(said[k] + len, sizeof said[k] - len, "%s", errs ? "reject:" : "accept");
        for (size_t i = 0; i < r.n && len < sizeof said[k] - 40; i++) {
            const struct cbt_finding *f = &r.f[i];
            if (f->severity == CBT_SEV_ERROR && first_err_op == CBT_NO_OP && f->op != CBT_NO_OP)
                first_err_op = f->op;
            len += (size_t)snprintf(said[k] + len, sizeof said[k] - len, "%s%s%s", i ? ", " : " ",
                                    f->severity == CBT_SEV_ERROR ? "" : "+", cbt_rules[f->rule].name);
        }
        agree[k] = (errs > 0) == rows[k].rejects;
        if (k == 38) /* the 12.8 ABI's failIdx is the first bad op */
            agree[k] = agree[k] && first_err_op == 2;
        tap_ok(agree[k], "%s: driver %s, validator %s", rows[k].name, rows[k].driver, said[k]);
    }
    tap_diag("");
    tap_diag("| case | driver says | validator says |");
    tap_diag("| --- | --- | --- |");
    for (size_t k = 0; k < NROWS; k++)
        tap_diag("| %s | %s | %s%s |", rows[k].name, rows[k].driver, said[k], agree[k] ? "" : "  **DISAGREES**");
    tap_diag("(+rule: a warning or hazard; the driver accepts those)");

    /* The validator's own cost must not depend on earlier calls: the same row again, same answer. */
    build(38);
    vt_run(v, &B, &r);
    tap_ok(r.n == 1 && r.f[0].op == 2 && r.f[0].rule == CBT_RULE_row_length_too_small,
           "a bad third op is reported at op 2 (the driver's failIdx)");
    cbt_validator_free(v);
    return tap_failed_ ? 1 : 0;
}
