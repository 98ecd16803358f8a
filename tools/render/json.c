/* SPDX-License-Identifier: MIT */
/*
 * The JSON summary (schema: docs/json-schema.md): the text summary's figures
 * and tables as members, one object per row.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <cubatchtrace/catalog.h>

#include "analyse/advice.h"
#include "analyse/callsite.h"
#include "analyse/tables.h"
#include "render/hosts.h"
#include "render/json.h"
#include "render/text.h"

static void read_stats_json(const struct cbt_agg *a, json_t *root)
{
    const struct cbt_read_stats *s = cbt_agg_get_read_stats(a);
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    json_t *inl = json_object(), *rules = json_object(), *rec = json_array(), *rd = json_object();
    json_object_set_new(inl, "checked", json_integer((json_int_t)s->inline_checked));
    json_object_set_new(inl, "disagreeing", json_integer((json_int_t)s->inline_disagreeing));
    json_object_set_new(inl, "unchecked", json_integer((json_int_t)s->inline_unchecked));
    json_object_set_new(root, "inline_findings", inl);
    for (unsigned i = 0; i < s->nrules_seen; i++)
        json_array_append_new(rec, json_integer(s->rules_seen[i]));
    json_object_set_new(rules, "recorded", rec);
    json_object_set_new(rules, "checked", json_integer(CBT_RULES_VERSION));
    json_object_set_new(root, "rules", rules);
    json_t *by = json_array();
    for (unsigned i = 0; i < t.nrecorders; i++)
        json_array_append_new(by, json_string(t.recorders[i]));
    json_object_set_new(root, "recorded_by", by);
    json_object_set_new(root, "read_by", json_string(PACKAGE_VERSION));
    json_object_set_new(rd, "pending_batches", json_integer((json_int_t)s->pending));
    json_object_set_new(rd, "malformed_batches", json_integer((json_int_t)s->malformed));
    json_object_set_new(rd, "incomplete_batches", json_integer((json_int_t)s->incomplete));
    json_object_set_new(rd, "not_validated_batches", json_integer((json_int_t)s->given_up));
    json_object_set_new(rd, "findings_not_counted", json_integer((json_int_t)s->findings_dropped));
    json_object_set_new(root, "read", rd);
}

static json_t *devices_json(const struct cbt_agg *a)
{
    struct drow rows[NDEV + 2];
    size_t n = cbt_device_rows(a, rows);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct devrow *r = rows[i].r;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(rows[i].name));
        json_object_set_new(o, "device", rows[i].has_dev ? json_integer(r->dev) : json_null());
        json_object_set_new(o, "host", rows[i].has_dev ? json_string(cbt_agg_host_name(a, r->host)) : json_null());
        json_object_set_new(o, "ops_out", json_integer((json_int_t)r->ops_out));
        json_object_set_new(o, "bytes_out", json_integer((json_int_t)r->bytes_out));
        json_object_set_new(o, "ops_in", json_integer((json_int_t)r->ops_in));
        json_object_set_new(o, "bytes_in", json_integer((json_int_t)r->bytes_in));
        json_object_set_new(o, "peer_ops_out", json_integer((json_int_t)r->peer_ops_out));
        json_object_set_new(o, "peer_bytes_out", json_integer((json_int_t)r->peer_bytes_out));
        json_object_set_new(o, "peer_ops_in", json_integer((json_int_t)r->peer_ops_in));
        json_object_set_new(o, "peer_bytes_in", json_integer((json_int_t)r->peer_bytes_in));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *cbt_callsite_json(const struct cbt_callsite *cs, bool with_address)
{
    json_t *o = json_object();
    char hex[32];
    snprintf(hex, sizeof(hex), "0x%" PRIx64, cs->addr);
    if (with_address)
        json_object_set_new(o, "address", json_string(hex));
    json_object_set_new(o, "object", cs->object ? json_string(cs->object) : json_null());
    snprintf(hex, sizeof(hex), "0x%" PRIx64, cs->offset);
    json_object_set_new(o, "offset", cs->object ? json_string(hex) : json_null());
    json_object_set_new(o, "function", cs->function[0] ? json_string(cs->function) : json_null());
    json_object_set_new(o, "file", cs->line ? json_string(cs->file) : json_null());
    json_object_set_new(o, "line", cs->line ? json_integer(cs->line) : json_null());
    return o;
}

/* A row's bounds (histograms) and counts, in the members every table has. */
static void range_counts(json_t *o, bool has_range, uint64_t lo, uint64_t hi, uint64_t batches, uint64_t ops,
                         uint64_t bytes)
{
    if (has_range) {
        json_object_set_new(o, "low", json_integer((json_int_t)lo));
        json_object_set_new(o, "high", json_integer((json_int_t)(hi > INT64_MAX ? INT64_MAX : hi)));
    }
    json_object_set_new(o, "batches", json_integer((json_int_t)batches));
    json_object_set_new(o, "ops", json_integer((json_int_t)ops));
    json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
}

