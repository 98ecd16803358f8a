/* SPDX-License-Identifier: MIT */
/*
 * GPU time of batches (CUBATCHTRACE_GPU_TIME=N: every batch, or one in N of each stream).
 *
 * Around each batch it forwards, the calling thread records a timing event
 * on the batch's own stream before the call and one after it.  Recording an
 * event adds no dependency between streams and no wait: the program's work
 * runs in the same order as without.  A stream being captured into a graph
 * is never given an event (the event would become a node of the graph).
 *
 * The events are read back later, without waiting, by a thread of the
 * shim's own (the reader, made at the first timed batch): about every
 * millisecond while batches are queued, it writes cubatchtrace:gpu_time for
 * every queued batch whose end event completed, in order (one
 * cuEventElapsedTime asks that and how long it took, one more places its
 * start against its context's anchor); it keeps looking at that pace for a
 * second after the queue empties, and only then sleeps on a condition
 * variable until a batch is queued (so that a program that synchronizes
 * between batches does not make each one wake it).  The calling thread only
 * records the two events and queues the batch.  Where the reader cannot be
 * made, and once the process exits, the next timed batch reads back
 * instead.  At exit (atexit) the rest are waited for, briefly.  A process
 * that never synchronizes loses nothing to that: an event completes when
 * the GPU reaches it, whoever waits for it.  The reader blocks every signal
 * (the program's handlers never run on it) and runs on the CPUs the process
 * had when the shim was loaded, not pinned beside the thread that made it.
 *
 * Events give durations, not dates: each context has an anchor event,
 * recorded on a stream of the shim's own (non-blocking: it never waits for
 * the program's work, nor the program's for it) and waited for once, whose
 * host time is known within half the wait; a batch's GPU start is the anchor's
 * time plus the elapsed time from the anchor to its start event.  The anchor
 * is renewed every few seconds so that the elapsed times, single-precision
 * milliseconds, stay precise to well under a microsecond.
 *
 * Graph capture: the anchor's wait and the read-back's queries are
 * "potentially unsafe" calls, which invalidate every capture another thread
 * (or this one) holds in GLOBAL or THREAD_LOCAL mode (measured on the H200,
 * tests/gpu/clients/capture.c).  The reader makes them in RELAXED
 * interaction mode, set once for itself; a program thread that makes them
 * (the fallback, a context going) switches to RELAXED around them
 * (cuThreadExchangeStreamCaptureMode) and puts its own mode back.  The
 * batch's stream itself is asked whether it is being captured before any
 * event goes on it, once the process began a capture (memwrap.c wraps the
 * functions that begin one): before that, no stream can be.
 *
 * Events and anchors belong to their context: when it is destroyed
 * (src/memwrap.c tells) or its id changes (cuCtxGetId: a new context at the
 * same handle), what was queued for it is written as "lost" and its state
 * forgotten, never touched again.  Each thread keeps the ids it asked for,
 * and two events for its next timed batch, until a context goes (struct
 * cbt_gpu_thread, in its state), while memwrap.c sees every way to destroy
 * one; else it asks per batch and takes the events from the pool.
 *
 * Two locks: gt_lock guards the queue, the contexts' table and their pools,
 * held briefly by everyone; gt_read_lock is held by whoever reads back
 * (driver calls on queued events, the gpu_time events written, anchors
 * renewed) and by whoever forgets a context, so that no event is used while
 * its context is forgotten.  A calling thread never waits for a read-back.
 * Order: gt_read_lock, then gt_lock.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gputime.h"
#include "memwrap.h"
#include "settings.h"
#include "tp.h"

#define GT_CTXS 16
#define GT_QUEUE 4096                        /* batches in flight, all streams */
#define GT_REANCHOR_NS 4000000000ull         /* renew an anchor this often */
#define GT_EXIT_WAIT_NS 2000000000ull        /* at exit, wait this long at most */
#define GT_READ_PERIOD_NS 1000000            /* the reader's pace while batches are queued */
#define GT_LINGER_NS 1000000000ull           /* and for this long after the queue emptied */
#define GT_SLICE 32                          /* entries read back per turn of gt_lock */

struct gt_ctx {
    bool valid;
    CUcontext ctx;
    unsigned long long id;       /* cuCtxGetId: unique for the process's life */
    int32_t device;
    CUstream stream;             /* the anchors': the shim's own, non-blocking */
    CUevent anchor[2];           /* [gen & 1]: the current one and the one before */
    uint64_t anchor_ns[2];       /* CLOCK_MONOTONIC when each ran */
    unsigned gen;
    bool anchored;
    CUevent *pool;               /* events free for use */
    size_t npool, cappool;
};

struct gt_entry {
    int ctx;
    unsigned long long ctx_id;
    unsigned gen;                /* the anchor in effect when it started */
    CUevent start, end;
    struct cbt_ev_gpu ev;
};

