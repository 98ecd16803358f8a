/* SPDX-License-Identifier: MIT */
/*
 * GPU test client: how much of a batch the driver reads before it answers.
 *
 *   reads PROBE [SECONDS]   run PROBE in a forked child (SECONDS: its time
 *                           limit, default 30) and print how the child ended
 *   reads list              the probe names, one a line
 *
 * The parent makes no CUDA call: the child initialises CUDA itself, makes
 * one warm-up batch (pageable host memory to device memory, so that what
 * the driver and the shim map on first use is mapped before any hole is
 * made), then the probe batch through the 12.8 ABI (cuMemcpy3DBatchAsync
 * with failIdx, which the caller presets to 12345), then synchronizes its
 * stream.  Op lists are placed so that they end exactly where a PROT_NONE
 * page begins (two pages mapped, the second mprotected): a driver that reads
 * one op more than it answers on dies with SIGSEGV.
 *
 * Output (the child prints only CHECK lines, when its setup fails):
 *   PID <parent pid>
 *   CHILDPID <pid>
 *   OUTCOME name=<probe> kind=result rc=<CUresult> rcname=<name> failidx=<n> sync=<CUresult> hole=<...>
 *   OUTCOME name=<probe> kind=signal sig=<n>
 *   OUTCOME name=<probe> kind=timeout after=<seconds>
 *   OUTCOME name=<probe> kind=exit code=<n>     (setup failed: see the CHECK lines)
 *   RESULT ok|FAIL                              (FAIL: no outcome could be had)
 * hole: "-" where the probe has none; for the op-list probes "protected" (the
 * PROT_NONE page is still there), for the pageable-source probe "unmapped"
 * or "mapped" (something was mapped into the hole during the call: the
 * probe then did not test what it meant to).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "cbt_gpu.h"

/* cuda.h 13 maps the name to the CUDA 13 function; the 12.8 ABI (with failIdx) is exported under it. */
#undef cuMemcpy3DBatchAsync
extern CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                     unsigned long long flags, CUstream hStream);

#define DEV_BYTES 8192
#define FAIL_IDX_PRESET ((size_t)12345)

enum list_kind {
    L_OPS,      /* `nread` ops ending where the PROT_NONE page begins */
    L_HOLE,     /* the PROT_NONE page itself */
    L_NULL,     /* NULL */
    L_STRADDLE, /* one op whose pageable source runs into an unmapped page */
};
enum op_kind { O_VALID, O_ROWLENGTH, O_PASTALLOC };
enum stream_kind { S_OWN, S_NULL, S_LEGACY, S_DESTROYED };

struct probe {
    const char *name;
    size_t num_ops;
    enum list_kind list;
    int nread;               /* L_OPS: readable ops */
    enum op_kind ops[2];     /* L_OPS: what each readable op is */
    unsigned long long flags;
    enum stream_kind stream;
};

