/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace: record and read the batch copies (3D and 1D) of CUDA programs.
 *
 *   cubatchtrace run [OPTIONS] -- PROGRAM ARGS...
 *   cubatchtrace summary [OPTIONS] TRACE...
 *   cubatchtrace check [OPTIONS] TRACE...
 *   cubatchtrace show [OPTIONS] TRACE...
 *   cubatchtrace timeline -o FILE [OPTIONS] TRACE...
 *   cubatchtrace report -o FILE.html [OPTIONS] TRACE...
 *   cubatchtrace export -o FILE.sqlite [OPTIONS] TRACE...
 *   cubatchtrace rules
 *
 * The commands that decode traces do it behind guard.c: a damaged trace that
 * crashes or hangs libbabeltrace2 costs one line on stderr and exit status 2.
 *
 * The tool, top down by stage (each file hands work down, never back up; a
 * file includes headers of its own folder and of the folders below it):
 * tools/, the commands
 *   main.c      command line; summary, check and rules
 *   run.c       `run`: options, then session.c's session and program, then the summary
 *   session.c   the lttng calls of a session, its daemon, the traced program's spawn
 *   show.c      `show`: every batch, op and finding, one per line
 *   timeline.c  `timeline`: a Chrome trace-event file (Perfetto, chrome://tracing):
 *               analyse/timeline.c, then render/trace_event.c
 *   report.c    `report`: the summary as one HTML page, plots by gnuplot:
 *               render/json.c's summary, then render/page.c
 *   export.c    `export`: every batch, op and finding as SQLite tables or CSV files
 *   relay.c     `run --relayd`: the host's shared daemon and session, its keeper
 *   summary.c   what `summary` and `run` read and print
 *   guard.c     decoding behind a guard: memory limit, fatal signals, watchdog
 *   parallel.c  trace directories read on several threads, merged
 * render/, what people read
 *   findings.c  the outputs of `check`: text, JSON, SARIF; waivers applied
 *   text.c      the text summary and the finding lines of `check`
 *   json.c      the JSON summary
 *   hosts.c     the rows by host and by process: text tables and JSON members
 *   trace_event.c  the timeline as a Chrome trace-event file
 *   page.c      the report's HTML page: totals, plots, tables, the summary JSON
 *   plots.c     the report's plots: a gnuplot script and a table of the same numbers each
 *   gnuplot.c   gnuplot found and run, its SVG inline in a figure
 *   html.c      the report's HTML cells (the text summary's units) and tables
 *   sqlite.c    the tables of `export` (libsqlite3); csv.c: the same as CSV files
 * analyse/, the aggregate
 *   agg.c       streaming aggregation in bounded tables, pairing
 *   agg_out.c   the aggregate as what the reader hands its results to
 *   advice.c    the advice rules: what to change in the batches, and what it saves
 *   agg_gpu.c   GPU time of the batches (gpu_time events): its tables, over time
 *   ktab.c      keys of three words: their index, and on it the bounded tables
 *               (processes, threads, streams, call sites)
 *   classes.h   how ops are classed: directions, memory classes, power-of-two bins
 *   tables.c    the aggregate as rows of tables, for both outputs
 *   hosts.c     the rows by host and by process with its rank, for both outputs
 *   timeline.c  the timeline: batch calls, GPU spans, flows, findings on tracks, in order
 *   series.c    what the report's plots draw, picked from the summary JSON
 *   waivers.c   the waiver file: known findings accepted, with a reason
 *   callsite.c  naming a caller address (statedump + libdw: file:line, function)
 * read/, the reading library (libcbtread.la; the babeltrace2 plugin links it too)
 *   reader.c    babeltrace2 graph: one source and one muxer per trace, our own sink;
 *               or a message at a time (the plugin); the events decoded by name
 *   compact.c   the compact record (formats 3, 4) decoded with its threads' dictionaries
 *   assemble.c  batches put back together from their chunks, validated
 *   gpujoin.c   each gpu_time event joined with its batch (struct cbt_ev_gpu)
 *   precheck.c  a trace's packet framing checked before babeltrace2 reads it (cut packets refused)
 * base/
 *   records.h   what the reader hands down (events, a batch whole), and struct
 *               cbt_read_out, what it hands it to
 *   util.c      error lines, the clock, usage errors, option values, progress, human units
 * plugin/expand.c, the other front end of read/: filter.cubatchtrace.expand,
 * the batches as events of babeltrace2's own graphs
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cubatchtrace/catalog.h>

