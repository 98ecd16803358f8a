/* SPDX-License-Identifier: MIT */
/*
 * Batches for the GPU-time tests (CUBATCHTRACE_GPU_TIME=1), each through the
 * linked cuMemcpy3DBatchAsync_v2 on a created stream, one device-to-device
 * op of 4096 bytes and one pinned-to-device op of 1024 bytes per batch
 * unless said otherwise.
 *
 *   client_gputime ok N        N batches, then (after the data line below) a normal exit
 *   client_gputime sync N      N batches, a stream synchronize after each
 *   client_gputime paced N [MS] N batches, a stream synchronize and MS ms (default 50) asleep after each
 *   (ok, sync and paced give the copies' sources known bytes first, then
 *   print "data H" (a hash of what the batches wrote), and "exchanges K" and
 *   "pushes P" over the test double: its capture-mode exchanges and
 *   cuCtxPushCurrent calls so far, on every thread)
 *   client_gputime fail N      N batches whose op is malformed (the call fails)
 *   client_gputime kill N      N batches, then SIGKILL to itself
 *   client_gputime ctx N       N batches in a context of its own, then cuCtxDestroy, then N more in the primary
 *   client_gputime recreate N [MS]  twice: a context of its own, N batches and a synchronize (and MS ms
 *                              asleep) after each in it, cuCtxDestroy (prints "same handle" when the
 *                              second context got the first one's handle)
 *   client_gputime release N   N batches, a stream synchronize, then cuDevicePrimaryCtxRelease
 *   client_gputime threads T K T threads, K batches each
 *   client_gputime fork N      N batches, then a forked child makes N and exits, then the parent N more
 *   client_gputime gone N M    N batches, a synchronize after each; a context of its own made and
 *                              destroyed; then M more: prints "exchanges K" after the N, after the
 *                              context went and after the M
 * Prints "pid P" before its first batch, for each process that makes batches.
 */
#include "common.h"
#include "opbuild.h"
#include "fakecuda/fakecuda.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static CUdeviceptr dev;
static void *pinned;

static CUresult one(CUstream s, int bad)
{
    CUDA_MEMCPY3D_BATCH_OP ops[2] = {
        cc_op(ob_ptr(dev, 0, 0), ob_ptr(dev + 8192, 0, 0), 4096, 1, 1),
        cc_op(ob_ptr((CUdeviceptr)(uintptr_t)pinned, 0, 0), ob_ptr(dev + 16384, 0, 0), 1024, 1, 1),
    };
    if (bad)
        ops[0].src.op.ptr.ptr = 0;
    return cuMemcpy3DBatchAsync(2, ops, 0, s);
}

static void batches(CUstream s, size_t n, int sync, int pause_ms)
{
    for (size_t i = 0; i < n; i++) {
        cc_check(one(s, 0), "cuMemcpy3DBatchAsync_v2");
        if (sync)
            cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
        if (pause_ms) {
            struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
    }
}

/* The copies' sources given known bytes (before the batches). */
static void fill_sources(void)
{
    cc_check(cuMemsetD8(dev, 0x5a, 8192), "cuMemsetD8");
    for (size_t i = 0; i < 1024; i++)
        ((unsigned char *)pinned)[i] = (unsigned char)(i * 7 + 1);
}

/* What the batches wrote, once done: "data H", H a hash of both destinations. */
static void say_data(CUstream s)
{
    unsigned char out[4096 + 1024];
    cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
    cc_check(cuMemcpyDtoH(out, dev + 8192, 4096), "cuMemcpyDtoH");
    cc_check(cuMemcpyDtoH(out + 4096, dev + 16384, 1024), "cuMemcpyDtoH");
    unsigned long long h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < sizeof(out); i++)
        h = (h ^ out[i]) * 1099511628211ull;
    printf("data %016llx\n", h);
}

/* Over the test double: how many times the process switched a thread's
 * capture interaction mode so far (nothing on a real driver). */
static void say_exchanges(void)
{
    fakecuda_mode_exchanges_fn f = (fakecuda_mode_exchanges_fn)dlsym(RTLD_DEFAULT, "fakecuda_mode_exchanges");
    fakecuda_mode_exchanges_fn ft = (fakecuda_mode_exchanges_fn)dlsym(RTLD_DEFAULT, "fakecuda_thread_mode_exchanges");
    fakecuda_ctx_pushes_fn p = (fakecuda_ctx_pushes_fn)dlsym(RTLD_DEFAULT, "fakecuda_ctx_pushes");
    if (f)
        printf("exchanges %llu\n", f());
    if (ft)
        printf("thread_exchanges %llu\n", ft()); /* this thread's alone */
    if (p)
        printf("pushes %llu\n", p());
    fflush(stdout);
}