static pthread_mutex_t gt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gt_read_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gt_wake = PTHREAD_COND_INITIALIZER;
static struct gt_ctx gt_ctxs[GT_CTXS];
static struct gt_entry gt_queue[GT_QUEUE];
static size_t gt_head, gt_count;
static pthread_once_t gt_once = PTHREAD_ONCE_INIT;

/* The reader thread (gt_lock): not made yet; reading; the calling threads
 * read back instead (it could not be made, or the process is exiting). */
static enum { READER_NONE, READER_RUNNING, READER_INLINE } gt_reader;
static bool gt_reader_waiting; /* asleep on gt_wake: nothing queued */

/*
 * Context ids a thread asked for (cuCtxGetId), by handle, in its memo
 * (struct cbt_gpu_call's), while no context went: gt_ctx_epoch moves on
 * when one goes (cbt_gpu_context_going before, cbt_gpu_context_gone
 * after), and a new context can take a handle only once the old one went.
 * The caller gives no memo where memwrap.c may not see every call that can
 * destroy a context: then the id is asked per batch.
 */
static uint64_t gt_ctx_epoch = 1; /* a memo of epoch 0 (never filled) never matches */

static inline void ctx_epoch_next(void) { __atomic_fetch_add(&gt_ctx_epoch, 1, __ATOMIC_ACQ_REL); }

static inline struct cbt_gpu_memo *memo_of(struct cbt_gpu_thread *th, CUcontext ctx)
{
    return &th->memo[((uintptr_t)ctx >> 4) % CBT_GPU_MEMO];
}

static bool ctx_id(const struct cbt_real *real, struct cbt_gpu_thread *th, CUcontext ctx, unsigned long long *id)
{
    uint64_t epoch = __atomic_load_n(&gt_ctx_epoch, __ATOMIC_ACQUIRE); /* before the driver is asked */
    struct cbt_gpu_memo *m = th ? memo_of(th, ctx) : NULL;
    if (m && m->ctx == ctx && m->epoch == epoch) {
        *id = m->id;
        return true;
    }
    if (real->ctx_get_id(ctx, id) != CUDA_SUCCESS)
        return false;
    if (m)
        *m = (struct cbt_gpu_memo){.ctx = ctx, .id = *id, .epoch = epoch};
    return true;
}

/* The CPUs the process could run on when the shim was loaded: the reader's. */
static cpu_set_t gt_load_cpus;
static bool gt_have_load_cpus;
__attribute__((constructor)) static void gt_at_load(void)
{
    gt_have_load_cpus = sched_getaffinity(0, sizeof gt_load_cpus, &gt_load_cpus) == 0;
}

static void emit(struct cbt_ev_gpu *ev)
{
    if (cbt_tp_enabled(gpu_time))
        cbt_tp(gpu_time, ev, __builtin_return_address(0));
}

static void pool_put(struct gt_ctx *c, CUevent e)
{
    if (!e)
        return;
    if (c->npool == c->cappool) {
        size_t n = c->cappool ? 2 * c->cappool : 64;
        CUevent *p = realloc(c->pool, n * sizeof *p);
        if (!p)
            return; /* leaked rather than lost track of */
        c->pool = p;
        c->cappool = n;
    }
    c->pool[c->npool++] = e;
}

/* Make c's context current for what follows (event and stream creation), unless it is; *pushed: pop it after. */
static bool with_ctx_push(const struct cbt_real *real, struct gt_ctx *c, bool *pushed)
{
    CUcontext cur = NULL;
    *pushed = false;
    if (real->ctx_get_current && real->ctx_get_current(&cur) == CUDA_SUCCESS && cur == c->ctx)
        return true;
    if (!real->ctx_push || !real->ctx_pop || real->ctx_push(c->ctx) != CUDA_SUCCESS)
        return false;
    *pushed = true;
    return true;
}

static void ctx_pop(const struct cbt_real *real, bool pushed)
{
    CUcontext dummy;
    if (pushed)
        (void)real->ctx_pop(&dummy);
}

