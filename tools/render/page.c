/* SPDX-License-Identifier: MIT */
/*
 * The report's HTML page (page.h): its head, totals, plots, GPU time,
 * tables and findings, then the summary JSON.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"
#include "render/page.h"
#include "render/plots.h"

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

static const struct cbt_col op_cols[] = {
    {"Name", "name", U_TEXT},       {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES},    {"% of all", "percent", U_PCT},  {"Avg bytes per op", "avg", U_BYTES},
    {"Min", "min", U_BYTES},        {"Max", "max", U_BYTES},
};
static const struct cbt_col batch_cols[] = {
    {"Name", "name", U_TEXT},    {"Batches", "batches", U_COUNT},      {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES}, {"% of all", "percent", U_PCT},       {"Avg host time in the driver", "avg", U_NS},
    {"Min", "min", U_NS},        {"Max", "max", U_NS},
};
static const struct cbt_col device_cols[] = {
    {"Device", "name", U_TEXT},          {"Ops out", "ops_out", U_COUNT},
    {"Bytes out", "bytes_out", U_BYTES}, {"Ops in", "ops_in", U_COUNT},
    {"Bytes in", "bytes_in", U_BYTES},   {"Peer bytes out", "peer_bytes_out", U_BYTES},
    {"Peer bytes in", "peer_bytes_in", U_BYTES},
};
static const struct cbt_col proc_cols[] = {
    {"Host", "host", U_TEXT},       {"Pid", "pid", U_TEXT},          {"Process", "procname", U_TEXT},
    {"Image", "image", U_TEXT},     {"Pid ns", "pid_ns", U_TEXT},    {"Rank", "rank", U_TEXT},       {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES},    {"Host time in the driver", "driver_ns", U_NS},
};
static const struct cbt_col gpu_cols[] = {
    {"Name", "name", U_TEXT},    {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES}, {"GPU time", "gpu_ns", U_NS},    {"Host time in the driver", "host_ns", U_NS},
    {"Bandwidth", "gbps", U_GBPS},
};
static const struct cbt_col gpu_dir_size_cols[] = {
    {"Direction", "direction", U_TEXT}, {"Op size", "name", U_TEXT},   {"Batches", "batches", U_COUNT},
    {"Ops", "ops", U_COUNT},            {"Bytes", "bytes", U_BYTES},   {"GPU time", "gpu_ns", U_NS},
    {"Host time in the driver", "host_ns", U_NS}, {"Bandwidth", "gbps", U_GBPS},
};
/* Tables of the summary's rows: each under its title, its id the prefix and the key. */
struct rows_section {
    const char *key, *title;
    const struct cbt_col *cols;
    size_t ncols;
    const char *empty; /* the line when there is no row */
};
static const struct rows_section tables[] = {
    {"by_direction", "Ops by direction", op_cols, NCOLS(op_cols), "No op."},
    {"by_memkinds", "Ops by memory kinds (source->destination)", op_cols, NCOLS(op_cols), "No op."},
    {"by_device", "Bytes by device", device_cols, NCOLS(device_cols), "No op on device memory."},
    {"batch_size_histogram", "Batch-size histogram (ops per batch)", batch_cols, NCOLS(batch_cols), "No batch."},
    {"op_size_histogram", "Op-size histogram (bytes per op)", op_cols, NCOLS(op_cols), "No op."},
    {"by_api_door", "Batches by API variant and door", batch_cols, NCOLS(batch_cols), "No batch."},
    {"callers", "Top call sites", batch_cols, NCOLS(batch_cols), "No batch."},
    {"by_process_rank", "Processes", proc_cols, NCOLS(proc_cols), "No process."},
};
static const struct rows_section gpu_tables[] = {
    {"by_direction", "Bandwidth by direction", gpu_cols, NCOLS(gpu_cols), "No timed batch."},
    {"by_memkinds", "Bandwidth by memory kinds (source->destination)", gpu_cols, NCOLS(gpu_cols), "No timed batch."},
    {"by_op_size", "Bandwidth by op size (the batch's mean bytes per op)", gpu_cols, NCOLS(gpu_cols),
     "No timed batch."},
    {"by_direction_op_size", "Bandwidth by direction and op size", gpu_dir_size_cols, NCOLS(gpu_dir_size_cols),
     "No timed batch."},
    {"by_stream", "Bandwidth by stream", gpu_cols, NCOLS(gpu_cols), "No timed batch."},
    {"by_device", "Bandwidth by device", gpu_cols, NCOLS(gpu_cols), "No timed batch."},
};

