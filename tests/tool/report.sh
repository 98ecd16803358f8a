#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace report -o FILE.html TRACE`: the demo, traced over the test
# double with GPU time on, made into a page that a real browser (headless
# chromium) loads without a console message; every plot (bandwidth against op
# size with a line per direction among them) is an inline SVG beside a table
# whose numbers equal those of `summary --json` for the same trace
# (tests/tool/report-dom.py), the tables in human units read cell for cell as
# the text summary's, the findings most serious first with the first call
# site (FILE:LINE), words and fix of each rule, the summary itself is embedded
# whole, nothing is fetched from the network, and trace text (a process named
# "<b>demo&", a trace path holding "</script>") stays text.  Then
# --no-plots, gnuplot missing or failing, and outputs that cannot be written.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
DEMO="$top_builddir/examples/demo"
[ -x "$DEMO" ] || skip_all "examples/demo not built"
unset CUBATCHTRACE_SHIM CUBATCHTRACE_GNUPLOT
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
DOMPY="$top_srcdir/tests/tool/report-dom.py"
GNUPLOT=$(command -v gnuplot)
CHROMIUM=$(command -v chromium || command -v chromium-browser)
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
# compare_lines FILE: one test per line "WHAT<TAB>WANT<TAB>GOT" of report-dom.py
compare_lines() {
    while IFS="$(printf '\t')" read -r _k _want _got; do is "$_got" "$_want" "$_k"; done <"$1"
}
# browse PAGE NAME: chromium's DOM of PAGE in $CBT_TMP/NAME.dom, its log in NAME.log
browse() {
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --dump-dom \
        "file://$1" >"$CBT_TMP/$2.dom" 2>"$CBT_TMP/$2.log"
}
# console_messages NAME: the console lines (messages, uncaught errors) of the page in NAME.log
console_messages() { grep -E ':CONSOLE[:(]|Uncaught' "$CBT_TMP/$1.log"; }

# the demo under a name that is markup, into a trace path that closes a script element
mkdir -p "$CBT_TMP/t<"
cp "$DEMO" "$CBT_TMP/<b>demo&"
trace="$CBT_TMP/t</script>"
CUBATCHTRACE_GPU_TIME=1 "$CBT" run -o "$trace" -- "$CBT_TMP/<b>demo&" >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
is "$?" 0 "the demo runs under cubatchtrace run"
"$CBT" summary --json "$trace" >"$CBT_TMP/summary.json"
is "$?" 0 "summary --json of the trace"
"$CBT" summary --all "$trace" >"$CBT_TMP/summary.txt"
is "$?" 0 "summary (text) of the trace"
# the demo's batches go several ways (and one both ways: mixed): a line per direction to draw
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; r=g["by_direction_op_size"]
print(g["processes_timed"], g["batches_timed"] > 0, len({x["direction"] for x in r}) > 1, "mixed" in {x["direction"] for x in r})' "$CBT_TMP/summary.json")" \
   "1 True True True" "the demo is GPU-timed: gpu.by_direction_op_size has rows of several directions, mixed too"

# ---- the page, in a browser
page="$CBT_TMP/out/report.html"
mkdir -p "$CBT_TMP/out"
if [ -z "$GNUPLOT" ]; then
    skip "gnuplot not installed (Debian: gnuplot-nox): the plots are not tested"
elif [ -z "$CHROMIUM" ]; then
    skip "chromium not installed: the page is not loaded in a browser"