static json_t *jrow(const struct trow *tr, bool pct_bytes, uint64_t tot_bytes, uint64_t tot_ops)
{
    const struct row *r = tr->r;
    double pct = pct_bytes ? (tot_bytes ? 100.0 * (double)r->bytes / (double)tot_bytes : 0)
                           : (tot_ops ? 100.0 * (double)r->ops / (double)tot_ops : 0);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(tr->name));
    if (tr->site)
        json_object_set_new(o, "site", cbt_callsite_json(tr->site, false));
    range_counts(o, tr->has_range, tr->lo, tr->hi, r->batches, r->ops, r->bytes);
    json_object_set_new(o, "percent", json_real(pct));
    if (r->n) {
        json_object_set_new(o, "avg", json_real((double)r->sum / (double)r->n));
        json_object_set_new(o, "min", json_integer((json_int_t)r->min));
        json_object_set_new(o, "max", json_integer((json_int_t)r->max));
    } else {
        json_object_set_new(o, "avg", json_null());
        json_object_set_new(o, "min", json_null());
        json_object_set_new(o, "max", json_null());
    }
    return o;
}

static json_t *gpu_row_json(const struct gtrow *tr)
{
    const struct gpurow *r = tr->r;
    json_t *o = json_object();
    if (tr->direction)
        json_object_set_new(o, "direction", json_string(tr->direction));
    json_object_set_new(o, "name", json_string(tr->name));
    range_counts(o, tr->has_range, tr->lo, tr->hi, r->batches, r->ops, r->bytes);
    json_object_set_new(o, "gpu_ns", json_integer((json_int_t)r->gpu_ns));
    json_object_set_new(o, "host_ns", json_integer((json_int_t)r->host_ns));
    json_object_set_new(o, "gbps", r->gpu_ns ? json_real((double)r->bytes / (double)r->gpu_ns) : json_null());
    return o;
}