/* The sections' tables of obj's members; those obj lacks left out when
 * skip_absent (a summary of an older cubatchtrace). */
static void rows_tables(FILE *o, const json_t *obj, const char *prefix, const struct rows_section *t, size_t n,
                        bool skip_absent)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *rows = json_object_get(obj, t[i].key);
        if (!rows && skip_absent)
            continue;
        fprintf(o, "<h3>%s</h3>\n", t[i].title);
        char id[64];
        snprintf(id, sizeof(id), "%s%s", prefix, t[i].key);
        cbt_html_rows_table(o, id, rows, t[i].cols, t[i].ncols, t[i].empty);
    }
}

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}"
    "h3{font-size:1.05em}table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ddd;padding:2px 8px;text-align:right;font-variant-numeric:tabular-nums}"
    "th{background:#f3f3f3}td.t{text-align:left;font-family:ui-monospace,monospace;font-size:.92em}"
    "td[title]{cursor:help}td.w{text-align:left;min-width:16em}p.none{color:#666;font-style:italic}"
    "figure.plot{margin:1em 0 2em}figure.plot svg{width:100%;max-width:900px;height:auto;display:block}"
    "figcaption{color:#444;font-size:.92em}details{font-size:.9em}"
    ".sev-error{color:#b00}.sev-hazard{color:#b60}.sev-warning{color:#666}";

/* the JSON inside <script>: every <, > and & as \u escapes (they appear only inside strings) */
static void embed_json(FILE *o, const json_t *root)
{
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    for (const char *p = s; p && *p; p++) {
        if (*p == '<')
            fputs("\\u003c", o);
        else if (*p == '>')
            fputs("\\u003e", o);
        else if (*p == '&')
            fputs("\\u0026", o);
        else
            fputc(*p, o);
    }
    free(s);
}

static void kv(FILE *o, const char *k, const json_t *v, enum cbt_unit u)
{
    fprintf(o, "<tr><th>%s</th>", k);
    cbt_html_cell(o, v, u);
    fputs("</tr>\n", o);
}

static void totals(FILE *o, const json_t *root)
{
    json_t *findings = json_object_get(root, "findings"), *f;
    json_int_t nfind = 0;
    size_t i;
    json_array_foreach(findings, i, f) nfind += cbt_jint(f, "count");
    json_t *nf = json_integer(nfind);
    fputs("<h2 id=\"totals\">Totals</h2>\n<table class=\"kv\" id=\"table-totals\">\n", o);
    kv(o, "Processes", json_object_get(root, "processes"), U_COUNT);
    kv(o, "Threads", json_object_get(root, "threads"), U_COUNT);
    kv(o, "Batches", json_object_get(root, "batches"), U_COUNT);
    kv(o, "Ops", json_object_get(root, "ops"), U_COUNT);
    kv(o, "Bytes", json_object_get(root, "bytes"), U_BYTES);
    kv(o, "Failed batches (forwarded, result not CUDA_SUCCESS)", json_object_get(root, "failed_batches"), U_COUNT);
    kv(o, "Refused batches (strict mode)", json_object_get(root, "refused_batches"), U_COUNT);
    kv(o, "No-driver batches", json_object_get(root, "no_driver_batches"), U_COUNT);
    kv(o, "Host time in the driver", json_object_get(root, "driver_ns"), U_NS);
    kv(o, "Findings", nf, U_COUNT);
    kv(o, "Events discarded by the tracer", json_object_get(root, "discarded_events"), U_COUNT);
    kv(o, "Packets discarded by the tracer", json_object_get(root, "discarded_packets"), U_COUNT);
    json_t *fab = json_object_get(root, "fabric");
    if (cbt_jint(fab, "calls")) { /* cuFabricCpyBatchAsync (CUDA 13.5): counted, its ops not read */
        kv(o, "Fabric batch calls (cuFabricCpyBatchAsync; their copies not read)", json_object_get(fab, "calls"),
           U_COUNT);
        kv(o, "Fabric batch ops", json_object_get(fab, "ops"), U_COUNT);
        kv(o, "Failed fabric batch calls", json_object_get(fab, "failed_calls"), U_COUNT);
    }
    fputs("</table>\n", o);
    json_decref(nf);
    if (cbt_jint(root, "discarded_events") || cbt_jint(root, "discarded_packets"))
        fputs("<p><strong>The tracer discarded events: every figure undercounts.</strong></p>\n", o);
}

