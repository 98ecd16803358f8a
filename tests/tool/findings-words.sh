#!/bin/sh
# SPDX-License-Identifier: MIT
# One wording per rule, in every output: a trace with a batch for each rule
# the generator can make (all but the 1D attribute and ABI rules, whose words
# tests/unit/test_finding_words checks), read by check (text, JSON, SARIF),
# show (its layout for people and its --records) and summary (text and
# JSON, whose rules carry their fix and their first finding).  Each finding
# carries in each output the same words and fix (those of check --format
# json), its call site as FILE:LINE, and no placeholder (no backtick, no raw
# value= or limit= pair but the records' own fields).  The
# summary lists the rules most serious first, then by count, each with its
# first call site, and says how to see them all (check).  The advice these
# batches draw (runs of small batches) is left out (--advice off): its words
# are tests/tool/advice.sh's.  show's filters
# (--batch, --rule, --pid) select what they name.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session w || { ok 1 "session starts"; done_testing; }
gen_run w n=1,ops=2,violate=overlap_dst_dst n=1,ops=2,violate=overlap_src_dst n=1,ops=1,violate=overlap_self \
    n=1,ops=1,violate=row_length_too_small n=1,ops=1,shape=64x4x2,violate=layer_height_too_small \
    n=1,ops=1,violate=extent_zero n=1,ops=1,violate=access_order_invalid n=1,ops=1,violate=op_flags_invalid \
    n=1,ops=1,violate=pointer_null n=1,ops=1,violate=device_out_of_bounds \
    n=1,ops=1,src=array,violate=array_null n=1,ops=1,src=array,violate=array_out_of_bounds \
    n=1,ops=1,violate=lochint_ignored n=1,ops=1,violate=lochint_invalid \
    n=3,ops=1,src=host_pageable n=1,ops=1,order=DURING_API_CALL n=1,ops=1,src=unmapped \
    n=1,ops=1,stream=0 n=1,ops=1,stream=1 n=1,ops=1,flags=1 n=1,ops=0,numops=0 \
    n=1,ops=2,numops=5,recorded=2 n=1,ops=1,result=CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
gen_run other n=2,ops=2,violate=overlap_dst_dst
gen_stop w
T=$(trace_of w)
P=$(pids_of w)
"$CBT" check --format json --advice off $P "$T" >"$CBT_TMP/c.json" 2>"$CBT_TMP/err"
is $? 1 "check --format json: exit 1"
"$CBT" check --advice off $P "$T" >"$CBT_TMP/c.txt" 2>>"$CBT_TMP/err"
"$CBT" check --format sarif --advice off $P "$T" >"$CBT_TMP/c.sarif" 2>>"$CBT_TMP/err"
"$CBT" show $P "$T" >"$CBT_TMP/s.txt" 2>>"$CBT_TMP/err"
is $? 0 "show: exit 0"
"$CBT" show --pretty $P "$T" >"$CBT_TMP/sp.txt" 2>>"$CBT_TMP/err"
cmp -s "$CBT_TMP/s.txt" "$CBT_TMP/sp.txt"; ok $? "show --pretty: the same as show (the default layout)"
"$CBT" show --records $P "$T" >"$CBT_TMP/s.rec" 2>>"$CBT_TMP/err"
is $? 0 "show --records: exit 0"
"$CBT" summary --advice off $P "$T" >"$CBT_TMP/sum.txt" 2>>"$CBT_TMP/err"
is $? 0 "summary: exit 0"
"$CBT" summary --json --advice off $P "$T" >"$CBT_TMP/sum.json" 2>>"$CBT_TMP/err"
is $? 0 "summary --json: exit 0"
is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "nothing on stderr"

"$PYTHON3" - "$CBT_TMP" "$T" >"$CBT_TMP/words.tap" <<'PY'
import json, os, re, sys
d, trace = sys.argv[1], sys.argv[2]
def check(cond, what):
    print(("ok" if cond else "not ok") + "\t" + what)