static CUevent pool_get(const struct cbt_real *real, struct gt_ctx *c)
{
    if (c->npool)
        return c->pool[--c->npool];
    bool pushed;
    CUevent e = NULL;
    if (!with_ctx_push(real, c, &pushed))
        return NULL;
    if (real->event_create(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        e = NULL;
    ctx_pop(real, pushed);
    return e;
}

/* The calling thread in RELAXED capture interaction mode until relaxed_end:
 * its event queries and waits then break no capture (see the top). */
static CUstreamCaptureMode relaxed_begin(const struct cbt_real *real)
{
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (!real->thread_exchange_capture_mode || real->thread_exchange_capture_mode(&m) != CUDA_SUCCESS)
        return CU_STREAM_CAPTURE_MODE_RELAXED; /* nothing to put back */
    return m;
}

static void relaxed_end(const struct cbt_real *real, CUstreamCaptureMode was)
{
    if (was != CU_STREAM_CAPTURE_MODE_RELAXED && real->thread_exchange_capture_mode)
        (void)real->thread_exchange_capture_mode(&was);
}

/*
 * Record anchor[gen & 1] on the shim's stream and wait for it: its GPU time
 * lies between the host times before the record and after the wait; the
 * shortest of three tries is kept.  *spare: the event of the tries not kept,
 * for the caller to put in the pool under gt_lock (NULL: none).  Made by the
 * holder of gt_read_lock, or under gt_lock for a context not anchored yet.
 */
static bool anchor(const struct cbt_real *real, struct gt_ctx *c, unsigned gen, CUevent *spare)
{
    bool pushed;
    if (!with_ctx_push(real, c, &pushed))
        return false;
    bool ok = true;
    if (!c->stream && real->stream_create(&c->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        c->stream = NULL;
        ok = false;
    }
    CUevent *a = &c->anchor[gen & 1], trial = NULL;
    if (ok && !*a && real->event_create(a, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        *a = NULL;
        ok = false;
    }
    if (ok && real->event_create(&trial, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        trial = NULL;
        ok = false;
    }
    uint64_t best = UINT64_MAX, at = 0;
    for (int i = 0; ok && i < 3; i++) {
        CUevent e = i == 0 ? *a : trial;
        uint64_t t0 = cbt_mono_ns();
        if (real->event_record[0](e, c->stream) != CUDA_SUCCESS || real->event_synchronize(e) != CUDA_SUCCESS) {
            ok = false;
            break;
        }
        uint64_t t1 = cbt_mono_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            at = t0 + (t1 - t0) / 2;
            if (i > 0) { /* keep the better one as the anchor */
                CUevent x = *a;
                *a = trial;
                trial = x;
            }
        }
    }
    *spare = trial;
    ctx_pop(real, pushed);
    if (ok)
        c->anchor_ns[gen & 1] = at;
    return ok;
}

/* Everything queued for context i is lost; its state is forgotten (its
 * events are the dead context's: never used again).  Both locks held. */
static void forget_locked(int i)
{
    struct gt_ctx *c = &gt_ctxs[i];
    for (size_t k = 0; k < gt_count; k++) {
        struct gt_entry *e = &gt_queue[(gt_head + k) % GT_QUEUE];
        if (e->ctx == i && e->ctx_id == c->id)
            e->ctx = -1; /* written as lost when it reaches the head */
    }
    free(c->pool);
    memset(c, 0, sizeof *c);
}

/* Is context i's state the one of (ctx, id)?  (gt_lock) */
static inline bool ctx_is(int i, unsigned long long id)
{
    return i >= 0 && gt_ctxs[i].valid && gt_ctxs[i].id == id;
}

/*
 * A thread's stash: two events of one context, taken from its pool under
 * gt_lock when the thread queued its previous timed batch, so that the
 * next one takes no lock before its call.  It holds while gt_ctx_epoch
 * stays: cbt_gpu_context_gone moves it once more after forgetting a
 * context (under gt_lock), so a stash filled before that is stale, and
 * its events go back to their pool only if their context's state is
 * still the one they came from.
 */
static void stash_drop_locked(struct cbt_gpu_thread *th)
{
    if (!th || !th->stash.end)
        return;
    if (ctx_is(th->stash.ctx, th->stash.ctx_id)) {
        pool_put(&gt_ctxs[th->stash.ctx], th->stash.start);
        pool_put(&gt_ctxs[th->stash.ctx], th->stash.end);
    }
    th->stash.start = th->stash.end = NULL;
}

/* Refilled from context i's pool (made there when it has none free: a
 * program that waits for each batch keeps three pairs in turn), where the
 * reader runs (else the next batch reads back first).  cuEventCreate, and
 * making the context current for it, break no capture either (the
 * measurements above). */
static void stash_fill_locked(const struct cbt_real *real, struct cbt_gpu_thread *th, int i, unsigned long long id)
{
    struct gt_ctx *c = &gt_ctxs[i];
    if (!th || th->stash.end || gt_reader != READER_RUNNING)
        return;
    CUevent start = pool_get(real, c);
    CUevent end = start ? pool_get(real, c) : NULL;
    if (!end) {
        pool_put(c, start);
        return;
    }
    th->stash.start = start;
    th->stash.end = end;
    th->stash.ctx = i;
    th->stash.ctx_id = id;
    th->stash.epoch = __atomic_load_n(&gt_ctx_epoch, __ATOMIC_ACQUIRE);
}

void cbt_gpu_thread_release(struct cbt_gpu_thread *th)
{
    if (!th->stash.end)
        return;
    pthread_mutex_lock(&gt_lock);
    stash_drop_locked(th);
    pthread_mutex_unlock(&gt_lock);
}

/* Context state for (ctx, id): found, or made (anchored); -1 when it cannot
 * be had.  Under gt_lock; a state whose handle names a new context now is
 * forgotten first, which takes gt_read_lock (the lock is let go meanwhile). */
static int ctx_state_locked(const struct cbt_real *real, CUcontext ctx, unsigned long long id, int32_t device)
{
    for (bool again = true; again;) {
        again = false;
        for (int i = 0; i < GT_CTXS; i++) {
            struct gt_ctx *c = &gt_ctxs[i];
            if (!c->valid || c->ctx != ctx)
                continue;
            if (c->id == id)
                return i;
            pthread_mutex_unlock(&gt_lock);
            pthread_mutex_lock(&gt_read_lock);
            pthread_mutex_lock(&gt_lock);
            if (c->valid && c->ctx == ctx && c->id != id)
                forget_locked(i);
            pthread_mutex_unlock(&gt_read_lock);
            again = true; /* the table may have changed meanwhile */
            break;
        }
    }
    int free_slot = -1;
    for (int i = 0; i < GT_CTXS && free_slot < 0; i++)
        if (!gt_ctxs[i].valid)
            free_slot = i;
    if (free_slot < 0)
        return -1;
    struct gt_ctx *c = &gt_ctxs[free_slot];
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->id = id;
    c->device = device;
    CUevent spare = NULL;
    if (!anchor(real, c, 0, &spare)) {
        /* Nothing of it is used again; what was made of it stays (leaked). */
        memset(c, 0, sizeof *c);
        return -1;
    }
    c->valid = true;
    c->anchored = true;
    pool_put(c, spare);
    return free_slot;
}

/* Is any queued batch of context i started under anchor generation gen? (gt_lock) */
static bool uses_anchor_locked(int i, unsigned gen)
{
    for (size_t k = 0; k < gt_count; k++) {
        const struct gt_entry *e = &gt_queue[(gt_head + k) % GT_QUEUE];
        if (e->ctx == i && e->gen == gen)
            return true;
    }
    return false;
}

/* One queued batch as the read-back takes it from the queue's head. */
struct gt_taken {
    struct gt_entry e;
    bool valid;           /* its context's state is still its own */
    CUcontext ctx;
    CUevent anchor;       /* the anchor of its generation (NULL: renewed twice since) */
    uint64_t anchor_ns;
    int64_t start_ns;     /* CLOCK_MONOTONIC of its GPU start, once read */
    float dur;            /* ms from its start event to its end event, once both are done */
};

/* A taken batch's times, from its events (both done: x->dur read). */
static void times(const struct cbt_real *real, struct gt_taken *x)
{
    float from_anchor = 0;
    bool ok = x->valid && x->anchor &&
              real->event_elapsed(&from_anchor, x->anchor, x->e.start) == CUDA_SUCCESS && x->dur >= 0;
    if (ok) {
        x->e.ev.status = CBT_GPU_TIMED;
        x->e.ev.gpu_ns = (uint64_t)((double)x->dur * 1e6);
        x->start_ns = (int64_t)x->anchor_ns + (int64_t)((double)from_anchor * 1e6);
    } else {
        x->e.ev.status = CBT_GPU_LOST;
    }
}

/* Renew old anchors once no queued batch needs the one before (gt_read_lock held). */
static void renew_anchors(const struct cbt_real *real)
{
    uint64_t now = cbt_mono_ns();
    for (int i = 0; i < GT_CTXS; i++) {
        pthread_mutex_lock(&gt_lock);
        struct gt_ctx *c = &gt_ctxs[i];
        bool due = c->valid && c->anchored && now - c->anchor_ns[c->gen & 1] > GT_REANCHOR_NS &&
                   !uses_anchor_locked(i, c->gen - 1);
        unsigned gen = c->gen + 1;
        pthread_mutex_unlock(&gt_lock);
        if (!due)
            continue;
        /* the slot of gen is its generation before last's: no queued batch
         * refers to it, and only the holder of gt_read_lock touches it */
        CUevent spare = NULL;
        bool ok = anchor(real, c, gen, &spare);
        pthread_mutex_lock(&gt_lock);
        if (ok)
            c->gen = gen;
        pool_put(c, spare);
        pthread_mutex_unlock(&gt_lock);
    }
}

/*
 * Read back (gt_read_lock held): every queued batch whose end event
 * completed, in order, written as gpu_time; with a deadline, wait for them
 * until then.  A slice at a time: taken from the head under gt_lock, its
 * events read without it (no context is forgotten meanwhile: that takes
 * gt_read_lock), then popped and their events pooled under gt_lock, then
 * written.  own_thread: the reader's, which makes each entry's context
 * current while it reads its events.
 */
static void read_back(const struct cbt_real *real, uint64_t deadline, bool own_thread)
{
    struct gt_taken x[GT_SLICE];
    CUcontext current = NULL; /* own_thread: the context pushed (the events' own, current while read) */
    for (;;) {
        pthread_mutex_lock(&gt_lock);
        size_t n = gt_count < GT_SLICE ? gt_count : GT_SLICE;
        for (size_t k = 0; k < n; k++) {
            x[k].e = gt_queue[(gt_head + k) % GT_QUEUE];
            x[k].valid = ctx_is(x[k].e.ctx, x[k].e.ctx_id);
            const struct gt_ctx *c = x[k].valid ? &gt_ctxs[x[k].e.ctx] : NULL;
            x[k].ctx = c ? c->ctx : NULL;
            bool kept = c && c->gen - x[k].e.gen <= 1; /* else renewed twice since: not kept */
            x[k].anchor = kept ? c->anchor[x[k].e.gen & 1] : NULL;
            x[k].anchor_ns = kept ? c->anchor_ns[x[k].e.gen & 1] : 0;
        }
        pthread_mutex_unlock(&gt_lock);
        if (!n)
            break;
        size_t done = 0;
        while (done < n) {
            struct gt_taken *t = &x[done];
            if (t->valid && own_thread && t->ctx != current && real->ctx_push && real->ctx_pop) {
                CUcontext dummy;
                if (current)
                    (void)real->ctx_pop(&dummy);
                current = real->ctx_push(t->ctx) == CUDA_SUCCESS ? t->ctx : NULL;
            }
            if (t->valid) {
                /* one call asks whether it is done and, when it is, how long
                 * it took (NOT_READY while either event is not done) */
                CUresult r = real->event_elapsed(&t->dur, t->e.start, t->e.end);
                if (r == CUDA_ERROR_NOT_READY) {
                    if (!deadline || cbt_mono_ns() >= deadline)
                        break;
                    struct timespec ts = {0, 100000};
                    nanosleep(&ts, NULL);
                    continue;
                }
                t->valid = r == CUDA_SUCCESS;
            }
            times(real, t);
            done++;
        }
        pthread_mutex_lock(&gt_lock);
        for (size_t k = 0; k < done; k++) {
            const struct gt_entry *e = &x[k].e;
            if (ctx_is(e->ctx, e->ctx_id)) {
                pool_put(&gt_ctxs[e->ctx], e->start);
                pool_put(&gt_ctxs[e->ctx], e->end);
            }
        }
        gt_head = (gt_head + done) % GT_QUEUE;
        gt_count -= done;
        pthread_mutex_unlock(&gt_lock);
        for (size_t k = 0; k < done; k++) {
            if (x[k].e.ev.status == CBT_GPU_TIMED)
                x[k].e.ev.start_rel_ns = x[k].start_ns - (int64_t)cbt_mono_ns();
            emit(&x[k].e.ev);
        }
        if (done < n)
            break;
    }
    if (current) {
        CUcontext dummy;
        (void)real->ctx_pop(&dummy);
    }
    renew_anchors(real);
}

/* What is still queued, written as not read back (both locks held). */
static void abandon_locked(void)
{
    while (gt_count) {
        struct gt_entry *e = &gt_queue[gt_head];
        if (ctx_is(e->ctx, e->ctx_id)) {
            pool_put(&gt_ctxs[e->ctx], e->start);
            pool_put(&gt_ctxs[e->ctx], e->end);
        }
        e->ev.status = CBT_GPU_LOST;
        emit(&e->ev);
        gt_head = (gt_head + 1) % GT_QUEUE;
        gt_count--;
    }
}

/* The batches of forgotten contexts at the queue's head, written as lost at once (both locks held). */
static void lost_heads_locked(void)
{
    while (gt_count && gt_queue[gt_head].ctx < 0) {
        struct gt_entry *e = &gt_queue[gt_head];
        e->ev.status = CBT_GPU_LOST;
        emit(&e->ev);
        gt_head = (gt_head + 1) % GT_QUEUE;
        gt_count--;
    }
}

/* A program thread reads back (the fallback; a context going), in RELAXED mode. */
static void read_back_here(const struct cbt_real *real)
{
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt_read_lock);
    read_back(real, 0, false);
    pthread_mutex_unlock(&gt_read_lock);
    relaxed_end(real, was);
}

static void at_exit(void)
{
    const struct cbt_real *real = cbt_real();
    pthread_mutex_lock(&gt_lock);
    if (gt_reader == READER_RUNNING) { /* it stops at its next turn, and reads nothing after this */
        gt_reader = READER_INLINE;
        pthread_cond_signal(&gt_wake);
    }
    pthread_mutex_unlock(&gt_lock);
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt_read_lock);
    if (real->event_elapsed)
        read_back(real, cbt_mono_ns() + GT_EXIT_WAIT_NS, false);
    pthread_mutex_lock(&gt_lock);
    abandon_locked(); /* still not done: said so */
    pthread_mutex_unlock(&gt_lock);
    pthread_mutex_unlock(&gt_read_lock);
    relaxed_end(real, was);
}

/* gt_wake on CLOCK_MONOTONIC (the reader's timed waits). */
static void wake_init(void)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return; /* the static initializer's CLOCK_REALTIME: only the pace is off when the clock jumps */
    (void)pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&gt_wake, &a);
    pthread_condattr_destroy(&a);
}

