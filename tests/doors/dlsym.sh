#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim's dlsym (src/dlsym_stub.S + cbt_dlsym_hook): lookups it does not
# answer keep the caller's point of view (RTLD_NEXT wrappers, RTLD_DEFAULT
# from a plugin opened RTLD_LOCAL), and dlsym(libcuda, "cuMemcpy3DBatchAsync_v2")
# from a plugin hands out the shim's door.  A dlsym that resolved from the
# shim's own point of view makes the wrappers find themselves ("next>(itself)",
# no "[wrapped]" line) and the plugin miss its dependency; without the hook the
# batch is not recorded.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

plugin="$CLIENTS/.libs/libcbtplugin.so"
bare rtld "$CLIENTS/client_rtld" "$plugin"
traced "rtld-$$" "$CLIENTS/client_rtld" "$plugin"
is "$st" 0 "dlsym: client exits 0 under the shim"
is "$(bare_out rtld)" "cbt_who: next>base
[wrapped] puts through its RTLD_NEXT wrapper
main RTLD_DEFAULT cbt_dep_value: not found
plugin RTLD_DEFAULT cbt_dep_value: 42 (its dependency's)
main RTLD_NEXT cbt_who: found
batches=1 ops=2 bytes=256" "dlsym: the client's view without the shim (the reference)"
o=$(out "rtld-$$")
is "$(echo "$o" | sed -n 1p)" "cbt_who: next>base" "dlsym: RTLD_NEXT from a wrapper library finds the next definition (libcbtbase), not itself"
is "$(echo "$o" | sed -n 2p)" "[wrapped] puts through its RTLD_NEXT wrapper" "dlsym: a puts wrapper's dlsym(RTLD_NEXT, \"puts\") finds libc's puts"
is "$(echo "$o" | sed -n 4p)" "plugin RTLD_DEFAULT cbt_dep_value: 42 (its dependency's)" \
    "dlsym: RTLD_DEFAULT from a plugin opened RTLD_LOCAL finds its own dependency's symbol"
is "$o" "$(bare_out rtld)" "dlsym: every line identical with and without the shim"
is "$(batches "$CBT_TMP/rtld-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 2 -" \
    "dlsym: dlsym(libcuda handle, cuMemcpy3DBatchAsync_v2) from a plugin hands out the shim's door (recorded via symbol)"
done_testing
