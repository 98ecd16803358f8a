#!/bin/sh
# SPDX-License-Identifier: MIT
# The advice rules (severity advice, tools/analyse/advice.c), one process of
# cbt-gen each, through the real provider: each pattern draws its advice with
# the exact count, words and saving; the same pattern just below its
# threshold draws none, and so do plain batches.  Savings: measured in the
# trace (the generator's driver_ns) for unbatched_run and tiny_copies; from a
# cost table for the others, "no measured cost table" without one.  Then how
# the outputs carry it: the summary's table, check (listed, exit 0 unless
# --fail-on advice, SARIF level note, waivable), --advice off, thresholds.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session adv || { ok 1 "session starts"; done_testing; }
# driver_ns 1000 per call (cbt-gen's default)
gen_run run12 n=12,ops=1
gen_run run7 n=7,ops=1
gen_run run5ops n=12,ops=5
gen_run tiny n=1,ops=100,bytes=1024
gen_run tiny63 n=1,ops=63,bytes=1024
gen_run tiny4k n=1,ops=100,bytes=4096
gen_run huge n=1,ops=101,bytes=8192
gen_run huge16k n=1,ops=16384,bytes=8192
gen_run huge16k1 n=1,ops=16385,bytes=8192
gen_run ovl n=1,ops=2,bytes=262144,opflags=1
gen_run ovl128 n=1,ops=2,bytes=131072,opflags=1
gen_run noflag n=1,ops=2,bytes=262144
gen_run anyd n=1,ops=1,order=ANY
gen_run anyh n=1,ops=1,src=host_pinned,order=ANY
gen_run pinned n=1,ops=1,src=host_pinned,order=STREAM
gen_run pg n=1,ops=2,bytes=1048576,src=host_pageable,order=DURING_API_CALL
gen_run pgsmall n=1,ops=1,bytes=524288,src=host_pageable,order=DURING_API_CALL
gen_run sd n=1,ops=1,bytes=1048576
gen_run peer n=1,ops=1,bytes=1048576,dstdev=1
gen_run clean n=3,ops=16,bytes=65536
# GPU time: 4 MiB in 1 ms (4000 MiB/s), and in 40 us
gen_run lowbw --gpu-process n=1,ops=8,bytes=524288,gpu=timed,gpu_ns=1000000
gen_run fastbw --gpu-process n=1,ops=8,bytes=524288,gpu=timed,gpu_ns=40000
gen_stop adv
T=$(trace_of adv)

# advice NAME [OPTIONS]: the summary's advice of process NAME, "rule:count:saving_ns" each, sorted
advice() {
    _n=$1; shift
    "$CBT" summary --json "$@" $(pids_of "$_n") "$T" 2>"$CBT_TMP/err" | "$PYTHON3" -c '
import json, sys
a = json.load(sys.stdin)["advice"]
print(" ".join(sorted("%s:%d:%s" % (r["rule"], r["count"], r["saving_ns"]) for r in a["rules"])))'
}
# words NAME RULE [OPTIONS]: the first advice of RULE in words, as the summary JSON gives it
words() {
    _n=$1 _r=$2; shift 2
    "$CBT" summary --json "$@" $(pids_of "$_n") "$T" 2>"$CBT_TMP/err" | "$PYTHON3" -c '
import json, sys
a = json.load(sys.stdin)["advice"]
print([r["first_seen"]["words"] for r in a["rules"] if r["rule"] == sys.argv[1]][0])' "$_r"
}

# ---- each rule: drawn, with its figures; none just below its threshold
# The runs' calls are back to back, but a loaded machine may pause the
# generator past run_gap_us (100 us) between two: the gap is held far above
# it here (tests/unit/test_advice.c holds the gap itself).
GAP="--advice run_gap_us=1000000"
is "$(advice run12 $GAP)" "unbatched_run:1:11000" "12 one-op calls in a row: unbatched_run, saving at most 11 x the cheapest call (11000 ns)"
is "$(words run12 unbatched_run $GAP)" \
   "12 calls in a row on one stream and thread, each of at most 1 op, which took 12.0 µs of host time in the driver; estimated saving: at most 11.0 µs of host time, bounded by the trace (a cost table says how much)" \
   "unbatched_run in words: calls, host time, saving (without a cost table: the bound)"
