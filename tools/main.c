/*
 * cubatchtrace: record and read the batches of cuMemcpy3DBatchAsync.
 *
 *   cubatchtrace run [OPTIONS] -- PROGRAM ARGS...
 *   cubatchtrace summary [OPTIONS] TRACE...
 *   cubatchtrace check [OPTIONS] TRACE...
 *   cubatchtrace rules
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cbt.h"

void cbt_err(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (char *p = buf; *p; p++) /* one line, always */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s: %s\n", CBT_PROG, buf);
}

uint64_t cbt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char usage_main[] =
    "Usage: cubatchtrace COMMAND [OPTIONS] ...\n"
    "Record every cuMemcpy3DBatchAsync batch of a program with LTTng and summarise it.\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] -- PROGRAM ARGS...   trace PROGRAM, then print the summary\n"
    "  summary [OPTIONS] TRACE...         summarise recorded traces or a live session\n"
    "  check [OPTIONS] TRACE...           list validator findings; exit 1 when one is serious\n"
    "  rules                              the validator's rules, one line each\n"
    "\n"
    "`cubatchtrace COMMAND --help` describes each command; see also cubatchtrace(1).\n";

static const char usage_summary[] =
    "Usage: cubatchtrace summary [--json] [--by WHAT]... [--pid PID]... TRACE...\n"
    "Summarise the cubatchtrace events of one or more traces.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces, i.e. for `metadata`\n"
    "files: several processes and hosts are fine) or an LTTng live URL\n"
    "(net://HOST[:PORT]/host/TRACED-HOST/SESSION).\n"
    "\n"
    "  --json            print the summary as JSON (schema: docs/json-schema.md)\n"
    "  --by WHAT         add a table by process, thread or stream, or list up to\n"
    "                    4096 call sites instead of the top 64 (caller);\n"
    "                    repeatable, or comma-separated\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 printed, 2 the input could not be read (one line on stderr).\n";

static const char usage_check[] =
    "Usage: cubatchtrace check [--fail-on SEVERITY] [--pid PID]... TRACE...\n"
    "Print every validator finding recorded in the traces, one line each, with where\n"
    "it happened (host, pid, tid, batch, op, caller).\n"
    "\n"
    "  --fail-on SEV     error, hazard (default) or warning: exit 1 when a finding\n"
    "                    of this severity or a more serious one exists\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 clean, 1 a finding at or above the threshold, 2 the input could\n"
    "not be read.\n";

static const char usage_rules[] =
    "Usage: cubatchtrace rules\n"
    "List the validator's rules: name, severity and one line of explanation.\n";

static int parse_by(const char *s, unsigned *by)
{
    char *dup = strdup(s), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "process") == 0)
            *by |= CBT_BY_PROCESS;
        else if (strcmp(t, "thread") == 0)
            *by |= CBT_BY_THREAD;
        else if (strcmp(t, "stream") == 0)
            *by |= CBT_BY_STREAM;
        else if (strcmp(t, "caller") == 0)
            *by |= CBT_BY_CALLER;
        else {
            cbt_err("--by %s: expected process, thread, stream or caller", t);
            rc = -1;
        }
    }
    free(dup);
    return rc;
}

static int parse_pid(const char *s, int64_t **pids, int *npids)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < 0) {
        cbt_err("--pid %s: not a process id", s);
        return -1;
    }
    int64_t *n = realloc(*pids, sizeof(*n) * (size_t)(*npids + 1));
    if (!n)
        return -1;
    *pids = n;
    n[(*npids)++] = v;
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

