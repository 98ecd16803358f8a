# SPDX-License-Identifier: MIT
"""The 1D batch (cuMemcpyBatchAsync) in the GPU suite: its cases, built by cases(S) where S is the suite module.

  1d-DOOR          client_1d through each driver door: every byte checked by the client; the trace holds its
                   four batches with their api, door, copies and attributes, and no finding
  1d-big-100000    one batch of 100,000 copies (and two more like it): data checked, every copy in the trace
  1d-rt-*          the CUDA runtime's cudaMemcpyBatchAsync (static and shared, per-thread default stream or not)
  1d-py-*          cuda-python: cuda.bindings.driver.cuMemcpyBatchAsync, runtime.cudaMemcpyBatchAsync, and the
                   pinned wheel's cuda.bindings._v2.driver.memcpy_batch_async_v2
  table1d-*        tests/gpu/clients/table1d.c, every row in a forked child: bare (against the measured table
                   tests/gpu/measured/table1d-h200.txt), then under the shim in observe mode (the program sees
                   the same answers; an error finding exactly on the rows the driver rejects or crashes on), in
                   strict mode (the same answers where the driver answers; the crashes it can tell refused) and
                   with the stderr report (the inline findings equal those computed when the trace is read)
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURED = os.path.join(HERE, "measured", "table1d-h200.txt")

DOORS = [
    ("v2", "cuMemcpyBatchAsync_v2", "symbol"),
    ("v2_ptsz", "cuMemcpyBatchAsync_v2_ptsz", "symbol"),
    ("v1", "cuMemcpyBatchAsync", "symbol"),
    ("v1_ptsz", "cuMemcpyBatchAsync_ptsz", "symbol"),
    ("dlsym_v2", "cuMemcpyBatchAsync_v2", "symbol"),
    ("dlsym_v1", "cuMemcpyBatchAsync", "symbol"),
    ("gpa13000", "cuMemcpyBatchAsync_v2", "getprocaddress"),
    ("gpa13000_ptsz", "cuMemcpyBatchAsync_v2_ptsz", "getprocaddress"),
    ("gpa12080", "cuMemcpyBatchAsync", "getprocaddress"),
    ("gpa12080_ptsz", "cuMemcpyBatchAsync_ptsz", "getprocaddress"),
    ("binding", "cuMemcpyBatchAsync_v2", "binding"),
]
WANT_1D = "batches=4 copies=24 bytes=21504"


def parse_rows(text):
    """ROW lines of table1d: {(row, door): {kind, rc, failidx, arrived, sig, pid}}."""
    rows = {}
    for line in text.splitlines():
        if not line.startswith("ROW "):
            continue
        w = line.split()
        kv = dict(x.split("=", 1) for x in w[2:] if "=" in x)
        rows[(w[1], kv.get("door", "?"))] = kv
    return rows


def answer(kv):
    """What the program saw of a row: the result, failIdx and the copies that arrived, or how it died."""
    if kv is None:
        return "missing"
    if kv.get("kind") == "result":
        return "rc=%s failidx=%s arrived=%s" % (kv.get("rc"), kv.get("failidx"), kv.get("arrived"))
    if kv.get("kind") == "signal":
        return "signal %s" % kv.get("sig")
    return kv.get("kind", "?")


def rejected(kv):
    return kv is not None and (kv.get("kind") == "signal" or (kv.get("kind") == "result" and kv.get("rc") != "0"))


def cases(S):
    C = S.Case
    out = []
    for door, api, via in DOORS:
        out.append(C("1d-" + door, "client_1d through %s: four 1D batches, every byte checked; trace: 4 batches "
                     "as %s via %s, 24 copies with their kinds, 5 attributes, no finding" % (door, api, via),
                     client1d_case(S, door, api, via)))
    out.append(C("1d-big-100000", "three 1D batches of 100,000 copies each (pinned->device, device->device "
                 "reversed, device->pinned), every byte checked; summary: 3 batches, 300,000 ops, no finding",
                 big_case(S, 100000)))
    for build, ptds in (("static", 0), ("shared", 0), ("static_ptds", 1), ("shared_ptds", 1)):
        api = "cuMemcpyBatchAsync_v2_ptsz" if ptds else "cuMemcpyBatchAsync_v2"
        out.append(C("1d-rt-" + build, "cudaMemcpyBatchAsync (%s runtime%s): data; trace 2 batches via "
                     "getprocaddress" % (build.split("_")[0], ", per-thread default stream" if ptds else ""),
                     rt_case(S, "rt1d_" + build), needs=("cudart",)))
    site = {"PYTHONPATH": S.SITE} if S.SITE else {}
    out.append(C("1d-py-driver", "cuda.bindings.driver.cuMemcpyBatchAsync (installed cuda-bindings): data; trace "
                 "2 batches as cuMemcpyBatchAsync_v2 via getprocaddress", py_case(S, "driver", {})))
    out.append(C("1d-py-runtime", "cuda.bindings.runtime.cudaMemcpyBatchAsync (installed cuda-bindings): data; "
                 "trace 2 batches via getprocaddress", py_case(S, "runtime", {}), needs=("cudart",)))
    out.append(C("1d-py-v2", "pinned cuda-bindings 13.5.0: cuda.bindings._v2.driver.memcpy_batch_async_v2: data; "
                 "trace 2 batches as cuMemcpyBatchAsync_v2 via getprocaddress", py_case(S, "v2", site),
                 needs=("site",)))
    out.append(C("table1d-bare", "the 1D table, bare driver: the answers of %s reproduced row by row" %
                 "tests/gpu/measured/table1d-h200.txt", table1d_case(S, "bare")))
    out.append(C("table1d-observe", "the 1D table under the shim, observe mode: every row's answer as without the "
                 "shim; an error finding (read from the trace) exactly on the rows the driver rejects or crashes on",
                 table1d_case(S, "observe")))
    out.append(C("table1d-strict", "the 1D table in strict mode: the driver's own answer on every row it answers "
                 "(result, failIdx, the copies made); the crashes the shim can tell refused instead",
                 table1d_case(S, "strict")))
    out.append(C("table1d-report", "the 1D table with CUBATCHTRACE_REPORT=stderr: the findings made on the calling "
                 "thread equal those computed when the trace is read, batch by batch",
                 table1d_case(S, "report")))
    return out


def show_all(S, sess):
    """`cubatchtrace show` of the whole session: {vpid: {id: batch}}, {vpid: {id: [findings]}}, counts, error."""
    rc, out, err = S.sh([S.TOOL, "show", "--records", sess.dir], timeout=300, env=S.cbt_tool_env())
    if rc != 0:
        return None, "cubatchtrace show exit %d: %s" % (rc, err.strip()[-300:])
    res = {"batches": {}, "findings": {}, "ops": {}, "attrs": {}, "inline_only": {}}
    for line in out.splitlines():
        if not line or line.startswith("#"):
            continue
        w = line.split()
        kv = dict(x.split("=", 1) for x in w[1:] if "=" in x)
        if "vpid" not in kv or "id" not in kv:
            continue
        key = (int(kv["vpid"]), int(kv["id"]))
        if w[0] == "batch":
            res["batches"][key] = kv
        elif w[0] == "finding":
            res["findings"].setdefault(key, []).append(kv)
        elif w[0] == "inline_finding":
            res["inline_only"].setdefault(key, []).append(kv)
        elif w[0] == "op":
            res["ops"][key] = res["ops"].get(key, 0) + 1
        elif w[0] == "attr":
            res["attrs"].setdefault(key, []).append(kv)
    return res, ""


def client_pid(err):
    """client_1d says its pid on stderr (sessions record every process of the user: the trace is read for it)."""
    m = re.search(r'^client_1d: pid (\d+)$', err, re.M)
    return int(m.group(1)) if m else None


def client1d_case(S, door, api, via):
    def fn(case, workdir):
        sess = S.Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client([S.b("client_1d"), door], 60)
        finally:
            sess.stop()
        problems = []
        if rc != 0 or out.strip() != WANT_1D:
            problems.append("client exit %d, output %r: %s" % (rc, out.strip()[-200:], err.strip()[-300:]))
        pid = client_pid(err)
        if pid is None:
            return False, "; ".join(problems + ["client_1d said no pid"])
        sh, serr = show_all(S, sess)
        if sh is None:
            return False, "; ".join(problems + [serr])
        for part in ("batches", "findings", "ops", "attrs"):
            sh[part] = {k: v for k, v in sh[part].items() if k[0] == pid}
        bs = sorted(sh["batches"].items())
        got = [(kv.get("api"), kv.get("door"), kv.get("outcome"), kv.get("num_ops"), kv.get("recorded"))
               for _, kv in bs]
        want = [(api, via, "forwarded", str(n), str(n)) for n in (3, 8, 2, 11)]
        if got != want:
            problems.append("batches %s, want %s" % (got, want))
        nops = sum(sh["ops"].values())
        if nops != 24:
            problems.append("%d copies decoded, want 24" % nops)
        nattrs = sum(len(v) for v in sh["attrs"].values())
        if nattrs != 5:
            problems.append("%d attributes decoded, want 5" % nattrs)
        nf = sum(len(v) for v in sh["findings"].values())
        if nf:
            problems.append("%d findings, want none: %s" % (nf, list(sh["findings"].values())[0]))
        return not problems, "; ".join(problems[:5]) or "4 batches, 24 copies, 5 attributes, no finding"
    return fn


def summary_json(S, sess, pid=None):
    rc, out, err = S.sh([S.TOOL, "summary", "--json"] + (["--pid", str(pid)] if pid else []) + [sess.dir],
                        timeout=300, env=S.cbt_tool_env())
    if rc != 0:
        return None, "cubatchtrace summary exit %d: %s" % (rc, err.strip()[-300:])
    try:
        return json.loads(out), ""
    except ValueError as e:
        return None, "summary --json: %s" % e


def big_case(S, n):
    def fn(case, workdir):
        sess = S.Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client([S.b("client_1d"), "v2", "big", str(n)], 300)
        finally:
            sess.stop()
        problems = []
        want = "batches=3 copies=%d bytes=%d" % (3 * n, 3 * n * 256)
        if rc != 0 or out.strip() != want:
            problems.append("client exit %d, output %r (want %r): %s" % (rc, out.strip(), want, err.strip()[-300:]))
        pid = client_pid(err)
        if pid is None:
            return False, "; ".join(problems + ["client_1d said no pid"])
        d, derr = summary_json(S, sess, pid)
        if d is None:
            return False, "; ".join(problems + [derr])
        got = (d.get("batches"), d.get("ops"), d.get("bytes"), d.get("discarded_events"))
        if got != (3, 3 * n, 3 * n * 256, 0):
            problems.append("summary batches/ops/bytes/discarded %s, want %s" % (got, (3, 3 * n, 3 * n * 256, 0)))
        nf = sum(f.get("count", 0) for f in d.get("findings", [])) if isinstance(d.get("findings"), list) else 0
        if nf:
            problems.append("%d findings" % nf)
        return not problems, "; ".join(problems[:4]) or "3 x %d copies recorded and summarised, %s" % (n, want)
    return fn


def trace_1d_batches(S, sess, pid, problems):
    sh, serr = show_all(S, sess)
    if sh is None:
        problems.append(serr)
        return []
    return [kv for (vp, _), kv in sorted(sh["batches"].items()) if pid is None or vp == pid]


def rt_case(S, binary):
    def fn(case, workdir):
        sess = S.Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client([S.b(binary)], 90)
        finally:
            sess.stop()
        m = S.parse_manifest(out)
        problems = []
        if rc != 0 or m["result"] != "ok":
            problems.append("client exit %d, RESULT %s; %s" % (rc, m["result"], "; ".join(S.failed_checks(m)) or
                                                                 err.strip()[-300:]))
        bs = trace_1d_batches(S, sess, m["pid"], problems)
        apis = sorted(set(kv.get("api") for kv in bs))
        doors = sorted(set(kv.get("door") for kv in bs))
        if len(bs) != 2 or doors != ["getprocaddress"] or not all(a and a.startswith("cuMemcpyBatchAsync") for a in apis):
            problems.append("trace: %d batches, apis %s, doors %s (want 2 1D batches via getprocaddress)" %
                            (len(bs), apis, doors))
        return not problems, "; ".join(problems[:4]) or "%s; api %s" % (m["info"].get("BUILD", ""), ",".join(apis))
    return fn


def py_case(S, mode, extra):
    def fn(case, workdir):
        if mode == "v2" and not S.SITE:
            return None, "the pinned cuda-bindings wheel was not installed (CBT_GPU_SITE)"
        sess = S.Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        env = dict(extra)
        env["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = None
        try:
            rc, out, err = S.run_client([S.PYTHON, os.path.join(HERE, "clients", "py1d.py"), mode], 120,
                                        extra_env=env)
        finally:
            sess.stop()
        m = S.parse_manifest(out)
        problems = []
        if rc != 0 or m["result"] != "ok":
            problems.append("client exit %d, RESULT %s; %s" % (rc, m["result"], "; ".join(S.failed_checks(m)) or
                                                                 err.strip()[-300:]))
        bs = trace_1d_batches(S, sess, m["pid"], problems)
        got = [(kv.get("api"), kv.get("door"), kv.get("num_ops")) for kv in bs]
        if len(bs) != 2 or any(g[1] != "getprocaddress" or g[2] != "8" or not (g[0] or "").startswith(
                "cuMemcpyBatchAsync") for g in got):
            problems.append("trace batches %s (want 2 of 8 copies via getprocaddress)" % got)
        return not problems, "; ".join(problems[:4]) or "bindings %s; %s" % (m["info"].get("BINDINGS", "?"),
                                                                             got[0][0] if got else "")
    return fn


# Rows where the process dies before the shim has written the batch: the arrays end at a PROT_NONE page that
# the shim reaches reading (as the driver does), or a stray stream handle the driver is asked about.
UNRECORDED_CRASH = re.compile(r'^(hole_|.*@v1as2-ninthgarbage$)')
# Rows the CPU test double cannot model (a dry run leaves them out): it makes the copies during the call, so a
# pinned source read in stream order arrives early, and the mixed-up signatures do not crash it the same way.
FAKE_UNMODELLED = re.compile(r'^deferred_|@v2as1$|@v1as2-ninth(stream|garbage)$')


def table1d_case(S, mode):
    def fn(case, workdir):
        if not os.path.exists(MEASURED):
            return False, "no %s" % MEASURED
        measured = parse_rows(open(MEASURED).read())
        if S.FAKE:
            measured = {k: v for k, v in measured.items() if not FAKE_UNMODELLED.search("%s@%s" % k)}
        sess = None
        env = {"TABLE1D_JOBS": "12"}
        if mode == "strict":
            env["CUBATCHTRACE_MODE"] = "strict"
        if mode == "report":
            env["CUBATCHTRACE_REPORT"] = "stderr"
        if mode != "bare":
            sess = S.Session(case.name, workdir)
            if not sess.start():
                return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client([S.b("table1d"), "run"], 300, shim=mode != "bare", extra_env=env)
        finally:
            if sess:
                sess.stop()
        got = parse_rows(out)
        if rc != 0 or not got:
            return False, "table1d exit %d, %d rows: %s" % (rc, len(got), err.strip()[-300:])
        problems, notes = [], []
        missing = sorted(set(measured) - set(got))
        if missing:
            problems.append("%d rows missing, first %s" % (len(missing), missing[0]))
        if mode == "bare":
            diff = ["%s@%s: %s, measured %s" % (r, d, answer(got.get((r, d))), answer(kv))
                    for (r, d), kv in sorted(measured.items()) if answer(got.get((r, d))) != answer(kv)]
            if diff:
                problems.append("%d of %d rows differ from the measured table: %s" % (len(diff), len(measured),
                                                                                     "; ".join(diff[:4])))
            return not problems, "; ".join(problems) or "%d rows as measured" % len(measured)
        sh, serr = show_all(S, sess)
        if sh is None:
            return False, serr
        by_pid = {}
        for (vp, bid), kv in sh["batches"].items():
            by_pid.setdefault(vp, []).append((bid, kv))
        agree = disagree = survived = unrecorded = 0
        for (r, d), want in sorted(measured.items()):
            g = got.get((r, d))
            if g is None:
                continue
            name = "%s@%s" % (r, d)
            pid = int(g.get("pid", "-1"))
            batches = [kv for _, kv in sorted(by_pid.get(pid, []))]
            errors = [f for bid, _ in sorted(by_pid.get(pid, [])) for f in sh["findings"].get((pid, bid), [])
                      if f.get("severity") == "error"]
            if mode in ("observe", "report"):
                # the program sees what it sees without the shim
                if answer(g) != answer(want):
                    problems.append("%s: %s under the shim, %s without" % (name, answer(g), answer(want)))
                if not batches:
                    if rejected(want) and want.get("kind") == "signal" and UNRECORDED_CRASH.match(name):
                        unrecorded += 1
                    else:
                        problems.append("%s: no batch in the trace (pid %d)" % (name, pid))
                    continue
                if bool(errors) == rejected(want):
                    agree += 1
                else:
                    disagree += 1
                    problems.append("%s: %s, error findings %s" % (name, answer(want),
                                                                   [f.get("rule") for f in errors] or "none"))
                if mode == "report":
                    inl = [x for bid, _ in sorted(by_pid.get(pid, [])) for x in sh["inline_only"].get((pid, bid), [])]
                    inl += [f for bid, _ in sorted(by_pid.get(pid, [])) for f in sh["findings"].get((pid, bid), [])
                            if f.get("inline") == "0"]
                    if inl:
                        problems.append("%s: inline and read-time findings differ: %s" % (name, inl[:2]))
            else:  # strict
                if want.get("kind") == "result":
                    if answer(g) != answer(want):
                        problems.append("%s: %s in strict mode, the driver answers %s" % (name, answer(g),
                                                                                          answer(want)))
                    else:
                        agree += 1
                elif g.get("kind") == "result" and g.get("rc") == "1":
                    survived += 1
                    notes.append("%s: %s refused (%s)" % (name, answer(g), ",".join(
                        f.get("rule", "?") for f in errors) or "?"))
                elif UNRECORDED_CRASH.match(name):
                    unrecorded += 1
                else:
                    problems.append("%s: %s in strict mode (the driver: %s)" % (name, answer(g), answer(want)))
        case.notes = notes
        summary = "%d rows: %d agree%s%s%s" % (len(measured), agree,
                                                ", %d crashes refused" % survived if mode == "strict" else "",
                                                ", %d crash before recording (%s)" % (
                                                    unrecorded, "arrays ending at PROT_NONE, stray stream")
                                                if unrecorded else "",
                                                ", %d disagree" % disagree if disagree else "")
        return not problems, "; ".join(problems[:5]) or summary
    return fn