is "$(advice run7 $GAP)" "" "7 calls: below run_calls (8), no advice"
is "$(advice run7 $GAP --advice run_calls=7)" "unbatched_run:1:6000" "--advice run_calls=7: the 7 calls draw it (saving 6000 ns)"
is "$(advice run5ops $GAP)" "" "12 calls of 5 ops: above run_copies (4), no advice"
is "$(advice run5ops $GAP --advice run_copies=5)" "unbatched_run:1:11000" "--advice run_copies=5: they draw it"
is "$(advice tiny)" "tiny_copies:1:990" "100 copies of 1 KiB: tiny_copies, saving 99 of the 100 copies' share of 1000 ns"
is "$(words tiny tiny_copies)" \
   "100 ops of the batch move less than 4096 bytes each; estimated saving: 990 ns of host time, measured in the trace" \
   "tiny_copies in words"
is "$(advice tiny63)" "" "63 tiny copies: below tiny_copies (64), no advice"
is "$(advice tiny4k)" "" "copies of 4096 bytes are not tiny (less than tiny_bytes, 4096)"
is "$(advice huge)" "" "101 copies: far below huge_copies (16384)"
is "$(advice huge16k)" "" "16384 copies: not more than huge_copies, no advice"
is "$(advice huge16k1)" "huge_batch:1:None" "16385 copies: huge_batch at the default threshold"
is "$(advice huge --advice huge_copies=100)" "huge_batch:1:None" "--advice huge_copies=100: huge_batch, a risk (no saving)"
is "$(words huge huge_batch --advice huge_copies=100)" \
   "the batch has 101 ops, more than 100; estimated saving: none: a risk, not a cost" "huge_batch in words"
is "$(advice ovl)" "overlap_flag_large_copy:1:None" "the flag on 2 copies of 256 KiB: overlap_flag_large_copy"
is "$(words ovl overlap_flag_large_copy)" \
   "2 ops (the first: op 0) move more than 131072 bytes with PREFER_OVERLAP_WITH_COMPUTE; estimated saving: unknown: no measured cost table" \
   "without a cost table the saving is unknown, and says why"
is "$(advice ovl128)" "" "the flag on copies of 128 KiB: not above overlap_bytes, no advice"
is "$(advice noflag)" "" "copies of 256 KiB without the flag: no advice"
is "$(advice anyd)" "any_order_device_source:1:None" "ANY on a device source: any_order_device_source"
is "$(words anyd any_order_device_source)" \
   "1 op (op 0) reads a device or managed source with srcAccessOrder ANY (whether work on the stream was still writing it is not in the trace); estimated saving: none: a risk, not a cost" \
   "any_order_device_source in words"
is "$(advice anyh)" "deferred_host_source:1:None" "ANY on a pinned host source: deferred_host_source"
is "$(words anyh deferred_host_source)" \
   "1 op (op 0) reads a host source with srcAccessOrder ANY (whether it was freed or changed before the stream passed the copy is not in the trace); estimated saving: none: a risk, not a cost" \
   "deferred_host_source in words: what the trace cannot tell"
is "$(advice pinned)" "" "STREAM on a pinned host source (the ordinary copy): no advice"
is "$(advice pg)" "pageable_source:1:None" "2 MiB from pageable memory: pageable_source"
is "$(words pg pageable_source)" \
   "the batch copies 2097152 bytes from pageable host memory, 1048576 or more (from op 0 on); estimated saving: unknown: no measured cost table" \
   "pageable_source in words"