#include "analyse/advice.h"
#include "analyse/agg.h"
#include "analyse/callsite.h"
#include "commands.h"
#include "render/findings.h"
#include "guard.h"
#include "render/json.h"
#include "read/reader.h"
#include "render/text.h"
#include "base/util.h"
#include "analyse/waivers.h"

/* The exit statuses of `check`; when several apply, the lowest. */
enum {
    CHECK_CLEAN = 0,
    CHECK_FINDINGS = 1,    /* a finding at or above the threshold */
    CHECK_UNREADABLE = 2,  /* and usage errors */
    CHECK_DISAGREEING = 3, /* the shim's inline findings differ from the read-time validator's */
    CHECK_LOST = 4,        /* the tracer discarded events or packets */
};

static const char usage_main[] =
    "Usage: cubatchtrace COMMAND [OPTIONS] ...\n"
    "Record the batch copies (3D and 1D: cuMemcpy3DBatchAsync, cuMemcpyBatchAsync)\n"
    "of a program with LTTng and summarise them.\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] -- PROGRAM ARGS...   trace PROGRAM, then print the summary\n"
    "  summary [OPTIONS] TRACE...         summarise recorded traces or a live session\n"
    "  check [OPTIONS] TRACE...           list validator findings; exit 1 when one is serious\n"
    "  show [OPTIONS] TRACE...            print every batch, op and finding decoded, one per line\n"
    "  timeline -o FILE [OPTIONS] TRACE...  write a Chrome trace-event file (ui.perfetto.dev)\n"
    "  report -o FILE.html TRACE...       the summary as one HTML page with plots (gnuplot)\n"
    "  export -o FILE.sqlite TRACE...     every batch, op and finding as SQLite tables (or CSV)\n"
    "  rules                              the rules (validator and advice), one line each\n"
    "\n"
    "`cubatchtrace COMMAND --help` describes each command; see also cubatchtrace(1).\n";

#define USAGE_READING                                                                    \
    "Reading is guarded: CUBATCHTRACE_MAX_MEMORY (default the smaller of 8G and\n"       \
    "half the memory) limits its memory, CUBATCHTRACE_TIMEOUT (default 30 s) how\n"      \
    "long the decoder, or a live peer, may go without progress.\n"

static const char usage_summary[] =
    "Usage: cubatchtrace summary [--json | --output-json FILE | --raw] [--all]\n"
    "                            [--by WHAT]... [--pid PID]... [--jobs N] [--refresh S]\n"
    "                            [--skip-frames LIB]... [--advice NAME=V]... [--advice-costs FILE]\n"
    "                            [--begin TIME] [--end TIME] TRACE...\n"
    "Summarise the cubatchtrace events of one or more traces: the totals, the call\n"
    "sites, the directions of the copies, and the findings (each rule's first one,\n"
    "most serious first, where it was made and what to change); --all for every table.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces, i.e. for `metadata`\n"
    "files: several processes and hosts are fine) or an LTTng live URL\n"
    "(net://HOST[:PORT]/host/TRACED-HOST/SESSION).\n"
    "\n"
    "  --json            print the summary as JSON (schema: docs/json-schema.md)\n"
    "  --output-json FILE  write the JSON summary to FILE instead (implies --json)\n"
    "  --raw             text: bytes and times as exact integers (bytes, ns)\n"
    "                    instead of human units\n"
    "  --all             text: every table (by API variant, door, memory kinds,\n"
    "                    srcAccessOrder, batch size, op size), not the first screen\n"
    "  --by WHAT         add a table by process, thread, stream or host, or list up\n"
    "                    to 4096 call sites instead of the top 64 (caller);\n"
    "                    repeatable, or comma-separated\n"
    "  --skip-frames LIB place each batch and finding at the first frame of its\n"
    "                    stack (run --stack N) outside LIB (e.g. libfoo.so) and\n"
    "                    outside libcubatchtrace, libcuda, libcudart; repeatable\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    "  --jobs N          read up to N trace directories at once, one thread each\n"
    "                    (default: one per CPU); the summary is the same for any N\n"
    "  --refresh S       live URLs: also print the summary so far every S seconds;\n"
    "                    the final one follows when the sessions end\n"
    CBT_USAGE_ADVICE
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n" USAGE_READING
    "\n"
    "Exit status: 0 printed; 2 the input could not be read, damaged or the command\n"
    "line is wrong (one line on stderr, nothing on stdout).\n";

