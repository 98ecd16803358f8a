/* SPDX-License-Identifier: MIT */
/*
 * The job view of a summary: one row per host and one per process image
 * (host, pid, the image's number when the pid had several, procname and,
 * when the shim recorded it, the job rank), for traces of many processes on
 * many hosts (a relay daemon's output tree) and of processes that exec or
 * share a pid (containers, reused pids).  Both outputs print these rows
 * (text.c, json.c); they are sorted by host name, rank, pid and image
 * number, so the order does not depend on the order of reading.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyse/agg_internal.h"
#include "analyse/hosts.h"
#include "base/util.h"

struct prow {
    const struct kent *e;
    const char *host;
};

struct hrow {
    const char *host;
    struct row row;
    uint64_t procs, ranked;
};

static const char *const rank_var_names[] = {"", "", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "other"};

static bool has_rank(const struct kent *e) { return e->rank_var >= RV_OMPI && e->rank >= 0; }

static bool active(const struct kent *e) { return e->row.batches || e->row.ops; }

static int cmp_prow(const void *x, const void *y)
{
    const struct prow *a = x, *b = y;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    bool ra = has_rank(a->e), rb = has_rank(b->e);
    if (ra != rb)
        return ra ? -1 : 1;
    if (ra && a->e->rank != b->e->rank)
        return a->e->rank < b->e->rank ? -1 : 1;
    int64_t pa = cbt_pkey_vpid(a->e->k[1]), pb = cbt_pkey_vpid(b->e->k[1]);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return (a->e->img_no > b->e->img_no) - (a->e->img_no < b->e->img_no);
}

/* Whether some (host, pid) had several process images. */
static bool several_images(const struct cbt_agg *a)
{
    for (size_t i = 0; i < a->procs.n; i++)
        if (a->procs.ents[i].img_count > 1)
            return true;
    return false;
}

static int cmp_hrow(const void *x, const void *y) { return strcmp(((const struct hrow *)x)->host, ((const struct hrow *)y)->host); }

bool cbt_hosts_shown(const struct cbt_agg *a)
{
    if (a->by & CBT_BY_HOST || a->nhosts > 1 || several_images(a))
        return true;
    for (size_t i = 0; i < a->procs.n; i++)
        if (has_rank(&a->procs.ents[i]) && active(&a->procs.ents[i]))
            return true;
    return false;
}

/* The active processes sorted, and the hosts they ran on sorted; NULL when out of memory. */
static struct prow *build(const struct cbt_agg *a, size_t *np, struct hrow **hosts, size_t *nh)
{
    struct prow *p = calloc(a->procs.n + 1, sizeof(*p));
    struct hrow *h = calloc(a->nhosts + 1, sizeof(*h));
    if (!p || !h) {
        free(p);
        free(h);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < a->procs.n; i++) {
        const struct kent *e = &a->procs.ents[i];
        if (!active(e))
            continue;
        p[n].e = e;
        p[n].host = cbt_agg_host_name(a, (uint32_t)e->k[0]);
        n++;
        uint32_t k = (uint32_t)e->k[0] < a->nhosts ? (uint32_t)e->k[0] : a->nhosts;
        struct hrow *r = &h[k];
        r->host = k < a->nhosts ? a->hosts[k] : "?";
        r->procs++;
        r->ranked += has_rank(e);
        r->row.batches += e->row.batches;
        r->row.ops += e->row.ops;
        r->row.bytes += e->row.bytes;
    }
    qsort(p, n, sizeof(*p), cmp_prow);
    size_t m = 0;
    for (size_t k = 0; k <= a->nhosts; k++)
        if (h[k].procs)
            h[m++] = h[k];
    qsort(h, m, sizeof(*h), cmp_hrow);
    *np = n;
    *hosts = h;
    *nh = m;
    return p;
}

static void fmt_rank(char *b, size_t l, const struct kent *e)
{
    if (has_rank(e))
        snprintf(b, l, "%" PRId64, e->rank);
    else
        snprintf(b, l, "-");
}

