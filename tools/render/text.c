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
#include <cubatchtrace/validate.h>

#include "analyse/advice.h"
#include "analyse/callsite.h"
#include "analyse/tables.h"
#include "render/hosts.h"
#include "render/text.h"
#include "base/util.h"

/* ---------------------------------------------------------------- check: one line per finding */

const char *cbt_finding_say(const struct cbt_batch_finding *f, char *buf, size_t len)
{
    struct cbt_finding vf = {.rule = f->rule, .severity = f->severity, .side = f->side, .op = f->op,
                             .other_op = f->other_op, .value = f->value, .limit = f->limit};
    cbt_finding_words(&vf, f->has_op ? &f->opv : NULL, f->has_other ? &f->otherv : NULL, f->copies, buf, len);
    if (f->saving != CBT_SAVING_NONE) { /* an advice: what following it would save */
        size_t at = strlen(buf);
        char sv[160];
        char spent[32] = "";
        if (f->spent_ns)
            cbt_fmt_ns((double)f->spent_ns, spent, sizeof spent);
        snprintf(buf + at, len - at, "%s%s%s; estimated saving: %s", *spent ? ", which took " : "", spent,
                 *spent ? " of host time in the driver" : "", cbt_advice_saving_say(f->saving, f->saving_ns, sv, sizeof sv));
    }
    return buf;
}

const char *cbt_finding_fix(unsigned rule)
{
    const char *fix = cbt_rule_fix(rule);
    return fix ? fix : "";
}

/* site + " <- CALLER <- ...": the callers of a rule's first finding beyond
 * its site, when its stack was recorded (run --stack N) */
static void append_callers(const struct cbt_agg *a, const struct cbt_rule_tally *t, char *site, size_t len)
{
    const struct cbt_batch_finding *f = &t->first;
    unsigned i = 0;
    while (i < f->nstack && f->stack[i] != f->caller)
        i++;
    if (f->nstack - i < 2)
        return;
    char more[3072];
    cbt_callsite_stack(cbt_agg_callsites(a), t->first_host, t->first_pid, f->stack + i, f->nstack - i, more,
                       sizeof more);
    size_t at = strlen(site);
    snprintf(site + at, len - at, " <- %s", more);
}

/* SEVERITY RULE: host=H pid=P tid=T batch=B op=K [other_op=K] side=S caller=SITE: WORDS; fix: FIX */
void cbt_finding_text(FILE *out, const struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *f,
                      const char *caller, const char *prefix)
{
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    const char *sev = cbt_severity_name(ri ? (unsigned)ri->severity : f->severity);
    char rule[32], op[64] = "-", other[64] = "", image[32] = "", words[512];
    if (ri)
        snprintf(rule, sizeof(rule), "%s", ri->name);
    else
        snprintf(rule, sizeof(rule), "rule_%u", f->rule);
    if (f->op != UINT64_MAX)
        snprintf(op, sizeof(op), "%" PRIu64, f->op);
    if (f->other_op != UINT64_MAX)
        snprintf(other, sizeof(other), " other_op=%" PRIu64, f->other_op);
    if (w->image)
        snprintf(image, sizeof(image), " image=0x%08" PRIx32, w->image);
    const char *side = cbt_side_name(f->side);
    const char *fix = cbt_finding_fix(f->rule);
    fprintf(out, "%s%s %s: host=%s pid=%" PRId64 "%s tid=%" PRId64 " batch=%" PRIu64 " op=%s%s side=%s caller=%s: %s%s%s\n",
            prefix, sev ? sev : "?", rule, cbt_agg_host_name(a, w->host), w->vpid, image, w->vtid,
            cbt_batch_number(f->batch_id), op, other, side ? side : "?", caller,
            cbt_finding_say(f, words, sizeof(words)), *fix ? "; fix: " : "", fix);
}

/* ---------------------------------------------------------------- the summary */

static bool rules_differ(const struct cbt_read_stats *s)
{
    for (unsigned i = 0; i < s->nrules_seen; i++)
        if (s->rules_seen[i] != CBT_RULES_VERSION)
            return true;
    return s->rules_more;
}

