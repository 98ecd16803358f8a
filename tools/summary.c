/* SPDX-License-Identifier: MIT */
/*
 * The summary of one or more traces, as `summary` and `run` print it: read,
 * aggregate, print text or JSON.  Runs behind the guard (guard.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyse/agg.h"
#include "commands.h"
#include "render/json.h"
#include "parallel.h"
#include "render/text.h"
#include "base/util.h"

/* A live summary: what was read so far, every j->refresh seconds, on the
 * standard output we were started with (the final summary goes through the
 * guard as always). */
struct live {
    const struct cbt_summary_job *j;
    struct cbt_agg *a;
    uint64_t last_ns;
    unsigned n;
};

static void live_tick(void *ctx)
{
    struct live *l = ctx;
    struct cbt_agg *a = l->a;
    uint64_t now = cbt_now_ns();
    if (now - l->last_ns < (uint64_t)(l->j->refresh * 1e9))
        return;
    l->last_ns = now;
    struct cbt_agg *s = cbt_agg_snapshot(a);
    int fd = dup(l->j->live_fd);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (s && out) {
        time_t t = time(NULL);
        struct tm tm;
        char when[32];
        localtime_r(&t, &tm);
        strftime(when, sizeof(when), "%H:%M:%S", &tm);
        fprintf(out, "# live summary %u at %s (every %g s; batches still waiting for their ops are left out; "
                     "the final summary follows when the sessions end)\n", ++l->n, when, l->j->refresh);
        if (l->j->json)
            cbt_agg_print_json(s, out, l->j->ro.inputs, l->j->ro.ninputs);
        else
            cbt_agg_print_text(s, out, l->j->ro.inputs, l->j->ro.ninputs, l->j->raw);
        fputc('\n', out);
    }
    if (out)
        fclose(out);
    else if (fd >= 0)
        close(fd);
    cbt_agg_free(s);
}

/* The JSON summary, on our standard output or in j->json_path; 0, or 2
 * after one line. */
static int print_json(struct cbt_agg *a, const struct cbt_summary_job *j)
{
    if (!j->json_path)
        return cbt_agg_print_json(a, stdout, j->ro.inputs, j->ro.ninputs) == 0 ? 0 : 2;
    FILE *f = fopen(j->json_path, "w");
    if (!f) {
        cbt_err("--output-json %s: %s", j->json_path, strerror(errno));
        return 2;
    }
    int rc = cbt_agg_print_json(a, f, j->ro.inputs, j->ro.ninputs);
    if (fclose(f) != 0 || rc != 0) {
        cbt_err("--output-json %s: %s", j->json_path, rc ? "cannot write the summary" : strerror(errno));
        return 2;
    }
    return 0;
}

/* The text summary of traces without a batch (a program traced with the
 * shim that made none): a few lines, not empty tables. */
static void print_no_batch(struct cbt_agg *a, const struct cbt_summary_job *j)
{
    uint64_t ev = 0, pk = 0, uncounted = 0;
    cbt_agg_lost(a, &ev, &pk, &uncounted);
    printf("# discarded events: %" PRIu64 "\n# discarded packets: %" PRIu64 "\n", ev, pk);
    printf("# cubatchtrace summary of: %s", j->ro.inputs[0]);
    for (int i = 1; i < j->ro.ninputs; i++)
        printf(", %s", j->ro.inputs[i]);
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    printf("\n# no batch: the program ran with the shim but made no batch copy (3D or 1D)%s\n",
           ev || pk || uncounted ? "; the tracer discarded events: some may be lost" : "");
    cbt_print_fabric_line(stdout, &t);
}

int cbt_summary_read(void *arg)
{
    const struct cbt_summary_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(j->by);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    struct live l = {.j = j, .a = a, .last_ns = cbt_now_ns()};
    struct cbt_read_opts ro = j->ro;
    if (j->refresh > 0 && j->live_fd >= 0) {
        ro.tick = live_tick;
        ro.tick_ctx = &l;
    }
    int rc = cbt_read_parallel(&ro, a, j->jobs);
    if (rc == 0) {
        cbt_progress();
        cbt_agg_finish(a);
        struct cbt_agg_totals t;
        cbt_agg_totals(a, &t);
        bool none = j->program && cbt_agg_batches(a) == 0 && t.fabric_calls == 0;
        if (none)
            cbt_err("run: %s made no batch copy (3D or 1D) that reached the shim: nothing was recorded "
                    "(a statically linked or setuid program does not load it)%s",
                    j->program, j->json ? "" : "; no summary");
        if (j->json)
            rc = print_json(a, j);
        else if (none)
            ; /* said above */
        else if (cbt_agg_batches(a) == 0)
            print_no_batch(a, j); /* a few lines (of run too, when its program made fabric calls alone) */
        else
            cbt_agg_print_text(a, stdout, j->ro.inputs, j->ro.ninputs, j->raw);
    }
    cbt_agg_free(a);
    return rc;
}
