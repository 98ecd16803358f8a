/* SPDX-License-Identifier: MIT */
/*
 * exec: a program whose process images follow one another under one pid.
 *
 *   client_exec STEP...
 *
 * Each STEP, in order:
 *   B/M      B batches of M ops on the main thread (linked cuMemcpy3DBatchAsync_v2)
 *   B/M/T    T threads at once, each making B batches of M ops on a stream of its own
 *   warn     one batch of one op from pageable memory in stream order (the
 *            validator's warning pageable_stream_order, which the driver accepts)
 *   exec     execv this program with the steps that follow: a new process image, same pid
 *   fork     fork; the child goes on with the steps that follow, the parent
 *            waits for it and ends with its status
 * Each image prints "image PID: batches=N ops=M bytes=B" once its steps are
 * done (before an exec or a fork, and at the end), so the test knows what
 * each image made.
 */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t t_batches, t_ops;
static int bad;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void thread_body(CUstream s)
{
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    int b = 0;
    for (size_t k = 0; k < t_batches; k++)
        b += cc_simple_batch(door, s, t_ops, 64, (unsigned)k);
    pthread_mutex_lock(&lock);
    bad += b;
    pthread_mutex_unlock(&lock);
}

static int pageable_batch(struct cc_door door, CUstream s)
{
    struct cc_buf *src = cc_buf_new(CC_PAGEABLE, 64), *dst = cc_buf_new(CC_PINNED, 64);
    cc_host_fill(src, 7);
    struct cc_batch bt = {0};
    cc_add(&bt, src, cc_ptr(src, 0, 0, 0), dst, cc_ptr(dst, 0, 0, 0), 64, 1, 1);
    bt.ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM; /* cc_add orders pageable sources DURING_API_CALL */
    size_t fail;
    int b = cc_call(door, &bt, s, &fail) != CUDA_SUCCESS;
    if (!b) {
        cc_accepted(&bt);
        struct cc_buf *check[] = {dst};
        b = cc_verify(door, s, check, 1);
    }
    cc_buf_free(src);
    cc_buf_free(dst);
    return b;
}

static void image_done(void)
{
    char p[64];
    snprintf(p, sizeof(p), "image %d: ", (int)getpid());
    cc_summary(p);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    cc_load_direct();
    CUstream s = cc_setup();
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "exec") == 0) {
            image_done();
            if (bad)
                return 1;
            argv[i] = argv[0];
            execv(argv[0], argv + i);
            cc_fail("execv");
        }
        if (strcmp(argv[i], "fork") == 0) {
            image_done();
            pid_t child = fork();
            if (child < 0)
                cc_fail("fork");
            if (child == 0) {
                cc_batches = cc_ops = cc_bytes = 0;
                continue;
            }
            int status;
            if (waitpid(child, &status, 0) != child)
                cc_fail("waitpid");
            return bad || !WIFEXITED(status) ? 1 : WEXITSTATUS(status);
        }
        if (strcmp(argv[i], "warn") == 0) {
            bad += pageable_batch(door, s);
            continue;
        }
        unsigned long b = 0, m = 0, t = 0;
        int n = sscanf(argv[i], "%lu/%lu/%lu", &b, &m, &t);
        if (n < 2 || m == 0 || m > CC_MAX_OPS || (n == 3 && t == 0))
            cc_fail("a step is B/M, B/M/T, warn, exec or fork (M 1..%d): %s", CC_MAX_OPS, argv[i]);
        if (n == 2) {
            for (unsigned long k = 0; k < b; k++)
                bad += cc_simple_batch(door, s, m, 64, (unsigned)k);
        } else {
            t_batches = b;
            t_ops = m;
            cc_threads(t, thread_body);
        }
    }
    image_done();
    return bad ? 1 : 0;
}
