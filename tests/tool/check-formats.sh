#!/bin/sh
# SPDX-License-Identifier: MIT
# check --format json and --format sarif, and --waivers.  One trace holds two
# hazards from two call sites: examples/demo's overlapping batch (demo.c) and
# tests/tool/client_cxx.cc's (run one after the other under one
# `cubatchtrace run`).
#  - SARIF: the members SARIF 2.1.0 requires, rule metadata from the
#    catalogue (catalog.h), results at file:line; and, when the pydantic-sarif
#    package (a model of the official SARIF 2.1.0 schema) is installed, the
#    whole log validated by it (shown first to reject a broken log).
#  - JSON: findings, totals and exit status as the text output has them.
#  - waivers: a waiver of one call site turns only that finding into a waived
#    one: check still fails on the other; waiving both passes; a waiver of
#    another rule or another place changes nothing; bad waiver files are
#    usage errors (exit 2).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
DEMO="$top_builddir/examples/demo"
[ -x "$DEMO" ] || skip_all "examples/demo not built"
BIN="$CBT_TMP/bin/client_cxx"
build_client_cxx "$BIN" || skip_all "$CBT_CXX_FAIL"
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$CBT" run -o "$CBT_TMP/t" -- sh -c "\"$DEMO\" && \"$BIN\"" >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
is "$?" 0 "cubatchtrace run -- sh -c 'demo && client_cxx' exits 0"
T="$CBT_TMP/t"
demo_line=$(grep -n 'CHECK(cuMemcpy3DBatchAsync' "$top_srcdir/examples/demo.c" | cut -d: -f1)
cxx_line=$(grep -n '// CALL-SITE' "$top_srcdir/tests/tool/client_cxx.cc" | cut -d: -f1)

"$CBT" check "$T" >"$CBT_TMP/check.txt" 2>&1
is "$?" 1 "check (text) exits 1: two hazards"
is "$(grep -c '^hazard overlap_dst_dst' "$CBT_TMP/check.txt")" 2 "two finding lines"
grep '^hazard' "$CBT_TMP/check.txt" | grep -q "caller=demo.c:$demo_line (batch, demo+0x"; ok $? "the demo's call site is demo.c:$demo_line"
grep '^hazard' "$CBT_TMP/check.txt" | grep -q ': ops 0 and 1 write the same bytes: both destinations cover byte 0x[0-9a-f]* (op 0: [0-9]* bytes, extent [0-9x]*; op 1: [0-9]* bytes, extent [0-9x]*); fix: give each op a destination of its own'
ok $? "the overlap in words: its ops, the byte in hex, each op's size, and the fix"
grep -q 'value=\|limit=' "$CBT_TMP/check.txt"; is $? 1 "no raw value= or limit= pair"

# ---- SARIF
"$CBT" check --format sarif --source-root "$top_srcdir" "$T" >"$CBT_TMP/check.sarif" 2>"$CBT_TMP/err"
is "$?" 1 "check --format sarif exits 1 as the text does"
is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "nothing on stderr"
# the default source root is the current directory
(cd "$top_srcdir/tests" && "$CBT" check --format sarif "$T") >"$CBT_TMP/check-cwd.sarif" 2>/dev/null
"$PYTHON3" - "$CBT_TMP/check.sarif" "$CATALOG" "$demo_line" "$cxx_line" "$top_srcdir" "$CBT_TMP/check-cwd.sarif" >"$CBT_TMP/sarif.tap" <<'PY'
import json, os, re, sys
path, catalog, demo_line, cxx_line = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
srcroot, cwd_log = os.path.realpath(sys.argv[5]), sys.argv[6]
def check(cond, what):
    print(("ok" if cond else "not ok") + "\t" + what)
try:
    d = json.load(open(path))
except Exception as e:
    check(False, "the SARIF log is JSON: %s" % e); sys.exit()
check(d.get("version") == "2.1.0", "log: version 2.1.0")
check(isinstance(d.get("runs"), list) and len(d["runs"]) == 1, "log: runs, one run")
run = d["runs"][0]
drv = run.get("tool", {}).get("driver", {})
check(drv.get("name") == "cubatchtrace", "run.tool.driver.name (required)")
src = open(catalog).read().replace("\\\n", " ")
# a rule's text may be several adjacent string literals: joined, as the compiler does
cat = [(n, v, sv, "".join(re.findall(r'"([^"]*)"', lits)))
       for n, v, sv, lits in re.findall(r'X\((\w+), (\d+), CBT_SEV_(\w+),\s*((?:"[^"]*"\s*)+)\)', src)]
rules = drv.get("rules", [])
check(len(rules) == len(cat) > 20, "driver.rules: one per catalogue rule (%d)" % len(cat))
levels = {"ERROR": "error", "HAZARD": "warning", "WARNING": "note"}
check(all(r.get("id") == n and r.get("shortDescription", {}).get("text") == t
          and r.get("defaultConfiguration", {}).get("level") == levels[s]
          and r.get("properties", {}).get("severity") == s.lower()
          for r, (n, v, s, t) in zip(rules, sorted(cat, key=lambda c: int(c[1])))),
      "driver.rules: id, text, level and severity from catalog.h, in catalogue order")
