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
 * The events are read back later, without waiting: whichever thread makes
 * the next batch first writes cubatchtrace:gpu_time for every queued batch
 * whose end event completed, in order; at exit (atexit) the rest are waited
 * for, briefly.  A process that never synchronizes loses nothing to that: an
 * event completes when the GPU reaches it, whoever waits for it.
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
 * tests/gpu/clients/capture.c).  The shim makes them in RELAXED interaction
 * mode (cuThreadExchangeStreamCaptureMode around each block of them), where
 * they break no capture; the program's own mode is put back before return.
 * The batch's stream itself is asked whether it is being captured before
 * any event goes on it.
 *
 * Events and anchors belong to their context: when it is destroyed
 * (src/memwrap.c tells) or its id changes (cuCtxGetId, asked per batch),
 * what was queued for it is written as "lost" and its state forgotten, never
 * touched again.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gputime.h"
#include "settings.h"
#include "tp.h"

#define GT_CTXS 16
#define GT_QUEUE 4096                        /* batches in flight, all streams */
#define GT_REANCHOR_NS 4000000000ull         /* renew an anchor this often */
#define GT_EXIT_WAIT_NS 2000000000ull        /* at exit, wait this long at most */

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
static struct gt_ctx gt_ctxs[GT_CTXS];
static struct gt_entry gt_queue[GT_QUEUE];
static size_t gt_head, gt_count;
static pthread_once_t gt_once = PTHREAD_ONCE_INIT;

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
 * shortest of three tries is kept.
 */
static bool anchor(const struct cbt_real *real, struct gt_ctx *c, unsigned gen)
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
    if (trial)
        pool_put(c, trial);
    ctx_pop(real, pushed);
    if (ok)
        c->anchor_ns[gen & 1] = at;
    return ok;
}

/* Everything queued for context i is lost; its state is forgotten (its
 * events are the dead context's: never used again). */
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

/* Context state for (ctx, id): found, or made (anchored); -1 when it cannot be had. */
static int ctx_state_locked(const struct cbt_real *real, CUcontext ctx, unsigned long long id, int32_t device)
{
    int free_slot = -1;
    for (int i = 0; i < GT_CTXS; i++) {
        struct gt_ctx *c = &gt_ctxs[i];
        if (!c->valid) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (c->ctx != ctx)
            continue;
        if (c->id == id)
            return i;
        forget_locked(i); /* the handle names a new context now */
        if (free_slot < 0 || free_slot > i)
            free_slot = i;
    }
    if (free_slot < 0)
        return -1;
    struct gt_ctx *c = &gt_ctxs[free_slot];
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->id = id;
    c->device = device;
    c->valid = true;
    if (!anchor(real, c, 0)) {
        /* Nothing of it is used again; what was made of it stays (leaked). */
        c->valid = false;
        return -1;
    }
    c->anchored = true;
    return free_slot;
}

/* The head of the queue, done: its GPU times, written; its events back in the pool. */
static void finish_head_locked(const struct cbt_real *real, CUresult done)
{
    struct gt_entry *e = &gt_queue[gt_head];
    struct gt_ctx *c = e->ctx >= 0 ? &gt_ctxs[e->ctx] : NULL;
    bool ok = c && c->valid && c->id == e->ctx_id && done == CUDA_SUCCESS;
    float from_anchor = 0, dur = 0;
    unsigned slot = e->gen & 1;
    if (ok && c->gen - e->gen > 1)
        ok = false; /* its anchor was renewed twice since: not kept */
    if (ok)
        ok = real->event_elapsed(&from_anchor, c->anchor[slot], e->start) == CUDA_SUCCESS &&
             real->event_elapsed(&dur, e->start, e->end) == CUDA_SUCCESS && dur >= 0;
    if (ok) {
        int64_t start = (int64_t)c->anchor_ns[slot] + (int64_t)((double)from_anchor * 1e6);
        e->ev.status = CBT_GPU_TIMED;
        e->ev.gpu_ns = (uint64_t)((double)dur * 1e6);
        e->ev.start_rel_ns = start - (int64_t)cbt_mono_ns();
    } else {
        e->ev.status = CBT_GPU_LOST;
    }
    if (c && c->valid && c->id == e->ctx_id) {
        pool_put(c, e->start);
        pool_put(c, e->end);
    }
    emit(&e->ev);
    gt_head = (gt_head + 1) % GT_QUEUE;
    gt_count--;
}

