#!/bin/sh
# SPDX-License-Identifier: MIT
# CUBATCHTRACE_REPORT=stderr without any session (src/alert.c): a finding is
# printed once per (rule, call site): the same bad batch twice from one site
# prints once, from a second site once more; in the words and with the fix
# of every other output.  Without the report nothing is
# printed.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"

cbt_run env CUBATCHTRACE_REPORT=stderr "$CLIENTS/client_strict" report >"$CBT_TMP/rep.out" 2>"$CBT_TMP/rep.err"
is "$?" 0 "report: the client exits 0"
is "$(cat "$CBT_TMP/rep.out")" "site A call 1: result=1
site A call 2: result=1
site B call 1: result=1" "report: observe mode still forwards (the driver answers INVALID_VALUE)"
is "$(grep -c '^cubatchtrace: error: row_length_too_small' "$CBT_TMP/rep.err")" 2 \
    "report: row_length_too_small printed once for site A (called twice) and once for site B"
is "$(grep -c '^cubatchtrace: ' "$CBT_TMP/rep.err")" 2 "report: no other cubatchtrace line on stderr"
# the words and the fix are those every output uses (cbt_finding_words, cbt_rule_fix)
is "$(sed -n 1p "$CBT_TMP/rep.err")" \
    "cubatchtrace: error: row_length_too_small: op 0's source: rowLength 100 is less than the extent width 256 (rows would overlap)" \
    "report: the line names the rule, the op, the side and the values at fault in the shared words"
is "$(sed -n 3p "$CBT_TMP/rep.err")" \
    "  fix: set rowLength to 0 (rows packed) or to the row pitch in elements, at least the width" \
    "report: a fix line follows, the catalogue's"
is "$(grep -c '^  fix: ' "$CBT_TMP/rep.err")" 2 "report: each finding has its fix line"
grep -q 'client_strict' "$CBT_TMP/rep.err"
ok $? "report: the call site is named (client_strict)"
diag "$(cat "$CBT_TMP/rep.err")"

cbt_run "$CLIENTS/client_strict" report >/dev/null 2>"$CBT_TMP/norep.err"
is "$(cat "$CBT_TMP/norep.err")" "" "report: without CUBATCHTRACE_REPORT nothing is printed"
done_testing