is "$(advice pgsmall)" "" "512 KiB from pageable memory: below pageable_bytes, no advice"
is "$(advice sd)" "same_device_engine_copy:1:None" "1 MiB device to device on one GPU: same_device_engine_copy"
is "$(advice peer)" "" "1 MiB from device 0 to device 1: not within one GPU, no advice"
is "$(advice clean)" "" "plain batches (3 of 16 copies of 64 KiB, STREAM, device to device): no advice"
is "$(advice lowbw)" "" "a GPU-timed batch without a cost table: low_bandwidth has no peak to judge it by"
is "$("$CBT" summary --json $(pids_of lowbw) "$T" 2>/dev/null | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["advice"]["gpu_unjudged"])')" \
   1 "JSON: the batch it could not judge is counted"
"$CBT" summary $(pids_of lowbw) "$T" >"$CBT_TMP/sum.txt" 2>&1
is "$(grep '^# low_bandwidth' "$CBT_TMP/sum.txt")" "# low_bandwidth: 1 GPU-timed batches not judged: no measured cost table" \
   "the summary says so"

# ---- a cost table: the savings it gives (figures of this test, not of a GPU; keys the tool does not use are passed over)
cat >"$CBT_TMP/costs.txt" <<EOF
# figures made up for the test
gpu=Test GPU
driver=0.0
measured=never
cuda_driver_api=13000
copies=16
batch_d2d_gibps=100
batch_d2d_overlap_gibps=50
sm_d2d_gibps=1000
batch_h2d_gibps=20
batch_h2d_pageable_gibps=10
batch_call_ns=300
batch_copy_ns=700
EOF
C="--advice-costs $CBT_TMP/costs.txt"
# each of 11 calls more than one pays the table's 300 ns once
is "$(advice run12 $C)" "unbatched_run:1:3300" "with the table: unbatched_run saves 11 x batch_call_ns (3300 ns)"
is "$(words run12 unbatched_run $C | sed 's/.*estimated saving: //')" \
   "3.30 µs of host time, from the cost table (what a call pays once)" "unbatched_run with the table, in words"
# never more than the trace's bound: 11 x the cheapest call (1000 ns)
sed 's/^batch_call_ns=300$/batch_call_ns=5000/' "$CBT_TMP/costs.txt" >"$CBT_TMP/costs-big.txt"
is "$(advice run12 --advice-costs "$CBT_TMP/costs-big.txt")" "unbatched_run:1:11000" \
   "with a table's call cost above the cheapest call: the trace's bound (11000 ns)"
printf 'gpu=G\ndriver=D\nbatch_call_ns=-3\n' >"$CBT_TMP/bad-ns.txt"
"$CBT" summary --advice-costs "$CBT_TMP/bad-ns.txt" "$T" >/dev/null 2>"$CBT_TMP/err"
is "$?:$(cat "$CBT_TMP/err")" "2:cubatchtrace summary: --advice-costs $CBT_TMP/bad-ns.txt: line 3: batch_call_ns is not a time in ns" \
   "a cost table's time that is not one: exit 2, one line"
# 2 x 256 KiB at 50 rather than 100 GiB/s: 9765.625 - 4882.8125 ns
is "$(advice ovl $C)" "overlap_flag_large_copy:1:4883" "with the table: the flag's cost on 512 KiB, 4883 ns"
# 2 MiB at 10 rather than 20 GiB/s: 195312.5 - 97656.25 ns
is "$(advice pg $C)" "pageable_source:1:97656" "with the table: pinning 2 MiB saves 97656 ns"
# 1 MiB at 100 rather than 1000 GiB/s: 9765.625 - 976.5625 ns
is "$(advice sd $C)" "same_device_engine_copy:1:8789" "with the table: an SM copy of 1 MiB saves 8789 ns"
# 4 MiB in 1000000 ns of GPU time, at 100 GiB/s 39062.5 ns
is "$(advice lowbw $C)" "low_bandwidth:1:960938" "with the table: 4000 MiB/s, below 50 % of 100 GiB/s: low_bandwidth"
is "$(words lowbw low_bandwidth $C)" \
   "the batch moved its bytes at 4000 MiB/s of GPU time, against 102400 MiB/s measured for its direction and memory; estimated saving: 961 µs of GPU time, from the cost table" \
   "low_bandwidth in words"
