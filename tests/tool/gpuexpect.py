# SPDX-License-Identifier: MIT
"""The "gpu" member a summary must have, computed from the events themselves.

    gpuexpect.py CATALOG TRACE_TEXT SUMMARY_JSON [--show SHOW_TEXT] [--text SUMMARY_TEXT] [--raw]

TRACE_TEXT is babeltrace2 --clock-seconds text of the processes summarised;
its cubatchtrace:gpu_time (the GPU times of one or several batches each:
tests/gputimes.py), batch (b and c in the compact record) and process events give the figures, by the
rules of docs/json-schema.md written again here (directions, memory kinds,
op-size bins, stream and device names, the grid over time), with no code of
the tool.  Prints one line per figure, "KEY<TAB>WANT<TAB>GOT", for the TAP
script to compare.  With --text, the rows of the text summary's GPU tables
too: exact figures (--raw), or in human units.  The shim's gpu_time event
carries the batch's id, status and times only: what the batch moved (ops,
bytes, memory kinds and devices of the ops, stream, device, host time) is
taken from its batch and op lines in SHOW_TEXT (`cubatchtrace show` of the
same traces and processes), summed here; an older trace's gpu_time event
carries them itself.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gputimes  # noqa: E402

LINE = re.compile(r"^\[(\d+)\.(\d{9})\] \([^)]*\) (\S+) (cubatchtrace:\w+): (.*)$")
FIELD = re.compile(r"(\w+) = (\( \"[^\"]*\" : container = (-?\d+) \)|\"[^\"]*\"|-?0x[0-9a-fA-F]+|-?\d+)")


def fields(body):
    f = {}
    for m in FIELD.finditer(body):
        v = m.group(2)
        if m.group(3) is not None:
            f[m.group(1)] = int(m.group(3))
        elif v.startswith('"'):
            f[m.group(1)] = v[1:-1]
        else:
            f[m.group(1)] = int(v, 0)
    return f


HEAD = re.compile(r"\bt = \[ \[0\] = (\d+), \[1\] = (\d+),")


def head(body, f):
    """f with id and w of a compact batch event: format 4's first two words of t, format 3's own fields."""
    m = HEAD.search(body)
    if m:
        f["id"], f["w"] = int(m.group(1)), int(m.group(2))
    return f


def catalog_list(path, name):
    text = open(path).read()
    body = re.search(r"#define %s\(X\)(.*?)\n\n" % name, text, re.S).group(1)
    return {int(v): n for v, n in re.findall(r"X\(\w+, (\d+), \"([^\"]+)\"\)", body)}


def direction(e):
    if e["src_kind"] == 255 or e["dst_kind"] == 255:
        return "mixed"
    cls = {1: "D", 4: "D", 2: "H", 3: "H", 5: "A"}
    s, d = cls.get(e["src_kind"]), cls.get(e["dst_kind"])
    if s == "D" and d == "D":
        if -2 in (e["src_device"], e["dst_device"]):
            return "mixed"
        if e["src_device"] >= 0 and e["dst_device"] >= 0 and e["src_device"] != e["dst_device"]:
            return "peer"
    name = "%sto%s" % (s, d)
    return name if name in ("HtoD", "DtoH", "DtoD", "HtoH", "HtoA", "AtoH", "DtoA", "AtoD", "AtoA") else "unknown"


# the order of the direction rows (docs/json-schema.md: by_direction's names, then "mixed")
DIRECTIONS = ["HtoD", "DtoH", "DtoD", "HtoH", "HtoA", "AtoH", "DtoA", "AtoD", "AtoA", "peer", "unknown", "mixed"]


def size_bin(e):
    mean = e["bytes"] // e["ops"] if e["ops"] else 0
    if mean == 0:
        return "0", 0, 0
    lo = 1 << (mean.bit_length() - 1)
    hi = (1 << mean.bit_length()) - 1
    return (str(lo) if lo == hi else "%d-%d" % (lo, hi)), lo, hi


def show_batches(path, memkinds):
    """{(host, vpid, image tag, number): the gpu_time fields a batch gives} from show's batch and op lines."""
    kind_of = {n: v for v, n in memkinds.items()}
    out, cur = {}, None
    for line in open(path, errors="replace"):
        if not line.startswith(("batch ", "op ")):
            continue
        k = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        key = (int(k["vpid"]), int(k.get("image", "0"), 16), int(k["id"]))
        if line.startswith("batch "):
            if "api" not in k:
                cur = None
                continue
            cur = dict(stream=int(k["stream"], 16), stream_id=int(k["stream_id"]), device=int(k["device"]),
                       driver_ns=int(k["driver_ns"]), ops=0, bytes=0, src_kind=255, dst_kind=255, src_device=-1,
                       dst_device=-1)
            out[(k["host"],) + key] = cur
            continue
        if cur is None:
            continue
        sides = []
        for side in ("src", "dst"):
            t = k[side].split(":")
            sides.append((kind_of.get(t[1], int(t[1]) if t[1].isdigit() else -1), int(t[2])))
        if cur["ops"] == 0:
            cur["src_kind"], cur["src_device"] = sides[0]
            cur["dst_kind"], cur["dst_device"] = sides[1]
        else:
            if cur["src_kind"] != sides[0][0]:
                cur["src_kind"] = 255
            if cur["dst_kind"] != sides[1][0]:
                cur["dst_kind"] = 255
            if cur["src_device"] != sides[0][1]:
                cur["src_device"] = -2
            if cur["dst_device"] != sides[1][1]:
                cur["dst_device"] = -2
        cur["ops"] += 1
        cur["bytes"] += int(k["bytes"])
    return out


