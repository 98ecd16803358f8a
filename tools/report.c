/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace report`: the summary as one HTML page that works offline:
 * inline CSS, the summary's tables in the text summary's human units
 * (util.c's cbt_fmt_*: a cell reads as `summary` prints it), plots drawn by
 * gnuplot (its svg terminal, run as a child process with the data inline in
 * its script) embedded as inline SVG, each with a table of exactly the
 * numbers it plots, and the whole summary JSON in a <script
 * type="application/json">.
 * No script runs: the page shows everything without JavaScript.
 *
 * The data is the object `summary --json` prints (json.c), built in process
 * and walked here with jansson; `--from-json` takes one saved earlier.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "analyse/agg.h"
#include "commands.h"
#include "guard.h"
#include "render/json.h"
#include "parallel.h"
#include "read/reader.h"
#include "base/util.h"

static const char usage_report[] =
    "Usage: cubatchtrace report -o FILE.html [--no-plots] [--pid PID]... [--jobs N]\n"
    "                           [--begin TIME] [--end TIME] TRACE...\n"
    "       cubatchtrace report -o FILE.html [--no-plots] --from-json SUMMARY.json\n"
    "Write the summary of the traces as one HTML page that works offline: its\n"
    "tables in human units, plots (bandwidth by op size and direction, batch sizes,\n"
    "GPU time per stream over time, findings by rule) drawn by gnuplot as inline\n"
    "SVG, each beside a table of the numbers it plots, and the summary JSON itself\n"
    "(docs/report.md).\n"
    "\n"
    "  -o, --output FILE write the page to FILE (replaced only when all went well)\n"
    "  --no-plots        tables only: gnuplot is not needed\n"
    "  --from-json FILE  the page of a summary saved by `summary --json` instead\n"
    "                    of reading traces\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    "  --jobs N          read up to N trace directories at once, one thread each\n"
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n"
    "gnuplot is found on PATH, or named by CUBATCHTRACE_GNUPLOT (Debian: gnuplot-nox).\n"
    "\n"
    "Exit status: 0 written; 2 the input could not be read, gnuplot is missing or\n"
    "failed, FILE cannot be written or the command line is wrong (one line on\n"
    "stderr; FILE is left as it was).\n";

/* At most this many streams are drawn over time (the busiest). */
#define OVER_TIME_STREAMS 12

/* ---------------------------------------------------------------- HTML */

/* Text of the trace (names, paths) as HTML text or attribute value. */
static void esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*s, o);
        }
    }
}

static json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A JSON number exactly as the plotted-numbers tables and the data blocks hold it. */
static void exact(FILE *o, const json_t *v)
{
    if (json_is_integer(v))
        fprintf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        fprintf(o, "%.17g", json_real_value(v));
    else
        fputs("null", o);
}

enum unit { U_TEXT, U_COUNT, U_BYTES, U_NS, U_GBPS, U_PCT };
struct col {
    const char *head, *key;
    enum unit u;
};

static void cell(FILE *o, const json_t *v, enum unit u)
{
    char buf[64];
    if (u == U_TEXT) {
        fputs("<td class=\"t\">", o);
        if (json_is_string(v))
            esc(o, json_string_value(v));
        else if (json_is_number(v))
            exact(o, v);
        else
            fputs("–", o);
        fputs("</td>", o);
        return;
    }
    if (!json_is_number(v)) {
        fputs("<td>–</td>", o);
        return;
    }
    double d = json_number_value(v);
    const char *s = buf;
    switch (u) {
    /* the text summary's units (util.c); a mean of bytes rounds to whole bytes there too */
    case U_BYTES:
        cbt_fmt_bytes(json_is_integer(v) ? (uint64_t)json_integer_value(v) : (uint64_t)(d + 0.5), buf, sizeof(buf));
        break;
    case U_NS: cbt_fmt_ns(d, buf, sizeof(buf)); break;
    case U_GBPS: cbt_fmt_gbps(d, buf, sizeof(buf)); break;
    case U_PCT: snprintf(buf, sizeof(buf), "%.2f %%", d); break;
    default:
        if (json_is_integer(v))
            snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
            snprintf(buf, sizeof(buf), "%.3f", d);
    }
    if (u == U_COUNT) {
        fprintf(o, "<td>%s</td>", s);
        return;
    }
    fputs("<td title=\"", o); /* the exact figure, on hovering */
    exact(o, v);
    fprintf(o, "\">%s</td>", s);
}

/* A table of the summary's rows (objects); nothing but a line when empty. */
static void rows_table(FILE *o, const char *id, const json_t *rows, const struct col *cols, size_t ncols,
                       const char *empty)
{
    if (!json_array_size(rows)) {
        fprintf(o, "<p class=\"none\">%s</p>\n", empty);
        return;
    }
    fprintf(o, "<table class=\"rows\" id=\"table-%s\"><thead><tr>", id);
    for (size_t c = 0; c < ncols; c++)
        fprintf(o, "<th>%s</th>", cols[c].head);
    fputs("</tr></thead><tbody>\n", o);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        fputs("<tr>", o);
        for (size_t c = 0; c < ncols; c++)
            cell(o, json_object_get(r, cols[c].key), cols[c].u);
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
}

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

static const struct col op_cols[] = {
    {"Name", "name", U_TEXT},       {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES},    {"% of all", "percent", U_PCT},  {"Avg bytes per op", "avg", U_BYTES},
    {"Min", "min", U_BYTES},        {"Max", "max", U_BYTES},
};
static const struct col batch_cols[] = {
    {"Name", "name", U_TEXT},    {"Batches", "batches", U_COUNT},      {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES}, {"% of all", "percent", U_PCT},       {"Avg host time in the driver", "avg", U_NS},
    {"Min", "min", U_NS},        {"Max", "max", U_NS},
};
static const struct col device_cols[] = {
    {"Device", "name", U_TEXT},          {"Ops out", "ops_out", U_COUNT},
    {"Bytes out", "bytes_out", U_BYTES}, {"Ops in", "ops_in", U_COUNT},
    {"Bytes in", "bytes_in", U_BYTES},   {"Peer bytes out", "peer_bytes_out", U_BYTES},
    {"Peer bytes in", "peer_bytes_in", U_BYTES},
};
static const struct col proc_cols[] = {
    {"Host", "host", U_TEXT},       {"Pid", "pid", U_TEXT},          {"Process", "procname", U_TEXT},
    {"Image", "image", U_TEXT},     {"Pid ns", "pid_ns", U_TEXT},    {"Rank", "rank", U_TEXT},       {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES},    {"Host time in the driver", "driver_ns", U_NS},
};
static const struct col gpu_cols[] = {
    {"Name", "name", U_TEXT},    {"Batches", "batches", U_COUNT}, {"Ops", "ops", U_COUNT},
    {"Bytes", "bytes", U_BYTES}, {"GPU time", "gpu_ns", U_NS},    {"Host time in the driver", "host_ns", U_NS},
    {"Bandwidth", "gbps", U_GBPS},
};
static const struct col gpu_dir_size_cols[] = {
    {"Direction", "direction", U_TEXT}, {"Op size", "name", U_TEXT},   {"Batches", "batches", U_COUNT},
    {"Ops", "ops", U_COUNT},            {"Bytes", "bytes", U_BYTES},   {"GPU time", "gpu_ns", U_NS},
    {"Host time in the driver", "host_ns", U_NS}, {"Bandwidth", "gbps", U_GBPS},
};

/* ---------------------------------------------------------------- gnuplot */

/* The gnuplot to run: CUBATCHTRACE_GNUPLOT (a path, or a name looked up on
 * PATH), else `gnuplot` on PATH; NULL (and one line on stderr) when none. */
static char *find_gnuplot(void)
{
    const char *want = getenv("CUBATCHTRACE_GNUPLOT");
    bool named = want && *want;
    if (!named)
        want = "gnuplot";
    if (strchr(want, '/')) {
        if (access(want, X_OK) == 0)
            return strdup(want);
    } else {
        const char *path = getenv("PATH");
        char *dup = strdup(path ? path : ""), *save = NULL;
        for (char *d = dup ? strtok_r(dup, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            char *p;
            if (asprintf(&p, "%s/%s", *d ? d : ".", want) < 0)
                break;
            struct stat st;
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0) {
                free(dup);
                return p;
            }
            free(p);
        }
        free(dup);
    }
    if (named)
        cbt_err("CUBATCHTRACE_GNUPLOT=%s: no such program (gnuplot draws the plots; --no-plots for tables only)",
                want);
    else
        cbt_err("gnuplot not found on PATH: install it (Debian: apt-get install gnuplot-nox), name it with "
                "CUBATCHTRACE_GNUPLOT, or use --no-plots for tables only");
    return NULL;
}

/* Runs gnuplot on `script` (its stdin) and returns what it wrote on stdout
 * (malloc'd), NULL after one line on stderr when it could not run, failed or
 * wrote no SVG.  Its stdin, stdout and stderr are served together, so that
 * no pipe fills while we wait on another. */
static char *gnuplot_svg(const char *gnuplot, const char *what, const char *script, size_t slen)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    char *res = NULL, ebuf[512] = "";
    size_t rlen = 0, elen = 0, woff = 0;
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        cbt_err("gnuplot: pipe: %s", strerror(errno));
        goto close;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cbt_err("gnuplot: fork: %s", strerror(errno));
        goto close;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execl(gnuplot, gnuplot, (char *)NULL);
        dprintf(2, "cannot run %s: %s", gnuplot, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    in[0] = out[1] = err[1] = -1;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    bool failed = false;
    while (out[0] >= 0 || err[0] >= 0) {
        struct pollfd p[3] = {{in[1], POLLOUT, 0}, {out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            failed = true;
            break;
        }
        if (in[1] >= 0 && p[0].revents) {
            ssize_t n = write(in[1], script + woff, slen - woff);
            if (n > 0)
                woff += (size_t)n;
            if (n < 0 || woff == slen) { /* done, or gnuplot stopped reading: its status says why */
                close(in[1]);
                in[1] = -1;
            }
        }
        if (out[0] >= 0 && p[1].revents) {
            char *nr = realloc(res, rlen + 65536 + 1);
            ssize_t n = nr ? read(out[0], nr + rlen, 65536) : -1;
            res = nr ? nr : res;
            if (n > 0)
                rlen += (size_t)n;
            else {
                close(out[0]);
                out[0] = -1;
            }
        }
        if (err[0] >= 0 && p[2].revents) {
            char tmp[4096];
            ssize_t n = read(err[0], tmp, sizeof(tmp));
            if (n > 0) {
                size_t k = (size_t)n < sizeof(ebuf) - 1 - elen ? (size_t)n : sizeof(ebuf) - 1 - elen;
                memcpy(ebuf + elen, tmp, k);
                elen += k;
                ebuf[elen] = 0;
            } else {
                close(err[0]);
                err[0] = -1;
            }
        }
        cbt_progress();
    }
    signal(SIGPIPE, old);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    for (char *p = ebuf; *p; p++) /* gnuplot's complaint, one line */
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    if (failed || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (WIFEXITED(st))
            cbt_err("%s failed drawing the plot of %s (exit status %d): %.300s", gnuplot, what, WEXITSTATUS(st), ebuf);
        else
            cbt_err("%s failed drawing the plot of %s (signal %d): %.300s", gnuplot, what,
                    WIFSIGNALED(st) ? WTERMSIG(st) : 0, ebuf);
        goto fail;
    }
    if (res)
        res[rlen] = 0;
    if (!res || !strstr(res, "<svg") || !strstr(res, "</svg>")) {
        cbt_err("%s wrote no SVG for the plot of %s: %.300s", gnuplot, what, ebuf);
        goto fail;
    }
    goto close;
fail:
    free(res);
    res = NULL;
close:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    return res;
}

/* A gnuplot string: single-quoted ('' for a quote), control characters as spaces. */
static void gp_str(FILE *g, const char *s)
{
    fputc('\'', g);
    for (; s && *s; s++) {
        if (*s == '\'')
            fputs("''", g);
        else
            fputc((unsigned char)*s < 0x20 ? ' ' : *s, g);
    }
    fputc('\'', g);
}

/* The settings every plot shares. */
static void gp_head(FILE *g, const char *title)
{
    fputs("set terminal svg size 800,360 dynamic noenhanced font 'sans,11' background rgb 'white'\n"
          "set encoding utf8\n"
          "set style fill solid 0.75 border -1\n"
          "set grid ytics lc rgb '#dddddd'\n"
          "set border 3\nset tics nomirror\n"
          "set linetype 1 lc rgb '#3b7dd8' lw 2 pt 7\nset linetype 2 lc rgb '#e07b39' lw 2 pt 5\n"
          "set linetype 3 lc rgb '#3a9d5d' lw 2 pt 9\nset linetype 4 lc rgb '#c0392b' lw 2 pt 11\n"
          "set linetype 5 lc rgb '#8e6cc4' lw 2 pt 13\nset linetype 6 lc rgb '#7f7f7f' lw 2 pt 3\n"
          "set linetype cycle 6\n",
          g);
    fputs("set title ", g);
    gp_str(g, title);
    fputc('\n', g);
}

/* A plot being made: the gnuplot script and the table of its numbers. */
struct plot {
    const char *id, *title, *caption;
    char *script, *table;
    size_t slen, tlen;
    FILE *g, *t;
};

static bool plot_open(struct plot *p, const char *id, const char *title, const char *caption)
{
    *p = (struct plot){.id = id, .title = title, .caption = caption};
    p->g = open_memstream(&p->script, &p->slen);
    p->t = open_memstream(&p->table, &p->tlen);
    if (!p->g || !p->t) {
        cbt_err("out of memory");
        return false;
    }
    gp_head(p->g, title);
    fprintf(p->t, "<table class=\"plot-data\" id=\"data-%s\">", id);
    return true;
}

static void plot_free(struct plot *p)
{
    if (p->g)
        fclose(p->g);
    if (p->t)
        fclose(p->t);
    free(p->script);
    free(p->table);
}

/* The SVG, its element ids (and the references to them) prefixed with the
 * plot's id: gnuplot names its own the same in every plot, and the page holds
 * several. */
static void svg_write(FILE *o, const char *s, const char *end, const char *plot_id)
{
    static const char *const refs[] = {" id='", " id=\"", "href='#", "href=\"#", "url(#"};
    while (s < end) {
        size_t k = 0, len = 0;
        for (; k < sizeof(refs) / sizeof(refs[0]); k++) {
            len = strlen(refs[k]);
            if ((size_t)(end - s) >= len && memcmp(s, refs[k], len) == 0)
                break;
        }
        if (k < sizeof(refs) / sizeof(refs[0])) {
            fwrite(s, 1, len, o);
            fprintf(o, "%s-", plot_id);
            s += len;
        } else
            fputc(*s++, o);
    }
}

/* Draws the plot (unless gnuplot is NULL: tables only) and writes the figure; false after one line on stderr. */
static bool plot_emit(FILE *o, struct plot *p, const char *gnuplot)
{
    fputs("</table>", p->t);
    fclose(p->g);
    fclose(p->t);
    p->g = p->t = NULL;
    char *svg = NULL;
    if (gnuplot && !(svg = gnuplot_svg(gnuplot, p->title, p->script, p->slen)))
        return false;
    fprintf(o, "<figure class=\"plot\" id=\"plot-%s\">\n", p->id);
    if (svg) {
        const char *s = strstr(svg, "<svg"); /* the XML prolog and doctype go */
        const char *end = strstr(s, "</svg>") + strlen("</svg>");
        const char *t = strstr(s, "<title>Gnuplot</title>");
        if (t && t < end) {
            svg_write(o, s, t, p->id);
            s = t + strlen("<title>Gnuplot</title>");
        }
        svg_write(o, s, end, p->id);
        fputc('\n', o);
        free(svg);
    }
    fprintf(o, "<figcaption>%s</figcaption>\n<details><summary>The plotted numbers</summary>\n", p->caption);
    fwrite(p->table, 1, p->tlen, o);
    fputs("\n</details></figure>\n", o);
    return true;
}

/* ---- the plots: each writes its data block and its table from the same numbers */

/* Bars of one number per named row (batch sizes, findings, bandwidth by direction). */
static bool bars_plot(FILE *o, const char *gnuplot, const char *id, const char *title, const char *caption,
                      const json_t *rows, const char *name_key, const char *value_key, const char *xlabel,
                      const char *ylabel)
{
    struct plot p;
    bool ok = plot_open(&p, id, title, caption);
    if (!ok)
        goto out;
    fprintf(p.t, "<thead><tr><th>%s</th><th>%s</th></tr></thead><tbody>", name_key, value_key);
    fputs("$data << EOD\n", p.g);
    size_t i, n = 0;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const json_t *v = json_object_get(r, value_key);
        if (!json_is_number(v))
            continue;
        fprintf(p.g, "%zu ", n++);
        exact(p.g, v);
        fputc('\n', p.g);
        fputs("<tr><td>", p.t);
        esc(p.t, jstr(r, name_key));
        fputs("</td><td>", p.t);
        exact(p.t, v);
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
        gp_str(p.g, jstr(r, name_key));
        fprintf(p.g, " %zu", n++);
    }
    /* room above the tallest bar for its label; whole steps for counts */
    fprintf(p.g, ")%s\nset xrange [-0.6:%zu.6]\nset yrange [0:%.17g]\nset boxwidth 0.6\n", n > 6 ? " rotate by -30" : "",
            n - 1, max > 0 ? max * 1.15 : 1);
    if (json_is_integer(json_object_get(json_array_get(rows, 0), value_key)) && max < 5)
        fputs("set ytics 1\n", p.g);
    fputs("set ylabel ", p.g);
    gp_str(p.g, ylabel);
    fputs("\nset xlabel ", p.g);
    gp_str(p.g, xlabel);
    fputs("\nplot $data using 1:2 with boxes lt 1 notitle, $data using 1:2:(sprintf('%g', $2)) with labels "
          "offset 0,0.7 notitle\n",
          p.g);
    fputs("</tbody>", p.t);
    ok = plot_emit(o, &p, gnuplot);
out:
    plot_free(&p);
    return ok;
}

/* Rows with a number to plot. */
static size_t plottable(const json_t *rows, const char *key)
{
    size_t i, n = 0;
    json_t *r;
    json_array_foreach(rows, i, r) n += json_is_number(json_object_get(r, key));
    return n;
}

/* Bandwidth against op size, one line per direction: gpu.by_direction_op_size
 * (rows of by_op_size with a "direction"), when the summary has it. */
static bool bw_size_direction_plot(FILE *o, const char *gnuplot, const json_t *rows)
{
    struct plot p;
    bool ok = plot_open(&p, "gpu-bandwidth-op-size-direction", "Bandwidth against op size, by direction",
                        "GB/s (bytes moved / GPU time) of the timed batches, by the batch's mean bytes per op "
                        "and its direction");
    if (!ok)
        goto out;
    fputs("<thead><tr><th>direction</th><th>name</th><th>low</th><th>gbps</th></tr></thead><tbody>", p.t);
    /* the directions in order of first appearance, each a data block */
    const char *dirs[64];
    size_t nd = 0, i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *d = jstr(r, "direction");
        size_t k = 0;
        while (k < nd && strcmp(dirs[k], d) != 0)
            k++;
        if (k == nd && nd < 64 && json_is_number(json_object_get(r, "gbps")))
            dirs[nd++] = d;
    }
    for (size_t k = 0; k < nd; k++) {
        fprintf(p.g, "$d%zu << EOD\n", k);
        json_array_foreach(rows, i, r) {
            const json_t *v = json_object_get(r, "gbps");
            if (strcmp(jstr(r, "direction"), dirs[k]) != 0 || !json_is_number(v))
                continue;
            fprintf(p.g, "%" JSON_INTEGER_FORMAT " ", jint(r, "low") > 0 ? jint(r, "low") : 1);
            exact(p.g, v);
            fputc('\n', p.g);
            fputs("<tr><td>", p.t);
            esc(p.t, dirs[k]);
            fputs("</td><td>", p.t);
            esc(p.t, jstr(r, "name"));
            fprintf(p.t, "</td><td>%" JSON_INTEGER_FORMAT "</td><td>", jint(r, "low"));
            exact(p.t, v);
            fputs("</td></tr>", p.t);
        }
        fputs("EOD\n", p.g);
    }
    fputs("</tbody>", p.t);
    fputs("set logscale x 2\nset yrange [0:*]\nset key top left\nset xtics (", p.g);
    json_int_t lo_min = INT64_MAX, lo_max = 1;
    json_array_foreach(rows, i, r) { /* a tic at each bin's start */
        json_int_t lo = jint(r, "low") > 0 ? jint(r, "low") : 1;
        char b[32];
        fprintf(p.g, "%s'%s' %" JSON_INTEGER_FORMAT, i ? ", " : "", cbt_fmt_bytes((uint64_t)lo, b, sizeof(b)), lo);
        lo_min = lo < lo_min ? lo : lo_min;
        lo_max = lo > lo_max ? lo : lo_max;
    }
    fprintf(p.g, ")\nset xrange [%.17g:%.17g]\nset xlabel 'bytes per op (bin start)'\nset ylabel 'GB/s'\nplot ",
            (double)lo_min / 1.5, (double)lo_max * 1.5);
    for (size_t k = 0; k < nd; k++) {
        fprintf(p.g, "%s$d%zu using 1:2 with linespoints lt %zu title ", k ? ", " : "", k, k + 1);
        gp_str(p.g, dirs[k]);
    }
    fputc('\n', p.g);
    ok = plot_emit(o, &p, gnuplot);
out:
    plot_free(&p);
    return ok;
}

/* GPU time per stream over time: the busiest streams, the GPU time of the batches that start in each bucket. */
static bool over_time_plot(FILE *o, const char *gnuplot, const json_t *ot)
{
    const json_t *streams = json_object_get(ot, "streams");
    json_int_t w = jint(ot, "bucket_ns"), t0 = jint(ot, "start_ns");
    size_t ns = json_array_size(streams), pick[OVER_TIME_STREAMS], np = 0, nb = 0;
    /* the busiest streams, busiest first (ties: in the summary's order) */
    bool *used = calloc(ns + 1, sizeof(*used));
    if (!used) {
        cbt_err("out of memory");
        return false;
    }
    while (np < OVER_TIME_STREAMS && np < ns) {
        size_t best = ns;
        json_int_t best_sum = -1;
        for (size_t s = 0; s < ns; s++) {
            if (used[s])
                continue;
            const json_t *g = json_object_get(json_array_get(streams, s), "gpu_ns");
            json_int_t sum = 0;
            for (size_t b = 0; b < json_array_size(g); b++)
                sum += json_integer_value(json_array_get(g, b));
            if (sum > best_sum) {
                best = s;
                best_sum = sum;
            }
        }
        used[best] = true;
        pick[np++] = best;
    }
    free(used);
    for (size_t k = 0; k < np; k++) {
        size_t n = json_array_size(json_object_get(json_array_get(streams, pick[k]), "gpu_ns"));
        nb = n > nb ? n : nb;
    }
    char cap[512], wbuf[32];
    snprintf(cap, sizeof(cap),
             "GPU time of each stream's timed batches, by the %s bucket their GPU start falls in "
             "(gpu.over_time)%s",
             cbt_fmt_ns((double)w, wbuf, sizeof(wbuf)), ns > np ? "; the 12 busiest streams" : "");
    struct plot p;
    bool ok = plot_open(&p, "gpu-over-time", "GPU time per stream over time", cap);
    if (!ok)
        goto out;
    fputs("<thead><tr><th>bucket</th><th>start_ns</th>", p.t);
    for (size_t k = 0; k < np; k++) {
        fputs("<th>", p.t);
        esc(p.t, jstr(json_array_get(streams, pick[k]), "name"));
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
        gp_str(p.g, jstr(json_array_get(streams, pick[k]), "name"));
    }
    fputc('\n', p.g);
    ok = plot_emit(o, &p, gnuplot);
out:
    plot_free(&p);
    return ok;
}

/* ---------------------------------------------------------------- the page */

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}"
    "h3{font-size:1.05em}table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ddd;padding:2px 8px;text-align:right;font-variant-numeric:tabular-nums}"
    "th{background:#f3f3f3}td.t{text-align:left;font-family:ui-monospace,monospace;font-size:.92em}"
    "td[title]{cursor:help}p.none{color:#666;font-style:italic}"
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

static void kv(FILE *o, const char *k, const json_t *v, enum unit u)
{
    fprintf(o, "<tr><th>%s</th>", k);
    cell(o, v, u);
    fputs("</tr>\n", o);
}

static void totals(FILE *o, const json_t *root)
{
    json_t *findings = json_object_get(root, "findings"), *f;
    json_int_t nfind = 0;
    size_t i;
    json_array_foreach(findings, i, f) nfind += jint(f, "count");
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
    fputs("</table>\n", o);
    json_decref(nf);
    if (jint(root, "discarded_events") || jint(root, "discarded_packets"))
        fputs("<p><strong>The tracer discarded events: every figure undercounts.</strong></p>\n", o);
}

static void findings_table(FILE *o, const json_t *findings)
{
    if (!json_array_size(findings)) {
        fputs("<p class=\"none\">No finding.</p>\n", o);
        return;
    }
    fputs("<table class=\"rows\" id=\"table-findings\"><thead><tr><th>Rule</th><th>Severity</th><th>Count</th>"
          "<th>First seen</th></tr></thead><tbody>\n",
          o);
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const json_t *fs = json_object_get(f, "first_seen");
        fputs("<tr><td class=\"t\">", o);
        esc(o, jstr(f, "rule"));
        fputs("</td><td class=\"t sev-", o);
        esc(o, jstr(f, "severity"));
        fputs("\">", o);
        esc(o, jstr(f, "severity"));
        fprintf(o, "</td><td>%" JSON_INTEGER_FORMAT "</td><td class=\"t\">batch %" JSON_INTEGER_FORMAT
                   " / pid %" JSON_INTEGER_FORMAT " on ",
                jint(f, "count"), jint(fs, "batch"), jint(fs, "pid"));
        esc(o, jstr(fs, "host"));
        fputs("</td></tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
}

static void gpu_section(FILE *o, const json_t *gpu)
{
    fputs("<h2 id=\"gpu\">GPU time</h2>\n", o);
    if (!gpu) {
        fputs("<p class=\"none\">This summary has no GPU section (written by an older cubatchtrace).</p>\n", o);
        return;
    }
    json_int_t timed = jint(gpu, "batches_timed");
    fputs("<table class=\"kv\" id=\"table-gpu-totals\">\n", o);
    kv(o, "Processes timed", json_object_get(gpu, "processes_timed"), U_COUNT);
    kv(o, "Batches timed", json_object_get(gpu, "batches_timed"), U_COUNT);
    const json_t *ch = json_object_get(gpu, "chosen");
    kv(o, "Timed: one batch in N of each stream", ch ? json_object_get(ch, "every") : NULL, U_COUNT);
    kv(o, "GPU time", json_object_get(gpu, "gpu_ns"), U_NS);
    kv(o, "Bytes", json_object_get(gpu, "bytes"), U_BYTES);
    kv(o, "Ops", json_object_get(gpu, "ops"), U_COUNT);
    kv(o, "Host time in the driver", json_object_get(gpu, "host_ns"), U_NS);
    json_int_t gns = jint(gpu, "gpu_ns");
    json_t *bw = gns > 0 ? json_real((double)jint(gpu, "bytes") / (double)gns) : json_null();
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
        esc(o, k);
        fputs("</td>", o);
        cell(o, v, U_COUNT);
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
    static const struct {
        const char *key, *title;
        const struct col *cols;
        size_t ncols;
    } t[] = {
        {"by_direction", "Bandwidth by direction", gpu_cols, NCOLS(gpu_cols)},
        {"by_memkinds", "Bandwidth by memory kinds (source->destination)", gpu_cols, NCOLS(gpu_cols)},
        {"by_op_size", "Bandwidth by op size (the batch's mean bytes per op)", gpu_cols, NCOLS(gpu_cols)},
        {"by_direction_op_size", "Bandwidth by direction and op size", gpu_dir_size_cols, NCOLS(gpu_dir_size_cols)},
        {"by_stream", "Bandwidth by stream", gpu_cols, NCOLS(gpu_cols)},
        {"by_device", "Bandwidth by device", gpu_cols, NCOLS(gpu_cols)},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const json_t *rows = json_object_get(gpu, t[i].key);
        if (!rows) /* a summary of an older cubatchtrace */
            continue;
        fprintf(o, "<h3>%s</h3>\n", t[i].title);
        char id[64];
        snprintf(id, sizeof(id), "gpu-%s", t[i].key);
        rows_table(o, id, rows, t[i].cols, t[i].ncols, "No timed batch.");
    }
}

static bool plots_section(FILE *o, const json_t *root, const char *gnuplot)
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
    if (plottable(ds, "gbps"))
        ok = ok && bw_size_direction_plot(o, gnuplot, ds);
    else {
        if (plottable(bs, "gbps"))
            ok = ok && bars_plot(o, gnuplot, "gpu-bandwidth-op-size", "Bandwidth by op size",
                                 "GB/s (bytes moved / GPU time) of the timed batches, by the batch's mean bytes per op",
                                 bs, "name", "gbps", "bytes per op", "GB/s");
        if (plottable(bd, "gbps"))
            ok = ok && bars_plot(o, gnuplot, "gpu-bandwidth-direction", "Bandwidth by direction",
                                 "GB/s (bytes moved / GPU time) of the timed batches, by the direction of their ops "
                                 "(mixed: more than one)",
                                 bd, "name", "gbps", "direction", "GB/s");
    }
    if (!plottable(bs, "gbps") && !plottable(ds, "gbps"))
        fputs("<p class=\"none\">No bandwidth to plot: no batch was timed on the GPU.</p>\n", o);
    const json_t *ot = json_object_get(gpu, "over_time");
    if (ok && json_array_size(json_object_get(ot, "streams")) && jint(ot, "bucket_ns") > 0)
        ok = over_time_plot(o, gnuplot, ot);
    else
        fputs("<p class=\"none\">No GPU time over time to plot.</p>\n", o);
    const json_t *bh = json_object_get(root, "batch_size_histogram");
    if (ok && plottable(bh, "batches"))
        ok = bars_plot(o, gnuplot, "batch-size-histogram", "Batch sizes", "Batches by their number of ops",
                       bh, "name", "batches", "ops per batch", "batches");
    const json_t *f = json_object_get(root, "findings");
    if (ok && plottable(f, "count"))
        ok = bars_plot(o, gnuplot, "findings", "Findings by rule",
                       "Findings of the validator, by rule (`cubatchtrace rules` explains each)", f, "rule", "count",
                       "rule", "findings");
    else if (ok)
        fputs("<p class=\"none\">No finding to plot.</p>\n", o);
    return ok;
}

/* The whole page; false after one line on stderr. */
static bool write_page(FILE *o, const json_t *root, const char *gnuplot)
{
    const json_t *in = json_object_get(root, "inputs"), *v;
    size_t i;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>cubatchtrace report: ",
          o);
    json_array_foreach(in, i, v) {
        fputs(i ? ", " : "", o);
        esc(o, json_string_value(v));
    }
    fprintf(o, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>cubatchtrace report</h1>\n<p>Traces: ", css);
    json_array_foreach(in, i, v) {
        fputs(i ? ", " : "", o);
        fputs("<code>", o);
        esc(o, json_string_value(v));
        fputs("</code>", o);
    }
    fputs("<br>Hosts: ", o);
    json_array_foreach(json_object_get(root, "hosts"), i, v) {
        fputs(i ? ", " : "", o);
        esc(o, json_string_value(v));
    }
    fputs("<br>Recorded by cubatchtrace ", o);
    json_array_foreach(json_object_get(root, "recorded_by"), i, v) {
        fputs(i ? ", " : "", o);
        esc(o, json_string_value(v));
    }
    fputs("; read by ", o);
    esc(o, jstr(root, "read_by"));
    fputs(".</p>\n<nav><a href=\"#totals\">Totals</a> · <a href=\"#plots\">Plots</a> · <a href=\"#gpu\">GPU time</a>"
          " · <a href=\"#tables\">Tables</a> · <a href=\"#findings\">Findings</a></nav>\n",
          o);
    totals(o, root);
    bool ok = plots_section(o, root, gnuplot);
    if (!ok)
        return false;
    gpu_section(o, json_object_get(root, "gpu"));
    fputs("<h2 id=\"tables\">Tables</h2>\n<h3>Ops by direction</h3>\n", o);
    rows_table(o, "by_direction", json_object_get(root, "by_direction"), op_cols, NCOLS(op_cols), "No op.");
    fputs("<h3>Ops by memory kinds (source->destination)</h3>\n", o);
    rows_table(o, "by_memkinds", json_object_get(root, "by_memkinds"), op_cols, NCOLS(op_cols), "No op.");
    fputs("<h3>Bytes by device</h3>\n", o);
    rows_table(o, "by_device", json_object_get(root, "by_device"), device_cols, NCOLS(device_cols),
               "No op on device memory.");
    fputs("<h3>Batch-size histogram (ops per batch)</h3>\n", o);
    rows_table(o, "batch_size_histogram", json_object_get(root, "batch_size_histogram"), batch_cols,
               NCOLS(batch_cols), "No batch.");
    fputs("<h3>Op-size histogram (bytes per op)</h3>\n", o);
    rows_table(o, "op_size_histogram", json_object_get(root, "op_size_histogram"), op_cols, NCOLS(op_cols),
               "No op.");
    fputs("<h3>Batches by API variant and door</h3>\n", o);
    rows_table(o, "by_api_door", json_object_get(root, "by_api_door"), batch_cols, NCOLS(batch_cols), "No batch.");
    fputs("<h3>Top call sites</h3>\n", o);
    rows_table(o, "callers", json_object_get(root, "callers"), batch_cols, NCOLS(batch_cols), "No batch.");
    fputs("<h3>Processes</h3>\n", o);
    rows_table(o, "by_process_rank", json_object_get(root, "by_process_rank"), proc_cols, NCOLS(proc_cols),
               "No process.");
    fputs("<h2 id=\"findings\">Findings by rule</h2>\n", o);
    findings_table(o, json_object_get(root, "findings"));
    fputs("<p>The summary itself (<code>cubatchtrace summary --json</code>, docs/json-schema.md) is in this page's "
          "source, in the script element <code>cubatchtrace-summary</code>.</p>\n"
          "<script type=\"application/json\" id=\"cubatchtrace-summary\">\n",
          o);
    embed_json(o, root);
    fputs("\n</script>\n</body>\n</html>\n", o);
    return true;
}

/* ---------------------------------------------------------------- the command */

struct report_job {
    struct cbt_read_opts ro;
    int jobs;
    const char *gnuplot; /* NULL: no plots */
    FILE *out;
};

static int render(const json_t *root, const struct report_job *j)
{
    if (!write_page(j->out, root, j->gnuplot))
        return 2;
    if (fflush(j->out) != 0 || ferror(j->out)) {
        cbt_err("writing the page: %s", strerror(errno));
        return 2;
    }
    return 0;
}

static int report_read(void *arg)
{
    const struct report_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(0);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    int rc = cbt_read_parallel(&j->ro, a, j->jobs);
    if (rc == 0) {
        cbt_progress();
        json_t *root = cbt_agg_summary_json(a, j->ro.inputs, j->ro.ninputs);
        rc = root ? render(root, j) : 2;
        json_decref(root);
    }
    cbt_agg_free(a);
    return rc;
}

int cbt_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},  {"no-plots", no_argument, NULL, 'n'},
        {"from-json", required_argument, NULL, 'F'}, {"pid", required_argument, NULL, 'p'},
        {"jobs", required_argument, NULL, 'J'},    {"begin", required_argument, NULL, 'B'},
        {"end", required_argument, NULL, 'E'},     {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    struct report_job j = {.jobs = 0};
    int64_t *pids = NULL;
    const char *out = NULL, *from = NULL, *begin = NULL, *end = NULL;
    char *gnuplot = NULL, *tmp = NULL;
    bool plots = true;
    int npids = 0, c, rc = 2, fd = -1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'n': plots = false; break;
        case 'F': from = optarg; break;
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto done; break;
        case 'J': {
            char *stop;
            long v = strtol(optarg, &stop, 10);
            if (stop == optarg || *stop || v < 1 || v > 4096) {
                cbt_usage_error("--jobs %s: expected a number of threads from 1 to 4096", optarg);
                goto done;
            }
            j.jobs = (int)v;
            break;
        }
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_report, stdout); rc = 0; goto done;
        default: cbt_option_error("report", c, argv, opts); goto done;
        }
    }
    if (!out || !*out) {
        cbt_usage_error("no output file given (-o FILE.html)");
        goto done;
    }
    if (from && (optind < argc || npids || begin || end)) {
        cbt_usage_error("--from-json takes a saved summary: no trace, --pid, --begin or --end with it");
        goto done;
    }
    if (!from && optind >= argc) {
        cbt_usage_error("no trace given");
        goto done;
    }
    if (plots && !(gnuplot = find_gnuplot()))
        goto done;
    j.gnuplot = gnuplot;
    /* the page goes to a file beside FILE, renamed over it once written */
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
        cbt_err("-o %s: not a regular file", out);
        goto done;
    }
    if (asprintf(&tmp, "%s.XXXXXX", out) < 0) {
        tmp = NULL;
        cbt_err("out of memory");
        goto done;
    }
    if ((fd = mkstemp(tmp)) < 0 || !(j.out = fdopen(fd, "w"))) {
        cbt_err("-o %s: cannot write there: %s", out, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        tmp = NULL;
        goto done;
    }
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    if (from) {
        json_error_t e;
        json_t *root = json_load_file(from, 0, &e);
        if (!root)
            cbt_err("--from-json %s: %s (line %d)", from, e.text, e.line);
        else if (strcmp(jstr(root, "schema"), "cubatchtrace-summary") != 0)
            cbt_err("--from-json %s: not a summary of cubatchtrace (its \"schema\" is not \"cubatchtrace-summary\")",
                    from);
        else
            rc = render(root, &j);
        json_decref(root);
    } else {
        j.ro = (struct cbt_read_opts){
            .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end};
        cbt_guard_on_failure(2, tmp); /* no unfinished file left behind */
        rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, report_read, &j);
    }
    if (fclose(j.out) != 0 && rc == 0) {
        cbt_err("-o %s: %s", out, strerror(errno));
        rc = 2;
    }
    if (rc == 0 && rename(tmp, out) != 0) {
        cbt_err("-o %s: %s", out, strerror(errno));
        rc = 2;
    }
    if (rc != 0)
        unlink(tmp);
done:
    free(tmp);
    free(gnuplot);
    free(pids);
    return rc;
}
