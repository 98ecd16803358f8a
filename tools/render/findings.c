/* SPDX-License-Identifier: MIT */
/*
 * The outputs of `check`.
 *
 *   text   one line per finding (text.c), waived ones as `# waived ...`
 *          comment lines, then `#` lines with the totals
 *   json   {"schema": "cubatchtrace-check", "findings": [...], "totals": {...},
 *          "waivers": [...], "exit_status": N} (docs/json-schema.md)
 *   sarif  a SARIF 2.1.0 log: one run whose tool.driver.rules is the rule
 *          catalogue (catalog.h) and whose results are the findings, with the
 *          call site as physical location (the source file and line, else the
 *          object and the offset in it) and the function as logical
 *          location; a waived finding carries an external suppression with
 *          the waiver's reason.
 *
 * The documents are written with jansson, one finding at a time, so that
 * memory stays flat however many findings a trace holds.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <cubatchtrace/catalog.h>

#include "analyse/agg.h"
#include "analyse/callsite.h"
#include "render/findings.h"
#include "render/json.h"
#include "render/text.h"
#include "base/util.h"

#define HELD 4096

struct held {
    struct cbt_where w;
    struct cbt_batch_finding f;
};

struct cbt_findings {
    const struct cbt_agg *agg;
    FILE *out;
    enum cbt_check_format fmt;
    struct cbt_waivers *ws;
    struct held *buf; /* NULL: each finding printed as it comes */
    size_t n;
    uint64_t printed;
    uint64_t waived[4]; /* by severity */
    char *root;         /* SARIF: the source root, absolute, ending in '/' */
};

static const char *sarif_level(unsigned severity)
{
    return severity == CBT_SEV_ERROR ? "error" : severity == CBT_SEV_HAZARD ? "warning" : "note";
}

static void dump(FILE *out, json_t *j, size_t indent)
{
    char *s = json_dumps(j, JSON_INDENT(indent) | JSON_ENSURE_ASCII);
    if (s)
        fputs(s, out);
    free(s);
}

/* What a severity means, for the rules' fullDescription. */
static const char *severity_meaning(unsigned severity)
{
    return severity == CBT_SEV_ERROR    ? "Error: the driver rejects the call (CUDA_ERROR_INVALID_VALUE) or crashes on it."
           : severity == CBT_SEV_HAZARD ? "Hazard: the driver accepts the call, but the result is undefined (the copies "
                                          "of a batch run in no order)."
           : severity == CBT_SEV_WARNING ? "Warning: accepted and well defined, but probably not what was meant."
                                         : "Advice: correct as it is; what to change to make it faster or safer, and "
                                           "what that would save.";
}

/* A file:// URI of an absolute path, percent-encoding what RFC 3986 does not
 * allow in a path; a relative path stays a relative reference. */
static json_t *file_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(n * 3 + 8);
    if (!u)
        return json_string(path);
    char *p = u;
    if (path[0] == '/')
        p += sprintf(p, "file://");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/-._~!$&'()*+,;=:@", *c))
            *p++ = (char)*c;
        else
            p += sprintf(p, "%%%02X", *c);
    }
    *p = 0;
    json_t *j = json_string(u);
    free(u);
    return j;
}

static char *abs_path(const char *p)
{
    if (p[0] == '/')
        return strdup(p);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return NULL;
    char *r = malloc(strlen(cwd) + strlen(p) + 2);
    if (r)
        sprintf(r, "%s/%s", cwd, p);
    free(cwd);
    return r;
}

/* The source root as an absolute directory ending in '/' (NULL: out of memory). */
static char *absolute_root(const char *root)
{
    char *r = realpath(root && *root ? root : ".", NULL);
    if (!r) /* a directory that does not exist here: as given, made absolute */
        r = abs_path(root && *root ? root : ".");
    if (!r)
        return NULL;
    size_t n = strlen(r);
    char *d = malloc(n + 2);
    if (d) {
        memcpy(d, r, n + 1);
        if (n == 0 || d[n - 1] != '/')
            strcpy(d + n, "/");
    }
    free(r);
    return d;
}