/* Host time in the driver per batch: raw in us with 3 decimals, else in human units. */
static void fmt_time(char *b, size_t l, const struct row *r, int which, bool raw)
{
    if (!r->n) {
        snprintf(b, l, "-");
        return;
    }
    double v = which == 0 ? (double)r->sum / (double)r->n : which == 1 ? (double)r->min : (double)r->max;
    if (raw)
        snprintf(b, l, "%.3f", v / 1000.0);
    else
        cbt_fmt_ns(v, b, l);
}

static void fmt_bytes(char *b, size_t l, uint64_t v, bool raw)
{
    if (raw)
        snprintf(b, l, "%" PRIu64, v);
    else
        cbt_fmt_bytes(v, b, l);
}

/* A table of text cells: widths from the cells, the first `left` columns left-aligned. */
static void print_cells(FILE *out, const char *const *head, int nc, int left, char (*cells)[12][64], size_t n)
{
    size_t w[12];
    for (int c = 0; c < nc; c++) {
        w[c] = cbt_text_width(head[c]);
        for (size_t i = 0; i < n; i++)
            if (cbt_text_width(cells[i][c]) > w[c])
                w[c] = cbt_text_width(cells[i][c]);
    }
    for (int c = 0; c < nc; c++) {
        fputs(c ? " | " : "", out);
        cbt_print_cell(out, head[c], w[c], c < left);
    }
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < nc; c++) {
            fputs(c ? " | " : "", out);
            cbt_print_cell(out, cells[i][c], w[c], c < left);
        }
        fputc('\n', out);
    }
    if (!n)
        fprintf(out, "(none)\n");
}

void cbt_hosts_print_text(const struct cbt_agg *a, FILE *out, bool raw)
{
    size_t np, nh;
    struct hrow *h;
    struct prow *p = build(a, &np, &h, &nh);
    if (!p)
        return;
    char (*cells)[12][64] = calloc((np > nh ? np : nh) + 1, sizeof(*cells));
    if (!cells) {
        free(p);
        free(h);
        return;
    }
    static const char *const hh[] = {"Host", "Processes", "Ranks", "Batches", "Ops", "Bytes"};
    for (size_t i = 0; i < nh; i++) {
        snprintf(cells[i][0], 64, "%s", h[i].host);
        snprintf(cells[i][1], 64, "%" PRIu64, h[i].procs);
        snprintf(cells[i][2], 64, "%" PRIu64, h[i].ranked);
        snprintf(cells[i][3], 64, "%" PRIu64, h[i].row.batches);
        snprintf(cells[i][4], 64, "%" PRIu64, h[i].row.ops);
        fmt_bytes(cells[i][5], 64, h[i].row.bytes, raw);
    }
    fprintf(out, "\n# Batches by host (the hostname each host's session daemon recorded in its traces)\n");
    fprintf(out, "# Processes: those with batches; Ranks: those of them whose rank the shim recorded\n");
    print_cells(out, hh, 6, 1, cells, nh);
    if (a->procs.overflowed)
        fprintf(out, "# (process table full: %" PRIu64 " more processes counted in the totals only)\n",
                a->procs.overflowed);

    /* with Image and Pid ns when a pid had several process images */
    bool img = several_images(a);
    static const char *const ph[] = {"Host", "Pid", "Rank", "Procname", "Batches", "Ops", "Bytes", "Avg", "Min", "Max"};
    static const char *const phi[] = {"Host", "Pid", "Image", "Pid ns", "Rank", "Procname", "Batches", "Ops", "Bytes",
                                      "Avg", "Min", "Max"};
    for (size_t i = 0; i < np; i++) {
        const struct kent *e = p[i].e;
        int c = 0;
        snprintf(cells[i][c++], 64, "%s", p[i].host);
        snprintf(cells[i][c++], 64, "%" PRId64, cbt_pkey_vpid(e->k[1]));
        if (img) {
            if (e->img_count > 1)
                snprintf(cells[i][c++], 64, "%" PRIu32 "/%" PRIu32, e->img_no, e->img_count);
            else
                snprintf(cells[i][c++], 64, "-");
            if (e->pid_ns)
                snprintf(cells[i][c++], 64, "%" PRIu64, e->pid_ns);
            else
                snprintf(cells[i][c++], 64, "-");
        }
        fmt_rank(cells[i][c++], 64, e);
        snprintf(cells[i][c++], 64, "%s", e->label ? e->label : "");
        snprintf(cells[i][c++], 64, "%" PRIu64, e->row.batches);
        snprintf(cells[i][c++], 64, "%" PRIu64, e->row.ops);
        fmt_bytes(cells[i][c++], 64, e->row.bytes, raw);
        fmt_time(cells[i][c++], 64, &e->row, 0, raw);
        fmt_time(cells[i][c++], 64, &e->row, 1, raw);
        fmt_time(cells[i][c++], 64, &e->row, 2, raw);
    }
    fprintf(out, "\n# Batches by process (Rank: OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID of the process; -: none)\n");
    if (img)
        fprintf(out, "# Image: K/N, the Kth of the N process images of this pid (exec, pid namespaces, a reused pid), "
                     "by start time; Pid ns: its pid namespace (inode)\n");
    fprintf(out, "# Avg/Min/Max: host time in the driver per batch%s\n", raw ? " (us)" : "");
    if (img)
        print_cells(out, phi, 12, 6, cells, np);
    else
        print_cells(out, ph, 10, 4, cells, np);
    free(cells);
    free(p);
    free(h);
}

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