json_t *cbt_gpu_json(struct cbt_agg *a)
{
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    const struct gpu_time *g = t.gpu;
    struct gpu_tables gt;
    cbt_gpu_tables_build(a, &gt);
    json_t *o = json_object(), *nt = json_object(), *ot = json_object(), *streams = json_array();
    json_object_set_new(o, "processes_timed", json_integer((json_int_t)gt.processes_timed));
    json_object_set_new(o, "batches_timed", json_integer((json_int_t)g->total.batches));
    /* how the timed batches were chosen: every batch, or one in N of each stream (per calling thread) */
    json_t *ch = json_object();
    json_object_set_new(ch, "every", json_integer(gt.processes_sampled ? (json_int_t)gt.sample_every : 1));
    json_object_set_new(ch, "every_min", json_integer(gt.processes_sampled ? (json_int_t)gt.sample_every_min : 1));
    json_object_set_new(ch, "processes_sampled", json_integer((json_int_t)gt.processes_sampled));
    json_object_set_new(ch, "not_sampled", json_integer((json_int_t)gt.not_sampled));
    json_object_set_new(o, "chosen", ch);
    json_object_set_new(o, "gpu_ns", json_integer((json_int_t)g->total.gpu_ns));
    json_object_set_new(o, "bytes", json_integer((json_int_t)g->total.bytes));
    json_object_set_new(o, "ops", json_integer((json_int_t)g->total.ops));
    json_object_set_new(o, "host_ns", json_integer((json_int_t)g->total.host_ns));
    static const struct {
        const char *name;
        unsigned status;
    } nts[] = {{"capturing", CBT_GPU_CAPTURING}, {"no_events", CBT_GPU_NO_EVENTS}, {"call_failed", CBT_GPU_CALL_FAILED},
               {"lost", CBT_GPU_LOST}, {"overflow", CBT_GPU_OVERFLOW}};
    for (size_t i = 0; i < sizeof(nts) / sizeof(nts[0]); i++)
        json_object_set_new(nt, nts[i].name, json_integer((json_int_t)g->status[nts[i].status]));
    json_object_set_new(nt, "not_read_back", json_integer((json_int_t)gt.not_read_back));
    json_object_set_new(o, "not_timed", nt);
    for (int i = 0; i < gt.n; i++) {
        json_t *arr = json_array();
        for (size_t j = 0; j < gt.t[i].n; j++)
            json_array_append_new(arr, gpu_row_json(&gt.t[i].rows[j]));
        json_object_set_new(o, gt.t[i].key, arr);
    }
    json_object_set_new(ot, "bucket_ns", json_integer((json_int_t)gt.bucket_ns));
    json_object_set_new(ot, "start_ns", json_integer((json_int_t)gt.start_ns));
    for (unsigned i = 0; i < gt.nstreams; i++) {
        json_t *s = json_object(), *b = json_array();
        json_object_set_new(s, "name", json_string(gt.streams[i].name));
        for (unsigned k = 0; k < gt.nbuckets; k++)
            json_array_append_new(b, json_integer((json_int_t)gt.streams[i].gpu_ns[k]));
        json_object_set_new(s, "gpu_ns", b);
        json_array_append_new(streams, s);
    }
    json_object_set_new(ot, "streams", streams);
    json_object_set_new(o, "over_time", ot);
    cbt_gpu_tables_free(&gt);
    return o;
}

