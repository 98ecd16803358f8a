/* SPDX-License-Identifier: MIT */
/*
 * The advisor (advice.h): the advice rules over the ops and batches the
 * aggregate hands it, with their estimated savings.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "analyse/advice.h"
#include "analyse/classes.h"
#include "analyse/ktab.h"
#include "base/util.h"

struct cbt_advice_settings cbt_advice_set = {
    .run_calls = 8,
    .run_copies = 4,
    .run_gap_ns = 100000,
    .tiny_bytes = 4096,
    .tiny_copies = 64,
    .huge_copies = 16384,
    .overlap_bytes = 128 * 1024,
    .same_device_bytes = 1024 * 1024,
    .pageable_bytes = 1024 * 1024,
    .low_bw_bytes = 1024 * 1024,
    .low_bw_percent = 50,
};
struct cbt_cost_table cbt_advice_table;

/* ---------------------------------------------------------------- settings */

int cbt_advice_option(const char *arg)
{
    if (strcmp(arg, "off") == 0) {
        cbt_advice_set.off = true;
        return 0;
    }
    static const struct {
        const char *name;
        size_t at;
        bool size;     /* bytes, with the suffixes of cbt_parse_size */
        uint64_t unit; /* a number times this */
    } keys[] = {
        {"run_calls", offsetof(struct cbt_advice_settings, run_calls), false, 1},
        {"run_copies", offsetof(struct cbt_advice_settings, run_copies), false, 1},
        {"run_gap_us", offsetof(struct cbt_advice_settings, run_gap_ns), false, 1000},
        {"tiny_bytes", offsetof(struct cbt_advice_settings, tiny_bytes), true, 1},
        {"tiny_copies", offsetof(struct cbt_advice_settings, tiny_copies), false, 1},
        {"huge_copies", offsetof(struct cbt_advice_settings, huge_copies), false, 1},
        {"overlap_bytes", offsetof(struct cbt_advice_settings, overlap_bytes), true, 1},
        {"same_device_bytes", offsetof(struct cbt_advice_settings, same_device_bytes), true, 1},
        {"pageable_bytes", offsetof(struct cbt_advice_settings, pageable_bytes), true, 1},
        {"low_bandwidth_bytes", offsetof(struct cbt_advice_settings, low_bw_bytes), true, 1},
        {"low_bandwidth_percent", offsetof(struct cbt_advice_settings, low_bw_percent), false, 1},
    };
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        if (strlen(keys[k].name) != n || strncmp(keys[k].name, arg, n) != 0)
            continue;
        uint64_t v;
        char *end;
        if (!eq || !eq[1]) {
            cbt_usage_error("--advice %s: expected %s=VALUE", arg, keys[k].name);
            return -1;
        }
        if (keys[k].size) {
            if (cbt_parse_size(eq + 1, &v) != 0 || v == 0) {
                cbt_usage_error("--advice %s: expected a size in bytes above 0 (suffixes k, M, G)", arg);
                return -1;
            }
        } else {
            errno = 0;
            v = strtoull(eq + 1, &end, 10);
            if (errno || *end || !isdigit((unsigned char)eq[1]) || v == 0 || v > UINT64_MAX / keys[k].unit) {
                cbt_usage_error("--advice %s: expected a whole number above 0", arg);
                return -1;
            }
            v *= keys[k].unit;
        }
        if (keys[k].at == offsetof(struct cbt_advice_settings, low_bw_percent) && v > 100) {
            cbt_usage_error("--advice %s: expected a percentage from 1 to 100", arg);
            return -1;
        }
        *(uint64_t *)((char *)&cbt_advice_set + keys[k].at) = v;
        return 0;
    }
    cbt_usage_error("--advice %s: expected off or one of run_calls, run_copies, run_gap_us, tiny_bytes, "
                    "tiny_copies, huge_copies, overlap_bytes, same_device_bytes, pageable_bytes, low_bandwidth_bytes, "
                    "low_bandwidth_percent =VALUE",
                    arg);
    return -1;
}

/* ---------------------------------------------------------------- the cost table */

