#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What must not change between event formats, from the tool's outputs.

format_norm.py show|summary|check [--sort] [--stream-ids] < OUTPUT

show:    every line but the legend, without what differs from run to run or
         names the recorder (vpid, id, image, tid, host, driver_ns, caller,
         format, rules, inline: the inline findings are compared only within
         one rules version); every address or other large number renamed by
         its first appearance in its batch (two runs of a program lay out
         memory alike, not at the same addresses; and whether a buffer freed
         after one batch is handed out again for the next depends on how
         much the heap held before, which the recorder's own allocations and
         the environment move: page-aligned blocks split the heap's free
         space by where its top lies); --sort: the lines sorted, addresses
         and stream ids left out (threads: their order is the scheduler's);
         --stream-ids: stream ids renamed by their first appearance in the
         output (a program that picks its streams by their handles' values
         picks others from run to run).
summary: the counts and the tables by what the ops are (rows: name, batches,
         ops, bytes; bytes per op where the table has them), the findings
         (rule, severity, count).
check:   the findings: rule, severity, op, other_op, side, value, limit
         (values renamed as in show), in order.
"""
import json
import re
import sys

DROP = re.compile(r' (vpid|id|image|tid|host|driver_ns|caller|format|rules|inline)=\S+')
seen = {}


def rename(v):
    if v not in seen:
        seen[v] = "A%d" % len(seen)
    return seen[v]


def big(text):
    text = re.sub(r'0x[0-9a-fA-F]{6,}', lambda m: rename(m.group(0).lower()), text)
    return re.sub(r'(?<![\w.])\d{10,}(?![\w.])', lambda m: rename(m.group(0)), text)


def show(data, sort, stream_ids=False):
    out = []
    ids = {}
    if stream_ids:
        data = re.sub(r' stream_id=(\d+)', lambda m: " stream_id=S%d" % ids.setdefault(m.group(1), len(ids)), data)
    for line in data.splitlines():
        if line.startswith("#"):
            continue
        line = DROP.sub("", line)
        if line.startswith("batch "):
            seen.clear()
        if sort:  # threads: the order of batches, so of first appearances and stream ids, is the scheduler's
            line = re.sub(r' stream_id=\d+', '', re.sub(r'0x[0-9a-fA-F]{6,}', 'X', line))
        out.append(big(line).rstrip())
    if sort:
        out.sort()
    return "\n".join(out)


TABLES = ("by_api", "by_door", "by_api_door", "by_direction", "by_device", "by_memkinds", "by_access_order",
          "batch_size_histogram", "op_size_histogram")
PER_OP = ("by_direction", "by_memkinds", "by_access_order", "op_size_histogram")  # avg/min/max are bytes per op


def summary(data):
    d = json.loads(data)
    out = {k: d.get(k) for k in ("batches", "ops", "bytes", "failed_batches", "refused_batches",
                                 "no_driver_batches", "processes", "threads")}
    for t in TABLES:
        rows = []
        for r in d.get(t) or []:
            keep = {k: r.get(k) for k in ("name", "device", "batches", "ops", "bytes", "ops_in", "ops_out",
                                          "bytes_in", "bytes_out") if k in r}
            if t in PER_OP:
                keep.update({k: r.get(k) for k in ("avg", "min", "max") if k in r})
            rows.append(keep)
        out[t] = rows
    out["findings"] = [(f.get("rule"), f.get("severity"), f.get("count")) for f in d.get("findings") or []]
    return json.dumps(out, sort_keys=True, indent=1)


def check(data):
    d = json.loads(data)
    rows = []
    for f in d.get("findings") or []:
        rows.append(big(" ".join(str(f.get(k)) for k in ("rule", "severity", "op", "other_op", "side", "value",
                                                         "limit"))))
    return "\n".join(rows)


def main():
    what = sys.argv[1]
    sort = "--sort" in sys.argv[2:]
    data = sys.stdin.read()
    print({"show": lambda: show(data, sort, "--stream-ids" in sys.argv[2:]), "summary": lambda: summary(data), "check": lambda: check(data)}[what]())


main()
