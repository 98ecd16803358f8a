#!/bin/sh
# SPDX-License-Identifier: MIT
# Every CUBATCHTRACE_* setting the shim reads says once, on one stderr line
# prefixed "cubatchtrace: ", when its value is not one it knows, and the
# program runs as without the shim.  CUBATCHTRACE_TP_LIB naming the shim
# itself, or a library that is not the tracepoint provider, turns tracing
# off with one line (no event is recorded).  Known values say nothing.
# (CUBATCHTRACE_LIBCUDA: tests/doors/badlibcuda.sh.)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"

provider="$top_builddir/src/.libs/libcubatchtrace-tp.so"
bare ew "$CLIENTS/client_direct"
is "$bst $(bare_out ew)" "0 batches=3 ops=22 bytes=77744" "without the shim: the client's batches (the reference)"

# warns SETTING WANT-PREFIX: the client under the shim with SETTING; one line starting WANT-PREFIX.
warns() {
    cbt_run env "$1" "$CLIENTS/client_direct" >"$CBT_TMP/ew.out" 2>"$CBT_TMP/ew.err"
    is "$? $(cat "$CBT_TMP/ew.out")" "0 $(bare_out ew)" "$1: the program runs as without the shim"
    is "$(wc -l <"$CBT_TMP/ew.err" | tr -d ' ')" 1 "$1: exactly one line on stderr"
    case $(cat "$CBT_TMP/ew.err") in
    "cubatchtrace: $2"*) ok 0 "$1: the line says so ($2...)" ;;
    *) ok 1 "$1: the line says so ($2...)"; diag "stderr: $(cat "$CBT_TMP/ew.err")" ;;
    esac
}
warns CUBATCHTRACE_STRICT=bogus "CUBATCHTRACE_STRICT=bogus is not supported (only 'hazards')"
warns CUBATCHTRACE_MODE=bogus "CUBATCHTRACE_MODE=bogus is not one of observe, strict, off"
warns CUBATCHTRACE_REPORT=bogus "CUBATCHTRACE_REPORT=bogus is not supported (only 'stderr')"
warns CUBATCHTRACE_RECORD=inline "CUBATCHTRACE_RECORD is no longer read"
warns CUBATCHTRACE_QUEUE_KB=64 "CUBATCHTRACE_QUEUE_KB is no longer read"
warns CUBATCHTRACE_TP_LIB="$CBT_SHIM" "tracing off: CUBATCHTRACE_TP_LIB=$CBT_SHIM is cubatchtrace itself"
warns CUBATCHTRACE_TP_LIB="$CLIENTS/.libs/libcbtbase.so" \
    "tracing off: $CLIENTS/.libs/libcbtbase.so is not the cubatchtrace tracepoint provider"
warns CUBATCHTRACE_TP_LIB=/nonexistent/libcubatchtrace-tp.so "tracing off: cannot load /nonexistent/libcubatchtrace-tp.so"

# Known values: not a word.
cbt_run env CUBATCHTRACE_MODE=observe CUBATCHTRACE_STRICT=hazards CUBATCHTRACE_TP_LIB="$provider" \
    "$CLIENTS/client_direct" >"$CBT_TMP/ew.out" 2>"$CBT_TMP/ew.err"
is "$? $(cat "$CBT_TMP/ew.out") [$(cat "$CBT_TMP/ew.err")]" "0 $(bare_out ew) []" \
    "known values (MODE=observe, STRICT=hazards, TP_LIB=the provider): nothing on stderr"
cbt_run env CUBATCHTRACE_STRICT= CUBATCHTRACE_MODE= "$CLIENTS/client_direct" >"$CBT_TMP/ew.out" 2>"$CBT_TMP/ew.err"
is "$? [$(cat "$CBT_TMP/ew.err")]" "0 []" "empty values: nothing on stderr"

if want_sessiond; then
    traced "ew-self-$$" env CUBATCHTRACE_TP_LIB="$CBT_SHIM" "$CLIENTS/client_direct"
    is "$st $(nbatches "$CBT_TMP/ew-self-$$.trace")" "0 0" "CUBATCHTRACE_TP_LIB=the shim: tracing off, no batch event"
    traced "ew-tp-$$" env CUBATCHTRACE_TP_LIB="$provider" CUBATCHTRACE_STRICT=bogus "$CLIENTS/client_direct"
    is "$st $(nbatches "$CBT_TMP/ew-tp-$$.trace")" "0 3" \
        "CUBATCHTRACE_TP_LIB=the provider, STRICT=bogus: the 3 batches recorded"
else
    ok 0 "# SKIP $CBT_NO_SESSIOND: traces not checked"
fi
done_testing