"$CBT" summary --json $C $(pids_of lowbw) "$T" 2>/dev/null | "$PYTHON3" -c '
import json, sys
r = json.load(sys.stdin)["advice"]["rules"][0]
sys.exit(0 if r["first_seen"]["caller"].startswith("cbt-gen.c:") else 1)'
ok $? "low_bandwidth: placed at its batch's call site"
is "$(advice fastbw $C)" "" "4 MiB in 40 us (98 GiB/s): not below half the table's 100 GiB/s, no advice"
is "$(advice lowbw $C --advice low_bandwidth_percent=3)" "" "--advice low_bandwidth_percent=3: 3.9 % of the peak is not below it"
is "$(advice lowbw $C --advice low_bandwidth_bytes=8M)" "" "--advice low_bandwidth_bytes=8M: 4 MiB batches are not judged"
"$CBT" summary $C $(pids_of sd) "$T" >"$CBT_TMP/sum.txt" 2>&1
is "$(grep '^# cost table: ' "$CBT_TMP/sum.txt")" "# cost table: $CBT_TMP/costs.txt (Test GPU, driver 0.0, measured never)" \
   "the summary says which table it used"
grep -q '^same_device_engine_copy | *1 | cbt-gen.c:[0-9]* (gen_site_a, cbt-gen+0x[0-9a-f]*) *| 8.79 µs of GPU time, from the cost table$' \
    "$CBT_TMP/sum.txt"
ok $? "the advice table: rule, count, first call site, estimated saving"
"$CBT" summary $(pids_of sd) "$T" >"$CBT_TMP/sum.txt" 2>&1
is "$(grep '^# cost table: ' "$CBT_TMP/sum.txt")" \
   "# cost table: none: no measured cost table (--advice-costs FILE, made by bench/advice-costs.sh)" \
   "without one it says there is none"
printf 'batch_d2d_gibps=100\n' >"$CBT_TMP/bad.txt"
"$CBT" summary --advice-costs "$CBT_TMP/bad.txt" "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a table that does not say its GPU" $? "$CBT_TMP/out" "$CBT_TMP/err" "does not say its GPU and driver"

# ---- check: listed, exit 0 unless --fail-on advice; SARIF note; waivable
"$CBT" check $(pids_of run12) "$T" >"$CBT_TMP/chk.txt" 2>&1
is "$?" 0 "check: advice alone leaves the exit status 0"
is "$(grep -c '^advice unbatched_run: host=.* batch=0 op=- side=none caller=cbt-gen.c:[0-9]* (gen_site_a, cbt-gen+0x[0-9a-f]*): 12 calls in a row .*; estimated saving: at most 11.0 µs of host time, bounded by the trace (a cost table says how much); fix: gather ' "$CBT_TMP/chk.txt")" 1 \
   "check lists the advice: where, words, saving, fix"
is "$(grep '^# 1 advice' "$CBT_TMP/chk.txt")" \
   "# 1 advice (not findings: the exit status counts them only with --fail-on advice)" "check counts it apart"
is "$(tail -n 1 "$CBT_TMP/chk.txt")" "# 0 findings: 0 error, 0 hazard, 0 warning; 0 at or above hazard" \
   "the findings line is unchanged"
