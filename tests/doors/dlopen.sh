#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim dlopened (RTLD_LOCAL, then RTLD_GLOBAL) by a program linked to
# libcuda (client_dlopen): the driver it finds is the program's libcuda, not
# itself (through its GOT the shim's own cuMemcpy3DBatchAsync_v2 is the
# driver's, so a check by name refused every batch with 303), every batch
# through dlsym(shim, "cuMemcpy3DBatchAsync_v2") is forwarded and recorded,
# and dlclose of the shim, while a thread that made a batch through it still
# runs and ends after, leaves the program running (the shim is never
# unmapped: -z nodelete).  The reference run dlopens the driver itself.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

for mode in local global; do
    bare "dl_$mode" "$CLIENTS/client_dlopen" "$CBT_FAKECUDA_DIR/libcuda.so.1" "$mode"
    is "$bst $(bare_out "dl_$mode")" "0 round 1: loaded, batches made, closed, the other thread ended: every byte arrived
round 2: loaded, batches made, closed, the other thread ended: every byte arrived
after the close, the program's own driver: every byte arrived
batches=7 ops=35 bytes=79472" "dlopen $mode of the driver itself: every batch arrives (the reference)"

    # The shim is not preloaded: the program loads it; in every mode of the shim.
    for shim_mode in observe strict report; do
        menv=$(mode_env "$shim_mode")
        t="dl_${mode}_$shim_mode-$$"
        traced "$t" env $menv LD_PRELOAD= "$CLIENTS/client_dlopen" "$CBT_SHIM" "$mode"
        is "$st" 0 "dlopen $mode of the shim ($shim_mode): the client exits 0 (no crash at or after dlclose)"
        is "$(out "$t")" "$(bare_out "dl_$mode")" "dlopen $mode of the shim ($shim_mode): same output as with the driver itself"
        is "$(err "$t")" "" "dlopen $mode of the shim ($shim_mode): nothing on stderr"
        is "$(nbatches "$CBT_TMP/$t.trace")" 6 \
            "dlopen $mode of the shim ($shim_mode): 6 batch events (3 of the mixed batch, 2 from the other threads, 1 after reopening)"
        is "$(batches "$CBT_TMP/$t.trace" | cut -d' ' -f1-4 | sort | uniq -c | sed 's/^ *//')" \
            "6 cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS" \
            "dlopen $mode of the shim ($shim_mode): every one forwarded to the program's libcuda, CUDA_SUCCESS"
    done
done
done_testing