def rows(timed, key):
    out = {}
    for e in timed:
        r = out.setdefault(key(e), dict(batches=0, ops=0, bytes=0, gpu_ns=0, host_ns=0))
        r["batches"] += 1
        r["ops"] += e["ops"]
        r["bytes"] += e["bytes"]
        r["gpu_ns"] += e["gpu_ns"]
        r["host_ns"] += e["driver_ns"]
    return out


def fmt_row(name, r):
    g = "%.6f" % (r["bytes"] / r["gpu_ns"]) if r["gpu_ns"] else "null"
    return "%s %d %d %d %d %d %s" % (name, r["batches"], r["ops"], r["bytes"], r["gpu_ns"], r["host_ns"], g)


def sig3(x, units, step):
    u = 0
    while u + 1 < len(units) and x >= step:
        x /= step
        u += 1
    prec = 2 if x < 10 else 1 if x < 100 else 0
    while True:
        s = "%.*f" % (prec, x)
        if prec > 0 and float(s) >= (10 if prec == 2 else 100):
            prec -= 1
            continue
        if u + 1 < len(units) and float(s) >= step:
            x /= step
            u += 1
            prec = 2
            continue
        return "%s %s" % (s, units[u])


def human_bytes(b):
    return "%d B" % b if b < 1024 else sig3(b / 1024.0, ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], 1024.0)


def human_ns(ns):
    if ns == 0:
        return "0 ns"
    if ns < 1000:
        return "%d ns" % ns
    if ns >= 999.5e9:
        return "%.0f s" % (ns / 1e9)
    return sig3(float(ns), ["ns", "\u00b5s", "ms", "s"], 1000.0)


def human_gbps(g):
    if g >= 1:
        return sig3(g, ["GB/s"], 1e300)
    e = int(("%.2e" % g).split("e")[1])
    if e >= 0:
        return sig3(g, ["GB/s"], 1e300)
    return "%.*f GB/s" % (2 - e, g)