struct cbt_findings *cbt_findings_new(const struct cbt_agg *a, FILE *out, enum cbt_check_format fmt,
                                      struct cbt_waivers *ws, const char *source_root)
{
    struct cbt_findings *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    if (fmt == CBT_CHECK_SARIF && !(o->root = absolute_root(source_root))) {
        free(o);
        return NULL;
    }
    o->agg = a;
    o->out = out;
    o->fmt = fmt;
    o->ws = ws;
    o->buf = calloc(HELD, sizeof(*o->buf));
    if (fmt == CBT_CHECK_JSON) {
        fprintf(out, "{\n  \"schema\": \"cubatchtrace-check\",\n  \"schema_version\": 1,\n  \"version\": \"%s\",\n"
                     "  \"findings\": [",
                PACKAGE_VERSION);
    } else if (fmt == CBT_CHECK_SARIF) {
        json_t *rules = json_array();
        for (unsigned i = 0; i < CBT_RULE_COUNT; i++) {
            const struct cbt_rule_info *ri = &cbt_rules[i];
            char full[1024], help[1024];
            snprintf(full, sizeof(full), "%s. %s", ri->text, severity_meaning(ri->severity));
            snprintf(help, sizeof(help), "To fix: %s.", cbt_finding_fix(i));
            json_t *r = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s, s:i}}", "id", ri->name,
                                  "name", ri->name, "shortDescription", "text", ri->text, "fullDescription", "text",
                                  full, "help", "text", help, "defaultConfiguration", "level",
                                  sarif_level(ri->severity), "properties", "severity",
                                  cbt_severity_name(ri->severity), "catalogue_version", (int)CBT_RULES_VERSION);
            json_array_append_new(rules, r);
        }
        json_t *tool = json_pack("{s:{s:s, s:s, s:s, s:o}}", "driver", "name", "cubatchtrace", "version",
                                 PACKAGE_VERSION, "semanticVersion", PACKAGE_VERSION, "rules", rules);
        fprintf(out, "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n"
                     "  \"runs\": [\n    {\n      \"tool\": ");
        dump(out, tool, 2);
        json_decref(tool);
        if (o->root) {
            json_t *base = json_pack("{s:{s:o}}", "SRCROOT", "uri", file_uri(o->root));
            fprintf(out, ",\n      \"originalUriBaseIds\": ");
            dump(out, base, 2);
            json_decref(base);
        }
        fprintf(out, ",\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [");
    }
    return o;
}

/* The finding's callers beyond its site (cubatchtrace:stack, run --stack N):
 * the frames after the one the site is (the caller, or the frame
 * --skip-frames picked); 0 when none was recorded. */
static unsigned callers_of(const struct cbt_batch_finding *f, const uint64_t **from)
{
    unsigned i = 0;
    while (i < f->nstack && f->stack[i] != f->caller)
        i++;
    if (i >= f->nstack)
        return 0;
    *from = f->stack + i;
    return f->nstack - i;
}

/* "SITE <- CALLER <- ...": the site, then its callers when recorded */
static const char *site_text(const struct cbt_findings *o, const struct held *h, const struct cbt_callsite *cs,
                             char *buf, size_t len)
{
    cbt_callsite_format(cs, buf, len);
    const uint64_t *st;
    unsigned n = callers_of(&h->f, &st);
    if (n > 1) {
        size_t at = strlen(buf);
        char more[3072];
        cbt_callsite_stack(cbt_agg_callsites(o->agg), h->w.host, h->w.vpid, st, n, more, sizeof more);
        snprintf(buf + at, len - at, " <- %s", more);
    }
    return buf;
}

