/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace show`: every batch, op and finding of the traces, decoded,
 * batches in the order they were put back together.  For people (the
 * default): each batch with its time and call site, one op per line, each
 * finding in words with its fix, within 100 columns.  For scripts
 * (--records): one record per line as key=value pairs, documented in
 * docs/events.md and below (the `#` lines the command prints first).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "analyse/agg.h"
#include "analyse/callsite.h"
#include "read/assemble.h"
#include "commands.h"
#include "guard.h"
#include "read/reader.h"
#include "render/text.h"
#include "base/util.h"

static const char usage_show[] =
    "Usage: cubatchtrace show [--records] [--batch N]... [--rule NAME]... [--pid PID]...\n"
    "                         [--begin TIME] [--end TIME] TRACE...\n"
    "Print every batch, op and finding of the traces, decoded, batch after batch in\n"
    "the order they were put back together: each batch with its time (seconds after\n"
    "the first batch shown), its call site (FILE:LINE where known), one op per line,\n"
    "and each finding in words with its fix, within 100 columns.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces) or an LTTng live URL.\n"
    "\n"
    "  --records         for scripts: one key=value record per line instead,\n"
    "                    the `#` lines printed first say what every key means\n"
    "                    (docs/events.md too):\n"
    "    batch vpid=P id=I api=... door=... outcome=... result=... num_ops=N ...\n"
    "    op vpid=P id=I i=K src=TYPE:KIND:DEVICE:ADDRESS dst=... extent=WxHxD ...\n"
    "    attr vpid=P id=I k=K idx=FIRST order=... flags=... src_locHint=TYPE:ID ...\n"
    "    finding vpid=P id=I rule=... severity=... op=K other_op=K side=... value=V\n"
    "      limit=L inline=... words=\"WHAT IS WRONG\" fix=\"WHAT TO CHANGE\"\n"
    "    gpu vpid=P id=I status=... gpu_ns=N start_rel_ns=N tid=T ... bytes=N ...\n"
    "                    each record ends with image=0x... when the trace tells\n"
    "                    process images apart (a finding's words and fix after it);\n"
    "                    inline=0 marks a finding the shim's own validator did not\n"
    "                    make, inline_finding lines the reverse\n"
    "  --pretty          the default layout (accepted for older scripts)\n"
    "  --batch N         only batch N (its number within its process image, the\n"
    "                    id= of the records); repeatable\n"
    "  --rule NAME       only batches with a finding of this rule; repeatable\n"
    "                    (`cubatchtrace rules` lists them)\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 printed, 2 the input could not be read (one line on stderr).\n";

static const char legend[] =
    "# cubatchtrace show --records: one record per line, key=value; batches in the order they were put back together\n"
    "# every record: vpid, id (the batch's number within its process image), and last image (the image's tag,\n"
    "#   when the trace has them: it tells apart the processes of one vpid: exec, pid namespaces, reused pids)\n"
    "# batch: vpid, id, api, door, outcome, result, num_ops (as passed), recorded (ops the trace holds),\n"
    "#   flags, op_list, stream, stream_id, context, device, capture, fail_idx (- unless the 12.8 ABI set it),\n"
    "#   driver_ns, tid (calling thread), caller, device_count, format, rules (catalogue version of the recorder),\n"
    "#   validated (1: the shim validated it inline), inline_findings (how many it made),\n"
    "#   mark=refused_in_capture (the driver refused it: its stream was being captured into a graph),\n"
    "#   mark=captured graph=G (the driver took it into graph G being captured: its copies run at launches),\n"
    "#   mark=graph_node (a CUDA graph's batch node: its copies run at launches, door graph_launch), host, state:\n"
    "#   complete; pending (recorded before a driver call that never returned: the process ended inside it);\n"
    "#   incomplete (ops missing); malformed (chunks that do not fit the format); given_up (memory cap);\n"
    "#   no_header (ops whose batch event never came).  Only complete and pending batches are validated.\n"
    "# op: vpid, id, i (index in the batch), src and dst as TYPE:KIND:DEVICE:ADDRESS, arrays +X,Y,Z (offset),\n"
    "#   extent WxHxD, order (srcAccessOrder), flags, bytes; pointers add *_rowLength, *_layerHeight,\n"
    "#   *_locHint TYPE:ID and *_alloc BASE+SIZE (when known); arrays *_array WxHxD*ELEMENT_SIZE (when known)\n"
    "# A 1D batch (api cuMemcpyBatchAsync*): num_ops is count, op_list dsts; the batch line adds srcs, sizes,\n"
    "#   attrs, attrs_idxs, num_attrs, attrs_recorded, abi; each copy is an op (POINTER to POINTER, extent\n"
    "#   SIZEx1x1, with its attribute's order, flags and locHints); each attribute recorded is an attr line:\n"
    "#   k (index in attrs), idx (attrsIdxs[k]), order, flags, src_locHint and dst_locHint TYPE:ID\n"
    "# finding: vpid, id, rule, severity, op and other_op (- for none; for the attr_* rules other_op is the\n"
    "#   attribute's index k), side, value, limit (raw: docs/rules.md), inline (1: the shim's validator made\n"
    "#   it too; 0: it did not; -: not compared), then last words=\"...\" (what is wrong, in words) and\n"
    "#   fix=\"...\" (what to change), quoted: a \" or \\ inside is preceded by \\\n"
    "# inline_finding: a finding of the shim's validator that the reader's did not make (same keys)\n"
    "# gpu: a batch's GPU time (CUBATCHTRACE_GPU_TIME), as its gpu_time event came: vpid, id, status, gpu_ns,\n"
    "#   start_rel_ns (GPU start minus the event's time), then the batch's: tid, api, stream, stream_id, device,\n"
    "#   driver_ns, ops, bytes, src_kind and dst_kind (mixed: not all alike), src_device and dst_device\n"
    "#   (-1 none, mixed)\n";

