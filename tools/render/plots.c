/* SPDX-License-Identifier: MIT */
/*
 * The report's plots (plots.h): what each draws is picked by
 * analyse/series.c; gnuplot.c draws it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/series.h"
#include "base/util.h"
#include "render/gnuplot.h"
#include "render/html.h"
#include "render/plots.h"

/* At most this many streams are drawn over time (the busiest). */
#define OVER_TIME_STREAMS 12

/* Bars of one number per named row (batch sizes, findings, bandwidth by direction). */
static bool bars_plot(FILE *o, const char *gnuplot, const char *id, const char *title, const char *caption,
                      const json_t *rows, const char *name_key, const char *value_key, const char *xlabel,
                      const char *ylabel)
{
    struct cbt_plot p;
    if (!cbt_plot_open(&p, id, title, caption))
        return false;
    fprintf(p.t, "<thead><tr><th>%s</th><th>%s</th></tr></thead><tbody>", name_key, value_key);
    fputs("$data << EOD\n", p.g);
    size_t i, n = 0;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const json_t *v = json_object_get(r, value_key);
        if (!json_is_number(v))
            continue;
        fprintf(p.g, "%zu ", n++);
        cbt_json_exact(p.g, v);
        fputc('\n', p.g);
        fputs("<tr><td>", p.t);
        cbt_html_esc(p.t, cbt_jstr(r, name_key));
        fputs("</td><td>", p.t);
        cbt_json_exact(p.t, v);
        fputs("</td></tr>", p.t);
    }
    double max = 0;
    json_array_foreach(rows, i, r) {
        const json_t *v = json_object_get(r, value_key);
        if (json_is_number(v) && json_number_value(v) > max)
            max = json_number_value(v);
    }
    fputs("EOD\nset xtics (", p.g);
    n = 0;
    json_array_foreach(rows, i, r) {
        if (!json_is_number(json_object_get(r, value_key)))
            continue;
        fputs(n ? ", " : "", p.g);
        cbt_gp_str(p.g, cbt_jstr(r, name_key));
        fprintf(p.g, " %zu", n++);
    }
    /* room above the tallest bar for its label; whole steps for counts */
    fprintf(p.g, ")%s\nset xrange [-0.6:%zu.6]\nset yrange [0:%.17g]\nset boxwidth 0.6\n", n > 6 ? " rotate by -30" : "",
            n - 1, max > 0 ? max * 1.15 : 1);
    if (json_is_integer(json_object_get(json_array_get(rows, 0), value_key)) && max < 5)
        fputs("set ytics 1\n", p.g);
    fputs("set ylabel ", p.g);
    cbt_gp_str(p.g, ylabel);
    fputs("\nset xlabel ", p.g);
    cbt_gp_str(p.g, xlabel);
    fputs("\nplot $data using 1:2 with boxes lt 1 notitle, $data using 1:2:(sprintf('%g', $2)) with labels "
          "offset 0,0.7 notitle\n",
          p.g);
    fputs("</tbody>", p.t);
    return cbt_plot_emit(o, &p, gnuplot);
}

/* Bandwidth against op size, one line per direction: gpu.by_direction_op_size
 * (rows of by_op_size with a "direction"), when the summary has it. */
