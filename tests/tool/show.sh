#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace show --records`: every batch, op and finding decoded, one
# key=value record per line (a finding's words and fix last, quoted); the reader puts batches back together from chunks in any
# order, validates them, compares the shim's inline findings, and never
# crashes on chunks that do not fit the format (handmade traces,
# tests/tool/mkbatches.py).  Then the real thing: clients under the shim over
# the test double, and cbt-gen through the real provider.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/doors/doors.sh"
MK="$top_srcdir/tests/tool/mkbatches.py"
RULES=$(sed -n 's/^#define CBT_RULES_VERSION \([0-9]*\).*/\1/p' "$CATALOG")

# key K [K...]: from the records on stdin, the values of these keys, space-separated
key() {
    awk -v keys="$*" 'BEGIN { n = split(keys, k, " ") }
        { delete v; for (i = 2; i <= NF; i++) { j = index($i, "="); v[substr($i, 1, j - 1)] = substr($i, j + 1) }
          s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") v[k[i]]; print s }'
}
show() { "$CBT" show --records "$@" >"$CBT_TMP/show.out" 2>"$CBT_TMP/show.err"; }
summary_line() { grep "^# $1" "$CBT_TMP/sum.out"; }

# ---- usage
"$CBT" show --help >"$CBT_TMP/out" 2>&1; is $? 0 "show --help exits 0"
grep -q -- '--pid' "$CBT_TMP/out"; ok $? "show --help documents --pid"
"$CBT" show >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "show without a trace" $? "$CBT_TMP/out" "$CBT_TMP/err" "no trace given" show

# ---- chunks that do not fit the format: one batch per way (mkbatches.py malformed)
"$PYTHON3" "$MK" "$CBT_TMP/mal" malformed
show "$CBT_TMP/mal"
is $? 0 "malformed chunks: show exits 0"
is "$(cat "$CBT_TMP/show.err")" "" "malformed chunks: nothing on stderr"
grep '^batch ' "$CBT_TMP/show.out" | key id state | sort -n | sed 's/^6 \(complete\|malformed\)$/6 complete-or-malformed/' >"$CBT_TMP/states"
is "$(cat "$CBT_TMP/states")" "0 complete
1 malformed
2 malformed
3 malformed
4 malformed
5 malformed
6 complete-or-malformed
7 malformed
8 malformed
9 no_header
10 given_up
11 complete
12 incomplete
13 pending" "malformed chunks: each batch's state (a chunk twice: malformed, or late and counted as such)"
is "$(grep '^op .* id=11 ' "$CBT_TMP/show.out" | key i src extent bytes)" "0 POINTER:device:0:0x10000 256x1x1 256
1 POINTER:device:0:0x10100 256x1x1 256
2 POINTER:device:0:0x10200 256x1x1 256" "a batch whose second chunk came from the other stream: its three ops in order"
is "$(grep -c '^finding ' "$CBT_TMP/show.out")" 0 "malformed chunks: no finding (malformed batches are not validated)"
"$CBT" summary "$CBT_TMP/mal" >"$CBT_TMP/sum.out" 2>&1; is $? 0 "malformed chunks: summary exits 0"
is "$(summary_line 'malformed batches')" "# malformed batches: 8 (chunks that do not fit the event format: not validated)" \
    "malformed chunks: the summary says so once, with the count"
is "$(summary_line 'pending batches')" "# pending batches: 1 (the process ended inside the driver call)" \
    "a batch recorded as pending without its batch_end: the process ended inside the driver call"
is "$(summary_line 'incomplete batches')" "# incomplete batches: 1 (ops missing at the end of the trace: not validated)" \
    "a batch whose ops never came: incomplete"
is "$(summary_line 'batches not validated')" \
    "# batches not validated: 1 (over the reader's memory cap, CUBATCHTRACE_READ_MEMORY)" \
    "ops_recorded 2^40: never held, not validated"
"$CBT" check "$CBT_TMP/mal" >/dev/null 2>&1; is $? 0 "malformed chunks: check exits 0 (no finding)"

# ---- nothing read: empty sequences in the very first event
"$PYTHON3" "$MK" "$CBT_TMP/unread" unread
show "$CBT_TMP/unread"
is "$?:$(cat "$CBT_TMP/show.err")" "0:" "empty sequences first: show exits 0, nothing on stderr"
is "$(grep '^finding ' "$CBT_TMP/show.out" | key rule severity value limit)" "stream_null error 0 0
ops_not_read warning 0 4" "no op read, NULL stream: the batch-level error, then ops_not_read (0 of 4)"
is "$(grep '^finding .* rule=stream_null ' "$CBT_TMP/show.out" | sed 's/.* inline=- //')" \
    'words="hStream is NULL (the legacy default stream)" fix="pass a stream you created, or CU_STREAM_PER_THREAD"' \
    "a finding record ends with its words and its fix, quoted"
"$CBT" show "$CBT_TMP/unread" >"$CBT_TMP/people.out" 2>&1
is "$(grep -c '^batch \|^finding ' "$CBT_TMP/people.out"):$(grep -c '^  error stream_null: hStream is NULL' "$CBT_TMP/people.out")" "0:1" \
    "without --records: the layout for people (no record, the finding in words)"

# ---- memory stays bounded: 300 batches waiting at once, 1 MiB cap
"$PYTHON3" "$MK" "$CBT_TMP/wait" waiting 300
"$CBT" summary "$CBT_TMP/wait" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line 'batches:') / $(summary_line 'ops:')" "# batches: 300 / # ops: 38400" "300 waiting batches: all counted"
summary_line 'batches not validated' >/dev/null; is $? 1 "300 waiting batches, default cap: all validated"
CUBATCHTRACE_READ_MEMORY=1 "$CBT" summary "$CBT_TMP/wait" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line 'batches:') / $(summary_line 'ops:')" "# batches: 300 / # ops: 38400" \
    "300 waiting batches, 1 MiB cap: the same totals"
