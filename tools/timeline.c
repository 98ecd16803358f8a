/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace timeline`: the traces as a Chrome trace-event file (the JSON
 * object form) that ui.perfetto.dev and chrome://tracing open.  One complete
 * event per batch call on its calling thread, one per GPU-timed batch on a
 * track of its stream, a flow from each call to its GPU span, each finding
 * an instant on the calling thread; docs/timeline.md says what is written.
 *
 * The command reads the traces into the model (analyse/timeline.c: records
 * on tracks, joined and ordered) and the summary's aggregate beside it, then
 * writes it (render/trace_event.c) to a file that appears only once whole.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyse/agg.h"
#include "analyse/timeline.h"
#include "commands.h"
#include "guard.h"
#include "read/reader.h"
#include "base/util.h"
#include "render/trace_event.h"

static const char usage_timeline[] =
    "Usage: cubatchtrace timeline -o FILE [--max-batches N] [--pid PID]... [--begin TIME] [--end TIME]\n"
    "                             TRACE...\n"
    "Write the traces as a Chrome trace-event file (JSON) for ui.perfetto.dev or\n"
    "chrome://tracing: each batch call on its calling thread, each GPU-timed batch\n"
    "on a track of its stream with a flow from the call, each finding an instant.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces) or an LTTng live URL.\n"
    "\n"
    "  -o, --output FILE  write to FILE (- for the standard output); FILE appears\n"
    "                     only once it is whole\n"
    "  --max-batches N    keep the first N batches put back together and leave the\n"
    "                     rest out (said on stderr and in otherData)\n"
    "  --pid PID          only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help         this text\n"
    "\n"
    "Timestamps are microseconds from the earliest event written (otherData.origin_ns).\n"
    "Reading is guarded (CUBATCHTRACE_MAX_MEMORY, CUBATCHTRACE_TIMEOUT).\n"
    "\n"
    "Exit status: 0 written; 2 the input could not be read, the output cannot be\n"
    "written or the command line is wrong (one line on stderr, no FILE).\n";

struct timeline_job {
    struct cbt_read_opts ro;
    const char *path;   /* "-": standard output */
    int fd;             /* the file being written (-1: standard output) */
    uint64_t max_batches; /* 0: all */
};

/* ---------------------------------------------------------------- the command */

static int timeline_read(void *arg)
{
    const struct timeline_job *j = arg;
    struct cbt_timeline t;
    struct cbt_agg *agg = cbt_agg_new(0);
    int rc = 2;
    FILE *out = NULL;
    if (!agg) {
        cbt_err("out of memory");
        return 2;
    }
    cbt_timeline_init(&t, agg, j->max_batches);
    struct cbt_read_opts ro = j->ro;
    ro.batch = cbt_timeline_batch;
    ro.batch_ctx = &t;
    ro.gpu = cbt_timeline_gpu;
    ro.gpu_ctx = &t;
    struct cbt_read_out to_agg;
    cbt_agg_read_out(agg, &to_agg);
    if (cbt_read(&ro, &to_agg) != 0)
        goto done;
    cbt_progress();
    cbt_agg_finish(agg);
    cbt_timeline_join(&t);
    if (t.oom) {
        cbt_err("out of memory holding %zu events (--max-batches N bounds them)", t.nrecs);
        goto done;
    }
    if (t.batches_left_out)
        cbt_err("stopped after %" PRIu64 " batches (--max-batches): %" PRIu64 " more left out", t.batches,
                t.batches_left_out);
    int fd = j->fd >= 0 ? dup(j->fd) : dup(STDOUT_FILENO);
    if (fd < 0 || !(out = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
        goto done;
    }
    static char buf[1 << 16];
    setvbuf(out, buf, _IOFBF, sizeof(buf));
    if (cbt_timeline_order(&t) != 0) {
        cbt_err("out of memory");
        fclose(out);
        goto done;
    }
    cbt_render_trace_events(out, &t, &j->ro);
    if (fflush(out) != 0 || ferror(out)) {
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
        fclose(out);
        goto done;
    }
    rc = fclose(out) == 0 ? 0 : 2;
    if (rc)
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
done:
    cbt_timeline_free(&t);
    cbt_agg_free(agg);
    return rc;
}

int cbt_cmd_timeline(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"max-batches", required_argument, NULL, 'm'},
        {"pid", required_argument, NULL, 'p'},    {"help", no_argument, NULL, 'h'},
        {"begin", required_argument, NULL, 'B'},  {"end", required_argument, NULL, 'E'},
        {0, 0, 0, 0},
    };
    struct timeline_job j = {.fd = -1};
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    char *tmp = NULL;
    int npids = 0, c, rc = 2;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': j.path = optarg; break;
        case 'm': {
            char *stop;
            errno = 0;
            unsigned long long v = strtoull(optarg, &stop, 10);
            if (stop == optarg || *stop || errno || v == 0 || optarg[0] == '-') {
                cbt_usage_error("--max-batches %s: expected a number of batches, 1 or more", optarg);
                goto out;
            }
            j.max_batches = v;
            break;
        }
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_timeline, stdout); rc = 0; goto out;
        default: cbt_option_error("timeline", c, argv, opts); goto out;
        }
    }
    if (!j.path) {
        cbt_usage_error("no output given: -o FILE (- for the standard output)");
        goto out;
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    if (strcmp(j.path, "-") != 0) {
        /* written beside FILE under another name, renamed once whole: no half file */
        struct stat st;
        if (stat(j.path, &st) == 0 && S_ISDIR(st.st_mode)) {
            cbt_err("cannot write %s: %s", j.path, strerror(EISDIR));
            goto out;
        }
        if (!(tmp = malloc(strlen(j.path) + 16))) {
            cbt_err("out of memory");
            goto out;
        }
        sprintf(tmp, "%s.tmp-XXXXXX", j.path);
        if ((j.fd = mkstemp(tmp)) < 0) {
            cbt_err("cannot write %s: %s", j.path, strerror(errno));
            free(tmp);
            tmp = NULL;
            goto out;
        }
    }
    j.ro = (struct cbt_read_opts){
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end};
    cbt_guard_on_failure(2, tmp); /* no unfinished file left behind */
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, timeline_read, &j);
    if (tmp && rc == 0) {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(j.fd, 0666 & ~mask) != 0 || rename(tmp, j.path) != 0) {
            cbt_err("cannot write %s: %s", j.path, strerror(errno));
            rc = 2;
        }
    }
    if (tmp && rc != 0)
        unlink(tmp);
out:
    if (j.fd >= 0)
        close(j.fd);
    free(tmp);
    free(pids);
    return rc;
}