static const char legend_pretty[] =
    "# cubatchtrace show: each batch (seconds after the first shown, pid, thread, call site),\n"
    "#   its ops (extent, source -> destination as KIND:ADDRESS, bytes, srcAccessOrder), its findings\n"
    "#   (severity, rule, what is wrong, fix:); for scripts: show --records (docs/events.md)\n";

/* The filters (--batch, --rule); --pid and the window are the reader's. */
struct show_filter {
    uint64_t *batches;
    int nbatches;
    bool rules[CBT_RULE_COUNT];
    bool any_rule;
};

struct show {
    FILE *out;
    struct cbt_agg *agg;
    bool legend_done; /* printed at the first batch: nothing on stdout when the input cannot be read */
    bool records;     /* --records: key=value records; else the layout for people */
    const struct show_filter *filter;
    bool have_t0;
    int64_t t0; /* the first batch shown (the layout for people): times are after it */
    uint64_t batches, ops, findings;
};

static void print_legend(struct show *s)
{
    if (!s->legend_done)
        fputs(s->records ? legend : legend_pretty, s->out);
    s->legend_done = true;
}

static bool batch_selected(const struct show *s, const struct cbt_read_batch *rb)
{
    const struct show_filter *f = s->filter;
    if (f->nbatches) {
        bool hit = false;
        for (int i = 0; i < f->nbatches && !hit; i++)
            hit = rb->have_header && cbt_batch_number(rb->h.batch_id) == f->batches[i];
        if (!hit)
            return false;
    }
    if (f->any_rule) {
        for (uint64_t i = 0; i < rb->nfindings; i++)
            if (rb->findings[i].rule < CBT_RULE_COUNT && f->rules[rb->findings[i].rule])
                return true;
        for (uint64_t i = 0; i < rb->ninline_only; i++)
            if (rb->inline_only[i].rule < CBT_RULE_COUNT && f->rules[rb->inline_only[i].rule])
                return true;
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- the layout for people */

#define PRETTY_WIDTH 100

/* A line of at most PRETTY_WIDTH columns: longer ones end in '>' (--records has the rest). */
static void put_line(FILE *out, const char *line)
{
    if (cbt_text_width(line) <= PRETTY_WIDTH) {
        fprintf(out, "%s\n", line);
        return;
    }
    size_t n = 0, w = 0; /* bytes of the first PRETTY_WIDTH - 1 columns (UTF-8: a column per lead byte) */
    while (line[n] && w < PRETTY_WIDTH - 1) {
        n++;
        while ((line[n] & 0xc0) == 0x80)
            n++;
        w++;
    }
    fprintf(out, "%.*s>\n", (int)n, line);
}

static const char *short_kind(unsigned kind)
{
    switch (kind) {
    case CBT_MEM_DEVICE: return "dev";
    case CBT_MEM_HOST_PINNED: return "pinned";
    case CBT_MEM_HOST_PAGEABLE: return "pageable";
    case CBT_MEM_MANAGED: return "managed";
    case CBT_MEM_ARRAY: return "array";
    case CBT_MEM_UNMAPPED: return "unmapped";
    default: return "mem";
    }
}

static void pretty_operand(char *b, size_t l, const CUmemcpy3DOperand *o, const struct cbt_operand_info *in)
{
    char dev[16] = "";
    if ((in->kind == CBT_MEM_DEVICE || in->kind == CBT_MEM_MANAGED || in->kind == CBT_MEM_ARRAY) && in->device >= 0)
        snprintf(dev, sizeof(dev), "%d", (int)in->device);
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        snprintf(b, l, "array%s:0x%" PRIx64 "@%zu,%zu,%zu", dev, (uint64_t)(uintptr_t)o->op.array.array,
                 o->op.array.offset.x, o->op.array.offset.y, o->op.array.offset.z);
    else if (o->type == CU_MEMCPY_OPERAND_TYPE_POINTER)
        snprintf(b, l, "%s%s:0x%" PRIx64, short_kind(in->kind), dev, (uint64_t)o->op.ptr.ptr);
    else
        snprintf(b, l, "type%u", (unsigned)o->type);
}

static const char *short_order(unsigned order)
{
    return order == CBT_ORDER_STREAM ? "stream" : order == CBT_ORDER_DURING_API_CALL ? "during-call"
           : order == CBT_ORDER_ANY ? "any" : "order?";
}

static void pretty_time(struct show *s, const struct cbt_where *w, char *b, size_t l)
{
    if (!w->has_ts) {
        snprintf(b, l, "%12s", "?");
        return;
    }
    if (!s->have_t0) {
        s->have_t0 = true;
        s->t0 = w->ts_ns;
        time_t t = (time_t)(w->ts_ns / 1000000000);
        struct tm tm;
        char when[64] = "?";
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(s->out, "# times: seconds after %s.%09" PRId64 " UTC (the first batch shown)\n", when,
                w->ts_ns % 1000000000);
    }
    int64_t d = w->ts_ns - s->t0;
    snprintf(b, l, "%s%" PRId64 ".%06" PRId64, d < 0 ? "-" : "", (d < 0 ? -d : d) / 1000000000,
             ((d < 0 ? -d : d) % 1000000000) / 1000);
}

/* A finding of rb in the words every output uses (cbt_finding_words), with the ops it names. */
static const char *finding_words(const struct cbt_read_batch *rb, const struct cbt_finding *f, char *buf, size_t len)
{
    const CUDA_MEMCPY3D_BATCH_OP *op = f->op < rb->nops ? &rb->ops[f->op] : NULL;
    const CUDA_MEMCPY3D_BATCH_OP *other =
        f->other_op < rb->nops && !cbt_rule_is_attr(f->rule) ? &rb->ops[f->other_op] : NULL;
    return cbt_finding_words(f, op, other, rb->is1d, buf, len);
}

static void pretty_finding(struct show *s, const struct cbt_read_batch *rb, const struct cbt_finding *f, bool only_inline)
{
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    char words[512], head[128];
    snprintf(head, sizeof(head), "  %s%s %s: ", only_inline ? "(the shim's only) " : "",
             cbt_severity_name(ri ? ri->severity : f->severity) ? cbt_severity_name(ri ? ri->severity : f->severity)
                                                                 : "?",
             ri ? ri->name : "rule?");
    cbt_print_wrapped(s->out, head, 4, finding_words(rb, f, words, sizeof(words)), PRETTY_WIDTH);
    const char *fix = cbt_finding_fix(f->rule);
    if (*fix)
        cbt_print_wrapped(s->out, "    fix: ", 9, fix, PRETTY_WIDTH);
}

static void pretty_batch(struct show *s, const struct cbt_read_batch *rb)
{
    FILE *out = s->out;
    const struct cbt_ev_batch *h = &rb->h;
    char t[32], line[1024], site[600], bytes[32], ns[32];
    pretty_time(s, &rb->w, t, sizeof(t));
    uint64_t total = 0;
    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); i < rb->nops; i = cbt_read_op(rb, i + 1, &sp))
        total += cbt_op_bytes(&rb->ops[i], &rb->src[i], &rb->dst[i]);
    cbt_fmt_bytes(total, bytes, sizeof(bytes));
    const char *unit = rb->is1d ? "copies" : "ops";
    if (rb->have_header) {
        cbt_objmap_name(cbt_agg_callsites(s->agg), rb->w.host, rb->w.vpid, h->caller, site, sizeof(site));
        snprintf(line, sizeof(line), "%s batch %" PRIu64 " pid %" PRId64 " tid %d: %" PRIu64 " %s, %s, at %s", t,
                 cbt_batch_number(h->batch_id), rb->w.vpid, (int)h->tid, h->num_ops,
                 h->num_ops == 1 ? (rb->is1d ? "copy" : "op") : unit, bytes, site);
        put_line(out, line);
        /* run --stack N: the caller's callers, one a line, so that none is cut at the width */
        for (unsigned k = 1; k < rb->nstack; k++) {
            snprintf(line, sizeof(line), "    <- %s",
                     cbt_objmap_name(cbt_agg_callsites(s->agg), rb->w.host, rb->w.vpid, rb->stack[k], site, sizeof(site)));
            put_line(out, line);
        }
        cbt_fmt_ns((double)h->driver_ns, ns, sizeof(ns));
        char more[256] = "";
        if (rb->state != CBT_BS_COMPLETE)
            snprintf(more, sizeof(more), ", %s", cbt_batch_state_name(rb->state));
        if (h->outcome == CBT_OUTCOME_FORWARDED && h->result == CBT_CU_CAPTURE_UNSUPPORTED)
            snprintf(more + strlen(more), sizeof(more) - strlen(more), ", refused in capture");
        if (h->ops_recorded < h->num_ops)
            snprintf(more + strlen(more), sizeof(more) - strlen(more), ", %" PRIu64 " recorded", h->ops_recorded);
        if (rb->captured)
            snprintf(more + strlen(more), sizeof(more) - strlen(more),
                     ", captured into graph 0x%" PRIx64 ": its copies run at each launch", rb->graph);
        if (h->door == CBT_DOOR_GRAPH_NODE)
            snprintf(line, sizeof(line), "    batch node of a CUDA graph: its copies run at each launch%s", more);
        else if (h->door == CBT_DOOR_GRAPH_LAUNCH)
            snprintf(line, sizeof(line), "    cuGraphLaunch of graph 0x%" PRIx64 ": %s, %s in the driver, stream 0x%" PRIx64 "%s",
                     h->op_list, cbt_curesult_name(h->result) ? cbt_curesult_name(h->result) : "?", ns, h->stream,
                     more);
        else
        snprintf(line, sizeof(line), "    %s: %s%s%s, %s in the driver, stream %" PRIu64 ", device %d%s",
                 cbt_api_name(h->api) ? cbt_api_name(h->api) : "?",
                 cbt_outcome_name(h->outcome) ? cbt_outcome_name(h->outcome) : "?",
                 h->outcome == CBT_OUTCOME_FORWARDED ? " " : "",
                 h->outcome == CBT_OUTCOME_FORWARDED ? (cbt_curesult_name(h->result) ? cbt_curesult_name(h->result) : "?") : "",
                 ns, h->stream_id, (int)h->device, more);
        put_line(out, line);
    } else {
        snprintf(line, sizeof(line), "%s batch ? pid %" PRId64 ": %s %s whose batch event never came", t, rb->w.vpid,
                 bytes, unit);
        put_line(out, line);
    }
    for (uint64_t k = 0; rb->attrs && k < rb->nattrs; k++) {
        const CUmemcpyAttributes *a = &rb->attrs[k];
        snprintf(line, sizeof(line), "  attr %" PRIu64 " from copy %" PRIu64 ": %s, flags 0x%x, locHints %s:%d -> %s:%d",
                 k, rb->attrs_idxs[k], short_order((unsigned)a->srcAccessOrder), a->flags,
                 cbt_location_name((unsigned)a->srcLocHint.type) ? cbt_location_name((unsigned)a->srcLocHint.type) : "?",
                 a->srcLocHint.id,
                 cbt_location_name((unsigned)a->dstLocHint.type) ? cbt_location_name((unsigned)a->dstLocHint.type) : "?",
                 a->dstLocHint.id);
        put_line(out, line);
    }
    sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); i < rb->nops; i = cbt_read_op(rb, i + 1, &sp)) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &rb->ops[i];
        char src[96], dst[96], b[32], ext[80];
        pretty_operand(src, sizeof(src), &op->src, &rb->src[i]);
        pretty_operand(dst, sizeof(dst), &op->dst, &rb->dst[i]);
        cbt_fmt_bytes(cbt_op_bytes(op, &rb->src[i], &rb->dst[i]), b, sizeof(b));
        if (rb->is1d)
            snprintf(ext, sizeof(ext), "%zu B", op->extent.width);
        else
            snprintf(ext, sizeof(ext), "%zux%zux%zu", op->extent.width, op->extent.height, op->extent.depth);
        snprintf(line, sizeof(line), "  %s %" PRIu64 " %s %s -> %s %s %s%s", rb->is1d ? "copy" : "op", i, ext, src,
                 dst, b, short_order((unsigned)op->srcAccessOrder), op->flags ? " overlap-compute" : "");
        put_line(out, line);
        s->ops++;
    }
    for (uint64_t i = 0; i < rb->nfindings; i++)
        pretty_finding(s, rb, &rb->findings[i], false);
    for (uint64_t i = 0; i < rb->ninline_only; i++)
        pretty_finding(s, rb, &rb->inline_only[i], true);
}

