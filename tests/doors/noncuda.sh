#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs that never touch CUDA run under the shim exactly as without it:
# same stdout, stderr and exit status; and the shim does not load LTTng-UST
# into a process that makes no batch (src/tp.c loads the provider lazily).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"

compare() { # NAME CMD...
    _n=$1; shift
    cbt_run_bare "$@" >"$CBT_TMP/$_n.b.out" 2>"$CBT_TMP/$_n.b.err"; _b=$?
    cbt_run "$@" >"$CBT_TMP/$_n.s.out" 2>"$CBT_TMP/$_n.s.err"; _s=$?
    is "$_s" "$_b" "non-CUDA $_n: same exit status under the shim ($_b)"
    is "$(cat "$CBT_TMP/$_n.s.out")" "$(cat "$CBT_TMP/$_n.b.out")" "non-CUDA $_n: same stdout under the shim"
    is "$(cat "$CBT_TMP/$_n.s.err")" "$(cat "$CBT_TMP/$_n.b.err")" "non-CUDA $_n: same stderr under the shim"
}
compare true /bin/true
if [ -n "${PYTHON3:-}" ]; then compare python "$PYTHON3" -c pass; else diag "python3 missing: its case skipped"; ok 0 "# SKIP python3 not found"; fi
compare sh sh -c 'echo hi; echo oops >&2; exit 3'
is "$(cbt_run sh -c 'echo hi; exit 3')" "hi" "non-CUDA sh -c 'echo hi; exit 3': prints hi"
cbt_run sh -c 'exit 3'; is "$?" 3 "non-CUDA sh -c 'exit 3': exit status 3 under the shim"
# liblttng-ust.so (the library that starts the listener threads) is loaded
# with the provider; only the tiny tracepoint/common libraries may be mapped.
is "$(cbt_run sh -c 'grep -c "liblttng-ust\.so" /proc/$$/maps; ls /proc/$$/task | wc -l' | tr -d ' ' | tr '\n' ' ')" "0 1 " \
    "a program that makes no batch never loads liblttng-ust.so nor starts a thread (provider loaded at the first batch only)"
done_testing
