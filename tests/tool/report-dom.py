# SPDX-License-Identifier: MIT
"""Checks a page of `cubatchtrace report` against the summary of the same
trace (`cubatchtrace summary --json`), with the standard library only.

  report-dom.py [--no-plots] [--procname NAME] [--text SUMMARY.txt] PAGE.html DOM.html SUMMARY.json

PAGE.html is the file as written, DOM.html the DOM a browser made of it
(chromium --dump-dom).  Prints one line per check, "WHAT<TAB>WANT<TAB>GOT",
for tests/tool/report.sh to compare (tests/tool/common.sh does the same with
expect.py); what it wants is computed here from the summary JSON alone.
With --text, the text summary of the same trace too: the page's tables in
human units must read, cell for cell, as the text summary's.
"""
import html.parser
import json
import re
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# the elements the page itself writes outside its SVG: anything else came from trace text left unescaped
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "br", "code", "nav", "a",
             "table", "thead", "tbody", "tr", "th", "td", "figure", "figcaption", "details", "summary", "strong",
             "script", "svg"}
FETCHING = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset", "background",
            "ping", "cite", "longdesc", "manifest", "codebase", "archive", "icon", "profile"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def all_text(self):
        return "".join(c if isinstance(c, str) else c.all_text() for c in self.children)

    def find(self, tag=None, **attrs):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and
                all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def in_svg(self):
        p = self.parent
        while p is not None:
            if p.tag == "svg":
                return True
            p = p.parent
        return False


class Tree(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def table_rows(table):
    """The cells of a table's rows, header first, as text."""
    return [[c.all_text() for c in tr.children if isinstance(c, Node) and c.tag in ("td", "th")]
            for tr in table.find("tr")]


def same_number(cell, v):
    try:
        return int(cell) == v if isinstance(v, int) else float(cell) == v
    except ValueError:
        return False


def numbered(rows, key):
    return [r for r in rows or [] if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]


def expected_plots(d):
    """Plot id -> (header, rows): exactly what the page must plot, from the summary alone."""
    gpu = d.get("gpu") or {}
    out = {}
    ds = numbered(gpu.get("by_direction_op_size"), "gbps")
    if ds:
        dirs = []
        for r in ds:
            if r["direction"] not in dirs:
                dirs.append(r["direction"])
        out["gpu-bandwidth-op-size-direction"] = (
            ["direction", "name", "low", "gbps"],
            [[k, r["name"], r["low"], r["gbps"]] for k in dirs for r in ds if r["direction"] == k])
    else:
        bs = numbered(gpu.get("by_op_size"), "gbps")
        if bs:
            out["gpu-bandwidth-op-size"] = (["name", "gbps"], [[r["name"], r["gbps"]] for r in bs])
        bd = numbered(gpu.get("by_direction"), "gbps")
        if bd:
            out["gpu-bandwidth-direction"] = (["name", "gbps"], [[r["name"], r["gbps"]] for r in bd])
    ot = gpu.get("over_time") or {}
    streams = ot.get("streams") or []
    if streams and ot.get("bucket_ns", 0) > 0:
        # the 12 busiest, busiest first; ties in the summary's order
        order = sorted(range(len(streams)), key=lambda i: (-sum(streams[i]["gpu_ns"]), i))[:12]
        nb = max(len(streams[i]["gpu_ns"]) for i in order)
        w, t0 = ot["bucket_ns"], ot["start_ns"]
        rows = []
        for b in range(nb):
            g = [streams[i]["gpu_ns"][b] if b < len(streams[i]["gpu_ns"]) else 0 for i in order]
            rows.append([b, t0 + b * w] + g)
        out["gpu-over-time"] = (["bucket", "start_ns"] + [streams[i]["name"] for i in order], rows)
    bh = numbered(d.get("batch_size_histogram"), "batches")
    if bh:
        out["batch-size-histogram"] = (["name", "batches"], [[r["name"], r["batches"]] for r in bh])
    fi = numbered(d.get("findings"), "count")
    if fi:
        out["findings"] = (["rule", "count"], [[r["rule"], r["count"]] for r in fi])
    return out


# The text summary's tables (title prefix) and the page's (table id), with the
# columns that hold the same figure: (text column, page column) pairs.  The
# text's "%" is the page's "% of all" without its " %"; the page leaves out
# the device table's peer op counts.
OP_COLS = [(0, 0), (1, 1), (2, 2), (3, 3), (5, 5), (6, 6), (7, 7)]
GPU_COLS = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (5, 4), (6, 6)]  # the text: host time, then GPU time
TEXT_TABLES = [
    ("# Ops by direction (", "table-by_direction", OP_COLS),
    ("# Ops by memory kinds (", "table-by_memkinds", OP_COLS),
    ("# Bytes by device (", "table-by_device", [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (6, 5), (8, 6)]),
    ("# Batch-size histogram (", "table-batch_size_histogram", OP_COLS),
    ("# Op-size histogram (", "table-op_size_histogram", OP_COLS),
    ("# Batches by API variant and door\n", "table-by_api_door", OP_COLS),
    ("# GPU time by direction (", "table-gpu-by_direction", GPU_COLS),
    ("# GPU time by memory kinds (", "table-gpu-by_memkinds", GPU_COLS),
    ("# GPU time by op size (", "table-gpu-by_op_size", GPU_COLS),
    ("# GPU time by CUDA stream\n", "table-gpu-by_stream", GPU_COLS),
    ("# GPU time by device (", "table-gpu-by_device", GPU_COLS),
]


