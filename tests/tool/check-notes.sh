#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace check` says in a `#` line what its exit status and finding
# lines cannot: how many inline findings disagree with the reader's validator
# (exit 3), and how many batches could not be validated (malformed,
# incomplete, over the reader's memory cap) and so have no findings.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

# ---- batches not validated: handmade chunks (tests/tool/mkbatches.py malformed)
"$PYTHON3" "$top_srcdir/tests/tool/mkbatches.py" "$CBT_TMP/mal" malformed
"$CBT" check "$CBT_TMP/mal" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 0 "batches not validated and no finding: exit status unchanged (0)"
is "$(grep '^# batches not validated' "$CBT_TMP/out")" \
   "# batches not validated: 10 (8 malformed, 1 incomplete, 1 over the reader's memory cap): their findings are missing" \
   "one line with the count of batches not validated, by cause"
is "$(tail -n 1 "$CBT_TMP/out")" "# 0 findings: 0 error, 0 hazard, 0 warning; 0 at or above hazard" \
   "the count line stays the last"
grep -q '^# inline findings' "$CBT_TMP/out"; is $? 1 "no inline line when nothing disagrees"

# ---- inline findings that disagree (cbt-gen through the real provider)
need_sessiond
gen_session n || { ok 1 "session starts"; done_testing; }
gen_run inl n=1,ops=3,src=host_pageable,inline=wrong
gen_run clean n=2,ops=2
gen_stop n
T=$(trace_of n)
"$CBT" check $(pids_of inl) "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 3 "inline findings that disagree: exit 3"
is "$(grep '^# inline findings' "$CBT_TMP/out")" \
   "# inline findings that disagree with the reader's validator: 2 (exit status 3)" \
   "one line says so, with the count and the status"
"$CBT" check --fail-on warning $(pids_of inl) "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 1 "the same with --fail-on warning: exit 1"
is "$(grep '^# inline findings' "$CBT_TMP/out")" \
   "# inline findings that disagree with the reader's validator: 2" \
   "the line stays, without the status it did not decide"
"$CBT" check $(pids_of clean) "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 0 "a clean process: exit 0"
grep -q '^# inline findings\|^# batches not validated' "$CBT_TMP/out"; is $? 1 "a clean process: neither line"
done_testing