static int cmp_name(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

#define JI(v) json_integer((json_int_t)(v))

/* A rule's tally: its count, fix and first finding (where, call site, words). */
static json_t *tally_json(struct cbt_agg *a, unsigned k, const struct cbt_rule_tally *f)
{
    const struct cbt_rule_info *ri = cbt_rule(k);
    const char *sev = cbt_severity_name(f->severity);
    json_t *o = json_object();
    json_object_set_new(o, "rule", json_string(ri ? ri->name : "unknown"));
    json_object_set_new(o, "severity", json_string(sev ? sev : "unknown"));
    json_object_set_new(o, "count", JI(f->count));
    json_object_set_new(o, "fix", ri ? json_string(cbt_finding_fix(k)) : json_null());
    /* the earliest finding as the text summary gives it: where, its call site, its words */
    json_t *fs = json_object();
    json_object_set_new(fs, "batch", JI(cbt_batch_number(f->first_batch)));
    json_object_set_new(fs, "pid", JI(f->first_pid));
    json_object_set_new(fs, "image", cbt_hosts_image_json(a, f->first_host, cbt_pkey(f->first_image, f->first_pid)));
    json_object_set_new(fs, "host", json_string(cbt_agg_host_name(a, f->first_host)));
    const struct cbt_batch_finding *ff = &f->first;
    json_object_set_new(fs, "op", ff->op == UINT64_MAX ? json_null() : JI(ff->op));
    json_object_set_new(fs, "other_op", ff->other_op == UINT64_MAX ? json_null() : JI(ff->other_op));
    json_object_set_new(fs, "side", json_string(cbt_side_name(ff->side) ? cbt_side_name(ff->side) : "?"));
    char words[512], caller[1024];
    json_object_set_new(fs, "words", json_string(cbt_finding_say(ff, words, sizeof(words))));
    struct cbt_callsite cs;
    cbt_callsite_lookup(cbt_agg_callsites(a), f->first_host, f->first_pid, ff->caller, &cs);
    json_object_set_new(fs, "caller", json_string(cbt_callsite_format(&cs, caller, sizeof(caller))));
    json_object_set_new(fs, "site", cbt_callsite_json(&cs, true));
    json_object_set_new(o, "first_seen", fs);
    return o;
}

json_t *cbt_agg_summary_json(struct cbt_agg *a, const char *const *inputs, int ninputs)
{
    cbt_agg_finish(a);
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    json_t *root = json_object();
    json_t *in = json_array();
    for (int i = 0; i < ninputs; i++)
        json_array_append_new(in, json_string(inputs[i]));
    json_object_set_new(root, "schema", json_string("cubatchtrace-summary"));
    json_object_set_new(root, "schema_version", JI(1));
    json_object_set_new(root, "discarded_events", JI(t.discarded_events));
    json_object_set_new(root, "discarded_packets", JI(t.discarded_packets));
    json_object_set_new(root, "inputs", in);
    json_t *hosts = json_array();
    const char **names = calloc(t.nhosts + 1, sizeof(*names)); /* by name: the order of reading does not show */
    for (uint32_t i = 0; names && i < t.nhosts; i++)
        names[i] = cbt_agg_host_name(a, i);
    if (names)
        qsort(names, t.nhosts, sizeof(*names), cmp_name);
    for (uint32_t i = 0; names && i < t.nhosts; i++)
        json_array_append_new(hosts, json_string(names[i]));
    free(names);
    json_object_set_new(root, "hosts", hosts);
    json_t *id = json_object(), *fields = json_array();
    json_array_append_new(fields, json_string("host"));
    json_array_append_new(fields, json_string("pid"));
    if (t.untagged < t.batches || !t.batches)
        json_array_append_new(fields, json_string("image"));
    json_object_set_new(id, "fields", fields);
    json_object_set_new(id, "untagged_batches", JI(t.untagged));
    json_object_set_new(root, "process_identity", id);
    cbt_hosts_json(a, root);
    json_object_set_new(root, "processes", JI(cbt_agg_count_procs(a)));
    json_object_set_new(root, "threads", JI(cbt_agg_count_threads(a)));
    json_object_set_new(root, "batches", JI(t.batches));
    json_object_set_new(root, "ops", JI(t.ops));
    json_object_set_new(root, "bytes", JI(t.bytes));
    json_object_set_new(root, "failed_batches", JI(t.failed));
    json_object_set_new(root, "refused_batches", JI(t.refused));
    json_object_set_new(root, "refused_in_capture_batches", JI(t.refused_in_capture));
    json_object_set_new(root, "no_driver_batches", JI(t.no_driver));
    json_object_set_new(root, "driver_ns", JI(t.driver_ns));
    json_object_set_new(root, "fabric",
                        json_pack("{s:I, s:I, s:I, s:I}", "calls", (json_int_t)t.fabric_calls, "ops",
                                  (json_int_t)t.fabric_ops, "failed_calls", (json_int_t)t.fabric_failed, "driver_ns",
                                  (json_int_t)t.fabric_driver_ns));
    json_t *unp = json_object();
    json_object_set_new(unp, "orphan_ops", JI(t.orphan_ops));
    json_object_set_new(unp, "incomplete_batches", JI(t.incomplete_batches));
    json_object_set_new(unp, "pending_overflow", JI(t.pending_overflow));
    json_object_set_new(unp, "tables_full", json_boolean(t.tables_full));
    json_object_set_new(root, "unpaired", unp);
    read_stats_json(a, root);

    struct tables ts;
    cbt_tables_build(a, &ts);
    bool pct_bytes = t.bytes > 0;
    json_object_set_new(root, "percent_of", json_string(pct_bytes ? "bytes" : "ops"));
    for (int i = 0; i < ts.n; i++) {
        json_t *arr = json_array();
        for (size_t j = 0; j < ts.t[i].n; j++)
            json_array_append_new(arr, jrow(&ts.t[i].rows[j], pct_bytes, t.bytes, t.ops));
        json_object_set_new(root, ts.t[i].key, arr);
        if (strcmp(ts.t[i].key, "by_direction") == 0) {
            json_object_set_new(root, "by_device", devices_json(a));
            json_object_set_new(root, "gpu", cbt_gpu_json(a));
        }
    }
    json_t *fa = json_array(), *aa = json_array();
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct cbt_rule_tally *f = &t.rules[k];
        if (!f->count)
            continue;
        bool advice = k < CBT_RULE_COUNT && cbt_rule_is_advice(k);
        json_t *o = tally_json(a, k, f);
        if (advice) {
            char sv[200];
            json_object_set_new(o, "saving_ns", f->saving_kinds & CBT_SAVING_WITH_NS
                                                    ? JI(f->saving_ns)
                                                    : json_null());
            json_t *on = json_array();
            for (unsigned b = CBT_SAVING_RISK; b < CBT_SAVING_COUNT_; b++)
                if (f->saving_kinds & (1u << b))
                    json_array_append_new(on, json_string(cbt_saving_name(b)));
            json_object_set_new(o, "saving_from", on);
            json_object_set_new(o, "saving_words", json_string(cbt_advice_savings_say(f->saving_kinds, f->saving_ns,
                                                                                       sv, sizeof sv)));
        }
        json_array_append_new(advice ? aa : fa, o);
    }
    json_object_set_new(root, "findings", fa);
    json_t *adv = json_object();
    json_object_set_new(adv, "count", JI(t.advice));
    json_object_set_new(adv, "off", json_boolean(cbt_advice_set.off));
    json_object_set_new(adv, "gpu_unjudged", JI(t.advice_unjudged));
    const struct cbt_cost_table *ct = &cbt_advice_table;
    json_object_set_new(adv, "cost_table",
                        ct->loaded ? json_pack("{s:s, s:s, s:s, s:s}", "path", ct->path, "gpu", ct->gpu, "driver",
                                               ct->driver, "measured", ct->measured)
                                   : json_null());
    const struct cbt_advice_settings *st = &cbt_advice_set;
    json_object_set_new(adv, "thresholds",
                        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "run_calls", (json_int_t)st->run_calls,
                                  "run_copies", (json_int_t)st->run_copies, "run_gap_ns", (json_int_t)st->run_gap_ns,
                                  "tiny_bytes", (json_int_t)st->tiny_bytes, "tiny_copies", (json_int_t)st->tiny_copies,
                                  "huge_copies", (json_int_t)st->huge_copies, "overlap_bytes",
                                  (json_int_t)st->overlap_bytes, "same_device_bytes", (json_int_t)st->same_device_bytes,
                                  "pageable_bytes", (json_int_t)st->pageable_bytes, "low_bandwidth_bytes",
                                  (json_int_t)st->low_bw_bytes, "low_bandwidth_percent", (json_int_t)st->low_bw_percent));
    json_object_set_new(adv, "rules", aa);
    json_object_set_new(root, "advice", adv);
    cbt_tables_free(&ts);
    return root;
}

int cbt_agg_print_json(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs)
{
    json_t *root = cbt_agg_summary_json(a, inputs, ninputs);
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
    return rc;
}