def main():
    args = sys.argv[1:]
    text_path = None
    raw = "--raw" in args
    args = [a for a in args if a != "--raw"]
    if "--text" in args:
        i = args.index("--text")
        text_path = args[i + 1]
        del args[i:i + 2]
    show_path = None
    if "--show" in args:
        i = args.index("--show")
        show_path = args[i + 1]
        del args[i:i + 2]
    catalog, trace, summary = args
    memkinds = catalog_list(catalog, "CBT_MEMKIND_LIST")
    statuses = catalog_list(catalog, "CBT_GPU_STATUS_LIST")
    gpu, forwarded_ok, gpu_procs = [], {}, set()
    for line in open(trace):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        f = fields(m.group(5))
        f["ts"] = int(m.group(1)) * 1000000000 + int(m.group(2))
        f["host"] = m.group(3)
        ev = m.group(4)
        if ev == "cubatchtrace:gpu_time" and "bytes" not in f:
            # the batches' GPU times it carries (several, the shim's now; one, earlier)
            for e in gputimes.entries(m.group(5)):
                e.update(ts=f["ts"], host=f["host"], vpid=f["vpid"])
                gpu.append(e)
        elif ev == "cubatchtrace:gpu_time":  # the whole event of older traces: one batch, all its fields
            gpu.append(f)
        elif ev == "cubatchtrace:batch" and f["outcome"] == 0 and f["result"] == 0:
            forwarded_ok[f["vpid"]] = forwarded_ok.get(f["vpid"], 0) + 1
        elif ev in ("cubatchtrace:b", "cubatchtrace:bs", "cubatchtrace:c", "cubatchtrace:cs") and head(m.group(5), f)["w"] >> 8 & 7 == 0 and \
                f["w"] >> 16 & 0xFFFF == 0:
            # the compact record (CBT_EV_FORMAT): outcome in bits 8-10 of the packed word w, result in 16-31
            forwarded_ok[f["vpid"]] = forwarded_ok.get(f["vpid"], 0) + 1
        elif ev == "cubatchtrace:process" and f.get("gpu_time") == 1:
            gpu_procs.add(f["vpid"])
    # the short gpu_time event: the rest from its batch, as show decodes it
    shown = show_batches(show_path, memkinds) if show_path else {}
    unknown = dict(stream=0, stream_id=0, device=-1, driver_ns=0, ops=0, bytes=0, src_kind=0, dst_kind=0,
                   src_device=-1, dst_device=-1)  # its batch not in the input: memory kinds unknown (0)
    for e in gpu:
        if "bytes" not in e:
            b = e["batch_id"]
            e.update(shown.get((e["host"], e["vpid"], b >> 32, b & 0xFFFFFFFF), unknown))
    d = json.load(open(summary))["gpu"]
    out = []

    def check(key, want, got):
        out.append("%s\t%s\t%s" % (key, want, got))

    timed = [e for e in gpu if e["status"] == 0]
    check("gpu_time events read", len(gpu) > 0, True)
    check("processes_timed", len(gpu_procs), d["processes_timed"])
    check("batches_timed", len(timed), d["batches_timed"])
    for k, src in (("gpu_ns", "gpu_ns"), ("bytes", "bytes"), ("ops", "ops"), ("host_ns", "driver_ns")):
        check("total " + k, sum(e[src] for e in timed), d[k])
    for v, name in sorted(statuses.items()):
        if name != "timed":
            check("not_timed " + name, sum(1 for e in gpu if e["status"] == v), d["not_timed"][name])
    nrb = 0
    for pid in gpu_procs:
        seen = sum(1 for e in gpu if e["vpid"] == pid and e["status"] != 3)
        nrb += max(0, forwarded_ok.get(pid, 0) - seen)
    check("not_timed not_read_back", nrb, d["not_timed"]["not_read_back"])

    def kinds(e):
        if 255 in (e["src_kind"], e["dst_kind"]):
            return "mixed"
        return "%s->%s" % (memkinds.get(e["src_kind"], "?"), memkinds.get(e["dst_kind"], "?"))

    def stream(e):
        return "%s pid %d stream 0x%x (id %d)" % (e["host"], e["vpid"], e["stream"], e["stream_id"])

    def device(e):
        return "%s device %d" % (e["host"], e["device"]) if e["device"] >= 0 else "unknown"

    tables = {"by_direction": direction, "by_memkinds": kinds, "by_op_size": lambda e: size_bin(e)[0],
              "by_direction_op_size": lambda e: "%s %s" % (direction(e), size_bin(e)[0]),
              "by_stream": stream, "by_device": device}
    want_tables = {}
    for t, key in tables.items():
        want = rows(timed, key)
        want_tables[t] = want
        name = (lambda r: "%s %s" % (r.get("direction"), r["name"])) if t == "by_direction_op_size" else \
            (lambda r: r["name"])
        check(t, " | ".join(sorted(fmt_row(n, r) for n, r in want.items())),
              " | ".join(sorted(fmt_row(name(r), r) for r in d[t])))
    # direction by op size: rows in direction order, then by bin; each with its bin's bounds
    cells = sorted({(DIRECTIONS.index(direction(e)), size_bin(e)[1], direction(e), *size_bin(e)) for e in timed})
    check("by_direction_op_size order, low/high",
          " ".join("%s/%s:%d-%d" % c[2:] for c in cells),
          " ".join("%s/%s:%d-%d" % (r["direction"], r["name"], r["low"], r["high"]) for r in d["by_direction_op_size"]))
    # summed over the op sizes, each direction is its by_direction row
    per_dir = {}
    for r in d["by_direction_op_size"]:
        p = per_dir.setdefault(r["direction"], dict(batches=0, ops=0, bytes=0, gpu_ns=0, host_ns=0))
        for k in p:
            p[k] += r[k]
    check("by_direction_op_size summed by direction is by_direction",
          " | ".join(fmt_row(r["name"], r) for r in d["by_direction"]),
          " | ".join(fmt_row(n, per_dir[n]) for n in sorted(per_dir, key=DIRECTIONS.index)))
    check("by_direction_op_size gbps exact", "[]",
          [(r["direction"], r["name"]) for r in d["by_direction_op_size"]
           if r["gbps"] != (r["bytes"] / r["gpu_ns"] if r["gpu_ns"] else None)])
    # the stream rows in order: bytes, then batches down, then name
    order = sorted(want_tables["by_stream"].items(), key=lambda kv: (-kv[1]["bytes"], -kv[1]["batches"], kv[0]))
    check("by_stream order", " | ".join(n for n, _ in order), " | ".join(r["name"] for r in d["by_stream"]))
    bins = {size_bin(e)[0]: size_bin(e)[1:] for e in timed}
    check("by_op_size low/high", " ".join("%s:%d-%d" % (n, *bins[n]) for n in sorted(bins)),
          " ".join("%s:%d-%d" % (r["name"], r["low"], r["high"]) for r in sorted(d["by_op_size"], key=lambda r: r["name"])))

    # over time: one grid, the smallest power-of-2 width whose 128 buckets from
    # the earliest start (rounded down to a multiple) reach the latest
    ot = d["over_time"]
    starts = [(e["ts"] + e["start_rel_ns"], e) for e in timed]
    if starts:
        lo, hi = min(s for s, _ in starts), max(s for s, _ in starts)
        w = 1
        while (hi - (lo // w) * w) // w >= 128:
            w *= 2
        t0 = (lo // w) * w
        n = (hi - t0) // w + 1
        per = {}
        for s, e in starts:
            b = per.setdefault(stream(e), [0] * n)
            b[(s - t0) // w] += e["gpu_ns"]
        total = {k: sum(v) for k, v in per.items()}
        names = sorted(per, key=lambda k: (-total[k], k))
        want_streams = [(k, per[k]) for k in names[:16]]
        if len(names) > 16:
            want_streams.append(("other", [sum(per[k][i] for k in names[16:]) for i in range(n)]))
        check("over_time bucket_ns, start_ns", "%d %d" % (w, t0), "%d %d" % (ot["bucket_ns"], ot["start_ns"]))
        check("over_time streams", json.dumps(want_streams),
              json.dumps([(s["name"], s["gpu_ns"]) for s in ot["streams"]]))
    else:
        check("over_time empty", "0 0 []", "%d %d %s" % (ot["bucket_ns"], ot["start_ns"], json.dumps(ot["streams"])))

    if text_path:
        # the GPU tables of the text summary: one line per row, cells between " | "
        text = open(text_path, encoding="utf-8").read()
        sect = text[text.find("\n# GPU time (CUBATCHTRACE_GPU_TIME="):]
        titles = {"by_direction": "# GPU time by direction", "by_memkinds": "# GPU time by memory kinds",
                  "by_op_size": "# GPU time by op size", "by_stream": "# GPU time by CUDA stream",
                  "by_device": "# GPU time by device"}
        for t, title in titles.items():
            i = sect.find(title)
            block = sect[i:].split("\n\n")[0].splitlines()[2:] if i >= 0 else []
            got = sorted(" | ".join(c.strip() for c in l.split(" | ")) for l in block)
            want = []
            for name, r in want_tables[t].items():
                g = r["bytes"] / r["gpu_ns"] if r["gpu_ns"] else None
                if raw:
                    cells = [name, str(r["batches"]), str(r["ops"]), str(r["bytes"]), str(r["host_ns"]),
                             str(r["gpu_ns"]), "%.3f" % g if g is not None else "-"]
                else:
                    cells = [name, str(r["batches"]), str(r["ops"]), human_bytes(r["bytes"]), human_ns(r["host_ns"]),
                             human_ns(r["gpu_ns"]), human_gbps(g) if g is not None else "-"]
                want.append(" | ".join(cells))
            check("text %s%s" % (t, " (raw)" if raw else ""), " || ".join(sorted(want)), " || ".join(got))
    sys.stdout.write("".join(l + "\n" for l in out))


if __name__ == "__main__":
    main()
