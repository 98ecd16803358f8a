/* SPDX-License-Identifier: MIT */
/*
 * The text outputs: the summary (`#` lines that say what every column means,
 * then one table per concern) and the finding lines of `check`.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "callsite.h"
#include "tables.h"
#include "hosts.h"
#include "text.h"
#include "util.h"

/* ---------------------------------------------------------------- check: one line per finding */

void cbt_finding_text(FILE *out, const struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *f,
                      const char *caller, const char *prefix)
{
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    const char *sev = cbt_severity_name(ri ? (unsigned)ri->severity : f->severity);
    char rule[32], op[64] = "-", other[64] = "", value[32], limit[32];
    if (ri)
        snprintf(rule, sizeof(rule), "%s", ri->name);
    else
        snprintf(rule, sizeof(rule), "rule_%u", f->rule);
    if (f->op != UINT64_MAX)
        snprintf(op, sizeof(op), "%" PRIu64, f->op);
    if (f->other_op != UINT64_MAX)
        snprintf(other, sizeof(other), " other_op=%" PRIu64, f->other_op);
    cbt_rule_value(f->rule, f->value, value, sizeof(value));
    cbt_rule_value(f->rule, f->limit, limit, sizeof(limit));
    const char *side = cbt_side_name(f->side);
    fprintf(out,
            "%s%s %s: host=%s pid=%" PRId64 " tid=%" PRId64 " batch=%" PRIu64 " op=%s%s side=%s value=%s"
            " limit=%s caller=%s: %s\n",
            prefix, sev ? sev : "?", rule, cbt_agg_host_name(a, w->host), w->vpid, w->vtid, f->batch_id, op, other,
            side ? side : "?", value, limit, caller, ri ? ri->text : "(a rule this tool does not know)");
}

/* ---------------------------------------------------------------- the summary */

static bool rules_differ(const struct cbt_agg *a)
{
    for (unsigned i = 0; i < a->rs.nrules_seen; i++)
        if (a->rs.rules_seen[i] != CBT_RULES_VERSION)
            return true;
    return a->rs.rules_more;
}

/* The `#` lines of what the reader itself found (nothing when there is nothing to say). */
static void print_read_stats(const struct cbt_agg *a, FILE *out)
{
    const struct cbt_read_stats *s = &a->rs;
    if (s->inline_checked || s->inline_disagreeing)
        fprintf(out, "# inline findings checked: %" PRIu64 ", disagreeing: %" PRIu64 "\n", s->inline_checked,
                s->inline_disagreeing);
    if (rules_differ(a)) {
        fprintf(out, "# rules: recorded with catalogue v");
        for (unsigned i = 0; i < s->nrules_seen; i++)
            fprintf(out, "%s%u", i ? ", v" : "", (unsigned)s->rules_seen[i]);
        fprintf(out, "%s, checked with v%u\n", s->rules_more ? ", ..." : "", (unsigned)CBT_RULES_VERSION);
    }
    if (s->pending)
        fprintf(out, "# pending batches: %" PRIu64 " (the process ended inside the driver call)\n", s->pending);
    if (s->malformed)
        fprintf(out, "# malformed batches: %" PRIu64 " (chunks that do not fit the event format: not validated)\n",
                s->malformed);
    if (s->incomplete)
        fprintf(out, "# incomplete batches: %" PRIu64 " (ops missing at the end of the trace: not validated)\n",
                s->incomplete);
    if (s->given_up)
        fprintf(out, "# batches not validated: %" PRIu64 " (over the reader's memory cap, CUBATCHTRACE_READ_MEMORY)\n",
                s->given_up);
    if (s->findings_dropped)
        fprintf(out, "# findings not counted: %" PRIu64 " (more than 1048576 in one batch)\n", s->findings_dropped);
}