res = run.get("results")
check(isinstance(res, list) and len(res) == 2, "run.results: the two findings")
res = res or []
check(all(isinstance(r.get("message", {}).get("text"), str) and r["message"]["text"] for r in res),
      "every result has message.text (required)")
check(all(rules[r["ruleIndex"]]["id"] == r["ruleId"] == "overlap_dst_dst" for r in res),
      "every result's ruleId and ruleIndex name the rule")
check(all(r.get("level") == "warning" for r in res), "a hazard is level warning")
locs = sorted((l["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1],
               l["physicalLocation"]["region"]["startLine"]) for r in res for l in r.get("locations", []))
check(locs == sorted([("demo.c", demo_line), ("client_cxx.cc", cxx_line)]),
      "physical locations: demo.c:%d and client_cxx.cc:%d (got %s)" % (demo_line, cxx_line, locs))
arts = [l["physicalLocation"]["artifactLocation"] for r in res for l in r.get("locations", [])]
base = run.get("originalUriBaseIds", {}).get("SRCROOT", {}).get("uri")
check(base == "file://" + srcroot + "/", "originalUriBaseIds: SRCROOT is the --source-root as a file:// URI (%s)" % base)
check(len(arts) == 2 and all(a.get("uriBaseId") == "SRCROOT" and not a["uri"].startswith(("file:", "/"))
                             and os.path.isfile(os.path.join(srcroot, a["uri"])) for a in arts),
      "artifact locations: paths relative to the source root, uriBaseId SRCROOT, naming the files (%s)"
      % [a.get("uri") for a in arts])
fixes = dict((n, "".join(re.findall(r'"([^"]*)"', lits)))
             for n, lits in re.findall(r'X\((\w+),\s*((?:"[^"]*"\s*)+)\)', src[src.index("CBT_RULE_FIX_LIST(X)"):]))
check(all(r.get("fullDescription", {}).get("text", "").startswith(r["shortDescription"]["text"])
          and len(r["fullDescription"]["text"]) > len(r["shortDescription"]["text"])
          and r.get("help", {}).get("text") == "To fix: %s." % fixes.get(r["id"]) for r in rules)
      and len(fixes) == len(rules),
      "every rule has a shortDescription, a fullDescription and help: the fix from catalog.h")
try:
    cw = json.load(open(cwd_log))["runs"][0]
    cbase = cw["originalUriBaseIds"]["SRCROOT"]["uri"]
except Exception as e:
    cbase = str(e)
check(cbase == "file://" + os.path.join(srcroot, "tests") + "/", "without --source-root: the current directory (%s)" % cbase)
inv = run.get("invocations", [])
check(len(inv) == 1 and inv[0].get("executionSuccessful") is True and inv[0].get("exitCode") == 1,
      "invocations: executionSuccessful (required), exitCode 1")
PY
while IFS="$(printf '\t')" read -r st what; do
    [ "$st" = ok ]; ok $? "$what"
done <"$CBT_TMP/sarif.tap"
[ -s "$CBT_TMP/sarif.tap" ]; ok $? "the SARIF checks ran"
if "$PYTHON3" -c 'import pydantic_sarif.model' 2>/dev/null; then
    validate='import json, sys
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as Sarif
Sarif.model_validate(json.load(open(sys.argv[1])))'
    "$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1])); d["runs"][0]["results"][0]["level"] = "hazard"; del d["runs"][0]["tool"]["driver"]["name"]
json.dump(d, open(sys.argv[2], "w"))' "$CBT_TMP/check.sarif" "$CBT_TMP/broken.sarif"
    "$PYTHON3" -c "$validate" "$CBT_TMP/broken.sarif" >/dev/null 2>&1
    [ $? -ne 0 ]; ok $? "pydantic-sarif rejects a broken log (a level SARIF lacks, no driver name)"
    "$PYTHON3" -c "$validate" "$CBT_TMP/check.sarif" >"$CBT_TMP/pyd.err" 2>&1
    ok $? "pydantic-sarif (the SARIF 2.1.0 schema as a model) accepts the log"
    [ -s "$CBT_TMP/pyd.err" ] && sed 's/^/# /' "$CBT_TMP/pyd.err" | head -20
else
    ok 0 "# SKIP pydantic-sarif not installed (scripts/install-deps installs it)"
fi

# ---- JSON
"$CBT" check --format json "$T" >"$CBT_TMP/check.json" 2>/dev/null
is "$?" 1 "check --format json exits 1"
is "$("$PYTHON3" -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]
sites = sorted("%s:%s" % (os.path.basename(f["site"]["file"]), f["site"]["line"]) for f in d["findings"])
print(d["schema"], len(d["findings"]), t["hazard"], t["serious"], t["waived"], d["exit_status"], " ".join(sites))' "$CBT_TMP/check.json")" \
   "$(printf 'cubatchtrace-check 2 2 2 0 1 %s' "$(printf 'client_cxx.cc:%s\ndemo.c:%s\n' "$cxx_line" "$demo_line" | sort | tr '\n' ' ' | sed 's/ $//')")" \
   "JSON: schema, 2 findings, 2 hazards, 2 serious, none waived, exit 1, the call sites"

# ---- waivers
waivers() { printf '{"waivers": [%s]}\n' "$1" >"$CBT_TMP/w.json"; }
waivers '{"rule": "overlap_dst_dst", "file": "demo.c", "reason": "the demo overlaps on purpose"}'
"$CBT" check --waivers "$CBT_TMP/w.json" "$T" >"$CBT_TMP/w1.txt" 2>&1
is "$?" 1 "waiving the demo's finding: check still fails on client_cxx's"
is "$(grep -c '^hazard overlap_dst_dst' "$CBT_TMP/w1.txt")" 1 "one finding line left: $(grep '^hazard' "$CBT_TMP/w1.txt" | grep -o 'caller=[^ ]*')"
grep '^hazard' "$CBT_TMP/w1.txt" | grep -q 'caller=client_cxx.cc:'; ok $? "the finding left is client_cxx's"
grep -q '^# waived (the demo overlaps on purpose): hazard overlap_dst_dst: .*caller=demo.c:' "$CBT_TMP/w1.txt"
ok $? "the waived finding is a comment line with its reason"
grep -q '^# 2 findings: 0 error, 2 hazard, 0 warning; 1 at or above hazard and not waived; 1 waived$' "$CBT_TMP/w1.txt"
ok $? "the totals count 1 waived"
waivers '{"rule": "overlap_*", "file": "demo.c", "reason": "demo"}, {"rule": "overlap_dst_dst", "object": "client_cxx", "function": "app::Copier<*>::copy*", "reason": "a library we cannot change"}'
"$CBT" check --waivers "$CBT_TMP/w.json" "$T" >"$CBT_TMP/w2.txt" 2>&1
is "$?" 0 "both waived: check passes"
is "$(grep -c '^hazard' "$CBT_TMP/w2.txt")" 0 "no finding line left"
"$CBT" check --format sarif --waivers "$CBT_TMP/w.json" "$T" >"$CBT_TMP/w2.sarif" 2>/dev/null
is "$?" 0 "both waived: check --format sarif passes too"
is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sorted(s["justification"] for r in d["runs"][0]["results"] for s in r.get("suppressions", []) if s["kind"] == "external"))' "$CBT_TMP/w2.sarif")" \
   "['a library we cannot change', 'demo']" "SARIF: each waived result carries an external suppression with the reason"
