/* SPDX-License-Identifier: MIT */
/*
 * Linked to libctorbatch, whose constructor made a batch before main(); main
 * makes one more and reports both.
 */
#include "common.h"

#include <stdio.h>

int ctor_batch_result(int *bytes_ok);

int main(void)
{
    int ok = 0, r = ctor_batch_result(&ok);
    printf("constructor batch: result=%d bytes=%s\n", r, ok ? "ok" : "wrong");
    cc_load_direct();
    CUstream s = cc_setup();
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    int bad = cc_simple_batch(door, s, 2, 256, 5);
    cc_summary("main: ");
    return bad || r != 0 || !ok ? 1 : 0;
}
