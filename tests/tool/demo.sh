#!/bin/sh
# SPDX-License-Identifier: MIT
# End to end: `cubatchtrace run -- examples/demo` over the test double of the
# driver, with the real shim.  The summary's totals must equal what the demo
# itself counts of the batches it issued, the overlapping batch must show up
# as the one overlap_dst_dst finding (found when the trace is read: the shim
# validates nothing in observe mode), and `check` must turn that into exit 1
# (default threshold hazard) but exit 0 with --fail-on error.  Its good
# batches draw no advice; examples/advice draws each of its four once.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
DEMO="$top_builddir/examples/demo"
[ -x "$DEMO" ] || skip_all "examples/demo not built"
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$CBT" run -o "$CBT_TMP/demo" --json -- "$DEMO" >"$CBT_TMP/demo.json" 2>"$CBT_TMP/demo.err"
is "$?" 0 "cubatchtrace run -- examples/demo exits with the demo's status 0"
# with --json the standard output is the JSON alone: the demo's own output goes to stderr
line=$(grep '^demo: ' "$CBT_TMP/demo.err")
ok $? "the demo's own output passes through, on stderr: $line"
grep -q '^demo: ' "$CBT_TMP/demo.json"
ok $((! $?)) "nothing of the demo's output in the JSON"
want=$(echo "$line" | sed -n 's/^demo: \([0-9]*\) batches, \([0-9]*\) ops, \([0-9]*\) bytes; all checked bytes arrived$/\1 \2 \3/p')
[ -n "$want" ]; ok $? "the demo says every checked byte arrived"
cp "$CBT_TMP/demo.json" "$CBT_TMP/summary.json"
got=$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"], d["bytes"])' "$CBT_TMP/summary.json")
is "$got" "$want" "summary batches/ops/bytes equal the demo's own count"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["discarded_events"], d["failed_batches"], d["refused_batches"])' "$CBT_TMP/summary.json")" \
   "0 0 0" "no discarded events, no failed or refused batch"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%s:%d" % (f["rule"], f["severity"], f["count"]) for f in d["findings"]))' "$CBT_TMP/summary.json")" \
   "overlap_dst_dst:hazard:1" "the overlapping batch is the one finding: overlap_dst_dst"
is "$("$PYTHON3" -c 'import json,sys; a=json.load(open(sys.argv[1]))["advice"]; print(a["count"], len(a["rules"]))' "$CBT_TMP/summary.json")" \
   "0 0" "no advice on the demo's batches (pinned STREAM, pageable DURING_API_CALL, small tiles, arrays)"
dirs=$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted("%s=%d" % (r["name"], r["ops"]) for r in d["by_direction"])))' "$CBT_TMP/summary.json")
is "$dirs" "AtoD=1 DtoA=1 DtoD=18 DtoH=3 HtoD=8" "ops by direction: 8 HtoD, 16+2 DtoD, 1 DtoA, 1 AtoD, 3 DtoH"

version=$("$CBT" --version | sed 's/^cubatchtrace //')
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["recorded_by"], d["read_by"])' "$CBT_TMP/summary.json")" \
   "['$version'] $version" "the trace says which version recorded it: the tool's own ($version)"
# the call site: the line of examples/demo.c that calls cuMemcpy3DBatchAsync
line=$(grep -n 'CHECK(cuMemcpy3DBatchAsync' "$top_srcdir/examples/demo.c" | cut -d: -f1)
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["callers"][0]["name"].split(" ")[0])' "$CBT_TMP/summary.json")" \
   "demo.c:$line" "JSON: the call site is demo.c:$line"
"$CBT" summary "$CBT_TMP/demo" | grep -A4 '^# Top call sites' | grep -q "^demo.c:$line (batch, demo+0x[0-9a-f]*) "
ok $? "text: the call site is demo.c:$line (batch, demo+0x...)"
# the default summary is its first screen: the totals, the top table, the findings
"$CBT" summary "$CBT_TMP/demo" >"$CBT_TMP/sum.txt" 2>&1
n=$(wc -l <"$CBT_TMP/sum.txt" | tr -d ' ')
[ "$n" -le 42 ]; ok $? "the default summary fits a screen ($n lines)"
grep -q '^# batches: ' "$CBT_TMP/sum.txt" && grep -q '^# Top call sites' "$CBT_TMP/sum.txt" &&
    grep -q '^# Findings: 1 in 1 rule, most serious first' "$CBT_TMP/sum.txt"