/* The callers as JSON sites (cbt_callsite_json), nearest first; NULL when none. */
static json_t *callers_json(const struct cbt_findings *o, const struct held *h)
{
    const uint64_t *st;
    unsigned n = callers_of(&h->f, &st);
    if (n < 2)
        return NULL;
    json_t *a = json_array();
    for (unsigned i = 1; i < n; i++) {
        struct cbt_callsite cs;
        cbt_callsite_lookup(cbt_agg_callsites(o->agg), h->w.host, h->w.vpid, st[i], &cs);
        json_array_append_new(a, cbt_callsite_json(&cs, true));
    }
    return a;
}

static json_t *finding_json(const struct cbt_findings *o, const struct held *h, const struct cbt_callsite *cs,
                            const struct cbt_waiver *wv)
{
    const struct cbt_batch_finding *f = &h->f;
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    unsigned sev = ri ? (unsigned)ri->severity : f->severity;
    json_t *j = json_object();
    json_object_set_new(j, "rule", ri ? json_string(ri->name) : json_null());
    json_object_set_new(j, "severity", json_string(cbt_severity_name(sev) ? cbt_severity_name(sev) : "?"));
    json_object_set_new(j, "text", ri ? json_string(ri->text) : json_null());
    char words[512];
    json_object_set_new(j, "words", json_string(cbt_finding_say(f, words, sizeof(words))));
    json_object_set_new(j, "fix", ri ? json_string(cbt_finding_fix(f->rule)) : json_null());
    json_object_set_new(j, "host", json_string(cbt_agg_host_name(o->agg, h->w.host)));
    json_object_set_new(j, "pid", json_integer(h->w.vpid));
    char tag[16];
    snprintf(tag, sizeof(tag), "0x%08" PRIx32, h->w.image);
    json_object_set_new(j, "image", h->w.image ? json_string(tag) : json_null());
    json_object_set_new(j, "tid", json_integer(h->w.vtid));
    json_object_set_new(j, "batch", json_integer((json_int_t)cbt_batch_number(f->batch_id)));
    json_object_set_new(j, "op", f->op == UINT64_MAX ? json_null() : json_integer((json_int_t)f->op));
    json_object_set_new(j, "other_op", f->other_op == UINT64_MAX ? json_null() : json_integer((json_int_t)f->other_op));
    json_object_set_new(j, "side", json_string(cbt_side_name(f->side) ? cbt_side_name(f->side) : "?"));
    char v[32];
    json_object_set_new(j, "value", json_string(cbt_rule_value(f->rule, f->value, v, sizeof(v))));
    json_object_set_new(j, "limit", json_string(cbt_rule_value(f->rule, f->limit, v, sizeof(v))));
    json_object_set_new(j, "site", cbt_callsite_json(cs, true));
    json_t *callers = callers_json(o, h);
    if (callers) /* run --stack N: the site's callers, nearest first */
        json_object_set_new(j, "callers", callers);
    json_object_set_new(j, "waived", wv ? json_pack("{s:s}", "reason", wv->reason) : json_null());
    if (f->saving != CBT_SAVING_NONE) { /* an advice: its estimated saving, and what it rests on */
        json_object_set_new(j, "saving_ns", (1u << f->saving) & CBT_SAVING_WITH_NS
                                                ? json_integer((json_int_t)f->saving_ns)
                                                : json_null());
        json_object_set_new(j, "saving_from", json_string(cbt_saving_name(f->saving)));
    }
    return j;
}

/* An artifactLocation: a path under the source root relative to it (uriBaseId
 * SRCROOT, run.originalUriBaseIds); any other path as a file:// URI. */
static json_t *artifact(const struct cbt_findings *o, const char *path)
{
    size_t n = o->root ? strlen(o->root) : 0;
    if (n && strncmp(path, o->root, n) == 0 && path[n])
        return json_pack("{s:o, s:s}", "uri", file_uri(path + n), "uriBaseId", "SRCROOT");
    if (path[0] != '/' && o->root) /* relative as recorded (the compiler's working directory): to the root */
        return json_pack("{s:o, s:s}", "uri", file_uri(path), "uriBaseId", "SRCROOT");
    return json_pack("{s:o}", "uri", file_uri(path));
}