static const struct probe probes[] = {
    /* (a) op 1 malformed (rowLength < width), the list ends after it */
    {"partial-3", 3, L_OPS, 2, {O_VALID, O_ROWLENGTH}, 0, S_OWN},
    {"partial-100000", 100000, L_OPS, 2, {O_VALID, O_ROWLENGTH}, 0, S_OWN},
    {"partial-16M", (size_t)1 << 24, L_OPS, 2, {O_VALID, O_ROWLENGTH}, 0, S_OWN},
    /* (b) op 1 well-formed, its footprint past its allocation (found only after the form pass) */
    {"pastalloc", 3, L_OPS, 2, {O_VALID, O_PASTALLOC}, 0, S_OWN},
    /* (c) every readable op valid, then the hole */
    {"allvalid", 3, L_OPS, 2, {O_VALID, O_VALID}, 0, S_OWN},
    /* (d) an unreadable list with an argument the driver rejects first */
    {"unread-numops0", 0, L_HOLE, 0, {0, 0}, 0, S_OWN},
    {"unread-nullstream", 1, L_HOLE, 0, {0, 0}, 0, S_NULL},
    {"unread-legacy", 1, L_HOLE, 0, {0, 0}, 0, S_LEGACY},
    {"unread-flags", 1, L_HOLE, 0, {0, 0}, 1, S_OWN},
    {"unread-destroyed", 1, L_HOLE, 0, {0, 0}, 0, S_DESTROYED},
    /* (e) absurd numOps */
    {"absurd-2p40-null", (size_t)1 << 40, L_NULL, 0, {0, 0}, 0, S_OWN},
    {"absurd-sizemax-null", SIZE_MAX, L_NULL, 0, {0, 0}, 0, S_OWN},
    {"absurd-2p40-bad0", (size_t)1 << 40, L_OPS, 1, {O_ROWLENGTH, 0}, 0, S_OWN},
    /* (f) a pageable source that starts mapped and runs into an unmapped page */
    {"straddle", 1, L_STRADDLE, 0, {0, 0}, 0, S_OWN},
};
#define NPROBES (sizeof probes / sizeof probes[0])

static CUdeviceptr dsrc, ddst;

static CUDA_MEMCPY3D_BATCH_OP make_op(enum op_kind k)
{
    /* 256 x 4 x 2 bytes, device to device, packed: a footprint of 2 KiB */
    CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(dsrc, 0, 0), ob_ptr(ddst, 0, 0), 256, 4, 2,
                                      CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    if (k == O_ROWLENGTH)
        op.src.op.ptr.rowLength = 100;
    else if (k == O_PASTALLOC)
        op.src.op.ptr.ptr = dsrc + DEV_BYTES - 1024;
    return op;
}