"$CBT" check --fail-on advice $(pids_of run12) "$T" >"$CBT_TMP/chk.txt" 2>&1
is "$?" 1 "check --fail-on advice: exit 1"
"$CBT" check --format sarif $(pids_of run12) "$T" >"$CBT_TMP/chk.sarif" 2>/dev/null
is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
run = d["runs"][0]
rules = {r["id"]: r["defaultConfiguration"]["level"] for r in run["tool"]["driver"]["rules"]}
r = run["results"]
print(len(r), r[0]["ruleId"], r[0]["level"], rules["unbatched_run"], r[0]["properties"]["finding"]["saving_ns"],
      r[0]["properties"]["finding"]["saving_from"])' "$CBT_TMP/chk.sarif")" "1 unbatched_run note note 11000 bound" \
   "SARIF: the advice is a result of level note, its rule too, with its saving"
printf '{"waivers": [{"rule": "unbatched_run", "function": "gen_site_a", "reason": "batched elsewhere"}]}\n' >"$CBT_TMP/w.json"
"$CBT" check --fail-on advice --waivers "$CBT_TMP/w.json" $(pids_of run12) "$T" >"$CBT_TMP/chk.txt" 2>&1
is "$?" 0 "a waiver covers the advice: --fail-on advice passes"
grep -q '^# waived (batched elsewhere): advice unbatched_run: ' "$CBT_TMP/chk.txt"; ok $? "the waived advice is a comment line"

# ---- report: the advice table, as the summary JSON has it (report-dom.py checks it cell for cell in a browser's DOM)
"$CBT" report --no-plots -o "$CBT_TMP/page.html" $(pids_of run12) $(pids_of tiny) "$T" >/dev/null 2>&1
is "$?" 0 "report --no-plots of two processes with advice"
is "$("$PYTHON3" -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    rows, cell, inside, text = [], None, False, ""
    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id") == "table-advice": self.inside = True
        elif self.inside and tag == "tr": self.rows.append([])
        elif self.inside and tag == "td": self.text = ""; self.cell = True
    def handle_endtag(self, tag):
        if tag == "table": self.inside = False
        elif self.inside and tag == "td": self.rows[-1].append(self.text); self.cell = None
    def handle_data(self, data):
        if self.cell: self.text += data
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
print(" ".join("%s:%s:%s" % (r[0], r[1], r[4]) for r in p.rows if r))' "$CBT_TMP/page.html")" \
   "unbatched_run:1:at most 11.0 µs of host time, bounded by the trace (a cost table says how much) tiny_copies:1:990 ns of host time, measured in the trace" \
   "the report's advice table: rule, count and estimated saving"

# ---- the defaults cubatchtrace(1) documents are those the summary uses
is "$("$CBT" summary --json $(pids_of clean) "$T" 2>/dev/null | "$PYTHON3" -c '
import json, re, sys
th = json.load(sys.stdin)["advice"]["thresholds"]
man = open(sys.argv[1]).read()
doc = {}
for name, v in re.findall(r"^\.BR (\w+) \" \((\w+)\)\"$", man, re.M):
    m = re.match(r"(\d+)([kM]?)$", v)
    doc[name] = int(m.group(1)) * {"": 1, "k": 1024, "M": 1 << 20}[m.group(2)]
doc["run_gap_ns"] = doc.pop("run_gap_us") * 1000
th.pop("low_bandwidth_percent") == doc.pop("low_bandwidth_percent") or doc.update(percent="differs")
print("same" if doc == th else "differ: man %s, summary %s" % (doc, th))' "$top_srcdir/docs/cubatchtrace.1")" "same" \
   "every threshold and default of cubatchtrace(1) is the summary's"

# ---- off, and bad thresholds
is "$(advice run12 --advice off)" "" "--advice off: none"
"$CBT" summary --advice run_calls=0 "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "--advice run_calls=0" $? "$CBT_TMP/out" "$CBT_TMP/err" "expected a whole number above 0" summary
"$CBT" check --advice nosuch=1 "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "--advice nosuch=1" $? "$CBT_TMP/out" "$CBT_TMP/err" "expected off or one of run_calls" check
done_testing