/* Is any queued batch of context i started under anchor generation gen? */
static bool uses_anchor_locked(int i, unsigned gen)
{
    for (size_t k = 0; k < gt_count; k++) {
        const struct gt_entry *e = &gt_queue[(gt_head + k) % GT_QUEUE];
        if (e->ctx == i && e->gen == gen)
            return true;
    }
    return false;
}

/* Write every queued batch whose end event completed, in order; with a
 * deadline, wait for them until then. */
static void poll_locked(const struct cbt_real *real, uint64_t deadline)
{
    while (gt_count) {
        struct gt_entry *e = &gt_queue[gt_head];
        if (e->ctx < 0 || !gt_ctxs[e->ctx].valid || gt_ctxs[e->ctx].id != e->ctx_id) {
            finish_head_locked(real, CUDA_ERROR_INVALID_CONTEXT);
            continue;
        }
        CUresult r = real->event_query(e->end);
        if (r == CUDA_ERROR_NOT_READY) {
            if (!deadline || cbt_mono_ns() >= deadline)
                break;
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        finish_head_locked(real, r);
    }
    /* Renew old anchors once no queued batch needs the one before. */
    uint64_t now = cbt_mono_ns();
    for (int i = 0; i < GT_CTXS; i++) {
        struct gt_ctx *c = &gt_ctxs[i];
        if (c->valid && c->anchored && now - c->anchor_ns[c->gen & 1] > GT_REANCHOR_NS &&
            !uses_anchor_locked(i, c->gen - 1)) {
            if (anchor(real, c, c->gen + 1))
                c->gen++;
        }
    }
}

static void at_exit(void)
{
    const struct cbt_real *real = cbt_real();
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt_lock);
    if (real->event_query)
        poll_locked(real, cbt_mono_ns() + GT_EXIT_WAIT_NS);
    while (gt_count) /* still not done: said so */
        finish_head_locked(real, CUDA_ERROR_NOT_READY);
    pthread_mutex_unlock(&gt_lock);
    relaxed_end(real, was);
}

/* A forked child has none of its parent's contexts: nothing of theirs is used. */
static void in_child(void)
{
    memset(gt_ctxs, 0, sizeof gt_ctxs);
    gt_head = gt_count = 0;
    pthread_mutex_init(&gt_lock, NULL);
}

static void gt_init(void)
{
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_child);
}

static void gpu_before_relaxed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                               const struct cbt_real *real);

static bool have_driver(const struct cbt_real *real)
{
    return real->ctx_get_id && real->event_create && real->event_record[0] && real->event_query &&
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
 * captured, the read-back of the batches queued before (only when one is),
 * its context's state and two events from the pool (one lock), their
 * records, then the queue (a second lock).  The read-back's queries and the
 * anchor's wait are unsafe during another thread's capture; cuEventCreate,
 * cuEventRecord on a stream not captured, cuEventElapsedTime and cuCtxGetId
 * are not (measured).  Still the calls around the batch run in RELAXED mode
 * (two exchanges each side, about 14 ns a pair): a build that made the
 * records outside it timed a 1-op device-to-device batch at about 5.6 us
 * on the H200 against about 3.1 us for the build that made them inside,
 * which call made the difference not measured.
 * The read-back comes before the batch's own work is submitted: a query just
 * after it costs the H200 microseconds more.
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
    b->capture = cbt_stream_capture(real, ptsz, stream);
    if (b->capture != CBT_CAPTURE_NONE) {
        /* captured into a graph, or its state unknown: no event on it */
        t->status = b->capture == CBT_CAPTURE_UNKNOWN ? CBT_GPU_NO_EVENTS : CBT_GPU_CAPTURING;
        return;
    }
    CUstreamCaptureMode was = relaxed_begin(real);
    gpu_before_relaxed(t, b, ptsz, stream, real);
    relaxed_end(real, was);
}