n=$(summary_line 'batches not validated' | sed 's/^# batches not validated: \([0-9]*\) .*/\1/')
[ "${n:-0}" -gt 0 ] && [ "${n:-0}" -le 300 ]; ok $? "300 waiting batches, 1 MiB cap: some not validated ($n), said so"
CUBATCHTRACE_READ_MEMORY=1 show "$CBT_TMP/wait"
is "$(grep '^batch ' "$CBT_TMP/show.out" | key state | sort -u | tr '\n' ' ')" "complete given_up " \
    "300 waiting batches, 1 MiB cap: shown complete or given up"

# ---- versions: a newer format is refused, older rules are checked with the current ones
"$PYTHON3" "$MK" "$CBT_TMP/newfmt" version 999 "$RULES"
for c in summary check show; do
    "$CBT" $c "$CBT_TMP/newfmt" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    one_line_error "$c: a trace of event format 999" $? "$CBT_TMP/out" "$CBT_TMP/err" "recorded in event format 999, newer than"
done
"$PYTHON3" "$MK" "$CBT_TMP/oldrules" version 2 1
"$CBT" summary "$CBT_TMP/oldrules" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line rules)" "# rules: recorded with catalogue v1, checked with v$RULES" "older rules: the summary says which"
show "$CBT_TMP/oldrules"
is "$(grep '^batch ' "$CBT_TMP/show.out" | key rules state)" "1 complete" "older rules: the batch is read and checked"

# ---- the real thing
if ! want_sessiond; then
    _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $CBT_NO_SESSIOND"
    done_testing
fi

# strict mode: op 1 of 3 is bad; the shim validated inline and stopped reading after op 1
traced "refuse-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" refuse
show --pid "$pid" "$CBT_TMP/refuse-$$"
is $? 0 "strict client: show exits 0"
is "$(grep '^batch ' "$CBT_TMP/show.out" | key id api outcome result num_ops recorded fail_idx validated state)" \
    "0 cuMemcpy3DBatchAsync_v2 refused CUDA_ERROR_INVALID_VALUE 3 2 - 1 complete