static const char *name_or(const char *name, char *buf, size_t len, uint64_t v)
{
    if (name)
        return name;
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static void print_index(FILE *out, const char *key, uint64_t v)
{
    if (v == UINT64_MAX)
        fprintf(out, " %s=-", key);
    else
        fprintf(out, " %s=%" PRIu64, key, v);
}

static void print_operand(FILE *out, const char *side, const CUmemcpy3DOperand *o, const struct cbt_operand_info *in)
{
    char b1[24], b2[24];
    const char *type = name_or(cbt_operand_name((unsigned)o->type), b1, sizeof(b1), (uint64_t)o->type);
    const char *kind = name_or(cbt_memkind_name(in->kind), b2, sizeof(b2), in->kind);
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        fprintf(out, " %s=%s:%s:%d:0x%" PRIx64 "+%zu,%zu,%zu", side, type, kind, (int)in->device,
                (uint64_t)(uintptr_t)o->op.array.array, o->op.array.offset.x, o->op.array.offset.y,
                o->op.array.offset.z);
    else
        fprintf(out, " %s=%s:%s:%d:0x%" PRIx64, side, type, kind, (int)in->device, (uint64_t)o->op.ptr.ptr);
}

static void print_operand_detail(FILE *out, const char *side, const CUmemcpy3DOperand *o,
                                 const struct cbt_operand_info *in)
{
    char b[24];
    if (o->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
        fprintf(out, " %s_rowLength=%zu %s_layerHeight=%zu %s_locHint=%s:%d", side, o->op.ptr.rowLength, side,
                o->op.ptr.layerHeight, side,
                name_or(cbt_location_name((unsigned)o->op.ptr.locHint.type), b, sizeof(b),
                        (uint64_t)o->op.ptr.locHint.type),
                o->op.ptr.locHint.id);
        if (in->alloc_size)
            fprintf(out, " %s_alloc=0x%" PRIx64 "+%" PRIu64, side, in->alloc_base, in->alloc_size);
    } else if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && in->kind == CBT_MEM_ARRAY && in->array_width) {
        fprintf(out, " %s_array=%" PRIu64 "x%" PRIu64 "x%" PRIu64 "*%u", side, in->array_width, in->array_height,
                in->array_depth, in->elem_size);
    }
}

