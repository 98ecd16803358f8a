/* SPDX-License-Identifier: MIT */
/*
 * cbt_finding_words() and the catalogue's fixes, over every rule: each
 * finding, as the validator makes it (value and limit as docs/rules.md
 * says), is worded without a placeholder or a raw field (no backtick, no
 * `value`, no `limit`, no key=value), says where it is (the op or copy, the
 * attribute), and has a fix; the fix list is in the catalogue's order; and
 * the words of the rules users meet most say the values that matter.
 */
#include <string.h>

#include <cubatchtrace/validate.h>

#include "../tap.h"

#define N CBT_NO_OP

/* A finding of each rule, as validate.c emits it. */
struct sample {
    unsigned rule, side;
    uint64_t op, other, value, limit;
};
static const struct sample samples[] = {
    {CBT_RULE_num_ops_zero, CBT_SIDE_NONE, N, N, 0, 1},
    {CBT_RULE_op_list_null, CBT_SIDE_NONE, N, N, 0, 0},
    {CBT_RULE_flags_nonzero, CBT_SIDE_NONE, N, N, 4, 0},
    {CBT_RULE_stream_null, CBT_SIDE_NONE, N, N, 0, 0},
    {CBT_RULE_stream_legacy, CBT_SIDE_NONE, N, N, 1, 0},
    {CBT_RULE_extent_zero, CBT_SIDE_NONE, 2, N, 0, 1},
    {CBT_RULE_row_length_too_small, CBT_SIDE_SRC, 1, N, 100, 1024},
    {CBT_RULE_layer_height_too_small, CBT_SIDE_DST, 1, N, 3, 4},
    {CBT_RULE_access_order_invalid, CBT_SIDE_NONE, 0, N, 0, 3},
    {CBT_RULE_op_flags_invalid, CBT_SIDE_NONE, 0, N, 2, 1},
    {CBT_RULE_operand_type_invalid, CBT_SIDE_SRC, 0, N, 7, 2},
    {CBT_RULE_pointer_null, CBT_SIDE_SRC, 0, N, 0, 0},
    {CBT_RULE_pointer_unmapped, CBT_SIDE_SRC, 0, N, 0xdead000, 0},
    {CBT_RULE_array_null, CBT_SIDE_DST, 0, N, 0, 0},
    {CBT_RULE_array_out_of_bounds, CBT_SIDE_DST, 0, N, 65, 64},
    {CBT_RULE_array_element_size_mismatch, CBT_SIDE_NONE, 0, N, 4, 16},
    {CBT_RULE_device_out_of_bounds, CBT_SIDE_DST, 0, N, 1051648, 1048576},
    {CBT_RULE_overlap_dst_dst, CBT_SIDE_DST, 0, 1, 0x7f0000000000, 0},
    {CBT_RULE_overlap_src_dst, CBT_SIDE_DST, 0, 1, 0x7f0000000000, 0},
    {CBT_RULE_overlap_self, CBT_SIDE_NONE, 0, 0, 0x7f0000000000, 0},
    {CBT_RULE_lochint_ignored, CBT_SIDE_DST, 0, N, CBT_LOC_DEVICE, CBT_MEM_DEVICE},
    {CBT_RULE_lochint_invalid, CBT_SIDE_DST, 0, N, 9, CBT_LOC_HOST_NUMA_CURRENT},
    {CBT_RULE_pageable_stream_order, CBT_SIDE_SRC, 0, N, CBT_ORDER_STREAM, 0},
    {CBT_RULE_during_api_call_device_source, CBT_SIDE_SRC, 0, N, CBT_ORDER_DURING_API_CALL, 0},
    {CBT_RULE_ops_not_read, CBT_SIDE_NONE, N, N, 2, 9},
    {CBT_RULE_copy_array_null, CBT_SIDE_NONE, N, N, 6, 0},
    {CBT_RULE_num_attrs_zero, CBT_SIDE_NONE, N, N, 0, 1},
    {CBT_RULE_num_attrs_above_count, CBT_SIDE_NONE, N, N, 5, 3},
    {CBT_RULE_attrs_idx_first_not_zero, CBT_SIDE_NONE, N, 0, 2, 0},
    {CBT_RULE_attrs_idxs_not_start_indices, CBT_SIDE_NONE, N, 2, 1, 2},
    {CBT_RULE_attr_access_order_invalid, CBT_SIDE_NONE, N, 1, 9, 3},
    {CBT_RULE_attr_flags_invalid, CBT_SIDE_NONE, N, 1, 6, 1},
    {CBT_RULE_attr_lochint_invalid, CBT_SIDE_SRC, N, 0, 7, 2},
    {CBT_RULE_copy_size_zero, CBT_SIDE_NONE, 3, N, 0, 1},
    {CBT_RULE_stream_on_stack, CBT_SIDE_NONE, N, N, 0x7ffd1000, 0},
    {CBT_RULE_fail_idx_is_stream, CBT_SIDE_NONE, N, N, 0, 0},
    {CBT_RULE_refused_in_capture, CBT_SIDE_NONE, N, N, 900, 0},
    /* advice, as tools/analyse/advice.c makes it */
    {CBT_RULE_unbatched_run, CBT_SIDE_NONE, N, N, 12, 4},
    {CBT_RULE_tiny_copies, CBT_SIDE_NONE, N, N, 100, 4096},
    {CBT_RULE_huge_batch, CBT_SIDE_NONE, N, N, 60000, 16384},
    {CBT_RULE_overlap_flag_large_copy, CBT_SIDE_NONE, 2, N, 3, 131072},
    {CBT_RULE_any_order_device_source, CBT_SIDE_SRC, 0, N, 2, 0},
    {CBT_RULE_deferred_host_source, CBT_SIDE_SRC, 1, N, 1, 0},
    {CBT_RULE_pageable_source, CBT_SIDE_NONE, 1, N, 2097152, 1048576},
    {CBT_RULE_same_device_engine_copy, CBT_SIDE_NONE, 0, N, 1, 1048576},
    {CBT_RULE_low_bandwidth, CBT_SIDE_NONE, N, N, 4000, 102400},
};

