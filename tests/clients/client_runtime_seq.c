/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime's way to the batch (libcudart, static or shared), call for
 * call: the program does not link libcuda.
 *
 *   dlopen("libcuda.so.1"); exactly one dlsym(handle, "cuGetProcAddress_v2");
 *   through it, "cuGetProcAddress" at 11030 and at 12000, and from then on
 *   only the pointer the 12000 request returned; then the batch at
 *   (13000, 0), (13000, 2), (12080, 0), (12080, 2), each called once.
 *
 * With argument "gpa4" it instead resolves the batch at (13000, 0) and
 * (12080, 0) through the 4-argument cuGetProcAddress the 11030 request
 * returned (what code built against CUDA 11.3 headers calls).
 */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa4_fn)(const char *, void **, int, cuuint64_t);

static void *resolve(cc_gpa5_fn gpa, gpa4_fn gpa4, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = gpa ? gpa("cuMemcpy3DBatchAsync", &p, version, flags, &st)
                     : gpa4("cuMemcpy3DBatchAsync", &p, version, flags);
    if (r != CUDA_SUCCESS || !p || (gpa && st != CU_GET_PROC_ADDRESS_SUCCESS))
        cc_fail("cuGetProcAddress(cuMemcpy3DBatchAsync, %d, %llu): CUresult %d", version, (unsigned long long)flags,
                (int)r);
    return p;
}

int main(int argc, char **argv)
{
    int use_gpa4 = argc > 1 && !strcmp(argv[1], "gpa4");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        cc_fail("dlopen(libcuda.so.1): %s", dlerror());
    cc_gpa5_fn first = (cc_gpa5_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!first)
        cc_fail("dlsym(cuGetProcAddress_v2): %s", dlerror());
    void *p11030 = NULL, *p12000 = NULL;
    CUdriverProcAddressQueryResult st;
    cc_check(first("cuGetProcAddress", &p11030, 11030, 0, &st), "cuGetProcAddress_v2(cuGetProcAddress, 11030)");
    cc_check(first("cuGetProcAddress", &p12000, 12000, 0, &st), "cuGetProcAddress_v2(cuGetProcAddress, 12000)");
    if (!p11030 || !p12000)
        cc_fail("cuGetProcAddress handed out NULL");
    cc_gpa5_fn gpa = (cc_gpa5_fn)p12000;
    gpa4_fn gpa4 = (gpa4_fn)p11030;

    cc_load_gpa(gpa);
    CUstream s = cc_setup();
    int bad = 0;
    if (!use_gpa4) {
        struct cc_door v2 = {.v2 = (cc_batch_v2_fn)resolve(gpa, NULL, 13000, 0)};
        struct cc_door v2_ptsz = {.v2 = (cc_batch_v2_fn)resolve(gpa, NULL, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)};
        struct cc_door v1 = {.v1 = (cc_batch_v1_fn)resolve(gpa, NULL, 12080, 0)};
        struct cc_door v1_ptsz = {.v1 = (cc_batch_v1_fn)resolve(gpa, NULL, 12080, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)};
        bad += cc_simple_batch(v2, s, 1, 256, 1);
        bad += cc_simple_batch(v2_ptsz, s, 2, 256, 2);
        bad += cc_simple_batch(v1, s, 3, 256, 3);
        bad += cc_simple_batch(v1_ptsz, s, 4, 256, 4);
    } else {
        struct cc_door v2 = {.v2 = (cc_batch_v2_fn)resolve(NULL, gpa4, 13000, 0)};
        struct cc_door v1 = {.v1 = (cc_batch_v1_fn)resolve(NULL, gpa4, 12080, 0)};
        bad += cc_simple_batch(v2, s, 1, 256, 1);
        bad += cc_simple_batch(v1, s, 3, 256, 3);
    }
    cc_summary(NULL);
    return bad ? 1 : 0;
}