def text_tables(text):
    """Title prefix -> the rows (cells) of that table of the text summary; the header is the first row."""
    out = {}
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        for prefix, _, _ in TEXT_TABLES:
            if (lines[0] + "\n").startswith(prefix):
                body = [l for l in lines if not l.startswith("#")]
                out[prefix] = [[c.strip() for c in l.split(" | ")] for l in body if l != "(none)"]
    return out


def check_text(check, dom, text):
    tabs = text_tables(text)
    for prefix, tid, cols in TEXT_TABLES:
        t = dom.find("table", id=tid)
        what = "%s: each cell as the text summary's %s table" % (tid, prefix.strip("#(\n "))
        if prefix not in tabs:
            check(what, "a table in both", "none in the text" if t else "in neither")
            continue
        page = [[c.replace("\u2013", "-") for c in r] for r in table_rows(t[0])[1:]] if t else []
        want = [[r[tc] for tc, _ in cols] for r in tabs[prefix][1:]]
        got = [[r[pc] for _, pc in cols] if len(r) > max(pc for _, pc in cols) else r for r in page]
        check(what, want, got)
        if cols is OP_COLS and t:
            check("%s: the %% column as the text's" % tid, [r[4] for r in tabs[prefix][1:]],
                  [r[4].replace(" %", "") for r in page])
    # the GPU totals: the text's "# batches timed: ..." line
    m = re.search(r"^# batches timed: \d+ \(\d+ ops, (.*?)\): GPU time (.*?), host time in the driver (.*?), (.*)$",
                  text, re.M)
    kv = {r[0]: r[1] for r in table_rows(dom.find("table", id="table-gpu-totals")[0])} \
        if dom.find("table", id="table-gpu-totals") else {}
    check("table-gpu-totals: bytes, GPU time, host time, bandwidth as the text's batches-timed line",
          list(m.groups()) if m else "no such line",
          [kv.get(k) for k in ("Bytes", "GPU time", "Host time in the driver", "Bandwidth (bytes / GPU time)")])


