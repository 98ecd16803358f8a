/* SPDX-License-Identifier: MIT */
/*
 * bench/overhead: host time and CPU the shim adds to cuMemcpy3DBatchAsync_v2,
 * next to what LTTng's floor adds.
 *
 * One process calls three functions that reach the same real driver:
 *
 *   bare   dlsym(dlopen("libcuda.so.1"), "cuMemcpy3DBatchAsync_v2")
 *   shim   dlsym(dlopen(libcubatchtrace.so, RTLD_NOW|RTLD_LOCAL), "cuMemcpy3DBatchAsync_v2")
 *   floor  dlsym(dlopen(libcbtfloor.so, RTLD_NOW|RTLD_LOCAL), "cuMemcpy3DBatchAsync_v2")
 *
 * The shim and the floor (bench/floor: two clock reads, the forward, one
 * event of five fields and the op bytes) find the same libcuda themselves,
 * so what each adds to the bare call is what it costs.  The program must
 * NOT run under LD_PRELOAD of the shim.  It starts no LTTng session: run it
 * inside a session recording cubatchtrace:* and cbtfloor:* and without one
 * (bench/overhead-run does both); the header says which it saw.
 *
 * For each kind (d2d, h2d_pageable, array) and batch size it runs rounds.
 * A round runs each contender once, as a block of B calls of that contender,
 * in an order that goes through all the permutations round after round; the
 * stream is drained with cuStreamSynchronize before each call and after each
 * block.  B is 1 when a call takes about a millisecond or more, else enough
 * calls to fill about a millisecond (--block-us).  Per round and contender:
 *
 *   added time  the median of the block's call times (CLOCK_MONOTONIC
 *               around the call alone) minus bare's, same round (the calling
 *               thread; reported as the median over rounds, with the
 *               order-statistics 95 % interval of that median)
 *   added CPU   per call, the calling thread's CPU time inside the calls
 *               (CLOCK_THREAD_CPUTIME_ID just outside each timed window) plus
 *               the CPU time of every other thread of the process over the
 *               block (CLOCK_PROCESS_CPUTIME_ID minus the calling thread's,
 *               block end to block end), minus bare's, same round (reported
 *               as the mean over rounds, with a 95 % percentile-bootstrap
 *               interval).  The calling thread's time between calls is left
 *               out: it is mostly cuStreamSynchronize spinning until the GPU
 *               is done, which shrinks when a slower call overlaps the copy.
 *
 * Rounds go on until every interval's half-width is at most --target (a
 * quarter) of the goal for the size, or the row's --budget runs out; the
 * stop column says which.  bench/README.md explains the verdicts.
 *
 * Ops copy 4 KiB each, at distinct offsets (no two ops overlap):
 *   d2d           device -> device, one cuMemAlloc for sources, one for destinations
 *   d2d_1d        the same copies through the 1D call, cuMemcpyBatchAsync_v2
 *                 (one STREAM attribute for all; the doors named so in the
 *                 driver, the shim and the floor)
 *   d2d_single    one such op through CUDA 13.2's cuMemcpy3DWithAttributesAsync
 *   d2d_single1d  one such copy through cuMemcpyWithAttributesAsync (its
 *                 STREAM attribute); the single-op kinds are of 1 op only
 *                 (other sizes are left out) and need a driver that has
 *                 them (the test double has; the CUDA 13.0 driver has not)
 *   h2d_pageable  malloc'd (pageable, touched) host memory -> device
 *   array         device -> one float CUDA array, 1024 x rows, one row per op
 *
 * usage: bench/overhead [options] [SHIM]
 *   SHIM              path of libcubatchtrace.so (else $CBT_SHIM, else
 *                     src/.libs/libcubatchtrace.so relative to the cwd)
 *   --floor PATH      the floor library (else $CBT_FLOOR, else
 *                     bench/floor/.libs/libcbtfloor.so relative to the cwd)
 *   --no-floor        leave the floor out (bare and shim only)
 *   --quick           short rows, for the CPU test double
 *   --evict BYTES     before each call (not timed), write one byte per cache
 *                     line of a buffer of BYTES: over the CPU test double,
 *                     a stand-in for the real driver's work, which evicts
 *                     what the caller's path touched between two calls
 *   --pool N          N sets of buffers (allocations, host buffer, CUDA array,
 *                     op list; at most 16), the calls going round them, one
 *                     set a call: a program whose batches use a few buffers
 *                     in turn, as one that copies through a pool of staging
 *                     buffers (default 1: every call the same buffers)
 *   --churn           before each call (not timed), cuMemAlloc_v2 and
 *                     cuMemFree_v2 of 4 KiB: a program that allocates and
 *                     frees between its batches (the shim learns its
 *                     operands again after any memory-management call)
 *   --renew           before each call (not timed), the set's destination
 *                     allocation (kind array: its source) freed and
 *                     allocated again with cuMemFree_v2 and cuMemAlloc_v2,
 *                     and the list built again if it moved: a program that
 *                     copies into a buffer it allocates for each copy (a
 *                     new DeviceBuffer, a caching allocator's block)
 *   --streams N       N streams (at most 16), the calls going round them, one
 *                     a call (with --pool, both move on every call): a thread
 *                     that spreads its copies over a few streams (default 1)
 *   --fresh           before each call (not timed, after --evict), build the
 *                     op list (1D: the arrays) again, as a program that
 *                     fills its list for each batch: the call then finds it
 *                     in the cache, where without --fresh it finds it as the
 *                     previous call and the driver's work between left it
 *   --sizes LIST      comma-separated batch sizes (default 1,4,16,64,256,1024,4096)
 *   --kinds LIST      comma-separated kinds (default d2d,h2d_pageable,array,d2d_1d)
 *   --budget S        seconds of measured rounds per row at most (default 5; --quick 0.3)
 *   --target F        stop once every interval's half-width is <= F x the goal (default 0.25)
 *   --iters N         exactly N measured rounds per row (no adaptation; B = 1 unless --block)
 *   --block B         calls per block, fixed
 *   --block-us U      else: blocks of about U microseconds of calls (default 1000)
 *   --warmup N        warm-up rounds per row (default: about 5 % of the budget, 3 to 200)
 *   --h2d-order O     srcAccessOrder of the H2D ops: during (DURING_API_CALL, default), stream, any.
 *                     The default batches are clean (the validator finds nothing); with
 *                     `stream` every pageable op draws a pageable_stream_order warning.
 *   --mode LABEL      what to print as the mode (default: asks `lttng list`)
 *   --aa FILE         the CSV of a --null run: in mode none, the shim's added time is
 *                     judged against that run's interval for the same row
 *   --cpu N           pin the calling thread to CPU N; once the shim's and the floor's
 *                     first calls have started LTTng-UST's threads, every other thread
 *                     of the process is moved to the other CPUs
 *   --csv FILE        also write the results as CSV
 *   --libcuda PATH    the driver to dlopen (default libcuda.so.1; also given to the
 *                     shim and the floor through CUBATCHTRACE_LIBCUDA); through
 *                     bench/drvclock, an "outside" table follows: each call's time
 *                     less the driver's own part (bench/README.md)
 *   --null            A/A test: the bare driver in every slot (neither the shim nor
 *                     the floor is loaded): the noise of the method
 *
 * Under valgrind (bench/profile) the floor is left out, so that each dump
 * holds the bare and the shim calls only; statistics are zeroed after each
 * warm-up and dumped after each measured row, named "KIND/SIZE/CALLS" (calls
 * of each contender); outside valgrind those requests cost nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "pairstats.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(s) do { (void)(s); } while (0)
#define RUNNING_ON_VALGRIND 0
#endif

#define OP_BYTES 4096u
#define ARRAY_WIDTH (OP_BYTES / sizeof(float)) /* floats per array row: one row per op */

/* The bounds the shim is held to (bench/README.md, "Verdicts"). */
#define TIME_VS_FLOOR_RATIO 1.1  /* calling thread, below PER_OP_FROM ops: shim <= 1.1 x floor + 10 ns */
#define TIME_VS_FLOOR_SLACK_NS 10.0
#define PER_OP_FROM 64            /* from this many ops: shim <= floor + so much per op */
#define PER_OP_SLACK_3D_NS 5.0    /* per op of a 3D batch */
#define PER_OP_SLACK_1D_NS 2.0    /* per copy of a 1D batch */
#define CPU_VS_FLOOR_RATIO 1.2   /* calls + other threads: shim <= 1.2 x floor (floor >= 0) */
/* With CUBATCHTRACE_GPU_TIME set, the floor records two timing events around
 * its calls too (bench/floor), and the shim may add this much more. */
#define GPU_TIME_SLACK_NS 200.0
static double gpu_slack_ns; /* GPU_TIME_SLACK_NS when CUBATCHTRACE_GPU_TIME is set, else 0 */

#define MAX_BLOCK 1024

typedef CUresult (*batch_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*single_fn)(CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*single1d_fn)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *, CUstream);
typedef CUresult (*batch1d_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                               CUstream);

/* The driver entry points the benchmark itself uses. */
static struct {
    CUresult (*init)(unsigned);
    CUresult (*driver_get_version)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*array3d_create)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
    CUresult (*array_destroy)(CUarray);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_destroy)(CUstream);
    CUresult (*stream_synchronize)(CUstream);
    CUresult (*get_error_name)(CUresult, const char **);
    unsigned long long (*fake_batch_calls)(void); /* only in the test double */
    uint64_t (*drvclock_last_ns)(void);           /* only through bench/drvclock */
} drv;

