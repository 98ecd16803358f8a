#!/bin/sh
# SPDX-License-Identifier: MIT
# CUBATCHTRACE_LIBCUDA naming no usable driver (a missing file, the shim
# itself, an executable, a library that is not a driver), in a program linked
# to libcuda (client_badlib): every call but the batch doors behaves as
# without the shim (the memory functions memwrap.c wraps and cuGetProcAddress
# forward to the program's own libcuda, the next definition), each batch
# door answers CUDA_ERROR_SHARED_OBJECT_INIT_FAILED (303), one line on stderr
# says why, and the program exits normally.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"

bare bl "$CLIENTS/client_badlib"
is "$bst $(bare_out bl | grep -c ': 0')" "0 21" "without the shim: every call succeeds (the reference)"
is "$(bare_out bl | grep '^batch ')" "batch linked: 0
batch via cuGetProcAddress: 0
batch via dlsym: 0" "without the shim: the three batches succeed"

# In every mode of the shim (no session listening).
for mode in observe strict report; do
    menv=$(mode_env "$mode")
    for lib in /nonexistent/libcuda.so.1 "$CBT_SHIM" /bin/ls "$CLIENTS/.libs/libcbtbase.so"; do
        case $lib in
        /nonexistent*) what="a missing file"; why="cannot load the CUDA driver $lib" ;;
        "$CBT_SHIM") what="the shim itself"; why="$lib is cubatchtrace itself" ;;
        /bin/ls) what="an executable"; why="cannot load the CUDA driver $lib" ;;
        *) what="a library that is no driver"; why="$lib is not a CUDA driver" ;;
        esac
        cbt_run env $menv CUBATCHTRACE_LIBCUDA="$lib" "$CLIENTS/client_badlib" >"$CBT_TMP/bl.out" 2>"$CBT_TMP/bl.err"
        is "$?" 0 "CUBATCHTRACE_LIBCUDA=$what ($mode): the program exits normally"
        is "$(grep -v '^batch ' "$CBT_TMP/bl.out")" "$(bare_out bl | grep -v '^batch ')" \
            "CUBATCHTRACE_LIBCUDA=$what ($mode): every call but the batches answers as without the shim (memory functions, lookups)"
        is "$(grep '^batch ' "$CBT_TMP/bl.out")" "batch linked: 303
batch via cuGetProcAddress: 303
batch via dlsym: 303" "CUBATCHTRACE_LIBCUDA=$what ($mode): the linked, cuGetProcAddress and dlsym batch doors answer 303"
        is "$(wc -l <"$CBT_TMP/bl.err" | tr -d ' ')" 1 "CUBATCHTRACE_LIBCUDA=$what ($mode): exactly one line on stderr"
        case $(cat "$CBT_TMP/bl.err") in
        "cubatchtrace: $why"*) ok 0 "CUBATCHTRACE_LIBCUDA=$what ($mode): the line says why" ;;
        *) ok 1 "CUBATCHTRACE_LIBCUDA=$what ($mode): the line says why"; diag "stderr: $(cat "$CBT_TMP/bl.err")" ;;
        esac
    done
done

if want_sessiond; then
    traced "bl-$$" env CUBATCHTRACE_LIBCUDA=/nonexistent/libcuda.so.1 "$CLIENTS/client_badlib"
    is "$(batches "$CBT_TMP/bl-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 -
cuMemcpy3DBatchAsync_v2 getprocaddress no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 -
cuMemcpy3DBatchAsync_v2 symbol no_driver CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 1 -" \
        "wrong CUBATCHTRACE_LIBCUDA: the three batches recorded with outcome no_driver"
else
    ok 0 "# SKIP $CBT_NO_SESSIOND: trace of the no-driver outcome not checked"
fi
done_testing