/* The child: set up, warm up, probe; reports "rc failidx sync hole" on fd `out`. */
static void child(const struct probe *p, int out)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    CUstream s;
    drv_setup(&s);
    if (cuMemAlloc(&dsrc, DEV_BYTES) != CUDA_SUCCESS || cuMemAlloc(&ddst, DEV_BYTES) != CUDA_SUCCESS) {
        check("setup-alloc", 0, "cuMemAlloc failed");
        _exit(4);
    }
    long pg = sysconf(_SC_PAGESIZE);

    /* warm-up: pageable host memory to device memory, as the straddle probe does */
    unsigned char *warm = malloc(4096);
    if (!warm) {
        check("setup-warm", 0, "malloc failed");
        _exit(4);
    }
    memset(warm, 0x5a, 4096);
    CUDA_MEMCPY3D_BATCH_OP wop = ob_op(host_operand(warm, 0, 0), ob_ptr(ddst, 0, 0), 4096, 1, 1,
                                       CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    size_t widx = FAIL_IDX_PRESET;
    CUresult r = cuMemcpy3DBatchAsync(1, &wop, &widx, 0, s);
    CUresult rs = cuStreamSynchronize(s);
    if (r != CUDA_SUCCESS || rs != CUDA_SUCCESS) {
        check("setup-warmup-batch", 0, "warm-up batch %s, sync %s", drv_err_name(r), drv_err_name(rs));
        _exit(4);
    }

    CUstream stream = s;
    if (p->stream == S_NULL)
        stream = NULL;
    else if (p->stream == S_LEGACY)
        stream = CU_STREAM_LEGACY;
    else if (p->stream == S_DESTROYED) {
        CUstream gone;
        if (cuStreamCreate(&gone, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS || cuStreamDestroy(gone) != CUDA_SUCCESS) {
            check("setup-destroyed-stream", 0, "cuStreamCreate/cuStreamDestroy failed");
            _exit(4);
        }
        stream = gone;
    }

    CUDA_MEMCPY3D_BATCH_OP *list = NULL;
    unsigned char *hole = NULL;
    if (p->list != L_NULL) {
        unsigned char *pages = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) {
            check("setup-mmap", 0, "mmap: %s", strerror(errno));
            _exit(4);
        }
        hole = pages + pg;
        if (p->list == L_STRADDLE) {
            /* the source's last 256 bytes lie past the end of the mapped page */
            memset(pages, 0xa5, pg);
            if (munmap(hole, pg) != 0) {
                check("setup-munmap", 0, "munmap: %s", strerror(errno));
                _exit(4);
            }
            static CUDA_MEMCPY3D_BATCH_OP sop;
            sop = ob_op(host_operand(hole - 256, 0, 0), ob_ptr(ddst, 0, 0), 512, 1, 1,
                        CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
            list = &sop;
        } else {
            if (mprotect(hole, pg, PROT_NONE) != 0) {
                check("setup-mprotect", 0, "mprotect: %s", strerror(errno));
                _exit(4);
            }
            list = (CUDA_MEMCPY3D_BATCH_OP *)hole - p->nread;
            for (int i = 0; i < p->nread; i++)
                list[i] = make_op(p->ops[i]);
        }
    }

    size_t idx = FAIL_IDX_PRESET;
    r = cuMemcpy3DBatchAsync(p->num_ops, list, &idx, p->flags, stream);
    rs = cuStreamSynchronize(s);

    const char *h = "-";
    if (p->list == L_STRADDLE)
        h = msync(hole, pg, MS_ASYNC) == 0 ? "mapped" : errno == ENOMEM ? "unmapped" : "unknown";
    else if (hole)
        h = "protected";
    char buf[160];
    int n = snprintf(buf, sizeof buf, "%d %zu %d %s %s\n", (int)r, idx, (int)rs, h, drv_err_name(r));
    if (write(out, buf, (size_t)n) != n)
        _exit(6);
    _exit(0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run_probe(const struct probe *p, double limit)
{
    int fds[2];
    if (pipe(fds) != 0) {
        check("pipe", 0, "%s", strerror(errno));
        return finish();
    }
    fflush(stdout);
    pid_t pid = fork(); /* before any CUDA call: the child initialises CUDA itself */
    if (pid < 0) {
        check("fork", 0, "%s", strerror(errno));
        return finish();
    }
    if (pid == 0) {
        close(fds[0]);
        child(p, fds[1]);
        _exit(7);
    }
    close(fds[1]);
    printf("CHILDPID %d\n", (int)pid);
    fflush(stdout);
    int st = 0;
    double t0 = now();
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now() - t0 < limit) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        printf("OUTCOME name=%s kind=timeout after=%g\n", p->name, limit);
        close(fds[0]);
        return finish();
    }
    char buf[160] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    buf[n > 0 ? n : 0] = 0;
    int rc, sync;
    size_t idx;
    char hole[16], name[64];
    if (WIFSIGNALED(st)) {
        printf("OUTCOME name=%s kind=signal sig=%d\n", p->name, WTERMSIG(st));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
               sscanf(buf, "%d %zu %d %15s %63s", &rc, &idx, &sync, hole, name) == 5) {
        printf("OUTCOME name=%s kind=result rc=%d rcname=%s failidx=%zu sync=%d hole=%s\n", p->name, rc, name, idx,
               sync, hole);
    } else {
        printf("OUTCOME name=%s kind=exit code=%d\n", p->name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        g_failed = 1;
    }
    return finish();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "list")) {
        for (size_t i = 0; i < NPROBES; i++)
            printf("%s\n", probes[i].name);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROBE [SECONDS] | list\n", argv[0]);
        return 2;
    }
    double limit = argc > 2 ? atof(argv[2]) : 30;
    if (limit <= 0)
        limit = 30;
    for (size_t i = 0; i < NPROBES; i++)
        if (!strcmp(argv[1], probes[i].name)) {
            printf("PID %d\n", (int)getpid());
            return run_probe(&probes[i], limit);
        }
    fprintf(stderr, "%s: no probe %s (reads list)\n", argv[0], argv[1]);
    return 2;
}
