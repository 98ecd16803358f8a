/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace show`: every batch, op and finding of the traces, decoded,
 * one record per line as key=value pairs, batches in the order they were
 * put back together.  The format is documented in docs/events.md and below
 * (the `#` lines the command prints first).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "analyse/agg.h"
#include "read/assemble.h"
#include "commands.h"
#include "guard.h"
#include "read/reader.h"
#include "base/util.h"

static const char usage_show[] =
    "Usage: cubatchtrace show [--pid PID]... [--begin TIME] [--end TIME] TRACE...\n"
    "Print every batch, op and finding of the traces, decoded, one record per line:\n"
    "  batch vpid=P id=I api=... door=... outcome=... result=... num_ops=N recorded=R ...\n"
    "  op vpid=P id=I i=K src=TYPE:KIND:DEVICE:ADDRESS dst=... extent=WxHxD ...\n"
    "  attr vpid=P id=I k=K idx=FIRST order=... flags=... src_locHint=TYPE:ID dst_locHint=...\n"
    "  finding vpid=P id=I rule=... severity=... op=K other_op=K side=... value=V limit=L inline=...\n"
    "  gpu vpid=P id=I status=... gpu_ns=N start_rel_ns=N tid=T ... ops=N bytes=N src_kind=... dst_kind=...\n"
    "Each line ends with image=0x... when the trace tells process images apart.\n"
    "The `#` lines printed first say what every key means (docs/events.md too).\n"
    "Findings are the validator's, run as the trace is read; inline=0 marks one the\n"
    "shim's own validator did not make, and inline_finding lines the reverse.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces) or an LTTng live URL.\n"
    "\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 printed, 2 the input could not be read (one line on stderr).\n";

static const char legend[] =
    "# cubatchtrace show: one record per line, key=value; batches in the order they were put back together\n"
    "# every record: vpid, id (the batch's number within its process image), and last image (the image's tag,\n"
    "#   when the trace has them: it tells apart the processes of one vpid: exec, pid namespaces, reused pids)\n"
    "# batch: vpid, id, api, door, outcome, result, num_ops (as passed), recorded (ops the trace holds),\n"
    "#   flags, op_list, stream, stream_id, context, device, capture, fail_idx (- unless the 12.8 ABI set it),\n"
    "#   driver_ns, tid (calling thread), caller, device_count, format, rules (catalogue version of the recorder),\n"
    "#   validated (1: the shim validated it inline), inline_findings (how many it made),\n"
    "#   mark=refused_in_capture (the driver refused it: its stream was being captured into a graph), host, state:\n"
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
    "#   attribute's index k), side, value, limit, inline (1: the\n"
    "#   shim's validator made it too; 0: it did not; -: not compared)\n"
    "# inline_finding: a finding of the shim's validator that the reader's did not make (same keys)\n"
    "# gpu: a batch's GPU time (CUBATCHTRACE_GPU_TIME), as its gpu_time event came: vpid, id, status, gpu_ns,\n"
    "#   start_rel_ns (GPU start minus the event's time), then the batch's: tid, api, stream, stream_id, device,\n"
    "#   driver_ns, ops, bytes, src_kind and dst_kind (mixed: not all alike), src_device and dst_device\n"
    "#   (-1 none, mixed)\n";

struct show {
    FILE *out;
    struct cbt_agg *agg;
    bool legend_done; /* printed at the first batch: nothing on stdout when the input cannot be read */
    uint64_t batches, ops, findings;
};

static void print_legend(struct show *s)
{
    if (!s->legend_done)
        fputs(legend, s->out);
    s->legend_done = true;
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

static void show_batch(void *ctx, const struct cbt_read_batch *rb)
{
    struct show *s = ctx;
    FILE *out = s->out;
    const struct cbt_ev_batch *h = &rb->h;
    char b[6][24], img[24] = "";
    if (rb->w.image) /* the process image (docs/events.md): id is the batch's number within it */
        snprintf(img, sizeof(img), " image=0x%08" PRIx32, rb->w.image);
    print_legend(s);
    s->batches++;
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
    }
    if (rb->have_header && rb->is1d)
        fprintf(out,
                " srcs=0x%" PRIx64 " sizes=0x%" PRIx64 " attrs=0x%" PRIx64 " attrs_idxs=0x%" PRIx64
                " num_attrs=%" PRIu64 " attrs_recorded=%" PRIu64 " abi=%u",
                rb->d.srcs, rb->d.sizes, rb->d.attrs, rb->d.attrs_idxs, rb->d.num_attrs, rb->d.attrs_recorded,
                (unsigned)rb->d.abi);
    if (rb->have_header && h->outcome == CBT_OUTCOME_FORWARDED && h->result == CBT_CU_CAPTURE_UNSUPPORTED)
        fputs(" mark=refused_in_capture", out);
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
        fprintf(out, " inline=%s%s\n", in == 1 ? "1" : in == 0 ? "0" : "-", img);
    }
    for (uint64_t i = 0; i < rb->ninline_only; i++) {
        const struct cbt_finding *f = &rb->inline_only[i];
        fprintf(out, "inline_finding vpid=%" PRId64 " id=%" PRIu64, rb->w.vpid, cbt_batch_number(h->batch_id));
        print_finding_keys(out, f->rule, f->severity, f->op, f->other_op, f->side, f->value, f->limit);
        fprintf(out, "%s\n", img);
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
    print_legend(s);
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
    struct show s = {.out = stdout, .agg = a};
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
        {"begin", required_argument, NULL, 'B'}, {"end", required_argument, NULL, 'E'}, {0, 0, 0, 0},
    };
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    int npids = 0, c, rc = 2;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
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
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end}};
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, show_read, &j);
out:
    free(pids);
    return rc;
}