def main():
    args = sys.argv[1:]
    plots = "--no-plots" not in args
    args = [a for a in args if a != "--no-plots"]
    procname = text_path = None
    if args[0] == "--procname":
        procname, args = args[1], args[2:]
    if args[0] == "--text":
        text_path, args = args[1], args[2:]
    page_path, dom_path, summary_path = args
    raw = open(page_path, encoding="utf-8").read()
    dom = Tree(open(dom_path, encoding="utf-8").read()).root
    d = json.load(open(summary_path))
    res = []

    def check(what, want, got):
        res.append((what, str(want), str(got)))

    h1 = dom.find("h1")
    check("the page loaded: its heading", "cubatchtrace report", h1[0].all_text() if h1 else "(no h1)")

    # the summary embedded in the page is the summary
    emb = dom.find("script", id="cubatchtrace-summary")
    try:
        got = json.loads(emb[0].all_text()) if emb else None
        same = "equal" if got == d else "differs"
    except ValueError as e:
        same = "not JSON: %s" % e
    check("the embedded summary JSON equals summary --json", "equal", same)
    check("the embedded summary: type application/json",
          "application/json", emb[0].attrs.get("type") if emb else "(none)")
    check("no other script element", 1, len(dom.find("script")))

    # trace text never became markup: outside the SVGs only the page's own elements
    stray = sorted({n.tag for n in dom.walk() if n.tag != "#root" and not n.in_svg() and n.tag not in PAGE_TAGS})
    check("no element but the page's own (trace text escaped)", "[]", stray)
    if procname is not None:
        t = dom.find("table", id="table-by_process_rank")
        cells = [r[2] for r in table_rows(t[0])[1:]] if t else []
        check("the process table names the process as text", "[%r]" % procname, cells)

    ids = [n.attrs["id"] for n in dom.walk() if "id" in n.attrs]
    check("every element id is unique (the SVGs' own included)", "[]", sorted({i for i in ids if ids.count(i) > 1}))

    # nothing that a browser would fetch from the network
    net = []
    for n in Tree(raw).root.walk():
        for k, v in n.attrs.items():
            if k in FETCHING and v and not v.startswith("#"):
                net.append("%s=%s" % (k, v))
            if k == "style" and re.search(r"url\(|@import", v or ""):
                net.append("style=%s" % v)
    for st in re.findall(r"<style[^>]*>(.*?)</style>", raw, re.S):
        net += re.findall(r"url\([^#)][^)]*\)|@import[^;]*", st)
    net += re.findall(r"<link\b[^>]*>", raw)
    check("nothing fetched: every src/href is a fragment, no url() or @import", "[]", net)

    # totals and a table in human units: the exact counts where they are counts
    totals = {r[0]: r[1] for r in table_rows(dom.find("table", id="table-totals")[0])} if dom.find(
        "table", id="table-totals") else {}
    for k, key in (("Batches", "batches"), ("Ops", "ops"), ("Processes", "processes")):
        check("totals: %s" % k, d[key], totals.get(k))
    t = dom.find("table", id="table-by_direction")
    got = [(r[0], r[2]) for r in table_rows(t[0])[1:]] if t else []
    check("ops by direction: names and ops", [(r["name"], str(r["ops"])) for r in d["by_direction"]], got)

    # the GPU section's table by direction and op size: the summary's rows, in its order
    if "by_direction_op_size" in (d.get("gpu") or {}):
        t = dom.find("table", id="table-gpu-by_direction_op_size")
        got = [r[:4] for r in table_rows(t[0])[1:]] if t else []
        check("table-gpu-by_direction_op_size: direction, op size, batches, ops as the summary's",
              [[r["direction"], r["name"], str(r["batches"]), str(r["ops"])]
               for r in d["gpu"]["by_direction_op_size"]], got)
    # the findings: each rule most serious first, then the most frequent, with its first finding's call site,
    # words and fix as the summary gives them
    sev = {"error": 0, "hazard": 1, "warning": 2}
    fi = sorted(enumerate(d.get("findings") or []), key=lambda x: (sev.get(x[1]["severity"], 3), -x[1]["count"], x[0]))
    t = dom.find("table", id="table-findings")
    got = [r[:6] for r in table_rows(t[0])[1:]] if t else []
    check("table-findings: severity, rule, count, first call site, words, fix as the summary's, most serious first",
          [[f["severity"], f["rule"], str(f["count"]), f["first_seen"].get("caller") or "\u2013",
            f["first_seen"].get("words") or "\u2013", f.get("fix") or "\u2013"] for i, f in fi], got)
    # the advice: each rule, the most frequent first, with its first call site, words, saving and fix
    adv = (d.get("advice") or {}).get("rules") or []
    if adv:
        ai = sorted(enumerate(adv), key=lambda x: (-x[1]["count"], x[0]))
        t = dom.find("table", id="table-advice")
        got = [r[:6] for r in table_rows(t[0])[1:]] if t else []
        check("table-advice: rule, count, first call site, words, saving, fix as the summary's, most frequent first",
              [[a["rule"], str(a["count"]), a["first_seen"].get("caller") or "\u2013",
                a["first_seen"].get("words") or "\u2013", a.get("saving_words") or "\u2013", a.get("fix") or "\u2013"]
               for i, a in ai], got)
    if text_path is not None:
        text = open(text_path, encoding="utf-8").read()
        heads = re.findall(r"^(error|hazard|warning) (\w+): \d+ findings?; the first at (.*), batch \d+ of ", text, re.M)
        check("table-findings: the rules and their first call sites as the text summary's",
              [list(h) for h in heads], [[r[0], r[1], r[3]] for r in got])
        check_text(check, dom, text)

    # the plots: which, each an SVG, each beside exactly the numbers it plots
    want = expected_plots(d) if plots else {}
    figs = {f.attrs.get("id", "")[5:]: f for f in dom.find("figure") if f.attrs.get("id", "").startswith("plot-")}
    check("the plots drawn", sorted(want), sorted(figs))
    if not plots:
        check("no SVG at all", 0, len(dom.find("svg")))
    for pid, (head, rows) in sorted(want.items()):
        f = figs.get(pid)
        if f is None:
            continue
        svg = f.find("svg")
        check("%s: an inline SVG with drawn paths" % pid, True, bool(svg) and len(svg[0].find("path")) > 0)
        tab = f.find("table", id="data-" + pid)
        got = table_rows(tab[0]) if tab else []
        check("%s: the plotted numbers' header" % pid, head, got[0] if got else None)
        body = got[1:]
        check("%s: as many rows as the summary has" % pid, len(rows), len(body))
        bad = []
        for want_row, got_row in zip(rows, body):
            ok = len(want_row) == len(got_row) and all(
                (g == w) if isinstance(w, str) else same_number(g, w) for w, g in zip(want_row, got_row))
            if not ok:
                bad.append((want_row, got_row))
        check("%s: every plotted number equals the summary's" % pid, "[]", bad)
        # the names the plot shows (tick labels, key) are text in the SVG
        texts = {t.all_text().strip() for t in svg[0].find("text")} if svg else set()
        names = set(head[2:]) if pid == "gpu-over-time" else \
            {r[0] for r in rows} if pid != "gpu-bandwidth-op-size-direction" else {r[0] for r in rows}
        check("%s: every name is text in the SVG" % pid, "[]", sorted(names - texts))

    for what, w, g in res:
        print("%s\t%s\t%s" % (what, w, g))


main()