json_t *cbt_hosts_image_json(const struct cbt_agg *a, uint32_t host, uint64_t pkey)
{
    const struct kent *e = cbt_pkey_image(pkey) ? cbt_agg_proc(a, host, pkey) : NULL;
    return e && e->img_no ? jint(e->img_no) : json_null();
}

void cbt_hosts_json(const struct cbt_agg *a, json_t *root)
{
    size_t np, nh;
    struct hrow *h;
    struct prow *p = build(a, &np, &h, &nh);
    if (!p)
        return;
    json_t *ha = json_array(), *pa = json_array();
    for (size_t i = 0; i < nh; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(h[i].host));
        json_object_set_new(o, "processes", jint(h[i].procs));
        json_object_set_new(o, "ranks", jint(h[i].ranked));
        json_object_set_new(o, "batches", jint(h[i].row.batches));
        json_object_set_new(o, "ops", jint(h[i].row.ops));
        json_object_set_new(o, "bytes", jint(h[i].row.bytes));
        json_array_append_new(ha, o);
    }
    for (size_t i = 0; i < np; i++) {
        const struct kent *e = p[i].e;
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(p[i].host));
        json_object_set_new(o, "pid", json_integer((json_int_t)cbt_pkey_vpid(e->k[1])));
        json_object_set_new(o, "image", e->img_no && cbt_pkey_image(e->k[1]) ? jint(e->img_no) : json_null());
        json_object_set_new(o, "images_of_pid", e->img_count && cbt_pkey_image(e->k[1]) ? jint(e->img_count) : json_null());
        json_object_set_new(o, "pid_ns", e->pid_ns ? jint(e->pid_ns) : json_null());
        char tag[16];
        snprintf(tag, sizeof(tag), "0x%08" PRIx32, cbt_pkey_image(e->k[1]));
        json_object_set_new(o, "image_tag", cbt_pkey_image(e->k[1]) ? json_string(tag) : json_null());
        json_object_set_new(o, "procname", e->label ? json_string(e->label) : json_null());
        json_object_set_new(o, "rank", has_rank(e) ? json_integer((json_int_t)e->rank) : json_null());
        json_object_set_new(o, "rank_var", has_rank(e) ? json_string(rank_var_names[e->rank_var]) : json_null());
        json_object_set_new(o, "batches", jint(e->row.batches));
        json_object_set_new(o, "ops", jint(e->row.ops));
        json_object_set_new(o, "bytes", jint(e->row.bytes));
        json_object_set_new(o, "driver_ns", jint(e->row.sum));
        json_array_append_new(pa, o);
    }
    json_object_set_new(root, "by_host", ha);
    json_object_set_new(root, "by_process_rank", pa);
    free(p);
    free(h);
}
