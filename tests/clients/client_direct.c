/* SPDX-License-Identifier: MIT */
/*
 * Door "symbol", direct link: the program calls cuMemcpy3DBatchAsync as
 * cuda.h 13 spells it, which binds cuMemcpy3DBatchAsync_v2 (or, built with
 * -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1, cuMemcpy3DBatchAsync_v2_ptsz).
 * Makes the mixed batch of every operand kind (plus its set-up and read-back
 * batches) and checks every byte.
 */
#include "common.h"

#include <stdio.h>

int main(void)
{
    cc_load_direct();
    CUstream s = cc_setup();
    /* cuda.h maps the name to _v2 or _v2_ptsz: the binding this client pins. */
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    int bad = cc_mixed_scenario(door, s);
    cc_summary(NULL);
    if (bad)
        fprintf(stderr, "client: %d buffer(s) hold wrong bytes\n", bad);
    return bad ? 1 : 0;
}
