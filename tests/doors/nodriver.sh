#!/bin/sh
# SPDX-License-Identifier: MIT
# No usable driver: a program that does not link libcuda calls the shim's
# exported batch functions (dlsym(RTLD_DEFAULT)) with LD_LIBRARY_PATH not
# holding the double.  src/driver.c (load_real) and src/batch.c (no_driver)
# must turn that into CUDA_ERROR_SHARED_OBJECT_INIT_FAILED (303), one line on
# stderr, and a normal exit; CUBATCHTRACE_LIBCUDA naming the shim itself is
# refused the same way.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"

want="cuMemcpy3DBatchAsync_v2: 303
cuMemcpy3DBatchAsync_v2 again: 303
cuMemcpy3DBatchAsync: 303
exiting normally"
for lib in /nonexistent/libcuda.so.1 "$CBT_SHIM"; do
    case $lib in /nonexistent*) what="CUBATCHTRACE_LIBCUDA=/nonexistent/libcuda.so.1";; *) what="CUBATCHTRACE_LIBCUDA=the shim itself";; esac
    env LD_PRELOAD="$CBT_SHIM" LD_LIBRARY_PATH="$CLIENTS/.libs" CUBATCHTRACE_LIBCUDA="$lib" \
        "$CLIENTS/client_nolib" >"$CBT_TMP/nd.out" 2>"$CBT_TMP/nd.err"
    is "$?" 0 "no driver ($what): the process exits normally (0)"
    is "$(cat "$CBT_TMP/nd.out")" "$want" "no driver ($what): every batch call returns CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"
    is "$(wc -l <"$CBT_TMP/nd.err" | tr -d ' ')" 1 "no driver ($what): exactly one line on stderr"
    is "$(cut -c1-13 "$CBT_TMP/nd.err")" "cubatchtrace:" "no driver ($what): the stderr line starts with cubatchtrace:"
    diag "stderr: $(cat "$CBT_TMP/nd.err")"
done
grep -q 'cubatchtrace itself' "$CBT_TMP/nd.err"
ok $? "no driver: CUBATCHTRACE_LIBCUDA naming the shim is refused as 'cubatchtrace itself'"

# Without the shim the program finds no batch function at all (the reference).
is "$(LD_LIBRARY_PATH="$CLIENTS/.libs" "$CLIENTS/client_nolib")" "no cuMemcpy3DBatchAsync in the process" \
    "no driver: without the shim the client has no batch function (so the 303s above are the shim's)"

if want_sessiond; then
    # cbt_run puts the double on LD_LIBRARY_PATH; CUBATCHTRACE_LIBCUDA overrides it.
    traced "nd-$$" env CUBATCHTRACE_LIBCUDA=/nonexistent/libcuda.so.1 "$CLIENTS/client_nolib"
    is "$(batches "$CBT_TMP/nd-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 -
cuMemcpy3DBatchAsync_v2 symbol no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 -
cuMemcpy3DBatchAsync symbol no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 7" \
        "no driver: batches recorded with outcome no_driver and result 303 (fail_idx left as the caller set it)"
else
    ok 0 "# SKIP $CBT_NO_SESSIOND: trace of the no-driver outcome not checked"
fi
done_testing
