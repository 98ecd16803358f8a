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
 * shim's own (the reader, made at the first timed batch): every 1 to 16 ms
 * while batches are queued (its pace follows how many it finds: see
 * reader_main), it writes the GPU time of every queued batch whose end
 * event completed, in order on each thread's ring (one cuEventElapsedTime
 * asks that and how long it took, one more places its start against its
 * context's anchor), those of up to 32 batches (a slice) in one
 * cubatchtrace:gpu_time event: an event per batch, written by the reader,
 * cost the calling thread time too, most at 16 ops (bench/results:
 * gputime-emit/, gputime-batched/); it keeps looking at that
 * pace for a second after the rings empty, and only then sleeps on a
 * condition variable until a batch is queued, looking once a second (so
 * that a program that synchronizes between batches does not make each one
 * wake it).  The calling thread only records the two events and queues the
 * batch on a ring of its own, whose slots keep their two events from one
 * use to the next: no lock, no pool, no atomic read-modify-write on its
 * usual way (measured on the H200 with bench/abn.sh: a global queue's lock,
 * pool and entry cost a timed batch about as much as the read-back's
 * queries did).  Where the reader cannot be made, and once the process
 * exits, the next timed batch reads back instead.  At exit (atexit) the rest are waited for, briefly.  A process
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
 * and its ring's events, checked again once a context went (struct
 * cbt_gpu_thread, in its state), while memwrap.c sees every way to destroy
 * one; else it asks per batch, takes the events from the pool and queues
 * on the shared ring, under gt.lock.
 *
 * Two locks: gt.lock guards the list of rings, the shared ring's writing,
 * the contexts' table and their pools, held briefly; gt.read_lock is held
 * by whoever reads back (driver calls on queued events, the rings' tails
 * moved, the gpu_time events written, anchors renewed) and by whoever
 * forgets a context, so that no event is used while its context is
 * forgotten.  A calling thread never waits for a read-back.  Order:
 * gt.read_lock, then gt.lock.
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
#define GT_RING 512                          /* a thread's timed batches in flight */
#define GT_SHARED_RING 4096                  /* those of the threads without a ring, together */
#define GT_FILL 8                            /* slots given events at a time */
#define GT_REANCHOR_NS 4000000000ull         /* renew an anchor this often */
#define GT_EXIT_WAIT_NS 2000000000ull        /* at exit, wait this long at most */
#define GT_READ_PERIOD_NS 1000000            /* the reader's pace while batches are queued: at first, */
#define GT_READ_PERIOD_MAX_NS 16000000       /* and at most (see reader_main) */
#define GT_LINGER_NS 1000000000ull           /* and for this long after the rings emptied */
#define GT_IDLE_LOOK_NS 1000000000ull        /* then looks this often, asleep but when woken */
#define GT_SLICE 32                          /* entries read back per turn of gt.lock */

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

/* A timed batch queued for the read-back, in its ring: one cache line,
 * which the writer fills with the batch's id and anchor generation (the
 * events and their context are the slot's own, kept from its last use). */
struct cbt_gpu_slot {
    CUevent start, end;          /* a thread's ring: the slot's own, kept (NULL: none yet) */
    unsigned long long ctx_id;
    uint64_t epoch;              /* gt.ctx_epoch when they were last found its (a thread's ring) */
    uint64_t batch_id;
    int ctx;                     /* the context's state they belong to */
    unsigned gen;                /* the anchor in effect when the batch started */
} __attribute__((aligned(64)));

/*
 * A ring: one writer, the reader.  A thread's own ring is written by that
 * thread alone, with no lock: slots [tail, head) are queued, head moved on
 * (release) once a slot is written, tail (its own cache line) by whoever
 * reads back (gt.read_lock), once the slots before it are read.  The
 * others are free, and keep their events for the batch that takes them
 * next.  The shared ring is written under gt.lock by the threads with no
 * ring of their own, with events from the pool, which the read-back puts
 * back there.
 */
struct cbt_gpu_ring {
    uint64_t head;
    uint64_t tail_seen;          /* the writer's last look at tail */
    unsigned size;
    bool shared;
    bool gone;                   /* its thread ended: freed once read back (release) */
    struct cbt_gpu_ring *next;   /* every ring (gt.rings, gt.lock) */
    uint64_t tail __attribute__((aligned(64)));
    struct cbt_gpu_slot slots[] __attribute__((aligned(64)));
};

static CBT_TLS struct cbt_gpu_ring *gt_mine; /* this thread's (kept by a forked child) */

/*
 * GPU time's state, all of it but gt_mine (one per thread): one struct,
 * set back by one function in a forked child (cbt_gpu_after_fork_child).
 * gt.lock guards it but for the read-back's part (gt.read_lock) and what
 * a field says otherwise.  Two mutexes, not one, so that a calling thread
 * never waits for a read-back's driver calls (the top says which holds
 * which).  What a calling thread reads on the usual way (before_ring)
 * without a lock has a cache line of its own, apart from the locks the
 * reader takes every turn; the contexts' table comes first, a whole number
 * of lines (the compiler then gives the usual way the code it had when
 * these were separate variables).
 */