/* A forked child has none of its parent's contexts, nor its reader: nothing of theirs is used. */
static void in_child(void)
{
    memset(gt_ctxs, 0, sizeof gt_ctxs);
    gt_head = gt_count = 0;
    gt_reader = READER_NONE;
    gt_reader_waiting = false;
    ctx_epoch_next();
    pthread_mutex_init(&gt_lock, NULL);
    pthread_mutex_init(&gt_read_lock, NULL);
    wake_init();
}

static void gt_init(void)
{
    wake_init();
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_child);
}

/* Wait on gt_wake until deadline (CLOCK_MONOTONIC ns) or a signal (gt_lock held). */
static void wait_until_locked(uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    (void)pthread_cond_timedwait(&gt_wake, &gt_lock, &ts);
}

/*
 * The reader: reads back about every GT_READ_PERIOD_NS while batches are
 * queued, and keeps looking at that pace for GT_LINGER_NS after the queue
 * empties (a turn with nothing queued takes gt_lock and no driver call);
 * only then does it sleep until a calling thread queues a batch and wakes
 * it (gt_reader_waiting).  A program that synchronizes between batches
 * empties the queue after each one: without the lingering, nearly every
 * batch would wake the reader, a futex system call on the calling thread.
 * Lingering costs a turn a millisecond for a second after the last batch
 * (a few microseconds each, under 1 % of a CPU); batches further apart than
 * that pay the wake, well under 1 % of their interval.  After a turn that
 * read back, the reader waits on gt_wake, so that a calling thread can wake
 * it early when the queue reaches half full (GT_QUEUE / 2).  Until the
 * process exits.
 */
