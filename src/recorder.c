/*
 * The recorder thread and its queue (see recorder.h for why).
 *
 * The queue is one ring of bytes holding variable-sized records in order.
 * Calling threads reserve a record without a lock (one compare-and-swap of
 * the head; they never wait for the recorder), fill it and mark it ready;
 * the recorder takes records from the tail in order, waiting for one still
 * being filled, and zeroes the state word of every line it frees, so that
 * reserved space always reads as being written.  A record never wraps: a
 * padding record fills the end of the ring when the next does not fit.
 *
 * Waking the recorder would cost a calling thread a system call (and a
 * fence on every batch to know whether it sleeps), so calling threads never
 * wake it: it polls the queue every millisecond while batches come (for
 * ACTIVE_NS after the last one), then every 50 ms.  A batch is recorded
 * about a millisecond after it returned while batches keep coming, at most
 * 50 ms after a pause.  With a 4 MiB queue that is far more room than a
 * millisecond of batches needs; when it does fill, calling threads record
 * their own batches until the recorder catches up.
 *
 * The lines of the queue a record will be written to were last touched by
 * the recorder, on another core: a calling thread that wrote them cold would
 * wait for each at the next fence (the driver call has some).  So each
 * reservation also prefetches, for writing, the lines just past it, where
 * the next record goes.
 *
 * Nothing is lost: when the queue (CUBATCHTRACE_QUEUE_KB, 4 MiB by default)
 * is full, or a batch is larger than a quarter of it, the calling thread
 * records the batch itself.  At exit (an
 * atexit handler, which runs before any library's destructor, so LTTng-UST
 * is still there) the queue is drained, waiting at most EXIT_WAIT_S.  In a
 * forked child the queue starts empty (the parent records its own batches)
 * and a new recorder thread is started at the child's first batch.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

#define ALIGN 64u
#define ACTIVE_NS 100000000ull /* 100 ms of polling after the last record */
#define POLL_NS 1000000ull     /* every 1 ms */
#define IDLE_POLL_NS 50000000ull /* then every 50 ms */
#define PREFETCH_LINES 8
#define EXIT_WAIT_S 10

/* REC_WRITING is 0: free space is kept zeroed at every line's state word, so
 * a record is "being written" from the moment its space is reserved. */
enum { REC_WRITING = 0, REC_READY = 2, REC_PAD = 3 };
enum { Q_IDLE, Q_RUNNING, Q_FAILED, Q_STOPPING };

/* The calling threads' fields and the recorder's `tail` sit on separate cache lines. */
static struct {
    pthread_mutex_t mu;
    unsigned char *buf;
    size_t cap;             /* bytes in buf: CUBATCHTRACE_QUEUE_KB rounded down to a power of two */
    size_t max_n, max_k;    /* the most ops and operand infos a record may hold (a quarter of the queue) */
    int state;              /* Q_* (written under mu, read by calling threads without it) */
    pthread_cond_t wake;    /* the recorder waits here */
    pthread_cond_t drained; /* the exit handler waits here */
    uint64_t head __attribute__((aligned(64)));     /* next byte to reserve (monotonic; calling threads, CAS) */
    uint64_t tail __attribute__((aligned(64)));     /* next byte to record (monotonic; written by the recorder) */
} q = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .drained = PTHREAD_COND_INITIALIZER,
};

static int start_warned;

/* Timed waits measure CLOCK_MONOTONIC. */
static void init_conds(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q.wake, &ca);
    pthread_cond_init(&q.drained, &ca);
    pthread_condattr_destroy(&ca);
}

static inline struct cbt_rec *at(uint64_t off) { return (struct cbt_rec *)(q.buf + (off & (q.cap - 1))); }

#define PER_OP (sizeof(CUDA_MEMCPY3D_BATCH_OP) + sizeof(struct cbt_op_infos))
#define PER_INFO sizeof(struct cbt_operand_info)