static const char usage_check[] =
    "Usage: cubatchtrace check [--fail-on SEVERITY] [--format FMT] [--source-root DIR] [--waivers FILE]\n"
    "                          [--allow-discarded] [--skip-frames LIB]... [--pid PID]...\n"
    "                          [--advice NAME=V]... [--advice-costs FILE] [--begin TIME] [--end TIME] TRACE...\n"
    "Print every validator finding recorded in the traces, one line each, with where\n"
    "it happened (host, pid, tid, batch, op, caller: FILE:LINE where known), what is\n"
    "wrong in words and what to change (fix: ...).  A trace recorded with\n"
    "`run --stack N` names the caller's callers too (SITE <- CALLER <- ...; JSON\n"
    "`callers`, SARIF relatedLocations).\n"
    "\n"
    "  --fail-on SEV     error, hazard (default), warning or advice: exit 1 when a\n"
    "                    finding of this severity or a more serious one exists,\n"
    "                    not waived (advice is listed, but counts only here)\n"
    "  --format FMT      text (default), json (docs/json-schema.md) or sarif\n"
    "                    (SARIF 2.1.0, for code-scanning services)\n"
    "  --source-root DIR SARIF: source paths relative to DIR (uriBaseId SRCROOT;\n"
    "                    default the current directory)\n"
    "  --waivers FILE    accept known findings: a JSON file of waivers, each a rule,\n"
    "                    call-site patterns (object, function, file) and a reason;\n"
    "                    waived findings are printed as such and never fail\n"
    "  --allow-discarded do not fail when the tracer lost events or packets\n"
    "  --skip-frames LIB place each finding at the first frame of its stack (run\n"
    "                    --stack N) outside LIB (e.g. libfoo.so); repeatable\n"
    CBT_USAGE_ADVICE
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n" USAGE_READING
    "\n"
    "Exit status (when several apply, the lowest):\n"
    "  0  clean\n"
    "  1  a finding at or above the threshold that no waiver covers\n"
    "  2  the input could not be read, damaged, the command line is wrong or the\n"
    "     waiver file cannot be used (one line on stderr, nothing on stdout)\n"
    "  3  the shim's inline findings differ from those the reader's validator makes\n"
    "  4  the tracer discarded events or packets: findings may be missing\n"
    "     (unless --allow-discarded)\n";

static const char usage_rules[] =
    "Usage: cubatchtrace rules\n"
    "List the validator's rules and the advice rules: name, severity and one line\n"
    "of explanation.\n";

/* ---------------------------------------------------------------- options */

static int parse_by(const char *s, unsigned *by)
{
    char *dup = strdup(s), *save = NULL;
    int rc = 0;
    if (!dup) {
        cbt_err("out of memory");
        return -1;
    }
    for (char *t = strtok_r(dup, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "process") == 0)
            *by |= CBT_BY_PROCESS;
        else if (strcmp(t, "thread") == 0)
            *by |= CBT_BY_THREAD;
        else if (strcmp(t, "stream") == 0)
            *by |= CBT_BY_STREAM;
        else if (strcmp(t, "caller") == 0)
            *by |= CBT_BY_CALLER;
        else if (strcmp(t, "host") == 0)
            *by |= CBT_BY_HOST;
        else {
            cbt_usage_error("--by %s: expected process, thread, stream, caller or host", t);
            rc = -1;
        }
    }
    free(dup);
    return rc;
}