/* error, hazard, warning, then what this page does not know */
static int severity_rank(const char *sev)
{
    static const char *const order[] = {"error", "hazard", "warning"};
    for (int i = 0; i < 3; i++)
        if (strcmp(sev, order[i]) == 0)
            return i;
    return 3;
}

static const json_t *sort_findings;

/* most serious first, then the most frequent, then in the summary's (catalogue) order, as the text summary */
static int cmp_finding(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    const json_t *a = json_array_get(sort_findings, i), *b = json_array_get(sort_findings, j);
    int sa = severity_rank(cbt_jstr(a, "severity")), sb = severity_rank(cbt_jstr(b, "severity"));
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (cbt_jint(a, "count") != cbt_jint(b, "count"))
        return cbt_jint(a, "count") > cbt_jint(b, "count") ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The indices of the n findings of arr in cmp_finding's order; NULL when out
 * of memory (then in arr's order). */
static size_t *finding_order(const json_t *arr, size_t n)
{
    size_t *order = malloc(n * sizeof(*order));
    for (size_t i = 0; order && i < n; i++)
        order[i] = i;
    sort_findings = arr;
    if (order)
        qsort(order, n, sizeof(*order), cmp_finding);
    return order;
}

/* A cell of text (escaped); "–" when the summary does not say (one of an older cubatchtrace). */
static void text_cell(FILE *o, const char *cls, const char *s)
{
    fprintf(o, "<td class=\"%s\">", cls);
    cbt_html_esc(o, *s ? s : "\u2013");
    fputs("</td>", o);
}

/* Each rule, most serious first: its first finding's call site, what is wrong
 * with it (the words every output uses) and the fix, as the text summary. */
static void findings_table(FILE *o, const json_t *root)
{
    const json_t *findings = json_object_get(root, "findings");
    size_t n = json_array_size(findings);
    if (!n) {
        fputs("<p class=\"none\">No finding.</p>\n", o);
        return;
    }
    size_t *order = finding_order(findings, n);
    fputs("<p>Most serious first, then the most frequent; each rule with its first finding: where it was made, "
          "what is wrong, what to change.</p>\n"
          "<table class=\"rows\" id=\"table-findings\"><thead><tr><th>Severity</th><th>Rule</th><th>Count</th>"
          "<th>First call site</th><th>What is wrong</th><th>Fix</th><th>First seen</th></tr></thead><tbody>\n",
          o);
    for (size_t k = 0; k < n; k++) {
        const json_t *f = json_array_get(findings, order ? order[k] : k);
        const json_t *fs = json_object_get(f, "first_seen");
        const char *sev = cbt_jstr(f, "severity");
        fputs("<tr><td class=\"t sev-", o);
        cbt_html_esc(o, sev);
        fputs("\">", o);
        cbt_html_esc(o, sev);
        fputs("</td>", o);
        text_cell(o, "t", cbt_jstr(f, "rule"));
        fprintf(o, "<td>%" JSON_INTEGER_FORMAT "</td>", cbt_jint(f, "count"));
        text_cell(o, "t", cbt_jstr(fs, "caller"));
        text_cell(o, "w", cbt_jstr(fs, "words"));
        text_cell(o, "w", cbt_jstr(f, "fix"));
        fprintf(o, "<td class=\"t\">batch %" JSON_INTEGER_FORMAT " / pid %" JSON_INTEGER_FORMAT " on ",
                cbt_jint(fs, "batch"), cbt_jint(fs, "pid"));
        cbt_html_esc(o, cbt_jstr(fs, "host"));
        fputs("</td></tr>\n", o);
    }
    fputs("</tbody></table>\n<p>Every finding, with its call site: <code>cubatchtrace check", o);
    const json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "inputs"), i, v) {
        fputc(' ', o);
        cbt_html_esc(o, json_string_value(v));
    }
    fputs("</code></p>\n", o);
    free(order);
}