/* The `#` lines of what the reader itself found (nothing when there is nothing to say). */
static void print_read_stats(const struct cbt_agg *a, FILE *out)
{
    const struct cbt_read_stats *s = cbt_agg_get_read_stats(a);
    if (s->inline_checked || s->inline_disagreeing)
        fprintf(out, "# inline findings checked: %" PRIu64 ", disagreeing: %" PRIu64 "\n", s->inline_checked,
                s->inline_disagreeing);
    if (rules_differ(s)) {
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


/* A line of table cells: the first column left-aligned, the others right-aligned. */
static void print_line(FILE *out, int nc, const size_t *w, const char *first, char (*cells)[64], const char *const *head)
{
    cbt_print_cell(out, first, w[0], true);
    for (int c = 1; c < nc; c++) {
        fputs(" | ", out);
        cbt_print_cell(out, head ? head[c] : cells[c], w[c], false);
    }
    fputc('\n', out);
}

static void widen(size_t *w, const char *cell)
{
    size_t l = cbt_text_width(cell);
    if (l > *w)
        *w = l;
}

static void cell_bytes(char *b, size_t l, uint64_t v, bool raw)
{
    if (raw)
        snprintf(b, l, "%" PRIu64, v);
    else
        cbt_fmt_bytes(v, b, l);
}

static void print_devices_text(FILE *out, const struct cbt_agg *a, bool raw)
{
    enum { NC = 9 };
    static const char *const head[NC] = {"Device",       "Ops out",        "Bytes out",   "Ops in",       "Bytes in",
                                         "Peer ops out", "Peer bytes out", "Peer ops in", "Peer bytes in"};
    struct drow rows[NDEV + 2];
    size_t n = cbt_device_rows(a, rows);
    char cells[NDEV + 2][NC][64];
    size_t w[NC];
    for (int c = 0; c < NC; c++)
        w[c] = strlen(head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct devrow *r = rows[i].r;
        const uint64_t v[NC - 1] = {r->ops_out,      r->bytes_out,   r->ops_in,      r->bytes_in,
                                    r->peer_ops_out, r->peer_bytes_out, r->peer_ops_in, r->peer_bytes_in};
        for (int c = 1; c < NC; c++) {
            if (c % 2 == 0) /* the bytes columns */
                cell_bytes(cells[i][c], sizeof(cells[i][c]), v[c - 1], raw);
            else
                snprintf(cells[i][c], sizeof(cells[i][c]), "%" PRIu64, v[c - 1]);
            widen(&w[c], cells[i][c]);
        }
        widen(&w[0], rows[i].name);
    }
    fprintf(out, "\n# Bytes by device (device ordinals of device and managed memory operands)\n");
    fprintf(out, "# out: the device is the source; in: the destination (a copy within one device counts both);\n"
                 "# peer: the other side is device memory of another device\n");
    print_line(out, NC, w, head[0], NULL, head);
    for (size_t i = 0; i < n; i++)
        print_line(out, NC, w, rows[i].name, cells[i], NULL);
    if (n == 0)
        fprintf(out, "(none)\n");
}

static const char *measure_text(enum measure m, bool raw)
{
    return m == M_DRIVER ? (raw ? "host time in the driver per batch (ns)" : "host time in the driver per batch")
                         : "bytes per op";
}

/* raw: whole ns or bytes (an average rounded to the nearest); else human units */
static void fmt_measure(char *b, size_t l, enum measure m, double v, bool raw)
{
    if (m == M_DRIVER && raw)
        snprintf(b, l, "%.0f", v);
    else if (m == M_DRIVER)
        cbt_fmt_ns(v, b, l);
    else if (raw)
        snprintf(b, l, "%.0f", v);
    else
        cbt_fmt_bytes((uint64_t)(v + 0.5), b, l);
}

/* max_rows: print at most that many rows (0: all), then say how many more */
static void print_table_text(FILE *out, const struct table *t, bool pct_bytes, uint64_t tot_bytes, uint64_t tot_ops,
                             bool raw, size_t max_rows)
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
        cell_bytes(cells[i][3], 64, r->bytes, raw);
        snprintf(cells[i][4], 64, "%.2f", pct);
        if (r->n) {
            fmt_measure(cells[i][5], 64, t->m, (double)r->sum / (double)r->n, raw);
            fmt_measure(cells[i][6], 64, t->m, (double)r->min, raw);
            fmt_measure(cells[i][7], 64, t->m, (double)r->max, raw);
        } else {
            strcpy(cells[i][5], "-");
            strcpy(cells[i][6], "-");
            strcpy(cells[i][7], "-");
        }
        for (int c = 1; c < 8; c++)
            widen(&w[c], cells[i][c]);
        widen(&w[0], t->rows[i].name);
    }
    fprintf(out, "\n# %s\n", t->title);
    if (t->m == M_DRIVER)
        fprintf(out, "# Batches: batches; Ops, Bytes: their recorded ops and the bytes these move; %%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    else
        fprintf(out, "# Batches: batches with at least one such op; Ops, Bytes: such ops and the bytes they move; "
                     "%%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    fprintf(out, "# Avg/Min/Max: %s\n", measure_text(t->m, raw));
    print_line(out, 8, w, head[0], NULL, head);
    size_t shown = max_rows && t->n > max_rows ? max_rows : t->n;
    for (size_t i = 0; i < shown; i++)
        print_line(out, 8, w, t->rows[i].name, cells[i], NULL);
    if (shown < t->n)
        fprintf(out, "(%zu more rows: --all)\n", t->n - shown);
    if (t->n == 0)
        fprintf(out, "(none)\n");
    free(cells);
}

/* ---------------------------------------------------------------- GPU time */

static void cell_ns(char *b, size_t l, uint64_t v, bool raw)
{
    if (raw)
        snprintf(b, l, "%" PRIu64, v);
    else
        cbt_fmt_ns((double)v, b, l);
}

/* bytes / gpu_ns: bytes per ns are GB/s */
static void cell_gbps(char *b, size_t l, const struct gpurow *r, bool raw)
{
    if (!r->gpu_ns)
        snprintf(b, l, "-");
    else if (raw)
        snprintf(b, l, "%.3f", (double)r->bytes / (double)r->gpu_ns);
    else
        cbt_fmt_gbps((double)r->bytes / (double)r->gpu_ns, b, l);
}

static void print_gpu_table(FILE *out, const struct gtable *t, bool raw)
{
    enum { NC = 7 };
    static const char *const head[NC] = {"Name", "Batches", "Ops", "Bytes", "Host time", "GPU time", "GB/s"};
    size_t w[NC];
    for (int c = 0; c < NC; c++)
        w[c] = strlen(head[c]);
    char (*cells)[NC][64] = calloc(t->n ? t->n : 1, sizeof(*cells));
    if (!cells)
        return;
    for (size_t i = 0; i < t->n; i++) {
        const struct gpurow *r = t->rows[i].r;
        snprintf(cells[i][1], 64, "%" PRIu64, r->batches);
        snprintf(cells[i][2], 64, "%" PRIu64, r->ops);
        cell_bytes(cells[i][3], 64, r->bytes, raw);
        cell_ns(cells[i][4], 64, r->host_ns, raw);
        cell_ns(cells[i][5], 64, r->gpu_ns, raw);
        cell_gbps(cells[i][6], 64, r, raw);
        for (int c = 1; c < NC; c++)
            widen(&w[c], cells[i][c]);
        widen(&w[0], t->rows[i].name);
    }
    fprintf(out, "\n# %s\n", t->title);
    print_line(out, NC, w, head[0], NULL, head);
    for (size_t i = 0; i < t->n; i++)
        print_line(out, NC, w, t->rows[i].name, cells[i], NULL);
    if (t->n == 0)
        fprintf(out, "(none)\n");
    free(cells);
}

/* The GPU section: when a gpu_time event was read, or a process asked for
 * GPU time; its tables by direction only unless all. */
static void print_gpu_text(FILE *out, struct cbt_agg *a, bool raw, bool all)
{
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    const struct gpu_time *g = t.gpu;
    struct gpu_tables gt;
    cbt_gpu_tables_build(a, &gt);
    if (g->events == 0 && gt.processes_timed == 0) {
        cbt_gpu_tables_free(&gt);
        return;
    }
    char by[64], host[64], gpu[64], bw[64];
    fprintf(out, "\n# GPU time (CUBATCHTRACE_GPU_TIME=N): batches timed on their stream, from the first copy's "
                 "start to the last copy's end\n");
    fprintf(out, "# processes timed: %" PRIu64 "\n", gt.processes_timed);
    if (gt.processes_sampled == 0)
        fprintf(out, "# chosen: every batch\n");
    else if (gt.sample_every == gt.sample_every_min)
        fprintf(out, "# chosen: one batch in %u of each stream, per calling thread (%" PRIu64 " process%s; %" PRIu64
                     " batches of theirs forwarded with CUDA_SUCCESS not timed)\n",
                gt.sample_every, gt.processes_sampled, gt.processes_sampled == 1 ? "" : "es", gt.not_sampled);
    else
        fprintf(out, "# chosen: one batch in %u to %u of each stream, per calling thread (%" PRIu64 " process%s; %" PRIu64
                     " batches of theirs forwarded with CUDA_SUCCESS not timed)\n",
                gt.sample_every_min, gt.sample_every, gt.processes_sampled, gt.processes_sampled == 1 ? "" : "es",
                gt.not_sampled);
    cell_bytes(by, sizeof(by), g->total.bytes, raw);
    cell_ns(host, sizeof(host), g->total.host_ns, raw);
    cell_ns(gpu, sizeof(gpu), g->total.gpu_ns, raw);
    cell_gbps(bw, sizeof(bw), &g->total, raw);
    if (g->total.batches)
        fprintf(out, "# batches timed: %" PRIu64 " (%" PRIu64 " ops, %s%s): GPU time %s%s, host time in the driver "
                     "%s%s, %s%s\n",
                g->total.batches, g->total.ops, by, raw ? " bytes" : "", gpu, raw ? " ns" : "", host,
                raw ? " ns" : "", bw, raw && g->total.gpu_ns ? " GB/s" : "");
    else
        fprintf(out, "# batches timed: 0\n");
    fprintf(out, "# not timed: capturing %" PRIu64 ", no_events %" PRIu64 ", call_failed %" PRIu64 ", lost %" PRIu64
                 ", overflow %" PRIu64 ", not_read_back %" PRIu64 "\n",
            g->status[CBT_GPU_CAPTURING], g->status[CBT_GPU_NO_EVENTS], g->status[CBT_GPU_CALL_FAILED],
            g->status[CBT_GPU_LOST], g->status[CBT_GPU_OVERFLOW], gt.not_read_back);
    fprintf(out, "# (capturing: the stream was being captured into a graph; no_events: timing events could not be "
                 "made; call_failed: the call returned an error; lost: the events could not be read back; overflow: "
                 "too many batches in flight; not_read_back: the process ended before its batches' times were "
                 "read)\n");
    if (g->total.batches == 0) {
        if (g->events == 0)
            fprintf(out, "# no batch was timed: %" PRIu64 " process%s asked for GPU time, but no gpu_time event was "
                         "read (%" PRIu64 " batches forwarded with CUDA_SUCCESS not read back)\n",
                    gt.processes_timed, gt.processes_timed == 1 ? "" : "es", gt.not_read_back);
        else
            fprintf(out, "# no batch was timed: all %" PRIu64 " gpu_time events say why above\n", g->events);
    } else {
        fprintf(out, "# Batches, Ops, Bytes: the timed batches; Host time: in the driver call; GPU time: summed per "
                     "batch; GB/s: Bytes / GPU time\n");
        for (int i = 0; i < gt.n; i++)
            if (!gt.t[i].json_only && (all || strcmp(gt.t[i].key, "by_direction") == 0))
                print_gpu_table(out, &gt.t[i], raw);
    }
    cbt_gpu_tables_free(&gt);
}

void cbt_print_wrapped(FILE *out, const char *first, size_t indent, const char *text, size_t width)
{
    size_t col = cbt_text_width(first);
    fputs(first, out);
    const char *p = text;
    bool line_start = true;
    while (*p) {
        const char *sp = strchr(p, ' ');
        size_t n = sp ? (size_t)(sp - p) : strlen(p);
        char word[512];
        snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
        size_t w = cbt_text_width(word);
        if (!line_start && col + 1 + w > width) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            line_start = true;
        }
        if (!line_start) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, n, out);
        col += w;
        line_start = false;
        p += n;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

static const struct cbt_rule_tally *sort_tallies;

/* most serious first, then the most frequent, then in catalogue order */
static int cmp_rule(const void *x, const void *y)
{
    unsigned i = *(const unsigned *)x, j = *(const unsigned *)y;
    const struct cbt_rule_tally *a = &sort_tallies[i], *b = &sort_tallies[j];
    if (a->severity != b->severity)
        return a->severity < b->severity ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The findings: each rule, most serious first, with its first finding in
 * words, where it was made, and the fix; then how to see them all. */
static void print_findings_text(FILE *out, struct cbt_agg *a, const struct cbt_agg_totals *t,
                                const char *const *inputs, int ninputs)
{
    unsigned order[CBT_RULE_COUNT + 1], n = 0;
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++)
        if (t->rules[k].count && !(k < CBT_RULE_COUNT && cbt_rule_is_advice(k)))
            order[n++] = k;
    sort_tallies = t->rules;
    qsort(order, n, sizeof(*order), cmp_rule);
    fprintf(out, "\n# Findings: %" PRIu64 " in %u rule%s, most serious first (each rule's first: where, what, fix)\n",
            t->findings, n, n == 1 ? "" : "s");
    for (unsigned i = 0; i < n; i++) {
        const struct cbt_rule_tally *f = &t->rules[order[i]];
        const struct cbt_rule_info *ri = cbt_rule(order[i]);
        const char *sev = cbt_severity_name(f->severity);
        char site[4096], proc[64], head[4400], words[512];
        cbt_objmap_name(cbt_agg_callsites(a), f->first_host, f->first_pid, f->first.caller, site, sizeof(site));
        append_callers(a, f, site, sizeof(site)); /* run --stack N: " <- " its callers */
        snprintf(head, sizeof(head), "%s %s: %" PRIu64 " finding%s; the first at %s, batch %" PRIu64 " of %s%s%s",
                 sev ? sev : "?", ri ? ri->name : "(a rule this tool does not know)", f->count, f->count == 1 ? "" : "s",
                 site, cbt_batch_number(f->first_batch),
                 cbt_agg_proc_name(a, f->first_host, cbt_pkey(f->first_image, f->first_pid), proc, sizeof(proc)),
                 t->nhosts > 1 ? " on " : "", t->nhosts > 1 ? cbt_agg_host_name(a, f->first_host) : "");
        fprintf(out, "%s\n", head);
        cbt_print_wrapped(out, "  ", 2, cbt_finding_say(&f->first, words, sizeof(words)), 100);
        const char *fix = cbt_finding_fix(order[i]);
        if (*fix)
            cbt_print_wrapped(out, "  fix: ", 7, fix, 100);
    }
    if (!n) {
        fprintf(out, "(none)\n");
        return;
    }
    fprintf(out, "# every finding, with its call site:");
    fprintf(out, " cubatchtrace check");
    for (int i = 0; i < ninputs; i++)
        fprintf(out, " %s", inputs[i]);
    fputc('\n', out);
}

/* The advice: one row per rule, the most frequent first, with its first call
 * site and the savings of all its advice together; which cost table. */
static void print_advice_text(FILE *out, struct cbt_agg *a, const struct cbt_agg_totals *t, bool raw)
{
    unsigned order[CBT_RULE_COUNT], n = 0;
    for (unsigned k = 0; k < CBT_RULE_COUNT; k++)
        if (t->rules[k].count && cbt_rule_is_advice(k))
            order[n++] = k;
    sort_tallies = t->rules;
    qsort(order, n, sizeof(*order), cmp_rule);
    char table[800];
    if (cbt_advice_set.off || !n) { /* one line: the first screen stays short */
        fprintf(out, "# Advice: %s\n", cbt_advice_set.off ? "off (--advice off)" : "none");
        if (t->advice_unjudged && !cbt_advice_set.off)
            fprintf(out, "# low_bandwidth: %" PRIu64 " GPU-timed batches not judged: no measured cost table\n",
                    t->advice_unjudged);
        return;
    }
    fprintf(out, "\n# Advice: %" PRIu64 " in %u rule%s: what to change, and what it would save\n", t->advice, n,
            n == 1 ? "" : "s");
    fprintf(out, "# cost table: %s\n", cbt_advice_table_say(table, sizeof table));
    if (t->advice_unjudged)
        fprintf(out, "# low_bandwidth: %" PRIu64 " GPU-timed batches not judged: no measured cost table\n",
                t->advice_unjudged);
    /* Rule | Count | First call site | Estimated saving */
    char sites[CBT_RULE_COUNT][1024], savings[CBT_RULE_COUNT][200], counts[CBT_RULE_COUNT][24];
    size_t w[4] = {4, 5, 15, 16};
    for (unsigned i = 0; i < n; i++) {
        const struct cbt_rule_tally *f = &t->rules[order[i]];
        cbt_objmap_name(cbt_agg_callsites(a), f->first_host, f->first_pid, f->first.caller, sites[i], sizeof sites[i]);
        if (raw && (f->saving_kinds & CBT_SAVING_WITH_NS))
            snprintf(savings[i], sizeof savings[i], "%" PRIu64 " ns %s", f->saving_ns,
                     f->saving_kinds & (1u << CBT_SAVING_TRACE)        ? "host, trace"
                     : f->saving_kinds & (1u << CBT_SAVING_BOUND)      ? "host, at most, trace"
                     : f->saving_kinds & (1u << CBT_SAVING_TABLE_HOST) ? "host, table"
                                                                       : "GPU, table");
        else
            cbt_advice_savings_say(f->saving_kinds, f->saving_ns, savings[i], sizeof savings[i]);
        snprintf(counts[i], sizeof counts[i], "%" PRIu64, f->count);
        size_t l[4] = {strlen(cbt_rules[order[i]].name), strlen(counts[i]), cbt_text_width(sites[i]),
                       cbt_text_width(savings[i])};
        for (int c = 0; c < 4; c++)
            w[c] = l[c] > w[c] ? l[c] : w[c];
    }
    fprintf(out, "%-*s | %*s | %-*s | %s\n", (int)w[0], "Rule", (int)w[1], "Count", (int)w[2], "First call site",
            "Estimated saving");
    for (unsigned i = 0; i < n; i++) {
        fprintf(out, "%-*s | %*s | ", (int)w[0], cbt_rules[order[i]].name, (int)w[1], counts[i]);
        cbt_print_cell(out, sites[i], w[2], true);
        fprintf(out, " | %s\n", savings[i]);
    }
    fprintf(out, "# every advice in words, with its call site and fix: cubatchtrace check\n");
}

void cbt_print_fabric_line(FILE *out, const struct cbt_agg_totals *t)
{
    if (t->fabric_calls)
        fprintf(out, "# fabric batches: %" PRIu64 " cuFabricCpyBatchAsync calls of %" PRIu64 " ops (%" PRIu64
                     " failed); their copies are not read, and no other figure counts them\n",
                t->fabric_calls, t->fabric_ops, t->fabric_failed);
}

void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs, bool raw)
{
    cbt_agg_finish(a);
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    fprintf(out, "# discarded events: %" PRIu64 "%s\n", t.discarded_events,
            t.discarded_events ? " -- the tracer LOST events: every figure below undercounts" : "");
    fprintf(out, "# discarded packets: %" PRIu64 "%s\n", t.discarded_packets,
            t.discarded_packets ? " -- the tracer LOST packets: every figure below undercounts" : "");
    if (t.discarded_unknown)
        fprintf(out, "# discarded (count unknown): %" PRIu64 " times\n", t.discarded_unknown);
    fprintf(out, "# cubatchtrace summary of:");
    for (int i = 0; i < ninputs; i++)
        fprintf(out, " %s", inputs[i]);
    if (t.nrecorders) {
        fprintf(out, "\n# recorded by: cubatchtrace");
        for (unsigned i = 0; i < t.nrecorders; i++)
            fprintf(out, "%s %s", i ? "," : "", t.recorders[i]);
        fprintf(out, " (read by %s)", PACKAGE_VERSION);
    }
    fprintf(out, "\n# processes: %" PRIu64 "%s\n", cbt_agg_count_procs(a), t.procs_full ? " (table full: at least)" : "");
    fprintf(out, "# threads: %" PRIu64 "%s\n", cbt_agg_count_threads(a), t.threads_full ? " (table full: at least)" : "");
    fprintf(out, "# batches: %" PRIu64 "\n", t.batches);
    fprintf(out, "# ops: %" PRIu64 "\n", t.ops);
    fprintf(out, "# bytes: %" PRIu64 "\n", t.bytes);
    fprintf(out, "# failed batches: %" PRIu64 " (forwarded, result != CUDA_SUCCESS)\n", t.failed);
    fprintf(out, "# refused batches: %" PRIu64 " (refused by the shim in strict mode)\n", t.refused);
    fprintf(out, "# refused in capture: %" PRIu64 " (of the failed: the stream was being captured into a graph, "
                 "the copy is not in it)\n", t.refused_in_capture);
    fprintf(out, "# no-driver batches: %" PRIu64 "\n", t.no_driver);
    if (raw)
        fprintf(out, "# host time in the driver: %" PRIu64 " ns\n", t.driver_ns);
    else
        fprintf(out, "# host time in the driver: %.3f ms\n", (double)t.driver_ns / 1e6);
    fprintf(out, "# findings: %" PRIu64 "\n", t.findings);
    cbt_print_fabric_line(out, &t);
    print_read_stats(a, out);
    if (t.untagged)
        fprintf(out, "# process identity: host and pid only for %" PRIu64 " batch%s (recorded before process images: "
                     "an exec, pid namespaces or a reused pid are not told apart)\n",
                t.untagged, t.untagged == 1 ? "" : "es");
    if (t.orphan_ops || t.incomplete_batches || t.pending_overflow)
        fprintf(out, "# unpaired: %" PRIu64 " ops whose batch event was not seen, %" PRIu64
                     " batches missing ops, %" PRIu64 " batches summarised before all their ops came\n",
                t.orphan_ops, t.incomplete_batches, t.pending_overflow);

    if (cbt_hosts_shown(a))
        cbt_hosts_print_text(a, out, raw);
    /* The first screen: the call sites, the directions, the tables asked
     * for with --by, the findings; --all: every table. */
    bool all = cbt_agg_by(a) & CBT_BY_ALL;
    static const char *const first_screen[] = {"callers", "by_direction", "by_process", "by_thread", "by_stream"};
    struct tables ts;
    cbt_tables_build(a, &ts);
    bool pct_bytes = t.bytes > 0;
    size_t nfs = all ? 1 : sizeof(first_screen) / sizeof(*first_screen);
    for (size_t f = 0; f < nfs; f++) {
        for (int i = 0; i < ts.n; i++) {
            if (!all && strcmp(ts.t[i].key, first_screen[f]) != 0)
                continue;
            bool callers = strcmp(ts.t[i].key, "callers") == 0;
            print_table_text(out, &ts.t[i], pct_bytes, t.bytes, t.ops, raw,
                             callers && !all && !(cbt_agg_by(a) & CBT_BY_CALLER) ? 10 : 0);
            if (all && strcmp(ts.t[i].key, "by_direction") == 0)
                print_devices_text(out, a, raw);
        }
    }
    print_findings_text(out, a, &t, inputs, ninputs);
    print_advice_text(out, a, &t, raw);
    cbt_tables_free(&ts);
    print_gpu_text(out, a, raw, all);
    if (!all)
        fprintf(out, "\n# more tables: --all (by API variant, door, device, memory kinds, srcAccessOrder, batch and op\n"
                     "# size; GPU time by memory kinds, op size, stream, device), --by process,thread,stream,host,caller\n");
}