static struct {
    struct gt_ctx ctxs[GT_CTXS];  /* under lock; a slot's gen read on the usual way */
    /* read on the usual way, without a lock */
    pthread_once_t once;          /* gt_init, at the first timed batch */
    /* The reader thread (set under lock): not made yet; reading; the
     * calling threads read back instead (it could not be made, or the
     * process is exiting). */
    enum { READER_NONE, READER_RUNNING, READER_INLINE } reader;
    bool reader_waiting;          /* asleep on wake: nothing queued (set under lock) */
    uint64_t ctx_epoch;           /* the context ids' memos' (ctx_id): moves when a context goes */
    /* under lock */
    pthread_mutex_t lock __attribute__((aligned(64)));
    pthread_cond_t wake;          /* the reader's wait between turns */
    struct cbt_gpu_ring *rings;   /* every ring; removed only by whoever reads back */
    struct cbt_gpu_ring *shared;  /* the shared one, made when first needed */
    /* under read_lock */
    pthread_mutex_t read_lock;
    uint64_t read_count;          /* batches read back, ever */
    /* set at load (gt_at_load): the CPUs the process could run on, the reader's */
    cpu_set_t load_cpus;
    bool have_load_cpus;
} gt = {
    .once = PTHREAD_ONCE_INIT,
    .ctx_epoch = 1, /* a memo of epoch 0 (never filled) never matches */
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .read_lock = PTHREAD_MUTEX_INITIALIZER,
};
_Static_assert(sizeof gt.ctxs % 64 == 0, "the contexts' table is a whole number of cache lines");

/*
 * Context ids a thread asked for (cuCtxGetId), by handle, in its memo
 * (struct cbt_gpu_call's), while no context went: gt.ctx_epoch moves on
 * when one goes (cbt_gpu_context_going before, cbt_gpu_context_gone
 * after), and a new context can take a handle only once the old one went.
 * The caller gives no memo where memwrap.c may not see every call that can
 * destroy a context: then the id is asked per batch.
 */
static inline void ctx_epoch_next(void) { __atomic_fetch_add(&gt.ctx_epoch, 1, __ATOMIC_ACQ_REL); }

static inline struct cbt_gpu_memo *memo_of(struct cbt_gpu_thread *th, CUcontext ctx)
{
    return &th->memo[((uintptr_t)ctx >> 4) % CBT_GPU_MEMO];
}

static bool ctx_id(const struct cbt_real *real, struct cbt_gpu_thread *th, CUcontext ctx, unsigned long long *id)
{
    uint64_t epoch = __atomic_load_n(&gt.ctx_epoch, __ATOMIC_ACQUIRE); /* before the driver is asked */
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
__attribute__((constructor)) static void gt_at_load(void)
{
    gt.have_load_cpus = sched_getaffinity(0, sizeof gt.load_cpus, &gt.load_cpus) == 0;
}

/* GPU times gathered for one cubatchtrace:gpu_time event (up to
 * CBT_EV_GPU_TIMES batches): LTTng-UST costs the writer far more per event
 * than per element, and the read-back finds batches a slice at a time. */
_Static_assert(GT_SLICE <= CBT_EV_GPU_TIMES, "a slice read back fits one gpu_time event");
static inline void times_add(struct cbt_ev_gpu_times *t, const struct cbt_ev_gpu_time *ev)
{
#define CBT_GT_ADD_(kind, type, name, en) t->name[t->n] = ev->name;
    CBT_EV_GPU_TIME_FIELDS(CBT_GT_ADD_)
#undef CBT_GT_ADD_
    t->n++;
}

/* The event written, when it holds any; emptied. */
static void times_emit(struct cbt_ev_gpu_times *t)
{
    if (t->n && cbt_tp_enabled(gpu_time))
        cbt_tp(gpu_time, t, __builtin_return_address(0));
    t->n = 0;
}

/* One batch's, in an event of its own (those not read back in a slice). */
static void emit(const struct cbt_ev_gpu_time *ev)
{
    struct cbt_ev_gpu_times t;
    t.n = 0;
    times_add(&t, ev);
    times_emit(&t);
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
 * for the caller to put in the pool under gt.lock (NULL: none).  Made by the
 * holder of gt.read_lock, or under gt.lock for a context not anchored yet.
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

/* Context i's state is forgotten: what is queued for it is lost (read
 * back as such: ctx_is no longer holds), its events are the dead context's,
 * never used again.  Both locks held. */
static void forget_locked(int i)
{
    struct gt_ctx *c = &gt.ctxs[i];
    free(c->pool);
    memset(c, 0, sizeof *c);
}

/* Is context i's state the one of (ctx, id)?  (gt.lock) */
static inline bool ctx_is(int i, unsigned long long id)
{
    return i >= 0 && gt.ctxs[i].valid && gt.ctxs[i].id == id;
}

static inline uint64_t ring_head(const struct cbt_gpu_ring *r) { return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE); }

static inline bool ring_full(struct cbt_gpu_ring *r)
{
    if (r->head - r->tail_seen < r->size)
        return false;
    r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    return r->head - r->tail_seen >= r->size;
}

/* A ring of `size` slots, in gt.rings (gt.lock); NULL: no memory. */
static struct cbt_gpu_ring *ring_new_locked(unsigned size, bool shared)
{
    const size_t bytes = sizeof(struct cbt_gpu_ring) + (size_t)size * sizeof(struct cbt_gpu_slot);
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0)
        return NULL;
    struct cbt_gpu_ring *r = memset(p, 0, bytes);
    r->size = size;
    r->shared = shared;
    r->next = gt.rings;
    gt.rings = r;
    return r;
}