static inline size_t rec_bytes(size_t n, size_t k)
{
    size_t b = sizeof(struct cbt_rec) + n * PER_OP + k * PER_INFO;
    return (b + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* Is the record at the tail ready (or padding)?  Called by the recorder. */
static bool tail_ready(void)
{
    uint64_t t = q.tail, h = __atomic_load_n(&q.head, __ATOMIC_ACQUIRE);
    return t != h && __atomic_load_n(&at(t)->state, __ATOMIC_ACQUIRE) != REC_WRITING;
}

/* Record every ready record from the tail on; stop at one being filled. */
static bool drain(void)
{
    bool did = false;
    for (;;) {
        uint64_t t = q.tail, h = __atomic_load_n(&q.head, __ATOMIC_ACQUIRE);
        if (t == h)
            break;
        struct cbt_rec *r = at(t);
        uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
        if (st == REC_WRITING)
            break;
        if (st == REC_READY)
            cbt_record_deferred(r);
        did = true;
        /* Free again: zero the state word of every line (a later record may start at any). */
        uint32_t size = r->size;
        for (uint32_t o = 0; o < size; o += ALIGN)
            at(t + o)->state = REC_WRITING;
        __atomic_store_n(&q.tail, t + size, __ATOMIC_RELEASE);
    }
    return did;
}

static void wait_ns(uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec += (long)(ns % 1000000000u);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&q.wake, &q.mu, &ts);
}

static void *recorder_main(void *arg)
{
    (void)arg;
    uint64_t last = cbt_mono_ns();
    for (;;) {
        if (drain())
            last = cbt_mono_ns();
        pthread_mutex_lock(&q.mu);
        if (q.state == Q_STOPPING)
            /* Whatever is still being filled is waited for by the exit handler's deadline. */
            pthread_cond_broadcast(&q.drained);
        if (!tail_ready())
            wait_ns(q.state == Q_STOPPING || cbt_mono_ns() - last < ACTIVE_NS ? POLL_NS : IDLE_POLL_NS);
        pthread_mutex_unlock(&q.mu);
    }
    return NULL;
}

/* At exit: let the recorder write what is queued, then record inline. */
static void drain_at_exit(void)
{
    pthread_mutex_lock(&q.mu);
    if (q.state != Q_RUNNING) {
        pthread_mutex_unlock(&q.mu);
        return;
    }
    __atomic_store_n(&q.state, Q_STOPPING, __ATOMIC_RELEASE);
    pthread_cond_signal(&q.wake);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += EXIT_WAIT_S;
    while (__atomic_load_n(&q.tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&q.head, __ATOMIC_ACQUIRE)) {
        if (pthread_cond_timedwait(&q.drained, &q.mu, &deadline) == ETIMEDOUT) {
            cbt_warn_once(NULL, "the recorder thread did not finish within %d s at exit: some batches are not recorded",
                          EXIT_WAIT_S);
            break;
        }
    }
    pthread_mutex_unlock(&q.mu);
}

static void fork_prepare(void) { pthread_mutex_lock(&q.mu); }
static void fork_parent(void) { pthread_mutex_unlock(&q.mu); }
static void fork_child(void)
{
    /* Only this thread exists here: no recorder, and the queued batches are
     * the parent's.  The conditions may count the parent's recorder as a
     * waiter: start them afresh. */
    init_conds();
    q.head = q.tail = 0;
    free(q.buf); /* holds the parent's records: a zeroed one is made at the next start */
    q.buf = NULL;
    if (q.state == Q_RUNNING)
        __atomic_store_n(&q.state, Q_IDLE, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&q.mu);
}

static void once_per_process(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(drain_at_exit);
}

/* Under q.mu. */
static bool start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, once_per_process);
    if (!q.buf) {
        size_t want = cbt_config()->queue_kb * 1024, cap = ALIGN;
        while (cap * 2 <= want)
            cap *= 2; /* a power of two: positions are masked, never divided */
        q.cap = cap;
        q.max_n = cap / 4 / PER_OP;
        q.max_k = cap / 4 / PER_INFO;
        if (!(q.buf = calloc(1, q.cap)))
            goto fail;
    }
    static bool cond_set;
    if (!cond_set) {
        init_conds(); /* nobody has waited on them yet */
        cond_set = true;
    }
    /* The recorder takes none of the program's signals. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int e = pthread_create(&th, &attr, recorder_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e)
        goto fail;
    __atomic_store_n(&q.state, Q_RUNNING, __ATOMIC_RELEASE); /* after buf and cap */
    return true;