static json_t *result_sarif(const struct cbt_findings *o, const struct held *h, const struct cbt_callsite *cs,
                            const struct cbt_waiver *wv)
{
    const struct cbt_batch_finding *f = &h->f;
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    unsigned sev = ri ? (unsigned)ri->severity : f->severity;
    char msg[6144], words[512], caller[4096], image[32] = "";
    site_text(o, h, cs, caller, sizeof(caller));
    if (h->w.image)
        snprintf(image, sizeof(image), " (image 0x%08" PRIx32 ")", h->w.image);
    const char *fix = cbt_finding_fix(f->rule);
    snprintf(msg, sizeof(msg), "%s%s%s (batch %" PRIu64 ", pid %" PRId64 "%s on %s, called from %s)",
             cbt_finding_say(f, words, sizeof(words)), *fix ? "; fix: " : "", fix, cbt_batch_number(f->batch_id),
             h->w.vpid, image, cbt_agg_host_name(o->agg, h->w.host), caller);
    json_t *r = json_object();
    if (ri) {
        json_object_set_new(r, "ruleId", json_string(ri->name));
        json_object_set_new(r, "ruleIndex", json_integer(f->rule));
    }
    json_object_set_new(r, "level", json_string(sarif_level(sev)));
    json_object_set_new(r, "message", json_pack("{s:s}", "text", msg));
    json_t *loc = json_object();
    if (cs->line) {
        json_object_set_new(loc, "physicalLocation",
                            json_pack("{s:o, s:{s:i}}", "artifactLocation", artifact(o, cs->file), "region",
                                      "startLine", (int)cs->line));
    } else if (cs->object) {
        json_object_set_new(loc, "physicalLocation",
                            json_pack("{s:o, s:{s:I}}", "artifactLocation", artifact(o, cs->object), "address",
                                      "relativeAddress", (json_int_t)cs->offset));
    }
    if (cs->function[0])
        json_object_set_new(loc, "logicalLocations",
                            json_pack("[{s:s, s:s}]", "fullyQualifiedName", cs->function, "kind", "function"));
    const uint64_t *st;
    unsigned nst = callers_of(f, &st);
    if (nst > 1) { /* run --stack N: the site's callers, nearest first */
        json_t *rel = json_array();
        for (unsigned i = 1; i < nst; i++) {
            struct cbt_callsite c;
            cbt_callsite_lookup(cbt_agg_callsites(o->agg), h->w.host, h->w.vpid, st[i], &c);
            json_t *l = json_object();
            json_object_set_new(l, "id", json_integer((json_int_t)i));
            if (c.line)
                json_object_set_new(l, "physicalLocation",
                                    json_pack("{s:o, s:{s:i}}", "artifactLocation", artifact(o, c.file), "region",
                                              "startLine", (int)c.line));
            else if (c.object)
                json_object_set_new(l, "physicalLocation",
                                    json_pack("{s:o, s:{s:I}}", "artifactLocation", artifact(o, c.object), "address",
                                              "relativeAddress", (json_int_t)c.offset));
            char nm[1024];
            json_object_set_new(l, "message",
                                json_pack("{s:s}", "text", i == 1 ? "called from" : "which was called from"));
            (void)cbt_callsite_format(&c, nm, sizeof nm);
            json_object_set_new(l, "logicalLocations",
                                json_pack("[{s:s}]", "fullyQualifiedName", c.function[0] ? c.function : nm));
            json_array_append_new(rel, l);
        }
        json_object_set_new(r, "relatedLocations", rel);
    }
    if (json_object_size(loc)) {
        json_t *locs = json_array();
        json_array_append_new(locs, loc);
        json_object_set_new(r, "locations", locs);
    } else {
        json_decref(loc);
    }
    if (wv)
        json_object_set_new(r, "suppressions", json_pack("[{s:s, s:s}]", "kind", "external", "justification", wv->reason));
    json_t *props = json_object();
    json_object_set_new(props, "severity", json_string(cbt_severity_name(sev) ? cbt_severity_name(sev) : "?"));
    json_object_set_new(props, "finding", finding_json(o, h, cs, wv));
    json_object_set_new(r, "properties", props);
    return r;
}