static bool bw_size_direction_plot(FILE *o, const char *gnuplot, const json_t *rows)
{
    struct cbt_plot p;
    if (!cbt_plot_open(&p, "gpu-bandwidth-op-size-direction", "Bandwidth against op size, by direction",
                        "GB/s (bytes moved / GPU time) of the timed batches, by the batch's mean bytes per op "
                        "and its direction"))
        return false;
    fputs("<thead><tr><th>direction</th><th>name</th><th>low</th><th>gbps</th></tr></thead><tbody>", p.t);
    /* the directions in order of first appearance, each a data block */
    const char *dirs[64];
    size_t nd = cbt_series_directions(rows, dirs, 64), i;
    json_t *r;
    for (size_t k = 0; k < nd; k++) {
        fprintf(p.g, "$d%zu << EOD\n", k);
        json_array_foreach(rows, i, r) {
            const json_t *v = json_object_get(r, "gbps");
            if (strcmp(cbt_jstr(r, "direction"), dirs[k]) != 0 || !json_is_number(v))
                continue;
            fprintf(p.g, "%" JSON_INTEGER_FORMAT " ", cbt_jint(r, "low") > 0 ? cbt_jint(r, "low") : 1);
            cbt_json_exact(p.g, v);
            fputc('\n', p.g);
            fputs("<tr><td>", p.t);
            cbt_html_esc(p.t, dirs[k]);
            fputs("</td><td>", p.t);
            cbt_html_esc(p.t, cbt_jstr(r, "name"));
            fprintf(p.t, "</td><td>%" JSON_INTEGER_FORMAT "</td><td>", cbt_jint(r, "low"));
            cbt_json_exact(p.t, v);
            fputs("</td></tr>", p.t);
        }
        fputs("EOD\n", p.g);
    }
    fputs("</tbody>", p.t);
    fputs("set logscale x 2\nset yrange [0:*]\nset key top left\nset xtics (", p.g);
    json_int_t lo_min = INT64_MAX, lo_max = 1;
    json_array_foreach(rows, i, r) { /* a tic at each bin's start */
        json_int_t lo = cbt_jint(r, "low") > 0 ? cbt_jint(r, "low") : 1;
        char b[32];
        fprintf(p.g, "%s'%s' %" JSON_INTEGER_FORMAT, i ? ", " : "", cbt_fmt_bytes((uint64_t)lo, b, sizeof(b)), lo);
        lo_min = lo < lo_min ? lo : lo_min;
        lo_max = lo > lo_max ? lo : lo_max;
    }
    fprintf(p.g, ")\nset xrange [%.17g:%.17g]\nset xlabel 'bytes per op (bin start)'\nset ylabel 'GB/s'\nplot ",
            (double)lo_min / 1.5, (double)lo_max * 1.5);
    for (size_t k = 0; k < nd; k++) {
        fprintf(p.g, "%s$d%zu using 1:2 with linespoints lt %zu title ", k ? ", " : "", k, k + 1);
        cbt_gp_str(p.g, dirs[k]);
    }
    fputc('\n', p.g);
    return cbt_plot_emit(o, &p, gnuplot);
}

