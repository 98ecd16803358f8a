#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the GPU times of a trace against its batches: the batch events
(cubatchtrace:b and bs, 3D, cubatchtrace:c and cs, 1D) and the batches' GPU
times its cubatchtrace:gpu_time events carry (several per event:
tests/gputimes.py reads them) from babeltrace2's text output (`babeltrace2 --clock-seconds` is not
assumed: the timestamps are read as babeltrace2 prints them by default,
[HH:MM:SS.ns]), each batch's fields, and each batch's GPU time joined with
them, as `cubatchtrace show --records --pid PID` decodes them (SHOW-TEXT: its batch and
gpu lines).  A batch event's timestamp is the end of its call.

gpu_events.py TRACE-TEXT PID SHOW-TEXT  prints one line:
  batches=B events=E (the batches' GPU times read, over all gpu_time events) timed=T capturing=C no_events=N call_failed=F lost=L overflow=O
  tids_match=0|1 ids_unique=0|1 bytes=SUM ops=SUM fields_ok=0|1 marks_ok=0|1 start_ok=0|1 process_gpu=G
  timed_ids=I,J,... (the timed batches' ids, ascending; - when none)
  outside_us=U (the farthest a timed batch's GPU start lies outside its call, for the log)
where bytes and ops are show's gpu lines' (the reader's, from the batch);
tids_match and fields_ok say every event has a gpu line in show whose tid
(and stream, stream_id, device, api, driver_ns) equal its batch's; marks_ok
says the batch events of exactly the batches with a gpu_time event are
marked (CBT_HDR_GPU: bit 0x80 of t[4], hdr's mask byte); start_ok says every timed batch's GPU start lies within
[call start - 50 ms, call end + 50 ms] and gpu_ns > 0 (the test double's
events are host clock readings around the call; the shim places its anchor
event in the middle of the wait for it, an error of half that wait: a few
microseconds alone, milliseconds on a loaded machine; a wrong clock or sign
is off by far more).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gputimes  # noqa: E402

path, pid, show_path = sys.argv[1], sys.argv[2], sys.argv[3]
ts_re = re.compile(r"^\[(\d+):(\d+):(\d+)\.(\d+)\]")


def ts_ns(line):
    m = ts_re.match(line)
    h, mi, s, frac = m.groups()
    return ((int(h) * 60 + int(mi)) * 60 + int(s)) * 10**9 + int(frac.ljust(9, "0")[:9])


def field(line, name):
    m = re.search(r"\b%s = (\( \"(\w+)\" : container = (-?\w+) \)|-?\w+)" % name, line)
    if not m:
        return None
    return m.group(2) if m.group(2) else int(m.group(1), 0)


HEAD = re.compile(r"\bt = \[ \[0\] = (\d+), \[1\] = (\d+), \[2\] = (\d+), \[3\] = (\d+), \[4\] = (\d+)")
BATCH = re.compile(r" cubatchtrace:[bc]s?: ")


def head(line):
    """id, w, driver_ns, caller and hdr's first word of a batch event: the first five words of its sequence t."""
    m = HEAD.search(line)
    return tuple(int(v) for v in m.groups()) if m else (0, 0, 0, 0, 0)


def show_fields(line):
    k = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    return (int(k.get("image", "0"), 16), int(k["id"])), {
        "tid": int(k["tid"]), "stream": int(k["stream"], 16), "stream_id": int(k["stream_id"]),
        "device": int(k["device"]), "api": k["api"], "driver_ns": int(k["driver_ns"]),
        "ops": int(k.get("ops", 0)), "bytes": int(k.get("bytes", 0))}


# show's batch lines and gpu lines by (image tag, number)
shown, shown_gpu = {}, {}
for line in open(show_path, errors="replace"):
    if line.startswith("batch ") and " api=" in line:
        key, f = show_fields(line)
        shown[key] = f
    elif line.startswith("gpu "):
        key, f = show_fields(line)
        shown_gpu[key] = f

batches, events, process_gpu, marked = {}, [], None, {}
for line in open(path, errors="replace"):
    if "vpid = %s," % pid not in line:
        continue
    if BATCH.search(line):
        h = head(line)
        bid = h[0]
        marked[bid] = bool(h[4] & 0x80)
        batches[bid] = (ts_ns(line), shown.get((bid >> 32, bid & 0xffffffff), shown.get((0, bid & 0xffffffff))))
    elif " cubatchtrace:gpu_time: " in line:
        events += [(ts_ns(line), e) for e in gputimes.entries(line)]
    elif " cubatchtrace:process: " in line:
        process_gpu = field(line, "gpu_time")

counts = {k: 0 for k in ("timed", "capturing", "no_events", "call_failed", "lost", "overflow")}
ids, tids_match, fields_ok, start_ok, nbytes, nops = set(), 1, 1, 1, 0, 0
timed_ids = []
worst = 0  # the farthest a GPU start lies outside its call, ns
STATUS = gputimes.status_names()
for t, e in events:
    st = STATUS[e["status"]]
    counts[st] += 1
    bid = e["batch_id"]
    ids.add(bid)
    g = shown_gpu.get((bid >> 32, bid & 0xffffffff), shown_gpu.get((0, bid & 0xffffffff)))
    if g:
        nbytes += g["bytes"]
        nops += g["ops"]
    b = batches.get(bid)
    if not b:
        fields_ok = 0
        continue
    bt, bl = b
    if not bl or not g:
        fields_ok = tids_match = 0
        continue
    if g["tid"] != bl["tid"]:
        tids_match = 0
    for f in ("stream", "stream_id", "device", "api", "driver_ns"):
        if g[f] != bl[f]:
            fields_ok = 0
    if st == "timed":
        timed_ids.append(bid & 0xffffffff)  # the batch's number within its process image
        start = t + e["start_rel_ns"]
        call_end = bt
        call_start = bt - bl["driver_ns"]
        worst = max(worst, call_start - start, start - call_end)
        if not (call_start - 5 * 10**7 <= start <= call_end + 5 * 10**7) or e["gpu_ns"] <= 0:
            start_ok = 0
marks_ok = int(all(marked[b] == (b in ids) for b in marked))
print("batches=%d events=%d %s tids_match=%d ids_unique=%d bytes=%d ops=%d fields_ok=%d marks_ok=%d start_ok=%d "
      "process_gpu=%s timed_ids=%s outside_us=%.1f" % (
    len(batches), len(events), " ".join("%s=%d" % kv for kv in counts.items()), tids_match,
    int(len(ids) == len(events)), nbytes, nops, fields_ok, marks_ok, start_ok, process_gpu,
    ",".join(str(i) for i in sorted(timed_ids)) or "-", max(worst, 0) / 1000))