static void print_finding_keys(FILE *out, uint16_t rule, uint8_t severity, uint64_t op, uint64_t other, uint8_t side,
                               uint64_t value, uint64_t limit)
{
    char b1[24], b2[24], b3[24], v[32], l[32];
    const struct cbt_rule_info *ri = cbt_rule(rule);
    fprintf(out, " rule=%s severity=%s", ri ? ri->name : name_or(NULL, b1, sizeof(b1), rule),
            name_or(cbt_severity_name(severity), b2, sizeof(b2), severity));
    print_index(out, "op", op);
    print_index(out, "other_op", other);
    fprintf(out, " side=%s value=%s limit=%s", name_or(cbt_side_name(side), b3, sizeof(b3), side),
            cbt_rule_value(rule, value, v, sizeof(v)), cbt_rule_value(rule, limit, l, sizeof(l)));
}

/* key="text": a " or \ inside preceded by \, a control character (none is expected) as a space */
static void print_quoted(FILE *out, const char *key, const char *text)
{
    fprintf(out, " %s=\"", key);
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', out);
        fputc((unsigned char)*p < 0x20 ? ' ' : *p, out);
    }
    fputc('"', out);
}

/* What a finding record ends with: its words and its fix (cbt_finding_fix: "" for a rule this tool does not know). */
static void print_finding_words(FILE *out, const struct cbt_read_batch *rb, const struct cbt_finding *f)
{
    char words[512];
    print_quoted(out, "words", finding_words(rb, f, words, sizeof(words)));
    print_quoted(out, "fix", cbt_finding_fix(f->rule));
}