1 cuMemcpy3DBatchAsync refused CUDA_ERROR_INVALID_VALUE 3 2 1 1 complete
2 cuMemcpy3DBatchAsync_v2 forwarded CUDA_SUCCESS 3 3 - 1 complete" "strict client: the three batches"
is "$(grep '^op .* id=0 ' "$CBT_TMP/show.out" | key i extent order bytes src_rowLength)" "0 1024x1x1 STREAM 1024 0
1 1024x1x1 STREAM 1024 100" "strict client: the refused batch's two recorded ops, rowLength 100 on op 1"
is "$(grep -c '^finding .* image=0x[0-9a-f]\{8\} words="[^"]*" fix="[^"]*"$' "$CBT_TMP/show.out")" 4 \
    "strict client: each finding line ends with the tag of its process image, then its words and fix"
is "$(grep '^finding ' "$CBT_TMP/show.out" | sed 's/ image=0x[0-9a-f]* words=.*$//')" \
    "finding vpid=$pid id=0 rule=ops_not_read severity=warning op=- other_op=- side=none value=2 limit=3 inline=-
finding vpid=$pid id=0 rule=row_length_too_small severity=error op=1 other_op=- side=src value=100 limit=1024 inline=1
finding vpid=$pid id=1 rule=ops_not_read severity=warning op=- other_op=- side=none value=2 limit=3 inline=-
finding vpid=$pid id=1 rule=row_length_too_small severity=error op=1 other_op=- side=src value=100 limit=1024 inline=1" \
    "strict client: the read-time findings (2 of 3 ops read, op 1 bad), the same as the shim's (inline=1; ops_not_read is not compared)"
"$CBT" summary --pid "$pid" "$CBT_TMP/refuse-$$" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line 'inline findings')" "# inline findings checked: 2, disagreeing: 0" \
    "strict client: the summary compared the shim's findings with its own"
"$CBT" summary --json --pid "$pid" "$CBT_TMP/refuse-$$" >"$CBT_TMP/sum.json" 2>&1
is "$("$PYTHON3" -c 'import json,sys; d = json.load(open(sys.argv[1]))["inline_findings"]; print(d["checked"], d["disagreeing"])' "$CBT_TMP/sum.json")" \
    "2 0" "strict client: the same two numbers in JSON"

# observe mode, a source the driver crashes on: recorded as pending before the call, never ended
traced "crash-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_strict" crash
is "$st" 139 "unmapped source: the client dies of SIGSEGV"
show --pid "$pid" "$CBT_TMP/crash-$$"
is "$(grep '^batch ' "$CBT_TMP/show.out" | key id outcome num_ops recorded state)" "0 pending 1 1 pending" \
    "unmapped source: the batch is pending: the process ended inside the driver call"
is "$(grep '^op ' "$CBT_TMP/show.out" | key i src extent)" "0 POINTER:unmapped:-1:0xdead0000 256x4x2" \
    "unmapped source: the op shows the unmapped source"
is "$(grep '^finding ' "$CBT_TMP/show.out" | key rule severity op side value)" "pointer_unmapped error 0 src 0xdead0000" \
    "unmapped source: the reader finds pointer_unmapped on op 0"
"$CBT" summary --pid "$pid" "$CBT_TMP/crash-$$" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line 'pending')" "# pending batches: 1 (the process ended inside the driver call)" "unmapped source: the summary says so"

# every operand kind (client_direct's mixed batch, id 1): decoded field by field
traced "direct-$$" "$CLIENTS/client_direct"
show --pid "$pid" "$CBT_TMP/direct-$$"
is "$(grep '^batch .* id=1 ' "$CBT_TMP/show.out" | key num_ops recorded outcome state)" "6 6 forwarded complete" "mixed batch: 6 ops"
is "$(grep '^op .* id=1 ' "$CBT_TMP/show.out" | sed 's/:0x[0-9a-f]*/:ADDR/g' |
      key i src dst extent order bytes src_rowLength src_layerHeight dst_rowLength dst_layerHeight src_array dst_array)" \
    "0 POINTER:device:0:ADDR POINTER:device:0:ADDR 64x4x2 STREAM 512 128 8 96 6  