static void print_one(struct cbt_findings *o, const struct held *h)
{
    struct cbt_callsite cs;
    cbt_callsite_lookup(cbt_agg_callsites(o->agg), h->w.host, h->w.vpid, h->f.caller, &cs);
    const struct cbt_rule_info *ri = cbt_rule(h->f.rule);
    struct cbt_waiver *wv = ri ? cbt_waivers_match(o->ws, ri->name, &cs) : NULL;
    if (wv) {
        unsigned sev = ri->severity;
        if (sev < 4)
            o->waived[sev]++;
    }
    if (o->fmt == CBT_CHECK_TEXT) {
        char caller[4096], prefix[600] = "";
        site_text(o, h, &cs, caller, sizeof(caller));
        if (wv)
            snprintf(prefix, sizeof(prefix), "# waived (%.500s): ", wv->reason);
        cbt_finding_text(o->out, o->agg, &h->w, &h->f, caller, prefix);
        return;
    }
    json_t *j = o->fmt == CBT_CHECK_JSON ? finding_json(o, h, &cs, wv) : result_sarif(o, h, &cs, wv);
    fputs(o->printed ? ",\n" : "\n", o->out);
    fputs(o->fmt == CBT_CHECK_JSON ? "    " : "        ", o->out);
    dump(o->out, j, 0);
    json_decref(j);
    o->printed++;
}

void cbt_findings_flush(struct cbt_findings *o)
{
    for (size_t i = 0; i < o->n; i++)
        print_one(o, &o->buf[i]);
    o->n = 0;
}

void cbt_findings_add(void *ctx, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    struct cbt_findings *o = ctx;
    struct held h = {*w, *f};
    h.w.procname = NULL;
    if (!o->buf) {
        print_one(o, &h);
        return;
    }
    if (o->n == HELD)
        cbt_findings_flush(o);
    o->buf[o->n++] = h;
}

uint64_t cbt_findings_waived_at_or_above(const struct cbt_findings *o, unsigned threshold)
{
    uint64_t n = 0;
    for (unsigned s = 0; s <= threshold && s < 4; s++)
        n += o->waived[s];
    return n;
}

uint64_t cbt_findings_waived(const struct cbt_findings *o) { return cbt_findings_waived_at_or_above(o, CBT_SEV_WARNING); }

static json_t *waivers_json(const struct cbt_waivers *ws)
{
    json_t *a = json_array();
    for (size_t i = 0; ws && i < ws->n; i++) {
        const struct cbt_waiver *w = &ws->w[i];
        json_t *j = json_pack("{s:s, s:s, s:I}", "rule", w->rule, "reason", w->reason, "matched", (json_int_t)w->matched);
        if (w->object)
            json_object_set_new(j, "object", json_string(w->object));
        if (w->function)
            json_object_set_new(j, "function", json_string(w->function));
        if (w->file)
            json_object_set_new(j, "file", json_string(w->file));
        json_array_append_new(a, j);
    }
    return a;
}

static json_t *totals_json(const struct cbt_check_totals *t)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:{s:I, s:I, s:I, s:b}, s:{s:I, s:I, s:I}, s:I}",
                     "findings", (json_int_t)t->findings, "error", (json_int_t)t->by_severity[0], "hazard",
                     (json_int_t)t->by_severity[1], "warning", (json_int_t)t->by_severity[2], "advice",
                     (json_int_t)t->by_severity[3], "waived",
                     (json_int_t)t->waived, "serious", (json_int_t)t->serious, "threshold",
                     cbt_severity_name(t->threshold), "discarded", "events", (json_int_t)t->lost_events, "packets",
                     (json_int_t)t->lost_packets, "uncounted", (json_int_t)t->lost_uncounted, "allowed",
                     t->allow_discarded, "not_validated", "malformed", (json_int_t)t->malformed, "incomplete",
                     (json_int_t)t->incomplete, "over_memory_cap", (json_int_t)t->given_up, "inline_disagreeing",
                     (json_int_t)t->disagreeing);
}

