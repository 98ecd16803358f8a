# SPDX-License-Identifier: MIT
"""GPU time in the GPU suite (CUBATCHTRACE_GPU_TIME=1): its cases, built by cases(S) where S is the suite module.

  gputime-DOOR-KIND   tests/gpu/clients/gputime.cu: a warm-up and five batches of 4 x 64 MiB copies (KIND d2d: device to device,
                      h2d: pinned host to device), each timed by the client with its own events around the call, once without the shim and once with it;
                      the trace's GPU times as `cubatchtrace show` joins each with its batch: one
                      per batch, status timed, GPU time within 10 % of the client's, the batch's bytes (the
                      reader's, from the batch's record); the client's own median timing within 10 % of its
                      median without the shim; the bandwidth is reported (GB/s)
  gputime-timeline    `cubatchtrace timeline` on such a trace: tests/tool/check_trace_events.py finds the format
                      valid, 6 host spans and 6 GPU spans with a flow each
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CASES = [("drv", "d2d"), ("rt", "d2d"), ("drv1d", "d2d"), ("rt1d", "d2d"), ("drv", "h2d"), ("rt", "h2d"),
         ("drv", "d2h")]
REPS = 5


def gpu_events(show_text):
    """The gpu lines of `cubatchtrace show --records --pid PID`: {batch number: (status, gpu_ns, bytes)}."""
    out = {}
    for line in show_text.splitlines():
        if line.startswith("gpu "):
            k = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            out[int(k["id"])] = (k["status"], int(k["gpu_ns"]), int(k["bytes"]))
    return out


def run_traced(S, case, workdir, door, kind):
    sess = S.Session(case.name, workdir)
    if not sess.start():
        return None, None, None, "lttng session: " + sess.error
    try:
        rc, out, err = S.run_client([S.b("gputime"), door, kind, str(REPS)], 120,
                                    extra_env={"CUBATCHTRACE_GPU_TIME": "1"})
    finally:
        sess.stop()
    if rc != 0 or "RESULT ok" not in out:
        return None, None, None, "client exit %d: %s %s" % (rc, out.strip()[-200:], err.strip()[-200:])
    pid = re.search(r"^pid (\d+)", out, re.M).group(1)
    return sess, out, pid, ""


def median_client_ns(out):
    v = sorted(float(line.split("client_ns=")[1]) for line in out.splitlines() if line.startswith("ROW "))
    return v[len(v) // 2] if v else 0


def gputime_case(S, door, kind):
    def fn(case, workdir):
        # the program's own timing without the shim, for comparison
        rc, bare_out, err = S.run_client([S.b("gputime"), door, kind, str(REPS)], 120, shim=False)
        if rc != 0 or "RESULT ok" not in bare_out:
            return False, "bare client exit %d: %s" % (rc, (bare_out + err).strip()[-200:])
        sess, out, pid, why = run_traced(S, case, workdir, door, kind)
        if not sess:
            return False, why
        rc, shown, err = S.sh([S.TOOL, "show", "--records", "--pid", pid, sess.dir], timeout=120, env=S.cbt_tool_env())
        if rc != 0:
            return False, "show exit %d: %s" % (rc, err.strip()[-300:])
        ev = gpu_events(shown)
        rows = [dict(kv.split("=") for kv in line.split()[1:]) for line in out.splitlines() if line.startswith("ROW ")]
        problems, notes = [], []
        if len(rows) != REPS:
            problems.append("%d client rows (want %d)" % (len(rows), REPS))
        if len(ev) != REPS + 1:
            problems = ["%d gpu lines in show (want %d: a warm-up and %d timed)" % (len(ev), REPS + 1, REPS)]
        for i, r in enumerate(rows):
            e = ev.get(int(r["batch"]))
            if not e:
                continue
            st, g, nbytes = e
            c = float(r["client_ns"])
            if st != "timed":
                problems.append("batch %d: status %s" % (i, st))
                continue
            if nbytes != int(r["bytes"]):
                problems.append("batch %d: %s bytes in the trace, %s moved" % (i, nbytes, r["bytes"]))
            dev = abs(g - c) / c
            notes.append("%.1f%%" % (100 * dev))
            if dev > 0.10:
                problems.append("batch %d: GPU time %d ns, the client's %.0f ns (%.1f %% apart)" % (i, g, c, 100 * dev))
        timed = [e for e in ev.values() if e[0] == "timed" and e[1] > 0]
        gbps = max(e[2] / e[1] for e in timed) if timed else 0
        bare, traced = median_client_ns(bare_out), median_client_ns(out)
        if not bare or abs(traced - bare) / bare > 0.10:
            problems.append("the program's own timing: median %.0f ns bare, %.0f ns traced with GPU time" % (bare, traced))
        msg = "%s %s: %d batches of %d MiB, GPU time vs the client's: %s; best %.1f GB/s; the client's own median " \
              "%.0f ns bare, %.0f ns with the shim timing it" % (
                  door, kind, len(rows), int(rows[0]["bytes"]) >> 20 if rows else 0, " ".join(notes), gbps, bare, traced)
        return not problems, "; ".join(problems[:4]) or msg
    return fn


def timeline_case(S):
    def fn(case, workdir):
        sess, out, pid, why = run_traced(S, case, workdir, "drv", "d2d")
        if not sess:
            return False, why
        if not os.path.isdir(sess.dir):
            return False, "no trace folder"
        js = os.path.join(workdir, case.name + ".json")
        rc, o, e = S.sh([S.TOOL, "timeline", "-o", js, "--pid", pid, sess.dir], timeout=120, env=S.cbt_tool_env())
        if rc != 0:
            if "unknown command" in (o + e) or "timeline" not in (o + e) and rc == 2:
                return None, "this cubatchtrace has no timeline command"
            return False, "timeline exit %d: %s" % (rc, (e or o).strip()[-300:])
        checker = os.path.join(TOP, "tests", "tool", "check_trace_events.py")
        rc, o, e = S.sh([S.PYTHON, checker, js, "--expect-host-spans", str(REPS + 1), "--expect-gpu-spans", str(REPS + 1)],
                        timeout=60)
        return rc == 0, (o + e).strip()[-400:] or "valid"
    return fn


def cases(S):
    C = S.Case
    out = []
    for door, kind in CASES:
        out.append(C("gputime-%s-%s" % (door, kind), "CUBATCHTRACE_GPU_TIME=1, %s, 5 batches of 4 x 64 MiB %s: one "
                     "GPU time per batch (gpu_time events), timed, within 10 %% of the client's own event timing; GB/s "
                     "reported" % (door, kind), gputime_case(S, door, kind),
                     needs=("cudart",)))
    out.append(C("gputime-timeline", "`cubatchtrace timeline` of a GPU-timed trace: the trace-event format checked "
                 "(tests/tool/check_trace_events.py), 6 host spans, 6 GPU spans", timeline_case(S),
                 needs=("cudart",)))
    return out