enum kind { K_D2D, K_H2D_PAGEABLE, K_ARRAY, K_D2D_1D, K_SINGLE, K_SINGLE_1D, K_COUNT };
static const char *const kind_name[K_COUNT] = {"d2d", "h2d_pageable", "array", "d2d_1d", "d2d_single", "d2d_single1d"};
/* the kinds a run without --kinds measures (every driver since CUDA 12.8 has their calls) */
#define K_DEFAULT_COUNT K_SINGLE
/* a kind of the 1D call's copies (its arrays, its per-copy slack) */
static inline bool kind_1d(enum kind k) { return k == K_D2D_1D || k == K_SINGLE_1D; }
static inline bool kind_single(enum kind k) { return k == K_SINGLE || k == K_SINGLE_1D; }

enum contender { C_BARE, C_SHIM, C_FLOOR, C_COUNT };
static const char *const contender_name[C_COUNT] = {"bare", "shim", "floor"};

/* Round r runs the contenders in order perm[r % count]: every contender
 * takes every place, and follows every other one, equally often. */
static const int perm3[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
static const int perm2[2][2] = {{0, 1}, {1, 0}};

static const size_t default_sizes[] = {1, 4, 16, 64, 256, 1024, 4096};

struct options {
    const char *shim, *floor, *csv, *mode, *libcuda, *aa;
    bool quick, null, no_floor;
    size_t sizes[32];
    int nsizes;
    bool kinds[K_COUNT];
    long iters, warmup, block;
    double budget, target, block_us;
    CUmemcpySrcAccessOrder h2d_order;
    int cpu;
    size_t evict;
    bool fresh, churn, renew;
    unsigned pool, streams;
};

/* --evict: the buffer written before each call. */
static volatile uint8_t *evict_buf;
static size_t evict_len;

static inline void evict(void)
{
    for (size_t i = 0; i < evict_len; i += 64)
        evict_buf[i]++;
}

/* --fresh: the list built again before each call, with this order for h2d;
 * the lists built and the measured calls, for the last line. */
static bool fresh_lists;
static bool churn; /* --churn */
static bool renew; /* --renew */
/* what --churn calls: the shim's exports where it is loaded (a program that
 * preloads it binds those), else the driver's */
static CUresult (*churn_alloc)(CUdeviceptr *, size_t);
static CUresult (*churn_free)(CUdeviceptr);
/* The shim's count of the calling thread's batches that took the steps, not
 * the steady path (libcubatchtrace(7)); NULL for a shim without it. */
static unsigned long long (*shim_steps)(void);
static CUmemcpySrcAccessOrder fresh_order;
static unsigned long long lists_built, calls_measured;

/* The session goals: added calling-thread time, percent of the bare call. */
static double goal_pct(size_t n)
{
    if (n <= 1)
        return 5;
    if (n <= 4)
        return 3;
    if (n <= 16)
        return 2;
    return 1.5;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("overhead: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Option opt's value v: a count from 1 to most (of what). */
static unsigned count_arg(const char *opt, const char *v, unsigned most, const char *what)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end || n < 1 || n > most)
        die("%s: a number of %s from 1 to %u", opt, what, most);
    return (unsigned)n;
}

static const char *err_name(CUresult r)
{
    const char *s = NULL;
    if (drv.get_error_name)
        drv.get_error_name(r, &s);
    return s ? s : "?";
}

#define CHECK(call)                                                                              \
    do {                                                                                         \
        CUresult r_ = (call);                                                                    \
        if (r_ != CUDA_SUCCESS)                                                                  \
            die("%s failed: %d (%s) at line %d", #call, (int)r_, err_name(r_), __LINE__);        \
    } while (0)

static void *need(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        die("the driver has no %s", name);
    return p;
}

static inline uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* ---- the header ---- */

static void cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

/* Ask `lttng list` whether any session is active (what the caller set up). */
static void detect_mode(char *out, size_t len, bool *session)
{
    *session = false;
    snprintf(out, len, "no session (lttng list shows no active session)");
    FILE *p = popen("lttng list 2>/dev/null", "r");
    if (!p) {
        snprintf(out, len, "unknown (cannot run lttng list; pass --mode)");
        return;
    }
    char line[512], names[256] = "";
    while (fgets(line, sizeof line, p)) {
        /* "  1) NAME [active]" */
        if (strstr(line, "[active]")) {
            *session = true;
            char *c = strchr(line, ')');
            char name[128] = "";
            if (c && sscanf(c + 1, "%127s", name) == 1 && strlen(names) + strlen(name) + 2 < sizeof names) {
                if (names[0])
                    strcat(names, " ");
                strcat(names, name);
            }
        }
    }
    pclose(p);
    if (*session)
        snprintf(out, len, "session recording (lttng list shows active: %s)", names);
}

/* ---- the batches ---- */

/* One set of buffers and the lists that copy between them. */
struct buffers {
    CUdeviceptr dsrc, ddst;
    unsigned char *host;
    CUarray array;
    CUDA_MEMCPY3D_BATCH_OP *ops;
    CUdeviceptr *dsts, *srcs;
    size_t *sizes;
};

#define MAX_POOL 16
#define MAX_STREAMS 16

struct bench {
    size_t max_ops;
    CUstream stream;
    /* the set the next call uses (one of pool[]: --pool) */
    CUdeviceptr dsrc, ddst;
    unsigned char *host;
    CUarray array;
    CUDA_MEMCPY3D_BATCH_OP *ops;
    /* the 1D call (kind d2d_1d): its arrays and one attribute */
    enum kind kind;
    CUdeviceptr *dsts, *srcs;
    size_t *sizes, idx0;
    CUmemcpyAttributes attr;
    struct buffers pool[MAX_POOL];
    unsigned npool;
    /* the streams the calls go round (--streams); stream is the next call's */
    CUstream streams[MAX_STREAMS];
    unsigned nstreams;
    /* each contender's next set and stream: each goes round all of them,
     * whatever the order the contenders' calls take */
    unsigned next[3], next_stream[3];
};

/* Set m of the pool becomes the one the next call uses. */
static inline void use_set(struct bench *b, unsigned m)
{
    const struct buffers *u = &b->pool[m];
    b->dsrc = u->dsrc, b->ddst = u->ddst, b->host = u->host, b->array = u->array;
    b->ops = u->ops, b->dsts = u->dsts, b->srcs = u->srcs, b->sizes = u->sizes;
}

/* The contenders' doors: the 3D call, and the 1D call for kind d2d_1d. */
struct contenders {
    int count;              /* 2 (bare, shim) or 3 (bare, shim, floor) */
    batch_fn fn[3];
    batch1d_fn fn1d[3];
    single_fn single[3];     /* NULL where the driver lacks it */
    single1d_fn single1d[3];
};

static CUmemcpy3DOperand dptr_operand(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p; /* rowLength, layerHeight 0: tight; no locHint (the validator warns of one on device memory) */
    return o;
}

static void make_one(struct bench *b, enum kind k, size_t n, CUmemcpySrcAccessOrder h2d_order)
{
    lists_built++;
    b->kind = k;
    if (kind_1d(k)) {
        for (size_t i = 0; i < n; i++) {
            b->srcs[i] = b->dsrc + i * OP_BYTES;
            b->dsts[i] = b->ddst + i * OP_BYTES;
            b->sizes[i] = OP_BYTES;
        }
        memset(&b->attr, 0, sizeof b->attr);
        b->attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        b->idx0 = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        memset(op, 0, sizeof *op);
        op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        op->extent.height = op->extent.depth = 1;
        switch (k) {
        case K_D2D:
        case K_SINGLE:
            op->src = dptr_operand(b->dsrc + i * OP_BYTES);
            op->dst = dptr_operand(b->ddst + i * OP_BYTES);
            op->extent.width = OP_BYTES;
            break;
        case K_H2D_PAGEABLE:
            op->src = dptr_operand((CUdeviceptr)(uintptr_t)(b->host + i * OP_BYTES));
            op->dst = dptr_operand(b->ddst + i * OP_BYTES);
            op->extent.width = OP_BYTES;
            op->srcAccessOrder = h2d_order;
            break;
        case K_ARRAY:
            /* Extent and array offset in elements; the pointer side steps by the element size. */
            op->src = dptr_operand(b->dsrc + i * OP_BYTES);
            op->dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
            op->dst.op.array.array = b->array;
            op->dst.op.array.offset.x = 0;
            op->dst.op.array.offset.y = i;
            op->dst.op.array.offset.z = 0;
            op->extent.width = ARRAY_WIDTH;
            break;
        default:
            break;
        }
    }
}

/* Every set's list for kind k and n ops; the first set is the next call's. */
static void make_ops(struct bench *b, enum kind k, size_t n, CUmemcpySrcAccessOrder h2d_order)
{
    for (unsigned m = 0; m < b->npool; m++) {
        use_set(b, m);
        make_one(b, k, n, h2d_order);
    }
    use_set(b, 0);
    for (int c = 0; c < 3; c++)
        b->next[c] = 0;
}

/* Before a call of contender c (not timed, after the stream the previous
 * call used was drained): with --pool, its next set; with --streams, its
 * next stream. */
static inline void next_set(struct bench *b, int c)
{
    if (b->npool > 1) {
        use_set(b, b->next[c]);
        b->next[c] = b->next[c] + 1 == b->npool ? 0 : b->next[c] + 1;
    }
    if (b->nstreams > 1) {
        b->stream = b->streams[b->next_stream[c]];
        b->next_stream[c] = b->next_stream[c] + 1 == b->nstreams ? 0 : b->next_stream[c] + 1;
    }
}

/* --renew: the allocation the next call copies into (kind array: out of)
 * freed and allocated again; its list built again if it moved. */
static void renew_set(struct bench *b, int c, size_t n)
{
    struct buffers *u = &b->pool[b->npool > 1 ? (b->next[c] + b->npool - 1) % b->npool : 0];
    CUdeviceptr *p = b->kind == K_ARRAY ? &b->dsrc : &b->ddst;
    CUdeviceptr was = *p;
    CHECK(churn_free(was));
    CHECK(churn_alloc(p, b->max_ops * OP_BYTES));
    if (b->kind == K_ARRAY)
        u->dsrc = *p;
    else
        u->ddst = *p;
    if (*p != was)
        make_one(b, b->kind, n, fresh_order);
}

static void setup(struct bench *b, size_t max_ops, unsigned npool, unsigned nstreams)
{
    memset(b, 0, sizeof *b);
    b->max_ops = max_ops;
    b->npool = npool;
    b->nstreams = nstreams;
    for (unsigned m = 0; m < nstreams; m++)
        CHECK(drv.stream_create(&b->streams[m], 0));
    b->stream = b->streams[0];
    for (unsigned m = 0; m < npool; m++) {
        struct buffers *u = &b->pool[m];
        CHECK(drv.mem_alloc(&u->dsrc, max_ops * OP_BYTES));
        CHECK(drv.mem_alloc(&u->ddst, max_ops * OP_BYTES));
        u->host = malloc(max_ops * OP_BYTES); /* pageable on purpose */
        if (!u->host)
            die("out of memory");
        memset(u->host, 0x5a, max_ops * OP_BYTES); /* every page mapped */
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = ARRAY_WIDTH;
        d.Height = max_ops;
        d.Depth = 0;
        d.Format = CU_AD_FORMAT_FLOAT;
        d.NumChannels = 1;
        CHECK(drv.array3d_create(&u->array, &d));
        u->ops = calloc(max_ops, sizeof *u->ops);
        u->dsts = calloc(max_ops, sizeof *u->dsts);
        u->srcs = calloc(max_ops, sizeof *u->srcs);
        u->sizes = calloc(max_ops, sizeof *u->sizes);
        if (!u->ops || !u->dsts || !u->srcs || !u->sizes)
            die("out of memory");
    }
    use_set(b, 0);
}

static void teardown(struct bench *b)
{
    drv.stream_synchronize(b->stream);
    for (unsigned m = 0; m < b->npool; m++) {
        struct buffers *u = &b->pool[m];
        drv.array_destroy(u->array);
        drv.mem_free(u->dsrc);
        drv.mem_free(u->ddst);
        free(u->host);
        free(u->ops);
        free(u->dsts);
        free(u->srcs);
        free(u->sizes);
    }
    for (unsigned m = 0; m < b->nstreams; m++) {
        drv.stream_synchronize(b->streams[m]);
        drv.stream_destroy(b->streams[m]);
    }
}

static const char *call_name(enum kind k)
{
    switch (k) {
    case K_D2D_1D: return "cuMemcpyBatchAsync_v2";
    case K_SINGLE: return "cuMemcpy3DWithAttributesAsync";
    case K_SINGLE_1D: return "cuMemcpyWithAttributesAsync";
    default: return "cuMemcpy3DBatchAsync_v2";
    }
}

/* One call of contender c on the batch of the current kind. */
static inline CUresult call(const struct contenders *ct, int c, struct bench *b, size_t n)
{
    switch (b->kind) {
    case K_D2D_1D:
        return ct->fn1d[c](b->dsts, b->srcs, b->sizes, n, &b->attr, &b->idx0, 1, b->stream);
    case K_SINGLE:
        return ct->single[c](b->ops, 0, b->stream);
    case K_SINGLE_1D:
        return ct->single1d[c](b->dsts[0], b->srcs[0], b->sizes[0], &b->attr, b->stream);
    default:
        return ct->fn[c](n, b->ops, 0, b->stream);
    }
}

/* One timed call, the stream drained before it. */
static inline uint64_t timed_call(const struct contenders *ct, int c, struct bench *b, size_t n, const char *who)
{
    CHECK(drv.stream_synchronize(b->stream));
    uint64_t t0 = now_ns();
    CUresult r = call(ct, c, b, n);
    uint64_t t1 = now_ns();
    if (r != CUDA_SUCCESS)
        die("%s %s of %zu ops failed: %d (%s)", who, call_name(b->kind),
            n, (int)r, err_name(r));
    return t1 - t0;
}

/* Move every thread but this one off CPU `cpu` (onto all the others). */
static int unpin_others(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        if (c != cpu)
            CPU_SET((int)c, &set);
    if (CPU_COUNT(&set) == 0)
        return 0;
    pid_t self = (pid_t)syscall(SYS_gettid);
    int moved = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t t = (pid_t)atoi(e->d_name);
        if (t > 0 && t != self && sched_setaffinity(t, sizeof set, &set) == 0)
            moved++;
    }
    closedir(d);
    return moved;
}

/* Let the other threads finish what earlier calls gave them, so that a row
 * starts and ends quiet: wait until their CPU time stops growing (at most
 * 2 s; 5 s under valgrind). */
static void settle(void)
{
    struct timespec nap = {0, RUNNING_ON_VALGRIND ? 50000000 : 5000000};
    uint64_t prev = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < (RUNNING_ON_VALGRIND ? 100 : 400); i++) {
        nanosleep(&nap, NULL);
        uint64_t now = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (now - prev < 100000) /* under 0.1 ms of CPU in the nap: idle */
            break;
        prev = now;
    }
}