static void end_text(struct cbt_findings *o, const struct cbt_check_totals *t)
{
    FILE *out = o->out;
    bool lost = t->lost_events || t->lost_packets || t->lost_uncounted;
    if (lost)
        fprintf(out, "# the tracer discarded %" PRIu64 " events and %" PRIu64 " packets%s: findings may be missing%s\n",
                t->lost_events, t->lost_packets, t->lost_uncounted ? " (and more, uncounted)" : "",
                t->allow_discarded ? " (--allow-discarded)" : "");
    uint64_t unvalidated = t->malformed + t->incomplete + t->given_up;
    if (unvalidated)
        fprintf(out,
                "# batches not validated: %" PRIu64 " (%" PRIu64 " malformed, %" PRIu64 " incomplete, %" PRIu64
                " over the reader's memory cap): their findings are missing\n",
                unvalidated, t->malformed, t->incomplete, t->given_up);
    if (t->disagreeing)
        fprintf(out, "# inline findings that disagree with the reader's validator: %" PRIu64 "%s\n", t->disagreeing,
                t->exit_status == 3 ? " (exit status 3)" : "");
    for (size_t i = 0; o->ws && i < o->ws->n; i++) {
        const struct cbt_waiver *w = &o->ws->w[i];
        fprintf(out, "# waiver %zu (%s%s%s%s%s%s%s): %" PRIu64 " findings waived%s\n", i + 1, w->rule,
                w->object ? " object=" : "", w->object ? w->object : "", w->function ? " function=" : "",
                w->function ? w->function : "", w->file ? " file=" : "", w->file ? w->file : "", w->matched,
                w->matched ? "" : " (it matches nothing: remove it?)");
    }
    if (t->by_severity[3] || t->threshold == CBT_SEV_ADVICE)
        fprintf(out, "# %" PRIu64 " advice (not findings: the exit status counts them only with --fail-on advice)\n",
                t->by_severity[3]);
    fprintf(out,
            "# %" PRIu64 " findings: %" PRIu64 " error, %" PRIu64 " hazard, %" PRIu64 " warning; %" PRIu64
            " at or above %s%s",
            t->findings, t->by_severity[0], t->by_severity[1], t->by_severity[2], t->serious,
            cbt_severity_name(t->threshold), o->ws ? "" : "\n");
    if (o->ws)
        fprintf(out, " and not waived; %" PRIu64 " waived\n", t->waived);
}

void cbt_findings_end(struct cbt_findings *o, const struct cbt_check_totals *t)
{
    cbt_findings_flush(o);
    if (o->fmt == CBT_CHECK_TEXT) {
        end_text(o, t);
        return;
    }
    json_t *totals = totals_json(t);
    if (o->fmt == CBT_CHECK_JSON) {
        fputs(o->printed ? "\n  ],\n  \"totals\": " : "],\n  \"totals\": ", o->out);
        dump(o->out, totals, 2);
        json_t *ws = waivers_json(o->ws);
        fputs(",\n  \"waivers\": ", o->out);
        dump(o->out, ws, 2);
        json_decref(ws);
        fprintf(o->out, ",\n  \"exit_status\": %d\n}\n", t->exit_status);
    } else {
        fputs(o->printed ? "\n      ],\n      \"invocations\": [" : "],\n      \"invocations\": [", o->out);
        json_t *inv = json_pack("{s:b, s:i, s:{s:o, s:o}}", "executionSuccessful", t->exit_status != 2, "exitCode",
                                t->exit_status, "properties", "totals", json_incref(totals), "waivers",
                                waivers_json(o->ws));
        dump(o->out, inv, 2);
        json_decref(inv);
        fputs("]\n    }\n  ]\n}\n", o->out);
    }
    json_decref(totals);
}

void cbt_findings_free(struct cbt_findings *o)
{
    if (!o)
        return;
    free(o->buf);
    free(o->root);
    free(o);
}
