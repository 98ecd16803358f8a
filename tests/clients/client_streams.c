/* SPDX-License-Identifier: MIT */
/*
 * Three streams one after the other, each created, used for two batches and
 * destroyed; the double hands the freed handle out again, so a stale cache
 * of what a handle names would record the destroyed stream's id.
 *   client_streams direct|gpa     (how cuStreamDestroy is reached)
 * Prints one line per stream: "stream K handle=0x... id=N".
 */
#include "common.h"

#include <stdio.h>
#include <string.h>

#undef cuStreamDestroy
#undef cuGetProcAddress
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuStreamGetId(CUstream, unsigned long long *);
CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "direct";
    CUresult (*destroy)(CUstream) = cuStreamDestroy_v2;
    cc_load_direct();
    CUstream first = cc_setup();
    if (!strcmp(how, "gpa")) {
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        cc_check(cuGetProcAddress_v2("cuStreamDestroy", &p, 13000, 0, &st), "cuGetProcAddress_v2(cuStreamDestroy)");
        destroy = (CUresult(*)(CUstream))p;
    }
    struct cc_door door = {.v2 = cuMemcpy3DBatchAsync};
    /* One batch first, so that whatever the first batch sets up under the
     * shim is in place before the handles below are freed and reused. */
    int bad = cc_simple_batch(door, first, 2, 64, 99);
    for (unsigned k = 0; k < 3; k++) {
        CUstream s;
        unsigned long long id = 0;
        cc_check(cc.StreamCreate(&s, 0), "cuStreamCreate");
        cc_check(cuStreamGetId(s, &id), "cuStreamGetId");
        printf("stream %u handle=%p id=%llu\n", k, (void *)s, id);
        bad += cc_simple_batch(door, s, 2, 64, k * 10);
        bad += cc_simple_batch(door, s, 2, 64, k * 10 + 1);
        cc_check(cc.StreamSynchronize(s), "cuStreamSynchronize");
        cc_check(destroy(s), "cuStreamDestroy");
    }
    return bad ? 1 : 0;
}
