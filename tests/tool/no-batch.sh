#!/bin/sh
# SPDX-License-Identifier: MIT
# A program traced with the shim that made no batch: its trace is a clean
# empty summary (exit 0, "no batch"), in text and JSON, and check finds
# nothing in it (exit 0); a directory that is not a trace, or a trace of
# another tracer, stays an error (exit 2, one line).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f "$top_builddir/src/.libs/libcubatchtrace.so" ] || skip_all "libcubatchtrace.so not built"

"$CBT" run -o "$CBT_TMP/true" -- true >/dev/null 2>&1
is "$?" 0 "run -- true: the program's status"
T="$CBT_TMP/true"

"$CBT" summary "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 0 "summary of a program that made no batch: exit 0"
is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "summary: nothing on stderr"
grep -q '^# no batch: ' "$CBT_TMP/out"; ok $? "summary: says no batch"
is "$(wc -l <"$CBT_TMP/out" | tr -d ' ')" 4 "summary: four lines (discarded events and packets, the trace, no batch), no empty tables"
"$CBT" summary --json "$T" >"$CBT_TMP/out.json" 2>"$CBT_TMP/err"
is "$?" 0 "summary --json: exit 0"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"])' "$CBT_TMP/out.json" 2>&1)" "0 0" \
   "summary --json: 0 batches, 0 ops"
"$CBT" check "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 0 "check: exit 0"
grep -q '^# 0 findings' "$CBT_TMP/out"; ok $? "check: 0 findings"

mkdir "$CBT_TMP/empty"
"$CBT" summary "$CBT_TMP/empty" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a directory that is not a trace" $? "$CBT_TMP/out" "$CBT_TMP/err" "no CTF trace"
"$PYTHON3" "$top_srcdir/tests/tool/mkctf.py" "$CBT_TMP/other" other:event 3
"$CBT" summary "$CBT_TMP/other" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a trace of another tracer" $? "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events"
done_testing
