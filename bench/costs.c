/* SPDX-License-Identifier: MIT */
/*
 * bench/costs: what the building blocks of the shim's calling-thread path
 * cost on this machine, one by one: the driver queries it may make per
 * batch or per operand, the clock it reads around the driver call, the
 * system call it makes for host memory, an uncontended mutex and
 * compare-and-swap, a 64-bit division.
 *
 *   bench/costs [--libcuda PATH] [--cpu N]
 *
 * Each line: the median over 31 rounds of the mean over 20000 calls, in ns.
 * Loads the driver with dlopen (the real one on a GPU machine, the test
 * double where LD_LIBRARY_PATH names it); says which.
 *
 * Then a timed batch piece by piece, as bench/overhead makes it: a 1-op
 * device-to-device batch of 4 KiB, its stream drained before each call
 * (not timed), with what CUBATCHTRACE_GPU_TIME adds around it one piece at
 * a time, interleaved in rounds (31 rounds of 300 calls each): the two
 * records on the same pair of events every time (as bench/floor makes
 * them) and on pairs in turn (as a thread's ring of timed batches uses its slots' events); then the
 * same with a thread reading the events back every millisecond, on the
 * calling thread's CPU and (with --cpu N) on CPU N+1.
 *
 * Then how far apart a pair of events is recorded again: a timed batch of
 * 1 and of 16 ops (4 KiB each), its two records on pairs taken in turn from
 * D pairs (D = 1 is bench/floor's one pair; a thread's ring hands out its
 * slots' pairs in turn, so D is how many timed batches pass before a pair
 * is used again), with no reader and with a reader on CPU N+1 that reads
 * back, every millisecond, each pair recorded since its last look, in order
 * (its elapsed time, then its start against the anchor), as the shim's
 * reader does.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define ROUNDS 31
#define CALLS 20000
#define SYNCED_CALLS 300

static void *need(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "costs: the driver lacks %s\n", name);
        exit(1);
    }
    return p;
}

static inline uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MEASURE(label, stmt)                                                    \
    do {                                                                        \
        double r[ROUNDS];                                                       \
        for (int k = 0; k < ROUNDS; k++) {                                      \
            uint64_t t0 = now();                                                \
            for (int i = 0; i < CALLS; i++) {                                   \
                stmt;                                                           \
                __asm__ volatile("" ::: "memory");                              \
            }                                                                   \
            r[k] = (double)(now() - t0) / CALLS;                                \
        }                                                                       \
        qsort(r, ROUNDS, sizeof *r, cmp);                                       \
        printf("%-62s %8.1f\n", label, r[ROUNDS / 2]);                          \
    } while (0)

/* ---- a timed batch, piece by piece ---- */

/* What the pieces call: the driver's functions, the batch, its events. */
/* pairs of events the pieces rotate through: about what the shim's pool
 * holds while its reader reads back every millisecond (two events per
 * batch queued meanwhile) */
#define PAIRS 256
static struct {
    CUresult (*batch)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
    CUresult (*sync)(CUstream);
    CUresult (*record)(CUevent, CUstream);
    CUresult (*elapsed)(float *, CUevent, CUevent);
    CUresult (*capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*ctx_id)(CUcontext, unsigned long long *);
    CUresult (*exchange)(CUstreamCaptureMode *);
    CUDA_MEMCPY3D_BATCH_OP op;
    CUstream s;
    CUcontext ctx;
    CUevent anchor, start[PAIRS], end[PAIRS], one_start, one_end;
    volatile unsigned last; /* the pair recorded last */
} P;

enum piece { P_BATCH, P_BATCH_REC, P_REC2_ONE, P_REC2, P_QUERY, P_ELAPSED, P_SHIMLIKE, P_NO_READBACK, P_COUNT };
static const char *const piece_label[P_COUNT] = {
    "batch",
    "batch, then cuEventRecord",
    "cuEventRecord, batch, cuEventRecord: one pair (as bench/floor)",
    "cuEventRecord, batch, cuEventRecord: pairs in turn",
    "  + cuEventElapsedTime of the pair before (done)",
    "  + its start's from the anchor",
    "  + capture check, context id, RELAXED around the pieces",
    "capture check, context id, records in RELAXED (no read-back)",
};

