/* SPDX-License-Identifier: MIT */
/*
 * Bare driver, no shim: does cuGetProcAddress_v2 hand out exactly the
 * exported symbols (dlsym on the libcuda handle) for the four batch variants,
 * for cuGetProcAddress itself, and for functions the shim wraps to see every
 * call (a memory function; those that begin a stream capture, which an
 * older driver or the test double may lack: then none either way)?  Prints
 * one line per request:
 *
 *   GPA symbol=<s> version=<v> flags=<f> rc=<CUresult> status=<n> got=0x.. want=<symbol|NULL> wantaddr=0x.. match=yes|no
 *
 * and a CHECK line per request.  Run it without LD_PRELOAD: with the shim the
 * answers are the shim's wrappers by design.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static int failed;

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *path = getenv("CBT_GPU_LIBCUDA");
    void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("CHECK dlopen FAIL %s\nRESULT FAIL\n", dlerror());
        return 1;
    }
    Dl_info info;
    gpa5_fn gpa5 = (gpa5_fn)dlsym(h, "cuGetProcAddress_v2");
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    if (!gpa5 || !init || init(0) != CUDA_SUCCESS) {
        printf("CHECK setup FAIL cuGetProcAddress_v2 %p, cuInit %p\nRESULT FAIL\n", (void *)gpa5, (void *)init);
        return 1;
    }
    if (dladdr((void *)gpa5, &info) && info.dli_fname)
        printf("LIBCUDA %s\n", info.dli_fname);
    CUresult (*get_version)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
    CUresult (*get_name)(char *, int, CUdevice) = (CUresult(*)(char *, int, CUdevice))dlsym(h, "cuDeviceGetName");
    CUresult (*get_count)(int *) = (CUresult(*)(int *))dlsym(h, "cuDeviceGetCount");
    int version = 0, count = 0;
    char name[256] = "?";
    if (get_version && get_version(&version) == CUDA_SUCCESS)
        printf("DRIVER_VERSION %d\n", version);
    if (get_count && get_count(&count) == CUDA_SUCCESS)
        printf("DEVICE_COUNT %d\n", count);
    if (get_name && get_name(name, sizeof name, 0) == CUDA_SUCCESS)
        printf("DEVICE_NAME %s\n", name);
    static const struct {
        const char *symbol;
        int version;
        unsigned flags;
        const char *want; /* the exported symbol it must equal; NULL: no function */
        int optional;     /* want may be missing from the driver: then no function either */
    } req[] = {
        {"cuMemcpy3DBatchAsync", 13000, 0, "cuMemcpy3DBatchAsync_v2", 0},
        {"cuMemcpy3DBatchAsync", 13000, 1, "cuMemcpy3DBatchAsync_v2", 0},
        {"cuMemcpy3DBatchAsync", 13000, 2, "cuMemcpy3DBatchAsync_v2_ptsz", 0},
        {"cuMemcpy3DBatchAsync", 12080, 0, "cuMemcpy3DBatchAsync", 0},
        {"cuMemcpy3DBatchAsync", 12090, 0, "cuMemcpy3DBatchAsync", 0},
        {"cuMemcpy3DBatchAsync", 12080, 2, "cuMemcpy3DBatchAsync_ptsz", 0},
        {"cuMemcpy3DBatchAsync", 12000, 0, NULL, 0},
        {"cuMemcpyBatchAsync", 13000, 0, "cuMemcpyBatchAsync_v2", 0},
        {"cuMemcpyBatchAsync", 13000, 2, "cuMemcpyBatchAsync_v2_ptsz", 0},
        {"cuMemcpyBatchAsync", 12080, 0, "cuMemcpyBatchAsync", 0},
        {"cuMemcpyBatchAsync", 12090, 0, "cuMemcpyBatchAsync", 0},
        {"cuMemcpyBatchAsync", 12080, 2, "cuMemcpyBatchAsync_ptsz", 0},
        {"cuMemcpyBatchAsync", 12000, 0, NULL, 0},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress", 0},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2", 0},
        {"cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2", 0},
        {"cuMemFree", 13000, 0, "cuMemFree_v2", 0},
        {"cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture", 1},
        {"cuStreamBeginCapture", 13000, 0, "cuStreamBeginCapture_v2", 0},
        {"cuStreamBeginCapture", 13000, 2, "cuStreamBeginCapture_v2_ptsz", 0},
        {"cuStreamBeginCaptureToGraph", 13000, 0, "cuStreamBeginCaptureToGraph", 1},
        {"cuStreamBeginCaptureToGraph", 13000, 2, "cuStreamBeginCaptureToGraph_ptsz", 1},
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        void *fn = (void *)1;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        CUresult rc = gpa5(req[i].symbol, &fn, req[i].version, req[i].flags, &st);
        void *want = req[i].want ? dlsym(h, req[i].want) : NULL;
        int match = req[i].want && (want || !req[i].optional) ? (rc == CUDA_SUCCESS && want && fn == want)
                                                              : (rc != CUDA_SUCCESS || fn == NULL);
        const char *sym = "?";
        if (fn && dladdr(fn, &info) && info.dli_sname)
            sym = info.dli_sname;
        printf("GPA symbol=%s version=%d flags=%u rc=%d status=%d got=%p gotsym=%s want=%s wantaddr=%p match=%s\n",
               req[i].symbol, req[i].version, req[i].flags, (int)rc, (int)st, fn, fn ? sym : "NULL",
               req[i].want ? req[i].want : "NULL", want, match ? "yes" : "no");
        printf("CHECK gpa-%s-%d-%u %s\n", req[i].symbol, req[i].version, req[i].flags, match ? "ok" : "FAIL");
        failed |= !match;
    }
    printf("RESULT %s\n", failed ? "FAIL" : "ok");
    return failed;
}
