/* SPDX-License-Identifier: MIT */
/*
 * What a finding says, in words: the values at fault and where they are
 * (which op or copy, which operand, which attribute), written once here for
 * every output (the shim's stderr report, and the tool's summary, check,
 * show and report).  The advice that follows is the catalogue's
 * (cbt_rule_fix, catalog.h).  docs/rules.md says what value and limit hold
 * for each rule; the words never show them as raw fields.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cubatchtrace/validate.h>

struct buf {
    char *p;
    size_t len, n;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    if (b->n >= b->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->len - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n = b->n + (size_t)k < b->len ? b->n + (size_t)k : b->len - 1;
}

static const char *side_word(unsigned side)
{
    return side == CBT_SIDE_SRC ? "source" : side == CBT_SIDE_DST ? "destination" : "operand";
}

static const CUmemcpy3DOperand *operand(const CUDA_MEMCPY3D_BATCH_OP *op, unsigned side)
{
    return !op ? NULL : side == CBT_SIDE_SRC ? &op->src : side == CBT_SIDE_DST ? &op->dst : NULL;
}

/* "op 3" / "copy 3": where the finding is, and "op 3's source" with a side. */
static void where(struct buf *b, const struct cbt_finding *f, int copies, int with_side)
{
    put(b, "%s %" PRIu64, copies ? "copy" : "op", f->op);
    if (with_side && (f->side == CBT_SIDE_SRC || f->side == CBT_SIDE_DST))
        put(b, "'s %s", side_word(f->side));
}

/* How much an op copies: bytes for pointer-to-pointer ops and copies, else its extent in elements. */
static void op_size(struct buf *b, const CUDA_MEMCPY3D_BATCH_OP *op, int copies)
{
    if (copies) {
        put(b, "%zu bytes", op->extent.width);
    } else if (op->src.type == CU_MEMCPY_OPERAND_TYPE_POINTER && op->dst.type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
        unsigned __int128 n = (unsigned __int128)op->extent.width * op->extent.height * op->extent.depth;
        if (n >> 64)
            put(b, "extent %zux%zux%zu", op->extent.width, op->extent.height, op->extent.depth);
        else
            put(b, "%" PRIu64 " bytes, extent %zux%zux%zu", (uint64_t)n, op->extent.width, op->extent.height,
                op->extent.depth);
    } else {
        put(b, "extent %zux%zux%zu elements", op->extent.width, op->extent.height, op->extent.depth);
    }
}

static void hint(struct buf *b, const char *what, const struct cbt_finding *f, const CUmemLocation *h)
{
    if (h) {
        const char *t = cbt_location_name((unsigned)h->type);
        if (!t)
            put(b, "%s type is %d, not a CUmemLocationType", what, (int)h->type);
        else if (f->limit)
            put(b, "%s is DEVICE %d, and the system has %" PRIu64 " device%s", what, h->id, f->limit,
                f->limit == 1 ? "" : "s");
        else
            put(b, "%s is DEVICE %d, not a device ordinal", what, h->id);
        return;
    }
    /* From the finding alone: a type above HOST_NUMA_CURRENT is checked
     * against that (limit 4), a device id against the device count. */
    if (f->limit == CBT_LOC_HOST_NUMA_CURRENT && f->value > CBT_LOC_HOST_NUMA_CURRENT && f->value <= UINT32_MAX)
        put(b, "%s type is %" PRIu64 ", not a CUmemLocationType", what, f->value);
    else if (f->limit)
        put(b, "%s is DEVICE %" PRId64 ", and the system has %" PRIu64 " device%s", what, (int64_t)f->value,
            f->limit, f->limit == 1 ? "" : "s");
    else
        put(b, "%s is DEVICE %" PRId64 ", not a device ordinal", what, (int64_t)f->value);
}