want = """overlap_dst_dst overlap_src_dst overlap_self row_length_too_small layer_height_too_small extent_zero
access_order_invalid op_flags_invalid pointer_null device_out_of_bounds array_null array_out_of_bounds
lochint_ignored lochint_invalid pageable_stream_order during_api_call_device_source pointer_unmapped
stream_null stream_legacy flags_nonzero num_ops_zero ops_not_read refused_in_capture""".split()
fs = json.load(open(d + "/c.json"))["findings"]
rules = {f["rule"] for f in fs}
check(set(want) <= rules, "the trace holds a finding of each of %d rules (missing: %s)" % (len(want), sorted(set(want) - rules)))
text = [l.rstrip("\n") for l in open(d + "/c.txt") if not l.startswith("#")]
sarif = json.load(open(d + "/c.sarif"))["runs"][0]["results"]
# show and the summary wrap long lines: joined back, the words are whole again
show = re.sub(r"\n +", " ", open(d + "/s.txt").read())
# show --records: a finding's words and fix, quoted, end its record
rec = re.compile(r'^finding .* rule=(\w+) .* op=(\S+) .* words="((?:[^"\\]|\\.)*)" fix="((?:[^"\\]|\\.)*)"$')
unq = lambda v: re.sub(r"\\(.)", r"\1", v)
records = [(m.group(1), m.group(2), unq(m.group(3)), unq(m.group(4)))
           for m in (rec.match(l.rstrip("\n")) for l in open(d + "/s.rec") if l.startswith("finding ")) if m]
check(len(records) == len(fs) == sum(1 for l in open(d + "/s.rec") if l.startswith("finding ")),
      "show --records: every finding record ends with its words and fix (%d)" % len(records))
summ = open(d + "/sum.txt").read()
sjson = {r["rule"]: r for r in json.load(open(d + "/sum.json"))["findings"]}
summ_joined = re.sub(r"\n +", " ", summ)
check(len(text) == len(fs) == len(sarif), "check: as many text lines and SARIF results as JSON findings (%d)" % len(fs))
bad = re.compile(r"`|\bvalue=|\blimit=")
def site(f):
    s = f.get("site") or {}
    return (os.path.basename(s["file"]) + ":" + str(s["line"])) if s.get("file") and s.get("line") else None
for rule in sorted(rules):
    mine = [(i, f) for i, f in enumerate(fs) if f["rule"] == rule]
    ok_json = all(f["words"] and f["fix"] and site(f) and not bad.search(f["words"] + f["fix"]) for i, f in mine)
    check(ok_json, "%s: JSON has words, a fix and a FILE:LINE call site, no placeholder" % rule)
    ok_text = all(f"caller={site(f)} (" in text[i] and text[i].endswith(": %s; fix: %s" % (f["words"], f["fix"]))
                  and text[i].startswith("%s %s: " % (f["severity"], rule)) and not bad.search(text[i]) for i, f in mine)
    check(ok_text, "%s: check's text line has the site, the same words and fix, no placeholder" % rule)
    def sarif_ok(i, f):
        r = sarif[i]
        m = r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        return (r["ruleId"] == rule and m.startswith("%s; fix: %s (" % (f["words"], f["fix"])) and not bad.search(m)
                and os.path.basename(loc["artifactLocation"]["uri"]) + ":" + str(loc["region"]["startLine"]) == site(f))
    check(all(sarif_ok(i, f) for i, f in mine), "%s: SARIF's message has the same words and fix, its location the site" % rule)
    check(all(("%s %s: %s" % (f["severity"], rule, f["words"])) in show and ("fix: " + f["fix"]) in show for i, f in mine),
          "%s: show has the same words and fix" % rule)
    check(sorted((rule, "-" if f["op"] is None else str(f["op"]), f["words"], f["fix"]) for i, f in mine) ==
          sorted(r for r in records if r[0] == rule), "%s: show --records has the same words and fix" % rule)
    head = re.search(r"^%s %s: (\d+) findings?; the first at (\S+) " % (re.escape(mine[0][1]["severity"]), rule), summ, re.M)
    check(head and int(head.group(1)) == len(mine) and head.group(2) in {site(f) for i, f in mine}
          and any(("%s %s: " % (f["severity"], rule)) in summ_joined and (" " + f["words"] + " fix: " + f["fix"]) in summ_joined
                  for i, f in mine),
          "%s: the summary has its count, its first call site, the same words and fix" % rule)
    r = sjson.get(rule) or {}
    fst = r.get("first_seen") or {}
    jsite = fst.get("site") or {}
    jsite = os.path.basename(jsite["file"]) + ":" + str(jsite["line"]) if jsite.get("file") and jsite.get("line") else None
    first = [f for i, f in mine if f["batch"] == fst.get("batch") and f["pid"] == fst.get("pid") and f["op"] == fst.get("op")]
    check(r.get("count") == len(mine) and r.get("severity") == mine[0][1]["severity"] and r.get("fix") == mine[0][1]["fix"]
          and first and fst.get("words") == first[0]["words"] and jsite == site(first[0])
          and (fst.get("caller") or "").startswith(jsite + " (") and head and head.group(2) == jsite
          and not bad.search(fst.get("words", "") + r.get("fix", "")),
          "%s: the JSON summary has its count, its fix, its first finding's words and call site FILE:LINE" % rule)