static void *reader_main(void *arg)
{
    (void)arg;
    const struct cbt_real *real = cbt_real();
    (void)relaxed_begin(real); /* this thread's mode, for good */
    uint64_t busy = cbt_mono_ns(); /* when a batch was last seen queued */
    pthread_mutex_lock(&gt_lock);
    for (;;) {
        if (gt_reader != READER_RUNNING)
            break;
        uint64_t now = cbt_mono_ns();
        if (!gt_count) {
            if (now - busy < GT_LINGER_NS) {
                /* asleep without gt_lock (a wait on gt_wake would take it
                 * back marked contended: a futex wake at each unlock) */
                pthread_mutex_unlock(&gt_lock);
                struct timespec ts = {0, GT_READ_PERIOD_NS};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&gt_lock);
                continue;
            }
            gt_reader_waiting = true;
            while (gt_reader == READER_RUNNING && !gt_count)
                pthread_cond_wait(&gt_wake, &gt_lock);
            gt_reader_waiting = false;
            continue;
        }
        busy = now;
        pthread_mutex_unlock(&gt_lock);
        pthread_mutex_lock(&gt_read_lock);
        pthread_mutex_lock(&gt_lock);
        bool running = gt_reader == READER_RUNNING; /* at exit, at_exit reads back instead */
        pthread_mutex_unlock(&gt_lock);
        if (running)
            read_back(real, 0, true);
        pthread_mutex_unlock(&gt_read_lock);
        pthread_mutex_lock(&gt_lock);
        if (gt_reader == READER_RUNNING)
            wait_until_locked(cbt_mono_ns() + GT_READ_PERIOD_NS);
    }
    pthread_mutex_unlock(&gt_lock);
    return NULL;
}

