/*
 * bench/overhead: host time the shim adds to cuMemcpy3DBatchAsync_v2.
 *
 * One process times two functions that reach the same real driver:
 *
 *   bare  dlsym(dlopen("libcuda.so.1"), "cuMemcpy3DBatchAsync_v2")
 *   shim  dlsym(dlopen(libcubatchtrace.so, RTLD_NOW|RTLD_LOCAL), "cuMemcpy3DBatchAsync_v2")
 *
 * The shim's door finds libcuda itself (the same handle, already loaded), so
 * the difference between the two is what the shim costs.  The program must
 * NOT run under LD_PRELOAD of the shim.  It starts no LTTng session: run it
 * once inside a session recording cubatchtrace:* and once without (see
 * bench/README.md); the header says which it saw.
 *
 * For each kind (d2d, h2d_pageable, array) and batch size, iterations are
 * interleaved: every iteration calls both functions once, in alternating
 * order (bare first on even iterations, shim first on odd ones), and the
 * stream is drained with cuStreamSynchronize before each call, so only the
 * host time of the API call is measured (CLOCK_MONOTONIC around the call).
 * The first iterations of every (kind, size) are warm-up and discarded.
 *
 * Ops copy 4 KiB each, at distinct offsets (no two ops overlap):
 *   d2d           device -> device, one cuMemAlloc for sources, one for destinations
 *   h2d_pageable  malloc'd (pageable, touched) host memory -> device
 *   array         device -> one float CUDA array, 1024 x rows, one row per op
 *
 * usage: bench/overhead [options] [SHIM]
 *   SHIM              path of libcubatchtrace.so (else $CBT_SHIM, else
 *                     src/.libs/libcubatchtrace.so relative to the cwd)
 *   --quick           short runs, for the CPU test double (and valgrind)
 *   --sizes LIST      comma-separated batch sizes (default 1,4,16,64,256,1024,4096)
 *   --kinds LIST      comma-separated kinds (default d2d,h2d_pageable,array)
 *   --iters N         measured iterations per (kind, size), fixed (default: adaptive)
 *   --warmup N        warm-up iterations per (kind, size) (default: adaptive)
 *   --budget S        seconds of calls per (kind, size), both sides (default 0.8; --quick 0.05)
 *   --h2d-order O     srcAccessOrder of the H2D ops: during (DURING_API_CALL, default), stream, any.
 *                     The default batches are clean (the validator finds nothing); with
 *                     `stream` every pageable op draws a pageable_stream_order warning,
 *                     i.e. one finding event per op when a session records.
 *   --mode LABEL      what to print as the mode (default: asks `lttng list`)
 *   --cpu N           pin the calling thread to CPU N; once the shim's first call
 *                     has started its threads (LTTng-UST's, the recorder), every other
 *                     thread of the process is moved to the other CPUs
 *   --csv FILE        also write the results as CSV
 *   --libcuda PATH    the driver to dlopen (default libcuda.so.1; also given to the shim)
 *   --null            A/A test: the bare driver on both sides (the shim is not
 *                     loaded): shows the noise floor of the method
 *
 * Under valgrind --tool=callgrind (bench/profile), statistics are zeroed
 * after each warm-up and dumped after each measured (kind, size), named
 * "KIND/SIZE/ITERS"; outside valgrind those requests cost nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

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

typedef CUresult (*batch_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

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
} drv;

enum kind { K_D2D, K_H2D_PAGEABLE, K_ARRAY, K_COUNT };
static const char *const kind_name[K_COUNT] = {"d2d", "h2d_pageable", "array"};

static const size_t default_sizes[] = {1, 4, 16, 64, 256, 1024, 4096};

struct options {
    const char *shim, *csv, *mode, *libcuda;
    bool quick, null;
    size_t sizes[32];
    int nsizes;
    bool kinds[K_COUNT];
    long iters, warmup;
    double budget;
    CUmemcpySrcAccessOrder h2d_order;
    int cpu;
};

/* Goals (added host time, percent of the bare call). */
static double goal_pct(bool session, size_t n)
{
    if (!session)
        return 0.2;
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

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n) (nearest rank). */
static double quant_u64(const uint64_t *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return (double)v[i < n ? i : n - 1];
}