fail:
    __atomic_store_n(&q.state, Q_FAILED, __ATOMIC_RELEASE);
    cbt_warn_once(&start_warned, "cannot start the recorder thread: batches are recorded by the calling thread");
    return false;
}

struct cbt_rec *cbt_rec_reserve(size_t n, size_t k)
{
    if (cbt_unlikely(__atomic_load_n(&q.state, __ATOMIC_ACQUIRE) != Q_RUNNING)) {
        pthread_mutex_lock(&q.mu);
        bool ok = q.state == Q_RUNNING || (q.state == Q_IDLE && start());
        pthread_mutex_unlock(&q.mu);
        if (!ok)
            return NULL;
    }
    size_t need;
    if (n > q.max_n || k > q.max_k || (need = rec_bytes(n, k)) > q.cap / 4)
        return NULL;
    /* Lock-free: claim [h, h + pad + need) by moving head on; the space is free
     * (behind the tail) and zeroed, so the recorder sees it as being written. */
    uint64_t h = __atomic_load_n(&q.head, __ATOMIC_RELAXED), pad;
    do {
        uint64_t t = __atomic_load_n(&q.tail, __ATOMIC_ACQUIRE);
        size_t pos = h & (q.cap - 1);
        pad = pos + need > q.cap ? q.cap - pos : 0;
        if (h + pad + need - t > q.cap)
            return NULL; /* full: the recorder is behind, record inline */
    } while (!__atomic_compare_exchange_n(&q.head, &h, h + pad + need, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    if (pad) {
        struct cbt_rec *p = at(h);
        p->size = (uint32_t)pad;
        __atomic_store_n(&p->state, REC_PAD, __ATOMIC_RELEASE);
        h += pad;
    }
    struct cbt_rec *r = at(h);
    r->size = (uint32_t)need;
    for (unsigned i = 0; i < PREFETCH_LINES; i++)
        __builtin_prefetch(q.buf + ((h + need + i * ALIGN) & (q.cap - 1)), 1, 3);

    unsigned char *p = (unsigned char *)(r + 1);
    r->n = n;
    r->k = k;
    r->ops = (CUDA_MEMCPY3D_BATCH_OP *)p;
    p += n * sizeof(CUDA_MEMCPY3D_BATCH_OP);
    r->infos = (struct cbt_operand_info *)p; /* 8-byte aligned: the op size is a multiple of 8 */
    p += k * PER_INFO;
    r->idx = (struct cbt_op_infos *)p;
    return r;
}

void cbt_rec_commit(struct cbt_rec *r) { __atomic_store_n(&r->state, REC_READY, __ATOMIC_RELEASE); }

/* ---- the calling thread's clock ---- */

int cbt_ticks_ok;
static uint64_t tick0, mono0;
static double ns_per_tick;

void cbt_ticks_init(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return;
    char line[8192];
    bool constant = false, nonstop = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    if (constant && nonstop) {
        tick0 = cbt_ticks();
        mono0 = cbt_mono_ns();
        cbt_ticks_ok = 1;
    }
#endif
}

/* On the recorder thread only. */
uint64_t cbt_ticks_to_ns(uint64_t ticks)
{
    if (cbt_unlikely(ns_per_tick == 0)) {
        uint64_t m = cbt_mono_ns();
        if (m - mono0 < 20000000u) {
            uint64_t left = 20000000u - (m - mono0);
            struct timespec ts = {0, (long)left};
            nanosleep(&ts, NULL);
        }
        uint64_t t1 = cbt_ticks(), m1 = cbt_mono_ns();
        ns_per_tick = t1 > tick0 ? (double)(m1 - mono0) / (double)(t1 - tick0) : 1.0;
    }
    return (uint64_t)((double)ticks * ns_per_tick + 0.5);
}

/* ---- thread ids ---- */

static CBT_TLS uint32_t tls_tid;
static void tid_child(void) { tls_tid = 0; }
static void tid_once(void) { pthread_atfork(NULL, NULL, tid_child); }

uint32_t cbt_tid(void)
{
    if (cbt_unlikely(!tls_tid)) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, tid_once);
        tls_tid = (uint32_t)syscall(SYS_gettid);
    }
    return tls_tid;
}
