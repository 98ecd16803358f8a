/* SPDX-License-Identifier: MIT */
/*
 * The timeline (analyse/timeline.h) as a Chrome trace-event file (the JSON
 * object form) that ui.perfetto.dev and chrome://tracing open: otherData,
 * the names of processes and tracks, then one event per record in the
 * model's order; docs/timeline.md says what is written.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "analyse/callsite.h"
#include "analyse/tables.h"
#include "base/util.h"
#include "read/assemble.h"
#include "render/trace_event.h"

static void put_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

/* ns as microseconds with three decimals (non-negative) */
static void put_us(FILE *out, uint64_t ns) { fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000)); }

static const char *name_or(const char *name, char *buf, size_t len, uint64_t v)
{
    if (name)
        return name;
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static void put_meta(FILE *out, bool *first, const char *what, int64_t pid, int64_t tid, const char *key,
                     const char *sval, int64_t ival)
{
    fprintf(out, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"%s\":",
            *first ? "" : ",", what, pid, tid, key);
    if (sval)
        put_str(out, sval);
    else
        fprintf(out, "%" PRId64, ival);
    fputs("}}", out);
    *first = false;
}

static void write_names(struct cbt_timeline *t, FILE *out, bool *first)
{
    bool hosts = false;
    for (size_t i = 1; i < t->nprocs; i++)
        if (t->procs[i].host != t->procs[0].host)
            hosts = true;
    char name[1024];
    for (size_t i = 0; i < t->nprocs; i++) {
        const struct tl_proc *p = &t->procs[i];
        char pn[64];
        int n = snprintf(name, sizeof(name), "%s (%s", p->procname ? p->procname : "process",
                         cbt_agg_proc_name(t->agg, p->host, cbt_pkey(p->image, p->vpid), pn, sizeof(pn)));
        if (hosts)
            snprintf(name + n, sizeof(name) - (size_t)n, ", host %s)", cbt_agg_host_name(t->agg, p->host));
        else
            snprintf(name + n, sizeof(name) - (size_t)n, ")");
        put_meta(out, first, "process_name", p->pid_out, 0, "name", name, 0);
        put_meta(out, first, "process_sort_index", p->pid_out, 0, "sort_index", NULL, p->sort);
    }
    for (size_t i = 0; i < t->ntracks; i++) {
        const struct tl_track *tr = &t->tracks[i];
        const struct tl_proc *p = &t->procs[tr->proc];
        if (tr->gpu)
            snprintf(name, sizeof(name), "GPU stream 0x%" PRIx64 " (id %" PRIu64 ", device %d)", tr->stream,
                     tr->stream_id, (int)tr->device);
        else if (tr->tid == p->vpid && p->procname)
            snprintf(name, sizeof(name), "%s (tid %" PRId64 ")", p->procname, tr->tid);
        else
            snprintf(name, sizeof(name), "tid %" PRId64, tr->tid);
        put_meta(out, first, "thread_name", p->pid_out, tr->tid_out, "name", name, 0);
        put_meta(out, first, "thread_sort_index", p->pid_out, tr->tid_out, "sort_index", NULL, tr->sort);
    }
}

static void write_rec(struct cbt_timeline *t, FILE *out, const struct tl_rec *r, int64_t origin)
{
    const struct tl_track *tr = &t->tracks[r->track];
    const struct tl_proc *p = &t->procs[tr->proc];
    char b[4][24], img[32] = "";
    if (p->image) /* batch_id: the batch's number within its process image */
        snprintf(img, sizeof(img), ",\"image\":\"0x%08" PRIx32 "\"", p->image);
    uint64_t id = cbt_batch_number(r->batch_id);
    fputs(",\n{\"ph\":", out);
    switch (r->kind) {
    case TL_HOST:
    case TL_GPU: fputs("\"X\"", out); break;
    case TL_FLOW_OUT: fputs("\"s\"", out); break;
    case TL_FLOW_IN: fputs("\"f\",\"bp\":\"e\"", out); break;
    default: fputs("\"i\",\"s\":\"t\"", out); break;
    }
    fprintf(out, ",\"cat\":\"cubatchtrace\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", p->pid_out, tr->tid_out);
    put_us(out, (uint64_t)(r->ts - origin));
    if (r->kind == TL_HOST || r->kind == TL_GPU) {
        fputs(",\"dur\":", out);
        put_us(out, r->dur);
    }
    switch (r->kind) {
    case TL_HOST: {
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"num_ops\":%" PRIu64 ",\"ops\":%" PRIu64
                     ",\"bytes\":%" PRIu64 ",\"result\":\"%s\",\"door\":\"%s\",\"stream\":\"0x%" PRIx64
                     "\",\"stream_id\":%" PRIu64 ",\"device\":%d,\"outcome\":\"%s\"",
                name_or(cbt_api_name(r->u.h.api), b[0], sizeof(b[0]), r->u.h.api), id, img, r->u.h.num_ops,
                r->u.h.ops, r->u.h.bytes, name_or(cbt_curesult_name(r->u.h.result), b[1], sizeof(b[1]), r->u.h.result),
                name_or(cbt_door_name(r->u.h.door), b[2], sizeof(b[2]), r->u.h.door), r->u.h.stream,
                r->u.h.stream_id, (int)r->u.h.device,
                name_or(cbt_outcome_name(r->u.h.outcome), b[3], sizeof(b[3]), r->u.h.outcome));
        if (r->u.h.state != CBT_BS_COMPLETE)
            fprintf(out, ",\"state\":\"%s\"", cbt_batch_state_name((enum cbt_batch_state)r->u.h.state));
        if (r->u.h.outcome == CBT_OUTCOME_FORWARDED && r->u.h.result == CBT_CU_CAPTURE_UNSUPPORTED)
            fputs(",\"refused_in_capture\":\"the stream was being captured into a graph: the copy is not in it\"", out);
        if (r->u.h.caller) {
            char site[1200];
            fputs(",\"call_site\":", out);
            put_str(out, cbt_objmap_name(cbt_agg_callsites(t->agg), p->host, p->vpid, r->u.h.caller, site, sizeof(site)));
        }
        fputs("}}", out);
        break;
    }
    case TL_GPU: {
        double gbs = r->dur ? (double)r->u.g.bytes / (double)r->dur : 0;
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"ops\":%" PRIu64 ",\"bytes\":%" PRIu64
                     ",\"gpu_ns\":%" PRIu64 ",\"GB/s\":%.3f}}",
                name_or(cbt_api_name(r->u.g.api), b[0], sizeof(b[0]), r->u.g.api), id, img, r->u.g.ops,
                r->u.g.bytes, r->dur, gbs);
        break;
    }
    case TL_FLOW_OUT:
    case TL_FLOW_IN:
        fprintf(out, ",\"name\":\"batch to GPU\",\"id\":%" PRIu64 ",\"args\":{\"batch_id\":%" PRIu64 "%s}}", r->flow,
                id, img);
        break;
    default: {
        const struct cbt_rule_info *ri = cbt_rule(r->u.f.rule);
        char v[32], l[32];
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"severity\":\"%s\"",
                ri ? ri->name : "unknown", id, img,
                name_or(cbt_severity_name(r->u.f.severity), b[0], sizeof(b[0]), r->u.f.severity));
        if (r->u.f.op == CBT_NO_OP)
            fputs(",\"op\":null", out);
        else
            fprintf(out, ",\"op\":%" PRIu64, r->u.f.op);
        if (r->u.f.other_op != CBT_NO_OP)
            fprintf(out, ",\"other_op\":%" PRIu64, r->u.f.other_op);
        fprintf(out, ",\"side\":\"%s\",\"value\":\"%s\",\"limit\":\"%s\",\"text\":",
                name_or(cbt_side_name(r->u.f.side), b[1], sizeof(b[1]), r->u.f.side),
                cbt_rule_value(r->u.f.rule, r->u.f.value, v, sizeof(v)),
                cbt_rule_value(r->u.f.rule, r->u.f.limit, l, sizeof(l)));
        put_str(out, ri ? ri->text : "");
        fputs("}}", out);
        break;
    }
    }
}

