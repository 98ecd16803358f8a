/* SPDX-License-Identifier: MIT */
/*
 * cuda-python's way to the batch (cuda.bindings.driver), in C: dlopen
 * libcuda.so.1, dlsym "cuGetProcAddress_v2", resolve every function through
 * it, the batch as ("cuMemcpy3DBatchAsync", 13000, flags) with flags
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM when the environment has
 * CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM, else 0; then the mixed batch.
 * Does not link libcuda.
 */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        cc_fail("dlopen(libcuda.so.1): %s", dlerror());
    cc_gpa5_fn gpa = (cc_gpa5_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa)
        cc_fail("dlsym(cuGetProcAddress_v2): %s", dlerror());
    cc_load_gpa(gpa);
    cuuint64_t flags = getenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM")
                           ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    cc_check(gpa("cuMemcpy3DBatchAsync", &p, 13000, flags, &st), "cuGetProcAddress_v2(cuMemcpy3DBatchAsync, 13000)");
    if (!p)
        cc_fail("cuMemcpy3DBatchAsync resolved to NULL");
    CUstream s = cc_setup();
    struct cc_door door = {.v2 = (cc_batch_v2_fn)p};
    int bad = cc_mixed_scenario(door, s);
    cc_summary(NULL);
    return bad ? 1 : 0;
}
