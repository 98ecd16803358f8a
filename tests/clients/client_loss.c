/* SPDX-License-Identifier: MIT */
/*
 * Ways a process ends right after its batches returned, for the "nothing
 * lost" tests: each batch is one device-to-device op through the linked
 * cuMemcpy3DBatchAsync_v2.
 *
 *   client_loss fork N       the parent makes 1 batch, a forked child N and _exit(0)s
 *   client_loss abort N      N batches, then abort()
 *   client_loss kill N       N batches, printing "returned I" after each, then SIGKILL to itself
 *   client_loss threads T K  T threads make K batches each, are joined, then _exit(0)
 *   client_loss exec N       N batches, then exec /bin/true
 *   client_loss paced N MS   N batches, MS milliseconds apart, printing "returned I" after each
 * Prints "pid P" for every process that makes batches, before its first.
 */
#include "common.h"
#include "opbuild.h"

#include <stdbool.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static CUdeviceptr buf;

static void batches(CUstream s, size_t n, bool say)
{
    for (size_t i = 0; i < n; i++) {
        CUDA_MEMCPY3D_BATCH_OP op = cc_op(ob_ptr(buf, 0, 0), ob_ptr(buf + 4096, 0, 0), 256, 1, 1);
        cc_check(cuMemcpy3DBatchAsync(1, &op, 0, s), "cuMemcpy3DBatchAsync_v2");
        if (say) {
            printf("returned %zu\n", i + 1);
            fflush(stdout);
        }
    }
}

static size_t per_thread;

static void worker(CUstream s) { batches(s, per_thread, false); }

int main(int argc, char **argv)
{
    if (argc < 3)
        cc_fail("usage: client_loss fork|abort|kill|exec N | threads T K | paced N MS");
    size_t n = strtoul(argv[2], NULL, 10);
    cc_load_direct();
    CUstream s = cc_setup();
    cc_check(cc.MemAlloc(&buf, 8192), "cuMemAlloc");
    cc_say_pid();
    if (!strcmp(argv[1], "fork")) {
        batches(s, 1, false);
        pid_t child = fork();
        if (child < 0)
            cc_fail("fork");
        if (child == 0) {
            cc_say_pid();
            batches(s, n, false);
            _exit(0);
        }
        int st;
        waitpid(child, &st, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
    }
    if (!strcmp(argv[1], "abort")) {
        batches(s, n, false);
        abort();
    }
    if (!strcmp(argv[1], "kill")) {
        batches(s, n, true);
        kill(getpid(), SIGKILL);
        pause();
    }
    if (!strcmp(argv[1], "exec")) {
        batches(s, n, false);
        execl("/bin/true", "true", (char *)NULL);
        cc_fail("exec /bin/true");
    }
    if (!strcmp(argv[1], "paced") && argc > 3) {
        long ms = strtol(argv[3], NULL, 10);
        struct timespec gap = {ms / 1000, (ms % 1000) * 1000000};
        for (size_t i = 0; i < n; i++) {
            batches(s, 1, false);
            printf("returned %zu\n", i + 1);
            fflush(stdout);
            nanosleep(&gap, NULL);
        }
        return 0;
    }
    if (!strcmp(argv[1], "threads") && argc > 3) {
        size_t t = n;
        per_thread = strtoul(argv[3], NULL, 10);
        cc_threads(t, worker);
        _exit(0);
    }
    cc_fail("unknown mode %s", argv[1]);
}