/* Ring r read back and its thread gone: out of gt.rings, the events its
 * slots kept back in their pools, freed (both locks held). */
static void ring_free_locked(struct cbt_gpu_ring *r)
{
    for (struct cbt_gpu_ring **p = &gt.rings; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    for (unsigned k = 0; k < r->size; k++) {
        struct cbt_gpu_slot *s = &r->slots[k];
        if (s->end && ctx_is(s->ctx, s->ctx_id)) {
            pool_put(&gt.ctxs[s->ctx], s->start);
            pool_put(&gt.ctxs[s->ctx], s->end);
        }
    }
    free(r);
}

/*
 * The thread's next free slots given two events of context i (id) each:
 * those whose events are its found so again (the epoch they were last
 * found in moves when any context goes), as far as they run; up to
 * GT_FILL others given events from its pool (made there when it has none
 * free), under gt.lock in RELAXED mode: cuEventCreate, and making the
 * context current for it, break no capture either (the measurements
 * above).  A slot's events not its context's go back to their pool, or
 * with their dead context.  True: the head slot has them.
 */
static bool ring_fill_locked(const struct cbt_real *real, struct cbt_gpu_ring *r, int i, unsigned long long id)
{
    const uint64_t epoch = __atomic_load_n(&gt.ctx_epoch, __ATOMIC_ACQUIRE); /* before ctx_is */
    r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE); /* every slot read back since found again */
    if (ring_full(r) || !ctx_is(i, id))
        return false;
    unsigned made = 0;
    for (uint64_t k = r->head; k - r->tail_seen < r->size; k++) {
        struct cbt_gpu_slot *s = &r->slots[k % r->size];
        if (s->end && s->ctx == i && s->ctx_id == id) {
            s->epoch = epoch;
            continue;
        }
        if (made++ == GT_FILL)
            break;
        if (s->end && ctx_is(s->ctx, s->ctx_id)) {
            pool_put(&gt.ctxs[s->ctx], s->start);
            pool_put(&gt.ctxs[s->ctx], s->end);
        }
        s->start = s->end = NULL;
        CUevent a = pool_get(real, &gt.ctxs[i]);
        CUevent b = a ? pool_get(real, &gt.ctxs[i]) : NULL;
        if (!b) {
            pool_put(&gt.ctxs[i], a);
            break;
        }
        *s = (struct cbt_gpu_slot){.start = a, .end = b, .ctx = i, .ctx_id = id, .epoch = epoch};
    }
    const struct cbt_gpu_slot *h = &r->slots[r->head % r->size];
    return h->end && h->ctx == i && h->ctx_id == id;
}

