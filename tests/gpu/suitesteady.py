# SPDX-License-Identifier: MIT
"""The steady path on the real driver: its cases, built by cases(S) where S is the suite module.

A thread whose batches repeat their buffers and streams takes the shim's steady path, which asks the
driver nothing (src/batch.c); what it records must be what the full steps record.  Each case runs a
door tests' client twice under a session: as is, and with CUBATCHTRACE_REPORT=stderr, which sends
every batch through the steps.  Both runs move every byte right; the first says (cc_say_steps) that
at most MAX of its batches took the steps; `cubatchtrace show` and `check --format json` of the two,
normalised by tests/tool/format_norm.py (addresses renamed by first appearance in their batch,
stream ids by first appearance), are the same.

  steady-churn      client_big3d 9 16 churn: a device buffer allocated and the one before freed ahead
                    of each batch (the driver hands freed addresses out again)
  steady-stream-churn  client_big3d 9 16 stream-churn: a stream made and destroyed ahead of each batch
  steady-streams    client_big3d 9 16 streams: batches on three streams in turn
  steady-streams-meet  client_big3d 9 16 streams-meet: the same on three streams whose handles the shim
                    hashes alike (picked by their values: the two runs may pick others)
  steady-pool       client_big3d 9 16 pool: four buffers in turn
  steady-1d-streams client_1d v2 streams 16: 1D batches on three streams in turn
  steady-renew      client_big3d 9 16 renew: the destination freed and allocated again ahead of each
                    batch (an operand new to the thread every batch: learned on the steady path)
  steady-1d-renew   client_1d v2 renew 16: the same for 1D batches
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
NORM = os.path.join(TOP, "tests", "tool", "format_norm.py")

# name, client, arguments, output wanted, the most batches through the steps
CASES = [
    ("steady-churn", "client_big3d", ["9", "16", "churn"], "batches=11 ops=176", 4),
    ("steady-stream-churn", "client_big3d", ["9", "16", "stream-churn"], "batches=11 ops=176", 4),
    ("steady-streams", "client_big3d", ["9", "16", "streams"], "batches=11 ops=176", 5),
    ("steady-streams-meet", "client_big3d", ["9", "16", "streams-meet"], "batches=11 ops=176", 5),
    ("steady-pool", "client_big3d", ["9", "16", "pool"], "batches=11 ops=176", 6),
    ("steady-1d-streams", "client_1d", ["v2", "streams", "16"], "batches=11 copies=176 bytes=45056", 5),
    ("steady-renew", "client_big3d", ["9", "16", "renew"], "batches=11 ops=176", 4),
    ("steady-1d-renew", "client_1d", ["v2", "renew", "16"], "batches=11 copies=176 bytes=45056", 4),
]


def norm(what, text):
    p = subprocess.run([sys.executable, NORM, what] + (["--stream-ids"] if what == "show" else []), input=text, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.stdout if p.returncode == 0 else None


def one_run(S, case, workdir, client, args, tag, env):
    """(problems, steps, normalised show, normalised check, output) of one traced run."""
    sess = S.Session(case.name + tag, workdir)
    if not sess.start():
        return ["lttng session: " + sess.error], None, None, None, None
    try:
        rc, out, err = S.run_client([S.b(client)] + args, 120, extra_env=env)
    finally:
        sess.stop()
    problems = []
    m = re.search(r'^%s: pid (\d+)$' % client, err, re.M)
    if rc != 0 or not m:
        return ["%s: client exit %d: %s" % (tag, rc, err.strip()[-300:])], None, None, None, None
    pid = m.group(1)
    s = re.search(r'^%s: steps (\d+)$' % client, err, re.M)
    texts = []
    for cmd, what in ((["show", "--records", "--pid", pid], "show"), (["check", "--format", "json", "--pid", pid], "check")):
        rc2, o2, e2 = S.sh([S.TOOL] + cmd + [sess.dir], timeout=300, env=S.cbt_tool_env())
        if what == "show" and rc2 != 0:
            problems.append("%s: cubatchtrace show exit %d: %s" % (tag, rc2, e2.strip()[-200:]))
        if what == "show":
            o2 = "\n".join(re.sub(r' validated=\d+', '', ln) for ln in o2.splitlines())
        texts.append(norm(what, o2))
    return problems, (int(s.group(1)) if s else None), texts[0], texts[1], out.strip()


def steady_case(S, client, args, want, most):
    def fn(case, workdir):
        p1, steps, show1, chk1, out1 = one_run(S, case, workdir, client, args, "", {})
        if out1 is None:
            return False, "; ".join(p1)
        p2, _, show2, chk2, out2 = one_run(S, case, workdir, client, args, "-steps", {"CUBATCHTRACE_REPORT": "stderr"})
        problems = p1 + p2
        for tag, out in (("as is", out1), ("through the steps", out2)):
            if out is not None and out != want:
                problems.append("%s: output %r, want %r" % (tag, out, want))
        if steps is None or steps > most:
            problems.append("%s of 11 batches took the steps, want at most %d" % (steps, most))
        nb = sum(1 for ln in (show1 or "").splitlines() if ln.startswith("batch "))
        if nb != 11:
            problems.append("show printed %d batches, want 11" % nb)
        if show1 is None or show2 is None or show1 != show2:
            a = (show1 or "").splitlines()
            b = (show2 or "").splitlines()
            diff = next(((x, y) for x, y in zip(a, b) if x != y), (len(a), len(b)))
            problems.append("show differs from the steps' run: %r" % (diff,))
        if chk1 != chk2:
            problems.append("check --format json differs from the steps' run")
        return not problems, "; ".join(problems[:4]) or \
            "%s; %d of 11 batches took the steps; show and check as with every batch through the steps" % (want, steps)
    return fn


def cases(S):
    C = S.Case
    return [C(name, "%s %s: every byte checked; at most %d of 11 batches through the steps; show and check the "
              "same as with CUBATCHTRACE_REPORT=stderr (every batch through the steps)" % (client, " ".join(args), most),
              steady_case(S, client, args, want, most))
            for name, client, args, want, most in CASES]