1 POINTER:host_pinned:-1:ADDR POINTER:device:0:ADDR 256x4x1 STREAM 1024 0 0 0 0  
2 POINTER:host_pageable:-1:ADDR POINTER:device:0:ADDR 200x3x2 DURING_API_CALL 1200 300 0 0 0  
3 POINTER:device:0:ADDR ARRAY:array:-1:ADDR+2,1,0 8x4x2 STREAM 256 0 0    16x8x2*4
4 ARRAY:array:-1:ADDR+0,2,1 POINTER:device:0:ADDR 16x4x1 STREAM 256   0 0 16x8x2*4 
5 ARRAY:array:-1:ADDR+4,0,0 ARRAY:array:-1:ADDR+0,0,0 12x8x2 STREAM 768     16x8x2*4 16x8x2*4" \
    "mixed batch: every op decoded (kinds, devices, offsets, pitches, arrays, bytes)"
set -- $(grep '^op .* id=1 i=0 ' "$CBT_TMP/show.out" | key src src_alloc | sed 's/.*:\(0x[0-9a-f]*\) \(0x[0-9a-f]*\)+.*/\1 \2/')
is "$(($1 - $2))" 64 "mixed batch: op 0's source is 64 bytes into its allocation"

# cbt-gen through the real provider: a 1000-op batch whose chunks hop between CPUs (streams),
# pending with and without batch_end, inline findings right and wrong, fewer ops read than passed
gen_session g || { ok 1 "session starts"; done_testing; }
gen_run g --hop n=1,ops=1000 n=1,ops=3,pending=lost n=1,ops=2,pending=1 \
    n=2,ops=4,violate=overlap_dst_dst,inline=1 n=1,ops=4,violate=overlap_dst_dst,inline=wrong n=1,ops=5,numops=9,recorded=5
gen_stop g
show $(pids_of g) "$(trace_of g)"
is "$(grep '^batch ' "$CBT_TMP/show.out" | key id outcome num_ops recorded validated state | sort -n)" \
    "0 forwarded 1000 1000 0 complete
1 pending 3 3 0 pending
2 forwarded 2 2 0 complete
3 forwarded 4 4 1 complete
4 forwarded 4 4 1 complete
5 forwarded 4 4 1 complete
6 forwarded 9 5 0 complete" "cbt-gen: every batch put back together; batch_end supersedes the pending outcome"
is "$(grep -c '^op .* id=0 ' "$CBT_TMP/show.out") $(grep '^op .* id=0 ' "$CBT_TMP/show.out" | key i | sort -n | uniq | wc -l | tr -d ' ')" \
    "1000 1000" "cbt-gen: the 1000-op batch has its 1000 ops, each once, though its chunks hopped streams"
is "$(grep -c ' inline=0 ' "$CBT_TMP/show.out") $(grep -c '^inline_finding ' "$CBT_TMP/show.out")" "1 1" \
    "cbt-gen: the wrong inline list shows as one read-time finding the shim missed and one it made up"
is "$(grep '^finding .* id=6 ' "$CBT_TMP/show.out" | key rule value limit)" "ops_not_read 5 9" \
    "cbt-gen: 5 of 9 ops recorded: ops_not_read, value 5, limit 9"
"$CBT" summary $(pids_of g) "$(trace_of g)" >"$CBT_TMP/sum.out" 2>&1
is "$(summary_line 'inline findings')" "# inline findings checked: 3, disagreeing: 2" "cbt-gen: inline findings checked and disagreeing"
is "$(summary_line 'ops:')" "# ops: 1022" "cbt-gen: every recorded op counted once"
done_testing
