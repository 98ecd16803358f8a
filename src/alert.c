/* SPDX-License-Identifier: MIT */
/*
 * Alerts on stderr, asked for by CUBATCHTRACE_REPORT=stderr (`run --report
 * stderr`): each finding once per (rule, call site), in the manner of a
 * sanitizer, for users with no tracing set up.  (Not the tool's `report`
 * command, tools/report.c, nor bench/report.)
 *
 *   cubatchtrace: error: row_length_too_small in op 0 (src): rowLength 100 < width 256, extent 256x4x2
 *     a pointer operand's rowLength is neither 0 nor >= the width
 *     batch 0 (cuMemcpy3DBatchAsync_v2 via symbol) called from ./app(copy_tiles+0x4c)
 */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"

/* Seen (rule, caller) pairs: a lock-free open-addressing set; when it is
 * full, further pairs are reported every time rather than lost. */
#define SEEN_SLOTS 4096
static uint64_t seen[SEEN_SLOTS];

static bool first_time(unsigned rule, void *caller)
{
    uint64_t key = ((uint64_t)(uintptr_t)caller << 8 | rule) + 1; /* never 0 */
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < 64; i++) {
        uint64_t *slot = &seen[(h + i) % SEEN_SLOTS];
        uint64_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (cur == key)
            return false;
        if (cur == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(slot, &expected, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return true;
            if (expected == key)
                return false;
        }
    }
    return true;
}

static void name_caller(void *caller, char *buf, size_t len)
{
    Dl_info info;
    if (caller && dladdr(caller, &info) && info.dli_fname) {
        if (info.dli_sname && info.dli_saddr)
            snprintf(buf, len, "%s(%s+0x%tx)", info.dli_fname, info.dli_sname,
                     (char *)caller - (char *)info.dli_saddr);
        else
            snprintf(buf, len, "%s+0x%tx", info.dli_fname, (char *)caller - (char *)info.dli_fbase);
    } else {
        snprintf(buf, len, "%p", caller);
    }
}

/* The fields at fault, in the words of the API (docs/rules.md says what
 * value and limit hold for each rule). */
