# SPDX-License-Identifier: MIT
"""Batch copies and graph capture in the GPU suite: its cases, built by cases(S) where S is the suite module.

  capture-bare        tests/gpu/clients/capture.c on the bare driver, every row of
                      tests/gpu/measured/capture-h200.txt (the table the test double is pinned to) run again:
                      the driver still answers so
  capture-SETTING     SETTING observe (a session listening), report (CUBATCHTRACE_REPORT=stderr), strict,
                      gputime (CUBATCHTRACE_GPU_TIME=1, a session listening): in GLOBAL, THREAD_LOCAL and RELAXED
                      capture, 3D and 1D, valid, empty, malformed, on the legacy stream: the batch's result,
                      failIdx, the capture state after it, cuStreamEndCapture's result, the graph's node count,
                      its launch and the data after it equal the bare driver's; `cubatchtrace check` on the
                      trace exits 1 with one refused_in_capture finding per batch the driver refused in capture
  capture-late-KIND   a GLOBAL capture begun through each door (linked, cuGetProcAddress, dlsym, ToGraph) after 3
                      batches timed on the GPU: the batch in it as bare (the graph's nodes too), said capturing
  capture-other-KIND  another thread holds a GLOBAL capture (a memset node) while this thread makes 20 batches
                      timed on the GPU (CUBATCHTRACE_GPU_TIME=1): the capture ends as without the shim (graph of
                      1 node, launched, the memset's data) and the 20 batches are timed
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "measured", "capture-h200.txt")
KINDS = ["3d", "3dv1", "3d0", "1d", "1dv1", "1d0", "3dbad", "1dbad", "3dlegacy"]
MODES = ["global", "thread", "relaxed"]
SETTINGS = {"observe": {"CUBATCHTRACE_MODE": "observe"}, "report": {"CUBATCHTRACE_REPORT": "stderr"},
            "strict": {"CUBATCHTRACE_MODE": "strict"}, "gputime": {"CUBATCHTRACE_GPU_TIME": "1"}}


def line(out, tag):
    for x in out.splitlines():
        if x.startswith(tag + " "):
            return x.strip()
    return None


def bare_case(S):
    def fn(case, workdir):
        problems, n = [], 0
        with open(TABLE) as f:
            rows = [x.strip() for x in f if x.startswith(("CAPTURE ", "OTHER "))]
        for want in rows:
            kv = dict(w.split("=", 1) for w in want.split()[1:])
            if want.startswith("CAPTURE "):
                cmd = [S.b("capture"), "batch", kv["mode"], kv["kind"]]
            else:
                cmd = [S.b("capture"), "other", kv["kind"], kv["n"]]
            rc, out, err = S.run_client(cmd, 30, shim=False)
            got = line(out, want.split()[0])
            n += 1
            if got != want:
                problems.append("%s: got %s" % (" ".join(cmd[1:]), got or "(no line; exit %d)" % rc))
        return not problems, "; ".join(problems[:3]) or "%d rows as measured" % n
    return fn


def setting_case(S, setting):
    def fn(case, workdir):
        sess = S.Session("capture-" + setting, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        problems, refused, n = [], 0, 0
        try:
            for mode in MODES:
                for k in KINDS:
                    cmd = [S.b("capture"), "batch", mode, k]
                    _, bout, _ = S.run_client(cmd, 30, shim=False)
                    rc, out, err = S.run_client(cmd, 30, extra_env=SETTINGS[setting])
                    want, got = line(bout, "CAPTURE"), line(out, "CAPTURE")
                    n += 1
                    if not want or got != want:
                        problems.append("%s %s: shim %s, bare %s" % (mode, k, got, want))
                    if got and " rc=900 " in got:
                        refused += 1
        finally:
            sess.stop()
        rc, out, err = S.sh([S.TOOL, "check", "--format", "json", sess.dir], timeout=120, env=S.cbt_tool_env())
        named = len(re.findall(r'"rule":\s*"refused_in_capture"', out))
        if rc != 1:
            problems.append("check exit %d (want 1): %s" % (rc, err.strip()[-200:]))
        if named != refused:
            problems.append("check names %d refused_in_capture, the driver refused %d in capture" % (named, refused))
        return not problems, "; ".join(problems[:3]) or "%d runs as bare; %d refused in capture, each named" % (n, refused)
    return fn


def other_case(S, kind):
    def fn(case, workdir):
        cmd = [S.b("capture"), "other", kind, "20"]
        _, bout, _ = S.run_client(cmd, 60, shim=False)
        sess = S.Session("capture-other-" + kind, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client(cmd, 60, extra_env={"CUBATCHTRACE_GPU_TIME": "1"})
        finally:
            sess.stop()
        problems = []
        want, got = line(bout, "OTHER"), line(out, "OTHER")
        if not want or got != want:
            problems.append("shim %s, bare %s" % (got, want))
        rc, sout, err = S.sh([S.TOOL, "summary", "--json", sess.dir], timeout=120, env=S.cbt_tool_env())
        try:
            timed = json.loads(sout)["gpu"]["batches_timed"]
        except (ValueError, KeyError, TypeError):
            m = re.search(r'"batches_timed":\s*(\d+)', sout)
            timed = int(m.group(1)) if m else -1
        if timed != 20:
            problems.append("%s batches timed (want 20)" % timed)
        return not problems, "; ".join(problems) or "capture intact (%s); 20 batches timed" % got
    return fn


LATE_DOORS = ("direct", "gpa", "dlsym", "tograph")


def late_case(S, kind):
    """A GLOBAL capture begun after 3 timed batches, through each door that begins one: GPU time asks
    nothing of a stream until the process began a capture, so the shim must see every door; the batch
    in the capture gets no timing event (the graph as bare) and says capturing."""
    def fn(case, workdir):
        sess = S.Session("capture-late-" + kind, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        problems, runs = [], 0
        try:
            for d in LATE_DOORS:
                cmd = [S.b("capture"), "late", d, kind, "3"]
                _, bout, _ = S.run_client(cmd, 60, shim=False)
                rc, out, err = S.run_client(cmd, 60, extra_env={"CUBATCHTRACE_GPU_TIME": "1"})
                want, got = line(bout, "LATE"), line(out, "LATE")
                if not want or got != want:
                    problems.append("%s: shim %s, bare %s" % (d, got, want))
                if want and "unsupported" not in want:
                    runs += 1
        finally:
            sess.stop()
        rc, sout, err = S.sh([S.TOOL, "summary", "--json", sess.dir], timeout=120, env=S.cbt_tool_env())
        try:
            g = json.loads(sout)["gpu"]
            capturing = g["not_timed"]["capturing"]
        except (ValueError, KeyError, TypeError):
            capturing = -1
        if capturing != runs:
            problems.append("%s batches said capturing (want %d, one per capture)" % (capturing, runs))
        return not problems, "; ".join(problems[:3]) or "%d doors: each capture as bare, its batch not timed" % runs
    return fn


def cases(S):
    C = [S.Case("capture-bare", "bare driver: the capture table (tests/gpu/measured/capture-h200.txt) again",
                bare_case(S))]
    for s in SETTINGS:
        C.append(S.Case("capture-" + s, "capture in every mode, 3D and 1D: the shim (%s) gives the bare driver's "
                        "answers; check names each copy refused in capture" % s, setting_case(S, s),
))
    for k in ("3d", "1d"):
        C.append(S.Case("capture-other-" + k, "another thread's GLOBAL capture while this thread makes %s batches "
                        "timed on the GPU: the capture ends as bare; every batch timed" % k, other_case(S, k),
))
    for k in ("3d", "1d"):
        C.append(S.Case("capture-late-" + k, "a GLOBAL capture begun after timed %s batches, through each door "
                        "(linked, cuGetProcAddress, dlsym, ToGraph): the capture as bare, its batch not timed" % k,
                        late_case(S, k)))
    return C