/* Is any batch queued on any ring?  (gt.lock) */
static bool queued_locked(void)
{
    for (struct cbt_gpu_ring *r = gt.rings; r; r = r->next)
        if (ring_head(r) != __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

void cbt_gpu_thread_release(struct cbt_gpu_thread *th)
{
    struct cbt_gpu_ring *r = th->ring;
    if (!r)
        return;
    th->ring = NULL;
    if (gt_mine == r)
        gt_mine = NULL;
    __atomic_store_n(&r->gone, true, __ATOMIC_RELEASE);
}

/* Context state for (ctx, id): found, or made (anchored); -1 when it cannot
 * be had.  Under gt.lock; a state whose handle names a new context now is
 * forgotten first, which takes gt.read_lock (the lock is let go meanwhile). */
static int ctx_state_locked(const struct cbt_real *real, CUcontext ctx, unsigned long long id, int32_t device)
{
    for (bool again = true; again;) {
        again = false;
        for (int i = 0; i < GT_CTXS; i++) {
            struct gt_ctx *c = &gt.ctxs[i];
            if (!c->valid || c->ctx != ctx)
                continue;
            if (c->id == id)
                return i;
            pthread_mutex_unlock(&gt.lock);
            pthread_mutex_lock(&gt.read_lock);
            pthread_mutex_lock(&gt.lock);
            if (c->valid && c->ctx == ctx && c->id != id)
                forget_locked(i);
            pthread_mutex_unlock(&gt.read_lock);
            again = true; /* the table may have changed meanwhile */
            break;
        }
    }
    int free_slot = -1;
    for (int i = 0; i < GT_CTXS && free_slot < 0; i++)
        if (!gt.ctxs[i].valid)
            free_slot = i;
    if (free_slot < 0)
        return -1;
    struct gt_ctx *c = &gt.ctxs[free_slot];
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

/* Is any queued batch of context i started under anchor generation gen?  (gt.read_lock and gt.lock) */
static bool uses_anchor_locked(int i, unsigned gen)
{
    for (const struct cbt_gpu_ring *r = gt.rings; r; r = r->next)
        for (uint64_t k = r->tail, h = ring_head(r); k < h; k++) {
            const struct cbt_gpu_slot *s = &r->slots[k % r->size];
            if (s->ctx == i && s->gen == gen)
                return true;
        }
    return false;
}

/* One queued batch as the read-back takes it from its ring's tail. */
struct gt_taken {
    struct cbt_gpu_slot e;
    struct cbt_ev_gpu_time ev; /* what its gpu_time event says */
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
        x->ev.status = CBT_GPU_TIMED;
        x->ev.gpu_ns = (uint64_t)((double)x->dur * 1e6);
        x->start_ns = (int64_t)x->anchor_ns + (int64_t)((double)from_anchor * 1e6);
    } else {
        x->ev.status = CBT_GPU_LOST;
    }
}

/* Renew old anchors once no queued batch needs the one before (gt.read_lock held). */
static void renew_anchors(const struct cbt_real *real)
{
    uint64_t now = cbt_mono_ns();
    for (int i = 0; i < GT_CTXS; i++) {
        pthread_mutex_lock(&gt.lock);
        struct gt_ctx *c = &gt.ctxs[i];
        bool due = c->valid && c->anchored && now - c->anchor_ns[c->gen & 1] > GT_REANCHOR_NS &&
                   !uses_anchor_locked(i, c->gen - 1);
        unsigned gen = c->gen + 1;
        pthread_mutex_unlock(&gt.lock);
        if (!due)
            continue;
        /* the slot of gen is its generation before last's: no queued batch
         * refers to it, and only the holder of gt.read_lock touches it */
        CUevent spare = NULL;
        bool ok = anchor(real, c, gen, &spare);
        pthread_mutex_lock(&gt.lock);
        if (ok)
            __atomic_store_n(&c->gen, gen, __ATOMIC_RELAXED); /* read without gt.lock by a ring's writer */
        pool_put(c, spare);
        pthread_mutex_unlock(&gt.lock);
    }
}

/*
 * Read back ring r (gt.read_lock held): every batch queued on it whose end
 * event completed, in order, written as gpu_time; with a deadline, wait for
 * them until then.  A slice at a time: the states of their contexts and
 * anchors looked up under gt.lock, their events read without it (no
 * context is forgotten meanwhile: that takes gt.read_lock), then tail moved
 * past them (the shared ring's events back in their pool first, under
 * gt.lock), then written.  own_thread: the reader's, which makes each
 * batch's context current (*current) while it reads its events.  False: a
 * batch not done stopped it.
 */
static bool read_ring(const struct cbt_real *real, struct cbt_gpu_ring *r, uint64_t deadline, bool own_thread,
                      CUcontext *current)
{
    struct gt_taken x[GT_SLICE];
    struct cbt_ev_gpu_times out;
    out.n = 0;
    uint64_t tail = r->tail;
    for (;;) {
        const uint64_t head = ring_head(r);
        size_t n = head - tail < GT_SLICE ? (size_t)(head - tail) : GT_SLICE;
        if (!n)
            return true;
        pthread_mutex_lock(&gt.lock);
        for (size_t k = 0; k < n; k++) {
            x[k].e = r->slots[(tail + k) % r->size];
            x[k].ev = (struct cbt_ev_gpu_time){.batch_id = x[k].e.batch_id};
            x[k].valid = ctx_is(x[k].e.ctx, x[k].e.ctx_id);
            const struct gt_ctx *c = x[k].valid ? &gt.ctxs[x[k].e.ctx] : NULL;
            x[k].ctx = c ? c->ctx : NULL;
            bool kept = c && c->gen - x[k].e.gen <= 1; /* else renewed twice since: not kept */
            x[k].anchor = kept ? c->anchor[x[k].e.gen & 1] : NULL;
            x[k].anchor_ns = kept ? c->anchor_ns[x[k].e.gen & 1] : 0;
        }
        pthread_mutex_unlock(&gt.lock);
        size_t done = 0;
        while (done < n) {
            struct gt_taken *t = &x[done];
            if (t->valid && own_thread && t->ctx != *current && real->ctx_push && real->ctx_pop) {
                CUcontext dummy;
                if (*current)
                    (void)real->ctx_pop(&dummy);
                *current = real->ctx_push(t->ctx) == CUDA_SUCCESS ? t->ctx : NULL;
            }
            if (t->valid) {
                /* one call asks whether it is done and, when it is, how long
                 * it took (NOT_READY while either event is not done) */
#ifndef CBT_GT_BENCH_NO_ELAPSED
                CUresult res = real->event_elapsed(&t->dur, t->e.start, t->e.end);
#else /* a build for bench/abn.sh only: no event read back (written as lost) */
                CUresult res = CUDA_ERROR_INVALID_VALUE;
#endif
                if (res == CUDA_ERROR_NOT_READY) {
                    if (!deadline || cbt_mono_ns() >= deadline)
                        break;
                    struct timespec ts = {0, 100000};
                    nanosleep(&ts, NULL);
                    continue;
                }
                t->valid = res == CUDA_SUCCESS;
            }
            times(real, t);
            done++;
        }
        if (r->shared && done) {
            pthread_mutex_lock(&gt.lock);
            for (size_t k = 0; k < done; k++) {
                struct cbt_gpu_slot *s = &r->slots[(tail + k) % r->size];
                if (ctx_is(s->ctx, s->ctx_id)) {
                    pool_put(&gt.ctxs[s->ctx], s->start);
                    pool_put(&gt.ctxs[s->ctx], s->end);
                }
                s->start = s->end = NULL;
            }
            pthread_mutex_unlock(&gt.lock);
        }
        tail += done;
        gt.read_count += done;
        __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
        const int64_t now = (int64_t)cbt_mono_ns();
        for (size_t k = 0; k < done; k++) {
            if (x[k].ev.status == CBT_GPU_TIMED)
                x[k].ev.start_rel_ns = x[k].start_ns - now;
            times_add(&out, &x[k].ev);
        }
        times_emit(&out); /* the slice's, in one event */
        if (done < n)
            return false;
    }
}

/* Read back every ring (gt.read_lock held; see read_ring); a ring read back
 * whose thread is gone is freed; then the anchors due are renewed. */
static void read_back(const struct cbt_real *real, uint64_t deadline, bool own_thread)
{
    CUcontext current = NULL; /* own_thread: the context pushed (the events' own, current while read) */
    pthread_mutex_lock(&gt.lock);
    struct cbt_gpu_ring *r = gt.rings; /* rings are added in front, removed only under gt.read_lock */
    pthread_mutex_unlock(&gt.lock);
    while (r) {
        (void)read_ring(real, r, deadline, own_thread, &current);
        struct cbt_gpu_ring *next = r->next;
        if (__atomic_load_n(&r->gone, __ATOMIC_ACQUIRE) && r->tail == ring_head(r)) {
            pthread_mutex_lock(&gt.lock);
            ring_free_locked(r);
            pthread_mutex_unlock(&gt.lock);
        }
        r = next;
    }
    if (current) {
        CUcontext dummy;
        (void)real->ctx_pop(&dummy);
    }
    renew_anchors(real);
}

/* The batch at ring r's tail written as lost, its slot passed (both locks held). */
static void lose_locked(struct cbt_gpu_ring *r)
{
    struct cbt_gpu_slot *s = &r->slots[r->tail % r->size];
    if (r->shared && ctx_is(s->ctx, s->ctx_id)) {
        pool_put(&gt.ctxs[s->ctx], s->start);
        pool_put(&gt.ctxs[s->ctx], s->end);
    }
    if (r->shared)
        s->start = s->end = NULL;
    const struct cbt_ev_gpu_time ev = {.batch_id = s->batch_id, .status = CBT_GPU_LOST};
    __atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
    emit(&ev);
}

/* What is still queued, written as not read back (both locks held). */
static void abandon_locked(void)
{
    for (struct cbt_gpu_ring *r = gt.rings; r; r = r->next)
        for (uint64_t h = ring_head(r); r->tail < h;)
            lose_locked(r);
}

/* The batches of forgotten contexts at the heads of the rings, written as lost at once (both locks held). */
static void lost_heads_locked(void)
{
    for (struct cbt_gpu_ring *r = gt.rings; r; r = r->next)
        for (uint64_t h = ring_head(r); r->tail < h;) {
            const struct cbt_gpu_slot *s = &r->slots[r->tail % r->size];
            if (ctx_is(s->ctx, s->ctx_id))
                break;
            lose_locked(r);
        }
}

/* A program thread reads back (the fallback; a context going), in RELAXED mode. */
static void read_back_here(const struct cbt_real *real)
{
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt.read_lock);
    read_back(real, 0, false);
    pthread_mutex_unlock(&gt.read_lock);
    relaxed_end(real, was);
}

static void at_exit(void)
{
    const struct cbt_real *real = cbt_real();
    pthread_mutex_lock(&gt.lock);
    if (gt.reader == READER_RUNNING) { /* it stops at its next turn, and reads nothing after this */
        gt.reader = READER_INLINE;
        pthread_cond_signal(&gt.wake);
    }
    pthread_mutex_unlock(&gt.lock);
    CUstreamCaptureMode was = relaxed_begin(real);
    pthread_mutex_lock(&gt.read_lock);
    if (real->event_elapsed)
        read_back(real, cbt_mono_ns() + GT_EXIT_WAIT_NS, false);
    pthread_mutex_lock(&gt.lock);
    abandon_locked(); /* still not done: said so */
    pthread_mutex_unlock(&gt.lock);
    pthread_mutex_unlock(&gt.read_lock);
    relaxed_end(real, was);
}

/* gt.wake on CLOCK_MONOTONIC (the reader's timed waits). */
static void wake_init(void)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return; /* the static initializer's CLOCK_REALTIME: only the pace is off when the clock jumps */
    (void)pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&gt.wake, &a);
    pthread_condattr_destroy(&a);
}