static void relaxed(bool on)
{
    static CUstreamCaptureMode was;
    CUstreamCaptureMode m = on ? CU_STREAM_CAPTURE_MODE_RELAXED : was;
    P.exchange(&m);
    if (on)
        was = m;
}

static void piece(enum piece v)
{
    unsigned k = (P.last + 1) % PAIRS, prev = P.last;
    CUstreamCaptureStatus cs;
    unsigned long long id;
    float ms;
    switch (v) {
    case P_BATCH:
        P.batch(1, &P.op, 0, P.s);
        return;
    case P_BATCH_REC:
        P.batch(1, &P.op, 0, P.s);
        P.record(P.end[k], P.s);
        break;
    case P_REC2_ONE: /* the same two events every time, never read back */
        P.record(P.one_start, P.s);
        P.batch(1, &P.op, 0, P.s);
        P.record(P.one_end, P.s);
        return;
    case P_REC2:
    case P_QUERY:
    case P_ELAPSED:
        /* the reader's read-back: the pair's elapsed time (which says
         * whether it is done), then its start against the anchor */
        if (v >= P_QUERY)
            P.elapsed(&ms, P.start[prev], P.end[prev]);
        if (v >= P_ELAPSED)
            P.elapsed(&ms, P.anchor, P.start[prev]);
        P.record(P.start[k], P.s);
        P.batch(1, &P.op, 0, P.s);
        P.record(P.end[k], P.s);
        break;
    case P_SHIMLIKE:
    case P_NO_READBACK:
        P.capturing(P.s, &cs);
        P.ctx_id(P.ctx, &id);
        relaxed(true);
        if (v == P_SHIMLIKE) {
            P.elapsed(&ms, P.start[prev], P.end[prev]);
            P.elapsed(&ms, P.anchor, P.start[prev]);
        }
        P.record(P.start[k], P.s);
        relaxed(false);
        P.batch(1, &P.op, 0, P.s);
        relaxed(true);
        P.record(P.end[k], P.s);
        relaxed(false);
        break;
    default:
        return;
    }
    P.last = k;
}

/* One row: the median over rounds of mean[], and of its difference from
 * base[] round by round. */
