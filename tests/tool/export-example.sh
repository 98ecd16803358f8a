#!/bin/sh
# SPDX-License-Identifier: MIT
# The example of docs/export.md and the README: its three SQL queries and
# the same with pandas read_sql, run on the export of a generated trace (two
# call sites, overlapping pairs: findings; the statedump: named call sites),
# and checked against `summary --json` (tests/tool/export_example.py).
# Without pandas (scripts/install-deps installs it) its tests are skipped,
# loudly; the SQL is run all the same.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
gen_session ex || { echo "Bail out! cannot create an LTTng session"; exit 1; }
gen_run ex --format 4 --mix 40000
is $? 0 "cbt-gen --mix 40000 exits 0"
gen_stop ex
T=$(trace_of ex)
"$CBT" export -o "$CBT_TMP/trace.sqlite" $(pids_of ex) "$T" >/dev/null 2>"$CBT_TMP/err"
is "$?:$(cat "$CBT_TMP/err")" "0:" "export exits 0, nothing on stderr"
"$CBT" summary --json $(pids_of ex) "$T" >"$CBT_TMP/sum.json"
"$PYTHON3" "$top_srcdir/tests/tool/export_example.py" "$top_srcdir/docs/export.md" "$CBT_TMP/trace.sqlite" \
    "$CBT_TMP/sum.json" "$top_srcdir/README.md" >"$CBT_TMP/ex.out" 2>"$CBT_TMP/ex.err"
is "$?" 0 "export_example.py ran"
[ $_tap_failed -eq 0 ] || sed 's/^/#   /' "$CBT_TMP/ex.err"
while IFS="$(printf '\t')" read -r k want got; do
    if [ "$k" = SKIP ]; then
        diag "SKIPPED: the pandas example: $want"
        ok 0 "# SKIP the pandas example: $want"
    else
        is "$got" "$want" "$k"
    fi
done <"$CBT_TMP/ex.out"
done_testing