/* A forked child has none of its parent's contexts, nor its reader, nor
 * its other threads: nothing of theirs is used.  The rings of those
 * threads are freed; this thread's and the shared one are kept, emptied,
 * their slots holding no event (the parent's contexts' events). */
void cbt_gpu_after_fork_child(void)
{
    memset(gt.ctxs, 0, sizeof gt.ctxs);
    struct cbt_gpu_ring **p = &gt.rings;
    while (*p) {
        struct cbt_gpu_ring *r = *p;
        if (r != gt_mine && r != gt.shared) {
            *p = r->next;
            free(r);
            continue;
        }
        r->head = r->tail = r->tail_seen = 0;
        for (unsigned k = 0; k < r->size; k++)
            r->slots[k].start = r->slots[k].end = NULL;
        p = &r->next;
    }
    gt.reader = READER_NONE;
    gt.reader_waiting = false;
    ctx_epoch_next();
    pthread_mutex_init(&gt.lock, NULL);
    pthread_mutex_init(&gt.read_lock, NULL);
    wake_init();
}

static void gt_init(void)
{
    wake_init();
    atexit(at_exit);
}

/* Wait on gt.wake until deadline (CLOCK_MONOTONIC ns) or a signal (gt.lock held). */
static void wait_until_locked(uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    (void)pthread_cond_timedwait(&gt.wake, &gt.lock, &ts);
}

