/* SPDX-License-Identifier: MIT */
/*
 * 8 threads at once, each making K batches of M ops through the linked
 * cuMemcpy3DBatchAsync_v2 (door symbol), each on its own stream.
 *   client_threads K M
 */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 8

static size_t k_batches, m_ops;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    CUstream s;
    cc_check(cc.CtxSetCurrent(cc_ctx), "cuCtxSetCurrent");
    cc_check(cc.StreamCreate(&s, 0), "cuStreamCreate");
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    pthread_barrier_wait(&start);
    int bad = 0;
    for (size_t k = 0; k < k_batches; k++)
        bad += cc_simple_batch(door, s, m_ops, 64 + id, id * 100 + (unsigned)k);
    return (void *)(uintptr_t)bad;
}

int main(int argc, char **argv)
{
    k_batches = argc > 1 ? strtoul(argv[1], NULL, 10) : 10;
    m_ops = argc > 2 ? strtoul(argv[2], NULL, 10) : 4;
    if (m_ops == 0 || m_ops > CC_MAX_OPS)
        cc_fail("M must be 1..%d", CC_MAX_OPS);
    cc_load_direct();
    (void)cc_setup();
    pthread_barrier_init(&start, NULL, NTHREADS);
    pthread_t t[NTHREADS];
    for (unsigned i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
            cc_fail("pthread_create");
    int bad = 0;
    for (unsigned i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (int)(uintptr_t)r;
    }
    cc_summary(NULL);
    return bad ? 1 : 0;
}
