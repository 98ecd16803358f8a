# SPDX-License-Identifier: MIT
"""The process images of a trace as each output of cubatchtrace tells them.

    images.py CUBATCHTRACE TRACE OUTDIR [--pid PID]...

Runs summary (JSON and text), check (JSON), show, timeline and report on
TRACE, then prints, for each, one line per process image sorted by pid and
image number:

    SOURCE pid=P image=K/N batches=B ops=O findings=F

(findings only where the output tells them per image: check, summary), and
one line of what the reader did not put together, which must be all zeros:

    reader malformed=0 incomplete=0 pending=0 orphan_ops=0 untagged=0 fields=host,pid,image

Images are told apart by the tag each output gives (show, check, timeline:
`image=0x...`) and numbered as the summary numbers them (by_process_rank:
`image`, `images_of_pid`, `image_tag`).  Exit status 1 when an output
cannot be had.
"""
import collections
import json
import re
import subprocess
import sys


def run(argv, out):
    with open(out, "w") as f:
        st = subprocess.call(argv, stdout=f, stderr=subprocess.STDOUT)
    return st


def main():
    cbt, trace, outdir = sys.argv[1:4]
    sel = []
    rest = sys.argv[4:]
    while rest:
        sel += [rest[0], rest[1]]
        rest = rest[2:]
    paths = {k: "%s/images.%s" % (outdir, k) for k in ("json", "txt", "check", "show", "timeline", "html")}
    status = {
        "summary": run([cbt, "summary", "--json"] + sel + [trace], paths["json"]),
        "summary_text": run([cbt, "summary", "--by", "process"] + sel + [trace], paths["txt"]),
        "check": run([cbt, "check", "--format", "json"] + sel + [trace], paths["check"]),
        "show": run([cbt, "show", "--records"] + sel + [trace], paths["show"]),
        "timeline": run([cbt, "timeline", "-o", paths["timeline"]] + sel + [trace], paths["timeline"] + ".out"),
        "report": run([cbt, "report", "--no-plots", "-o", paths["html"]] + sel + [trace], paths["html"] + ".out"),
    }
    for k, v in status.items():
        print("status %s %d" % (k, v))

    d = json.load(open(paths["json"]))
    name = {}   # (pid, tag or None) -> "K/N"
    for p in d["by_process_rank"]:
        k = "%s/%s" % (p["image"], p["images_of_pid"]) if p["image"] is not None else "-"
        name[(p["pid"], p["image_tag"])] = k

    def label(pid, tag):
        return name.get((pid, tag), "?%s" % tag)

    def emit(src, rows):
        for (pid, img), r in sorted(rows.items(), key=lambda x: (x[0][0], x[0][1])):
            extra = "".join(" %s=%d" % (k, r[k]) for k in ("findings",) if k in r)
            print("%s pid=%d image=%s batches=%d ops=%d%s" % (src, pid, img, r["batches"], r["ops"], extra))

    rd = d["read"]
    print("reader malformed=%d incomplete=%d pending=%d orphan_ops=%d untagged=%d fields=%s processes=%d batches=%d" % (
        rd["malformed_batches"], rd["incomplete_batches"], rd["pending_batches"], d["unpaired"]["orphan_ops"],
        d["process_identity"]["untagged_batches"], ",".join(d["process_identity"]["fields"]), d["processes"],
        d["batches"]))

    rows = {}
    for p in d["by_process_rank"]:
        rows[(p["pid"], label(p["pid"], p["image_tag"]))] = {"batches": p["batches"], "ops": p["ops"]}
    emit("summary", rows)

    # the text summary's table by process: "HOST pid P[ image K/N] PROCNAME | batches | ops | ..."
    rows = {}
    intable = False
    for line in open(paths["txt"]):
        if line.startswith("# Batches by process") and "Rank" not in line:
            intable = True
            continue
        if intable and line.startswith("#"):
            continue
        if intable and line.startswith("Name"):
            continue
        if intable and not line.strip():
            break
        if intable:
            cells = [c.strip() for c in line.split("|")]
            m = re.match(r"\S+ pid (-?\d+)(?: image (\d+/\d+))? ", cells[0] + " ")
            if not m:
                continue
            rows[(int(m.group(1)), m.group(2) or "1/1")] = {"batches": int(cells[1]), "ops": int(cells[2])}
    emit("summary_text", rows)

    c = json.load(open(paths["check"]))
    rows = collections.defaultdict(lambda: {"batches": 0, "ops": 0, "findings": 0})
    for f in c["findings"]:
        if f.get("severity") == "advice":
            continue  # the validator's findings only: advice follows the timing of the calls
        rows[(f["pid"], label(f["pid"], f["image"]))]["findings"] += 1
    for k, r in rows.items():
        r["batches"] = r["ops"] = -1  # check does not count them
    emit("check", rows)
    print("check_not_validated malformed=%d incomplete=%d" % (
        c["totals"]["not_validated"]["malformed"], c["totals"]["not_validated"]["incomplete"]))

    rows = collections.defaultdict(lambda: {"batches": 0, "ops": 0})
    states = collections.Counter()
    for line in open(paths["show"]):
        if line.startswith("#"):
            continue
        kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
        key = (int(kv["vpid"]), label(int(kv["vpid"]), kv.get("image")))
        if line.startswith("batch "):
            rows[key]["batches"] += 1
            states[kv["state"]] += 1
        elif line.startswith("op "):
            rows[key]["ops"] += 1
    emit("show", rows)
    print("show_states %s" % " ".join("%s=%d" % x for x in sorted(states.items())))

    t = json.load(open(paths["timeline"]))
    pname = {}
    for e in t["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            m = re.search(r"\(pid (-?\d+)(?: image (\d+/\d+))?", e["args"]["name"])
            pname[e["pid"]] = (int(m.group(1)), m.group(2) or "1/1")
    rows = collections.defaultdict(lambda: {"batches": 0, "ops": 0})
    for e in t["traceEvents"]:
        if e["ph"] == "X" and "door" in e.get("args", {}):
            r = rows[pname[e["pid"]]]
            r["batches"] += 1
            r["ops"] += e["args"]["ops"]
    emit("timeline", rows)

    html = open(paths["html"]).read()
    emb = re.search(r'<script type="application/json" id="cubatchtrace-summary">\n?(.*?)</script>', html, re.S)
    rd = json.loads(emb.group(1)) if emb else {"by_process_rank": []}
    rows = {}
    for p in rd["by_process_rank"]:
        rows[(p["pid"], label(p["pid"], p["image_tag"]))] = {"batches": p["batches"], "ops": p["ops"]}
    emit("report", rows)
    tbl = re.search(r'<table[^>]*id="table-by_process_rank".*?</table>', html, re.S)
    print("report_rows %d" % (len(re.findall(r"<tr>", tbl.group(0))) - 1 if tbl else -1))


if __name__ == "__main__":
    main()