static size_t per_thread;

static void worker(CUstream s) { batches(s, per_thread, 0, 0); }

int main(int argc, char **argv)
{
    if (argc < 3)
        cc_fail("usage: client_gputime ok|sync|paced|fail|kill|ctx|release|fork N | paced N MS | threads T K");
    size_t n = strtoul(argv[2], NULL, 10);
    cc_load_direct();
    CUstream s = cc_setup();
    cc_check(cc.MemAlloc(&dev, 32768), "cuMemAlloc");
    cc_check(cc.MemAllocHost(&pinned, 4096), "cuMemAllocHost");
    cc_say_pid();
    const char *m = argv[1];
    if (!strcmp(m, "ok") || !strcmp(m, "sync") || !strcmp(m, "paced")) {
        int ms = !strcmp(m, "paced") ? (argc > 3 ? atoi(argv[3]) : 50) : 0;
        fill_sources();
        batches(s, n, strcmp(m, "ok") != 0, ms);
        say_data(s);
        say_exchanges();
        return 0;
    }
    if (!strcmp(m, "gone") && argc > 3) {
        CUcontext own;
        CUdevice d;
        batches(s, n, 1, 0);
        say_exchanges();
        cc_check(cc.DeviceGet(&d, 0), "cuDeviceGet");
        cc_check(cuCtxCreate(&own, NULL, 0, d), "cuCtxCreate");
        cc_check(cuCtxDestroy(own), "cuCtxDestroy");
        cc_check(cc.CtxSetCurrent(cc_ctx), "cuCtxSetCurrent");
        say_exchanges();
        batches(s, strtoul(argv[3], NULL, 10), 1, 0);
        say_exchanges();
        return 0;
    }
    if (!strcmp(m, "release")) {
        CUdevice d;
        batches(s, n, 0, 0);
        cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
        cc_check(cc.DeviceGet(&d, 0), "cuDeviceGet");
        cc_check(cuDevicePrimaryCtxRelease(d), "cuDevicePrimaryCtxRelease");
        return 0;
    }
    if (!strcmp(m, "fail")) {
        for (size_t i = 0; i < n; i++)
            if (one(s, 1) == CUDA_SUCCESS)
                cc_fail("a malformed batch succeeded");
        return 0;
    }
    if (!strcmp(m, "kill")) {
        batches(s, n, 0, 0);
        kill(getpid(), SIGKILL);
        pause();
    }
    if (!strcmp(m, "ctx")) {
        CUcontext own;
        CUdevice d;
        CUstream s2;
        cc_check(cc.DeviceGet(&d, 0), "cuDeviceGet");
        cc_check(cuCtxCreate(&own, NULL, 0, d), "cuCtxCreate");
        cc_check(cc.StreamCreate(&s2, 0), "cuStreamCreate");
        batches(s2, n, 0, 0);
        cc_check(cuCtxDestroy(own), "cuCtxDestroy");
        cc_check(cc.CtxSetCurrent(cc_ctx), "cuCtxSetCurrent");
        batches(s, n, 0, 0);
        return 0;
    }
    if (!strcmp(m, "recreate")) {
        CUcontext c[2];
        CUdevice d;
        cc_check(cc.DeviceGet(&d, 0), "cuDeviceGet");
        for (int k = 0; k < 2; k++) {
            CUstream s2;
            cc_check(cuCtxCreate(&c[k], NULL, 0, d), "cuCtxCreate");
            cc_check(cc.StreamCreate(&s2, 0), "cuStreamCreate");
            batches(s2, n, 1, argc > 3 ? atoi(argv[3]) : 0);
            cc_check(cuCtxDestroy(c[k]), "cuCtxDestroy");
        }
        if (c[0] == c[1])
            printf("same handle\n");
        return 0;
    }
    if (!strcmp(m, "fork")) {
        batches(s, n, 0, 0);
        pid_t child = fork();
        if (child < 0)
            cc_fail("fork");
        if (child == 0) {
            cc_say_pid();
            batches(s, n, 0, 0);
            _exit(0);
        }
        int st;
        waitpid(child, &st, 0);
        batches(s, n, 0, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
    }
    if (!strcmp(m, "threads") && argc > 3) {
        size_t t = n;
        per_thread = strtoul(argv[3], NULL, 10);
        cc_threads(t, worker);
        return 0;
    }
    cc_fail("unknown mode %s", m);
}