static int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"by", required_argument, NULL, 'b'},
        {"pid", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0},
    };
    bool json = false;
    unsigned by = 0;
    int64_t *pids = NULL;
    int npids = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'b': if (parse_by(optarg, &by) != 0) return 2; break;
        case 'p': if (parse_pid(optarg, &pids, &npids) != 0) return 2; break;
        case 'h': fputs(usage_summary, stdout); return 0;
        default: fputs(usage_summary, stderr); return 2;
        }
    }
    if (optind >= argc) {
        cbt_err("summary: no trace given (see `cubatchtrace summary --help`)");
        return 2;
    }
    struct cbt_agg *a = cbt_agg_new(by);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    struct cbt_read_opts ro = {(const char *const *)argv + optind, argc - optind, pids, npids, false};
    int rc = cbt_read(&ro, a);
    if (rc == 0) {
        cbt_agg_finish(a);
        if (json)
            rc = cbt_agg_print_json(a, stdout, ro.inputs, ro.ninputs) == 0 ? 0 : 2;
        else
            cbt_agg_print_text(a, stdout, ro.inputs, ro.ninputs);
    }
    cbt_agg_free(a);
    free(pids);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"fail-on", required_argument, NULL, 'f'}, {"pid", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0},
    };
    int threshold = CBT_SEV_HAZARD, c, npids = 0;
    int64_t *pids = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((threshold = parse_severity(optarg)) < 0) {
                cbt_err("--fail-on %s: expected error, hazard or warning", optarg);
                return 2;
            }
            break;
        case 'p': if (parse_pid(optarg, &pids, &npids) != 0) return 2; break;
        case 'h': fputs(usage_check, stdout); return 0;
        default: fputs(usage_check, stderr); return 2;
        }
    }
    if (optind >= argc) {
        cbt_err("check: no trace given (see `cubatchtrace check --help`)");
        return 2;
    }
    struct cbt_agg *a = cbt_agg_new(0);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    cbt_agg_set_finding_printer(a, stdout);
    struct cbt_read_opts ro = {(const char *const *)argv + optind, argc - optind, pids, npids, false};
    int rc = cbt_read(&ro, a);
    if (rc == 0) {
        cbt_agg_finish(a);
        cbt_agg_flush_findings(a);
        uint64_t n[3];
        for (unsigned s = 0; s < 3; s++)
            n[s] = cbt_agg_findings_at_or_above(a, s) - (s ? cbt_agg_findings_at_or_above(a, s - 1) : 0);
        uint64_t serious = cbt_agg_findings_at_or_above(a, (unsigned)threshold);
        printf("# %" PRIu64 " findings: %" PRIu64 " error, %" PRIu64 " hazard, %" PRIu64 " warning; %" PRIu64
               " at or above %s\n",
               cbt_agg_findings_total(a), n[0], n[1], n[2], serious, cbt_severity_name((unsigned)threshold));
        rc = serious ? 1 : 0;
    }
    cbt_agg_free(a);
    free(pids);
    return rc;
}

static int cmd_rules(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_rules, stdout);
        return 0;
    }
    if (argc > 1) {
        fputs(usage_rules, stderr);
        return 2;
    }
    size_t w = 4;
    for (unsigned i = 0; i < CBT_RULE_COUNT; i++)
        if (strlen(cbt_rules[i].name) > w)
            w = strlen(cbt_rules[i].name);
    printf("# The rules of the cubatchtrace validator (%d). Severity: error = the driver rejects the batch or\n"
           "# crashes; hazard = accepted, but the result is undefined; warning = accepted, but slow or ignored.\n",
           (int)CBT_RULE_COUNT);
    printf("%-*s | %-8s | %s\n", (int)w, "Rule", "Severity", "Explanation");
    for (unsigned i = 0; i < CBT_RULE_COUNT; i++)
        printf("%-*s | %-8s | %s\n", (int)w, cbt_rules[i].name, cbt_severity_name(cbt_rules[i].severity),
               cbt_rules[i].text);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            const char *sub = argv[2];
            fputs(strcmp(sub, "summary") == 0 ? usage_summary
                  : strcmp(sub, "check") == 0 ? usage_check
                  : strcmp(sub, "rules") == 0 ? usage_rules
                                              : usage_main,
                  stdout);
            if (strcmp(sub, "run") == 0) {
                char *av[] = {(char *)"run", (char *)"--help", NULL};
                return cbt_cmd_run(2, av);
            }
            return 0;
        }
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cubatchtrace %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cbt_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "summary") == 0)
        return cmd_summary(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "rules") == 0)
        return cmd_rules(argc - 1, argv + 1);
    cbt_err("unknown command `%s` (see `cubatchtrace --help`)", cmd);
    return 2;
}