/*
 * The reader's next pace, from the batches its turn read back (n): a turn
 * costs a wake, a lock and a context made current (a few microseconds of
 * CPU) whatever it reads, and the program's longer batches find it busy
 * more often, so it slows down, doubling its period up to
 * GT_READ_PERIOD_MAX_NS, while a turn finds fewer than GT_RING / 16, and
 * speeds up again, halving it down to GT_READ_PERIOD_NS, once one finds
 * more than GT_RING / 4 (a ring half full wakes it at once anyway).  The
 * gpu_time events come later, never fewer.
 */
static uint64_t next_period(uint64_t period, uint64_t n)
{
    if (n > GT_RING / 4 && period > GT_READ_PERIOD_NS)
        return period / 2;
    if (n < GT_RING / 16 && period < GT_READ_PERIOD_MAX_NS)
        return period * 2;
    return period;
}

/*
 * The reader: reads back every `period` while batches are queued (from
 * GT_READ_PERIOD_NS to GT_READ_PERIOD_MAX_NS: next_period), and keeps
 * looking at that pace for GT_LINGER_NS after the rings empty (a turn with
 * nothing queued takes gt.lock and no driver call);
 * only then does it sleep until a calling thread queues a batch and wakes
 * it (gt.reader_waiting), looking once a second.  A program that synchronizes between batches
 * empties the queue after each one: without the lingering, nearly every
 * batch would wake the reader, a futex system call on the calling thread.
 * Lingering costs a turn a period for a second after the last batch
 * (a few microseconds each, under 1 % of a CPU); batches further apart than
 * that pay the wake, well under 1 % of their interval.  Between turns the
 * reader waits on gt.wake, so that a calling thread can wake it early when
 * its ring reaches half full (a program that makes more than GT_RING / 2
 * batches a period).  Until the process exits.
 */
static void *reader_main(void *arg)
{
    (void)arg;
    const struct cbt_real *real = cbt_real();
    (void)relaxed_begin(real); /* this thread's mode, for good */
    uint64_t busy = cbt_mono_ns(); /* when a batch was last seen queued */
    uint64_t period = GT_READ_PERIOD_NS;
    pthread_mutex_lock(&gt.lock);
    for (;;) {
        if (gt.reader != READER_RUNNING)
            break;
        uint64_t now = cbt_mono_ns();
        if (!queued_locked()) {
            if (now - busy < GT_LINGER_NS) {
                /* on gt.wake, so that a ring half full wakes it early (the
                 * rings' writers take no gt.lock: none pays for the lock
                 * the wait takes back marked contended) */
                wait_until_locked(now + period);
                continue;
            }
            /* a ring's writer queues without gt.lock, and looks at
             * gt.reader_waiting after: a batch queued while this thread
             * goes to sleep may not wake it, and is read back at its next
             * look (GT_IDLE_LOOK_NS) */
            __atomic_store_n(&gt.reader_waiting, true, __ATOMIC_SEQ_CST);
            while (gt.reader == READER_RUNNING && !queued_locked())
                wait_until_locked(cbt_mono_ns() + GT_IDLE_LOOK_NS);
            __atomic_store_n(&gt.reader_waiting, false, __ATOMIC_RELAXED);
            continue;
        }
        busy = now;
        pthread_mutex_unlock(&gt.lock);
        pthread_mutex_lock(&gt.read_lock);
        pthread_mutex_lock(&gt.lock);
        bool running = gt.reader == READER_RUNNING; /* at exit, at_exit reads back instead */
        pthread_mutex_unlock(&gt.lock);
        const uint64_t before = gt.read_count;
        if (running)
            read_back(real, 0, true);
        period = next_period(period, gt.read_count - before);
        pthread_mutex_unlock(&gt.read_lock);
        pthread_mutex_lock(&gt.lock);
        if (gt.reader == READER_RUNNING)
            wait_until_locked(cbt_mono_ns() + period);
    }
    pthread_mutex_unlock(&gt.lock);
    return NULL;
}

/* The reader made (gt.lock held, at the first timed batch): every signal
 * blocked, on the CPUs of the process at load; else the calling threads
 * read back.  Built with -DCBT_GT_NO_READER, never made: the calling
 * threads read back (bench/ab.sh gputime measures the difference). */