/* Long on purpose: one case per rule, so that each rule's words stand beside the others'. */
const char *cbt_finding_words(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *op,
                              const CUDA_MEMCPY3D_BATCH_OP *other, int copies, char *out, size_t len)
{
    static const char *const dims[3] = {"width", "height", "depth"};
    struct buf b = {out, len, 0};
    if (!len)
        return out;
    out[0] = 0;
    const uint64_t v = f->value, l = f->limit;
    const CUmemcpy3DOperand *x = operand(op, f->side);
    switch (f->rule) {
    case CBT_RULE_num_ops_zero: put(&b, copies ? "count is 0: the batch has no copy" : "numOps is 0: the batch has no op"); break;
    case CBT_RULE_op_list_null: put(&b, "opList is NULL, and numOps is not 0"); break;
    case CBT_RULE_flags_nonzero: put(&b, "the batch's flags are 0x%" PRIx64 ", not 0", v); break;
    case CBT_RULE_stream_null: put(&b, "hStream is NULL (the legacy default stream)"); break;
    case CBT_RULE_stream_legacy: put(&b, "hStream is CU_STREAM_LEGACY (0x%" PRIx64 ")", v); break;
    case CBT_RULE_extent_zero:
        where(&b, f, copies, 0);
        put(&b, ": extent %s 0", l < 3 ? dims[l] : "width, height or depth");
        if (op)
            put(&b, " (extent %zux%zux%zu)", op->extent.width, op->extent.height, op->extent.depth);
        break;
    case CBT_RULE_row_length_too_small:
        where(&b, f, copies, 1);
        put(&b, ": rowLength %" PRIu64 " is less than the extent width %" PRIu64 " (rows would overlap)", v, l);
        break;
    case CBT_RULE_layer_height_too_small:
        where(&b, f, copies, 1);
        put(&b, ": layerHeight %" PRIu64 " is less than the extent height %" PRIu64 " (layers would overlap)", v, l);
        break;
    case CBT_RULE_access_order_invalid:
        where(&b, f, copies, 0);
        put(&b, ": srcAccessOrder is %" PRIu64 ", not STREAM (1), DURING_API_CALL (2) or ANY (3)", v);
        break;
    case CBT_RULE_op_flags_invalid:
        where(&b, f, copies, 0);
        put(&b, ": flags 0x%" PRIx64 " hold bits 0x%" PRIx64 " beyond PREFER_OVERLAP_WITH_COMPUTE (0x1)", v, v & ~(uint64_t)1);
        break;
    case CBT_RULE_operand_type_invalid:
        where(&b, f, copies, 1);
        put(&b, " type is %" PRIu64 ", neither POINTER (1) nor ARRAY (2)", v);
        break;
    case CBT_RULE_pointer_null:
        where(&b, f, copies, 1);
        put(&b, " pointer is NULL");
        if (op) {
            put(&b, " (a copy of ");
            op_size(&b, op, copies);
            put(&b, ")");
        }
        break;
    case CBT_RULE_pointer_unmapped:
        where(&b, f, copies, 1);
        put(&b, " pointer 0x%" PRIx64 " is neither CUDA memory nor mapped host memory", v);
        break;
    case CBT_RULE_array_null:
        where(&b, f, copies, 1);
        put(&b, " CUarray is NULL");
        break;
    case CBT_RULE_array_out_of_bounds: {
        where(&b, f, copies, 1);
        int k = -1;
        if (op && x && x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
            const uint64_t off[3] = {x->op.array.offset.x, x->op.array.offset.y, x->op.array.offset.z};
            const uint64_t ext[3] = {op->extent.width, op->extent.height, op->extent.depth};
            for (int d = 0; d < 3 && k < 0; d++)
                if (off[d] + ext[d] == v || (off[d] + ext[d] < off[d] && v == UINT64_MAX))
                    k = d;
            if (k >= 0) {
                put(&b, ": offset %c %" PRIu64 " + extent %s %" PRIu64 " ends at element %" PRIu64
                        " of an array %" PRIu64 " elements in %s",
                    "xyz"[k], off[k], dims[k], ext[k], v, l, dims[k]);
                break;
            }
        }
        put(&b, ": offset + extent ends at element %" PRIu64 " of an array dimension of %" PRIu64 " elements", v, l);
        break;
    }
    case CBT_RULE_array_element_size_mismatch:
        where(&b, f, copies, 0);
        put(&b, ": the source array's elements are %" PRIu64 " bytes, the destination's %" PRIu64 " bytes", v, l);
        break;
    case CBT_RULE_device_out_of_bounds:
        where(&b, f, copies, 1);
        if (v < l)
            put(&b, " pointer 0x%" PRIx64 " lies %" PRIu64 " bytes before the start of its allocation (0x%" PRIx64 ")",
                v, l - v, l);
        else if (v == UINT64_MAX)
            put(&b, " footprint runs past the end of the %" PRIu64 "-byte allocation (beyond 2^64 bytes)", l);
        else
            put(&b, " footprint ends at byte %" PRIu64 " of a %" PRIu64 "-byte allocation (%" PRIu64 " bytes past its end)",
                v, l, v - l);
        if (op) {
            put(&b, "; the %s copies ", copies ? "copy" : "op");
            op_size(&b, op, copies);
        }
        break;
    case CBT_RULE_overlap_dst_dst:
    case CBT_RULE_overlap_src_dst:
    case CBT_RULE_overlap_self: {
        const char *u = copies ? "copy" : "op";
        if (f->rule == CBT_RULE_overlap_self)
            put(&b, "%s %" PRIu64 "'s source and destination overlap: both cover %s 0x%" PRIx64, u, f->op,
                op && op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? "the CUarray" : "byte", v);
        else if (f->rule == CBT_RULE_overlap_dst_dst)
            put(&b, "%ss %" PRIu64 " and %" PRIu64 " write the same bytes: both destinations cover %s 0x%" PRIx64, u,
                f->op, f->other_op, op && op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? "the CUarray" : "byte", v);
        else
            put(&b, "%s %" PRIu64 " writes bytes that %s %" PRIu64 " reads: its destination and the other's source "
                    "cover %s 0x%" PRIx64, u, f->op, u, f->other_op,
                op && op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? "the CUarray" : "byte", v);
        if (op) {
            put(&b, " (%s %" PRIu64 ": ", u, f->op);
            op_size(&b, op, copies);
            if (other && f->other_op != f->op) {
                put(&b, "; %s %" PRIu64 ": ", u, f->other_op);
                op_size(&b, other, copies);
            }
            put(&b, ")");
        }
        break;
    }
    case CBT_RULE_lochint_ignored:
        where(&b, f, copies, 1);
        put(&b, " locHint %s is ignored on %s memory", cbt_location_name((unsigned)v) ? cbt_location_name((unsigned)v) : "?",
            l == CBT_MEM_HOST_PINNED ? "pinned host" : cbt_memkind_name((unsigned)l) ? cbt_memkind_name((unsigned)l) : "this");
        break;
    case CBT_RULE_lochint_invalid: {
        char what[64];
        snprintf(what, sizeof what, "%s %" PRIu64 "'s %s locHint", copies ? "copy" : "op", f->op, side_word(f->side));
        hint(&b, what, f, x && x->type == CU_MEMCPY_OPERAND_TYPE_POINTER ? &x->op.ptr.locHint : NULL);
        break;
    }
    case CBT_RULE_pageable_stream_order:
        where(&b, f, copies, 0);
        put(&b, ": the source is pageable host memory, copied with srcAccessOrder STREAM");
        break;
    case CBT_RULE_during_api_call_device_source:
        where(&b, f, copies, 0);
        put(&b, ": the source is device memory, copied with srcAccessOrder DURING_API_CALL");
        break;
    case CBT_RULE_ops_not_read:
        put(&b, "only %" PRIu64 " of the %" PRIu64 " %s were read: the driver rejects the batch before the rest", v, l,
            copies ? "copies" : "ops");
        break;
    case CBT_RULE_copy_array_null: {
        static const char *const names[5] = {"dsts", "srcs", "sizes", "attrs", "attrsIdxs"};
        unsigned n = 0;
        for (int i = 0; i < 5; i++)
            if (v & (1u << i))
                n++;
        unsigned k = 0;
        for (int i = 0; i < 5; i++)
            if (v & (1u << i))
                put(&b, "%s%s", k++ == 0 ? "" : k == n ? " and " : ", ", names[i]);
        put(&b, "%s NULL", n == 0 ? "an array argument is" : n == 1 ? " is" : " are");
        break;
    }
    case CBT_RULE_num_attrs_zero: put(&b, "numAttrs is 0: no attribute for the copies"); break;
    case CBT_RULE_num_attrs_above_count:
        put(&b, "numAttrs is %" PRIu64 ", more than the %" PRIu64 " copies (count)", v, l);
        break;
    case CBT_RULE_attrs_idx_first_not_zero: put(&b, "attrsIdxs[0] is %" PRIu64 ", not 0", v); break;
    case CBT_RULE_attrs_idxs_not_start_indices:
        if (v < l)
            put(&b, "attrsIdxs[%" PRIu64 "] is %" PRIu64 ", not above attrsIdxs[%" PRIu64 "] (%" PRIu64 ")", f->other_op,
                v, f->other_op ? f->other_op - 1 : 0, l ? l - 1 : 0);
        else
            put(&b, "attrsIdxs[%" PRIu64 "] is %" PRIu64 ", not below count (%" PRIu64 ")", f->other_op, v, l);
        break;
    case CBT_RULE_attr_access_order_invalid:
        put(&b, "attrs[%" PRIu64 "].srcAccessOrder is %" PRIu64 ", not STREAM (1), DURING_API_CALL (2) or ANY (3)",
            f->other_op, v);
        break;
    case CBT_RULE_attr_flags_invalid:
        put(&b, "attrs[%" PRIu64 "].flags 0x%" PRIx64 " hold bits 0x%" PRIx64 " beyond PREFER_OVERLAP_WITH_COMPUTE (0x1)",
            f->other_op, v, v & ~(uint64_t)1);
        break;
    case CBT_RULE_attr_lochint_invalid: {
        char what[64];
        snprintf(what, sizeof what, "attrs[%" PRIu64 "].%s", f->other_op,
                 f->side == CBT_SIDE_DST ? "dstLocHint" : "srcLocHint");
        hint(&b, what, f, NULL);
        break;
    }
    case CBT_RULE_copy_size_zero: put(&b, "copy %" PRIu64 ": size 0", f->op); break;
    case CBT_RULE_stream_on_stack:
        put(&b, "hStream 0x%" PRIx64 " points into the calling thread's stack: a failIdx pointer passed as the stream",
            v);
        break;
    case CBT_RULE_fail_idx_is_stream: put(&b, "failIdx is a stream handle, not a size_t pointer"); break;
    case CBT_RULE_refused_in_capture:
        put(&b, "the driver returned CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: the stream was being captured, and the "
                "copy is not in the graph");
        break;
    /* Advice (the tool's, from many ops or batches): value is how many, limit the threshold; what it
     * would save is the tool's to say after these words. */
    case CBT_RULE_unbatched_run:
        put(&b, "%" PRIu64 " calls in a row on one stream and thread, each of at most %" PRIu64 " %s", v, l,
            copies ? (l == 1 ? "copy" : "copies") : (l == 1 ? "op" : "ops"));
        break;
    case CBT_RULE_tiny_copies:
        put(&b, "%" PRIu64 " %s of the batch move less than %" PRIu64 " bytes each", v, copies ? "copies" : "ops", l);
        break;
    case CBT_RULE_huge_batch:
        put(&b, "the batch has %" PRIu64 " %s, more than %" PRIu64, v, copies ? "copies" : "ops", l);
        break;
    case CBT_RULE_overlap_flag_large_copy:
    case CBT_RULE_any_order_device_source:
    case CBT_RULE_deferred_host_source:
    case CBT_RULE_same_device_engine_copy: {
        const char *u = copies ? "copy" : "op";
        put(&b, "%" PRIu64 " %s ", v, v == 1 ? u : copies ? "copies" : "ops");
        if (v == 1)
            put(&b, "(%s %" PRIu64 ") ", u, f->op);
        else
            put(&b, "(the first: %s %" PRIu64 ") ", u, f->op);
        if (f->rule == CBT_RULE_overlap_flag_large_copy)
            put(&b, "%s more than %" PRIu64 " bytes with PREFER_OVERLAP_WITH_COMPUTE", v == 1 ? "moves" : "move", l);
        else if (f->rule == CBT_RULE_same_device_engine_copy)
            put(&b, "%s %" PRIu64 " bytes or more from device to device within one GPU", v == 1 ? "copies" : "copy", l);
        else if (f->rule == CBT_RULE_any_order_device_source)
            put(&b, "%s a device or managed source with srcAccessOrder ANY (whether work on the stream was still "
                    "writing it is not in the trace)",
                v == 1 ? "reads" : "read");
        else
            put(&b, "%s a host source with srcAccessOrder ANY (whether it was freed or changed before the stream "
                    "passed the copy is not in the trace)",
                v == 1 ? "reads" : "read");
        break;
    }
    case CBT_RULE_low_bandwidth:
        put(&b, "the batch moved its bytes at %" PRIu64 " MiB/s of GPU time, against %" PRIu64
                " MiB/s measured for its direction and memory",
            v, l);
        break;
    case CBT_RULE_pageable_source:
        put(&b, "the batch copies %" PRIu64 " bytes from pageable host memory, %" PRIu64
                " or more (from %s %" PRIu64 " on)",
            v, l, copies ? "copy" : "op", f->op);
        break;
    default: {
        const struct cbt_rule_info *ri = cbt_rule(f->rule);
        if (ri)
            put(&b, "%s", ri->text);
        else
            put(&b, "rule %u, which this version does not know", (unsigned)f->rule);
        break;
    }
    }
    return out;
}