ok $? "default summary: the totals, the top call sites, the findings"
grep -q "^hazard overlap_dst_dst: 1 finding; the first at demo.c:$line (batch, demo+0x[0-9a-f]*), batch [0-9]* of pid [0-9]*\$" "$CBT_TMP/sum.txt" &&
    grep -q '^  fix: give each op a destination of its own' "$CBT_TMP/sum.txt"
ok $? "default summary: the finding with its call site and its fix"
grep -q '^# Batches by API variant\|^# Op-size histogram' "$CBT_TMP/sum.txt"; is $? 1 "default summary: the other tables left for --all"
grep -q '^# more tables: --all ' "$CBT_TMP/sum.txt"; ok $? "default summary: says what --all adds"
"$CBT" summary --all "$CBT_TMP/demo" >"$CBT_TMP/all.txt" 2>&1
grep -q '^# Batches by API variant' "$CBT_TMP/all.txt" && grep -q '^# Op-size histogram' "$CBT_TMP/all.txt" &&
    grep -q '^# Bytes by device' "$CBT_TMP/all.txt" && grep -q '^# Findings: 1 in 1 rule' "$CBT_TMP/all.txt"
ok $? "summary --all: every table, then the findings"
"$CBT" summary --help | grep -q -- '--all'; ok $? "summary --help documents --all"

# observe mode: the shim records the ops and validates nothing; the finding is the reader's
"$BABELTRACE2" "$CBT_TMP/demo" >"$CBT_TMP/demo.txt" 2>&1
is "$(grep -c ' cubatchtrace:finding: ' "$CBT_TMP/demo.txt")" 0 "the trace holds no finding event"
# the batch events (the compact record) as `cubatchtrace show` decodes them
"$CBT" show --records "$CBT_TMP/demo" >"$CBT_TMP/demo.show" 2>&1
is "$(grep -c '^batch .* validated=0 inline_findings=0 ' "$CBT_TMP/demo.show")" "$(echo "$want" | cut -d' ' -f1)" \
   "every batch is recorded as not validated"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["inline_findings"], d["read"]["pending_batches"], d["read"]["malformed_batches"], d["read"]["incomplete_batches"])' "$CBT_TMP/summary.json")" \
   "{'checked': 0, 'disagreeing': 0, 'unchecked': 0} 0 0 0" "every batch whole and validated when read; no inline finding"

"$CBT" check "$CBT_TMP/demo" >"$CBT_TMP/check.out" 2>&1
is "$?" 1 "check exits 1: a hazard at the default threshold"
grep -q 'overlap_dst_dst' "$CBT_TMP/check.out"; ok $? "check names the finding"
grep '^hazard overlap_dst_dst' "$CBT_TMP/check.out" | grep -q " caller=demo.c:$line (batch, "; ok $? "check names its call site demo.c:$line"
"$CBT" check --fail-on error "$CBT_TMP/demo" >/dev/null 2>&1
is "$?" 0 "check --fail-on error exits 0: no error finding"

# examples/advice: each pattern draws its advice once (the fix that follows it draws none)
ADV="$top_builddir/examples/advice"
"$CBT" run -o "$CBT_TMP/advice" --json -- "$ADV" >"$CBT_TMP/advice.json" 2>"$CBT_TMP/advice.err"
is "$?" 0 "cubatchtrace run -- examples/advice exits 0"
grep -q '^advice: all checked bytes arrived$' "$CBT_TMP/advice.err"; ok $? "examples/advice: every checked byte arrived"
# its own process (by name: `run` records every process of the user)
pid=$("$CBT" summary --json --by process "$CBT_TMP/advice" 2>/dev/null | "$PYTHON3" -c '
import json, sys
print([r["name"].split()[2] for r in json.load(sys.stdin)["by_process"] if r["name"].endswith(" advice")][0])')
is "$("$CBT" summary --json --pid "$pid" "$CBT_TMP/advice" 2>/dev/null | "$PYTHON3" -c '
import json, sys
a = json.load(sys.stdin)["advice"]
print(" ".join("%s:%d" % (r["rule"], r["count"]) for r in a["rules"]))')" \
   "unbatched_run:1 tiny_copies:1 overlap_flag_large_copy:1 pageable_source:1" \
   "examples/advice: unbatched_run, tiny_copies, overlap_flag_large_copy and pageable_source, once each"
done_testing