/* GPU time per stream over time: the busiest streams, the GPU time of the batches that start in each bucket. */
static bool over_time_plot(FILE *o, const char *gnuplot, const json_t *ot)
{
    const json_t *streams = json_object_get(ot, "streams");
    json_int_t w = cbt_jint(ot, "bucket_ns"), t0 = cbt_jint(ot, "start_ns");
    size_t ns = json_array_size(streams), pick[OVER_TIME_STREAMS], np = 0, nb = 0;
    /* the busiest streams, busiest first (ties: in the summary's order) */
    if (cbt_series_busiest(streams, pick, OVER_TIME_STREAMS, &np) != 0) {
        cbt_err("out of memory");
        return false;
    }
    for (size_t k = 0; k < np; k++) {
        size_t n = json_array_size(json_object_get(json_array_get(streams, pick[k]), "gpu_ns"));
        nb = n > nb ? n : nb;
    }
    char cap[512], wbuf[32];
    snprintf(cap, sizeof(cap),
             "GPU time of each stream's timed batches, by the %s bucket their GPU start falls in "
             "(gpu.over_time)%s",
             cbt_fmt_ns((double)w, wbuf, sizeof(wbuf)), ns > np ? "; the 12 busiest streams" : "");
    struct cbt_plot p;
    if (!cbt_plot_open(&p, "gpu-over-time", "GPU time per stream over time", cap))
        return false;
    fputs("<thead><tr><th>bucket</th><th>start_ns</th>", p.t);
    for (size_t k = 0; k < np; k++) {
        fputs("<th>", p.t);
        cbt_html_esc(p.t, cbt_jstr(json_array_get(streams, pick[k]), "name"));
        fputs("</th>", p.t);
    }
    fputs("</tr></thead><tbody>", p.t);
    fputs("$data << EOD\n", p.g);
    for (size_t b = 0; b < nb; b++) {
        fprintf(p.g, "%zu", b);
        fprintf(p.t, "<tr><td>%zu</td><td>%" PRIu64 "</td>", b, (uint64_t)t0 + (uint64_t)w * b);
        for (size_t k = 0; k < np; k++) {
            const json_t *v = json_array_get(json_object_get(json_array_get(streams, pick[k]), "gpu_ns"), b);
            json_int_t x = json_integer_value(v);
            fprintf(p.g, " %" JSON_INTEGER_FORMAT, x);
            fprintf(p.t, "<td>%" JSON_INTEGER_FORMAT "</td>", x);
        }
        fputc('\n', p.g);
        fputs("</tr>", p.t);
    }
    fputs("</tbody>", p.t);
    /* x: the bucket's middle, from the first bucket's start; x and y in units that suit the span and the
     * largest value */
    double span = (double)w * (double)nb, ymax = 0;
    for (size_t k = 0; k < np; k++)
        for (size_t b = 0; b < nb; b++) {
            double v = (double)json_integer_value(
                json_array_get(json_object_get(json_array_get(streams, pick[k]), "gpu_ns"), b));
            ymax = v > ymax ? v : ymax;
        }
    const char *xunit = span < 1e4 ? "µs" : span < 1e7 ? "ms" : "s";
    double xdiv = span < 1e4 ? 1e3 : span < 1e7 ? 1e6 : 1e9;
    const char *yunit = ymax < 1e4 ? "µs" : ymax < 1e7 ? "ms" : "s";
    double ydiv = ymax < 1e4 ? 1e3 : ymax < 1e7 ? 1e6 : 1e9;
    fprintf(p.g, "EOD\nW = %" JSON_INTEGER_FORMAT ".0\nset xlabel '%s from the first bucket'\n"
                 "set ylabel 'GPU time (%s)'\nset yrange [0:*]\nset xrange [0:%.17g]\n"
                 "set key outside bottom center\nplot ",
            w, xunit, yunit, span / xdiv);
    for (size_t k = 0; k < np; k++) {
        fprintf(p.g, "%s$data using (($1+0.5)*W/%g):($%zu/%g) with histeps lt %zu title ", k ? ", " : "", xdiv,
                k + 2, ydiv, k + 1);
        cbt_gp_str(p.g, cbt_jstr(json_array_get(streams, pick[k]), "name"));
    }
    fputc('\n', p.g);
    return cbt_plot_emit(o, &p, gnuplot);
}
bool cbt_render_plots(FILE *o, const json_t *root, const char *gnuplot)
{
    const json_t *gpu = json_object_get(root, "gpu");
    fputs("<h2 id=\"plots\">Plots</h2>\n", o);
    if (!gnuplot) {
        fputs("<p class=\"none\">Plots left out (--no-plots).</p>\n", o);
        return true;
    }
    bool ok = true;
    const json_t *ds = json_object_get(gpu, "by_direction_op_size");
    const json_t *bs = json_object_get(gpu, "by_op_size"), *bd = json_object_get(gpu, "by_direction");
    if (cbt_series_plottable(ds, "gbps"))
        ok = ok && bw_size_direction_plot(o, gnuplot, ds);
    else {
        if (cbt_series_plottable(bs, "gbps"))
            ok = ok && bars_plot(o, gnuplot, "gpu-bandwidth-op-size", "Bandwidth by op size",
                                 "GB/s (bytes moved / GPU time) of the timed batches, by the batch's mean bytes per op",
                                 bs, "name", "gbps", "bytes per op", "GB/s");
        if (cbt_series_plottable(bd, "gbps"))
            ok = ok && bars_plot(o, gnuplot, "gpu-bandwidth-direction", "Bandwidth by direction",
                                 "GB/s (bytes moved / GPU time) of the timed batches, by the direction of their ops "
                                 "(mixed: more than one)",
                                 bd, "name", "gbps", "direction", "GB/s");
    }
    if (!cbt_series_plottable(bs, "gbps") && !cbt_series_plottable(ds, "gbps"))
        fputs("<p class=\"none\">No bandwidth to plot: no batch was timed on the GPU.</p>\n", o);
    const json_t *ot = json_object_get(gpu, "over_time");
    if (ok && json_array_size(json_object_get(ot, "streams")) && cbt_jint(ot, "bucket_ns") > 0)
        ok = over_time_plot(o, gnuplot, ot);
    else
        fputs("<p class=\"none\">No GPU time over time to plot.</p>\n", o);
    const json_t *bh = json_object_get(root, "batch_size_histogram");
    if (ok && cbt_series_plottable(bh, "batches"))
        ok = bars_plot(o, gnuplot, "batch-size-histogram", "Batch sizes", "Batches by their number of ops",
                       bh, "name", "batches", "ops per batch", "batches");
    const json_t *f = json_object_get(root, "findings");
    if (ok && cbt_series_plottable(f, "count"))
        ok = bars_plot(o, gnuplot, "findings", "Findings by rule",
                       "Findings of the validator, by rule (`cubatchtrace rules` explains each)", f, "rule", "count",
                       "rule", "findings");
    else if (ok)
        fputs("<p class=\"none\">No finding to plot.</p>\n", o);
    return ok;
}
