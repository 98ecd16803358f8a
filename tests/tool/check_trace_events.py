#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a Chrome trace-event file (the JSON object form) as `cubatchtrace
timeline` writes it, with the standard library only.

  check_trace_events.py FILE [--expect-host-spans N] [--expect-gpu-spans N]
                             [--expect-flows N] [--expect-findings N]
                             [--expect-host-tracks N] [--expect-gpu-tracks N]

Checks: valid JSON, an object with a `traceEvents` list; every event has the
keys its phase requires, with the right types; every X has dur >= 0; every
pid and (pid, tid) an event uses is named by process_name / thread_name
metadata; timestamps never go back on a (pid, tid) track in file order; every
flow start (ph s) has one finish (ph f) of the same id and category and the
reverse, flow ids are unique; and the counts asked for.  Host spans are the X
events on threads, GPU spans those on tracks named "GPU stream ...".
Prints one line per problem on stderr and exits 1 when there is any, else
prints the counts as `key=value` on stdout and exits 0.
"""
import argparse
import json
import sys

NUM = (int, float)


def check(doc, problems):
    """Validate doc; returns the counts."""
    def bad(i, msg):
        problems.append("event %d: %s" % (i, msg) if i is not None else msg)

    if not isinstance(doc, dict):
        bad(None, "the top level is not an object")
        return {}
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        bad(None, "no traceEvents list")
        return {}
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        bad(None, "displayTimeUnit is neither ms nor ns")
    if "otherData" in doc and not isinstance(doc["otherData"], dict):
        bad(None, "otherData is not an object")

    proc_named, thread_named, gpu_tracks = set(), set(), set()
    used_pids, used_tracks = {}, {}
    last_ts = {}
    flow_s, flow_f = {}, {}
    counts = {"events": len(events), "host_spans": 0, "gpu_spans": 0, "flows": 0, "findings": 0,
              "instants": 0, "host_tracks": 0, "gpu_tracks": 0}
    spans = []
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            bad(i, "not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str):
            bad(i, "no ph")
            continue
        need = {"name": str, "pid": int}
        if ph != "M":
            need.update({"tid": int, "ts": NUM})
        if ph == "X":
            need["dur"] = NUM
        if ph in ("s", "t", "f"):
            need.update({"id": (int, str), "cat": str})
        if ph == "M":
            need["args"] = dict
        missing = False
        for k, t in need.items():
            if k not in e:
                bad(i, "ph %s without %s" % (ph, k))
                missing = True
            elif isinstance(e[k], bool) or not isinstance(e[k], t):
                bad(i, "ph %s: %s is not a %s" % (ph, k, t))
                missing = True
        if missing:
            continue
        if ph == "M":
            args = e["args"]
            if e["name"] == "process_name":
                if not isinstance(args.get("name"), str):
                    bad(i, "process_name without args.name")
                proc_named.add(e["pid"])
            elif e["name"] == "thread_name":
                if not isinstance(e.get("tid"), int) or not isinstance(args.get("name"), str):
                    bad(i, "thread_name without tid or args.name")
                    continue
                thread_named.add((e["pid"], e["tid"]))
                if args["name"].startswith("GPU stream "):
                    gpu_tracks.add((e["pid"], e["tid"]))
            elif e["name"] in ("process_sort_index", "thread_sort_index"):
                if not isinstance(args.get("sort_index"), int):
                    bad(i, "%s without an integer args.sort_index" % e["name"])
            continue
        if ph not in ("X", "B", "E", "i", "I", "s", "t", "f", "C"):
            bad(i, "unknown ph %r" % ph)
            continue
        if ph in ("i", "I") and e.get("s", "t") not in ("t", "p", "g"):
            bad(i, "instant scope %r is none of t, p, g" % e.get("s"))
        if ph == "f" and e.get("bp", "e") != "e":
            bad(i, "flow finish bp %r is not e" % e.get("bp"))
        if e["ts"] < 0:
            bad(i, "ts %s < 0" % e["ts"])
        track = (e["pid"], e["tid"])
        used_pids.setdefault(e["pid"], i)
        used_tracks.setdefault(track, i)
        if track in last_ts and e["ts"] < last_ts[track]:
            bad(i, "ts %s before %s on track pid %d tid %d" % (e["ts"], last_ts[track], track[0], track[1]))
        last_ts[track] = e["ts"]
        if ph == "X":
            if e["dur"] < 0:
                bad(i, "dur %s < 0" % e["dur"])
            spans.append(track)
        elif ph in ("i", "I"):
            counts["instants"] += 1
        elif ph in ("s", "f"):
            table = flow_s if ph == "s" else flow_f
            key = (e["cat"], e["id"])
            if key in table:
                bad(i, "flow id %r (cat %s) used twice by ph %s" % (e["id"], e["cat"], ph))
            table[key] = i
    for pid, i in used_pids.items():
        if pid not in proc_named:
            bad(i, "pid %d has no process_name" % pid)
    for (pid, tid), i in used_tracks.items():
        if (pid, tid) not in thread_named:
            bad(i, "pid %d tid %d has no thread_name" % (pid, tid))
    for key, i in flow_s.items():
        if key not in flow_f:
            bad(i, "flow start id %r has no finish" % (key[1],))
    for key, i in flow_f.items():
        if key not in flow_s:
            bad(i, "flow finish id %r has no start" % (key[1],))
    counts["flows"] = len(set(flow_s) & set(flow_f))
    counts["gpu_spans"] = sum(1 for t in spans if t in gpu_tracks)
    counts["host_spans"] = len(spans) - counts["gpu_spans"]
    counts["findings"] = counts["instants"]
    counts["gpu_tracks"] = sum(1 for t in used_tracks if t in gpu_tracks)
    counts["host_tracks"] = len(used_tracks) - counts["gpu_tracks"]
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    for k in ("host-spans", "gpu-spans", "flows", "findings", "host-tracks", "gpu-tracks"):
        ap.add_argument("--expect-" + k, type=int, metavar="N")
    a = ap.parse_args()
    problems = []
    try:
        with open(a.file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not valid JSON: %s" % (a.file, e), file=sys.stderr)
        return 1
    counts = check(doc, problems)
    for k in ("host_spans", "gpu_spans", "flows", "findings", "host_tracks", "gpu_tracks"):
        want = getattr(a, "expect_" + k)
        if want is not None and counts.get(k) != want:
            problems.append("%s: %s, expected %d" % (k, counts.get(k), want))
    for p in problems[:50]:
        print("%s: %s" % (a.file, p), file=sys.stderr)
    if len(problems) > 50:
        print("%s: ... and %d more" % (a.file, len(problems) - 50), file=sys.stderr)
    if problems:
        return 1
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