static void reader_start_locked(void)
{
    pthread_attr_t attr;
    pthread_t th;
    sigset_t all, old;
    gt.reader = READER_INLINE;
#ifdef CBT_GT_NO_READER
    if (gt.reader == READER_INLINE)
        return;
#endif
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &attr, reader_main, NULL) == 0) {
        gt.reader = READER_RUNNING;
        (void)pthread_setname_np(th, "cbt-gputime");
        /* after, not in attr: CPUs gone from the process's set since load
         * make this fail, where they would make pthread_create fail */
        if (gt.have_load_cpus)
            (void)pthread_setaffinity_np(th, sizeof gt.load_cpus, &gt.load_cpus);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static void gpu_before_relaxed(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                               const struct cbt_real *real);
static bool before_ring(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
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
 * start event's record; right after the call, the end event's
 * (cbt_gpu_end); once the batch event is written, the batch queued
 * (cbt_gpu_after).
 *
 * The usual way (before_ring): the thread has a ring (memwrap.c sees every
 * call that can destroy a context), the context's id is in its memo, the
 * ring's next slot holds two of its events, found its since no context
 * went, the stream is one the program made, the reader runs.  Then nothing
 * but the records is asked of the driver, in the thread's own capture
 * mode: cuEventRecord on a stream not being captured breaks no capture, of
 * this thread or another, in any mode (measured on the H200:
 * tests/gpu/measured/capture-h200.txt); and the batch is queued with no
 * lock and no atomic read-modify-write: the slot written, head moved on.
 * Otherwise (the first batch of a thread, context or slot, a context gone
 * since, the NULL, legacy or per-thread stream, no ring): the context's
 * id, its state (anchored when new) and the events (gt.lock), all in
 * RELAXED mode.  Without a reader (it could not be made, or the process is
 * exiting), that way also reads back the batches queued before, before the
 * batch's own work is submitted: a query just after it costs the H200
 * microseconds more.  A ring full (the GPU, or the reader, behind by
 * GT_RING batches of the thread) times no more batches of it until it is
 * read back: they say "overflow".
 */
void cbt_gpu_before(struct cbt_gpu_call *t, struct cbt_ev_batch *b, int ptsz, CUstream stream)
{
    t->status = -1;
    t->slot = NULL;
    t->start = t->end = NULL;
    if (!cbt_tp_enabled(gpu_time))
        return;
    pthread_once(&gt.once, gt_init);
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
    if (cbt_likely(before_ring(t, b, ptsz, stream, real)))
        return;
    CUstreamCaptureMode was = relaxed_begin(real);
    gpu_before_relaxed(t, b, ptsz, stream, real);
    relaxed_end(real, was);
}

/* A stream the program made: not NULL, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD. */
static inline bool made_stream(CUstream s) { return (uintptr_t)s > 2; }

/* The usual way (see above); false: the other. */
static bool before_ring(struct cbt_gpu_call *t, const struct cbt_ev_batch *b, int ptsz, CUstream stream,
                        const struct cbt_real *real)
{
    struct cbt_gpu_thread *th = t->th;
    CUcontext ctx = (CUcontext)(uintptr_t)b->context;
    struct cbt_gpu_ring *r = th ? th->ring : NULL;
    if (!r || !made_stream(stream) || !ctx || __atomic_load_n(&gt.reader, __ATOMIC_RELAXED) != READER_RUNNING)
        return false;
    const uint64_t epoch = __atomic_load_n(&gt.ctx_epoch, __ATOMIC_ACQUIRE);
    const struct cbt_gpu_memo *m = memo_of(th, ctx);
    if (m->epoch != epoch || m->ctx != ctx)
        return false;
    if (cbt_unlikely(ring_full(r))) {
        t->status = CBT_GPU_OVERFLOW;
        pthread_cond_signal(&gt.wake);
        return true;
    }
    struct cbt_gpu_slot *s = &r->slots[r->head % r->size];
    if (!s->end || s->epoch != epoch || s->ctx_id != m->id)
        return false;
    t->slot = s;
    t->ctx = s->ctx;
    t->ctx_id = s->ctx_id;
    /* not recorded: NO_EVENTS, the events stay the slot's */
    if (real->event_record[ptsz](s->start, stream) == CUDA_SUCCESS)
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
    pthread_mutex_lock(&gt.lock);
    if (cbt_unlikely(gt.reader != READER_RUNNING)) {
        if (gt.reader == READER_NONE)
            reader_start_locked();
        if (gt.reader == READER_INLINE && queued_locked()) {
            pthread_mutex_unlock(&gt.lock);
            read_back_here(real);
            pthread_mutex_lock(&gt.lock);
        }
    }
    int i = ctx_state_locked(real, ctx, id, b->device);
    if (i < 0) {
        pthread_mutex_unlock(&gt.lock);
        return;
    }
    if (t->th) { /* the thread's ring: its head slot given two events of the context */
        struct cbt_gpu_ring *r = t->th->ring;
        if (!r && (r = ring_new_locked(GT_RING, false)))
            t->th->ring = gt_mine = r;
        if (r && ring_full(r)) {
            t->status = CBT_GPU_OVERFLOW;
            pthread_mutex_unlock(&gt.lock);
            pthread_cond_signal(&gt.wake);
            return;
        }
        struct cbt_gpu_slot *s = r && ring_fill_locked(real, r, i, id) ? &r->slots[r->head % r->size] : NULL;
        pthread_mutex_unlock(&gt.lock);
        if (s && real->event_record[ptsz](s->start, stream) == CUDA_SUCCESS) {
            t->status = CBT_GPU_TIMED;
            t->slot = s;
            t->ctx = i;
            t->ctx_id = id;
        }
        return;
    }
    /* no ring: two events from the pool, queued on the shared ring */
    CUevent start = pool_get(real, &gt.ctxs[i]);
    CUevent end = start ? pool_get(real, &gt.ctxs[i]) : NULL;
    if (start && !end)
        pool_put(&gt.ctxs[i], start);
    pthread_mutex_unlock(&gt.lock);
    if (!end)
        return;
    if (real->event_record[ptsz](start, stream) != CUDA_SUCCESS) {
        pthread_mutex_lock(&gt.lock);
        if (ctx_is(i, id)) {
            pool_put(&gt.ctxs[i], start);
            pool_put(&gt.ctxs[i], end);
        }
        pthread_mutex_unlock(&gt.lock);
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
    if (!t->start) /* none, or the slot's */
        return;
    pthread_mutex_lock(&gt.lock);
    if (ctx_is(t->ctx, t->ctx_id)) {
        pool_put(&gt.ctxs[t->ctx], t->start);
        pool_put(&gt.ctxs[t->ctx], t->end);
    }
    pthread_mutex_unlock(&gt.lock);
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
    CUevent end = t->slot ? t->slot->end : t->end;
    if (made_stream(stream)) { /* no capture to break (see cbt_gpu_before) */
        if (real->event_record[ptsz](end, stream) != CUDA_SUCCESS)
            t->status = CBT_GPU_NO_EVENTS;
        return;
    }
    CUstreamCaptureMode was = relaxed_begin(real);
    if (real->event_record[ptsz](end, stream) != CUDA_SUCCESS)
        t->status = CBT_GPU_NO_EVENTS;
    relaxed_end(real, was);
}

/* The writer's look at a ring it queued on: the reader asleep for good, or
 * half the ring used before its turn, wake it. */
static inline void maybe_wake(struct cbt_gpu_ring *r, uint64_t head)
{
    if (cbt_unlikely(head - r->tail_seen == r->size / 2))
        r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(__atomic_load_n(&gt.reader_waiting, __ATOMIC_SEQ_CST) || head - r->tail_seen == r->size / 2))
        pthread_cond_signal(&gt.wake);
}

/* A timed batch queued on the thread's ring (no lock), or on the shared one
 * (gt.lock); a batch not timed after all written at once. */
/* A timed batch of a thread without a ring of its own (cbt_gpu_after):
 * queued on the shared ring, under gt.lock.  Apart, so that the usual way
 * saves no register for it. */
__attribute__((noinline)) static void after_shared(struct cbt_gpu_call *t, uint64_t batch_id)
{
    pthread_mutex_lock(&gt.lock);
    struct gt_ctx *x = &gt.ctxs[t->ctx];
    struct cbt_gpu_ring *r = gt.shared ? gt.shared : (gt.shared = ring_new_locked(GT_SHARED_RING, true));
    if (cbt_likely(ctx_is(t->ctx, t->ctx_id) && r && !ring_full(r))) {
        struct cbt_gpu_slot *s = &r->slots[r->head % r->size];
        s->start = t->start;
        s->end = t->end;
        s->ctx = t->ctx;
        s->ctx_id = t->ctx_id;
        s->gen = x->gen;
        s->batch_id = batch_id;
        const uint64_t head = r->head + 1;
        __atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
        maybe_wake(r, head);
    } else {
        struct cbt_ev_gpu_time ev = {.batch_id = batch_id};
        if (ctx_is(t->ctx, t->ctx_id)) {
            ev.status = CBT_GPU_OVERFLOW;
            pool_put(x, t->start);
            pool_put(x, t->end);
        } else {
            ev.status = CBT_GPU_LOST; /* its context went meanwhile: its events with it */
        }
        emit(&ev);
    }
    pthread_mutex_unlock(&gt.lock);
}

void cbt_gpu_after(struct cbt_gpu_call *t, uint64_t batch_id)
{
    if (t->status < 0)
        return;
    if (cbt_likely(t->status == CBT_GPU_TIMED && t->slot)) {
        struct cbt_gpu_ring *r = t->th->ring;
        struct cbt_gpu_slot *s = t->slot;
        s->batch_id = batch_id;
        s->gen = __atomic_load_n(&gt.ctxs[t->ctx].gen, __ATOMIC_RELAXED);
#ifdef CBT_GT_BENCH_NO_QUEUE
        return; /* a build for bench/abn.sh only: the slot not queued, its events used again next */
#endif
        const uint64_t head = r->head + 1;
        __atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
        maybe_wake(r, head);
        /* the next slot's line taken for writing while the program runs on
         * (the reader read it since): the next timed batch finds it owned
         * (bench/results/gputime-pf: a little less time, in two runs) */
        __builtin_prefetch(&r->slots[head % r->size], 1);
        return;
    }
    if (t->status != CBT_GPU_TIMED) {
        const struct cbt_ev_gpu_time ev = {.batch_id = batch_id, .status = (uint8_t)t->status};
        give_back(t);
        emit(&ev);
        return;
    }
    after_shared(t, batch_id);
}

void cbt_gpu_context_going(void)
{
    const struct cbt_real *real = cbt_real();
    ctx_epoch_next(); /* a memo filled from now on is one of the context that may go */
    pthread_mutex_lock(&gt.lock);
    bool queued = queued_locked();
    pthread_mutex_unlock(&gt.lock);
    if (queued && have_driver(real))
        read_back_here(real);
}

void cbt_gpu_context_gone(CUcontext ctx, int device)
{
    ctx_epoch_next(); /* no memo of the context gone holds now */
    pthread_mutex_lock(&gt.read_lock);
    pthread_mutex_lock(&gt.lock);
    for (int i = 0; i < GT_CTXS; i++) {
        struct gt_ctx *c = &gt.ctxs[i];
        if (c->valid && (ctx ? c->ctx == ctx : c->device == device))
            forget_locked(i);
    }
    lost_heads_locked(); /* what is lost is written at once, in order */
    ctx_epoch_next();    /* and no slot's events found its before the context was forgotten hold */
    pthread_mutex_unlock(&gt.lock);
    pthread_mutex_unlock(&gt.read_lock);
}