/* The reader made (gt_lock held, at the first timed batch): every signal
 * blocked, on the CPUs of the process at load; else the calling threads
 * read back.  Built with -DCBT_GT_NO_READER, never made: the calling
 * threads read back (bench/ab.sh gputime measures the difference). */
static void reader_start_locked(void)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    gt_reader = READER_INLINE;
#ifdef CBT_GT_NO_READER
    if (gt_reader == READER_INLINE)
        return;
#endif
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &attr, reader_main, NULL) == 0) {
        gt_reader = READER_RUNNING;
        (void)pthread_setname_np(th, "cbt-gputime");
        /* after, not in attr: CPUs gone from the process's set since load
         * make this fail, where they would make pthread_create fail */
        if (gt_have_load_cpus)
            (void)pthread_setaffinity_np(th, sizeof gt_load_cpus, &gt_load_cpus);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static void gpu_before_relaxed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                               const struct cbt_real *real);
static bool before_stashed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                           const struct cbt_real *real);

static bool have_driver(const struct cbt_real *real)
{
    return real->ctx_get_id && real->event_create && real->event_record[0] &&
           real->event_elapsed && real->event_synchronize && real->stream_create && real->ctx_get_current;
}

uint8_t cbt_stream_capture(const struct cbt_real *real, int ptsz, CUstream stream)
{
    CUstreamCaptureStatus cap;
    if (real->stream_is_capturing[ptsz] && real->stream_is_capturing[ptsz](stream, &cap) == CUDA_SUCCESS)
        return (uint8_t)cap;
    return CBT_CAPTURE_UNKNOWN;
}

/*
 * Per timed batch, on the calling thread: whether its stream is being
 * captured (once the process began a capture), then two events and the
 * start event's record; right after the
 * call, the end event's (cbt_gpu_end); once the batch event is written,
 * the queue (cbt_gpu_after, under gt_lock, which also refills the thread's
 * stash).
 *
 * The usual way (before_stashed): the context's id is in the thread's memo
 * and two of its events in its stash, the stream is one the program made.
 * Then nothing but the records is asked of the driver, in the thread's own
 * capture mode: cuEventRecord on a stream not being captured breaks no
 * capture, of this thread or another, in any mode (measured on the H200:
 * tests/gpu/measured/capture-h200.txt).  Otherwise (the first batch of a
 * thread or context, the stash stale or empty, the NULL, legacy or
 * per-thread stream): the context's id, its state (anchored when new) and
 * the events from the pool (gt_lock), all in RELAXED mode.  Without a
 * reader (it could not be made, or the process is exiting), that way also
 * reads back the batches queued before, before the batch's own work is
 * submitted: a query just after it costs the H200 microseconds more.
 */