static void show_batch(void *ctx, const struct cbt_read_batch *rb)
{
    struct show *s = ctx;
    FILE *out = s->out;
    const struct cbt_ev_batch *h = &rb->h;
    char b[6][24], img[24] = "";
    if (!batch_selected(s, rb))
        return;
    print_legend(s);
    s->batches++;
    if (!s->records) {
        s->findings += rb->nfindings;
        pretty_batch(s, rb);
        return;
    }
    if (rb->w.image) /* the process image (docs/events.md): id is the batch's number within it */
        snprintf(img, sizeof(img), " image=0x%08" PRIx32, rb->w.image);
    fprintf(out, "batch vpid=%" PRId64 " id=%" PRIu64, rb->w.vpid, cbt_batch_number(h->batch_id));
    if (rb->have_header) {
        fprintf(out,
                " api=%s door=%s outcome=%s result=%s num_ops=%" PRIu64 " recorded=%" PRIu64 " flags=0x%" PRIx64
                " op_list=0x%" PRIx64 " stream=0x%" PRIx64 " stream_id=%" PRIu64 " context=0x%" PRIx64 " device=%d"
                " capture=%s",
                name_or(cbt_api_name(h->api), b[0], sizeof(b[0]), h->api),
                name_or(cbt_door_name(h->door), b[1], sizeof(b[1]), h->door),
                name_or(cbt_outcome_name(h->outcome), b[2], sizeof(b[2]), h->outcome),
                name_or(cbt_curesult_name(h->result), b[3], sizeof(b[3]), h->result), h->num_ops, h->ops_recorded,
                h->flags, h->op_list, h->stream, h->stream_id, h->context, (int)h->device,
                name_or(cbt_capture_name(h->capture), b[4], sizeof(b[4]), h->capture));
        print_index(out, "fail_idx", h->fail_idx);
        fprintf(out,
                " driver_ns=%" PRIu64 " tid=%d caller=0x%" PRIx64 " device_count=%d format=%u rules=%u validated=%u"
                " inline_findings=%u",
                h->driver_ns, (int)h->tid, h->caller, (int)h->device_count, (unsigned)h->format, (unsigned)h->rules,
                (unsigned)h->validated, (unsigned)h->findings);
        for (unsigned k = 0; k < rb->nstack; k++) /* run --stack N: the caller and its callers */
            fprintf(out, "%s0x%" PRIx64, k ? "," : " stack=", rb->stack[k]);
    }
    if (rb->have_header && rb->is1d)
        fprintf(out,
                " srcs=0x%" PRIx64 " sizes=0x%" PRIx64 " attrs=0x%" PRIx64 " attrs_idxs=0x%" PRIx64
                " num_attrs=%" PRIu64 " attrs_recorded=%" PRIu64 " abi=%u",
                rb->d.srcs, rb->d.sizes, rb->d.attrs, rb->d.attrs_idxs, rb->d.num_attrs, rb->d.attrs_recorded,
                (unsigned)rb->d.abi);
    if (rb->have_header && h->outcome == CBT_OUTCOME_FORWARDED && h->result == CBT_CU_CAPTURE_UNSUPPORTED)
        fputs(" mark=refused_in_capture", out);
    if (rb->captured)
        fprintf(out, " mark=captured graph=0x%" PRIx64, rb->graph);
    else if (rb->not_run)
        fputs(" mark=graph_node", out);
    fprintf(out, " host=%s state=%s%s\n", cbt_agg_host_name(s->agg, rb->w.host), cbt_batch_state_name(rb->state), img);
    for (uint64_t k = 0; rb->attrs && k < rb->nattrs; k++) {
        const CUmemcpyAttributes *a = &rb->attrs[k];
        char t1[24], t2[24], o1[24];
        fprintf(out, "attr vpid=%" PRId64 " id=%" PRIu64 " k=%" PRIu64 " idx=%" PRIu64
                " order=%s flags=0x%x src_locHint=%s:%d dst_locHint=%s:%d%s\n",
                rb->w.vpid, cbt_batch_number(h->batch_id), k, rb->attrs_idxs[k],
                name_or(cbt_access_order_name((unsigned)a->srcAccessOrder), o1, sizeof(o1), (uint64_t)a->srcAccessOrder),
                a->flags,
                name_or(cbt_location_name((unsigned)a->srcLocHint.type), t1, sizeof(t1), (uint64_t)a->srcLocHint.type),
                a->srcLocHint.id,
                name_or(cbt_location_name((unsigned)a->dstLocHint.type), t2, sizeof(t2), (uint64_t)a->dstLocHint.type),
                a->dstLocHint.id, img);
    }

    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); i < rb->nops; i = cbt_read_op(rb, i + 1, &sp)) { /* the ops whose chunk came */
        const CUDA_MEMCPY3D_BATCH_OP *op = &rb->ops[i];
        const struct cbt_operand_info *si = &rb->src[i], *di = &rb->dst[i];
        s->ops++;
        fprintf(out, "op vpid=%" PRId64 " id=%" PRIu64 " i=%" PRIu64, rb->w.vpid, cbt_batch_number(h->batch_id), i);
        print_operand(out, "src", &op->src, si);
        print_operand(out, "dst", &op->dst, di);
        fprintf(out, " extent=%zux%zux%zu order=%s flags=0x%x bytes=%" PRIu64, op->extent.width, op->extent.height,
                op->extent.depth,
                name_or(cbt_access_order_name((unsigned)op->srcAccessOrder), b[5], sizeof(b[5]),
                        (uint64_t)op->srcAccessOrder),
                op->flags, cbt_op_bytes(op, si, di));
        print_operand_detail(out, "src", &op->src, si);
        print_operand_detail(out, "dst", &op->dst, di);
        fprintf(out, "%s\n", img);
    }
    for (uint64_t i = 0; i < rb->nfindings; i++) {
        const struct cbt_finding *f = &rb->findings[i];
        s->findings++;
        fprintf(out, "finding vpid=%" PRId64 " id=%" PRIu64, rb->w.vpid, cbt_batch_number(h->batch_id));
        print_finding_keys(out, f->rule, f->severity, f->op, f->other_op, f->side, f->value, f->limit);
        uint8_t in = rb->finding_inline[i];
        fprintf(out, " inline=%s%s", in == 1 ? "1" : in == 0 ? "0" : "-", img);
        print_finding_words(out, rb, f);
        fputc('\n', out);
    }
    for (uint64_t i = 0; i < rb->ninline_only; i++) {
        const struct cbt_finding *f = &rb->inline_only[i];
        fprintf(out, "inline_finding vpid=%" PRId64 " id=%" PRIu64, rb->w.vpid, cbt_batch_number(h->batch_id));
        print_finding_keys(out, f->rule, f->severity, f->op, f->other_op, f->side, f->value, f->limit);
        fputs(img, out);
        print_finding_words(out, rb, f);
        fputc('\n', out);
    }
}

