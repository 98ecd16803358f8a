/* SPDX-License-Identifier: MIT */
/*
 * fork: the parent makes a batch, forks; the child makes a batch and exits;
 * the parent waits and makes no more.  Both through the linked
 * cuMemcpy3DBatchAsync_v2.  With a file name argument the child writes its
 * pid there (the test filters the trace by it).
 */
#include "common.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    cc_load_direct();
    CUstream s = cc_setup();
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    int bad = cc_simple_batch(door, s, 2, 128, 1);
    cc_summary("parent before fork: ");
    pid_t child = fork();
    if (child < 0)
        cc_fail("fork");
    if (child == 0) {
        if (argc > 1) {
            FILE *f = fopen(argv[1], "w");
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
        }
        cc_batches = cc_ops = cc_bytes = 0;
        bad = cc_simple_batch(door, s, 3, 128, 2);
        cc_summary("child: ");
        return bad ? 1 : 0;
    }
    int status;
    if (waitpid(child, &status, 0) != child)
        cc_fail("waitpid");
    printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return bad || !WIFEXITED(status) || WEXITSTATUS(status) ? 1 : 0;
}