static int clean(const char *s)
{
    return s && *s && !strchr(s, '`') && !strstr(s, "value") && !strstr(s, "limit") && !strchr(s, '=');
}

static void pointer_op(CUDA_MEMCPY3D_BATCH_OP *op, size_t w, size_t h, size_t d)
{
    memset(op, 0, sizeof *op);
    op->src.type = op->dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op->src.op.ptr.ptr = 0x10000;
    op->dst.op.ptr.ptr = 0x7f0000000000;
    op->extent.width = w;
    op->extent.height = h;
    op->extent.depth = d;
    op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
}

static int has(const char *s, const char *what)
{
    if (strstr(s, what))
        return 1;
    tap_diag("  \"%s\" lacks \"%s\"", s, what);
    return 0;
}

int main(void)
{
    /* the fix list: one per rule, in the catalogue's order */
#define FIX_NAME_(name, fix) #name,
    static const char *const fix_names[] = {CBT_RULE_FIX_LIST(FIX_NAME_)};
#undef FIX_NAME_
    tap_ok(sizeof fix_names / sizeof *fix_names == CBT_RULE_COUNT, "CBT_RULE_FIX_LIST has one entry per rule");
    for (unsigned i = 0; i < CBT_RULE_COUNT && i < sizeof fix_names / sizeof *fix_names; i++)
        if (strcmp(fix_names[i], cbt_rules[i].name))
            tap_ok(0, "fix %u is for %s, rule %u is %s", i, fix_names[i], i, cbt_rules[i].name);

    /* every rule: a sample, worded with and without its ops */
    tap_ok(sizeof samples / sizeof *samples == CBT_RULE_COUNT, "a sample finding of every rule");
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
        const struct sample *x = &samples[k];
        const struct cbt_rule_info *ri = cbt_rule(x->rule);
        struct cbt_finding f = {.rule = (uint16_t)x->rule, .severity = (uint8_t)ri->severity, .side = (uint8_t)x->side,
                                .op = x->op, .other_op = x->other, .value = x->value, .limit = x->limit};
        CUDA_MEMCPY3D_BATCH_OP op, other;
        pointer_op(&op, 4096, 1, 1);
        pointer_op(&other, 2048, 1, 1);
        if (x->rule == CBT_RULE_extent_zero)
            op.extent.height = 0;
        if (x->rule == CBT_RULE_lochint_invalid)
            op.dst.op.ptr.locHint.type = (CUmemLocationType)9;
        int copies = x->rule >= CBT_RULE_copy_array_null && x->rule != CBT_RULE_refused_in_capture &&
                     !cbt_rule_is_advice(x->rule);
        const char *fix = cbt_rule_fix(x->rule);
        tap_ok(clean(fix), "%s: a fix without placeholder (%s)", ri->name, fix ? fix : "none");
        for (int with = 0; with < 2; with++) {
            char w[512];
            const CUDA_MEMCPY3D_BATCH_OP *o = with && x->op != N ? &op : NULL;
            const CUDA_MEMCPY3D_BATCH_OP *oo = with && x->other != N && !cbt_rule_is_attr(x->rule) ? &other : NULL;
            cbt_finding_words(&f, o, oo, copies, w, sizeof w);
            int good = clean(w) && strcmp(w, ri->text) != 0;
            char at[64] = "";
            if (cbt_rule_is_attr(x->rule))
                snprintf(at, sizeof at, "[%llu]", (unsigned long long)x->other);
            else if (x->rule == CBT_RULE_overlap_dst_dst)
                snprintf(at, sizeof at, "ops %llu and %llu", (unsigned long long)x->op, (unsigned long long)x->other);
            else if (x->op != N)
                snprintf(at, sizeof at, "%s %llu", copies ? "copy" : "op", (unsigned long long)x->op);
            if (*at)
                good = has(w, at) && good;
            if (x->other != N && x->other != x->op && !cbt_rule_is_attr(x->rule)) {
                snprintf(at, sizeof at, " %llu", (unsigned long long)x->other);
                good = has(w, at) && good;
            }
            if (x->side == CBT_SIDE_SRC && !cbt_rule_is_attr(x->rule) && x->rule != CBT_RULE_pageable_stream_order &&
                x->rule != CBT_RULE_during_api_call_device_source)
                good = has(w, "source") && good;
            if (x->side == CBT_SIDE_DST && x->rule != CBT_RULE_overlap_dst_dst && x->rule != CBT_RULE_overlap_src_dst)
                good = has(w, "destination") && good;
            tap_ok(good, "%s %s its ops: \"%s\"", ri->name, with ? "with" : "without", w);
        }
    }

    /* the words of the findings users meet most */
    struct {
        unsigned rule, side;
        uint64_t op, other, value, limit;
        int with_op;
        const char *want;
    } exact[] = {
        {CBT_RULE_extent_zero, CBT_SIDE_NONE, 2, N, 0, 1, 1, "op 2: extent height 0 (extent 4096x0x1)"},
        {CBT_RULE_extent_zero, CBT_SIDE_NONE, 2, N, 0, 2, 0, "op 2: extent depth 0"},
        {CBT_RULE_device_out_of_bounds, CBT_SIDE_DST, 0, N, 1051648, 1048576, 0,
         "op 0's destination footprint ends at byte 1051648 of a 1048576-byte allocation (3072 bytes past its end)"},
        {CBT_RULE_ops_not_read, CBT_SIDE_NONE, N, N, 2, 9, 0,
         "only 2 of the 9 ops were read: the driver rejects the batch before the rest"},
        {CBT_RULE_row_length_too_small, CBT_SIDE_SRC, 1, N, 100, 1024, 0,
         "op 1's source: rowLength 100 is less than the extent width 1024 (rows would overlap)"},
        {CBT_RULE_overlap_dst_dst, CBT_SIDE_DST, 0, 1, 0x7f0000000000, 0, 1,
         "ops 0 and 1 write the same bytes: both destinations cover byte 0x7f0000000000 "
         "(op 0: 4096 bytes, extent 4096x1x1; op 1: 2048 bytes, extent 2048x1x1)"},
        {CBT_RULE_copy_array_null, CBT_SIDE_NONE, N, N, 6, 0, 0, "srcs and sizes are NULL"},
        {CBT_RULE_lochint_invalid, CBT_SIDE_DST, 0, N, 9, 4, 1,
         "op 0's destination locHint type is 9, not a CUmemLocationType"},
        {CBT_RULE_lochint_invalid, CBT_SIDE_SRC, 0, N, 3, 2, 0,
         "op 0's source locHint is DEVICE 3, and the system has 2 devices"},
        {CBT_RULE_unbatched_run, CBT_SIDE_NONE, N, N, 12, 4, 0,
         "12 calls in a row on one stream and thread, each of at most 4 ops"},
        {CBT_RULE_overlap_flag_large_copy, CBT_SIDE_NONE, 2, N, 3, 131072, 0,
         "3 ops (the first: op 2) move more than 131072 bytes with PREFER_OVERLAP_WITH_COMPUTE"},
        {CBT_RULE_any_order_device_source, CBT_SIDE_SRC, 0, N, 1, 0, 0,
         "1 op (op 0) reads a device or managed source with srcAccessOrder ANY (whether work on the stream was "
         "still writing it is not in the trace)"},
    };
    for (size_t k = 0; k < sizeof exact / sizeof *exact; k++) {
        struct cbt_finding f = {.rule = (uint16_t)exact[k].rule, .side = (uint8_t)exact[k].side, .op = exact[k].op,
                                .other_op = exact[k].other, .value = exact[k].value, .limit = exact[k].limit};
        CUDA_MEMCPY3D_BATCH_OP op, other;
        pointer_op(&op, 4096, exact[k].rule == CBT_RULE_extent_zero ? 0 : 1, 1);
        pointer_op(&other, 2048, 1, 1);
        op.dst.op.ptr.locHint.type = (CUmemLocationType)9;
        char w[512];
        cbt_finding_words(&f, exact[k].with_op ? &op : NULL, exact[k].with_op ? &other : NULL, 0, w, sizeof w);
        if (!tap_ok(strcmp(w, exact[k].want) == 0, "%s: %s", cbt_rules[exact[k].rule].name, exact[k].want))
            tap_diag("  got \"%s\"", w);
    }

    /* a short buffer: cut, NUL-terminated */
    struct cbt_finding f = {.rule = CBT_RULE_ops_not_read, .op = N, .other_op = N, .value = 2, .limit = 9};
    char small[8];
    cbt_finding_words(&f, NULL, NULL, 0, small, sizeof small);
    tap_ok(strlen(small) == 7, "a short buffer holds the start of the words, NUL-terminated");
    return tap_done();
}