/* ---- small helpers ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double median_u64(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- the A/A reference (the CSV of a --null run) ---- */

struct aa_row {
    char kind[32];
    size_t ops;
    double lo, hi;
};
static struct aa_row aa_rows[256];
static int aa_count;

static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    return n;
}

static void load_aa(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot read the A/A results %s: %s", path, strerror(errno));
    char line[4096], *fld[128];
    int ik = -1, io = -1, il = -1, ih = -1, nul = -1;
    if (!fgets(line, sizeof line, f))
        die("%s is empty", path);
    int nf = csv_split(line, fld, 128);
    for (int i = 0; i < nf; i++) {
        if (!strcmp(fld[i], "kind"))
            ik = i;
        else if (!strcmp(fld[i], "ops"))
            io = i;
        else if (!strcmp(fld[i], "shim_lo_ns"))
            il = i;
        else if (!strcmp(fld[i], "shim_hi_ns"))
            ih = i;
        else if (!strcmp(fld[i], "null"))
            nul = i;
    }
    if (ik < 0 || io < 0 || il < 0 || ih < 0 || nul < 0)
        die("%s is not the CSV of a bench/overhead run", path);
    while (fgets(line, sizeof line, f) && aa_count < (int)(sizeof aa_rows / sizeof *aa_rows)) {
        nf = csv_split(line, fld, 128);
        if (nf <= ih || nf <= nul)
            continue;
        if (strcmp(fld[nul], "1"))
            die("%s is not from a --null run", path);
        struct aa_row *a = &aa_rows[aa_count++];
        snprintf(a->kind, sizeof a->kind, "%s", fld[ik]);
        a->ops = (size_t)atol(fld[io]);
        a->lo = atof(fld[il]);
        a->hi = atof(fld[ih]);
    }
    fclose(f);
}

static const struct aa_row *find_aa(enum kind k, size_t n)
{
    for (int i = 0; i < aa_count; i++)
        if (aa_rows[i].ops == n && !strcmp(aa_rows[i].kind, kind_name[k]))
            return &aa_rows[i];
    return NULL;
}

/* ---- one row: a (kind, size) ---- */

/* What one block measured, per call (ns): the median call time; the
 * calling thread's CPU time inside the calls (CLOCK_THREAD_CPUTIME_ID read
 * just outside each timed window); the CPU time of the process's other
 * threads (CLOCK_PROCESS_CPUTIME_ID minus the calling thread's, from the end
 * of the previous block to the end of this one); and the process's CPU time
 * over the same span, everything counted. */
struct block_measure {
    double t, in_calls, others, process;
    double out; /* median of (call - the driver's part), through bench/drvclock; else NAN */
};

/* Per round and contender, what its block measured. */
struct series {
    size_t n, cap;
    struct block_measure *m[C_COUNT];
};

static void series_push(struct series *s, const struct block_measure *m)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        for (int c = 0; c < C_COUNT; c++)
            if (!(s->m[c] = realloc(s->m[c], s->cap * sizeof *s->m[c])))
                die("out of memory");
    }
    for (int c = 0; c < C_COUNT; c++)
        s->m[c][s->n] = m[c];
    s->n++;
}

static void series_free(struct series *s)
{
    for (int c = 0; c < C_COUNT; c++)
        free(s->m[c]);
}

