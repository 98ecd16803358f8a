/* SPDX-License-Identifier: MIT */
/*
 * What a program asking for the CUDA 13.2 and 13.5 entry points
 * (cuMemcpy3DWithAttributesAsync, cuMemcpyWithAttributesAsync, their _ptsz,
 * cuFabricCpyBatchAsync) is answered, through every way it can ask:
 * cuGetProcAddress_v2 and cuGetProcAddress at 13000, 13020 and 13050 with
 * flags 0 and 2, dlsym on the driver's handle and dlsym(RTLD_DEFAULT).  Run
 * with and without the shim: on a driver that lacks them the lines must be
 * the same (the shim changes no answer); on one that has them, the same too
 * (a function found is printed as "fn", not by address, which the shim's
 * wrapper changes by design).
 *
 *   ASK <how> <symbol> [<version> <flags>] rc=<CUresult> status=<n> fn=NULL|fn [dlerror=yes|no]
 *
 * libcuda.so.1 (or CBT_GPU_LIBCUDA) is opened RTLD_GLOBAL, as a program
 * linked with -lcuda has it.  Exit 0 when every request was made, 1 when the
 * driver could not be opened.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult (*gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa4_fn)(const char *, void **, int, cuuint64_t);

static const char *const names[] = {
    "cuMemcpy3DWithAttributesAsync", "cuMemcpyWithAttributesAsync", "cuFabricCpyBatchAsync",
};
static const char *const exports[] = {
    "cuMemcpy3DWithAttributesAsync", "cuMemcpy3DWithAttributesAsync_ptsz", "cuMemcpyWithAttributesAsync",
    "cuMemcpyWithAttributesAsync_ptsz", "cuFabricCpyBatchAsync", "cuFabricCpyBatchAsync_ptsz",
};
static const int versions[] = {13000, 13020, 13050};
static const unsigned flag_values[] = {0, 2};

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *path = getenv("CBT_GPU_LIBCUDA");
    void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        printf("ASK dlopen FAIL %s\n", dlerror());
        return 1;
    }
    gpa5_fn gpa5 = (gpa5_fn)dlsym(h, "cuGetProcAddress_v2");
    gpa4_fn gpa4 = (gpa4_fn)dlsym(h, "cuGetProcAddress");
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*get_version)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
    int version = 0;
    if (!gpa5 || !gpa4 || !init || init(0) != CUDA_SUCCESS || !get_version || get_version(&version)) {
        printf("ASK setup FAIL\n");
        return 1;
    }
    printf("DRIVER_VERSION %d\n", version);
    for (size_t n = 0; n < sizeof names / sizeof *names; n++)
        for (size_t v = 0; v < sizeof versions / sizeof *versions; v++)
            for (size_t f = 0; f < sizeof flag_values / sizeof *flag_values; f++) {
                void *fn = (void *)0x1;
                CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
                CUresult r = gpa5(names[n], &fn, versions[v], flag_values[f], &st);
                printf("ASK gpa5 %s %d %u rc=%d status=%d fn=%s\n", names[n], versions[v], flag_values[f], (int)r,
                       (int)st, fn ? "fn" : "NULL");
                fn = (void *)0x1;
                r = gpa4(names[n], &fn, versions[v], flag_values[f]);
                printf("ASK gpa4 %s %d %u rc=%d fn=%s\n", names[n], versions[v], flag_values[f], (int)r,
                       fn ? "fn" : "NULL");
            }
    for (size_t e = 0; e < sizeof exports / sizeof *exports; e++) {
        (void)dlerror();
        void *p = dlsym(h, exports[e]);
        const char *err = dlerror();
        printf("ASK dlsym_handle %s fn=%s dlerror=%s\n", exports[e], p ? "fn" : "NULL", err ? "yes" : "no");
        p = dlsym(RTLD_DEFAULT, exports[e]);
        err = dlerror();
        printf("ASK dlsym_default %s fn=%s dlerror=%s\n", exports[e], p ? "fn" : "NULL", err ? "yes" : "no");
    }
    return 0;
}
