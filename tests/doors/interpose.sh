#!/bin/sh
# SPDX-License-Identifier: MIT
# Another library that interposes on the driver (tests/clients/other_interposer.c:
# cuMemcpy3DBatchAsync_v2, cuMemAlloc_v2, cuMemFree_v2, each forwarded with
# dlsym(RTLD_NEXT, ...), counted and printed at exit), preloaded before and
# after the shim.  Before: its RTLD_NEXT lookup reaches the shim's dlsym,
# which must hand out the shim's own door, never the other library's function
# (through the shim's GOT it would be the other's, which then calls itself).
# After: the shim's exported functions must forward to the other library
# (the next definition), not past it to libcuda.  Either way the program and
# the other library print what they print without the shim, and every batch
# is recorded once.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

other="$CLIENTS/.libs/libcbtother.so"
bare other env LD_PRELOAD="$other" "$CLIENTS/client_direct"
is "$bst" 0 "other interposer alone: the client exits 0"
is "$(bare_out other)" "batches=3 ops=22 bytes=77744
other interposer: batches=3 allocs=4 frees=4 came_back_in=0" \
    "other interposer alone: every batch, allocation and free goes through it (the reference)"

# In every mode of the shim, with a session listening.
for mode in observe strict report; do
    menv=$(mode_env "$mode")
    for order in before after; do
        case $order in
        before) pre="$other:$CBT_SHIM" ;;
        after) pre="$CBT_SHIM:$other" ;;
        esac
        t="ip_${order}_$mode-$$"
        traced "$t" env $menv LD_PRELOAD="$pre" "$CLIENTS/client_direct"
        is "$st" 0 "other interposer $order the shim ($mode): the client exits 0 (every byte checked)"
        is "$(out "$t")" "$(bare_out other)" \
            "other interposer $order the shim ($mode): same output, the other library saw every call once and none came back in"
        is "$(err "$t")" "" "other interposer $order the shim ($mode): nothing on stderr"
        is "$(nbatches "$CBT_TMP/$t.trace")" 3 "other interposer $order the shim ($mode): exactly 3 batch events"
        is "$(batches "$CBT_TMP/$t.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 8 -
cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 6 -
cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 8 -" \
            "other interposer $order the shim ($mode): each batch recorded once, forwarded, CUDA_SUCCESS"
    done
done
done_testing