void cbt_gpu_before(struct cbt_gpu_call *t, struct cbt_ev_batch *b, int ptsz, CUstream stream)
{
    t->status = -1;
    t->start = t->end = NULL;
    if (!cbt_tp_enabled(gpu_time))
        return;
    pthread_once(&gt_once, gt_init);
    const struct cbt_real *real = cbt_real();
    t->status = CBT_GPU_NO_EVENTS;
    if (!have_driver(real))
        return;
    /* no capture begun yet in the process, where memwrap.c sees every door
     * (t->th): no stream is being captured, the driver is not asked */
    uint8_t cap = CBT_CAPTURE_NONE;
    if (!t->th || __atomic_load_n(&cbt_capture_begun, __ATOMIC_SEQ_CST) ||
        __atomic_load_n(&cbt_kind_cache_off, __ATOMIC_ACQUIRE))
        cap = b->capture = cbt_stream_capture(real, ptsz, stream);
    if (cap != CBT_CAPTURE_NONE) {
        /* captured into a graph, or its state unknown: no event on it */
        t->status = cap == CBT_CAPTURE_UNKNOWN ? CBT_GPU_NO_EVENTS : CBT_GPU_CAPTURING;
        return;
    }
    if (cbt_likely(before_stashed(t, b, ptsz, stream, real)))
        return;
    CUstreamCaptureMode was = relaxed_begin(real);
    gpu_before_relaxed(t, b, ptsz, stream, real);
    relaxed_end(real, was);
}

/* A stream the program made: not NULL, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD. */
static inline bool made_stream(CUstream s) { return (uintptr_t)s > 2; }

/* The usual way (see above); false: the other. */
static bool before_stashed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                           const struct cbt_real *real)
{
    struct cbt_gpu_thread *th = t->th;
    CUcontext ctx = (CUcontext)(uintptr_t)b->context;
    if (!th || !th->stash.end || !made_stream(stream) || !ctx)
        return false;
    const uint64_t epoch = __atomic_load_n(&gt_ctx_epoch, __ATOMIC_ACQUIRE);
    const struct cbt_gpu_memo *m = memo_of(th, ctx);
    if (th->stash.epoch != epoch || m->epoch != epoch || m->ctx != ctx || m->id != th->stash.ctx_id)
        return false;
    t->ctx = th->stash.ctx;
    t->ctx_id = m->id;
    t->start = th->stash.start;
    t->end = th->stash.end;
    th->stash.start = th->stash.end = NULL;
    /* not recorded: NO_EVENTS, the events back in the pool (cbt_gpu_after) */
    if (real->event_record[ptsz](t->start, stream) == CUDA_SUCCESS)
        t->status = CBT_GPU_TIMED;
    return true;
}

static void gpu_before_relaxed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                               const struct cbt_real *real)
{
    unsigned long long id = 0;
    CUcontext ctx = (CUcontext)(uintptr_t)b->context;
    if (!ctx || !ctx_id(real, t->th, ctx, &id))
        return;
    pthread_mutex_lock(&gt_lock);
    stash_drop_locked(t->th); /* stale, or another context's */
    if (cbt_unlikely(gt_reader != READER_RUNNING)) {
        if (gt_reader == READER_NONE)
            reader_start_locked();
        if (gt_reader == READER_INLINE && gt_count) {
            pthread_mutex_unlock(&gt_lock);
            read_back_here(real);
            pthread_mutex_lock(&gt_lock);
        }
    }
    int i = ctx_state_locked(real, ctx, id, b->device);
    CUevent start = i >= 0 ? pool_get(real, &gt_ctxs[i]) : NULL;
    CUevent end = start ? pool_get(real, &gt_ctxs[i]) : NULL;
    if (start && !end)
        pool_put(&gt_ctxs[i], start);
    pthread_mutex_unlock(&gt_lock);
    if (!end)
        return;
    if (real->event_record[ptsz](start, stream) != CUDA_SUCCESS) {
        pthread_mutex_lock(&gt_lock);
        if (ctx_is(i, id)) {
            pool_put(&gt_ctxs[i], start);
            pool_put(&gt_ctxs[i], end);
        }
        pthread_mutex_unlock(&gt_lock);
        return;
    }
    t->status = CBT_GPU_TIMED;
    t->ctx = i;
    t->ctx_id = id;
    t->start = start;
    t->end = end;
}