int cbt_advice_costs(const char *path)
{
    struct cbt_cost_table t = {.loaded = true};
    FILE *f = fopen(path, "r");
    if (!f) {
        cbt_err("--advice-costs %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(t.path, sizeof t.path, "%s", path);
    static const struct {
        const char *key;
        size_t at;
    } ns[] = {
        {"batch_call_ns", offsetof(struct cbt_cost_table, call_ns)},
        {"batch_copy_ns", offsetof(struct cbt_cost_table, copy_ns)},
    };
    static const struct {
        const char *key;
        size_t at;
    } gibps[] = {
        {"batch_h2d_gibps", offsetof(struct cbt_cost_table, h2d)},
        {"batch_h2d_overlap_gibps", offsetof(struct cbt_cost_table, h2d_overlap)},
        {"batch_d2h_gibps", offsetof(struct cbt_cost_table, d2h)},
        {"batch_d2h_overlap_gibps", offsetof(struct cbt_cost_table, d2h_overlap)},
        {"batch_d2d_gibps", offsetof(struct cbt_cost_table, d2d)},
        {"batch_d2d_overlap_gibps", offsetof(struct cbt_cost_table, d2d_overlap)},
        {"batch_h2d_pageable_gibps", offsetof(struct cbt_cost_table, h2d_pageable)},
        {"sm_d2d_gibps", offsetof(struct cbt_cost_table, sm_d2d)},
    };
    char line[1024];
    unsigned lineno = 0, figures = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line, *e = line + strlen(line);
        while (e > p && isspace((unsigned char)e[-1]))
            *--e = 0;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        char *eq = strchr(p, '=');
        if (!eq) {
            cbt_err("--advice-costs %s: line %u: expected KEY=VALUE", path, lineno);
            rc = -1;
            break;
        }
        *eq = 0;
        const char *v = eq + 1;
        if (strcmp(p, "gpu") == 0) {
            snprintf(t.gpu, sizeof t.gpu, "%s", v);
            continue;
        }
        if (strcmp(p, "driver") == 0) {
            snprintf(t.driver, sizeof t.driver, "%s", v);
            continue;
        }
        if (strcmp(p, "measured") == 0) {
            snprintf(t.measured, sizeof t.measured, "%s", v);
            continue;
        }
        size_t t_ns = 0;
        while (t_ns < sizeof ns / sizeof *ns && strcmp(ns[t_ns].key, p) != 0)
            t_ns++;
        if (t_ns < sizeof ns / sizeof *ns) {
            char *end;
            double x = strtod(v, &end);
            if (end == v || *end || !(x > 0 && x < 1e12)) {
                cbt_err("--advice-costs %s: line %u: %s is not a time in ns", path, lineno, p);
                rc = -1;
                break;
            }
            *(double *)((char *)&t + ns[t_ns].at) = x;
            figures++;
            continue;
        }
        size_t k = 0;
        while (k < sizeof gibps / sizeof *gibps && strcmp(gibps[k].key, p) != 0)
            k++;
        if (k == sizeof gibps / sizeof *gibps)
            continue; /* a figure this version does not use (the table may say more) */
        char *end;
        double g = strtod(v, &end);
        if (end == v || *end || !(g > 0 && g < 1e6)) {
            cbt_err("--advice-costs %s: line %u: %s is not a bandwidth in GiB/s", path, lineno, p);
            rc = -1;
            break;
        }
        *(double *)((char *)&t + gibps[k].at) = g;
        figures++;
    }
    fclose(f);
    if (rc == 0 && (!t.gpu[0] || !t.driver[0])) {
        cbt_err("--advice-costs %s: the table does not say its GPU and driver (gpu=, driver=)", path);
        rc = -1;
    } else if (rc == 0 && !figures) {
        cbt_err("--advice-costs %s: no figure the advice uses", path);
        rc = -1;
    }
    if (rc == 0)
        cbt_advice_table = t;
    return rc;
}

const char *cbt_advice_table_say(char *buf, size_t len)
{
    const struct cbt_cost_table *t = &cbt_advice_table;
    if (!t->loaded)
        snprintf(buf, len, "none: no measured cost table (--advice-costs FILE, made by bench/advice-costs.sh)");
    else
        snprintf(buf, len, "%s (%s, driver %s%s%s)", t->path, t->gpu, t->driver, t->measured[0] ? ", measured " : "",
                 t->measured);
    return buf;
}

/* ns to move `bytes` at g GiB/s; 0 when g is not known */
static double ns_at(uint64_t bytes, double g) { return g > 0 ? (double)bytes / (g * 1073741824.0) * 1e9 : 0; }

/* What moving `bytes` at `slow` rather than `fast` GiB/s costs: the saving of
 * the change, never negative; kind TABLE, or NO_TABLE when a figure lacks. */
static void table_saving(struct cbt_batch_finding *f, uint64_t bytes, double slow, double fast)
{
    if (!(slow > 0 && fast > 0)) {
        f->saving = CBT_SAVING_NO_TABLE;
        return;
    }
    double d = ns_at(bytes, slow) - ns_at(bytes, fast);
    f->saving = CBT_SAVING_TABLE;
    f->saving_ns += d > 0 ? (uint64_t)(d + 0.5) : 0;
}

/* ---------------------------------------------------------------- per op */

void cbt_advice_op(struct cbt_advice_batch *b, const struct cbt_ops *o, uint32_t i)
{
    const struct cbt_advice_settings *s = &cbt_advice_set;
    const uint64_t by = o->bytes[i], at = o->first + i;
    const int sc = cbt_mem_class(o->src_mem[i], o->src_type[i]), dc = cbt_mem_class(o->dst_mem[i], o->dst_type[i]);
    if (by && by < s->tiny_bytes) /* 0: an array copy of an unknown element size */
        b->tiny++;
    if (o->order[i] == CBT_ORDER_ANY) {
        if (sc == 'D' && !b->any_dev++)
            b->any_dev_first = at;
        else if (sc == 'H' && !b->any_host++)
            b->any_host_first = at;
    }
    if (o->src_mem[i] == CBT_MEM_HOST_PAGEABLE) {
        if (!b->pageable_bytes)
            b->pageable_first = at;
        b->pageable_bytes += by;
    }
    const int dir = sc == 'H' && dc == 'D' ? 0 : sc == 'D' && dc == 'H' ? 1 : sc == 'D' && dc == 'D' ? 2 : -1;
    if ((o->flags[i] & CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) && by > s->overlap_bytes && dir >= 0) {
        if (!b->overlap++)
            b->overlap_first = at;
        b->overlap_bytes[dir] += by;
    }
    /* one GPU: both sides on the same known device, plain device memory (managed memory may migrate) */
    if (o->src_mem[i] == CBT_MEM_DEVICE && o->dst_mem[i] == CBT_MEM_DEVICE && o->src_dev[i] >= 0 &&
        o->src_dev[i] == o->dst_dev[i] && by >= s->same_device_bytes) {
        if (!b->same_dev++)
            b->same_dev_first = at;
        b->same_dev_bytes += by;
    }
}

/* ---------------------------------------------------------------- runs */

/* A run of small batches on one thread and stream, still open. */
struct run {
    uint64_t k[4]; /* host, process image key, vtid, stream */
    bool used;
    uint64_t calls, ops, host_ns, min_ns, max_ops;
    int64_t last_ts;
    struct cbt_where w;  /* the first batch's */
    struct cbt_batch b0; /* the first batch (its id, caller, stack) */
};

#define RUNS_MAX (1u << 14) /* open runs followed at once; more threads x streams go unadvised */

/* The call sites of the latest batches, for their GPU times (which come a
 * little after them): direct-mapped, a later batch takes the slot. */
#define SITES 4096
struct site {
    uint64_t k[3]; /* host, process image key, batch id */
    uint64_t caller;
    bool used;
};

struct cbt_advisor {
    struct run *runs;
    size_t cap, n;
    struct site *sites; /* SITES, made with the first batch */
    uint64_t gpu_unjudged;
};

struct cbt_advisor *cbt_advisor_new(void) { return calloc(1, sizeof(struct cbt_advisor)); }

void cbt_advisor_free(struct cbt_advisor *v)
{
    if (!v)
        return;
    free(v->runs);
    free(v->sites);
    free(v);
}

static size_t run_hash(const uint64_t k[4], size_t cap)
{
    uint64_t m[3] = {k[0] ^ (k[3] * 0x9e3779b97f4a7c15ull), k[1], k[2]};
    return cbt_mix3(m) & (cap - 1);
}

/* The run of key k: found, or a free slot (used false); NULL when full. */
static struct run *run_slot(struct cbt_advisor *v, const uint64_t k[4])
{
    if ((v->n + 1) * 2 > v->cap) {
        if (v->cap >= RUNS_MAX)
            goto probe;
        size_t cap = v->cap ? v->cap * 2 : 64;
        struct run *n = calloc(cap, sizeof(*n));
        if (!n)
            goto probe;
        for (size_t i = 0; i < v->cap; i++) {
            if (!v->runs[i].used)
                continue;
            size_t j = run_hash(v->runs[i].k, cap);
            while (n[j].used)
                j = (j + 1) & (cap - 1);
            n[j] = v->runs[i];
        }
        free(v->runs);
        v->runs = n;
        v->cap = cap;
    }
probe:
    if (!v->cap)
        return NULL;
    size_t j = run_hash(k, v->cap);
    for (size_t tries = 0; tries < v->cap; tries++, j = (j + 1) & (v->cap - 1)) {
        struct run *r = &v->runs[j];
        if (!r->used)
            return (v->n + 1) * 4 > v->cap * 3 ? NULL : r; /* full: new keys go unfollowed */
        if (!memcmp(r->k, k, sizeof r->k))
            return r;
    }
    return NULL;
}

static void finding_of(struct cbt_advice *a, const struct cbt_where *w, const struct cbt_batch *b, unsigned rule)
{
    memset(a, 0, sizeof *a);
    a->w = *w;
    a->w.procname = NULL;
    a->f.batch_id = b->batch_id;
    a->f.caller = b->caller;
    a->f.nstack = b->nstack;
    memcpy(a->f.stack, b->stack, sizeof a->f.stack);
    a->f.rule = (uint16_t)rule;
    a->f.severity = CBT_SEV_ADVICE;
    a->f.side = CBT_SIDE_NONE;
    a->f.op = a->f.other_op = CBT_NO_OP;
    a->f.copies = cbt_api_is_1d(b->api);
}

/* The advice of a run that ended, if it is long enough: 1 or 0 written.
 * Its saving: each call pays a part of its host time once, whatever its
 * copies; one batch would pay it once.  A call's host time also grows with
 * its copies (the cost table's batch_copy_ns), which one batch still pays,
 * so the cheapest call of the run only bounds that part from above:
 * (calls - 1) x the cost table's batch_call_ns where there is one (never more
 * than the bound), else the bound, (calls - 1) x the cheapest call, said as
 * "at most". */
static size_t run_end(struct run *r, struct cbt_advice *out)
{
    size_t n = 0;
    if (r->calls >= cbt_advice_set.run_calls) {
        finding_of(out, &r->w, &r->b0, CBT_RULE_unbatched_run);
        out->f.value = r->calls;
        out->f.limit = r->max_ops;
        const uint64_t bound = (r->calls - 1) * r->min_ns;
        const double call = cbt_advice_table.loaded ? cbt_advice_table.call_ns : 0;
        if (call > 0) {
            const double est = (double)(r->calls - 1) * call;
            out->f.saving = CBT_SAVING_TABLE_HOST;
            out->f.saving_ns = est < (double)bound ? (uint64_t)(est + 0.5) : bound;
        } else {
            out->f.saving = CBT_SAVING_BOUND;
            out->f.saving_ns = bound;
        }
        out->f.spent_ns = r->host_ns;
        n = 1;
    }
    r->calls = 0;
    return n;
}

/* The run the batch continues, starts or ends: 1 or 0 advice written. */
static size_t run_step(struct cbt_advisor *v, const struct cbt_where *w, const struct cbt_batch *b,
                       struct cbt_advice *out)
{
    if (!w->has_ts)
        return 0;
    const uint64_t k[4] = {w->host, cbt_where_pkey(w), (uint64_t)w->vtid, b->stream};
    struct run *r = run_slot(v, k);
    if (!r)
        return 0;
    if (!r->used) {
        memset(r, 0, sizeof *r);
        memcpy(r->k, k, sizeof k);
        r->used = true;
        v->n++;
    }
    const bool small = b->outcome == CBT_OUTCOME_FORWARDED && b->result == CBT_CU_SUCCESS && b->num_ops >= 1 &&
                       b->num_ops <= cbt_advice_set.run_copies;
    size_t n = 0;
    if (r->calls && (!small || w->ts_ns < r->last_ts || (uint64_t)(w->ts_ns - r->last_ts) > cbt_advice_set.run_gap_ns))
        n = run_end(r, out);
    if (!small)
        return n;
    if (!r->calls) {
        r->w = *w;
        r->w.procname = NULL;
        r->b0 = *b;
        r->ops = r->host_ns = r->max_ops = 0;
        r->min_ns = UINT64_MAX;
    }
    r->calls++;
    r->ops += b->num_ops;
    r->host_ns += b->driver_ns;
    r->min_ns = b->driver_ns < r->min_ns ? b->driver_ns : r->min_ns;
    r->max_ops = b->num_ops > r->max_ops ? b->num_ops : r->max_ops;
    r->last_ts = w->ts_ns;
    return n;
}

void cbt_advice_flush(struct cbt_advisor *v, void (*fn)(void *ctx, const struct cbt_advice *a), void *ctx)
{
    for (size_t i = 0; i < v->cap; i++) {
        struct cbt_advice a;
        if (v->runs[i].used && run_end(&v->runs[i], &a))
            fn(ctx, &a);
    }
}

/* ---------------------------------------------------------------- per batch */

size_t cbt_advice_batch(struct cbt_advisor *v, const struct cbt_where *w, const struct cbt_batch *b,
                        const struct cbt_advice_batch *ab, uint64_t ops_seen, struct cbt_advice *out)
{
    const struct cbt_advice_settings *s = &cbt_advice_set;
    const struct cbt_cost_table *t = &cbt_advice_table;
    if (s->off)
        return 0;
    if (!v->sites)
        v->sites = calloc(SITES, sizeof *v->sites);
    if (v->sites) {
        const uint64_t k[3] = {w->host, cbt_where_pkey(w), b->batch_id};
        struct site *st = &v->sites[cbt_mix3(k) & (SITES - 1)];
        memcpy(st->k, k, sizeof k);
        st->caller = b->caller;
        st->used = true;
    }
    size_t n = run_step(v, w, b, out);
    if (ab->tiny >= s->tiny_copies) {
        /* packed into one copy, the tiny ones cost the driver one copy's
         * share of the batch's host time instead of theirs */
        finding_of(&out[n], w, b, CBT_RULE_tiny_copies);
        out[n].f.value = ab->tiny;
        out[n].f.limit = s->tiny_bytes;
        out[n].f.saving = CBT_SAVING_TRACE;
        out[n].f.saving_ns = ops_seen ? b->driver_ns * (ab->tiny - 1) / ops_seen : 0;
        n++;
    }
    if (b->num_ops > s->huge_copies) {
        finding_of(&out[n], w, b, CBT_RULE_huge_batch);
        out[n].f.value = b->num_ops;
        out[n].f.limit = s->huge_copies;
        out[n].f.saving = CBT_SAVING_RISK;
        n++;
    }
    if (ab->overlap) {
        finding_of(&out[n], w, b, CBT_RULE_overlap_flag_large_copy);
        out[n].f.op = ab->overlap_first;
        out[n].f.value = ab->overlap;
        out[n].f.limit = s->overlap_bytes;
        /* per direction; unknown as a whole when a direction's figures lack */
        const double slow[3] = {t->h2d_overlap, t->d2h_overlap, t->d2d_overlap}, fast[3] = {t->h2d, t->d2h, t->d2d};
        struct cbt_batch_finding sum = {.saving = CBT_SAVING_TABLE};
        for (int d = 0; d < 3 && sum.saving == CBT_SAVING_TABLE; d++)
            if (ab->overlap_bytes[d])
                table_saving(&sum, ab->overlap_bytes[d], slow[d], fast[d]);
        out[n].f.saving = sum.saving;
        out[n].f.saving_ns = sum.saving == CBT_SAVING_TABLE ? sum.saving_ns : 0;
        n++;
    }
    if (ab->any_dev) {
        finding_of(&out[n], w, b, CBT_RULE_any_order_device_source);
        out[n].f.op = ab->any_dev_first;
        out[n].f.side = CBT_SIDE_SRC;
        out[n].f.value = ab->any_dev;
        out[n].f.saving = CBT_SAVING_RISK;
        n++;
    }
    if (ab->any_host) {
        finding_of(&out[n], w, b, CBT_RULE_deferred_host_source);
        out[n].f.op = ab->any_host_first;
        out[n].f.side = CBT_SIDE_SRC;
        out[n].f.value = ab->any_host;
        out[n].f.saving = CBT_SAVING_RISK;
        n++;
    }
    if (ab->pageable_bytes && ab->pageable_bytes >= s->pageable_bytes) {
        finding_of(&out[n], w, b, CBT_RULE_pageable_source);
        out[n].f.op = ab->pageable_first;
        out[n].f.value = ab->pageable_bytes;
        out[n].f.limit = s->pageable_bytes;
        table_saving(&out[n].f, ab->pageable_bytes, t->h2d_pageable, t->h2d);
        n++;
    }
    if (ab->same_dev) {
        finding_of(&out[n], w, b, CBT_RULE_same_device_engine_copy);
        out[n].f.op = ab->same_dev_first;
        out[n].f.value = ab->same_dev;
        out[n].f.limit = s->same_device_bytes;
        table_saving(&out[n].f, ab->same_dev_bytes, t->d2d, t->sm_d2d);
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- GPU time */

size_t cbt_advice_gpu(struct cbt_advisor *v, const struct cbt_where *w, const struct cbt_ev_gpu *g,
                      struct cbt_advice *out)
{
    const struct cbt_advice_settings *s = &cbt_advice_set;
    const struct cbt_cost_table *t = &cbt_advice_table;
    if (s->off || g->status != CBT_GPU_TIMED || !g->gpu_ns || g->bytes < s->low_bw_bytes)
        return 0;
    /* the table's figure for the batch's direction and source memory */
    const int sc = cbt_mem_class(g->src_kind, 0), dc = cbt_mem_class(g->dst_kind, 0);
    double peak;
    if (sc == 'H' && dc == 'D')
        peak = g->src_kind == CBT_MEM_HOST_PAGEABLE ? t->h2d_pageable : t->h2d;
    else if (sc == 'D' && dc == 'H')
        peak = t->d2h;
    else if (sc == 'D' && dc == 'D' && g->src_device >= 0 && g->src_device == g->dst_device)
        peak = t->d2d;
    else
        return 0; /* mixed, arrays, peers: no figure to hold it against */
    if (!(peak > 0)) {
        v->gpu_unjudged++;
        return 0;
    }
    const double gibps = (double)g->bytes / (double)g->gpu_ns * 1e9 / 1073741824.0;
    if (gibps * 100 >= peak * (double)s->low_bw_percent)
        return 0;
    struct cbt_batch b = {.batch_id = g->batch_id, .api = g->api, .stream = g->stream};
    if (v->sites) {
        const uint64_t k[3] = {w->host, cbt_where_pkey(w), g->batch_id};
        const struct site *st = &v->sites[cbt_mix3(k) & (SITES - 1)];
        if (st->used && !memcmp(st->k, k, sizeof k))
            b.caller = st->caller;
    }
    struct cbt_where bw = *w;
    bw.vtid = g->tid; /* the batch's thread, not the event's */
    finding_of(out, &bw, &b, CBT_RULE_low_bandwidth);
    out->f.value = (uint64_t)(gibps * 1024);
    out->f.limit = (uint64_t)(peak * 1024);
    const double at_peak = ns_at(g->bytes, peak);
    out->f.saving = CBT_SAVING_TABLE;
    out->f.saving_ns = (double)g->gpu_ns > at_peak ? (uint64_t)((double)g->gpu_ns - at_peak + 0.5) : 0;
    return 1;
}

uint64_t cbt_advice_gpu_unjudged(const struct cbt_advisor *v) { return v->gpu_unjudged; }

/* ---------------------------------------------------------------- words */

const char *cbt_advice_saving_say(uint8_t saving, uint64_t ns, char *buf, size_t len)
{
    return cbt_advice_savings_say(1u << saving, ns, buf, len);
}

const char *cbt_advice_savings_say(unsigned kinds, uint64_t ns, char *buf, size_t len)
{
    char t[32];
    const bool trace = kinds & (1u << CBT_SAVING_TRACE), table = kinds & (1u << CBT_SAVING_TABLE);
    const bool none = kinds & (1u << CBT_SAVING_NO_TABLE);
    if (trace)
        snprintf(buf, len, "%s of host time, measured in the trace", cbt_fmt_ns((double)ns, t, sizeof t));
    else if (kinds & (1u << CBT_SAVING_BOUND))
        snprintf(buf, len, "at most %s of host time, bounded by the trace (a cost table says how much)",
                 cbt_fmt_ns((double)ns, t, sizeof t));
    else if (kinds & (1u << CBT_SAVING_TABLE_HOST))
        snprintf(buf, len, "%s of host time, from the cost table (what a call pays once)",
                 cbt_fmt_ns((double)ns, t, sizeof t));
    else if (table && none)
        snprintf(buf, len, "at least %s of GPU time, from the cost table (no figure for the rest)",
                 cbt_fmt_ns((double)ns, t, sizeof t));
    else if (table)
        snprintf(buf, len, "%s of GPU time, from the cost table", cbt_fmt_ns((double)ns, t, sizeof t));
    else if (none)
        snprintf(buf, len, "unknown: no measured cost table");
    else
        snprintf(buf, len, "none: a risk, not a cost");
    return buf;
}