check(not bad.search(show) and not bad.search(summ), "show and the summary: no placeholder anywhere")
check(not any("`" in r[2] + r[3] for r in records), "show --records: no placeholder in the words")
# every batch line of show names its call site, with a time
check(all(re.match(r"^\d+\.\d{6} batch \d+ pid \d+ tid \d+: .* at cbt-gen\.c:\d+ ", l)
          for l in open(d + "/s.txt") if " batch " in l and not l.startswith(("#", " "))),
      "show: each batch line has its time and its call site FILE:LINE")
long = [l.rstrip("\n") for l in open(d + "/s.txt") if len(l.rstrip("\n")) > 100]
check(not long, "show: no line over 100 columns %s" % long[:2])
check(all(re.match(r"^  op \d+ \S+ \S+ -> \S+ .*", l) for l in open(d + "/s.txt") if l.startswith("  op ")) and
      sum(1 for l in open(d + "/s.txt") if l.startswith("  op ")) >= len(want), "show: one op per line")
# the summary: most serious first, then the most frequent
sev = {"error": 0, "hazard": 1, "warning": 2}
order = re.findall(r"^(error|hazard|warning) (\w+): (\d+) findings?; the first at ", summ, re.M)
check(len(order) == len(rules), "summary: one entry per rule (%d)" % len(order))
check(order == sorted(order, key=lambda x: (sev[x[0]], -int(x[2]))), "summary: sorted by severity, then count")
check(order[0][0] == "error" and order[-1][0] == "warning", "summary: the errors first, the warnings last")
check(re.search(r"^# every finding, with its call site: cubatchtrace check .*%s$" % re.escape(os.path.basename(trace)), summ, re.M),
      "summary: how to see every finding (cubatchtrace check TRACE)")
PY
while IFS="$(printf '\t')" read -r st what; do
    [ "$st" = ok ]; ok $? "$what"
done <"$CBT_TMP/words.tap"
[ "$(wc -l <"$CBT_TMP/words.tap")" -gt 100 ]; ok $? "the checks over every rule ran"

# show's filters
nb() { grep -c '^[0-9][0-9.]* batch ' "$1"; }
"$CBT" show --batch 3 $P "$T" >"$CBT_TMP/b.txt" 2>&1
is "$(nb "$CBT_TMP/b.txt")" 1 "show --batch 3: one batch"
grep -q '^[0-9.]* batch 3 ' "$CBT_TMP/b.txt"; ok $? "show --batch 3: batch 3"
"$CBT" show --records --batch 3 --batch 5 $P "$T" | grep '^batch ' | sed 's/.* id=\([0-9]*\) .*/\1/' | tr '\n' ' ' >"$CBT_TMP/b2"
is "$(cat "$CBT_TMP/b2")" "3 5 " "show --batch 3 --batch 5: the records of those two"
"$CBT" show --rule pageable_stream_order $P "$T" >"$CBT_TMP/r.txt" 2>&1
is "$(nb "$CBT_TMP/r.txt")" 3 "show --rule pageable_stream_order: its 3 batches"
is "$(grep -c '^  warning pageable_stream_order: ' "$CBT_TMP/r.txt")" 3 "show --rule: with their findings"
"$CBT" show --rule overlap_dst_dst "$T" >"$CBT_TMP/all.txt" 2>&1
is "$(nb "$CBT_TMP/all.txt")" 3 "show --rule overlap_dst_dst, every process: 3 batches"
"$CBT" show --rule overlap_dst_dst $(pids_of other) "$T" >"$CBT_TMP/o.txt" 2>&1
is "$(nb "$CBT_TMP/o.txt")" 2 "show --rule overlap_dst_dst --pid: the 2 batches of that process"
"$CBT" show --rule overlap_dts_dst "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 2 "show --rule with a name that is no rule: exit 2"
grep -q "^cubatchtrace show: --rule overlap_dts_dst: no such rule" "$CBT_TMP/err"; ok $? "show --rule: says so"
"$CBT" show --batch x "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 2 "show --batch x: exit 2"
"$CBT" show --help | grep -q -- '--rule NAME'; ok $? "show --help documents --rule"
"$CBT" show --help | grep -q -- '--batch N'; ok $? "show --help documents --batch"
"$CBT" show --help | grep -q -- '--records'; ok $? "show --help documents --records"
done_testing