/* A contender's added CPU per call: its calls on the calling thread plus
 * every other thread of the process, minus bare's. */
static double added_cpu(const struct block_measure *m, const struct block_measure *bare)
{
    return (m->in_calls + m->others) - (bare->in_calls + bare->others);
}

struct row {
    enum kind kind;
    size_t n;
    long rounds, block, warmup;
    const char *stop;          /* "ci", "budget" or "iters" */
    double bare_ns;            /* median over rounds of bare's block median */
    struct ci t[C_COUNT];      /* added calling-thread time vs bare (median over rounds) */
    struct ci out[C_COUNT];    /* the same outside the driver (bench/drvclock), else NAN */
    struct ci t_excess;        /* shim - time_bound(floor), per round */
    struct ci cpu[C_COUNT];    /* added CPU: calls + other threads, vs bare (mean over rounds) */
    struct ci cpu_excess;      /* shim - 1.2 x floor (1 x below 0), per round */
    struct ci process[C_COUNT]; /* added process CPU, everything counted (mean over rounds) */
    double others[C_COUNT];    /* the other threads' part of cpu (mean) */
    double goal_ns;
    bool aa_known;
    double aa_lo, aa_hi;
    enum verdict v_time, v_cpu, v_goal, v_aa;
    long long steps;           /* the shim's measured calls that took the steps; -1: unknown */
};

/* The calling thread's time bound for the shim, given the floor's added time
 * (bench/README.md, "Verdicts"): a ratio of the floor's where the batch's
 * fixed cost dominates, a slack per op from PER_OP_FROM ops. */
static double time_bound(enum kind kind, size_t n, double floor_ns)
{
    if (n < PER_OP_FROM)
        return TIME_VS_FLOOR_RATIO * floor_ns + TIME_VS_FLOOR_SLACK_NS;
    return floor_ns + (double)n * (kind_1d(kind) ? PER_OP_SLACK_1D_NS : PER_OP_SLACK_3D_NS);
}

/* The statistics of the rounds so far. */
static void summarize(struct row *w, const struct series *s, const struct contenders *ct)
{
    enum { TS, TF, TX, CS, CF, CX, PS, PF, OS, OF, NSERIES };
    size_t n = s->n;
    double *scratch = malloc(n * sizeof *scratch), *d[NSERIES];
    if (!scratch)
        die("out of memory");
    for (int i = 0; i < NSERIES; i++)
        if (!(d[i] = malloc(n * sizeof *d[i])))
            die("out of memory");
    bool floor = ct->count > 2;
    double so = 0, fo = 0;
    for (size_t r = 0; r < n; r++) {
        const struct block_measure *mb = &s->m[C_BARE][r], *ms = &s->m[C_SHIM][r], *mf = &s->m[C_FLOOR][r];
        double dts = ms->t - mb->t, dtf = mf->t - mb->t, dcs = added_cpu(ms, mb), dcf = added_cpu(mf, mb);
        d[TS][r] = dts;
        d[TF][r] = dtf;
        d[TX][r] = dts - (time_bound(w->kind, w->n, dtf) + gpu_slack_ns);
        d[CS][r] = dcs;
        d[CF][r] = dcf;
        d[PS][r] = ms->process - mb->process;
        d[PF][r] = mf->process - mb->process;
        d[OS][r] = ms->out - mb->out;
        d[OF][r] = mf->out - mb->out;
        so += ms->others - mb->others;
        fo += mf->others - mb->others;
    }
    /* The floor's added CPU cannot be below zero; a mean below it is the
     * noise of rounds whose bare calls cost more CPU, and 1.2 x a negative
     * floor would hold the shim below the floor itself: there the bound is
     * the floor. */
    double cf_mean = 0;
    for (size_t r = 0; r < n; r++)
        cf_mean += d[CF][r] / (double)n;
    const double cpu_ratio = cf_mean >= 0 ? CPU_VS_FLOOR_RATIO : 1.0;
    for (size_t r = 0; r < n; r++)
        d[CX][r] = d[CS][r] - (cpu_ratio * d[CF][r] + gpu_slack_ns);
    for (size_t r = 0; r < n; r++)
        scratch[r] = s->m[C_BARE][r].t;
    qsort(scratch, n, sizeof *scratch, cmp_double);
    w->bare_ns = median_sorted(scratch, n);
    w->t[C_SHIM] = median_ci(d[TS], n, scratch);
    struct ci none = {NAN, NAN, NAN};
    w->t[C_FLOOR] = floor ? median_ci(d[TF], n, scratch) : none;
    w->t_excess = floor ? median_ci(d[TX], n, scratch) : none;
    bool clocked = drv.drvclock_last_ns != NULL;
    w->out[C_SHIM] = clocked ? median_ci(d[OS], n, scratch) : none;
    w->out[C_FLOOR] = clocked && floor ? median_ci(d[OF], n, scratch) : none;
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (w->n * 131 + (uint64_t)w->kind);
    struct ci m[4];
    const double *cx[4] = {d[CS], d[CF], d[CX]};
    if (mean_cis(cx, floor ? 3 : 1, n, seed, m))
        die("out of memory");
    w->cpu[C_SHIM] = m[0];
    w->cpu[C_FLOOR] = floor ? m[1] : none;
    w->cpu_excess = floor ? m[2] : none;
    const double *px[4] = {d[PS], d[PF]};
    if (mean_cis(px, floor ? 2 : 1, n, seed, m))
        die("out of memory");
    w->process[C_SHIM] = m[0];
    w->process[C_FLOOR] = floor ? m[1] : none;
    w->others[C_SHIM] = so / (double)n;
    w->others[C_FLOOR] = floor ? fo / (double)n : NAN;
    w->goal_ns = goal_pct(w->n) / 100 * w->bare_ns;
    for (int i = 0; i < NSERIES; i++)
        free(d[i]);
    free(scratch);
}

/* Every interval the verdicts read is narrow enough. */
static bool narrow_enough(const struct row *w, const struct contenders *ct, double target_ns)
{
    if (ci_half_width(w->t[C_SHIM]) > target_ns || ci_half_width(w->cpu[C_SHIM]) > target_ns)
        return false;
    if (ct->count > 2 && (ci_half_width(w->t[C_FLOOR]) > target_ns || ci_half_width(w->cpu[C_FLOOR]) > target_ns))
        return false;
    return true;
}

/* The CPU clocks at the end of the previous block. */
struct cpu_marks {
    uint64_t process, thread;
};

