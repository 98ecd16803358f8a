#!/bin/sh
# SPDX-License-Identifier: MIT
# A dlsym wrapper (tests/clients/dlsym_wrapper.c) that forwards with
# dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), preloaded before and after the
# shim, under the CUDA runtime's sequence (client_runtime_seq: dlopen
# libcuda, dlsym(h, "cuGetProcAddress_v2"), then cuGetProcAddress).
# Before: the versioned lookup passes over an unversioned dlsym, so the shim
# must export dlsym@@GLIBC_2.34 (and @GLIBC_2.2.5) or the runtime's lookup
# never reaches it and no batch is recorded.  After: the shim's dlsym must
# hand lookups on to the wrapper (it counts the driver names it sees).  The
# caller's point of view (RTLD_NEXT, RTLD_DEFAULT from a plugin) stays what
# it is without the shim (client_rtld).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
case $(uname -m) in
x86_64) ;;
*) skip_all "the shim exports dlsym under glibc's versions on x86-64 only" ;;
esac
need_sessiond

wrap="$CLIENTS/.libs/libcbtdlsymwrap.so"
# In a sanitizer build its runtime comes first (CBT_SAN_PRELOAD, as cbt_run
# puts it): its start-up asks dlsym(RTLD_NEXT) for libc's functions, and
# through a wrapper preloaded before it, RTLD_NEXT would be the wrapper's
# next (the runtime's own interceptors) rather than its own.
san=${CBT_SAN_PRELOAD:+$CBT_SAN_PRELOAD:}
bare wrt env LD_PRELOAD="$san$wrap" "$CLIENTS/client_runtime_seq"
is "$bst $(bare_out wrt)" "0 batches=4 ops=10 bytes=2560
dlsym wrapper: driver lookups=1" "dlsym wrapper alone: the runtime sequence runs, one driver lookup (the reference)"
plugin="$CLIENTS/.libs/libcbtplugin.so"
bare wrtld env LD_PRELOAD="$san$wrap" "$CLIENTS/client_rtld" "$plugin"

# In every mode of the shim, with a session listening.
for mode in observe strict report; do
    menv=$(mode_env "$mode")
    for order in before after; do
        case $order in
        before) pre="$san$wrap:$CBT_SHIM" ;;
        after) pre="$san$CBT_SHIM:$wrap" ;;
        esac
        t="dw_${order}_$mode-$$"
        traced "$t" env $menv LD_PRELOAD="$pre" "$CLIENTS/client_runtime_seq"
        is "$st" 0 "dlsym wrapper $order the shim ($mode): the runtime sequence exits 0 (bytes checked)"
        is "$(out "$t")" "$(bare_out wrt)" "dlsym wrapper $order the shim ($mode): same output, the wrapper saw the one driver lookup"
        is "$(err "$t")" "" "dlsym wrapper $order the shim ($mode): nothing on stderr"
        is "$(batches "$CBT_TMP/$t.trace")" "cuMemcpy3DBatchAsync_v2 getprocaddress forwarded CUDA_SUCCESS 1 -
cuMemcpy3DBatchAsync_v2_ptsz getprocaddress forwarded CUDA_SUCCESS 2 -
cuMemcpy3DBatchAsync getprocaddress forwarded CUDA_SUCCESS 3 -
cuMemcpy3DBatchAsync_ptsz getprocaddress forwarded CUDA_SUCCESS 4 -" \
            "dlsym wrapper $order the shim ($mode): the runtime's 4 batches recorded via getprocaddress"

        t="dwr_${order}_$mode-$$"
        traced "$t" env $menv LD_PRELOAD="$pre" "$CLIENTS/client_rtld" "$plugin"
        is "$st $(out "$t")" "$bst $(bare_out wrtld)" \
            "dlsym wrapper $order the shim ($mode): RTLD_NEXT and RTLD_DEFAULT lookups answer as without the shim"
        is "$(batches "$CBT_TMP/$t.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 2 -" \
            "dlsym wrapper $order the shim ($mode): dlsym(libcuda, cuMemcpy3DBatchAsync_v2) from a plugin hands out the shim's door"
    done
done
done_testing