static double median_i64(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static double median_u64_sorted(const uint64_t *v, size_t n)
{
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

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
                    strcat(names, ",");
                strcat(names, name);
            }
        }
    }
    pclose(p);
    if (*session)
        snprintf(out, len, "session recording (lttng list shows active: %s)", names);
}

/* ---- the batches ---- */

struct bench {
    size_t max_ops;
    CUstream stream;
    CUdeviceptr dsrc, ddst;
    unsigned char *host;
    CUarray array;
    CUDA_MEMCPY3D_BATCH_OP *ops;
};

static CUmemcpy3DOperand dptr_operand(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p; /* rowLength, layerHeight 0: tight; no locHint (the validator warns of one on device memory) */
    return o;
}

static void make_ops(struct bench *b, enum kind k, size_t n, CUmemcpySrcAccessOrder h2d_order)
{
    for (size_t i = 0; i < n; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        memset(op, 0, sizeof *op);
        op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        op->extent.height = op->extent.depth = 1;
        switch (k) {
        case K_D2D:
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

static void setup(struct bench *b, size_t max_ops)
{
    memset(b, 0, sizeof *b);
    b->max_ops = max_ops;
    CHECK(drv.stream_create(&b->stream, 0));
    CHECK(drv.mem_alloc(&b->dsrc, max_ops * OP_BYTES));
    CHECK(drv.mem_alloc(&b->ddst, max_ops * OP_BYTES));
    b->host = malloc(max_ops * OP_BYTES); /* pageable on purpose */
    if (!b->host)
        die("out of memory");
    memset(b->host, 0x5a, max_ops * OP_BYTES); /* every page mapped */
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = ARRAY_WIDTH;
    d.Height = max_ops;
    d.Depth = 0;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    CHECK(drv.array3d_create(&b->array, &d));
    b->ops = calloc(max_ops, sizeof *b->ops);
    if (!b->ops)
        die("out of memory");
}

static void teardown(struct bench *b)
{
    drv.stream_synchronize(b->stream);
    drv.array_destroy(b->array);
    drv.mem_free(b->dsrc);
    drv.mem_free(b->ddst);
    drv.stream_destroy(b->stream);
    free(b->host);
    free(b->ops);
}

/* One timed call, the stream drained before it. */
static inline uint64_t timed_call(batch_fn fn, struct bench *b, size_t n, const char *who)
{
    CHECK(drv.stream_synchronize(b->stream));
    uint64_t t0 = now_ns();
    CUresult r = fn(n, b->ops, 0, b->stream);
    uint64_t t1 = now_ns();
    if (r != CUDA_SUCCESS)
        die("%s cuMemcpy3DBatchAsync_v2 of %zu ops failed: %d (%s)", who, n, (int)r, err_name(r));
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

static inline uint64_t cpu_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Let the shim's recorder thread finish what the calls handed it, so its
 * work is counted in the (kind, size) that made it: wait until the other
 * threads' CPU time stops growing (at most 2 s; 5 s under valgrind). */
static void settle(void)
{
    struct timespec nap = {0, RUNNING_ON_VALGRIND ? 50000000 : 5000000};
    uint64_t prev = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < (RUNNING_ON_VALGRIND ? 100 : 400); i++) {
        nanosleep(&nap, NULL);
        uint64_t now = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        if (now - prev < 100000) /* under 0.1 ms of CPU in the nap: idle */
            break;
        prev = now;
    }
}

struct result {
    enum kind kind;
    size_t n;
    long iters, warmup;
    double bare_med, bare_p90, shim_med, shim_p90, paired_med; /* ns */
    double others_cpu;  /* ns of CPU used by the process's other threads, per iteration */
};

static void run_one(batch_fn bare, batch_fn shim, struct bench *b, enum kind k, size_t n, const struct options *o,
                    struct result *res)
{
    make_ops(b, k, n, o->h2d_order);
    /* Estimate the cost of one call to size the run: a few calls of each. */
    uint64_t est[6];
    for (int i = 0; i < 6; i++)
        est[i] = timed_call(i % 2 ? shim : bare, b, n, i % 2 ? "shim" : "bare");
    qsort(est, 6, sizeof *est, cmp_u64);
    double per_call = (double)est[3] + 2000.0; /* + the synchronize around it */

    long min_iters = o->quick ? 30 : (long)(1000 / n) > 30 ? (long)(1000 / n) : 30;
    long iters = o->iters;
    if (iters <= 0) {
        double fit = o->budget * 1e9 / (2 * per_call);
        iters = fit > 20000 ? 20000 : (long)fit;
        if (iters < min_iters)
            iters = min_iters;
    }
    long warmup = o->warmup >= 0 ? o->warmup : iters / 10 < 3 ? 3 : iters / 10 > 200 ? 200 : iters / 10;

    uint64_t *ta = malloc((size_t)iters * sizeof *ta), *tb = malloc((size_t)iters * sizeof *tb);
    int64_t *d = malloc((size_t)iters * sizeof *d);
    if (!ta || !tb || !d)
        die("out of memory");

    for (long i = 0; i < warmup; i++) {
        if (i % 2) {
            timed_call(shim, b, n, "shim");
            timed_call(bare, b, n, "bare");
        } else {
            timed_call(bare, b, n, "bare");
            timed_call(shim, b, n, "shim");
        }
    }
    CHECK(drv.stream_synchronize(b->stream));
    settle();
    CALLGRIND_ZERO_STATS;
    uint64_t p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), th0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < iters; i++) {
        if (i % 2) {
            tb[i] = timed_call(shim, b, n, "shim");
            ta[i] = timed_call(bare, b, n, "bare");
        } else {
            ta[i] = timed_call(bare, b, n, "bare");
            tb[i] = timed_call(shim, b, n, "shim");
        }
    }
    CHECK(drv.stream_synchronize(b->stream));
    settle();
    uint64_t p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), th1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    if (RUNNING_ON_VALGRIND) {
        char tag[64];
        snprintf(tag, sizeof tag, "%s/%zu/%ld", kind_name[k], n, iters);
        CALLGRIND_DUMP_STATS_AT(tag);
    }
    for (long i = 0; i < iters; i++)
        d[i] = (int64_t)tb[i] - (int64_t)ta[i];
    qsort(ta, (size_t)iters, sizeof *ta, cmp_u64);
    qsort(tb, (size_t)iters, sizeof *tb, cmp_u64);
    *res = (struct result){
        .kind = k, .n = n, .iters = iters, .warmup = warmup,
        .bare_med = median_u64_sorted(ta, (size_t)iters), .bare_p90 = quant_u64(ta, (size_t)iters, 0.9),
        .shim_med = median_u64_sorted(tb, (size_t)iters), .shim_p90 = quant_u64(tb, (size_t)iters, 0.9),
        .paired_med = median_i64(d, (size_t)iters),
        .others_cpu = ((double)(p1 - p0) - (double)(th1 - th0)) / (double)iters,
    };
    free(ta);
    free(tb);
    free(d);
}