/* An integer from lo to hi; -1 when it is not one. */
static int parse_count(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_severity(const char *s)
{
#define CBT_SEV_MATCH_(ID, val, name) \
    if (strcmp(s, name) == 0)         \
        return val;
    CBT_SEVERITY_LIST(CBT_SEV_MATCH_)
#undef CBT_SEV_MATCH_
    return -1;
}

/* ---------------------------------------------------------------- summary */


static int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"by", required_argument, NULL, 'b'},
        {"pid", required_argument, NULL, 'p'}, {"jobs", required_argument, NULL, 'J'},
        {"refresh", required_argument, NULL, 'R'}, {"help", no_argument, NULL, 'h'},
        {"begin", required_argument, NULL, 'B'}, {"end", required_argument, NULL, 'E'},
        {"raw", no_argument, NULL, 'r'}, {"all", no_argument, NULL, 'A'},
        {"output-json", required_argument, NULL, 'O'}, {"skip-frames", required_argument, NULL, 'K'},
        {"advice", required_argument, NULL, 1001}, {"advice-costs", required_argument, NULL, 1002}, {0, 0, 0, 0},
    };
    struct cbt_summary_job j = {.json = false, .live_fd = -1};
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    int npids = 0, c, rc = 2;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': j.json = true; break;
        case 'O': j.json = true; j.json_path = optarg; break;
        case 'r': j.raw = true; break;
        case 'A': j.by |= CBT_BY_ALL; break;
        case 'K': cbt_callsite_skip(optarg); break;
        case 1001: if (cbt_advice_option(optarg) != 0) goto out; break;
        case 1002: if (cbt_advice_costs(optarg) != 0) goto out; break;
        case 'b': if (parse_by(optarg, &j.by) != 0) goto out; break;
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
        case 'J':
            if (parse_count(optarg, 1, 4096, &j.jobs) != 0) {
                cbt_usage_error("--jobs %s: expected a number of threads from 1 to 4096", optarg);
                goto out;
            }
            break;
        case 'R': {
            char *stop;
            j.refresh = strtod(optarg, &stop);
            if (stop == optarg || *stop || !(j.refresh >= 0.1 && j.refresh <= 86400)) {
                cbt_usage_error("--refresh %s: expected seconds from 0.1 to 86400", optarg);
                goto out;
            }
            break;
        }
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_summary, stdout); rc = 0; goto out;
        default: cbt_option_error("summary", c, argv, opts); goto out;
        }
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    j.ro = (struct cbt_read_opts){
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end};
    if (j.refresh > 0)
        j.live_fd = dup(STDOUT_FILENO);
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, cbt_summary_read, &j);
    if (j.live_fd >= 0)
        close(j.live_fd);
out:
    free(pids);
    return rc;
}

/* ---------------------------------------------------------------- check */

struct check_job {
    struct cbt_read_opts ro;
    int threshold;
    bool allow_discarded;
    enum cbt_check_format format;
    struct cbt_waivers *waivers;
    const char *source_root;
};

static int check_read(void *arg)
{
    const struct check_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(0);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    struct cbt_findings *out = cbt_findings_new(a, stdout, j->format, j->waivers, j->source_root);
    if (!out) {
        cbt_err("out of memory");
        cbt_agg_free(a);
        return 2;
    }
    cbt_agg_on_finding(a, cbt_findings_add, out);
    struct cbt_read_out ro_out;
    cbt_agg_read_out(a, &ro_out);
    int rc = cbt_read(&j->ro, &ro_out);
    if (rc == 0) {
        cbt_progress();
        cbt_agg_finish(a);
        cbt_findings_flush(out);
        struct cbt_check_totals t = {.threshold = (unsigned)j->threshold, .allow_discarded = j->allow_discarded};
        t.findings = cbt_agg_findings_total(a);
        for (unsigned s = 0; s < 4; s++)
            t.by_severity[s] = cbt_agg_findings_at_or_above(a, s) - (s ? cbt_agg_findings_at_or_above(a, s - 1) : 0);
        t.waived = cbt_findings_waived(out);
        t.serious = cbt_agg_findings_at_or_above(a, t.threshold) - cbt_findings_waived_at_or_above(out, t.threshold);
        cbt_agg_lost(a, &t.lost_events, &t.lost_packets, &t.lost_uncounted);
        bool lost = t.lost_events || t.lost_packets || t.lost_uncounted;
        const struct cbt_read_stats *rs = cbt_agg_get_read_stats(a);
        t.malformed = rs->malformed;
        t.incomplete = rs->incomplete;
        t.given_up = rs->given_up;
        t.disagreeing = cbt_agg_inline_disagreeing(a);
        rc = t.serious                        ? CHECK_FINDINGS
             : t.disagreeing                  ? CHECK_DISAGREEING
             : lost && !j->allow_discarded    ? CHECK_LOST
                                              : CHECK_CLEAN;
        t.exit_status = rc;
        cbt_findings_end(out, &t);
    }
    cbt_findings_free(out);
    cbt_agg_free(a);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"fail-on", required_argument, NULL, 'f'}, {"allow-discarded", no_argument, NULL, 'a'},
        {"pid", required_argument, NULL, 'p'},     {"format", required_argument, NULL, 'F'},
        {"waivers", required_argument, NULL, 'w'}, {"help", no_argument, NULL, 'h'},
        {"begin", required_argument, NULL, 'B'},   {"end", required_argument, NULL, 'E'},
        {"source-root", required_argument, NULL, 'S'}, {"skip-frames", required_argument, NULL, 'K'},
        {"advice", required_argument, NULL, 1001}, {"advice-costs", required_argument, NULL, 1002}, {0, 0, 0, 0},
    };
    struct check_job j = {.threshold = CBT_SEV_HAZARD, .format = CBT_CHECK_TEXT};
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    int npids = 0, c, rc = CHECK_UNREADABLE;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((j.threshold = parse_severity(optarg)) < 0) {
                cbt_usage_error("--fail-on %s: expected error, hazard, warning or advice", optarg);
                goto out;
            }
            break;
        case 'a': j.allow_discarded = true; break;
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'S': j.source_root = optarg; break;
        case 'K': cbt_callsite_skip(optarg); break;
        case 1001: if (cbt_advice_option(optarg) != 0) { rc = CHECK_UNREADABLE; goto out; }; break;
        case 1002: if (cbt_advice_costs(optarg) != 0) { rc = CHECK_UNREADABLE; goto out; }; break;

        case 'F':
            if (strcmp(optarg, "text") == 0)
                j.format = CBT_CHECK_TEXT;
            else if (strcmp(optarg, "json") == 0)
                j.format = CBT_CHECK_JSON;
            else if (strcmp(optarg, "sarif") == 0)
                j.format = CBT_CHECK_SARIF;
            else {
                cbt_usage_error("--format %s: expected text, json or sarif", optarg);
                goto out;
            }
            break;
        case 'w':
            if (j.waivers) {
                cbt_usage_error("--waivers given twice: one file holds every waiver");
                goto out;
            }
            if (!(j.waivers = cbt_waivers_load(optarg)))
                goto out;
            break;
        case 'h': fputs(usage_check, stdout); rc = CHECK_CLEAN; goto out;
        default: cbt_option_error("check", c, argv, opts); goto out;
        }
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    j.ro = (struct cbt_read_opts){
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end};
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, check_read, &j);
out:
    cbt_waivers_free(j.waivers);
    free(pids);
    return rc;
}

