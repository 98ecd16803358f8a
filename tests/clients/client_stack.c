/* SPDX-License-Identifier: MIT */
/*
 * A batch made through two helper functions of a wrapper library
 * (tests/clients/stack_wrap.c): main -> stackwrap_outer -> wrap_inner ->
 * cuMemcpy3DBatchAsync_v2, one op whose source rowLength (100) is less than
 * its width (512): a row_length_too_small finding, whose short stack
 * (--stack N) names this line and the library's two.
 *
 *   client_stack [N]   N such batches (1 when not said)
 */
#include <stdio.h>
#include <stdlib.h>

int stackwrap_setup(void);
int stackwrap_outer(size_t row);

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (stackwrap_setup()) {
        fprintf(stderr, "client_stack: no device\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        volatile int r = stackwrap_outer(100); /* STACK-LINE-main */
        if (i == 0)
            printf("batch: result=%d\n", r);
    }
    return 0;
}