static void cpu_marks_now(struct cpu_marks *mk)
{
    mk->process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    mk->thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* One block: B calls of one contender, each after draining the stream. */
static void run_block(const struct contenders *ct, int c, const char *who, struct bench *b, size_t n, long block,
                      uint64_t *calls, struct cpu_marks *mk, struct block_measure *out)
{
    uint64_t in_calls = 0;
    uint64_t *outs = calls + block;
    for (long j = 0; j < block; j++) {
        CHECK(drv.stream_synchronize(b->stream));
        evict();
        next_set(b, c);
        if (fresh_lists)
            make_one(b, b->kind, n, fresh_order);
        if (churn) {
            CUdeviceptr p;
            CHECK(churn_alloc(&p, 4096));
            CHECK(churn_free(p));
        }
        if (renew)
            renew_set(b, c, n);
        calls_measured++;
        uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        uint64_t t0 = now_ns();
        CUresult r = call(ct, c, b, n);
        uint64_t t1 = now_ns();
        uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (r != CUDA_SUCCESS)
            die("%s batch of %zu ops (%s) failed: %d (%s)", who, n, kind_name[b->kind], (int)r, err_name(r));
        calls[j] = t1 - t0;
        /* the driver's part is read inside the call: never more than the call */
        if (drv.drvclock_last_ns) {
            uint64_t d = drv.drvclock_last_ns();
            outs[j] = calls[j] > d ? calls[j] - d : 0;
        }
        in_calls += c1 - c0;
    }
    CHECK(drv.stream_synchronize(b->stream));
    struct cpu_marks now;
    cpu_marks_now(&now);
    out->t = median_u64(calls, (size_t)block);
    out->out = drv.drvclock_last_ns ? median_u64(outs, (size_t)block) : NAN;
    out->in_calls = (double)in_calls / (double)block;
    out->process = (double)(now.process - mk->process) / (double)block;
    /* signed: the two clocks are read a few ns apart */
    out->others = ((double)(now.process - mk->process) - (double)(now.thread - mk->thread)) / (double)block;
    *mk = now;
}

static void run_round(const struct contenders *ct, long r, struct bench *b, size_t n, long block, uint64_t *calls,
                      struct cpu_marks *mk, struct block_measure *m)
{
    for (int i = 0; i < ct->count; i++) {
        int c = ct->count == 3 ? perm3[r % 6][i] : perm2[r % 2][i];
        run_block(ct, c, contender_name[c], b, n, block, calls, mk, &m[c]);
    }
    if (ct->count < 3)
        m[C_FLOOR] = (struct block_measure){0, 0, 0, 0, NAN};
}

static void run_row(const struct contenders *ct, struct bench *b, enum kind k, size_t n, const struct options *o,
                    struct row *w)
{
    memset(w, 0, sizeof *w);
    w->kind = k;
    w->n = n;
    make_ops(b, k, n, o->h2d_order);

    /* Size the blocks from a few calls of each contender, synchronize included. */
    uint64_t est[3 * C_COUNT];
    int ne = 0;
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < ct->count; c++) {
            uint64_t t0 = now_ns();
            timed_call(ct, c, b, n, contender_name[c]);
            est[ne++] = now_ns() - t0;
        }
    double per_call = median_u64(est, (size_t)ne);
    if (per_call < 1)
        per_call = 1;
    long block = o->block > 0 ? o->block : o->iters > 0 ? 1 : (long)(o->block_us * 1e3 / per_call + 0.5);
    block = block < 1 ? 1 : block > MAX_BLOCK ? MAX_BLOCK : block;
    double per_round = per_call * (double)block * ct->count;
    long warmup = o->warmup;
    if (warmup < 0) {
        warmup = (long)(0.05 * o->budget * 1e9 / per_round);
        warmup = warmup < 3 ? 3 : warmup > 200 ? 200 : warmup;
    }
    long min_rounds = o->quick ? 20 : 50;
    double min_ns = o->budget * 1e9 / 10;

    uint64_t *calls = malloc(2 * (size_t)block * sizeof *calls); /* the calls, then their parts outside the driver */
    if (!calls)
        die("out of memory");
    struct block_measure m[C_COUNT];
    struct cpu_marks mk;
    cpu_marks_now(&mk);
    for (long r = 0; r < warmup; r++)
        run_round(ct, r, b, n, block, calls, &mk, m);
    settle();
    CALLGRIND_ZERO_STATS;
    const unsigned long long steps0 = shim_steps ? shim_steps() : 0;

    struct series s = {0};
    uint64_t start = now_ns();
    long next_check = min_rounds;
    cpu_marks_now(&mk);
    for (long r = 0;; r++) {
        run_round(ct, r, b, n, block, calls, &mk, m);
        series_push(&s, m);
        if (o->iters > 0) {
            if (r + 1 >= o->iters) {
                w->stop = "iters";
                break;
            }
            continue;
        }
        double elapsed = (double)(now_ns() - start);
        bool out_of_time = elapsed >= o->budget * 1e9 && r + 1 >= min_rounds;
        if (r + 1 < next_check && !out_of_time)
            continue;
        next_check = r + 1 + (r + 1) / 4;
        if (elapsed < min_ns && !out_of_time)
            continue;
        summarize(w, &s, ct);
        if (narrow_enough(w, ct, o->target * w->goal_ns)) {
            w->stop = "ci";
            break;
        }
        if (out_of_time) {
            w->stop = "budget";
            break;
        }
    }
    CHECK(drv.stream_synchronize(b->stream));
    settle();
    if (RUNNING_ON_VALGRIND) {
        char tag[64];
        snprintf(tag, sizeof tag, "%s/%zu/%zu", kind_name[k], n, s.n * (size_t)block);
        CALLGRIND_DUMP_STATS_AT(tag);
    }
    summarize(w, &s, ct);
    w->steps = shim_steps ? (long long)(shim_steps() - steps0) : -1;
    w->rounds = (long)s.n;
    w->block = block;
    w->warmup = warmup;
    series_free(&s);
    free(calls);
}

/* The verdicts of a row (bench/README.md, "Verdicts"). */
static void judge_row(struct row *w, const struct contenders *ct, bool session, bool null, bool fake)
{
    w->v_time = w->v_cpu = w->v_goal = w->v_aa = V_NONE;
    const struct aa_row *a = find_aa(w->kind, w->n);
    if (a) {
        w->aa_known = true;
        w->aa_lo = a->lo;
        w->aa_hi = a->hi;
    }
    if (null)
        return;
    if (!session) {
        /* With nothing recording, the shim must not be told from the bare driver. */
        if (a)
            w->v_aa = judge(w->t[C_SHIM], a->hi);
        return;
    }
    if (ct->count > 2) {
        w->v_time = judge(w->t_excess, 0);
        w->v_cpu = judge(w->cpu_excess, 0);
    }
    /* The percent goals hold for the real driver, wherever the floor itself meets them. */
    if (!fake && (ct->count < 3 || w->t[C_FLOOR].est <= w->goal_ns))
        w->v_goal = judge(w->t[C_SHIM], w->goal_ns);
}

/* ---- output ---- */

static void print_outside(FILE *f, const struct row *w)
{
    char sc[40], fc[40];
    snprintf(sc, sizeof sc, "%.0f..%.0f", w->out[C_SHIM].lo, w->out[C_SHIM].hi);
    snprintf(fc, sizeof fc, "%.0f..%.0f", w->out[C_FLOOR].lo, w->out[C_FLOOR].hi);
    double diff = w->out[C_SHIM].est - w->out[C_FLOOR].est;
    fprintf(f, "%-7s %-13s %5zu %8.0f %-17s %8.0f %-17s %9.0f %8.1f\n", "outside", kind_name[w->kind], w->n,
            w->out[C_SHIM].est, sc, w->out[C_FLOOR].est, fc, diff, diff / (double)w->n);
}

/* Whole nanoseconds, never "-0". */
static double whole(double v)
{
    v = nearbyint(v);
    return v == 0 ? 0 : v;
}

static void fmt_ci(char *out, size_t len, struct ci c)
{
    if (isnan(c.lo))
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%.0f..%.0f", whole(c.lo), whole(c.hi));
}

static void fmt_num(char *out, size_t len, double v)
{
    if (isnan(v))
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%.0f", whole(v));
}

static void fmt_pct(char *out, size_t len, double v, double base)
{
    double pct = nearbyint(10000 * v / base) / 100;
    if (isnan(v))
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%.2f", pct == 0 ? 0 : pct);
}

static void print_row(const struct row *w)
{
    char ts[24], tsc[40], tsp[16], tf[24], tfc[40], tfp[16], cs[24], csc[40], cf[24], cfc[40];
    fmt_num(ts, sizeof ts, w->t[C_SHIM].est);
    fmt_ci(tsc, sizeof tsc, w->t[C_SHIM]);
    fmt_pct(tsp, sizeof tsp, w->t[C_SHIM].est, w->bare_ns);
    fmt_num(tf, sizeof tf, w->t[C_FLOOR].est);
    fmt_ci(tfc, sizeof tfc, w->t[C_FLOOR]);
    fmt_pct(tfp, sizeof tfp, w->t[C_FLOOR].est, w->bare_ns);
    fmt_num(cs, sizeof cs, w->cpu[C_SHIM].est);
    fmt_ci(csc, sizeof csc, w->cpu[C_SHIM]);
    fmt_num(cf, sizeof cf, w->cpu[C_FLOOR].est);
    fmt_ci(cfc, sizeof cfc, w->cpu[C_FLOOR]);
    printf("%-13s %5zu %6ld %5ld %-6s %10.2f %8s %-17s %7s %8s %-17s %7s %8s %-17s %9s %-17s %-5s %-5s %-5s %-5s\n",
           kind_name[w->kind], w->n, w->rounds, w->block, w->stop, w->bare_ns / 1e3, ts, tsc, tsp, tf, tfc, tfp, cs,
           csc, cf, cfc, verdict_name[w->v_time], verdict_name[w->v_cpu], verdict_name[w->v_goal],
           verdict_name[w->v_aa]);
    fflush(stdout);
}

static const char csv_header[] =
    "kind,ops,rounds,block,warmup,calls,stop,bare_ns,"
    "shim_ns,shim_lo_ns,shim_hi_ns,shim_pct,floor_ns,floor_lo_ns,floor_hi_ns,floor_pct,"
    "excess_ns,excess_lo_ns,excess_hi_ns,"
    "cpu_shim_ns,cpu_shim_lo_ns,cpu_shim_hi_ns,cpu_floor_ns,cpu_floor_lo_ns,cpu_floor_hi_ns,"
    "cpu_excess_ns,cpu_excess_lo_ns,cpu_excess_hi_ns,others_shim_ns,others_floor_ns,"
    "process_shim_ns,process_shim_lo_ns,process_shim_hi_ns,process_floor_ns,process_floor_lo_ns,"
    "process_floor_hi_ns,"
    "goal_pct,goal_ns,aa_lo_ns,aa_hi_ns,time_vs_floor,cpu_vs_floor,goal,aa,"
    "mode,session,null,driver,driver_version,cpu,date,time_bound_ns,"
    "out_shim_ns,out_shim_lo_ns,out_shim_hi_ns,out_floor_ns,out_floor_lo_ns,out_floor_hi_ns,shim_steps\n";

/* Text for a CSV field: no commas, no quotes. */
static void csv_text(char *s)
{
    for (; *s; s++)
        if (*s == ',' || *s == '"')
            *s = ';';
}

/* A CSV number: empty where there is none. */
static void csv_num(FILE *f, double v, int decimals)
{
    if (!isnan(v))
        fprintf(f, "%.*f", decimals, v);
    fputc(',', f);
}