/* ---- options ---- */

static void usage(void)
{
    fputs("usage: bench/overhead [--quick] [--sizes 1,4,...] [--kinds d2d,h2d_pageable,array] [--iters N]\n"
          "                      [--warmup N] [--budget S] [--h2d-order during|stream|any] [--mode LABEL]\n"
          "                      [--cpu N] [--csv FILE] [--libcuda PATH] [SHIM]\n",
          stderr);
    exit(2);
}

static void parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 0;
    o->warmup = -1;
    o->budget = -1;
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
        else if (!strcmp(a, "--sizes"))
            sizes = ARG();
        else if (!strcmp(a, "--kinds"))
            kinds = ARG();
        else if (!strcmp(a, "--iters"))
            o->iters = atol(ARG());
        else if (!strcmp(a, "--warmup"))
            o->warmup = atol(ARG());
        else if (!strcmp(a, "--budget"))
            o->budget = atof(ARG());
        else if (!strcmp(a, "--mode"))
            o->mode = ARG();
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
        o->budget = o->quick ? 0.05 : 0.8;
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
                die("unknown kind '%s' (d2d, h2d_pageable, array)", t);
            o->kinds[k] = true;
        }
        free(copy);
    } else {
        for (int k = 0; k < K_COUNT; k++)
            o->kinds[k] = true;
    }
    if (!o->shim)
        o->shim = getenv("CBT_SHIM");
    if (!o->shim || !*o->shim)
        o->shim = "src/.libs/libcubatchtrace.so";
}

