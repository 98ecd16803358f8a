/* SPDX-License-Identifier: MIT */
/*
 * Reading many traces at once: the trace directories under the inputs (a
 * relay daemon's output tree, many runs, one directory per process or per
 * user) are shared out, one directory at a time, to threads that each run a
 * babeltrace2 graph of their own into an aggregate of their own (a part,
 * agg.h); a finished part is merged into the whole.  The events of one batch
 * all lie in one trace directory, so a part puts every batch back together
 * alone; sums, minima and maxima do not depend on which thread read what, and
 * the outputs order every row by its figures and names, so the summary is
 * the one a single thread prints (`--jobs 1`).
 *
 * Threads, not processes: the guard (guard.c) watches the process, whose
 * memory limit then bounds every thread together; each thread's reader keeps
 * its own bound (CUBATCHTRACE_READ_MEMORY).  libbabeltrace2 objects are never
 * shared between threads: each thread finds the `ctf` plugin and builds its
 * graph itself, and only setting up and tearing down a graph (which loads and
 * unloads plugins, with reference counts that are not atomic) is done one
 * thread at a time.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/agg.h"
#include "parallel.h"
#include "read/reader.h"
#include "base/util.h"

struct pool {
    const struct cbt_read_opts *o;
    struct cbt_agg *whole;
    char **paths;
    int npaths;
    int next;                /* the next directory to read */
    bool failed;             /* stop taking directories */
    bool one_thread;         /* each reader decodes on its own thread (cbt_read_opts) */
    uint64_t events;         /* cubatchtrace events read, all threads */
    bool shim_seen;          /* a statedump named the shim (cbt_read_opts) */
    char begin[CBT_READ_WINDOW_LEN], end[CBT_READ_WINDOW_LEN]; /* the window, absolute over every directory */
    pthread_mutex_t lock;    /* next, failed, events, merging into whole */
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->failed || p->next >= p->npaths ? -1 : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i < 0)
            return NULL;
        struct cbt_agg *part = cbt_agg_new_part(p->whole);
        uint64_t events = 0;
        bool shim = false;
        const char *in[1] = {p->paths[i]};
        struct cbt_read_opts one = {in, 1, p->o->pids, p->o->npids, true, p->o->begin ? p->begin : NULL,
                                    p->o->end ? p->end : NULL,
                                    .events_read = &events, .shim_seen = &shim, .one_thread = p->one_thread};
        struct cbt_read_out out;
        if (part)
            cbt_agg_read_out(part, &out);
        int rc = part ? cbt_read(&one, &out) : 2;
        if (!part)
            cbt_err("out of memory");
        if (rc == 0)
            cbt_agg_finish(part);
        pthread_mutex_lock(&p->lock);
        if (rc == 0) {
            cbt_agg_merge(p->whole, part);
            p->events += events;
            p->shim_seen |= shim;
        } else {
            p->failed = true;
        }
        pthread_mutex_unlock(&p->lock);
        cbt_agg_free(part);
        cbt_progress();
    }
}

/* A thread of the pool's own: the guard's hooks around the work. */
static void *worker_thread(void *arg)
{
    cbt_thread_enter();
    worker(arg);
    cbt_thread_leave();
    return NULL;
}

int cbt_jobs_default(void) { return cbt_usable_cpus(); }

static bool any_url(const struct cbt_read_opts *o)
{
    for (int i = 0; i < o->ninputs; i++)
        if (cbt_is_url(o->inputs[i]))
            return true;
    return false;
}

int cbt_read_parallel(const struct cbt_read_opts *o, struct cbt_agg *a, int jobs)
{
    if (any_url(o) || o->tick) { /* live sessions: one graph, read as they come */
        struct cbt_read_out out;
        cbt_agg_read_out(a, &out);
        return cbt_read(o, &out);
    }
    struct pool p = {.o = o, .whole = a};
    if (cbt_trace_dirs(o, &p.paths, &p.npaths) != 0)
        return 2;
    if (cbt_read_window(o, p.paths, p.npaths, p.begin, p.end) != 0) {
        for (int i = 0; i < p.npaths; i++)
            free(p.paths[i]);
        free(p.paths);
        return 2;
    }
    if (jobs <= 0)
        jobs = cbt_jobs_default();
    if (jobs > p.npaths)
        jobs = p.npaths;
    /* a reader decodes on a second thread while a CPU is left for it */
    p.one_thread = o->one_thread || 2 * jobs > cbt_usable_cpus();
    pthread_mutex_init(&p.lock, NULL);
    pthread_t *t = calloc((size_t)(jobs > 0 ? jobs : 1), sizeof(*t));
    int started = 0;
    if (!t) {
        cbt_err("out of memory");
        p.failed = true;
    }
    for (int k = 1; t && k < jobs; k++) { /* this thread is the first */
        if (pthread_create(&t[k], NULL, worker_thread, &p) != 0)
            break;
        started = k;
    }
    if (t)
        worker(&p);
    for (int k = 1; k <= started; k++)
        pthread_join(t[k], NULL);
    free(t);
    pthread_mutex_destroy(&p.lock);
    int rc = p.failed ? 2 : 0;
    if (o->shim_seen)
        *o->shim_seen |= p.shim_seen;
    if (rc == 0 && p.events == 0 && !o->allow_empty && cbt_read_empty_is_error(o, p.shim_seen)) {
        cbt_read_say_no_events(o);
        rc = 2;
    }
    if (o->events_read)
        *o->events_read += p.events;
    for (int i = 0; i < p.npaths; i++)
        free(p.paths[i]);
    free(p.paths);
    return rc;
}