static void describe(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *op, char *buf, size_t len)
{
    static const char *const dims[] = {"width", "height", "depth"};
    uint64_t v = f->value, l = f->limit;
    switch (f->rule) {
    case CBT_RULE_num_ops_zero: snprintf(buf, len, "numOps 0"); break;
    case CBT_RULE_op_list_null: snprintf(buf, len, "opList NULL"); break;
    case CBT_RULE_flags_nonzero: snprintf(buf, len, "flags 0x%" PRIx64, v); break;
    case CBT_RULE_stream_null: snprintf(buf, len, "hStream NULL"); break;
    case CBT_RULE_stream_legacy: snprintf(buf, len, "hStream CU_STREAM_LEGACY"); break;
    case CBT_RULE_extent_zero: snprintf(buf, len, "extent %s 0", l < 3 ? dims[l] : "?"); break;
    case CBT_RULE_row_length_too_small: snprintf(buf, len, "rowLength %" PRIu64 " < width %" PRIu64, v, l); break;
    case CBT_RULE_layer_height_too_small:
        snprintf(buf, len, "layerHeight %" PRIu64 " < height %" PRIu64, v, l);
        break;
    case CBT_RULE_access_order_invalid: snprintf(buf, len, "srcAccessOrder %" PRIu64, v); break;
    case CBT_RULE_op_flags_invalid: snprintf(buf, len, "flags 0x%" PRIx64, v); break;
    case CBT_RULE_operand_type_invalid: snprintf(buf, len, "type %" PRIu64, v); break;
    case CBT_RULE_pointer_null: snprintf(buf, len, "ptr NULL"); break;
    case CBT_RULE_pointer_unmapped: snprintf(buf, len, "ptr 0x%" PRIx64 " is not mapped", v); break;
    case CBT_RULE_array_null: snprintf(buf, len, "array NULL"); break;
    case CBT_RULE_array_out_of_bounds:
        snprintf(buf, len, "offset+extent %" PRIu64 " > array size %" PRIu64, v, l);
        break;
    case CBT_RULE_array_element_size_mismatch:
        snprintf(buf, len, "element sizes %" PRIu64 " and %" PRIu64 " bytes", v, l);
        break;
    case CBT_RULE_device_out_of_bounds:
        snprintf(buf, len, "footprint ends at byte %" PRIu64 " of a %" PRIu64 "-byte allocation", v, l);
        break;
    case CBT_RULE_overlap_dst_dst:
    case CBT_RULE_overlap_src_dst:
    case CBT_RULE_overlap_self: snprintf(buf, len, "both touch 0x%" PRIx64, v); break;
    case CBT_RULE_lochint_invalid:
        if (op && (f->side == CBT_SIDE_SRC || f->side == CBT_SIDE_DST)) {
            const CUmemLocation *h = f->side == CBT_SIDE_SRC ? &op->src.op.ptr.locHint : &op->dst.op.ptr.locHint;
            snprintf(buf, len, "locHint type %d id %d", (int)h->type, h->id);
        } else {
            snprintf(buf, len, "value %" PRIu64 ", limit %" PRIu64, v, l);
        }
        break;
    case CBT_RULE_lochint_ignored:
        snprintf(buf, len, "locHint type %s on %s memory", cbt_location_name((unsigned)v) ?: "?",
                 cbt_memkind_name((unsigned)l) ?: "?");
        break;
    case CBT_RULE_pageable_stream_order: snprintf(buf, len, "pageable source, srcAccessOrder STREAM"); break;
    case CBT_RULE_during_api_call_device_source:
        snprintf(buf, len, "device source, srcAccessOrder DURING_API_CALL");
        break;
    case CBT_RULE_ops_not_read:
        snprintf(buf, len, "%" PRIu64 " of %" PRIu64 " ops read: the driver rejects the batch before reading the rest", v, l);
        break;
    case CBT_RULE_refused_in_capture:
        snprintf(buf, len, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED on a stream being captured: the copy is not in the graph");
        break;
    default: snprintf(buf, len, "value %" PRIu64 ", limit %" PRIu64, v, l); break;
    }
}

void cbt_alert_finding(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t num_ops,
                       uint64_t batch_id, enum cbt_api api, enum cbt_door door, void *caller)
{
    if (!first_time(f->rule, caller))
        return;
    const struct cbt_rule_info *r = cbt_rule(f->rule);
    char where[96] = "", other[48] = "", extent[96] = "", site[512], what[128];
    describe(f, ops && f->op < num_ops ? &ops[f->op] : NULL, what, sizeof what);
    bool d1 = cbt_api_is_1d(api);
    const char *unit = d1 ? "copy" : "op";
    if (f->op != CBT_NO_OP) {
        snprintf(where, sizeof where, " in %s %" PRIu64 "%s%s%s", unit, f->op, f->side ? " (" : "",
                 f->side ? cbt_side_name(f->side) : "", f->side ? ")" : "");
        if (ops && f->op < num_ops && d1)
            snprintf(extent, sizeof extent, ", size %zu", ops[f->op].extent.width);
        else if (ops && f->op < num_ops)
            snprintf(extent, sizeof extent, ", extent %zux%zux%zu", ops[f->op].extent.width,
                     ops[f->op].extent.height, ops[f->op].extent.depth);
    }
    if (cbt_rule_is_attr(f->rule))
        snprintf(other, sizeof other, " in attrs[%" PRIu64 "]%s%s%s", f->other_op, f->side ? " (" : "",
                 f->side ? cbt_side_name(f->side) : "", f->side ? ")" : "");
    else if (f->other_op != CBT_NO_OP)
        snprintf(other, sizeof other, " and %s %" PRIu64, unit, f->other_op);
    name_caller(caller, site, sizeof site);
    char line[1400];
    int n = snprintf(line, sizeof line,
                     "cubatchtrace: %s: %s%s%s: %s%s\n"
                     "  %s\n"
                     "  batch %" PRIu64 " (%s via %s) called from %s\n",
                     cbt_severity_name(f->severity), r ? r->name : "?", where, other, what, extent, r ? r->text : "", batch_id & 0xffffffffu /* its number within the process image */, cbt_api_name(api), cbt_door_name(door), site);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