static void csv_row(FILE *f, const struct row *w, const char *mode, bool session, bool null, bool fake, int version,
                    const char *cpu, const char *date)
{
    fprintf(f, "%s,%zu,%ld,%ld,%ld,%ld,%s,%.1f,", kind_name[w->kind], w->n, w->rounds, w->block, w->warmup,
            w->rounds * w->block, w->stop, w->bare_ns);
    const double v[] = {w->t[C_SHIM].est, w->t[C_SHIM].lo, w->t[C_SHIM].hi, 100 * w->t[C_SHIM].est / w->bare_ns,
                        w->t[C_FLOOR].est, w->t[C_FLOOR].lo, w->t[C_FLOOR].hi, 100 * w->t[C_FLOOR].est / w->bare_ns,
                        w->t_excess.est, w->t_excess.lo, w->t_excess.hi,
                        w->cpu[C_SHIM].est, w->cpu[C_SHIM].lo, w->cpu[C_SHIM].hi,
                        w->cpu[C_FLOOR].est, w->cpu[C_FLOOR].lo, w->cpu[C_FLOOR].hi,
                        w->cpu_excess.est, w->cpu_excess.lo, w->cpu_excess.hi, w->others[C_SHIM], w->others[C_FLOOR],
                        w->process[C_SHIM].est, w->process[C_SHIM].lo, w->process[C_SHIM].hi,
                        w->process[C_FLOOR].est, w->process[C_FLOOR].lo, w->process[C_FLOOR].hi,
                        goal_pct(w->n), w->goal_ns, w->aa_known ? w->aa_lo : NAN, w->aa_known ? w->aa_hi : NAN};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        csv_num(f, v[i], i == 3 || i == 7 ? 4 : 1);
    fprintf(f, "%s,%s,%s,%s,", verdict_name[w->v_time], verdict_name[w->v_cpu], verdict_name[w->v_goal],
            verdict_name[w->v_aa]);
    fprintf(f, "%s,%d,%d,%s,%d,%s,%s,", mode, session, null, fake ? "fakecuda" : "nvidia", version, cpu, date);
    /* The time bound at the floor's median (the verdict is on the per-round excess). */
    double bound = isnan(w->t[C_FLOOR].est) ? NAN : time_bound(w->kind, w->n, w->t[C_FLOOR].est) + gpu_slack_ns;
    if (!isnan(bound))
        fprintf(f, "%.1f", bound);
    const double o[] = {w->out[C_SHIM].est, w->out[C_SHIM].lo, w->out[C_SHIM].hi,
                        w->out[C_FLOOR].est, w->out[C_FLOOR].lo, w->out[C_FLOOR].hi};
    for (size_t i = 0; i < sizeof o / sizeof *o; i++) {
        fputc(',', f);
        if (!isnan(o[i]))
            fprintf(f, "%.1f", o[i]);
    }
    fputc(',', f);
    if (w->steps >= 0)
        fprintf(f, "%lld", w->steps);
    fputc('\n', f);
}

/* ---- options ---- */

static void usage(void)
{
    fputs("usage: bench/overhead [--quick] [--evict BYTES] [--fresh] [--churn] [--renew] [--pool N] [--streams N] [--sizes 1,4,...] [--kinds d2d,h2d_pageable,array] [--budget S]\n"
          "                      [--target F] [--iters N] [--block B] [--block-us U] [--warmup N]\n"
          "                      [--h2d-order during|stream|any] [--mode LABEL] [--aa NULL.csv] [--cpu N]\n"
          "                      [--csv FILE] [--libcuda PATH] [--floor PATH | --no-floor] [--null] [SHIM]\n",
          stderr);
    exit(2);
}

static void parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = -1;
    o->budget = -1;
    o->target = 0.25;
    o->block_us = 1000;
    o->cpu = -1;
    o->h2d_order = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    const char *sizes = NULL, *kinds = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (!strcmp(a, "--quick"))
            o->quick = true;
        else if (!strcmp(a, "--null"))
            o->null = true;
        else if (!strcmp(a, "--evict"))
            o->evict = (size_t)strtoull(ARG(), NULL, 0);
        else if (!strcmp(a, "--fresh"))
            o->fresh = true;
        else if (!strcmp(a, "--churn"))
            o->churn = true;
        else if (!strcmp(a, "--renew"))
            o->renew = true;
        else if (!strcmp(a, "--pool"))
            o->pool = count_arg(a, ARG(), MAX_POOL, "sets");
        else if (!strcmp(a, "--streams"))
            o->streams = count_arg(a, ARG(), MAX_STREAMS, "streams");
        else if (!strcmp(a, "--no-floor"))
            o->no_floor = true;
        else if (!strcmp(a, "--floor"))
            o->floor = ARG();
        else if (!strcmp(a, "--sizes"))
            sizes = ARG();
        else if (!strcmp(a, "--kinds"))
            kinds = ARG();
        else if (!strcmp(a, "--iters"))
            o->iters = atol(ARG());
        else if (!strcmp(a, "--block"))
            o->block = atol(ARG());
        else if (!strcmp(a, "--block-us"))
            o->block_us = atof(ARG());
        else if (!strcmp(a, "--warmup"))
            o->warmup = atol(ARG());
        else if (!strcmp(a, "--budget"))
            o->budget = atof(ARG());
        else if (!strcmp(a, "--target"))
            o->target = atof(ARG());
        else if (!strcmp(a, "--mode"))
            o->mode = ARG();
        else if (!strcmp(a, "--aa"))
            o->aa = ARG();
        else if (!strcmp(a, "--cpu"))
            o->cpu = atoi(ARG());
        else if (!strcmp(a, "--csv"))
            o->csv = ARG();
        else if (!strcmp(a, "--libcuda"))
            o->libcuda = ARG();
        else if (!strcmp(a, "--h2d-order")) {
            const char *v = ARG();
            if (!strcmp(v, "stream"))
                o->h2d_order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
            else if (!strcmp(v, "during"))
                o->h2d_order = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
            else if (!strcmp(v, "any"))
                o->h2d_order = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
            else
                usage();
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            usage();
        else if (a[0] == '-')
            usage();
        else
            o->shim = a;
#undef ARG
    }
    if (o->budget < 0)
        o->budget = o->quick ? 0.3 : 5;
    if (o->target <= 0 || o->block_us <= 0)
        usage();
    if (sizes) {
        char *copy = strdup(sizes), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && o->nsizes < 32; t = strtok_r(NULL, ",", &save)) {
            long v = atol(t);
            if (v <= 0)
                die("bad size '%s'", t);
            o->sizes[o->nsizes++] = (size_t)v;
        }
        free(copy);
    } else {
        for (size_t i = 0; i < sizeof default_sizes / sizeof *default_sizes; i++)
            o->sizes[o->nsizes++] = default_sizes[i];
    }
    if (kinds) {
        char *copy = strdup(kinds), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int k;
            for (k = 0; k < K_COUNT && strcmp(t, kind_name[k]); k++)
                ;
            if (k == K_COUNT)
                die("unknown kind '%s' (d2d, h2d_pageable, array, d2d_1d, d2d_single, d2d_single1d)", t);
            o->kinds[k] = true;
        }
        free(copy);
    } else {
        for (int k = 0; k < K_DEFAULT_COUNT; k++)
            o->kinds[k] = true;
    }
    if (!o->shim)
        o->shim = getenv("CBT_SHIM");
    if (!o->shim || !*o->shim)
        o->shim = "src/.libs/libcubatchtrace.so";
    if (!o->floor)
        o->floor = getenv("CBT_FLOOR");
    if (!o->floor || !*o->floor)
        o->floor = "bench/floor/.libs/libcbtfloor.so";
}

static void *load_door(const char *path, const char *what, const char *hint, const char *symbol, void *bare)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die("cannot load the %s %s: %s (%s)", what, path, dlerror(), hint);
    void *fn = dlsym(h, symbol);
    if (!fn)
        die("%s has no %s", path, symbol);
    if (fn == bare)
        die("%s resolved to the driver itself", path);
    return fn;
}

/* The first call of a door (it may load an LTTng provider and register with
 * a session daemon): timed, kept out of every figure, and checked to reach
 * the test double loaded here. */
static uint64_t first_call(const struct contenders *ct, int c, const char *who, struct bench *b)
{
    unsigned long long before = drv.fake_batch_calls ? drv.fake_batch_calls() : 0;
    uint64_t t = timed_call(ct, c, b, 1, who);
    if (drv.fake_batch_calls && drv.fake_batch_calls() != before + 1)
        die("the %s's call did not reach the test double loaded here (%llu calls seen)", who,
            drv.fake_batch_calls() - before);
    return t;
}

