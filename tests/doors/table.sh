#!/bin/sh
# SPDX-License-Identifier: MIT
# The H200 accept/reject table (shared/facts/h200-driver.md), walked through
# the shim over the double in observe mode: for every case the driver's
# (double's) answer and the validator's verdict recorded in the trace must
# agree: an error-severity finding for the batch <=> the driver refused it.
# Covers validate/validate.c as the tool runs it on the trace (and as the
# shim runs it inline): without the validator every refused case fails.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

traced "table-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_strict" table
t="$CBT_TMP/table-$$.trace"
is "$st" 0 "table: the walk exits 0"
ncases=$(grep -c '^case ' "$CBT_TMP/table-$$.out")
is "$(nbatches "$t")" "$ncases" "table: one batch event per case ($ncases)"
batch_results "$t" >"$CBT_TMP/results"
findings "$t" >"$CBT_TMP/findings"
diag "case | driver | validator"
while IFS='|' read -r num name ret; do
    i=${num#case }; i=$(echo "$i" | tr -d ' '); name=$(echo "$name" | sed 's/^ *//; s/ *$//'); ret=$(echo "$ret" | tr -d ' ')
    driver=$(awk -v id="$i" '$1 == id {print $2}' "$CBT_TMP/results")
    errs=$(awk -v id="$i" '$1 == id && $3 == "error" {print $2}' "$CBT_TMP/findings" | sort -u | tr '\n' ' ' | sed 's/ $//')
    others=$(awk -v id="$i" '$1 == id && $3 != "error" {print $2 "(" $3 ")"}' "$CBT_TMP/findings" | sort -u | tr '\n' ' ' | sed 's/ $//')
    diag "$name | ${driver:-no event} | ${errs:-no error}${others:+; $others}"
    # refused: 1 when the driver (as recorded) failed, the validator found an
    # error, the client saw a non-zero CUresult; all three must agree.
    if [ -n "$driver" ] && [ "$driver" != CUDA_SUCCESS ]; then drv=1; else drv=0; fi
    if [ -n "$errs" ]; then val=1; else val=0; fi
    if [ "$ret" != 0 ]; then cli=1; else cli=0; fi
    [ -n "$driver" ] && [ "$drv$val$cli" = "$drv$drv$drv" ]
    ok $? "table: $name: driver ${driver:-?} and validator (${errs:-no error}) agree"
done <"$CBT_TMP/table-$$.out"

# Read-time findings equal the calling thread's: the same walk with the
# stderr report, which validates inline and writes finding events.
traced "tinl-$$" env CUBATCHTRACE_MODE=observe CUBATCHTRACE_REPORT=stderr "$CLIENTS/client_strict" table
ni=$(inline_findings "$CBT_TMP/tinl-$$.trace" | wc -l)
ok "$([ "$ni" -gt 0 ] && echo 0 || echo 1)" "table, inline: the calling thread wrote $ni findings"
is "$(inline_findings "$CBT_TMP/tinl-$$.trace")" "$(findings "$CBT_TMP/tinl-$$.trace")" \
    "table: every finding computed when the trace is read equals the calling thread's, one for one"
is "$(findings "$CBT_TMP/tinl-$$.trace")" "$(cat "$CBT_TMP/findings")" \
    "table: the findings read from the observe-mode trace equal those of the inline run"

# The crash case: run in strict mode (forwarded, it would kill the process).
traced "tcrash-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" crash
cf=$(findings "$CBT_TMP/tcrash-$$.trace" | awk '$3 == "error" {print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//')
diag "src ptr = 0xdead0000 (unmapped) | SIGSEGV without the shim | ${cf:-no error} (strict: refused)"
is "$st:$cf" "0:pointer_unmapped" "table: src ptr 0xdead0000: the driver crashes, the validator says pointer_unmapped and strict mode survives"
done_testing