static void print_gpu_device(FILE *out, const char *key, int32_t d)
{
    if (d == CBT_GPU_MIXED_DEVICE)
        fprintf(out, " %s=mixed", key);
    else
        fprintf(out, " %s=%d", key, (int)d);
}

static void show_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct show *s = ctx;
    FILE *out = s->out;
    char b[4][24];
    const struct show_filter *f = s->filter;
    if (f->any_rule)
        return; /* a gpu line says nothing of findings */
    if (f->nbatches) {
        bool hit = false;
        for (int i = 0; i < f->nbatches && !hit; i++)
            hit = cbt_batch_number(g->batch_id) == f->batches[i];
        if (!hit)
            return;
    }
    print_legend(s);
    if (!s->records) {
        char t[32], gns[32], line[256];
        pretty_time(s, w, t, sizeof(t));
        cbt_fmt_ns((double)g->gpu_ns, gns, sizeof(gns));
        snprintf(line, sizeof(line), "%s gpu time of batch %" PRIu64 " pid %" PRId64 ": %s%s%s", t,
                 cbt_batch_number(g->batch_id), w->vpid,
                 cbt_gpu_status_name(g->status) ? cbt_gpu_status_name(g->status) : "?",
                 g->status == CBT_GPU_TIMED ? ", " : "", g->status == CBT_GPU_TIMED ? gns : "");
        put_line(out, line);
        return;
    }
    fprintf(out,
            "gpu vpid=%" PRId64 " id=%" PRIu64 " status=%s gpu_ns=%" PRIu64 " start_rel_ns=%" PRId64 " tid=%d api=%s"
            " stream=0x%" PRIx64 " stream_id=%" PRIu64 " device=%d driver_ns=%" PRIu64 " ops=%" PRIu64
            " bytes=%" PRIu64 " src_kind=%s dst_kind=%s",
            w->vpid, cbt_batch_number(g->batch_id), name_or(cbt_gpu_status_name(g->status), b[0], sizeof(b[0]), g->status),
            g->gpu_ns, g->start_rel_ns, (int)g->tid, name_or(cbt_api_name(g->api), b[1], sizeof(b[1]), g->api),
            g->stream, g->stream_id, (int)g->device, g->driver_ns, g->ops, g->bytes,
            g->src_kind == CBT_GPU_MIXED_KIND ? "mixed" : name_or(cbt_memkind_name(g->src_kind), b[2], sizeof(b[2]), g->src_kind),
            g->dst_kind == CBT_GPU_MIXED_KIND ? "mixed" : name_or(cbt_memkind_name(g->dst_kind), b[3], sizeof(b[3]), g->dst_kind));
    print_gpu_device(out, "src_device", g->src_device);
    print_gpu_device(out, "dst_device", g->dst_device);
    if (w->image)
        fprintf(out, " image=0x%08" PRIx32, w->image);
    fputc('\n', out);
}

