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
 * The data is the object `summary --json` prints (render/json.c), built in
 * process from the aggregate or, with `--from-json`, one saved earlier; the
 * page is render/page.c's (its plots: analyse/series.c picks, render/plots.c
 * and render/gnuplot.c draw).  The command keeps its options and the file,
 * written beside FILE and renamed over it once whole.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "analyse/advice.h"
#include "analyse/agg.h"
#include "commands.h"
#include "guard.h"
#include "render/gnuplot.h"
#include "render/json.h"
#include "render/page.h"
#include "parallel.h"
#include "read/reader.h"
#include "base/util.h"

static const char usage_report[] =
    "Usage: cubatchtrace report -o FILE.html [--no-plots] [--pid PID]... [--jobs N]\n"
    "                           [--advice NAME=V]... [--advice-costs FILE]\n"
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
    CBT_USAGE_ADVICE
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n"
    "gnuplot is found on PATH, or named by CUBATCHTRACE_GNUPLOT (Debian: gnuplot-nox).\n"
    "\n"
    "Exit status: 0 written; 2 the input could not be read, gnuplot is missing or\n"
    "failed, FILE cannot be written or the command line is wrong (one line on\n"
    "stderr; FILE is left as it was).\n";

/* ---------------------------------------------------------------- the command */

struct report_job {
    struct cbt_read_opts ro;
    int jobs;
    const char *gnuplot; /* NULL: no plots */
    FILE *out;
};

static int render(const json_t *root, const struct report_job *j)
{
    if (!cbt_render_page(j->out, root, j->gnuplot))
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
        {"advice", required_argument, NULL, 1001}, {"advice-costs", required_argument, NULL, 1002},
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
        case 1001: if (cbt_advice_option(optarg) != 0) goto done; break;
        case 1002: if (cbt_advice_costs(optarg) != 0) goto done; break;
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
    if (plots && !(gnuplot = cbt_gnuplot_find()))
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
        else if (!json_is_string(json_object_get(root, "schema")) ||
                 strcmp(json_string_value(json_object_get(root, "schema")), "cubatchtrace-summary") != 0)
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