static void print_devices_text(FILE *out, const struct cbt_agg *a)
{
    enum { NC = 9 };
    static const char *const head[NC] = {"Device",       "Ops out",        "Bytes out",   "Ops in",       "Bytes in",
                                         "Peer ops out", "Peer bytes out", "Peer ops in", "Peer bytes in"};
    struct drow rows[NDEV + 2];
    size_t n = cbt_device_rows(a, rows);
    char cells[NDEV + 2][NC][32];
    size_t w[NC];
    for (int c = 0; c < NC; c++)
        w[c] = strlen(head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct devrow *r = rows[i].r;
        const uint64_t v[NC - 1] = {r->ops_out,      r->bytes_out,   r->ops_in,      r->bytes_in,
                                    r->peer_ops_out, r->peer_bytes_out, r->peer_ops_in, r->peer_bytes_in};
        for (int c = 1; c < NC; c++) {
            snprintf(cells[i][c], sizeof(cells[i][c]), "%" PRIu64, v[c - 1]);
            if (strlen(cells[i][c]) > w[c])
                w[c] = strlen(cells[i][c]);
        }
        if (strlen(rows[i].name) > w[0])
            w[0] = strlen(rows[i].name);
    }
    fprintf(out, "\n# Bytes by device (device ordinals of device and managed memory operands)\n");
    fprintf(out, "# out: the device is the source; in: the destination (a copy within one device counts both);\n"
                 "# peer: the other side is device memory of another device\n");
    for (int c = 0; c < NC; c++)
        fprintf(out, c == 0 ? "%-*s" : " | %*s", (int)w[c], head[c]);
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%-*s", (int)w[0], rows[i].name);
        for (int c = 1; c < NC; c++)
            fprintf(out, " | %*s", (int)w[c], cells[i][c]);
        fputc('\n', out);
    }
    if (n == 0)
        fprintf(out, "(none)\n");
}

static const char *measure_text(enum measure m)
{
    return m == M_DRIVER ? "host time in the driver per batch (us)" : "bytes per op";
}

static void fmt_measure(char *b, size_t l, enum measure m, double v)
{
    if (m == M_DRIVER)
        snprintf(b, l, "%.3f", v / 1000.0);
    else
        snprintf(b, l, "%.0f", v);
}