int main(int argc, char **argv)
{
    struct options o;
    parse(argc, argv, &o);

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

    /* The bare driver first, then the shim, which finds the same libcuda. */
    const char *libcuda = o.libcuda ? o.libcuda : "libcuda.so.1";
    if (o.libcuda)
        setenv("CUBATCHTRACE_LIBCUDA", o.libcuda, 1);
    void *hc = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
    if (!hc)
        die("cannot load the CUDA driver %s: %s", libcuda, dlerror());
    batch_fn bare = (batch_fn)need(hc, "cuMemcpy3DBatchAsync_v2");
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
    Dl_info di;
    char driver_path[512] = "?";
    if (dladdr((void *)bare, &di) && di.dli_fname)
        snprintf(driver_path, sizeof driver_path, "%s", di.dli_fname);

    batch_fn shim = bare;
    if (o.null) {
        o.shim = "(none: --null, the bare driver on both sides)";
    } else {
        void *hs = dlopen(o.shim, RTLD_NOW | RTLD_LOCAL);
        if (!hs)
            die("cannot load the shim %s: %s (build it, or pass its path / set CBT_SHIM)", o.shim, dlerror());
        shim = (batch_fn)dlsym(hs, "cuMemcpy3DBatchAsync_v2");
        if (!shim)
            die("%s has no cuMemcpy3DBatchAsync_v2", o.shim);
        if (shim == bare)
            die("%s resolved to the driver itself", o.shim);
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
    setup(&b, max_ops);

    /* The shim's first batch loads the LTTng provider, which registers with
     * the session daemon (and waits for it): keep that out of every figure. */
    make_ops(&b, K_D2D, 1, o.h2d_order);
    unsigned long long before = drv.fake_batch_calls ? drv.fake_batch_calls() : 0;
    uint64_t first = timed_call(shim, &b, 1, "shim (first call)");
    int moved = o.cpu >= 0 ? unpin_others(o.cpu) : 0;
    if (drv.fake_batch_calls && drv.fake_batch_calls() != before + 1)
        die("the shim's call did not reach the test double loaded here (%llu calls seen)",
            drv.fake_batch_calls() - before);

    char cpu[256], mode_buf[512], date[64];
    bool session = false;
    cpu_model(cpu, sizeof cpu);
    if (o.mode) {
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

    printf("# cubatchtrace overhead benchmark: host time of cuMemcpy3DBatchAsync_v2, bare driver vs the shim's door\n");
    printf("# date:      %s\n", date);
    printf("# host:      %s, %s %s, %ld CPUs\n", un.nodename, un.sysname, un.release, ncpu);
    printf("# cpu:       %s%s\n", cpu, o.cpu >= 0 ? " (pinned)" : "");
    printf("# driver:    %s, cuDriverGetVersion %d (%d.%d), %s\n",
           drv.fake_batch_calls ? "TEST DOUBLE (tests/fakecuda: exports fakecuda_batch_calls)" : "real NVIDIA driver",
           version, version / 1000, (version % 1000) / 10, driver_path);
    printf("# device:    %d device(s), device 0: %s\n", dev_count, dev_name);
    printf("# shim:      %s\n", o.shim);
    printf("# mode:      %s\n", mode_buf);
    printf("# env:       CUBATCHTRACE_MODE=%s CUBATCHTRACE_REPORT=%s LTTNG_UST_ALLOW_BLOCKING=%s\n",
           getenv("CUBATCHTRACE_MODE") ? getenv("CUBATCHTRACE_MODE") : "(unset)",
           getenv("CUBATCHTRACE_REPORT") ? getenv("CUBATCHTRACE_REPORT") : "(unset)",
           getenv("LTTNG_UST_ALLOW_BLOCKING") ? getenv("LTTNG_UST_ALLOW_BLOCKING") : "(unset)");
    printf("# ops:       4 KiB each, distinct offsets; d2d device->device; h2d_pageable malloc->device, "
           "srcAccessOrder %s; array device->float CUDA array row (1024 floats)\n",
           o.h2d_order == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ? "STREAM"
           : o.h2d_order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ? "DURING_API_CALL" : "ANY");
    printf("# method:    per iteration one bare and one shim call, order alternating; cuStreamSynchronize "
           "before each call; CLOCK_MONOTONIC around the call only\n");
    printf("# warm-up:   the shim's first call took %.1f us (loads the LTTng provider, registers with a session daemon); then per (kind, size) "
           "the first iterations (column warm) are run and discarded\n", first / 1e3);
    if (o.cpu >= 0)
        printf("# threads:   the calling thread pinned to CPU %d; after the shim's first call %d other thread(s) "
               "of the process moved to the other CPUs\n", o.cpu, moved);
    printf("# columns:   medians and p90 in us; added = shim median - bare median; paired = median over "
           "iterations of (shim - bare); goal = allowed added %% in this mode; others_us = CPU time of the "
           "process's other threads (the shim's recorder, LTTng-UST's, the driver's) per iteration of one bare and "
           "one shim call\n");
    if (drv.fake_batch_calls)
        printf("# NOTE:      test double: its 'driver' costs far less than the H200's ~3.7 us/op, so the "
               "percentages are NOT comparable with the goals\n");
    if (RUNNING_ON_VALGRIND)
        printf("# NOTE:      running under valgrind: times are meaningless, see the instruction counts\n");
    printf("\n%-13s %5s %6s %4s %10s %10s %10s %10s %9s %8s %8s %9s %6s %-8s %9s\n", "kind", "ops", "iters",
           "warm", "bare_med", "bare_p90", "shim_med", "shim_p90", "added_us", "added%", "paired%", "ns/op", "goal%",
           "verdict", "others_us");
    fflush(stdout);

    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv)
            die("cannot write %s: %s", o.csv, strerror(errno));
        fprintf(csv, "kind,ops,iters,warmup,bare_med_ns,bare_p90_ns,shim_med_ns,shim_p90_ns,added_ns,added_pct,"
                     "paired_med_ns,paired_pct,added_ns_per_op,goal_pct,verdict,mode,session,driver,driver_version,"
                     "cpu,date,others_cpu_ns\n");
    }

    int over = 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (!o.kinds[k])
            continue;
        for (int s = 0; s < o.nsizes; s++) {
            struct result r;
            size_t n = o.sizes[s];
            run_one(bare, shim, &b, (enum kind)k, n, &o, &r);
            double added = r.shim_med - r.bare_med;
            double pct = 100 * added / r.bare_med, ppct = 100 * r.paired_med / r.bare_med;
            double goal = goal_pct(session, n);
            const char *verdict = drv.fake_batch_calls ? "(double)" : pct <= goal ? "ok" : "OVER";
            if (!drv.fake_batch_calls && pct > goal)
                over++;
            printf("%-13s %5zu %6ld %4ld %10.2f %10.2f %10.2f %10.2f %9.3f %8.2f %8.2f %9.1f %6.1f %-8s %9.2f\n",
                   kind_name[k], n, r.iters, r.warmup, r.bare_med / 1e3, r.bare_p90 / 1e3, r.shim_med / 1e3,
                   r.shim_p90 / 1e3, added / 1e3, pct, ppct, added / (double)n, goal, verdict, r.others_cpu / 1e3);
            fflush(stdout);
            if (csv)
                fprintf(csv, "%s,%zu,%ld,%ld,%.0f,%.0f,%.0f,%.0f,%.1f,%.4f,%.1f,%.4f,%.2f,%.1f,%s,\"%s\",%d,%s,%d,\"%s\","
                             "\"%s\",%.0f\n",
                        kind_name[k], n, r.iters, r.warmup, r.bare_med, r.bare_p90, r.shim_med, r.shim_p90, added,
                        pct, r.paired_med, ppct, added / (double)n, goal, verdict, mode_buf, session,
                        drv.fake_batch_calls ? "fakecuda" : "nvidia", version, cpu, date, r.others_cpu);
        }
    }
    if (csv)
        fclose(csv);
    teardown(&b);
    drv.primary_ctx_release(dev);
    if (!drv.fake_batch_calls)
        printf("\n# %d row(s) over their goal\n", over);
    return 0;
}