struct show_job {
    struct cbt_read_opts ro;
    bool records;
    struct show_filter filter;
};

static int show_read(void *arg)
{
    const struct show_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(0);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    static char buf[1 << 16];
    struct show s = {.out = stdout, .agg = a, .records = j->records, .filter = &j->filter};
    setvbuf(stdout, buf, _IOFBF, sizeof(buf));
    struct cbt_read_opts ro = j->ro;
    ro.batch = show_batch;
    ro.batch_ctx = &s;
    ro.gpu = show_gpu;
    ro.gpu_ctx = &s;
    struct cbt_read_out out;
    cbt_agg_read_out(a, &out);
    int rc = cbt_read(&ro, &out);
    if (rc == 0)
        print_legend(&s);
    if (rc == 0)
        printf("# batches: %" PRIu64 ", ops: %" PRIu64 ", findings: %" PRIu64 "\n", s.batches, s.ops, s.findings);
    fflush(stdout);
    cbt_agg_free(a);
    return rc;
}

int cbt_cmd_show(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {"begin", required_argument, NULL, 'B'}, {"end", required_argument, NULL, 'E'},
        {"pretty", no_argument, NULL, 'P'}, {"batch", required_argument, NULL, 'b'},
        {"rule", required_argument, NULL, 'r'}, {"records", no_argument, NULL, 'R'}, {0, 0, 0, 0},
    };
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    int npids = 0, c, rc = 2;
    struct show_filter filter = {0};
    bool records = false;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
        case 'P': records = false; break; /* the default layout, by its former option */
        case 'R': records = true; break;
        case 'b': {
            char *e;
            errno = 0;
            unsigned long long n = strtoull(optarg, &e, 10);
            if (!*optarg || *e || errno || *optarg == '-' || n > UINT32_MAX) {
                cbt_usage_error("--batch %s: expected a batch number (the id= of `cubatchtrace show`)", optarg);
                goto out;
            }
            uint64_t *nb = realloc(filter.batches, (size_t)(filter.nbatches + 1) * sizeof(*nb));
            if (!nb) {
                cbt_err("out of memory");
                goto out;
            }
            filter.batches = nb;
            filter.batches[filter.nbatches++] = n;
            break;
        }
        case 'r': {
            unsigned k = 0;
            while (k < CBT_RULE_COUNT && strcmp(cbt_rules[k].name, optarg) != 0)
                k++;
            if (k == CBT_RULE_COUNT) {
                cbt_usage_error("--rule %s: no such rule (`cubatchtrace rules` lists them)", optarg);
                goto out;
            }
            filter.rules[k] = filter.any_rule = true;
            break;
        }
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_show, stdout); rc = 0; goto out;
        default: cbt_option_error("show", c, argv, opts); goto out;
        }
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    struct show_job j = {{
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end},
        records, filter};
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, show_read, &j);
out:
    free(filter.batches);
    free(pids);
    return rc;
}