/* The advice (summary JSON `advice`): each rule, the most frequent first, with
 * its first call site, its words, the savings of all its advice and the fix;
 * which cost table they rest on. */
static void advice_table(FILE *o, const json_t *root)
{
    const json_t *adv = json_object_get(root, "advice");
    if (!adv) {
        fputs("<p class=\"none\">This summary has no advice (written by an older cubatchtrace).</p>\n", o);
        return;
    }
    const json_t *rules = json_object_get(adv, "rules");
    size_t n = json_array_size(rules);
    if (json_is_true(json_object_get(adv, "off")) || !n) {
        fputs(json_is_true(json_object_get(adv, "off")) ? "<p class=\"none\">Advice off (--advice off).</p>\n"
                                                         : "<p class=\"none\">No advice.</p>\n",
              o);
        return;
    }
    const json_t *ct = json_object_get(adv, "cost_table");
    fputs("<p>What to change, and what it would save. Cost table: ", o);
    if (json_is_object(ct)) {
        cbt_html_esc(o, cbt_jstr(ct, "path"));
        fputs(" (", o);
        cbt_html_esc(o, cbt_jstr(ct, "gpu"));
        fputs(", driver ", o);
        cbt_html_esc(o, cbt_jstr(ct, "driver"));
        fputs(")", o);
    } else {
        fputs("none: no measured cost table", o);
    }
    fputs(".</p>\n<table class=\"rows\" id=\"table-advice\"><thead><tr><th>Rule</th><th>Count</th>"
          "<th>First call site</th><th>What</th><th>Estimated saving</th><th>Fix</th></tr></thead><tbody>\n",
          o);
    size_t *order = finding_order(rules, n);
    for (size_t k = 0; k < n; k++) {
        const json_t *f = json_array_get(rules, order ? order[k] : k);
        const json_t *fs = json_object_get(f, "first_seen");
        fputs("<tr>", o);
        text_cell(o, "t", cbt_jstr(f, "rule"));
        fprintf(o, "<td>%" JSON_INTEGER_FORMAT "</td>", cbt_jint(f, "count"));
        text_cell(o, "t", cbt_jstr(fs, "caller"));
        text_cell(o, "w", cbt_jstr(fs, "words"));
        text_cell(o, "w", cbt_jstr(f, "saving_words"));
        text_cell(o, "w", cbt_jstr(f, "fix"));
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
    free(order);
}

static void gpu_section(FILE *o, const json_t *gpu)
{
    fputs("<h2 id=\"gpu\">GPU time</h2>\n", o);
    if (!gpu) {
        fputs("<p class=\"none\">This summary has no GPU section (written by an older cubatchtrace).</p>\n", o);
        return;
    }
    json_int_t timed = cbt_jint(gpu, "batches_timed");
    fputs("<table class=\"kv\" id=\"table-gpu-totals\">\n", o);
    kv(o, "Processes timed", json_object_get(gpu, "processes_timed"), U_COUNT);
    kv(o, "Batches timed", json_object_get(gpu, "batches_timed"), U_COUNT);
    const json_t *ch = json_object_get(gpu, "chosen");
    kv(o, "Timed: one batch in N of each stream", ch ? json_object_get(ch, "every") : NULL, U_COUNT);
    kv(o, "GPU time", json_object_get(gpu, "gpu_ns"), U_NS);
    kv(o, "Bytes", json_object_get(gpu, "bytes"), U_BYTES);
    kv(o, "Ops", json_object_get(gpu, "ops"), U_COUNT);
    kv(o, "Host time in the driver", json_object_get(gpu, "host_ns"), U_NS);
    json_int_t gns = cbt_jint(gpu, "gpu_ns");
    json_t *bw = gns > 0 ? json_real((double)cbt_jint(gpu, "bytes") / (double)gns) : json_null();
    kv(o, "Bandwidth (bytes / GPU time)", bw, U_GBPS);
    json_decref(bw);
    fputs("</table>\n", o);
    if (!timed)
        fputs("<p class=\"none\">No batch was timed on the GPU: trace with <code>cubatchtrace run --gpu-time</code> "
              "(or <code>CUBATCHTRACE_GPU_TIME=1</code>) to measure bandwidth.</p>\n",
              o);
    const json_t *nt = json_object_get(gpu, "not_timed");
    fputs("<h3>Batches not timed</h3>\n<table class=\"rows\" id=\"table-gpu-not-timed\"><thead><tr><th>Why</th>"
          "<th>Batches</th></tr></thead><tbody>\n",
          o);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)nt, k, v) {
        fputs("<tr><td class=\"t\">", o);
        cbt_html_esc(o, k);
        fputs("</td>", o);
        cbt_html_cell(o, v, U_COUNT);
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
    rows_tables(o, gpu, "gpu-", gpu_tables, NCOLS(gpu_tables), true);
}

