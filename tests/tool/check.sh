#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace check`: one line per finding with where it happened; exit 0
# when clean, 1 when a finding at or above --fail-on (default hazard) exists.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session k || { ok 1 "session starts"; done_testing; }
# the ops themselves break the rules; the tool finds it when it reads them
gen_run clean n=5,ops=2 n=1,ops=3,src=host_pageable,order=ANY n=1,ops=2,src=host_pinned,dst=host_pageable
gen_run warn n=2,ops=1,violate=lochint_ignored
gen_run haz n=3,ops=2,violate=overlap_src_dst
gen_run err n=1,ops=1,violate=pointer_null n=1,ops=1,violate=lochint_invalid
# validated inline too, with a wrong list: op 0's finding left out, a locHint finding made up
gen_run inl n=1,ops=3,src=host_pageable,inline=wrong
# validated inline, the right list; a wrong list made with older rules (not compared)
gen_run inlok n=2,ops=3,src=host_pageable,violate=overlap_dst_dst,inline=1
gen_run inlold n=1,ops=2,src=host_pageable,rules=1,inline=wrong
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
la=$(grep -n '^void gen_site_a(' "$top_srcdir/tests/tool/cbt-gen.c" | cut -d: -f1)
grep -q "^hazard overlap_src_dst: host=[^ ]* pid=$P tid=$P batch=0 op=0 other_op=1 side=dst caller=cbt-gen.c:$la (gen_site_a, cbt-gen+0x[0-9a-f]*): op 0 writes bytes that op 1 reads: its destination and the other's source cover byte 0x[0-9a-f]* (op 0: [0-9]* bytes, extent [0-9x]*; op 1: [0-9]* bytes, extent [0-9x]*); fix: read the bytes in a batch before the one that writes them, or write somewhere else$" "$CBT_TMP/out"
ok $? "a finding line says host, pid, tid, batch, op, the other op, caller, then in words what is wrong, both sizes and the fix"
is "$(grep -c "^hazard overlap_src_dst: .* batch=[012] op=0 other_op=1 side=dst " "$CBT_TMP/out")" 3 \
   "op 0 writes what op 1 reads, in each of the 3 batches"
is "$(grep -c '^hazard ' "$CBT_TMP/out")" 3 "three hazard lines"
check 0 "hazard, --fail-on error: exit 0" --fail-on error $(pids_of haz)
check 1 "hazard, --fail-on warning: exit 1" --fail-on warning $(pids_of haz)
check 1 "error: exit 1 with --fail-on error" --fail-on error $(pids_of err)
grep -q '^# 2 findings: 1 error, 0 hazard, 1 warning; 1 at or above error$' "$CBT_TMP/out"; ok $? "the count line"
grep -q "^error pointer_null: .* batch=0 op=0 side=src " "$CBT_TMP/out"; ok $? "the NULL source pointer of batch 0"
grep -q "^warning lochint_invalid: .* batch=1 op=0 side=dst caller=.*: op 0's destination locHint type is 9, not a CUmemLocationType; fix: " "$CBT_TMP/out"; ok $? "the locHint type 9 of batch 1"
check 1 "all processes together: exit 1" $(pids_of clean) $(pids_of warn) $(pids_of haz) $(pids_of err)
is "$(grep -v '^#' "$CBT_TMP/out" | grep -c -v '^advice ')" 7 "7 findings listed (and advice apart, tests/tool/advice.sh)"
# what counts is what the reader's validator finds in the ops, not what the trace says was found;
# inline findings that differ from it (same rules) make exit 3 when nothing is at or above the threshold
check 3 "inline findings that disagree, nothing at or above hazard: exit 3" $(pids_of inl)
check 1 "inline findings that disagree, --fail-on warning: exit 1 (the lower status)" --fail-on warning $(pids_of inl)
is "$(grep -c '^warning pageable_stream_order: .* batch=0 op=[012] side=src ' "$CBT_TMP/out")" 3 \
   "the three pageable sources, op 0's included"
grep -q 'lochint_invalid' "$CBT_TMP/out"; is $? 1 "not the made-up inline finding"
"$CBT" show --records $(pids_of inl) "$T" >"$CBT_TMP/show" 2>"$CBT_TMP/err"
is $? 0 "show exits 0"
is "$(grep '^finding ' "$CBT_TMP/show" | sed 's/.* rule=\([a-z_]*\) .* op=\([0-9]*\) .* inline=\(.\) words=".*" fix=".*"$/\1 \2 \3/' | tr '\n' ,)" \
   "pageable_stream_order 0 0,pageable_stream_order 1 1,pageable_stream_order 2 1," \
   "show: each read-time finding says whether the shim made it too"
is "$(grep -c '^inline_finding .* rule=lochint_invalid .* op=0 .* side=src value=99 limit=4 words="[^"]*" fix="[^"]*"$' "$CBT_TMP/show")" 1 \
   "show: the inline finding the reader did not make"
check 1 "inline findings that agree: the hazards, exit 1" $(pids_of inlok)
is "$(grep -c '^hazard overlap_dst_dst: .* op=0 other_op=1 side=dst ' "$CBT_TMP/out")" 2 "one overlap in each of the 2 batches"
check 0 "inline findings that agree, --fail-on error: exit 0" --fail-on error $(pids_of inlok)
check 0 "a wrong inline list made with older rules is not compared: exit 0" $(pids_of inlold)
is "$(grep -c '^warning pageable_stream_order: ' "$CBT_TMP/out")" 2 "the read-time findings of the current rules"
"$CBT" check --pid 1 "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a pid not in the trace" $? "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events of --pid 1"
"$CBT" check "$T" "$CBT_TMP/missing" >"$CBT_TMP/out" 2>"$CBT_TMP/err"; is $? 2 "unreadable input: exit 2"
done_testing
