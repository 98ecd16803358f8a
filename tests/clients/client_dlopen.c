/* SPDX-License-Identifier: MIT */
/*
 * The shim loaded with dlopen by a program already linked to libcuda, the
 * way a plugin loader or a Python extension loads it:
 *
 *   client_dlopen LIB local|global
 *
 * Twice: dlopen(LIB, RTLD_NOW | RTLD_LOCAL or RTLD_GLOBAL), the mixed batch
 * (first time) or a simple one (second time) through dlsym(LIB,
 * "cuMemcpy3DBatchAsync_v2"), a batch from another thread that goes on
 * living, then dlclose(LIB) while that thread still runs; the thread ends
 * after the close.  Then a batch through the program's own linked driver.
 * With LIB the driver itself (the reference run) the program does the same
 * and must print the same.
 */
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

static struct cc_door lib_door;
static sem_t batch_made, closed;

/* A thread that makes a batch through LIB, then outlives LIB's dlclose. */
static void *worker(void *arg)
{
    (void)arg;
    CUstream s;
    cc_check(cc.CtxSetCurrent(cc_ctx), "cuCtxSetCurrent");
    cc_check(cc.StreamCreate(&s, 0), "cuStreamCreate");
    int bad = cc_simple_batch(lib_door, s, 4, 128, 7);
    sem_post(&batch_made);
    sem_wait(&closed);
    return (void *)(uintptr_t)bad;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "local") && strcmp(argv[2], "global")))
        cc_fail("usage: client_dlopen LIB local|global");
    int mode = RTLD_NOW | (strcmp(argv[2], "global") ? RTLD_LOCAL : RTLD_GLOBAL);
    cc_load_direct();
    CUstream s = cc_setup();
    int bad = 0;
    for (int round = 1; round <= 2; round++) {
        void *h = dlopen(argv[1], mode);
        if (!h)
            cc_fail("dlopen(%s): %s", argv[1], dlerror());
        lib_door.v2 = (cc_batch_v2_fn)dlsym(h, "cuMemcpy3DBatchAsync_v2");
        if (!lib_door.v2)
            cc_fail("dlsym(cuMemcpy3DBatchAsync_v2): %s", dlerror());
        int b = round == 1 ? cc_mixed_scenario(lib_door, s) : cc_simple_batch(lib_door, s, 2, 256, 3);
        sem_init(&batch_made, 0, 0);
        sem_init(&closed, 0, 0);
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL))
            cc_fail("pthread_create");
        sem_wait(&batch_made);
        if (dlclose(h))
            cc_fail("dlclose: %s", dlerror());
        sem_post(&closed);
        void *r;
        pthread_join(t, &r);
        b += (int)(uintptr_t)r;
        printf("round %d: loaded, batches made, closed, the other thread ended: %s\n", round,
               b ? "wrong bytes" : "every byte arrived");
        bad += b;
    }
    struct cc_door own = {.v2 = cuMemcpy3DBatchAsync};
    int b = cc_simple_batch(own, s, 3, 64, 5);
    printf("after the close, the program's own driver: %s\n", b ? "wrong bytes" : "every byte arrived");
    bad += b;
    cc_summary(NULL);
    return bad ? 1 : 0;
}