static void gpu_before_relaxed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                               const struct cbt_real *real)
{
    unsigned long long id = 0;
    CUcontext ctx = (CUcontext)(uintptr_t)b->context;
    if (!ctx || real->ctx_get_id(ctx, &id) != CUDA_SUCCESS)
        return;
    pthread_mutex_lock(&gt_lock);
    if (gt_count) /* the batches queued before, read back before this one's work is submitted */
        poll_locked(real, 0);
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
        if (gt_ctxs[i].valid && gt_ctxs[i].id == id) {
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
    if (gt_ctxs[t->ctx].valid && gt_ctxs[t->ctx].id == t->ctx_id) {
        pool_put(&gt_ctxs[t->ctx], t->start);
        pool_put(&gt_ctxs[t->ctx], t->end);
    }
    pthread_mutex_unlock(&gt_lock);
}

void cbt_gpu_after(struct cbt_gpu_call *t, CUresult res, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                   const struct cbt_ev_gpu *sum)
{
    if (t->status < 0)
        return;
    const struct cbt_real *real = cbt_real();
    struct gt_entry e = {
        .ctx = t->ctx, .ctx_id = t->ctx_id, .start = t->start, .end = t->end,
        .ev = {.batch_id = b->batch_id, .status = (uint8_t)t->status, .tid = b->tid, .api = b->api,
               .stream = b->stream, .stream_id = b->stream_id, .device = b->device, .driver_ns = b->driver_ns,
               .src_kind = CBT_GPU_MIXED_KIND, .dst_kind = CBT_GPU_MIXED_KIND, .src_device = -1, .dst_device = -1},
    };
    if (sum) {
        e.ev.ops = sum->ops;
        e.ev.bytes = sum->bytes;
        e.ev.src_kind = sum->src_kind;
        e.ev.dst_kind = sum->dst_kind;
        e.ev.src_device = sum->src_device;
        e.ev.dst_device = sum->dst_device;
    }
    if (t->status == CBT_GPU_TIMED && res != CUDA_SUCCESS)
        e.ev.status = CBT_GPU_CALL_FAILED;
    if (e.ev.status == CBT_GPU_TIMED) {
        CUstreamCaptureMode was = relaxed_begin(real);
        if (real->event_record[ptsz](e.end, stream) != CUDA_SUCCESS)
            e.ev.status = CBT_GPU_NO_EVENTS;
        relaxed_end(real, was);
    }
    if (e.ev.status != CBT_GPU_TIMED) {
        give_back(t);
        emit(&e.ev);
        return;
    }
    pthread_mutex_lock(&gt_lock);
    struct gt_ctx *x = &gt_ctxs[t->ctx];
    e.gen = x->gen;
    if (!x->valid || x->id != t->ctx_id) {
        e.ev.status = CBT_GPU_LOST; /* its context went meanwhile: its events with it */
        emit(&e.ev);
    } else if (gt_count == GT_QUEUE) {
        e.ev.status = CBT_GPU_OVERFLOW;
        pool_put(x, e.start);
        pool_put(x, e.end);
        emit(&e.ev);
    } else {
        gt_queue[(gt_head + gt_count) % GT_QUEUE] = e;
        gt_count++;
    }
    pthread_mutex_unlock(&gt_lock);
}

void cbt_gpu_context_going(void)
{
    const struct cbt_real *real = cbt_real();
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt_lock);
    if (gt_count && have_driver(real))
        poll_locked(real, 0);
    pthread_mutex_unlock(&gt_lock);
    relaxed_end(real, was);
}

void cbt_gpu_context_gone(CUcontext ctx, int device)
{
    pthread_mutex_lock(&gt_lock);
    for (int i = 0; i < GT_CTXS; i++) {
        struct gt_ctx *c = &gt_ctxs[i];
        if (c->valid && (ctx ? c->ctx == ctx : c->device == device))
            forget_locked(i);
    }
    /* what is lost is written at once, in order */
    while (gt_count && gt_queue[gt_head].ctx < 0)
        finish_head_locked(cbt_real(), CUDA_ERROR_INVALID_CONTEXT);
    pthread_mutex_unlock(&gt_lock);
}