/* ---------------------------------------------------------------- rules */

static int cmd_rules(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        if (c != 'h')
            return cbt_option_error("rules", c, argv, opts);
        fputs(usage_rules, stdout);
        return 0;
    }
    if (optind < argc) {
        cbt_usage_error("unexpected argument '%s'", argv[optind]);
        return 2;
    }
    size_t w = 4;
    for (unsigned i = 0; i < CBT_RULE_COUNT; i++)
        if (strlen(cbt_rules[i].name) > w)
            w = strlen(cbt_rules[i].name);
    printf("# The rules of the cubatchtrace validator (%d). Severity: error = the driver rejects the batch or\n"
           "# crashes; hazard = accepted, but the result is undefined; warning = accepted, but slow or ignored;\n"
           "# advice = correct, but what to change and what it would save (the tool's, from many ops or batches).\n",
           (int)CBT_RULE_COUNT);
    printf("%-*s | %-8s | %s\n", (int)w, "Rule", "Severity", "Explanation");
    for (unsigned i = 0; i < CBT_RULE_COUNT; i++)
        printf("%-*s | %-8s | %s\n", (int)w, cbt_rules[i].name, cbt_severity_name(cbt_rules[i].severity),
               cbt_rules[i].text);
    return 0;
}

/* ---------------------------------------------------------------- dispatch */

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    {"run", cbt_cmd_run},   {"summary", cmd_summary}, {"check", cmd_check},
    {"show", cbt_cmd_show},     {"timeline", cbt_cmd_timeline}, {"report", cbt_cmd_report}, {"rules", cmd_rules},
    {"export", cbt_cmd_export},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    const char *names[NCOMMANDS + 1];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
    names[NCOMMANDS] = "help";
    const char *near = cbt_closest(name, names, NCOMMANDS + 1);
    if (near)
        cbt_usage_error("unknown command '%s'; did you mean '%s'?", name, near);
    else
        cbt_usage_error("unknown command '%s'", name);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cbt_usage_error("no command given: run, summary, check, show, timeline, report, export or rules");
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        (strcmp(cmd, "help") == 0 && (argc == 2 || strcmp(argv[2], "help") == 0))) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) { /* help COMMAND: COMMAND --help */
        const struct command *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        char *av[] = {argv[2], (char *)"--help", NULL};
        cbt_set_command(c->name);
        return c->fn(2, av);
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cubatchtrace %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (cmd[0] == '-') {
        cbt_usage_error("unknown option '%s': the command comes first", cmd);
        return 2;
    }
    const struct command *c = find_command(cmd);
    if (!c)
        return unknown_command(cmd);
    cbt_set_command(c->name);
    return c->fn(argc - 1, argv + 1);
}
