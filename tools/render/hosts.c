/* SPDX-License-Identifier: MIT */
/*
 * The job view's rows (analyse/hosts.c) printed: the text summary's two
 * tables, by host and by process, and the JSON summary's "by_host" and
 * "by_process_rank".
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "analyse/hosts.h"
#include "base/util.h"
#include "render/hosts.h"

static void fmt_rank(char *b, size_t l, const struct kent *e)
{
    if (cbt_hosts_has_rank(e))
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

/* The cells of a row of the text tables. */
typedef char cells_t[12][64];

/* A table of text cells: widths from the cells, the first `left` columns left-aligned. */
static void print_cells(FILE *out, const char *const *head, int nc, int left, cells_t *cells, size_t n)
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

/* The table by host. */
static void print_hosts(FILE *out, const struct cbt_hosts *hs, cells_t *cells, bool raw)
{
    static const char *const hh[] = {"Host", "Processes", "Ranks", "Batches", "Ops", "Bytes"};
    for (size_t i = 0; i < hs->nhosts; i++) {
        const struct cbt_host_row *h = &hs->hosts[i];
        snprintf(cells[i][0], 64, "%s", h->host);
        snprintf(cells[i][1], 64, "%" PRIu64, h->procs);
        snprintf(cells[i][2], 64, "%" PRIu64, h->ranked);
        snprintf(cells[i][3], 64, "%" PRIu64, h->row.batches);
        snprintf(cells[i][4], 64, "%" PRIu64, h->row.ops);
        fmt_bytes(cells[i][5], 64, h->row.bytes, raw);
    }
    fprintf(out, "\n# Batches by host (the hostname each host's session daemon recorded in its traces)\n");
    fprintf(out, "# Processes: those with batches; Ranks: those of them whose rank the shim recorded\n");
    print_cells(out, hh, 6, 1, cells, hs->nhosts);
    if (hs->overflowed)
        fprintf(out, "# (process table full: %" PRIu64 " more processes counted in the totals only)\n",
                hs->overflowed);
}

/* The table by process: with Image and Pid ns when a pid had several process images. */
static void print_procs(FILE *out, const struct cbt_hosts *hs, cells_t *cells, bool raw)
{
    bool img = hs->several_images;
    static const char *const ph[] = {"Host", "Pid", "Rank", "Procname", "Batches", "Ops", "Bytes", "Avg", "Min", "Max"};
    static const char *const phi[] = {"Host", "Pid", "Image", "Pid ns", "Rank", "Procname", "Batches", "Ops", "Bytes",
                                      "Avg", "Min", "Max"};
    for (size_t i = 0; i < hs->nprocs; i++) {
        const struct kent *e = hs->procs[i].e;
        int c = 0;
        snprintf(cells[i][c++], 64, "%s", hs->procs[i].host);
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
        print_cells(out, phi, 12, 6, cells, hs->nprocs);
    else
        print_cells(out, ph, 10, 4, cells, hs->nprocs);
}

void cbt_hosts_print_text(const struct cbt_agg *a, FILE *out, bool raw)
{
    struct cbt_hosts hs;
    if (cbt_hosts_build(a, &hs) != 0)
        return;
    cells_t *cells = calloc((hs.nprocs > hs.nhosts ? hs.nprocs : hs.nhosts) + 1, sizeof(*cells));
    if (cells) {
        print_hosts(out, &hs, cells, raw);
        print_procs(out, &hs, cells, raw);
    }
    free(cells);
    cbt_hosts_free(&hs);
}

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

json_t *cbt_hosts_image_json(const struct cbt_agg *a, uint32_t host, uint64_t pkey)
{
    uint32_t n = cbt_hosts_image_number(a, host, pkey);
    return n ? jint(n) : json_null();
}

void cbt_hosts_json(const struct cbt_agg *a, json_t *root)
{
    struct cbt_hosts hs;
    if (cbt_hosts_build(a, &hs) != 0)
        return;
    const struct cbt_host_row *h = hs.hosts;
    const struct cbt_proc_row *p = hs.procs;
    json_t *ha = json_array(), *pa = json_array();
    for (size_t i = 0; i < hs.nhosts; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(h[i].host));
        json_object_set_new(o, "processes", jint(h[i].procs));
        json_object_set_new(o, "ranks", jint(h[i].ranked));
        json_object_set_new(o, "batches", jint(h[i].row.batches));
        json_object_set_new(o, "ops", jint(h[i].row.ops));
        json_object_set_new(o, "bytes", jint(h[i].row.bytes));
        json_array_append_new(ha, o);
    }
    for (size_t i = 0; i < hs.nprocs; i++) {
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
        json_object_set_new(o, "rank", cbt_hosts_has_rank(e) ? json_integer((json_int_t)e->rank) : json_null());
        json_object_set_new(o, "rank_var", cbt_hosts_has_rank(e) ? json_string(cbt_hosts_rank_var(e)) : json_null());
        json_object_set_new(o, "batches", jint(e->row.batches));
        json_object_set_new(o, "ops", jint(e->row.ops));
        json_object_set_new(o, "bytes", jint(e->row.bytes));
        json_object_set_new(o, "driver_ns", jint(e->row.sum));
        json_array_append_new(pa, o);
    }
    json_object_set_new(root, "by_host", ha);
    json_object_set_new(root, "by_process_rank", pa);
    cbt_hosts_free(&hs);
}