"$CBT" check --format json --waivers "$CBT_TMP/w.json" "$T" >"$CBT_TMP/w2.json" 2>/dev/null
is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["totals"]["waived"], d["totals"]["serious"], [w["matched"] for w in d["waivers"]], d["exit_status"])' "$CBT_TMP/w2.json")" \
   "2 0 [1, 1] 0" "JSON: 2 waived, 0 serious, each waiver matched once, exit 0"
waivers '{"rule": "overlap_src_dst", "file": "demo.c", "reason": "another rule"}, {"rule": "overlap_dst_dst", "file": "other.c", "reason": "another place"}, {"rule": "overlap_dst_dst", "function": "main", "reason": "another function"}'
"$CBT" check --waivers "$CBT_TMP/w.json" "$T" >"$CBT_TMP/w3.txt" 2>&1
is "$?" 1 "waivers of another rule, file or function change nothing: exit 1"
is "$(grep -c '^hazard' "$CBT_TMP/w3.txt")" 2 "both findings still printed"
is "$(grep -c 'it matches nothing' "$CBT_TMP/w3.txt")" 3 "each unused waiver is said"
bad_waivers() { # DESCRIPTION PATTERN CONTENT
    printf '%s\n' "$3" >"$CBT_TMP/bad.json"
    "$CBT" check --waivers "$CBT_TMP/bad.json" "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    one_line_error "$1" $? "$CBT_TMP/out" "$CBT_TMP/err" "$2"
}
bad_waivers "a waiver without a reason" '"rule" and "reason" are required' '{"waivers": [{"rule": "overlap_dst_dst", "file": "x.c"}]}'
bad_waivers "a waiver without a call site" 'never accepts a rule everywhere' '{"waivers": [{"rule": "overlap_dst_dst", "reason": "r"}]}'
bad_waivers "a mistyped rule" 'names no rule; did you mean "overlap_dst_dst"?' '{"waivers": [{"rule": "overlap_dst_dts", "file": "x.c", "reason": "r"}]}'
bad_waivers "a mistyped member" 'unknown member "fucntion"; did you mean "function"?' '{"waivers": [{"rule": "overlap_dst_dst", "fucntion": "f", "reason": "r"}]}'
bad_waivers "not JSON" '^cubatchtrace check: --waivers .*: line 1' 'waivers: yes'
done_testing