static void write_other(struct cbt_timeline *t, FILE *out, const struct cbt_read_opts *ro)
{
    int64_t origin = t->origin;
    char when[64] = "";
    time_t s = (time_t)(origin / 1000000000);
    struct tm tm;
    if (gmtime_r(&s, &tm))
        snprintf(when + strftime(when, 32, "%Y-%m-%dT%H:%M:%S", &tm), 32, ".%09dZ", (int)(origin % 1000000000));
    fprintf(out, "\"otherData\":{\"tool\":\"cubatchtrace timeline\",\"version\":\"%s\",\"inputs\":[", PACKAGE_VERSION);
    for (int i = 0; i < ro->ninputs; i++) {
        fputs(i ? "," : "", out);
        put_str(out, ro->inputs[i]);
    }
    fprintf(out, "],\n\"origin_ns\":\"%" PRId64 "\",\"origin_utc\":\"%s\",\"time_unit\":\"us from origin_ns\",\n",
            origin, when);
    fprintf(out, "\"batches\":%" PRIu64 ",\"host_spans\":%" PRIu64 ",\"gpu_spans\":%" PRIu64 ",\"flows\":%" PRIu64
                 ",\"findings\":%" PRIu64 ",\n",
            t->batches, t->host_spans, t->gpu_spans, t->flows, t->findings);
    struct gpu_tables gt;
    cbt_gpu_tables_build(t->agg, &gt);
    /* how the timed batches were chosen: every batch, or one in N of each stream (per calling thread) */
    fprintf(out, "\"gpu_timed_every\":%u,\"gpu_not_sampled\":%" PRIu64 ",\n",
            gt.processes_sampled ? gt.sample_every : 1, gt.not_sampled);
    cbt_gpu_tables_free(&gt);
    fprintf(out, "\"gpu_time_events\":%" PRIu64 ",\"gpu_status\":{", t->gpu_events);
    bool first = true;
    for (unsigned i = 0; i < sizeof(t->gpu_status) / sizeof(t->gpu_status[0]); i++) {
        const char *n = cbt_gpu_status_name(i);
        if (!n)
            continue;
        fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", n, t->gpu_status[i]);
        first = false;
    }
    if (t->gpu_status_other)
        fprintf(out, ",\"other\":%" PRIu64, t->gpu_status_other);
    fprintf(out, "},\"gpu_spans_without_batch\":%" PRIu64 ",\n", t->gpu_without_batch);
    fprintf(out, "\"batches_without_header\":%" PRIu64 ",\"batches_without_time\":%" PRIu64 ",\n", t->no_header,
            t->no_time);
    if (t->max_batches)
        fprintf(out, "\"max_batches\":%" PRIu64, t->max_batches);
    else
        fputs("\"max_batches\":null", out);
    fprintf(out,
            ",\"stopped_at_max_batches\":%s,\"batches_left_out\":%" PRIu64 ",\"gpu_spans_left_out\":%" PRIu64 ",\n",
            t->batches_left_out ? "true" : "false", t->batches_left_out, t->gpu_left_out);
    fputs("\"begin\":", out);
    if (ro->begin)
        put_str(out, ro->begin);
    else
        fputs("null", out);
    fputs(",\"end\":", out);
    if (ro->end)
        put_str(out, ro->end);
    else
        fputs("null", out);
    fputs(",\"pids\":[", out);
    for (int i = 0; i < ro->npids; i++)
        fprintf(out, "%s%" PRId64, i ? "," : "", ro->pids[i]);
    fputs("]},\n", out);
}

void cbt_render_trace_events(FILE *out, struct cbt_timeline *t, const struct cbt_read_opts *ro)
{
    fputs("{\"displayTimeUnit\":\"ns\",\n", out);
    write_other(t, out, ro);
    fputs("\"traceEvents\":[", out);
    bool first = true;
    write_names(t, out, &first); /* every record is on a track these name: they come after */
    for (size_t i = 0; i < t->nrecs; i++) {
        write_rec(t, out, &t->recs[i], t->origin);
        if ((i & 65535) == 65535)
            cbt_progress();
    }
    fputs("\n]}\n", out);
}