static void print_table_text(FILE *out, const struct table *t, bool pct_bytes, uint64_t tot_bytes, uint64_t tot_ops)
{
    static const char *const head[8] = {"Name", "Batches", "Ops", "Bytes", "%", "Avg", "Min", "Max"};
    size_t w[8];
    for (int c = 0; c < 8; c++)
        w[c] = strlen(head[c]);
    char (*cells)[8][64] = calloc(t->n ? t->n : 1, sizeof(*cells));
    if (!cells)
        return;
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = t->rows[i].r;
        double pct = pct_bytes ? (tot_bytes ? 100.0 * (double)r->bytes / (double)tot_bytes : 0)
                               : (tot_ops ? 100.0 * (double)r->ops / (double)tot_ops : 0);
        snprintf(cells[i][1], 64, "%" PRIu64, r->batches);
        snprintf(cells[i][2], 64, "%" PRIu64, r->ops);
        snprintf(cells[i][3], 64, "%" PRIu64, r->bytes);
        snprintf(cells[i][4], 64, "%.2f", pct);
        if (r->n) {
            fmt_measure(cells[i][5], 64, t->m, (double)r->sum / (double)r->n);
            fmt_measure(cells[i][6], 64, t->m, (double)r->min);
            fmt_measure(cells[i][7], 64, t->m, (double)r->max);
        } else {
            strcpy(cells[i][5], "-");
            strcpy(cells[i][6], "-");
            strcpy(cells[i][7], "-");
        }
        for (int c = 1; c < 8; c++)
            if (strlen(cells[i][c]) > w[c])
                w[c] = strlen(cells[i][c]);
        if (strlen(t->rows[i].name) > w[0])
            w[0] = strlen(t->rows[i].name);
    }
    fprintf(out, "\n# %s\n", t->title);
    if (t->m == M_DRIVER)
        fprintf(out, "# Batches: batches; Ops, Bytes: their recorded ops and the bytes these move; %%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    else
        fprintf(out, "# Batches: batches with at least one such op; Ops, Bytes: such ops and the bytes they move; "
                     "%%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    fprintf(out, "# Avg/Min/Max: %s\n", measure_text(t->m));
    for (int c = 0; c < 8; c++)
        fprintf(out, c == 0 ? "%-*s" : " | %*s", (int)w[c], head[c]);
    fputc('\n', out);
    for (size_t i = 0; i < t->n; i++) {
        fprintf(out, "%-*s", (int)w[0], t->rows[i].name);
        for (int c = 1; c < 8; c++)
            fprintf(out, " | %*s", (int)w[c], cells[i][c]);
        fputc('\n', out);
    }
    if (t->n == 0)
        fprintf(out, "(none)\n");
    free(cells);
}

static void fmt_first(char *b, size_t l, const struct cbt_agg *a, const struct frule *f)
{
    snprintf(b, l, "batch %" PRIu64 " / pid %" PRId64 "%s%s", f->first_batch, f->first_pid,
             a->nhosts > 1 ? " on " : "", a->nhosts > 1 ? cbt_agg_host_name(a, f->first_host) : "");
}

void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs)
{
    cbt_agg_finish(a);
    fprintf(out, "# discarded events: %" PRIu64 "%s\n", a->discarded_events,
            a->discarded_events ? " -- the tracer LOST events: every figure below undercounts" : "");
    fprintf(out, "# discarded packets: %" PRIu64 "%s\n", a->discarded_packets,
            a->discarded_packets ? " -- the tracer LOST packets: every figure below undercounts" : "");
    if (a->discarded_unknown)
        fprintf(out, "# discarded (count unknown): %" PRIu64 " times\n", a->discarded_unknown);
    fprintf(out, "# cubatchtrace summary of:");
    for (int i = 0; i < ninputs; i++)
        fprintf(out, " %s", inputs[i]);
    if (a->nrecorders) {
        fprintf(out, "\n# recorded by: cubatchtrace");
        for (unsigned i = 0; i < a->nrecorders; i++)
            fprintf(out, "%s %s", i ? "," : "", a->recorders[i]);
        fprintf(out, " (read by %s)", PACKAGE_VERSION);
    }
    fprintf(out, "\n# processes: %" PRIu64 "%s\n", cbt_agg_count_procs(a), a->procs.overflowed ? " (table full: at least)" : "");
    fprintf(out, "# threads: %" PRIu64 "%s\n", cbt_agg_count_threads(a), a->threads.overflowed ? " (table full: at least)" : "");
    fprintf(out, "# batches: %" PRIu64 "\n", a->batches);
    fprintf(out, "# ops: %" PRIu64 "\n", a->ops);
    fprintf(out, "# bytes: %" PRIu64 "\n", a->bytes);
    fprintf(out, "# failed batches: %" PRIu64 " (forwarded, result != CUDA_SUCCESS)\n", a->failed);
    fprintf(out, "# refused batches: %" PRIu64 " (refused by the shim in strict mode)\n", a->refused);
    fprintf(out, "# no-driver batches: %" PRIu64 "\n", a->no_driver);
    fprintf(out, "# host time in the driver: %.3f ms\n", (double)a->driver_ns / 1e6);
    fprintf(out, "# findings: %" PRIu64 "\n", a->findings);
    print_read_stats(a, out);
    if (a->orphan_ops || a->incomplete_batches || a->pending_overflow)
        fprintf(out, "# unpaired: %" PRIu64 " ops whose batch event was not seen, %" PRIu64
                     " batches missing ops, %" PRIu64 " batches summarised before all their ops came\n",
                a->orphan_ops, a->incomplete_batches, a->pending_overflow);

    if (cbt_hosts_shown(a))
        cbt_hosts_print_text(a, out);
    struct tables ts;
    cbt_tables_build(a, &ts);
    bool pct_bytes = a->bytes > 0;
    for (int i = 0; i < ts.n; i++) {
        print_table_text(out, &ts.t[i], pct_bytes, a->bytes, a->ops);
        if (strcmp(ts.t[i].key, "by_direction") == 0)
            print_devices_text(out, a);
    }

    /* findings */
    static const char *const fh[4] = {"Rule", "Severity", "Count", "First seen"};
    size_t w[4] = {4, 8, 5, 10};
    char cnt[CBT_RULE_COUNT + 1][32], first[CBT_RULE_COUNT + 1][300];
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct frule *f = &a->rules[k];
        if (!f->count)
            continue;
        snprintf(cnt[k], sizeof(cnt[k]), "%" PRIu64, f->count);
        fmt_first(first[k], sizeof(first[k]), a, f);
        const struct cbt_rule_info *ri = cbt_rule(k);
        size_t l = ri ? strlen(ri->name) : 12;
        if (l > w[0]) w[0] = l;
        if (strlen(cnt[k]) > w[2]) w[2] = strlen(cnt[k]);
        if (strlen(first[k]) > w[3]) w[3] = strlen(first[k]);
    }
    fprintf(out, "\n# Findings by rule (the validator's, run on each batch as the trace is read; `cubatchtrace rules` explains each)\n");
    fprintf(out, "# First seen: the batch id and process of the earliest occurrence\n");
    fprintf(out, "%-*s | %-*s | %*s | %s\n", (int)w[0], fh[0], (int)w[1], fh[1], (int)w[2], fh[2], fh[3]);
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct frule *f = &a->rules[k];
        if (!f->count)
            continue;
        const struct cbt_rule_info *ri = cbt_rule(k);
        const char *sev = cbt_severity_name(f->severity);
        fprintf(out, "%-*s | %-*s | %*s | %s\n", (int)w[0], ri ? ri->name : "(unknown rule)", (int)w[1],
                sev ? sev : "?", (int)w[2], cnt[k], first[k]);
    }
    if (!a->findings)
        fprintf(out, "(none)\n");
    cbt_tables_free(&ts);
}