else
    "$CBT" report -o "$page" "$trace" >"$CBT_TMP/report.out" 2>"$CBT_TMP/report.err"
    is "$?" 0 "report writes the page"
    is "$(cat "$CBT_TMP/report.out" "$CBT_TMP/report.err")" "" "nothing on stdout or stderr"
    is "$(ls "$CBT_TMP/out")" "report.html" "the page alone, no scratch file left beside it"
    is "$(stat -c %a "$page")" "$(printf '%o' $((0666 & ~$(umask))))" "the page has the umask's mode"
    browse "$page" page
    is "$?" 0 "chromium loads the page"
    is "$(console_messages page)" "" "no console message, no uncaught error"
    "$PYTHON3" "$DOMPY" --procname '<b>demo&' --text "$CBT_TMP/summary.txt" "$page" "$CBT_TMP/page.dom" \
        "$CBT_TMP/summary.json" >"$CBT_TMP/dom.out"
    is "$?" 0 "report-dom.py reads the page"
    compare_lines "$CBT_TMP/dom.out"
    grep -q "^the plots drawn.*'gpu-bandwidth-op-size-direction'" "$CBT_TMP/dom.out"
    ok $? "the demo's page: bandwidth against op size, a line per direction (gpu.by_direction_op_size)"
    is "$(grep -c 'each cell as the text summary' "$CBT_TMP/dom.out")" 11 "the page's tables in human units: all 11 read against the text summary"
    grep -q "</script>" "$CBT_TMP/summary.json"; ok $? "the summary's inputs hold '</script>' (the page embeds it escaped)"

    # the checks can fail: a page with a script error, a summary one number off
    printf '<!DOCTYPE html><html><body><script>not_defined_anywhere();</script></body></html>\n' >"$CBT_TMP/bad.html"
    browse "$CBT_TMP/bad.html" bad
    console_messages bad | grep -q 'Uncaught ReferenceError: not_defined_anywhere'
    ok $? "the console check sees a page's uncaught error"
    "$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["batch_size_histogram"][0]["batches"] += 1; json.dump(d, open(sys.argv[2], "w"))' \
        "$CBT_TMP/summary.json" "$CBT_TMP/off.json"
    "$PYTHON3" "$DOMPY" "$page" "$CBT_TMP/page.dom" "$CBT_TMP/off.json" >"$CBT_TMP/off.out"
    is "$(awk -F'\t' '$2 != $3 {print $1}' "$CBT_TMP/off.out" | sort | tr '\n' ';')" \
       "batch-size-histogram: every plotted number equals the summary's;the embedded summary JSON equals summary --json;" \
       "against a summary with one bin off by one, exactly the histogram and the embedded JSON differ"

    # every GPU plot from a summary that has the GPU section (gpu), whatever the trace had: rows made up
    # from the trace's own, with by_direction_op_size, and without it
    "$PYTHON3" - "$CBT_TMP/summary.json" "$CBT_TMP/gpu.json" "$CBT_TMP/gpu2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def row(r, i, **kw):
    g = 1000 * (i + 1)
    return dict(name=r["name"], **kw, batches=r["batches"], ops=r["ops"], bytes=r["bytes"], gpu_ns=g,
                host_ns=2 * g, gbps=r["bytes"] / g)
gpu = {"processes_timed": 1, "batches_timed": d["batches"], "gpu_ns": 5000, "bytes": d["bytes"], "ops": d["ops"],
       "host_ns": d["driver_ns"], "not_timed": {"capturing": 0, "no_events": 1, "call_failed": 0, "lost": 2,
       "overflow": 0, "not_read_back": 3},
       "by_direction": [row(r, i) for i, r in enumerate(d["by_direction"])] +
                       [dict(name="mixed", batches=1, ops=0, bytes=0, gpu_ns=0, host_ns=0, gbps=None)],
       "by_memkinds": [row(r, i) for i, r in enumerate(d["by_memkinds"])],
       "by_op_size": [row(r, i, low=r["low"], high=r["high"]) for i, r in enumerate(d["op_size_histogram"])],
       "by_stream": [], "by_device": [],
       "over_time": {"bucket_ns": 4096, "start_ns": 1764000000123456789, "streams": [
           {"name": "vm pid 7 stream 0x1 (id 1)", "gpu_ns": [10, 4096, 0, 7]},
           {"name": "vm pid 7 stream 0x2 <i>'\"& (id 2)", "gpu_ns": [4000, 1, 2, 3]}]}}
d["gpu"] = gpu
json.dump(d, open(sys.argv[3], "w"))
gpu["by_direction_op_size"] = [row(r, i, direction="HtoD" if i % 2 else "DtoH",
                                   low=r["low"], high=r["high"]) for i, r in enumerate(d["op_size_histogram"])]
json.dump(d, open(sys.argv[2], "w"))
PY
    for g in gpu gpu2; do
        "$CBT" report --from-json "$CBT_TMP/$g.json" -o "$CBT_TMP/$g.html" 2>"$CBT_TMP/$g.err"
        is "$?" 0 "$g: report --from-json with a GPU section"
        browse "$CBT_TMP/$g.html" "$g"
        is "$(console_messages "$g")" "" "$g: no console message"
        "$PYTHON3" "$DOMPY" "$CBT_TMP/$g.html" "$CBT_TMP/$g.dom" "$CBT_TMP/$g.json" >"$CBT_TMP/$g.out"
        sed -i "s/^/$g: /" "$CBT_TMP/$g.out"
        compare_lines "$CBT_TMP/$g.out"
    done
    grep -q 'the plots drawn.*gpu-bandwidth-op-size-direction' "$CBT_TMP/gpu.out"; ok $? "gpu: bandwidth against op size by direction is drawn"
    grep -q "the plots drawn.*'gpu-bandwidth-direction', 'gpu-bandwidth-op-size', 'gpu-over-time'" "$CBT_TMP/gpu2.out"
    ok $? "gpu2: without by_direction_op_size, bandwidth by op size and by direction, and over time"
fi