static void print_row(const char *label, const double *mean, const double *base)
{
    double r[ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        r[k] = mean[k];
    qsort(r, ROUNDS, sizeof *r, cmp);
    double m = r[ROUNDS / 2];
    for (int k = 0; k < ROUNDS; k++)
        r[k] = mean[k] - base[k];
    qsort(r, ROUNDS, sizeof *r, cmp);
    printf("%-62s %8.1f %+8.1f\n", label, m, r[ROUNDS / 2]);
}

/* The pieces, interleaved: each round runs a block of SYNCED_CALLS of each
 * (in an order that rotates), the stream drained before every call (not
 * timed).  Prints each piece's median over rounds of its block mean, and
 * the median over rounds of its difference from the bare batch's. */
static void pieces(const char *title)
{
    static double mean[P_COUNT][ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        for (int j = 0; j < P_COUNT; j++) {
            enum piece v = (enum piece)((j + k) % P_COUNT);
            uint64_t sum = 0;
            for (int i = 0; i < SYNCED_CALLS; i++) {
                P.sync(P.s);
                uint64_t t0 = now();
                piece(v);
                sum += now() - t0;
            }
            mean[v][k] = (double)sum / SYNCED_CALLS;
        }
    printf("# %s: ns per call, and added to the bare batch (median of per-round differences)\n", title);
    for (int v = 0; v < P_COUNT; v++)
        print_row(piece_label[v], mean[v], mean[P_BATCH]);
}

/* A background reader: every millisecond, the read-back of the pair of
 * events recorded last (its elapsed time, which says whether it is done,
 * then its start against the anchor), as the shim's reader makes it. */
static volatile int reader_stop;
static unsigned long reader_reads;

static void *reader_main(void *arg)
{
    (void)arg;
    while (!reader_stop) {
        unsigned k = P.last;
        float ms;
        if (P.elapsed(&ms, P.start[k], P.end[k]) == CUDA_SUCCESS) {
            P.elapsed(&ms, P.anchor, P.start[k]);
            reader_reads++;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* A thread running fn, on cpu (-1: where it was created, the calling
 * thread's CPU); false: none could be made. */
static bool start_on(pthread_t *th, void *(*fn)(void *), int cpu)
{
    if (pthread_create(th, NULL, fn, NULL) != 0)
        return false;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_setaffinity_np(*th, sizeof set, &set);
    }
    return true;
}

/* The pieces again with a reader thread running, on cpu (-1: where it was
 * created, the calling thread's CPU). */
static void pieces_with_reader(const char *title, int cpu)
{
    pthread_t th;
    reader_stop = 0;
    reader_reads = 0;
    if (!start_on(&th, reader_main, cpu))
        return;
    pieces(title);
    reader_stop = 1;
    pthread_join(th, NULL);
    printf("# the reader thread read back %lu pairs\n", reader_reads);
}

/* ---- how far apart a pair is recorded again ---- */

#define R_PAIRS 512
#define R_OPS 16
static const unsigned r_dist[] = {1, 4, 16, 64, 512};
#define R_DISTS (sizeof r_dist / sizeof r_dist[0])
static struct {
    CUevent start[R_PAIRS], end[R_PAIRS];
    CUDA_MEMCPY3D_BATCH_OP ops[R_OPS];
    volatile uint64_t seq;  /* timed batches recorded (the reader reads up to it) */
    volatile unsigned dist; /* the pairs in turn now */
    volatile int stop;
    unsigned long reads;
} R;

static void *r_reader_main(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    while (!R.stop) {
        uint64_t upto = R.seq;
        unsigned d = R.dist;
        if (upto - seen > R_PAIRS)
            seen = upto - R_PAIRS;
        for (; seen < upto; seen++) {
            unsigned k = (unsigned)(seen % d);
            float ms;
            if (P.elapsed(&ms, R.start[k], R.end[k]) == CUDA_SUCCESS) {
                P.elapsed(&ms, P.anchor, R.start[k]);
                R.reads++;
            }
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* A timed batch of nops ops with its pairs taken in turn from each of
 * r_dist's counts, and the bare batch, interleaved in rounds as pieces()
 * does; with a reader on cpu (-2: none, -1: the calling thread's). */
static void reuse(unsigned nops, int cpu)
{
    static double mean[R_DISTS + 1][ROUNDS];
    pthread_t th;
    bool reading = cpu >= -1;
    R.stop = 0;
    R.reads = 0;
    R.dist = 1;
    if (reading && !start_on(&th, r_reader_main, cpu))
        return;
    unsigned k = 0;
    for (int round = 0; round < ROUNDS; round++)
        for (unsigned j = 0; j <= R_DISTS; j++) {
            unsigned v = (j + (unsigned)round) % (R_DISTS + 1); /* R_DISTS: the bare batch */
            uint64_t sum = 0;
            if (v < R_DISTS) {
                P.sync(P.s); /* the pairs' last records done before their count changes */
                R.dist = r_dist[v];
            }
            for (int i = 0; i < SYNCED_CALLS; i++) {
                P.sync(P.s);
                uint64_t t0 = now();
                if (v == R_DISTS) {
                    P.batch(nops, R.ops, 0, P.s);
                } else {
                    k = (k + 1) % r_dist[v];
                    P.record(R.start[k], P.s);
                    P.batch(nops, R.ops, 0, P.s);
                    P.record(R.end[k], P.s);
                    R.seq++;
                }
                sum += now() - t0;
            }
            mean[v][round] = (double)sum / SYNCED_CALLS;
        }
    if (reading) {
        R.stop = 1;
        pthread_join(th, NULL);
    }
    printf("# a %u-op device-to-device batch (4 KiB per op), two records on pairs in turn, %s: ns per call, and "
           "added to the bare batch (median of per-round differences)\n",
           nops,
           !reading    ? "no reader"
           : cpu < 0 ? "a reader every millisecond on the calling thread's CPU"
                     : "a reader every millisecond on another CPU");
    for (unsigned v = 0; v <= R_DISTS; v++) {
        char label[64];
        if (v == R_DISTS)
            snprintf(label, sizeof label, "batch");
        else
            snprintf(label, sizeof label, "records on %u pair%s in turn", r_dist[v], r_dist[v] > 1 ? "s" : "");
        print_row(label, mean[v], mean[R_DISTS]);
    }
    if (reading)
        printf("# the reader read back %lu pairs\n", R.reads);
}

int main(int argc, char **argv)
{
    const char *lib = "libcuda.so.1";
    int cpu = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--libcuda") && i + 1 < argc)
            lib = argv[++i];
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
            cpu_set_t s;
            CPU_ZERO(&s);
            cpu = atoi(argv[++i]);
            CPU_SET(cpu, &s);
            sched_setaffinity(0, sizeof s, &s);
        } else {
            fprintf(stderr, "usage: bench/costs [--libcuda PATH] [--cpu N]\n");
            return 2;
        }
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "costs: cannot load %s: %s\n", lib, dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = need(h, "cuInit");
    CUresult (*dev_get)(CUdevice *, int) = need(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) = need(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set_current)(CUcontext) = need(h, "cuCtxSetCurrent");
    CUresult (*stream_create)(CUstream *, unsigned) = need(h, "cuStreamCreate");
    CUresult (*mem_alloc)(CUdeviceptr *, size_t) = need(h, "cuMemAlloc_v2");
    CUresult (*get_id)(CUstream, unsigned long long *) = need(h, "cuStreamGetId");
    CUresult (*get_ctx)(CUstream, CUcontext *) = need(h, "cuStreamGetCtx");
    CUresult (*ctx_dev)(CUdevice *, CUcontext) = need(h, "cuCtxGetDevice_v2");
    CUresult (*capturing)(CUstream, CUstreamCaptureStatus *) = need(h, "cuStreamIsCapturing");
    CUresult (*ptr_attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr) =
        need(h, "cuPointerGetAttributes");
    CUresult (*version)(int *) = need(h, "cuDriverGetVersion");
    /* what CUBATCHTRACE_GPU_TIME adds per timed batch (src/gputime.c) */
    CUresult (*ctx_id)(CUcontext, unsigned long long *) = need(h, "cuCtxGetId");
    CUresult (*ev_create)(CUevent *, unsigned) = need(h, "cuEventCreate");
    CUresult (*ev_record)(CUevent, CUstream) = need(h, "cuEventRecord");
    CUresult (*ev_query)(CUevent) = need(h, "cuEventQuery");
    CUresult (*ev_sync)(CUevent) = need(h, "cuEventSynchronize");
    CUresult (*ev_elapsed)(float *, CUevent, CUevent) =
        dlsym(h, "cuEventElapsedTime_v2") ? need(h, "cuEventElapsedTime_v2") : need(h, "cuEventElapsedTime");
    CUresult (*exchange)(CUstreamCaptureMode *) = need(h, "cuThreadExchangeStreamCaptureMode");
    int v = 0;
    Dl_info di;
    version(&v);
    dladdr((void *)init, &di);
    printf("# bench/costs: host cost of the shim's building blocks, ns per call (median of %d rounds of %d)\n",
           ROUNDS, CALLS);
    printf("# driver: %s, cuDriverGetVersion %d, %s\n", dlsym(h, "fakecuda_batch_calls") ? "TEST DOUBLE" : "real",
           v, di.dli_fname ? di.dli_fname : lib);
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr d;
    if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx) || stream_create(&s, 0) ||
        mem_alloc(&d, 1 << 20)) {
        fprintf(stderr, "costs: cannot set up a context, a stream and an allocation\n");
        return 1;
    }
    long page = sysconf(_SC_PAGESIZE);
    char *host = malloc(1 << 20);
    memset(host, 1, 1 << 20);
    unsigned long long id;
    CUcontext c;
    CUdevice dv;
    CUstreamCaptureStatus cs;
    unsigned memtype, managed;
    int ordinal;
    CUdeviceptr start;
    size_t size;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memtype, &managed, &ordinal, &start, &size};
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    unsigned char vec;
    struct timespec ts;
    volatile uint64_t sink = 0;

    MEASURE("clock_gettime(CLOCK_MONOTONIC)", clock_gettime(CLOCK_MONOTONIC, &ts));
    MEASURE("rdtsc", sink += __rdtsc());
    MEASURE("pthread_mutex_lock + unlock (uncontended)", (pthread_mutex_lock(&mu), pthread_mutex_unlock(&mu)));
    uint64_t word = 0;
    MEASURE("compare-and-swap (uncontended)", ({
                uint64_t w = word;
                __atomic_compare_exchange_n(&word, &w, w + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
            }));
    volatile uint64_t big = 1ull << 22, off = 12345;
    MEASURE("64-bit division (a modulo by a variable)", sink += off % big);
    MEASURE("mincore (one page)", mincore((void *)((uintptr_t)host & ~(uintptr_t)(page - 1)), 1, &vec));
    MEASURE("cuStreamGetId", get_id(s, &id));
    MEASURE("cuStreamGetCtx", get_ctx(s, &c));
    MEASURE("cuCtxGetDevice_v2", ctx_dev(&dv, ctx));
    MEASURE("cuStreamIsCapturing", capturing(s, &cs));
    MEASURE("cuPointerGetAttributes (5 attributes), device pointer", ptr_attrs(5, attrs, data, d));
    MEASURE("cuPointerGetAttributes (5 attributes), pageable host pointer",
            ptr_attrs(5, attrs, data, (CUdeviceptr)(uintptr_t)(host + 4096)));
    CUevent e0, e1;
    float ms;
    if (ev_create(&e0, CU_EVENT_DEFAULT) || ev_create(&e1, CU_EVENT_DEFAULT) || ev_record(e0, s) ||
        ev_record(e1, s) || ev_sync(e1)) {
        fprintf(stderr, "costs: cannot make two events\n");
        return 1;
    }
    MEASURE("cuCtxGetId", ctx_id(ctx, &id));
    MEASURE("cuThreadExchangeStreamCaptureMode, twice (to RELAXED and back)", ({
                CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
                exchange(&m);
                exchange(&m);
            }));
    MEASURE("cuEventQuery, an event that completed", ev_query(e1));
    MEASURE("cuEventElapsedTime, two events that completed", ev_elapsed(&ms, e0, e1));
    MEASURE("cuEventRecord on an idle stream", ev_record(e0, s));

    /* ---- a timed batch, piece by piece ---- */
    P.batch = need(h, "cuMemcpy3DBatchAsync_v2");
    P.sync = need(h, "cuStreamSynchronize");
    P.record = ev_record;
    P.elapsed = ev_elapsed;
    P.capturing = capturing;
    P.ctx_id = ctx_id;
    P.exchange = exchange;
    P.s = s;
    P.ctx = ctx;
    P.anchor = e0;
    P.op.src.type = P.op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    P.op.src.op.ptr.ptr = d;
    P.op.dst.op.ptr.ptr = d + (512 << 10);
    P.op.extent.width = 4096;
    P.op.extent.height = P.op.extent.depth = 1;
    P.op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    if (P.batch(1, &P.op, 0, s) || P.sync(s)) {
        fprintf(stderr, "costs: the driver does not make a 1-op batch\n");
        return 1;
    }
    for (int i = 0; i < PAIRS; i++)
        if (ev_create(&P.start[i], CU_EVENT_DEFAULT) || ev_create(&P.end[i], CU_EVENT_DEFAULT) ||
            ev_record(P.start[i], s) || ev_record(P.end[i], s)) {
            fprintf(stderr, "costs: cannot make the timing events\n");
            return 1;
        }
    if (ev_create(&P.one_start, CU_EVENT_DEFAULT) || ev_create(&P.one_end, CU_EVENT_DEFAULT)) {
        fprintf(stderr, "costs: cannot make the timing events\n");
        return 1;
    }
    P.sync(s);
    pieces("a 1-op device-to-device batch of 4 KiB, its stream drained before each");
    pieces_with_reader("the same, a reader thread on the calling thread's CPU", -1);
    if (cpu >= 0)
        pieces_with_reader("the same, a reader thread on another CPU", cpu + 1);
    for (int i = 0; i < R_PAIRS; i++)
        if (ev_create(&R.start[i], CU_EVENT_DEFAULT) || ev_create(&R.end[i], CU_EVENT_DEFAULT) ||
            ev_record(R.start[i], s) || ev_record(R.end[i], s)) {
            fprintf(stderr, "costs: cannot make the timing events\n");
            return 1;
        }
    for (int i = 0; i < R_OPS; i++) {
        R.ops[i] = P.op;
        R.ops[i].src.op.ptr.ptr = d + (CUdeviceptr)i * 8192;
        R.ops[i].dst.op.ptr.ptr = d + (512 << 10) + (CUdeviceptr)i * 8192;
    }
    P.sync(s);
    for (unsigned n = 1; n <= R_OPS; n *= R_OPS) {
        reuse(n, -2);
        if (cpu >= 0)
            reuse(n, cpu + 1);
    }
    (void)sink;
    return 0;
}
