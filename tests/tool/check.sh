#!/bin/sh
# `cubatchtrace check`: one line per finding with where it happened; exit 0
# when clean, 1 when a finding at or above --fail-on (default hazard) exists.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session k || { ok 1 "session starts"; done_testing; }
gen_run clean n=5,ops=2
gen_run warn n=2,ops=1,finding=lochint_ignored
gen_run haz n=3,ops=2,finding=overlap_src_dst,finding_op=1
gen_run err n=1,ops=1,finding=pointer_null n=1,ops=1,finding=lochint_invalid
gen_stop k
T=$(trace_of k)

check() { # WANT-STATUS DESCRIPTION ARGS...
    _w=$1 _d=$2; shift 2
    "$CBT" check "$@" "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    is $? "$_w" "$_d"
    is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "$_d: nothing on stderr"
}
check 0 "clean process: exit 0" $(pids_of clean)
grep -q '^# 0 findings' "$CBT_TMP/out"; ok $? "clean process: 0 findings"
check 0 "warnings only, default threshold hazard: exit 0" $(pids_of warn)
is "$(grep -c '^warning lochint_ignored: ' "$CBT_TMP/out")" 2 "warnings listed, one line each"
check 1 "warnings only, --fail-on warning: exit 1" --fail-on warning $(pids_of warn)
check 1 "hazard: exit 1" $(pids_of haz)
P=$(cat "$CBT_TMP/haz.pids")
grep -q "^hazard overlap_src_dst: host=[^ ]* pid=$P tid=$P batch=0 op=1 side=dst .*caller=cbt-gen+0x[0-9a-f]* (gen_site_a+0x1): " "$CBT_TMP/out"
ok $? "a finding line says host, pid, tid, batch, op, caller"
is "$(grep -c '^hazard ' "$CBT_TMP/out")" 3 "three hazard lines"
check 0 "hazard, --fail-on error: exit 0" --fail-on error $(pids_of haz)
check 1 "hazard, --fail-on warning: exit 1" --fail-on warning $(pids_of haz)
check 1 "error: exit 1 with --fail-on error" --fail-on error $(pids_of err)
grep -q '^# 2 findings: 1 error, 0 hazard, 1 warning; 1 at or above error$' "$CBT_TMP/out"; ok $? "the count line"
check 1 "all processes together: exit 1" $(pids_of clean) $(pids_of warn) $(pids_of haz) $(pids_of err)
is "$(grep -c -v '^#' "$CBT_TMP/out")" 7 "7 findings listed"
"$CBT" check --pid 1 "$T" >"$CBT_TMP/out" 2>&1; is $? 0 "a pid with no events: clean"
"$CBT" check "$T" "$CBT_TMP/missing" >"$CBT_TMP/out" 2>"$CBT_TMP/err"; is $? 2 "unreadable input: exit 2"
done_testing