/* The events of a call not timed after all, back in their pool. */
static void give_back(struct cbt_gpu_call *t)
{
    if (!t->start)
        return;
    pthread_mutex_lock(&gt_lock);
    if (ctx_is(t->ctx, t->ctx_id)) {
        pool_put(&gt_ctxs[t->ctx], t->start);
        pool_put(&gt_ctxs[t->ctx], t->end);
    }
    pthread_mutex_unlock(&gt_lock);
}

void cbt_gpu_end(struct cbt_gpu_call *t, CUresult res, int ptsz, CUstream stream)
{
    if (t->status != CBT_GPU_TIMED)
        return;
    if (res != CUDA_SUCCESS) {
        t->status = CBT_GPU_CALL_FAILED;
        return;
    }
    const struct cbt_real *real = cbt_real();
    if (made_stream(stream)) { /* no capture to break (see cbt_gpu_before) */
        if (real->event_record[ptsz](t->end, stream) != CUDA_SUCCESS)
            t->status = CBT_GPU_NO_EVENTS;
        return;
    }
    CUstreamCaptureMode was = relaxed_begin(real);
    if (real->event_record[ptsz](t->end, stream) != CUDA_SUCCESS)
        t->status = CBT_GPU_NO_EVENTS;
    relaxed_end(real, was);
}

/* What the gpu_time event of t's batch b says but its times. */
static inline void ev_fill(struct cbt_ev_gpu *ev, const struct cbt_gpu_call *t, const struct cbt_ev_batch *b,
                           const struct cbt_ev_gpu *sum)
{
    *ev = (struct cbt_ev_gpu){
        .batch_id = b->batch_id, .status = (uint8_t)t->status, .tid = b->tid, .api = b->api,
        .stream = b->stream, .stream_id = b->stream_id, .device = b->device, .driver_ns = b->driver_ns,
        .src_kind = CBT_GPU_MIXED_KIND, .dst_kind = CBT_GPU_MIXED_KIND, .src_device = -1, .dst_device = -1,
    };
    if (sum) {
        ev->ops = sum->ops;
        ev->bytes = sum->bytes;
        ev->src_kind = sum->src_kind;
        ev->dst_kind = sum->dst_kind;
        ev->src_device = sum->src_device;
        ev->dst_device = sum->dst_device;
    }
}

/* A timed batch is queued in place (its entry made in the queue's slot, under gt_lock). */
void cbt_gpu_after(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, const struct cbt_ev_gpu *sum)
{
    if (t->status < 0)
        return;
    if (t->status != CBT_GPU_TIMED) {
        struct cbt_ev_gpu ev;
        ev_fill(&ev, t, b, sum);
        give_back(t);
        emit(&ev);
        return;
    }
    pthread_mutex_lock(&gt_lock);
    struct gt_ctx *x = &gt_ctxs[t->ctx];
    if (cbt_likely(ctx_is(t->ctx, t->ctx_id) && gt_count < GT_QUEUE)) {
        struct gt_entry *e = &gt_queue[(gt_head + gt_count) % GT_QUEUE];
        e->ctx = t->ctx;
        e->ctx_id = t->ctx_id;
        e->gen = x->gen;
        e->start = t->start;
        e->end = t->end;
        ev_fill(&e->ev, t, b, sum);
        gt_count++;
        stash_fill_locked(cbt_real(), t->th, t->ctx, t->ctx_id);
        /* the reader asleep for good, or half the queue used before its turn */
        if (gt_reader_waiting || gt_count == GT_QUEUE / 2)
            pthread_cond_signal(&gt_wake);
    } else {
        struct cbt_ev_gpu ev;
        ev_fill(&ev, t, b, sum);
        if (ctx_is(t->ctx, t->ctx_id)) {
            ev.status = CBT_GPU_OVERFLOW;
            pool_put(x, t->start);
            pool_put(x, t->end);
        } else {
            ev.status = CBT_GPU_LOST; /* its context went meanwhile: its events with it */
        }
        emit(&ev);
    }
    pthread_mutex_unlock(&gt_lock);
}

void cbt_gpu_context_going(void)
{
    const struct cbt_real *real = cbt_real();
    ctx_epoch_next(); /* a memo filled from now on is one of the context that may go */
    pthread_mutex_lock(&gt_lock);
    bool queued = gt_count > 0;
    pthread_mutex_unlock(&gt_lock);
    if (queued && have_driver(real))
        read_back_here(real);
}

void cbt_gpu_context_gone(CUcontext ctx, int device)
{
    ctx_epoch_next(); /* no memo of the context gone holds now */
    pthread_mutex_lock(&gt_read_lock);
    pthread_mutex_lock(&gt_lock);
    for (int i = 0; i < GT_CTXS; i++) {
        struct gt_ctx *c = &gt_ctxs[i];
        if (c->valid && (ctx ? c->ctx == ctx : c->device == device))
            forget_locked(i);
    }
    lost_heads_locked(); /* what is lost is written at once, in order */
    ctx_epoch_next();    /* and no stash filled before the context was forgotten holds */
    pthread_mutex_unlock(&gt_lock);
    pthread_mutex_unlock(&gt_read_lock);
}