bool cbt_render_page(FILE *o, const json_t *root, const char *gnuplot)
{
    const json_t *in = json_object_get(root, "inputs"), *v;
    size_t i;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>cubatchtrace report: ",
          o);
    json_array_foreach(in, i, v) {
        fputs(i ? ", " : "", o);
        cbt_html_esc(o, json_string_value(v));
    }
    fprintf(o, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>cubatchtrace report</h1>\n<p>Traces: ", css);
    json_array_foreach(in, i, v) {
        fputs(i ? ", " : "", o);
        fputs("<code>", o);
        cbt_html_esc(o, json_string_value(v));
        fputs("</code>", o);
    }
    fputs("<br>Hosts: ", o);
    json_array_foreach(json_object_get(root, "hosts"), i, v) {
        fputs(i ? ", " : "", o);
        cbt_html_esc(o, json_string_value(v));
    }
    fputs("<br>Recorded by cubatchtrace ", o);
    json_array_foreach(json_object_get(root, "recorded_by"), i, v) {
        fputs(i ? ", " : "", o);
        cbt_html_esc(o, json_string_value(v));
    }
    fputs("; read by ", o);
    cbt_html_esc(o, cbt_jstr(root, "read_by"));
    fputs(".</p>\n<nav><a href=\"#totals\">Totals</a> · <a href=\"#plots\">Plots</a> · <a href=\"#gpu\">GPU time</a>"
          " · <a href=\"#tables\">Tables</a> · <a href=\"#findings\">Findings</a> · <a href=\"#advice\">Advice</a>"
          "</nav>\n",
          o);
    totals(o, root);
    bool ok = cbt_render_plots(o, root, gnuplot);
    if (!ok)
        return false;
    gpu_section(o, json_object_get(root, "gpu"));
    fputs("<h2 id=\"tables\">Tables</h2>\n", o);
    rows_tables(o, root, "", tables, NCOLS(tables), false);
    fputs("<h2 id=\"findings\">Findings by rule</h2>\n", o);
    findings_table(o, root);
    fputs("<h2 id=\"advice\">Advice</h2>\n", o);
    advice_table(o, root);
    fputs("<p>The summary itself (<code>cubatchtrace summary --json</code>, docs/json-schema.md) is in this page's "
          "source, in the script element <code>cubatchtrace-summary</code>.</p>\n"
          "<script type=\"application/json\" id=\"cubatchtrace-summary\">\n",
          o);
    embed_json(o, root);
    fputs("\n</script>\n</body>\n</html>\n", o);
    return true;
}