# ---- tables only: gnuplot not needed
nogp="$CBT_TMP/nogp"
mkdir -p "$nogp"
ln -s "$(command -v env)" "$nogp/env"
PATH="$nogp" "$CBT" report --no-plots -o "$CBT_TMP/tables.html" "$trace" >"$CBT_TMP/np.out" 2>"$CBT_TMP/np.err"
is "$?" 0 "--no-plots with no gnuplot on PATH: written"
# the findings, as written (no browser needed): the demo's overlap with its call site FILE:LINE as the text
# summary names it, and the words and fix of its first finding as check gives them
"$CBT" check --format json "$trace" >"$CBT_TMP/check.json" 2>/dev/null
"$PYTHON3" - "$CBT_TMP/tables.html" "$CBT_TMP/summary.txt" "$CBT_TMP/check.json" >"$CBT_TMP/findings.out" <<'PY'
import html.parser, json, re, sys
class Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.on, self.rows, self.cell = False, [], None
    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.on = dict(attrs).get("id") == "table-findings"
        elif self.on and tag == "tr":
            self.rows.append([])
        elif self.on and tag == "td":
            self.cell = ""
    def handle_endtag(self, tag):
        if tag == "table":
            self.on = False
        elif self.on and tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
p = Rows()
p.feed(open(sys.argv[1], encoding="utf-8").read())
rows = [r for r in p.rows if r]
m = re.search(r"^hazard overlap_dst_dst: \d+ findings?; the first at (\S+) ", open(sys.argv[2]).read(), re.M)
f = [x for x in json.load(open(sys.argv[3]))["findings"] if x["rule"] == "overlap_dst_dst"]
row = [r for r in rows if r[1:2] == ["overlap_dst_dst"]]
print("the findings table: a row for the demo's overlap_dst_dst\t1\t%d" % len(row))
print("its first call site: FILE:LINE as the text summary's\t%s\t%s" % (m.group(1) if m else "(none)",
      row[0][3].split(" ")[0] if row else "(none)"))
print("its words and fix: those of a finding of check --format json\tTrue\t%s" % (
      bool(row) and any(row[0][4] == x["words"] and row[0][5] == x["fix"] for x in f)))
PY
compare_lines "$CBT_TMP/findings.out"
grep -q '>Every finding, with its call site: <code>cubatchtrace check ' "$CBT_TMP/tables.html"
ok $? "the findings say how to see every finding (cubatchtrace check TRACE)"
if [ -n "$CHROMIUM" ]; then
    browse "$CBT_TMP/tables.html" tables
    is "$(console_messages tables)" "" "--no-plots: no console message"
    "$PYTHON3" "$DOMPY" --no-plots --procname '<b>demo&' --text "$CBT_TMP/summary.txt" "$CBT_TMP/tables.html" \
        "$CBT_TMP/tables.dom" "$CBT_TMP/summary.json" >"$CBT_TMP/tables.out"
    sed -i 's/^/--no-plots: /' "$CBT_TMP/tables.out"
    compare_lines "$CBT_TMP/tables.out"
else
    skip "chromium not installed: the page without plots is not loaded in a browser"
fi

# ---- gnuplot missing, gnuplot failing: exit 2, one line, the output left as it was
echo previous >"$CBT_TMP/keep.html"
PATH="$nogp" "$CBT" report -o "$CBT_TMP/keep.html" "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "no gnuplot on PATH" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*gnuplot not found on PATH.*gnuplot-nox.*--no-plots"
is "$(cat "$CBT_TMP/keep.html")" previous "no gnuplot: the existing output is left as it was"
CUBATCHTRACE_GNUPLOT="$CBT_TMP/no-such-gnuplot" "$CBT" report -o "$CBT_TMP/keep.html" "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "CUBATCHTRACE_GNUPLOT names nothing" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*CUBATCHTRACE_GNUPLOT=.*no-such-gnuplot: no such program"
CUBATCHTRACE_GNUPLOT=false "$CBT" report -o "$CBT_TMP/keep.html" "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "a gnuplot that fails" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*failed drawing the plot of .*(exit status 1)"
is "$(cat "$CBT_TMP/keep.html")" previous "gnuplot failed: the existing output is left as it was"
is "$(ls "$CBT_TMP" | grep -c '^keep\.html\.')" 0 "gnuplot failed: no scratch file left"

# ---- outputs that cannot be written, usage
"$CBT" report --no-plots -o "$CBT_TMP/no-such-dir/r.html" "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "an output in a missing directory" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*no-such-dir/r.html: cannot write there: No such file or directory"
"$CBT" report --no-plots -o "$CBT_TMP/out" "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "an output that is a directory" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*out: not a regular file"
"$CBT" report --no-plots -o /dev/full "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
one_line_error "an output that is a device" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "^cubatchtrace report: .*not a regular file"
"$CBT" report --no-plots "$trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
usage_error_lines "no -o" $? "$CBT_TMP/e.out" "$CBT_TMP/e.err" "no output file given" report
"$CBT" report --no-plots -o "$CBT_TMP/x.html" "$CBT_TMP/no-such-trace" >"$CBT_TMP/e.out" 2>"$CBT_TMP/e.err"
is "$?" 2 "a trace that does not exist: exit 2"
[ ! -e "$CBT_TMP/x.html" ]; ok $? "a trace that does not exist: no page written"
is "$(ls "$CBT_TMP" | grep -c '^x\.html')" 0 "a trace that does not exist: no scratch file left"
done_testing