int main(int argc, char **argv)
{
    struct options o;
    parse(argc, argv, &o);
    if (o.evict) {
        evict_buf = calloc(1, o.evict);
        if (!evict_buf)
            die("--evict %zu: out of memory", o.evict);
        evict_len = o.evict;
    }
    fresh_lists = o.fresh;
    churn = o.churn;
    renew = o.renew;
    fresh_order = o.h2d_order;
    const char *gt = getenv("CUBATCHTRACE_GPU_TIME");
    if (gt && atoi(gt) > 0)
        gpu_slack_ns = GPU_TIME_SLACK_NS;

    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "cubatchtrace"))
        die("do not run under LD_PRELOAD of the shim (LD_PRELOAD=%s): the program loads it itself", pre);
    if (o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o.cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set))
            die("cannot pin to CPU %d: %s", o.cpu, strerror(errno));
    }
    if (o.aa)
        load_aa(o.aa);

    /* The bare driver first, then the shim and the floor, which find the same libcuda. */
    const char *libcuda = o.libcuda ? o.libcuda : "libcuda.so.1";
    if (o.libcuda)
        setenv("CUBATCHTRACE_LIBCUDA", o.libcuda, 1);
    void *hc = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
    if (!hc)
        die("cannot load the CUDA driver %s: %s", libcuda, dlerror());
    batch_fn bare = (batch_fn)need(hc, "cuMemcpy3DBatchAsync_v2");
    batch1d_fn bare1d = (batch1d_fn)need(hc, "cuMemcpyBatchAsync_v2");
    single_fn bare_single = (single_fn)dlsym(hc, "cuMemcpy3DWithAttributesAsync");
    single1d_fn bare_single1d = (single1d_fn)dlsym(hc, "cuMemcpyWithAttributesAsync");
    if ((o.kinds[K_SINGLE] && !bare_single) || (o.kinds[K_SINGLE_1D] && !bare_single1d))
        die("the driver has no cuMemcpy3DWithAttributesAsync or cuMemcpyWithAttributesAsync (CUDA 13.2): "
            "no d2d_single or d2d_single1d kind");
    drv.init = need(hc, "cuInit");
    drv.driver_get_version = need(hc, "cuDriverGetVersion");
    drv.device_get = need(hc, "cuDeviceGet");
    drv.device_get_name = need(hc, "cuDeviceGetName");
    drv.primary_ctx_retain = need(hc, "cuDevicePrimaryCtxRetain");
    drv.primary_ctx_release = need(hc, "cuDevicePrimaryCtxRelease_v2");
    drv.ctx_set_current = need(hc, "cuCtxSetCurrent");
    drv.mem_alloc = need(hc, "cuMemAlloc_v2");
    drv.mem_free = need(hc, "cuMemFree_v2");
    drv.array3d_create = need(hc, "cuArray3DCreate_v2");
    drv.array_destroy = need(hc, "cuArrayDestroy");
    drv.stream_create = need(hc, "cuStreamCreate");
    drv.stream_destroy = need(hc, "cuStreamDestroy_v2");
    drv.stream_synchronize = need(hc, "cuStreamSynchronize");
    drv.get_error_name = dlsym(hc, "cuGetErrorName");
    drv.fake_batch_calls = (unsigned long long (*)(void))dlsym(hc, "fakecuda_batch_calls");
    drv.drvclock_last_ns = (uint64_t(*)(void))dlsym(hc, "cbt_drvclock_last_ns");
    bool fake = drv.fake_batch_calls != NULL;
    Dl_info di;
    char driver_path[512] = "?";
    if (dladdr((void *)bare, &di) && di.dli_fname)
        snprintf(driver_path, sizeof driver_path, "%s", di.dli_fname);

    struct contenders ct = {.count = 3, .fn = {bare, bare, bare}, .fn1d = {bare1d, bare1d, bare1d},
                            .single = {bare_single, bare_single, bare_single},
                            .single1d = {bare_single1d, bare_single1d, bare_single1d}};
    const char *floor_note = o.floor;
    if (o.no_floor || RUNNING_ON_VALGRIND) {
        ct.count = 2;
        floor_note = o.no_floor ? "(left out: --no-floor)" : "(left out under valgrind)";
    }
    if (o.null) {
        o.shim = "(none: --null, the bare driver in its slot)";
        if (ct.count == 3)
            floor_note = "(none: --null, the bare driver in its slot)";
    } else {
        static const char shim_hint[] = "build it, or pass its path / set CBT_SHIM";
        static const char floor_hint[] = "build it (make), pass --floor PATH / set CBT_FLOOR, or --no-floor";
        ct.fn[C_SHIM] = (batch_fn)load_door(o.shim, "shim", shim_hint, "cuMemcpy3DBatchAsync_v2", (void *)bare);
        ct.fn1d[C_SHIM] = (batch1d_fn)load_door(o.shim, "shim", shim_hint, "cuMemcpyBatchAsync_v2", (void *)bare1d);
        if (o.kinds[K_SINGLE])
            ct.single[C_SHIM] = (single_fn)load_door(o.shim, "shim", shim_hint, "cuMemcpy3DWithAttributesAsync",
                                                     (void *)bare_single);
        if (o.kinds[K_SINGLE_1D])
            ct.single1d[C_SHIM] = (single1d_fn)load_door(o.shim, "shim", shim_hint, "cuMemcpyWithAttributesAsync",
                                                         (void *)bare_single1d);
        void *hs = dlopen(o.shim, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        churn_alloc = hs ? (CUresult(*)(CUdeviceptr *, size_t))dlsym(hs, "cuMemAlloc_v2") : NULL;
        churn_free = hs ? (CUresult(*)(CUdeviceptr))dlsym(hs, "cuMemFree_v2") : NULL;
        shim_steps = hs ? (unsigned long long (*)(void))dlsym(hs, "cubatchtrace_thread_steps") : NULL;
        if (ct.count == 3) {
            ct.fn[C_FLOOR] = (batch_fn)load_door(o.floor, "floor", floor_hint, "cuMemcpy3DBatchAsync_v2", (void *)bare);
            ct.fn1d[C_FLOOR] =
                (batch1d_fn)load_door(o.floor, "floor", floor_hint, "cuMemcpyBatchAsync_v2", (void *)bare1d);
            if (o.kinds[K_SINGLE])
                ct.single[C_FLOOR] = (single_fn)load_door(o.floor, "floor", floor_hint, "cuMemcpy3DWithAttributesAsync",
                                                          (void *)bare_single);
            if (o.kinds[K_SINGLE_1D])
                ct.single1d[C_FLOOR] = (single1d_fn)load_door(o.floor, "floor", floor_hint,
                                                              "cuMemcpyWithAttributesAsync", (void *)bare_single1d);
        }
    }

    if (!churn_alloc || !churn_free) {
        churn_alloc = drv.mem_alloc;
        churn_free = drv.mem_free;
    }
    int version = 0, dev_count = 0;
    CHECK(drv.init(0));
    CHECK(drv.driver_get_version(&version));
    CUresult (*get_count)(int *) = need(hc, "cuDeviceGetCount");
    CHECK(get_count(&dev_count));
    CUdevice dev;
    CUcontext ctx;
    char dev_name[256] = "?";
    CHECK(drv.device_get(&dev, 0));
    drv.device_get_name(dev_name, sizeof dev_name, dev);
    CHECK(drv.primary_ctx_retain(&ctx, dev));
    CHECK(drv.ctx_set_current(ctx));

    size_t max_ops = 1;
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] > max_ops)
            max_ops = o.sizes[i];
    struct bench b;
    setup(&b, max_ops, o.pool ? o.pool : 1, o.streams ? o.streams : 1);

    make_ops(&b, K_D2D, 1, o.h2d_order);
    uint64_t first_shim = first_call(&ct, C_SHIM, "shim", &b);
    uint64_t first_floor = ct.count == 3 ? first_call(&ct, C_FLOOR, "floor", &b) : 0;
    int moved = o.cpu >= 0 ? unpin_others(o.cpu) : 0;

    char cpu[256], mode_buf[512], date[64];
    bool session = false;
    cpu_model(cpu, sizeof cpu);
    if (o.null) {
        snprintf(mode_buf, sizeof mode_buf, "A/A (--null)%s%s", o.mode ? "; given by --mode: " : "",
                 o.mode ? o.mode : "");
    } else if (o.mode) {
        snprintf(mode_buf, sizeof mode_buf, "%s (given by --mode)", o.mode);
        session = strstr(o.mode, "session") || strstr(o.mode, "record") || strstr(o.mode, "trac");
        if (strstr(o.mode, "no"))
            session = false;
    } else {
        detect_mode(mode_buf, sizeof mode_buf, &session);
    }
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tt));
    struct utsname un;
    uname(&un);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    printf("# cubatchtrace overhead benchmark: what the shim and LTTng's floor add to cuMemcpy3DBatchAsync_v2\n");
    printf("# date:      %s\n", date);
    printf("# host:      %s, %s %s, %ld CPUs\n", un.nodename, un.sysname, un.release, ncpu);
    printf("# cpu:       %s%s\n", cpu, o.cpu >= 0 ? " (pinned)" : "");
    printf("# driver:    %s, cuDriverGetVersion %d (%d.%d), %s\n",
           fake ? "TEST DOUBLE (tests/fakecuda: exports fakecuda_batch_calls)" : "real NVIDIA driver", version,
           version / 1000, (version % 1000) / 10, driver_path);
    printf("# device:    %d device(s), device 0: %s\n", dev_count, dev_name);
    printf("# shim:      %s\n", o.shim);
    printf("# floor:     %s\n", floor_note);
    printf("# mode:      %s\n", mode_buf);
    printf("# env:       CUBATCHTRACE_MODE=%s CUBATCHTRACE_REPORT=%s CUBATCHTRACE_SUBBUF_SIZE=%s "
           "LTTNG_UST_ALLOW_BLOCKING=%s\n",
           getenv("CUBATCHTRACE_MODE") ? getenv("CUBATCHTRACE_MODE") : "(unset)",
           getenv("CUBATCHTRACE_REPORT") ? getenv("CUBATCHTRACE_REPORT") : "(unset)",
           getenv("CUBATCHTRACE_SUBBUF_SIZE") ? getenv("CUBATCHTRACE_SUBBUF_SIZE") : "(unset)",
           getenv("LTTNG_UST_ALLOW_BLOCKING") ? getenv("LTTNG_UST_ALLOW_BLOCKING") : "(unset)");
    printf("# ops:       4 KiB each, distinct offsets; d2d device->device; h2d_pageable malloc->device, "
           "srcAccessOrder %s; array device->float CUDA array row (1024 floats); %s\n",
           o.h2d_order == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ? "STREAM"
           : o.h2d_order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ? "DURING_API_CALL" : "ANY",
           o.fresh ? "the list built again before each call (--fresh)" : "the list built once per row");
    if (o.pool > 1)
        printf("# pool:      the calls go round %u sets of buffers, each its own allocations (and host buffer, "
               "CUDA array) and list, one set a call (--pool)\n",
               o.pool);
    if (o.streams > 1)
        printf("# streams:   the calls go round %u streams, one a call (--streams)\n", o.streams);
    if (o.renew)
        printf("# renew:     the destination allocation (kind array: the source) freed and allocated again "
               "with cuMemFree_v2 and cuMemAlloc_v2 before each call, not timed (--renew)\n");
    if (o.churn)
        printf("# churn:     cuMemAlloc_v2 and cuMemFree_v2 of 4 KiB before each call, not timed (--churn)\n");
    printf("# method:    rounds; a round runs each contender (%s) as a block of B calls, in an order that "
           "rotates through every permutation; cuStreamSynchronize before each call and after each block; "
           "CLOCK_MONOTONIC around each call, CLOCK_THREAD_CPUTIME_ID just outside that; "
           "CLOCK_PROCESS_CPUTIME_ID minus the calling thread's from block end to block end (the other threads)\n",
           ct.count == 3 ? "bare, shim, floor" : "bare, shim");
    if (o.iters > 0)
        printf("# rounds:    %ld per row (--iters)\n", o.iters);
    else
        printf("# rounds:    until every interval's half-width is <= %.2f x the goal, or %.2f s of rounds per row "
               "(column stop: ci or budget)\n", o.target, o.budget);
    printf("# warm-up:   the first call took %.1f us (shim)", first_shim / 1e3);
    if (ct.count == 3)
        printf(" and %.1f us (floor)", first_floor / 1e3);
    printf(" (LTTng provider, session daemon); then per row the first rounds are run and discarded\n");
    if (o.cpu >= 0)
        printf("# threads:   the calling thread pinned to CPU %d; after the first calls %d other thread(s) "
               "of the process moved to the other CPUs\n", o.cpu, moved);
    printf("# columns:   bare_us = median bare call (us); shim_ns, floor_ns = added calling-thread time per call: "
           "median over rounds of (block median - bare's block median), with its 95%% interval (order statistics); "
           "%% of bare_us; cpu_shim, cpu_floor = added CPU per call of the calling thread inside the call and of "
           "every other thread of the process: mean over rounds of (block's CPU per call - bare's), with its 95%% "
           "interval (bootstrap)\n");
    printf("# bounds:    in a session, time: shim <= %.1f x floor + %.0f ns below %d ops, from %d ops shim <= floor + "
           "%.0f ns per op (3D) or %.0f ns per copy (1D); cpu: shim <= %.1f x floor (<= floor where the floor's "
           "mean is below 0); goal: shim "
           "<= goal%% of bare (5/3/2/1.5 %% at 1/4/16/64+ ops, where the floor meets it); with no session, aa: "
           "shim inside the --null run's interval (--aa). ok: interval at or below the bound; ok?: it straddles "
           "the bound; OVER: wholly above; -: not judged\n",
           TIME_VS_FLOOR_RATIO, TIME_VS_FLOOR_SLACK_NS, PER_OP_FROM, PER_OP_FROM, PER_OP_SLACK_3D_NS,
           PER_OP_SLACK_1D_NS, CPU_VS_FLOOR_RATIO);
    if (gpu_slack_ns > 0)
        printf("# gpu time:  CUBATCHTRACE_GPU_TIME=%s: the floor records two timing events around one call in as "
               "many (cuEventRecord, never read back); both bounds allow the shim %.0f ns more\n",
               getenv("CUBATCHTRACE_GPU_TIME"), gpu_slack_ns);
    if (fake)
        printf("# NOTE:      test double: its 'driver' costs far less than the H200's ~4 us/op, so the "
               "percentages say nothing about the goals (not judged)\n");
    if (RUNNING_ON_VALGRIND)
        printf("# NOTE:      running under valgrind: times are meaningless, see the instruction counts\n");
    if (!session && !o.null && !o.aa)
        printf("# NOTE:      no --aa: the A/A verdict is not judged\n");
    printf("\n%-13s %5s %6s %5s %-6s %10s %8s %-17s %7s %8s %-17s %7s %8s %-17s %9s %-17s %-5s %-5s %-5s %-5s\n",
           "kind", "ops", "rounds", "B", "stop", "bare_us", "shim_ns", "shim_ci", "shim%", "floor_ns", "floor_ci",
           "floor%", "cpu_shim", "cpu_shim_ci", "cpu_floor", "cpu_floor_ci", "time", "cpu", "goal", "aa");
    fflush(stdout);

    FILE *csv = NULL;
    char csv_mode[512], csv_cpu[256];
    snprintf(csv_mode, sizeof csv_mode, "%s", mode_buf);
    snprintf(csv_cpu, sizeof csv_cpu, "%s", cpu);
    csv_text(csv_mode);
    csv_text(csv_cpu);
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv)
            die("cannot write %s: %s", o.csv, strerror(errno));
        fputs(csv_header, csv);
    }

    int rows = 0, count[4][V_COUNT] = {{0}}, over_rows = 0, budget_rows = 0;
    char over_list[1024] = "", budget_list[1024] = "", steps_list[1024] = "";
    bool steps_unknown = false;
    /* Outside the driver (bench/drvclock): one line per row, printed after the table. */
    char *outside = NULL;
    size_t outside_len = 0;
    FILE *outf = drv.drvclock_last_ns ? open_memstream(&outside, &outside_len) : NULL;
    for (int k = 0; k < K_COUNT; k++) {
        if (!o.kinds[k])
            continue;
        for (int s = 0; s < o.nsizes; s++) {
            if (kind_single((enum kind)k) && o.sizes[s] != 1)
                continue; /* a single-op call is of one op */
            struct row w;
            run_row(&ct, &b, (enum kind)k, o.sizes[s], &o, &w);
            judge_row(&w, &ct, session, o.null, fake);
            print_row(&w);
            if (outf)
                print_outside(outf, &w);
            if (csv) {
                csv_row(csv, &w, csv_mode, session, o.null, fake, version, csv_cpu, date);
                fflush(csv);
            }
            rows++;
            enum verdict v[4] = {w.v_time, w.v_cpu, w.v_goal, w.v_aa};
            bool over = false;
            for (int i = 0; i < 4; i++) {
                count[i][v[i]]++;
                over |= v[i] == V_OVER;
            }
            char tag[48];
            snprintf(tag, sizeof tag, " %s/%zu", kind_name[k], w.n);
            if (over && strlen(over_list) + strlen(tag) < sizeof over_list) {
                over_rows++;
                strcat(over_list, tag);
            }
            if (w.steps < 0) {
                steps_unknown = true;
            } else if (w.steps > 0) {
                char st[96];
                snprintf(st, sizeof st, " %s/%zu (%lld of %ld)", kind_name[k], w.n, w.steps, w.rounds * w.block);
                if (strlen(steps_list) + strlen(st) < sizeof steps_list)
                    strcat(steps_list, st);
            }
            if (!strcmp(w.stop, "budget") && strlen(budget_list) + strlen(tag) < sizeof budget_list) {
                budget_rows++;
                strcat(budget_list, tag);
            }
        }
    }
    if (csv)
        fclose(csv);
    if (outf) {
        fclose(outf);
        printf("\n# outside the driver (bench/drvclock): each call's time less the driver's own part, paired with "
               "bare's as above: what the shim and the floor add around the driver, without the driver's scatter "
               "(nor what they cost the driver through the caches); not judged\n");
        printf("%-7s %-13s %5s %8s %-17s %8s %-17s %9s %8s\n", "outside", "kind", "ops", "shim_ns", "shim_ci",
               "floor_ns", "floor_ci", "diff_ns", "diff/op");
        fputs(outside ? outside : "", stdout);
        free(outside);
    }
    teardown(&b);
    drv.primary_ctx_release(dev);

    static const char *const crit[4] = {"time", "cpu", "goal", "aa"};
    printf("\n# verdicts:");
    for (int i = 0; i < 4; i++)
        printf("%s %s %d ok, %d ok?, %d OVER, %d not judged", i ? ";" : "", crit[i], count[i][V_OK],
               count[i][V_UNSURE], count[i][V_OVER], count[i][V_NONE]);
    printf("\n# summary: %d of %d rows OVER%s%s\n", over_rows, rows, over_rows ? ":" : "", over_list);
    printf("# budget:  the budget ran out before the intervals were narrow enough in %d of %d rows%s%s\n",
           budget_rows, rows, budget_rows ? ":" : "", budget_list);
    printf("# lists:   %llu op lists built for %llu measured calls\n", lists_built, calls_measured);
    if (!o.null && !steps_unknown)
        printf("# steps:   the shim's measured calls that took the steps, not the steady path:%s\n",
               *steps_list ? steps_list : " none");
    return 0;
}
