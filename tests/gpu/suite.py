# SPDX-License-Identifier: MIT
"""The GPU test suite of cubatchtrace (driven by tests/gpu/run; see tests/gpu/README.md).

Every case runs one client (tests/gpu/clients, built into CBT_GPU_BIN by
tests/gpu/build) with the shim preloaded under its own LTTng session, then
holds the client's manifest (what it called, what came back, whether the
bytes arrived) against the trace of the client's vpid: the batches and their
ops as babeltrace2 prints the events (btparse.py decodes the raw op bytes and
operands), the findings as `cubatchtrace show` computes them when it reads
the trace (observe mode writes none), or, where a case runs strict mode or
the stderr report, the shim's own `finding` events.  The reads-* cases run
tests/gpu/clients/reads.c: what the driver reads of a batch before it
answers, bare and under the shim.  One line per case on stdout, a Markdown
report in --out, a final "N passed, N failed" line; exit status 1 when a
case failed.

Environment (set by tests/gpu/run):
  CBT_GPU_BIN        prebuilt clients              CBT_GPU_SHIM     libcubatchtrace.so
  CBT_GPU_LTTNG      the lttng command             CBT_GPU_BT2      babeltrace2 command line (shell words)
  CBT_GPU_LIBDIRS    extra LD_LIBRARY_PATH for clients and tools (LTTng's libraries, the driver)
  CBT_GPU_PYTHON     python for the cuda-bindings clients (default python3)
  CBT_GPU_SITE       --target folder the pinned cuda-bindings wheel was installed to ("" = none)
  CBT_GPU_TOOL       the cubatchtrace tool (default: tools/cubatchtrace of the build tree CBT_GPU_SHIM
                     comes from, i.e. gpu-stage/build/tools/cubatchtrace)
  CBT_GPU_FAKECUDA   dry run over the CPU test double in this folder (cases it cannot serve are skipped;
                     the peer_* cases run it with FAKECUDA_DEVICE_COUNT=2 unless that is set)
  CBT_GPU_CASES      comma-separated case names or prefixes to run (default: all)
  CBT_GPU_DEADLINE   seconds for the whole suite (default 480)
  CBT_GPU_ADVICE_COSTS  the advice cost table the advice-* cases use instead of the one advice-costs measures
                     (OUTFILE without .md, then -advice-costs.txt)
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import btparse  # noqa: E402
import suite1d  # noqa: E402
import suiteadvice  # noqa: E402
import suitecapture  # noqa: E402
import suitegpu  # noqa: E402
import suitesteady  # noqa: E402

ENV = os.environ
BIN = ENV.get("CBT_GPU_BIN", "gpu-stage/bin")
SHIM = ENV.get("CBT_GPU_SHIM", "gpu-stage/build/src/.libs/libcubatchtrace.so")
LTTNG = ENV.get("CBT_GPU_LTTNG", "lttng")
BT2 = shlex.split(ENV.get("CBT_GPU_BT2", "babeltrace2"))
LIBDIRS = ENV.get("CBT_GPU_LIBDIRS", "")
PYTHON = ENV.get("CBT_GPU_PYTHON", "python3")
SITE = ENV.get("CBT_GPU_SITE", "")
FAKE = ENV.get("CBT_GPU_FAKECUDA", "")


def default_tool(shim):
    """BUILD/src/.libs/libcubatchtrace.so -> BUILD/tools/cubatchtrace (the tool of the same build tree)."""
    d = os.path.dirname(os.path.abspath(shim))
    if os.path.basename(d) == ".libs" and os.path.basename(os.path.dirname(d)) == "src":
        return os.path.join(os.path.dirname(os.path.dirname(d)), "tools", "cubatchtrace")
    return "gpu-stage/build/tools/cubatchtrace"


TOOL = ENV.get("CBT_GPU_TOOL") or default_tool(SHIM)
OUT = None  # the report's path (main sets it): the advice-costs case writes its table beside it
SELECT = [s for s in ENV.get("CBT_GPU_CASES", "").split(",") if s]
DEADLINE = time.time() + float(ENV.get("CBT_GPU_DEADLINE", "480"))
HERE = os.path.dirname(os.path.abspath(__file__))
PYCLIENT = os.path.join(HERE, "clients", "pyclient.py")

API_V2, API_V2_PTSZ, API_V1, API_V1_PTSZ = ("cuMemcpy3DBatchAsync_v2", "cuMemcpy3DBatchAsync_v2_ptsz",
                                            "cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_ptsz")
RESULT_NAMES = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE"}


def lib_path(extra=""):
    parts = [p for p in (FAKE, extra, LIBDIRS, ENV.get("LD_LIBRARY_PATH", "")) if p]
    return ":".join(parts)


def tool_env():
    e = dict(ENV)
    e["LD_LIBRARY_PATH"] = lib_path()
    return e


def cbt_tool_env():
    """tool_env for the cubatchtrace tool: libbabeltrace2 unpacked from gpu-stage/debs finds its plugins only
    where it is told (tests/gpu/run passes --plugin-path to babeltrace2; the library reads the variable)."""
    e = tool_env()
    for w in BT2:
        if w.startswith("--plugin-path="):
            e["BABELTRACE_PLUGIN_PATH"] = w.split("=", 1)[1]
    return e


def sh(cmd, timeout=30, env=None):
    """Run a tool; (rc, stdout, stderr).  Never raises."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=env or tool_env(), universal_newlines=True, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %ss: %s" % (timeout, " ".join(cmd))
    except OSError as e:
        return 127, "", "%s: %s" % (cmd[0], e)


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2)


def no_aslr():
    """In the child before exec: the same addresses in every run of a program (setarch -R)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    cur = libc.personality(0xffffffff)
    if cur != -1:
        libc.personality(cur | ADDR_NO_RANDOMIZE)


def aslr_off_works():
    """Whether personality(ADDR_NO_RANDOMIZE) holds here (a sandbox may refuse it)."""
    outs = set()
    for _ in range(2):
        try:
            outs.add(subprocess.run(["sh", "-c", "grep -m1 heap /proc/self/maps || head -1 /proc/self/maps"],
                                    stdout=subprocess.PIPE, universal_newlines=True, preexec_fn=no_aslr,
                                    timeout=10).stdout)
        except (OSError, subprocess.SubprocessError):
            return False
    return len(outs) == 1


def run_client(cmd, timeout, shim=True, extra_env=None, fixed_addresses=False):
    """Run a client in its own process group; returns (rc, stdout, stderr); rc 124 on timeout.
    fixed_addresses: without address-space randomisation, so that two runs see the same addresses."""
    e = dict(ENV)
    e["LD_LIBRARY_PATH"] = lib_path()
    e["LTTNG_UST_ALLOW_BLOCKING"] = "1"
    e.pop("LD_PRELOAD", None)
    for k in list(e):
        if k.startswith("CUBATCHTRACE_") and k not in ("CUBATCHTRACE_LIBCUDA", "CUBATCHTRACE_TP_LIB"):
            e.pop(k, None)
    if shim:
        e["LD_PRELOAD"] = os.path.abspath(SHIM)
    for k, v in (extra_env or {}).items():
        if v is None:
            e.pop(k, None)  # unset, not empty: cuda-bindings reads an empty value as set
        else:
            e[k] = v
    budget = max(5, min(timeout, DEADLINE - time.time()))
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, universal_newlines=True,
                             stdin=subprocess.DEVNULL, start_new_session=True,
                             preexec_fn=no_aslr if fixed_addresses else None)
    except OSError as ex:
        return 127, "", "%s: %s" % (cmd[0], ex)
    try:
        out, err = p.communicate(timeout=budget)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        return 124, out, err + "\n[killed after %.0fs]" % budget


class Session:
    """One LTTng session recording every cubatchtrace event, with vpid/vtid/procname, to a folder of its own."""

    def __init__(self, name, workdir):
        self.name = "cbtgpu-%d-%s" % (os.getpid(), re.sub(r'[^A-Za-z0-9_-]', '_', name))
        self.dir = os.path.join(workdir, self.name)
        self.started = False
        self.error = ""

    def start(self):
        steps = [
            # --no-sessiond: never let lttng spawn a daemon of its own (tests/gpu/run manages it)
            [LTTNG, "--no-sessiond", "create", self.name, "--output=" + self.dir],
            [LTTNG, "enable-channel", "-u", "-s", self.name, "--blocking-timeout=inf", "--subbuf-size=1M",
             "--num-subbuf=8", "ch"],
            [LTTNG, "enable-event", "-u", "-s", self.name, "-c", "ch", "cubatchtrace:*"],
            [LTTNG, "add-context", "-u", "-s", self.name, "-c", "ch", "-t", "vpid", "-t", "vtid", "-t", "procname"],
            [LTTNG, "start", self.name],
        ]
        for i, cmd in enumerate(steps):
            rc, out, err = sh(cmd)
            if rc != 0:
                self.error = "%s: %s" % (" ".join(cmd[:2]), (err or out).strip()[-300:])
                if i > 0:
                    sh([LTTNG, "destroy", self.name])
                return False
        self.started = True
        return True

    def stop(self):
        if not self.started:
            return
        sh([LTTNG, "stop", self.name], timeout=60)
        sh([LTTNG, "destroy", self.name], timeout=60)
        self.started = False

    def text(self):
        if not os.path.isdir(self.dir):
            return "", "no trace folder %s" % self.dir
        rc, out, err = sh(BT2 + [self.dir], timeout=120)
        if rc == 0:
            return out, ""
        if "No source component" in err or "No trace" in err:
            return out, "no trace was recorded (no CTF stream in %s)" % self.dir
        lines = [x.strip() for x in err.splitlines() if x.strip()]
        return out, "exit %d: %s" % (rc, lines[-1] if lines else "")


# ------------------------------------------------------------------ manifests

def parse_manifest(out):
    m = {"pid": None, "childpid": None, "batches": {}, "ops": {}, "checks": [], "result": None, "cases": [],
         "rows": None, "info": {}, "crash": None, "gpa": [], "skip": None, "calls": [], "measure": {},
         "arrived": {}, "bufs": {}, "peer": None, "enable": [], "outcome": None}
    for line in out.splitlines():
        w = line.split(" ", 1)
        tag, rest = w[0], (w[1] if len(w) > 1 else "")
        if tag == "PID":
            m["pid"] = int(rest)
        elif tag == "CHILDPID":
            m["childpid"] = int(rest)
        elif tag == "BATCH":
            k, kv = rest.split(" ", 1)
            m["batches"][int(k)] = dict(x.split("=", 1) for x in kv.split())
        elif tag == "OP":
            k, i, kv = rest.split(" ", 2)
            m["ops"].setdefault(int(k), {})[int(i)] = dict(x.split("=", 1) for x in kv.split())
        elif tag == "CHECK":
            parts = rest.split(" ", 2)
            m["checks"].append((parts[0], parts[1] if len(parts) > 1 else "?", parts[2] if len(parts) > 2 else ""))
        elif tag == "RESULT":
            m["result"] = rest.strip()
        elif tag == "CASE":
            mm = re.match(r'(\d+) batch=(\d+) want=(\w+) rc=(-?\d+) failidx=(\S+) wantidx=(\S+) name=(.*)$', rest)
            if mm:
                m["cases"].append({"row": int(mm.group(1)), "batch": int(mm.group(2)), "want": mm.group(3),
                                   "rc": int(mm.group(4)), "failidx": mm.group(5), "wantidx": mm.group(6),
                                   "name": mm.group(7)})
        elif tag == "ROWS":
            m["rows"] = int(rest)
        elif tag == "CRASH":
            m["crash"] = rest.strip()
        elif tag == "GPA":
            m["gpa"].append(dict(x.split("=", 1) for x in rest.split()))
        elif tag == "SKIP":
            m["skip"] = rest.strip()
        elif tag == "CALL":
            m["calls"].append(int(rest))
        elif tag == "MEASURE":
            k, kv = rest.split(" ", 1)
            m["measure"][int(k)] = dict(x.split("=", 1) for x in kv.split())
        elif tag == "ARRIVED":
            k, i, st, kv = rest.split(" ", 3)
            m["arrived"].setdefault(int(k), {})[int(i)] = dict([("arrived", st)] + [x.split("=", 1) for x in kv.split()])
        elif tag == "BUF":
            name, kv = rest.split(" ", 1)
            m["bufs"][name] = dict(x.split("=", 1) for x in kv.split())
        elif tag == "OUTCOME":
            m["outcome"] = dict(x.split("=", 1) for x in rest.split())
        elif tag == "PEER":
            m["peer"] = dict(x.split("=", 1) for x in rest.split())
        elif tag == "ENABLE":
            d, kv = rest.split(" ", 1)
            m["enable"].append(dict([("dir", d)] + [x.split("=", 1) for x in kv.split()]))
        elif tag in ("BINDINGS", "BUILD", "RUNTIME", "PTDS_ENV", "LIBCUDA", "DRIVER_VERSION", "DEVICE_NAME",
                     "DEVICE_COUNT", "EXCEPTION"):
            m["info"][tag] = rest.strip()
    return m


def to_int(v):
    return int(v, 16) if v.startswith(("0x", "0X")) else int(v)


def failed_checks(m):
    return ["%s: %s" % (n, d) if d else n for n, st, d in m["checks"] if st == "FAIL"]


# ------------------------------------------------------------------ results

class Case:
    def __init__(self, name, what, fn, needs=()):
        self.name, self.what, self.fn, self.needs = name, what, fn, needs
        self.status, self.detail, self.seconds, self.notes = "not run", "", 0.0, []


RESULTS = []
EXTRA = {"table_rows": {}, "gpa": [], "driver": {}, "facts_diff": [], "versions": {}, "peer_rows": [],
         "inline_vs_read": None, "probes": []}


def tool_ok():
    return os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def show_for(sess, pid):
    """`cubatchtrace show --records --pid PID` of the session's trace, parsed (btparse.parse_show); (show, error)."""
    if not tool_ok():
        return None, "no cubatchtrace tool at %s (set CBT_GPU_TOOL)" % TOOL
    rc, out, err = sh([TOOL, "show", "--records", "--pid", str(pid), sess.dir], timeout=120, env=cbt_tool_env())
    if rc != 0:
        return None, "cubatchtrace show exit %d: %s" % (rc, err.strip()[-300:])
    sh_ = btparse.parse_show(out, pid)
    if sh_["bad"]:
        return sh_, "cubatchtrace show: %d lines not key=value, first: %s" % (len(sh_["bad"]), sh_["bad"][0][:160])
    return sh_, ""


def trace_for(sess, pid, problems=None):
    """The trace of vpid `pid`: its batches with their ops decoded from the raw events (btparse.Trace) and the
    reader's findings from `cubatchtrace show`.  What goes wrong reading it is appended to `problems`."""
    text, err = sess.text()
    events, bad = btparse.parse_text(text)
    tr = btparse.Trace(events, pid) if pid is not None else None
    if tr is not None:
        show, serr = show_for(sess, pid)
        if show is not None:
            tr.attach_show(show)
        if problems is not None:
            if serr:
                problems.append(serr)
            problems.extend(tr.problems[:3])
    return tr, events, bad, err


def compare_with_show(tr, problems, states=("complete",)):
    """The tool's view of every batch must be the suite's: the same batches, in the expected state, and the
    same ops decoded (two decoders of the raw op bytes, independent of each other)."""
    if tr.show is None:
        return
    sb = tr.show["batches"]
    if sorted(sb) != sorted(tr.batches):
        problems.append("cubatchtrace show has batches %s, the events %s" % (sorted(sb)[:10], sorted(tr.batches)[:10]))
    for k, b in sorted(tr.batches.items()):
        line = sb.get(k)
        if line is None:
            continue
        if line.get("state") not in states:
            problems.append("batch %d: show state=%s, want %s" % (k, line.get("state"), "/".join(states)))
        if line.get("recorded") != str(b.get("ops_recorded")):
            problems.append("batch %d: show recorded=%s, event ops_recorded=%s" % (k, line.get("recorded"),
                                                                                  b.get("ops_recorded")))
        sops = tr.show["ops"].get(k, {})
        if sorted(sops) != list(range(len(b["ops"]))):
            problems.append("batch %d: show has %d op lines, %d ops decoded" % (k, len(sops), len(b["ops"])))
            continue
        for i, op in enumerate(b["ops"]):
            d = btparse.show_op_mismatches(op, sops[i])
            if d:
                problems.append("batch %d op %d: show %s" % (k, i, "; ".join(d[:3])))
                return


def check_data_trace(m, tr, api, door, problems, notes):
    """The trace must hold every batch and op of the manifest with the right api and door: the ops decoded from
    the raw op bytes and operands of the events, the findings from `cubatchtrace show`."""
    want_batches = sorted(m["batches"])
    got = sorted(tr.batches)
    if got != want_batches:
        problems.append("trace batch ids %s, manifest %s" % (got, want_batches))
    if tr.duplicates:
        problems.append("batch ids recorded twice: %s" % tr.duplicates)
    total_ops = 0
    for k in want_batches:
        mb = m["batches"][k]
        b = tr.batches.get(k)
        if b is None:
            continue
        n = int(mb["n"])
        total_ops += n
        if b["api"] != api:
            problems.append("batch %d api %s, want %s" % (k, b["api"], api))
        if b["door"] != door:
            problems.append("batch %d door %s, want %s" % (k, b["door"], door))
        if b["num_ops"] != n:
            problems.append("batch %d num_ops %d, manifest %d" % (k, b["num_ops"], n))
        if b["outcome"] != "forwarded":
            problems.append("batch %d outcome %s" % (k, b["outcome"]))
        rc = int(mb["rc"])
        if rc in RESULT_NAMES and b["result"] != RESULT_NAMES[rc]:
            problems.append("batch %d result %s, client saw %d" % (k, b["result"], rc))
        if mb.get("failidx", "-") != "-" and b["fail_idx"] != int(mb["failidx"]):
            problems.append("batch %d fail_idx %d, client saw %s" % (k, b["fail_idx"], mb["failidx"]))
        if api in (API_V2, API_V2_PTSZ) and b["fail_idx"] != (1 << 64) - 1:
            problems.append("batch %d: fail_idx %d on a _v2 call" % (k, b["fail_idx"]))
        errs = tr.errors(k)
        if mb["expect"] == "ok" and errs:
            problems.append("batch %d succeeded but has error findings %s" % (k, [str(f["rule"]) for f in errs]))
        if mb["expect"] == "fail" and not errs:
            problems.append("batch %d failed but no error finding was recorded" % k)
        others = tr.rules(k)
        if others:
            notes.append("batch %d findings: %s" % (k, ", ".join(sorted(set(others)))))
        ops = b["ops"]
        if len(ops) != n:
            problems.append("batch %d: %d ops in the trace, %d in the manifest" % (k, len(ops), n))
            continue
        for i, mop in sorted(m["ops"].get(k, {}).items()):
            top = ops[i]
            for key, v in mop.items():
                if key not in top:
                    problems.append("batch %d op %d: no field %s in the trace" % (k, i, key))
                    continue
                want = to_int(v)
                if top[key] != want:
                    problems.append("batch %d op %d: %s = %s in the trace, %s in the client" % (
                        k, i, key, hex(top[key]) if key.endswith("addr") else top[key], v))
        if b.get("ops_recorded") != len(ops):
            problems.append("batch %d: ops_recorded %s, %d ops in the chunks" % (k, b.get("ops_recorded"), len(ops)))
        if b.get("validated") or tr.inline.get(k):
            problems.append("batch %d: validated=%s and %d finding events in observe mode (findings are the "
                            "reader's)" % (k, b.get("validated"), len(tr.inline.get(k, []))))
    extra = set(tr.batches) - set(want_batches)
    if extra:
        problems.append("unexpected batches in the trace: %s" % sorted(extra))
    compare_with_show(tr, problems)
    notes.append("%d batches, %d ops matched (decoded from the raw ops; cubatchtrace show agrees)" % (
        len(want_batches), total_ops))


def data_case(cmd, api, door, timeout=90, extra_env=None, want_bindings=None):
    def fn(case, workdir):
        sess = Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = run_client(cmd, timeout, extra_env=extra_env)
        finally:
            sess.stop()
        m = parse_manifest(out)
        problems, notes = [], []
        if rc != 0 or m["result"] != "ok":
            problems.append("client exit %d, RESULT %s; %s" % (rc, m["result"], "; ".join(failed_checks(m)) or
                                                                 err.strip()[-400:]))
        data = [c for c in m["checks"] if c[0].startswith("data-")]
        if not any(st == "ok" for n, st, d in data):
            problems.append("no data check passed")
        for k in ("BINDINGS", "BUILD", "RUNTIME", "PTDS_ENV"):
            if k in m["info"]:
                notes.append("%s %s" % (k.lower(), m["info"][k]))
        if want_bindings and not m["info"].get("BINDINGS", "").startswith(want_bindings + " "):
            problems.append("cuda-bindings %s, want %s" % (m["info"].get("BINDINGS", "?"), want_bindings))
        if m["pid"] is None:
            problems.append("the client printed no PID")
        else:
            tr, events, bad, bterr = trace_for(sess, m["pid"], problems)
            if bterr and m["batches"]:
                problems.append("babeltrace2: " + bterr[-300:])
            if bad:
                problems.append("%d unparsable trace lines, first: %s" % (len(bad), bad[0][:160]))
            check_data_trace(m, tr, api, door, problems, notes)
        case.notes = notes
        return not problems, "; ".join(problems[:6]) or "; ".join(notes[-1:])
    return fn


# ------------------------------------------------------------------ the accept/reject table

def row_store(case_name, rows):
    EXTRA["table_rows"][case_name] = rows


def stderr_error_batches(err):
    out = {}
    for mm in re.finditer(r'cubatchtrace: (\w+): (\w+)[^\n]*\n  [^\n]*\n(?:  fix: [^\n]*\n)?  batch (\d+) \(([^ ]+) via ([^)]+)\)', err):
        out.setdefault(int(mm.group(3)) & 0xffffffff, []).append((mm.group(1), mm.group(2)))
    return out


def fmt_keys(keys):
    return "[%s]" % ", ".join("%s/%s op %s other %s %s value %d limit %d" % (
        r, sev, "-" if op is None else op, "-" if o is None else o, side, v, lim)
        for r, sev, op, o, side, v, lim in keys) if keys else "none"


def table_case(door, mode):
    """mode: observe (verdicts: the error findings `cubatchtrace show` computes from the trace), report (the
    shim's stderr report), strict (the shim's own finding events; the reader must find the same), bare (the
    driver against the facts file)."""
    def fn(case, workdir):
        args = [os.path.join(BIN, "drv"), "table", door] + (["unmapped"] if mode == "strict" else [])
        env = {}
        if mode == "report":
            env["CUBATCHTRACE_REPORT"] = "stderr"
        if mode == "strict":
            env["CUBATCHTRACE_MODE"] = "strict"
        sess = None
        if mode in ("observe", "strict"):
            sess = Session(case.name, workdir)
            if not sess.start():
                return False, "lttng session: " + sess.error
        try:
            rc, out, err = run_client(args, 120, shim=(mode != "bare"), extra_env=env)
        finally:
            if sess:
                sess.stop()
        m = parse_manifest(out)
        problems = []
        if rc != 0 or m["rows"] is None:
            problems.append("client exit %d (%s), %s rows printed; %s" % (
                rc, "signal %d" % -rc if rc < 0 else "status", len(m["cases"]), err.strip()[-300:]))
        tr = None
        if sess and m["pid"] is not None:
            tr, events, bad, bterr = trace_for(sess, m["pid"], problems)
            if bterr:
                problems.append("babeltrace2: " + bterr[-300:])
            if mode == "observe":
                compare_with_show(tr, problems)
                inl = sorted(k for k, b in tr.batches.items() if b.get("validated") or tr.inline.get(k))
                if inl:
                    problems.append("observe mode: batches %s validated inline (finding events)" % inl[:8])
            else:
                # strict: the verdict is the shim's own (its finding events); the reader must agree with it
                compare_with_show(tr, problems, states=("complete",))
                differ = [k for k in sorted(tr.batches) if tr.inline_keys(k) != tr.read_keys(k)]
                for k in differ[:3]:
                    problems.append("batch %d: inline findings %s, read-time %s" % (
                        k, fmt_keys(tr.inline_keys(k)), fmt_keys(tr.read_keys(k))))
                nv = [k for k, b in sorted(tr.batches.items()) if not b.get("validated")]
                if nv:
                    problems.append("strict mode: batches %s not validated inline" % nv[:8])
        rep = stderr_error_batches(err) if mode == "report" else {}
        rows = []
        for c in m["cases"]:
            k = c["batch"]
            row = {"name": c["name"], "want": c["want"], "rc": c["rc"], "failidx": c["failidx"], "verdict": None,
                   "rules": "", "agree": None, "note": ""}
            driver_fail = c["rc"] != 0
            if mode in ("observe", "strict"):
                b = tr.batches.get(k) if tr else None
                errs = (tr.errors(k) if mode == "observe" else tr.inline_errors(k)) if tr else []
                row["verdict"] = "reject" if errs else "accept"
                row["rules"] = ",".join(sorted(set(str(f["rule"]) for f in errs)))
                if b is None:
                    row["note"] = "no batch %d in the trace" % k
                    row["agree"] = False
                elif mode == "observe":
                    ok = (bool(errs) == driver_fail and b["outcome"] == "forwarded" and
                          b["result"] == RESULT_NAMES.get(c["rc"], b["result"]))
                    if c["failidx"] != "-" and b["fail_idx"] != int(c["failidx"]):
                        ok = False
                        row["note"] = "trace fail_idx %d, client %s" % (b["fail_idx"], c["failidx"])
                    row["agree"] = ok
                else:  # strict: refused exactly when an error was found; refused calls answer INVALID_VALUE
                    refused = b["outcome"] == "refused"
                    ok = refused == bool(errs) and (not refused or c["rc"] == 1)
                    if c["want"] == "crash":
                        ok = ok and refused and "pointer_unmapped" in row["rules"]
                    row["outcome"] = str(b["outcome"])
                    row["agree"] = ok
            elif mode == "report":
                errs = [r for sev, r in rep.get(k, []) if sev == "error"]
                row["verdict"] = "reject" if errs else "accept"
                row["rules"] = ",".join(sorted(set(errs)))
                row["agree"] = bool(errs) == driver_fail
            else:  # bare: the driver against the facts file
                want_rc = 0 if c["want"] == "ok" else 1
                ok = c["rc"] == want_rc
                if c["wantidx"] != "-" and c["failidx"] != c["wantidx"]:
                    ok = False
                    row["note"] = "failIdx %s, facts %s" % (c["failidx"], c["wantidx"])
                row["agree"] = ok
                if not ok:
                    EXTRA["facts_diff"].append("%s via %s: driver %s%s, facts %s" % (
                        c["name"], door, RESULT_NAMES.get(c["rc"], c["rc"]),
                        (" failIdx " + c["failidx"]) if c["failidx"] != "-" else "",
                        "CUDA_SUCCESS" if want_rc == 0 else "CUDA_ERROR_INVALID_VALUE"))
            rows.append(row)
        row_store(case.name, rows)
        bad_rows = [r for r in rows if not r["agree"]]
        for r in bad_rows[:5]:
            problems.append("row '%s': rc %d, verdict %s %s %s" % (r["name"], r["rc"], r["verdict"], r["rules"],
                                                                r["note"]))
        if len(bad_rows) > 5:
            problems.append("... %d rows disagree" % len(bad_rows))
        if mode == "strict" and not any(c["want"] == "crash" for c in m["cases"]):
            problems.append("the unmapped-pointer row did not run (did the process survive it?)")
        if tr is not None:
            extra = set(tr.batches) - set(c["batch"] for c in m["cases"])
            if extra:
                problems.append("unexpected batches in the trace: %s" % sorted(extra))
        summary = "%d rows, %d agree" % (len(rows), len(rows) - len(bad_rows))
        return not problems, "; ".join(problems) or summary
    return fn


def rebase_overlaps(keys, batch):
    """Where two runs cannot share addresses: an overlap's value (an address) as an offset from the operand of
    its op on its side, so that runs at different addresses compare."""
    out = []
    for r, sev, op, o, side, v, lim in keys:
        if r in HAZARDS and op is not None and op < len(batch["ops"]) and side in ("src", "dst"):
            v = (v - batch["ops"][op][side + "_addr"]) % (1 << 64)
        out.append((r, sev, op, o, side, v, lim))
    return sorted(out)


def inline_vs_read_case(door):
    """The accept/reject table twice, each run under a session: in observe mode, where the findings are the
    reader's (`cubatchtrace show` validates the recorded batch), and with CUBATCHTRACE_REPORT=stderr, where the
    shim validates inline and writes `finding` events.  Batch by batch, the two sets of findings must be the
    same, one for one, in every field.  Both runs go without address-space randomisation, so that the values
    that are addresses (an overlap's byte) are the same too; where the runs' addresses still differ, an
    overlap's value is compared as its offset from the op's operand (and the report says in how many batches)."""
    def fn(case, workdir):
        problems, runs = [], {}
        fixed = aslr_off_works()
        for mode, env in (("observe", {}), ("report", {"CUBATCHTRACE_REPORT": "stderr"})):
            sess = Session("%s-%s" % (case.name, mode), workdir)
            if not sess.start():
                return False, "lttng session: " + sess.error
            try:
                rc, out, err = run_client([os.path.join(BIN, "drv"), "table", door], 120, extra_env=env,
                                          fixed_addresses=fixed)
            finally:
                sess.stop()
            m = parse_manifest(out)
            if rc != 0 or m["rows"] is None or m["pid"] is None:
                return False, "%s run: client exit %d, %s rows; %s" % (mode, rc, len(m["cases"]), err.strip()[-300:])
            tr, events, bad, bterr = trace_for(sess, m["pid"], problems)
            if bterr:
                problems.append("%s run: babeltrace2: %s" % (mode, bterr[-300:]))
            runs[mode] = (m, tr)
        (mo, to), (mr, trep) = runs["observe"], runs["report"]
        rows_o = dict((c["batch"], c) for c in mo["cases"])
        rows_r = dict((c["batch"], c) for c in mr["cases"])
        if sorted(rows_o) != sorted(rows_r):
            problems.append("the two runs made different batches: %s / %s" % (sorted(rows_o), sorted(rows_r)))
        same = differ = nfind = rebased = 0
        for k in sorted(set(rows_o) & set(rows_r)):
            co, cr = rows_o[k], rows_r[k]
            if (co["rc"], co["failidx"]) != (cr["rc"], cr["failidx"]):
                problems.append("row '%s': the driver answered %s/%s in one run, %s/%s in the other" % (
                    co["name"], co["rc"], co["failidx"], cr["rc"], cr["failidx"]))
            bo, br = to.batches.get(k), trep.batches.get(k)
            if bo is None or br is None:
                problems.append("row '%s': batch %d missing from the %s trace" % (co["name"], k,
                                                                                   "observe" if bo is None else "report"))
                continue
            if bo.get("validated") or to.inline.get(k):
                problems.append("row '%s': observe mode wrote finding events" % co["name"])
            if not br.get("validated"):
                problems.append("row '%s': the report run did not validate inline" % co["name"])
            elif br.get("findings") != len(trep.inline.get(k, [])):
                problems.append("row '%s': header says %s findings, %d finding events" % (
                    co["name"], br.get("findings"), len(trep.inline.get(k, []))))
            read, inl = to.read_keys(k), trep.inline_keys(k)
            # the same trace read back: the tool's validator against the shim's on identical input
            if trep.read_keys(k) != inl:
                problems.append("row '%s': in the report run's own trace the reader finds %s, the shim %s" % (
                    co["name"], fmt_keys(trep.read_keys(k)), fmt_keys(inl)))
            nfind += len(inl)
            if read == inl:
                same += 1
            elif rebase_overlaps(read, bo) == rebase_overlaps(inl, br):
                # the runs' addresses differ (randomisation could not be turned off, or the driver placed its
                # memory differently): the overlap values agree as offsets from their operands
                same += 1
                rebased += 1
            else:
                differ += 1
                problems.append("row '%s' (batch %d): read-time %s, inline %s" % (co["name"], k, fmt_keys(read),
                                                                                  fmt_keys(inl)))
        EXTRA["inline_vs_read"] = {"door": door, "batches": same + differ, "same": same, "findings": nfind,
                                   "fixed": fixed, "rebased": rebased}
        detail = "%d batches, %d findings: read-time (observe) and inline (report) findings equal one for one in " \
                 "%d%s%s" % (same + differ, nfind, same, "" if fixed else " (address randomisation could not be "
                                                                           "turned off)",
                             "; in %d the two runs' addresses differed and overlap values are equal as offsets "
                             "from their operand" % rebased if rebased else "")
        return not problems, "; ".join(problems[:6]) or detail
    return fn


def crash_case(shim):
    def fn(case, workdir):
        sess = None
        if shim:
            sess = Session(case.name, workdir)
            if not sess.start():
                return False, "lttng session: " + sess.error
        try:
            rc, out, err = run_client([os.path.join(BIN, "drv"), "crash", "v2"], 90, shim=shim)
        finally:
            if sess:
                sess.stop()
        m = parse_manifest(out)
        problems = []
        if m["crash"] != "signal=%d" % signal.SIGSEGV:
            problems.append("child ended with %s, want signal=%d (SIGSEGV); %s" % (m["crash"], signal.SIGSEGV,
                                                                                 err.strip()[-200:]))
        if rc != 0:
            problems.append("parent exit %d" % rc)
        detail = "child %s" % m["crash"]
        if shim:
            if m["childpid"] is None:
                problems.append("no CHILDPID")
            else:
                tr, events, bad, bterr = trace_for(sess, m["childpid"], problems)
                pend = [k for k, b in tr.batches.items() if str(b.get("outcome")) == "pending" and not b["ended"]]
                states = dict((k, v.get("state")) for k, v in (tr.show or {}).get("batches", {}).items())
                found = [f for fs in tr.findings.values() for f in fs
                         if f.get("rule") == "pointer_unmapped" and f.get("severity") == "error"]
                if not pend:
                    problems.append("the child's batch (vpid %d) is not in the trace as pending before the call: "
                                    "%s" % (m["childpid"], dict((k, str(b.get("outcome"))) for k, b in
                                                                tr.batches.items())))
                elif any(states.get(k) != "pending" for k in pend):
                    problems.append("cubatchtrace show: states %s, want pending" % states)
                if not found:
                    problems.append("cubatchtrace show finds no pointer_unmapped error for the child (vpid %d); "
                                    "findings: %s" % (m["childpid"], [str(f["rule"]) for fs in tr.findings.values()
                                                                      for f in fs]))
                if tr.inline:
                    problems.append("finding events in observe mode: %s" % sorted(tr.inline))
                if pend and found:
                    detail += ", the batch recorded pending before the call; the reader finds pointer_unmapped"
        return not problems, "; ".join(problems) or detail
    return fn


def driver_info():
    """The driver's version, the device and libcuda, as gpa_table prints them (bare driver), for the
    report's header; nothing when the client cannot run."""
    try:
        rc, out, err = run_client([os.path.join(BIN, "gpa_table")], 60, shim=False)
        info = parse_manifest(out)["info"]
    except Exception:  # the header then says "?"
        return
    for k in ("DRIVER_VERSION", "DEVICE_NAME", "DEVICE_COUNT", "LIBCUDA"):
        if k in info:
            EXTRA["driver"][k] = info[k]


def gpa_case(case, workdir):
    rc, out, err = run_client([os.path.join(BIN, "gpa_table")], 60, shim=False)
    m = parse_manifest(out)
    EXTRA["gpa"] = m["gpa"]
    for k in ("DRIVER_VERSION", "DEVICE_NAME", "DEVICE_COUNT", "LIBCUDA"):
        if k in m["info"]:
            EXTRA["driver"][k] = m["info"][k]
    bad = [g for g in m["gpa"] if g.get("match") != "yes"]
    if rc != 0 or not m["gpa"] or bad:
        return False, "exit %d; %d of %d requests differ: %s %s" % (
            rc, len(bad), len(m["gpa"]), ", ".join("%s(%s,%s)=%s" % (g["symbol"], g["version"], g["flags"],
                                                                      g["gotsym"]) for g in bad), err.strip()[-200:])
    return True, "%d requests, every address equals dlsym's" % len(m["gpa"])


# ------------------------------------------------------------------ the CUDA 13.2 and 13.5 entry points

NEWDOORS_MODES = (("observe", {}), ("strict-report", {"CUBATCHTRACE_MODE": "strict", "CUBATCHTRACE_REPORT": "stderr"}))


def newdoors_run(shim, extra_env=None):
    """tests/gpu/clients/newdoors: (rc, its ASK and DRIVER_VERSION lines, stderr)."""
    rc, out, err = run_client([os.path.join(BIN, "newdoors")], 60, shim=shim, extra_env=extra_env)
    return rc, [l for l in out.splitlines() if l.startswith(("ASK ", "DRIVER_VERSION "))], err


def newdoors_same_case(case, workdir):
    """A program asking for cuMemcpy3DWithAttributesAsync, cuMemcpyWithAttributesAsync (and _ptsz) and
    cuFabricCpyBatchAsync, by cuGetProcAddress(_v2) at 13000/13020/13050 and dlsym (handle, RTLD_DEFAULT),
    gets the same answers with the shim as without it, in observe mode and in strict mode with the report."""
    rc0, bare, err0 = newdoors_run(False)
    if rc0 != 0 or len(bare) != 49:
        return False, "bare: exit %d, %d lines (want 49): %s" % (rc0, len(bare), err0.strip()[-200:])
    details = []
    for mode, env in NEWDOORS_MODES:
        rc1, shim, err1 = newdoors_run(True, env)
        diff = [(a, b_) for a, b_ in zip(bare, shim) if a != b_]
        if rc1 != 0 or len(shim) != len(bare) or diff:
            return False, "%s: exit %d, %d lines; first difference: %s" % (
                mode, rc1, len(shim), diff[0] if diff else "(lengths)")
        details.append(mode)
    return True, "%s; 48 answers equal with and without the shim (%s)" % (bare[0], ", ".join(details))


def newdoors_13000_case(case, workdir):
    """On a 13.0 driver (the GPU machine's 580): none of the new entry points exists, and through the shim no
    request hands one out (CUDA_SUCCESS with a pointer) by cuGetProcAddress_v2 or the 4-argument cuGetProcAddress,
    and dlsym answers NULL with dlerror set.  The answers
    themselves, tallied in the details, are the driver's (newdoors-same holds them equal to the bare driver's);
    the test double models them (tests/fakecuda, docs/fakecuda.md)."""
    rc, lines, err = newdoors_run(True)
    version = next((int(l.split()[1]) for l in lines if l.startswith("DRIVER_VERSION ")), 0)
    if rc != 0 or not version:
        return False, "exit %d: %s" % (rc, err.strip()[-200:])
    if version >= 13020:
        return None, "driver %d has the 13.2 calls: this case is for a 13.0 driver (newdoors-same still compares)" % version
    asks = [l for l in lines if l.startswith("ASK ")]
    bad, kinds = [], {}
    for l in asks:
        w = l.split()
        how, ver = w[1], w[3] if w[1].startswith("gpa") else ""
        fields = dict(x.split("=", 1) for x in w if "=" in x)
        handed = fields.get("fn") != "NULL" and fields.get("rc") == "0"  # a pointer, and success
        if how.startswith("dlsym"):
            handed = fields.get("fn") != "NULL" or fields.get("dlerror") != "yes"
        if handed:
            bad.append(l)
        key = "%s%s %s" % (how, " at %s" % ver if ver else "",
                           " ".join("%s=%s" % (k, fields[k]) for k in ("rc", "status", "fn", "dlerror") if k in fields))
        kinds[key] = kinds.get(key, 0) + 1
    tally = "; ".join("%d x %s" % (n, k) for k, n in sorted(kinds.items()))
    if len(asks) != 48 or bad:
        return False, "%d answers, %d hand out a function or leave no dlerror; first: %s; answers: %s" % (
            len(asks), len(bad), bad[0] if bad else "", tally)
    return True, "driver %d: no request hands out a function through the shim; answers: %s" % (version, tally)


# ------------------------------------------------------------------ what the driver reads before it answers

PROBE_LIMIT = 30  # seconds for one probe's child (tests/gpu/clients/reads.c kills it after that)
# name: (what the probe does, ops the shim records when the process survives: None where that is not the
# question)
PROBES = [
    ("partial-3", "(a) numOps 3; ops 0 (valid) and 1 (rowLength 100 < width 256) readable, the list ends at a "
     "PROT_NONE page", 2),
    ("partial-100000", "(a) the same with numOps 100000", 2),
    ("partial-16M", "(a) the same with numOps 16777216", 2),
    ("pastalloc", "(b) numOps 3; op 1 well-formed but its source runs past its 8 KiB device allocation, then the "
     "PROT_NONE page", None),
    ("allvalid", "(c) numOps 3; ops 0 and 1 valid, then the PROT_NONE page", None),
    ("unread-numops0", "(d) opList = the PROT_NONE page, numOps 0", 0),
    ("unread-nullstream", "(d) opList = the PROT_NONE page, numOps 1, stream NULL", 0),
    ("unread-legacy", "(d) opList = the PROT_NONE page, numOps 1, CU_STREAM_LEGACY", 0),
    ("unread-flags", "(d) opList = the PROT_NONE page, numOps 1, flags 1", 0),
    ("unread-destroyed", "(d) opList = the PROT_NONE page, numOps 1, a destroyed stream's handle", 0),
    ("absurd-2p40-null", "(e) numOps 2^40, opList NULL", 0),
    ("absurd-sizemax-null", "(e) numOps SIZE_MAX, opList NULL", 0),
    ("absurd-2p40-bad0", "(e) numOps 2^40; op 0 readable and malformed (rowLength < width), then the PROT_NONE page",
     1),
    ("straddle", "(f) one op, alone in its batch after a warm-up batch: a pageable source whose 512 bytes start 256 "
     "bytes before an unmapped page (mmap 2 pages, munmap the second)", 1),
]
PROBE_MODES = (
    # mode, environment, with a session listening
    ("bare", None, False),
    ("observe", {}, False),
    ("session", {}, True),
    ("report", {"CUBATCHTRACE_REPORT": "stderr"}, False),
    ("strict", {"CUBATCHTRACE_MODE": "strict"}, True),
)
SIZE_MAX = (1 << 64) - 1
FAIL_IDX_PRESET = 12345


def answer_of(o):
    """What the program saw: ("result", rc, failIdx, cuStreamSynchronize's result), ("signal", n),
    ("timeout", limit) or ("exit", code)."""
    if not o:
        return ("none",)
    if o.get("kind") == "result":
        return ("result", int(o["rc"]), int(o["failidx"]), int(o.get("sync", "0")))
    if o.get("kind") == "signal":
        return ("signal", int(o["sig"]))
    return (o.get("kind", "?"), o.get("code", o.get("after", "")))


def fmt_answer(a, o=None):
    if a[0] == "result":
        name = (o or {}).get("rcname") or RESULT_NAMES.get(a[1], "CUresult %d" % a[1])
        name = name.replace("CUDA_ERROR_", "").replace("CUDA_", "")
        idx = {SIZE_MAX: "SIZE_MAX", FAIL_IDX_PRESET: "untouched"}.get(a[2], str(a[2]))
        return "%s, failIdx %s%s" % (name, idx, "" if a[3] == 0 else ", then cuStreamSynchronize %s" % (
            RESULT_NAMES.get(a[3], "CUresult %d" % a[3])))
    if a[0] == "signal":
        try:
            return signal.Signals(a[1]).name
        except ValueError:
            return "signal %d" % a[1]
    if a[0] == "timeout":
        return "no answer within %s s (killed)" % a[1]
    if a[0] == "exit":
        return "the child's setup failed (exit %s)" % a[1]
    return "no outcome"


def probe_case(name, what, want_recorded):
    """One probe of tests/gpu/clients/reads.c: the bare driver's answer, then the same program under the shim
    (observe without a session, observe with one, the stderr report, strict mode with a session): every one
    must give the program the bare driver's answer, except strict mode on `straddle`, which must refuse the
    batch (INVALID_VALUE, pointer_unmapped) and live.  Where the process lives, the session's trace holds the
    batch with numOps as passed and exactly the ops the driver reads."""
    def fn(case, workdir):
        problems, notes, runs = [], [], {}
        row = {"name": name, "what": what, "answers": {}, "trace": "", "bad": set()}
        EXTRA["probes"].append(row)
        for mode, env, session in PROBE_MODES:
            sess = None
            if session:
                sess = Session("%s-%s" % (case.name, mode), workdir)
                if not sess.start():
                    problems.append("%s: lttng session: %s" % (mode, sess.error))
                    continue
            try:
                rc, out, err = run_client([b("reads"), name, str(PROBE_LIMIT)], PROBE_LIMIT + 60,
                                          shim=env is not None, extra_env=env or {})
            finally:
                if sess:
                    sess.stop()
            m = parse_manifest(out)
            a = answer_of(m["outcome"])
            runs[mode] = (m, a, sess, err)
            row["answers"][mode] = fmt_answer(a, m["outcome"]) + (
                "; hole %s" % m["outcome"]["hole"] if m["outcome"] and m["outcome"].get("hole") == "mapped" else "")
            if rc != 0 or a[0] in ("none", "exit"):
                problems.append("%s: client exit %d, %s; %s" % (mode, rc, fmt_answer(a), "; ".join(failed_checks(m))
                                                                or err.strip()[-200:]))
            if mode == "bare" and a[0] == "timeout":
                notes.append("the bare driver gave no answer within %d s: the shim's modes were not run" % PROBE_LIMIT)
                break
        if "bare" not in runs:
            return False, "; ".join(problems)
        bare = runs["bare"][1]
        for mode, (m, a, sess, err) in sorted(runs.items()):
            o = m["outcome"] or {}
            if name == "straddle" and o.get("hole") == "mapped":
                problems.append("%s: something was mapped into the hole during the call (the probe is void)" % mode)
            if mode == "bare":
                continue
            if name == "straddle" and mode == "strict":
                if a[:2] != ("result", 1):
                    problems.append("strict: %s, want the batch refused (INVALID_VALUE) and the process alive" %
                                    fmt_answer(a, o))
                    row["bad"].add(mode)
            elif a != bare:
                problems.append("%s: the program got %s, the bare driver gives %s" % (mode, fmt_answer(a, o),
                                                                                      fmt_answer(bare)))
                row["bad"].add(mode)
            if sess is None or m["childpid"] is None:
                continue
            tprob = []
            tr, events, bad, bterr = trace_for(sess, m["childpid"], tprob)
            if a[0] != "result":
                if mode == "session":
                    pb = tr.batches.get(1)
                    row["trace"] = "process died; probe batch %s" % (
                        "not recorded" if pb is None else "recorded %s, %s of %s ops" % (
                            pb.get("outcome"), pb.get("ops_recorded"), pb.get("num_ops")))
                continue
            problems.extend("%s: %s" % (mode, x) for x in tprob)
            w, pb = tr.batches.get(0), tr.batches.get(1)
            if w is None or str(w.get("result")) != "CUDA_SUCCESS":
                problems.append("%s: the warm-up batch is %s" % (mode, "missing" if w is None else w.get("result")))
            if pb is None:
                problems.append("%s: the probe batch (id 1) is not in the trace" % mode)
                continue
            want_n = {"partial-100000": 100000, "partial-16M": 1 << 24, "unread-numops0": 0,
                      "absurd-2p40-null": 1 << 40, "absurd-sizemax-null": SIZE_MAX,
                      "absurd-2p40-bad0": 1 << 40}.get(name, 3 if name in ("partial-3", "pastalloc", "allvalid") else 1)
            if pb.get("num_ops") != want_n:
                problems.append("%s: num_ops %s recorded, %d passed" % (mode, pb.get("num_ops"), want_n))
            if want_recorded is not None and pb.get("ops_recorded") != want_recorded:
                problems.append("%s: ops_recorded %s, the driver reads %d" % (mode, pb.get("ops_recorded"),
                                                                              want_recorded))
            if pb.get("result") is not None and getattr(pb["result"], "value", None) != a[1]:
                problems.append("%s: trace result %s, the program got %d" % (mode, pb["result"], a[1]))
            compare_with_show(tr, problems, states=("complete",))
            errs = sorted(set(str(f["rule"]) for f in tr.errors(1)))
            others = sorted(set(str(f["rule"]) for f in tr.findings.get(1, []) if f.get("severity") != "error"))
            if mode == "session":
                row["trace"] = "%s of %s ops recorded; read-time findings: %s" % (
                    pb.get("ops_recorded"), "2^40" if want_n == 1 << 40 else "SIZE_MAX" if want_n == SIZE_MAX
                    else want_n, ", ".join(errs + others) or "none")
            if mode == "strict":
                if tr.inline_keys(1) != tr.read_keys(1):
                    problems.append("strict: inline findings %s, read-time %s" % (fmt_keys(tr.inline_keys(1)),
                                                                                  fmt_keys(tr.read_keys(1))))
                if name == "straddle":
                    hit = [f for f in tr.inline.get(1, []) if str(f.get("rule")) == "pointer_unmapped" and
                           str(f.get("severity")) == "error" and btparse.finding_key(f)[2] == 0]
                    if str(pb.get("outcome")) != "refused" or not hit:
                        problems.append("strict: outcome %s, inline findings %s; want refused with pointer_unmapped "
                                        "on op 0" % (pb.get("outcome"), fmt_keys(tr.inline_keys(1))))
                        row["bad"].add(mode)
                    else:
                        notes.append("strict: refused, pointer_unmapped on op 0 (src), the process lives")
                if a != bare:
                    row["trace"] += "; strict: %s, %s of %s ops recorded, inline errors: %s" % (
                        pb.get("outcome"), pb.get("ops_recorded"), pb.get("num_ops"),
                        ", ".join(sorted(set(str(f["rule"]) for f in tr.inline_errors(1)))) or "none")
        case.notes = notes
        summary = "bare driver: %s; %s" % (row["answers"].get("bare"), "; ".join(
            "%s %s" % (md, "same" if row["answers"].get(md) == row["answers"].get("bare") else row["answers"].get(md))
            for md, _, _ in PROBE_MODES[1:] if md in row["answers"]))
        return not problems, "; ".join(problems[:6]) or "; ".join([summary] + notes)
    return fn


# ------------------------------------------------------------------ two GPUs: peer copies, locHints

MK_DEVICE, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_ARRAY = 1, 2, 3, 4, 5
MEM_CLASS = {MK_DEVICE: "D", MK_MANAGED: "D", MK_PINNED: "H", MK_PAGEABLE: "H", MK_ARRAY: "A"}
MEM_SHORT = {MK_DEVICE: "dev", MK_MANAGED: "managed", MK_PINNED: "pinned", MK_PAGEABLE: "pageable", MK_ARRAY: "array"}
LOC_NONE, LOC_DEVICE, LOC_LAST = 0, 1, 4  # CUmemLocationType: INVALID (no hint), DEVICE, ... HOST_NUMA_CURRENT
LOC_NAMES = {1: "DEVICE", 2: "HOST", 3: "HOST_NUMA", 4: "HOST_NUMA_CURRENT"}
ORDER_STREAM, ORDER_DURING = 1, 2
HAZARDS = ("overlap_dst_dst", "overlap_src_dst", "overlap_self")
DEV_KEYS = ("ops_out", "bytes_out", "ops_in", "bytes_in", "peer_ops_out", "peer_bytes_out", "peer_ops_in",
            "peer_bytes_in")


def predicted_findings(ops, ndev):
    """What the validator's rules (docs/rules.md) find in one batch, from the ops as the client printed them:
    a set of (rule, op, side); side None for hazards.  It covers every rule that ops of valid, distinct
    pointers can meet (locHints, access orders, overlaps); none of the error rules applies to them."""
    want = set()
    spans = []
    for i, op in sorted(ops.items()):
        for side in ("src", "dst"):
            if int(op[side + "_type"]) != 1:
                continue
            t, ident, mem = int(op[side + "_lochint_type"]), int(op[side + "_lochint_id"]), int(op[side + "_mem"])
            if t > LOC_LAST or (t == LOC_DEVICE and (ident < 0 or ident >= ndev)):
                want.add(("lochint_invalid", i, side))
            elif t != LOC_NONE and mem in (MK_DEVICE, MK_PINNED):
                want.add(("lochint_ignored", i, side))
            if int(op[side + "_row_length"]) == 0 and int(op[side + "_layer_height"]) == 0:
                a = to_int(op[side + "_addr"])  # tightly packed: one contiguous range
                spans.append((i, side, a, a + int(op["bytes"])))
        order, sm = int(op["access_order"]), int(op["src_mem"])
        if sm == MK_PAGEABLE and order == ORDER_STREAM:
            want.add(("pageable_stream_order", i, "src"))
        if sm == MK_DEVICE and order == ORDER_DURING:
            want.add(("during_api_call_device_source", i, "src"))
    for i, si, a0, a1 in spans:
        for j, sj, b0, b1 in spans:
            if a0 >= b1 or b0 >= a1 or (i, si) == (j, sj):
                continue
            if i == j and si == "src" and sj == "dst":
                want.add(("overlap_self", i, None))
            elif i < j and si == "dst" and sj == "dst":
                want.add(("overlap_dst_dst", i, None))
            elif i != j and si == "dst" and sj == "src":
                want.add(("overlap_src_dst", i, None))
    return want


def recorded_findings(tr, k):
    got = set()
    for f in tr.findings.get(k, []):
        rule = str(f.get("rule"))
        got.add((rule, f.get("op"), None if rule in HAZARDS else str(f.get("side"))))
    return got


def expected_summary(m):
    """The summary the ops of the manifest make, by docs/json-schema.md: directions (peer: device or managed
    memory on both sides, different ordinals) and bytes out of / into each device.  The summary counts every
    recorded op, those of a batch the driver refused included."""
    dirs, devs = {}, {}
    nops = nbytes = 0

    def dev_row(d):
        return devs.setdefault(str(d) if d >= 0 else "unknown", dict((x, 0) for x in DEV_KEYS))

    for k in sorted(m["ops"]):
        for i, op in sorted(m["ops"][k].items()):
            sc, dc = MEM_CLASS.get(int(op["src_mem"]), "?"), MEM_CLASS.get(int(op["dst_mem"]), "?")
            sd, dd, by = int(op.get("src_device", -1)), int(op.get("dst_device", -1)), int(op["bytes"])
            if sc == "D" and dc == "D":
                d = "peer" if sd >= 0 and dd >= 0 and sd != dd else "DtoD"
            elif "?" in (sc, dc):
                d = "unknown"
            else:
                d = "%sto%s" % (sc, dc)
            r = dirs.setdefault(d, [0, 0])
            r[0] += 1
            r[1] += by
            nops += 1
            nbytes += by
            for cls, dev, way in ((sc, sd, "out"), (dc, dd, "in")):
                if cls != "D":
                    continue
                row = dev_row(dev)
                row["ops_" + way] += 1
                row["bytes_" + way] += by
                if d == "peer":
                    row["peer_ops_" + way] += 1
                    row["peer_bytes_" + way] += by
    return {"batches": len(m["batches"]), "ops": nops, "bytes": nbytes,
            "by_direction": dict((n, tuple(v)) for n, v in dirs.items()), "by_device": devs}


def check_summary(m, sess, problems, notes):
    if not os.path.isfile(TOOL) or not os.access(TOOL, os.X_OK):
        problems.append("no cubatchtrace tool at %s (set CBT_GPU_TOOL)" % TOOL)
        return
    rc, out, err = sh([TOOL, "summary", "--json", "--pid", str(m["pid"]), sess.dir], timeout=120, env=cbt_tool_env())
    if rc != 0:
        problems.append("cubatchtrace summary --json exit %d: %s" % (rc, err.strip()[-300:]))
        return
    try:
        got = json.loads(out)
    except ValueError as e:
        problems.append("cubatchtrace summary --json: not JSON (%s)" % e)
        return
    want = expected_summary(m)
    for key in ("batches", "ops", "bytes"):
        if got.get(key) != want[key]:
            problems.append("summary %s %s, the client made %s" % (key, got.get(key), want[key]))
    gdir = dict((r["name"], (r["ops"], r["bytes"])) for r in got.get("by_direction", []))
    if gdir != want["by_direction"]:
        problems.append("summary by_direction %s, the client's ops make %s" % (sorted(gdir.items()),
                                                                              sorted(want["by_direction"].items())))
    if "by_device" not in got:
        problems.append("summary has no by_device table")
        return
    gdev = dict((r["name"], dict((x, r.get(x)) for x in DEV_KEYS)) for r in got["by_device"])
    for name in sorted(set(gdev) | set(want["by_device"])):
        g, w = gdev.get(name), want["by_device"].get(name)
        if g != w:
            problems.append("summary by_device %s: %s, the client's ops make %s" % (
                name, " ".join("%s=%s" % (x, g[x]) for x in DEV_KEYS) if g else "no row",
                " ".join("%s=%s" % (x, w[x]) for x in DEV_KEYS) if w else "no row"))
    peer = want["by_direction"].get("peer", (0, 0))
    notes.append("summary: peer %d ops %d bytes; %s" % (peer[0], peer[1], "; ".join(
        "device %s out %d in %d (peer out %d in %d)" % (n, r["bytes_out"], r["bytes_in"], r["peer_bytes_out"],
                                                        r["peer_bytes_in"]) for n, r in sorted(gdev.items()))))


def describe_ops(ops, ndev):
    parts = []
    for i, op in sorted(ops.items()):
        def where(s):
            mem = int(op[s + "_mem"])
            dev = op.get(s + "_device", "?")
            return "%s%s" % (MEM_SHORT.get(mem, "mem%d" % mem), dev if mem in (MK_DEVICE, MK_MANAGED) else "")
        hints = []
        for s in ("src", "dst"):
            t = int(op.get(s + "_lochint_type", 0))
            if t != LOC_NONE:
                hints.append("%s locHint {%s, %s}%s" % (s, LOC_NAMES.get(t, t), op[s + "_lochint_id"],
                                                       " (no such device)" if t == LOC_DEVICE and
                                                       not 0 <= int(op[s + "_lochint_id"]) < ndev else ""))
        parts.append("%s->%s %d KiB%s" % (where("src"), where("dst"), int(op["bytes"]) >> 10,
                                          (", " + ", ".join(hints)) if hints else ""))
    return "; ".join(parts)


def peer_case(mode, binding):
    """binding: a disagreement between the validator's verdict and the driver's answer fails the case.
    Without it (peer_noaccess: no rule covers that case yet, the suite measures what the driver does) the
    disagreement is reported, not failed."""
    def fn(case, workdir):
        env = {"NCCL_NVLS_ENABLE": "0"}
        if FAKE:
            env["FAKECUDA_DEVICE_COUNT"] = ENV.get("FAKECUDA_DEVICE_COUNT") or "2"
        sess = Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = run_client([b("peer"), mode], 120, extra_env=env)
        finally:
            sess.stop()
        m = parse_manifest(out)
        if "DEVICE_COUNT" in m["info"]:
            EXTRA["driver"].setdefault("DEVICE_COUNT", m["info"]["DEVICE_COUNT"])
        if rc == 77 and m["skip"] and m["result"] == "skip":
            return None, m["skip"]
        problems, notes = [], []
        ndev = int(m["info"].get("DEVICE_COUNT", "0"))
        died_in = [k for k in m["calls"] if k not in m["batches"]]
        if rc != 0 or m["result"] != "ok":
            problems.append("client exit %s, RESULT %s; %s" % (
                "signal %d" % -rc if rc < 0 else rc, m["result"],
                "; ".join(failed_checks(m)) or err.strip()[-400:]))
        if m["pid"] is None:
            return False, "the client printed no PID; " + "; ".join(problems)
        if not m["batches"] and not died_in:
            problems.append("the client made no batch")
        for k in sorted(m["batches"]):
            if k not in m["measure"]:
                problems.append("batch %d: no MEASURE line" % k)
        tr, events, bad, bterr = trace_for(sess, m["pid"], problems)
        if bterr:
            problems.append("babeltrace2: " + bterr[-300:])
        if bad:
            problems.append("%d unparsable trace lines, first: %s" % (len(bad), bad[0][:160]))
        # every batch and op, with the devices of its operands (check_data_trace compares every OP field)
        check_data_trace(m, tr, API_V2, "symbol", problems, notes)
        for name, bf in sorted(m["bufs"].items()):
            if int(bf["mem"]) == MK_MANAGED:
                notes.append("managed %s: allocated in device %s's context, DEVICE_ORDINAL %s" % (
                    name, bf["alloc_device"], bf["attr_device"]))
        peer = m["peer"] or {}
        enabled = [e for e in m["enable"] if e["name"] in ("CUDA_SUCCESS", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED")]
        access = ("peer access enabled both ways" if len(enabled) == 2 else "peer access not enabled") + (
            "; canAccessPeer 0->1 %s, 1->0 %s" % (peer.get("can01", "?"), peer.get("can10", "?")) if peer else "")
        verdicts = []
        for k in sorted(set(m["batches"]) | set(died_in)):
            ops = m["ops"].get(k, {})
            me = m["measure"].get(k, {})
            row = {"case": case.name, "batch": k, "what": describe_ops(ops, ndev) if ops else "(not printed)",
                   "access": access, "binding": binding, "note": ""}
            b_ = tr.batches.get(k)
            if k in died_in:
                row["driver"] = "the process died in the call (%s)" % ("signal %d" % -rc if rc < 0 else "exit %d" % rc)
                row["validator"] = "?"
                row["agree"] = False
                problems.append("batch %d: the process died inside the call" % k)
                EXTRA["peer_rows"].append(row)
                continue
            brc = int(m["batches"][k]["rc"])
            if b_ is not None and getattr(b_["result"], "value", None) != brc:
                problems.append("batch %d: trace result %s, the client got %d (%s)" % (
                    k, b_["result"], brc, me.get("rcname", "?")))
            want_f = predicted_findings(ops, ndev)
            got_f = recorded_findings(tr, k)
            if got_f != want_f:
                problems.append("batch %d: findings %s, the validator's rules give %s" % (
                    k, sorted(got_f, key=str) or "none", sorted(want_f, key=str) or "none"))
            errs = sorted(set(str(f["rule"]) for f in tr.errors(k)))
            others = sorted(set("%s (%s of op %s)" % (f["rule"], f["side"], f["op"]) for f in tr.findings.get(k, [])
                                if f.get("severity") != "error"))
            row["validator"] = ("reject: " + ", ".join(errs) if errs else "accept") + (
                "; " + ", ".join(others) if others else "")
            arrived = me.get("arrived", "?")
            row["driver"] = "%s; sync %s; bytes: %s%s" % (
                me.get("rcname", brc), me.get("syncname", "?"), arrived,
                "" if arrived in ("all", "none") else " (ops %s)" % me.get("ops_arrived", "-"))
            driver_reject = brc != 0
            agree = bool(errs) == driver_reject
            if not driver_reject and arrived != "all":
                agree = False
                row["note"] = "the driver accepted the batch but not every byte arrived"
            if driver_reject and not errs:
                row["note"] = "the driver refused a batch the validator accepts"
            if errs and not driver_reject:
                row["note"] = "the validator rejects a batch the driver accepted"
            row["agree"] = agree
            verdicts.append("batch %d: driver %s, bytes %s; validator %s (%s)" % (
                k, me.get("rcname", brc), arrived, row["validator"], "agree" if agree else "DIFFER"))
            if not agree:
                if binding:
                    problems.append("batch %d: validator %s, driver %s%s" % (k, row["validator"], row["driver"],
                                                                            (": " + row["note"]) if row["note"] else ""))
                else:
                    notes.append("batch %d: validator and driver differ (measured, no rule yet): %s" % (
                        k, row["note"] or row["driver"]))
            EXTRA["peer_rows"].append(row)
        if m["batches"] and tr.batches:
            check_summary(m, sess, problems, notes)
        case.notes = notes
        detail = "; ".join(verdicts + [n for n in notes if n.startswith(("summary", "managed"))])
        return not problems, "; ".join(problems[:6]) or detail
    return fn


# ------------------------------------------------------------------ the cases

def b(name):
    return os.path.join(BIN, name)


def py(mode):
    return [PYTHON, PYCLIENT, mode]


def build_cases():
    site_env = {"PYTHONPATH": SITE + ((":" + ENV["PYTHONPATH"]) if ENV.get("PYTHONPATH") else "")} if SITE else {}
    C = [
        Case("gpa-vs-dlsym", "bare driver: cuGetProcAddress_v2 hands out the exported symbols (dlsym) for the eight "
             "batch variants (3D and 1D) and for cuGetProcAddress itself", gpa_case),
        Case("newdoors-same", "a program asking for the CUDA 13.2/13.5 entry points gets the same answers with "
             "and without the shim (observe; strict with the stderr report)", newdoors_same_case),
        Case("newdoors-13000", "13.0 driver: no request for the 13.2/13.5 entry points hands out a function "
             "through the shim (the driver's answers tallied)", newdoors_13000_case),
        Case("drv-v2", "direct link, cuMemcpy3DBatchAsync_v2: data arrives; trace api _v2, door symbol",
             data_case([b("drv"), "data", "v2"], API_V2, "symbol")),
        Case("drv-v2_ptsz", "direct link, cuMemcpy3DBatchAsync_v2_ptsz: data; api _v2_ptsz, door symbol",
             data_case([b("drv"), "data", "v2_ptsz"], API_V2_PTSZ, "symbol")),
        Case("drv-dlsym_v2", "dlsym(libcuda, \"cuMemcpy3DBatchAsync_v2\"): data; api _v2, door symbol",
             data_case([b("drv"), "data", "dlsym_v2"], API_V2, "symbol")),
        Case("drv-dlsym_v1", "dlsym(libcuda, \"cuMemcpy3DBatchAsync\") (12.8 ABI, failIdx): data; api "
             "cuMemcpy3DBatchAsync, door symbol", data_case([b("drv"), "data", "dlsym_v1"], API_V1, "symbol")),
        Case("drv-gpa13000", "cuGetProcAddress_v2(..., 13000, 0): data; api _v2, door getprocaddress",
             data_case([b("drv"), "data", "gpa13000"], API_V2, "getprocaddress")),
        Case("drv-gpa12080", "cuGetProcAddress_v2(..., 12080, 0), 12.8 ABI: data, failIdx SIZE_MAX / 2; api "
             "cuMemcpy3DBatchAsync, door getprocaddress",
             data_case([b("drv"), "data", "gpa12080"], API_V1, "getprocaddress")),
        Case("drv-gpa12080_ptsz", "cuGetProcAddress_v2(..., 12080, PER_THREAD): data, failIdx; api "
             "cuMemcpy3DBatchAsync_ptsz, door getprocaddress",
             data_case([b("drv"), "data", "gpa12080_ptsz"], API_V1_PTSZ, "getprocaddress")),
        Case("rt-static", "cudaMemcpy3DBatchAsync, nvcc default (static cudart): data; api _v2, door getprocaddress",
             data_case([b("rt_static"), "batch"], API_V2, "getprocaddress"), needs=("cudart",)),
        Case("rt-shared", "cudaMemcpy3DBatchAsync, --cudart shared: data; api _v2, door getprocaddress",
             data_case([b("rt_shared"), "batch"], API_V2, "getprocaddress"), needs=("cudart",)),
        Case("rt-static-ptds", "cudaMemcpy3DBatchAsync, --default-stream per-thread (static): data; api _v2_ptsz",
             data_case([b("rt_static_ptds"), "batch"], API_V2_PTSZ, "getprocaddress"), needs=("cudart",)),
        Case("rt-shared-ptds", "cudaMemcpy3DBatchAsync, --default-stream per-thread --cudart shared: data; api "
             "_v2_ptsz", data_case([b("rt_shared_ptds"), "batch"], API_V2_PTSZ, "getprocaddress"),
             needs=("cudart",)),
        Case("rt-entry", "cudaGetDriverEntryPoint(cuMemcpy3DBatchAsync, cudaEnableDefault): data; api _v2, door "
             "getprocaddress", data_case([b("rt_static"), "entry"], API_V2, "getprocaddress"), needs=("cudart",)),
        Case("rt-entry-ptds", "cudaGetDriverEntryPoint(..., cudaEnablePerThreadDefaultStream): data; api _v2_ptsz",
             data_case([b("rt_static"), "entry_ptds"], API_V2_PTSZ, "getprocaddress"), needs=("cudart",)),
        Case("rt-byversion-12080", "cudaGetDriverEntryPointByVersion(..., 12080): 12.8 ABI, failIdx; api "
             "cuMemcpy3DBatchAsync, door getprocaddress",
             data_case([b("rt_static"), "bv12080"], API_V1, "getprocaddress"), needs=("cudart",)),
        Case("rt-byversion-13000", "cudaGetDriverEntryPointByVersion(..., 13000): data; api _v2",
             data_case([b("rt_static"), "bv13000"], API_V2, "getprocaddress"), needs=("cudart",)),
        Case("py-bindings", "cuda-python (installed) cuda.bindings.driver.cuMemcpy3DBatchAsync: data; api _v2, door "
             "getprocaddress", data_case(py("bindings"), API_V2, "getprocaddress",
                                         extra_env={"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM": None})),
        Case("py-bindings-ptds", "the same with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1: api _v2_ptsz",
             data_case(py("bindings"), API_V2_PTSZ, "getprocaddress",
                       extra_env={"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM": "1"})),
        Case("py-bindings-13.5.0-v2", "pinned cuda-bindings 13.5.0 (gpu-stage/wheels): cuda.bindings._v2.driver."
             "memcpy_3d_batch_async_v2: data; api _v2, door getprocaddress",
             data_case(py("bindings_v2"), API_V2, "getprocaddress", extra_env=dict(site_env, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=None),
                       want_bindings="13.5.0"),
             needs=("site",)),
        Case("py-ctypes-binding", "the shim's binding entry memcpy_3d_batch_async_v2 through ctypes: data; api _v2, "
             "door binding", data_case(py("ctypes"), API_V2, "binding")),
        Case("table-observe-v2", "the facts' accept/reject table via _v2: the validator's verdict (an error finding "
             "`cubatchtrace show` computes from the trace) agrees with the driver's return code on every row",
             table_case("v2", "observe")),
        Case("table-observe-v2_ptsz", "the same via _v2_ptsz", table_case("v2_ptsz", "observe")),
        Case("table-observe-gpa12080", "the same via the 12.8 ABI (cuGetProcAddress 12080); the trace's fail_idx "
             "equals what the caller got", table_case("gpa12080", "observe")),
        Case("table-report-stderr", "the table with CUBATCHTRACE_REPORT=stderr: the stderr error lines agree with "
             "the driver's return codes", table_case("v2", "report")),
        Case("table-strict", "the table with CUBATCHTRACE_MODE=strict, the unmapped 0xdead0000 row in-process: the "
             "process survives; refused exactly the rows with errors (the shim's finding events; the reader finds "
             "the same)", table_case("v2", "strict")),
        Case("table-inline-vs-read", "the table twice under a session, observe mode and CUBATCHTRACE_REPORT=stderr: "
             "the findings `cubatchtrace show` computes from the observe trace equal the shim's inline finding "
             "events, batch by batch, one for one (rule, severity, op, other_op, side, value, limit)",
             inline_vs_read_case("v2")),
        Case("crash-observe", "observe mode, 0xdead0000 in a forked child: SIGSEGV; the batch is in the trace as "
             "pending (written before the call) and the reader finds pointer_unmapped", crash_case(True)),
        Case("table-bare-v2", "bare driver (no shim) against the facts table via _v2", table_case("v2", "bare")),
        Case("table-bare-gpa12080", "bare driver against the facts table via the 12.8 ABI (failIdx)",
             table_case("gpa12080", "bare")),
        Case("crash-bare", "bare driver: 0xdead0000 kills a forked child with SIGSEGV", crash_case(False)),
    ] + [
        Case("reads-" + n, "driver-read probe: %s. The bare driver's answer (result and failIdx, or the signal), and "
             "the same answer through the shim in observe, session, report and strict mode%s" % (
                 w, "; strict mode must refuse it instead (pointer_unmapped) and live" if n == "straddle" else ""),
             probe_case(n, w, rec))
        for n, w, rec in PROBES
    ] + [
        Case("peer_noaccess", "2 GPUs, before any cuCtxEnablePeerAccess: one batch dev0->dev1, dev1->dev0, "
             "dev0->dev0 (1 MiB each) on a stream of device 0: the driver's answer and the bytes measured; trace "
             "devices per operand, findings as the rules say, summary peer/by_device; validator vs driver "
             "reported (no rule covers this yet)", peer_case("noaccess", False)),
        Case("peer_access", "2 GPUs, peer access enabled both ways: the same batch succeeds and every byte "
             "arrives; trace devices, findings, summary peer/by_device; validator agrees with the driver",
             peer_case("access", True)),
        Case("peer_lochint", "managed memory with locHint {DEVICE, 1} and {DEVICE, device count}: the driver's "
             "answers; lochint_invalid exactly on the second; trace, summary; validator agrees with the driver",
             peer_case("lochint", True)),
    ] + suite1d.cases(sys.modules[__name__]) + suitegpu.cases(sys.modules[__name__]) + \
        suitecapture.cases(sys.modules[__name__]) + suitesteady.cases(sys.modules[__name__]) + \
        suiteadvice.cases(sys.modules[__name__])
    return C


def selected(name):
    return not SELECT or any(name == s or name.startswith(s) for s in SELECT)


def can_run(case):
    """Cases a dry run over the CPU test double cannot serve."""
    if not FAKE:
        return ""
    if "cudart" in case.needs:
        return "the CUDA runtime needs the real driver"
    if case.name.startswith("crash") or case.name == "table-strict":
        return ""
    return ""


# ------------------------------------------------------------------ the report

def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def versions():
    v = {}
    rc, out, err = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], timeout=30)
    if rc == 0 and out.strip():
        v["nvidia-smi"] = out.strip().splitlines()[0]
    rc, out, err = sh([LTTNG, "--version"])
    if rc == 0:
        v["lttng"] = out.strip().splitlines()[0] if out.strip() else "?"
    rc, out, err = sh(BT2 + ["--version"])
    if rc == 0:
        v["babeltrace2"] = (out or err).strip().splitlines()[0]
    e = dict(tool_env())
    e.pop("PYTHONPATH", None)
    rc, out, err = sh([PYTHON, "-c", "import cuda.bindings as b; print(getattr(b, '__version__', '?'))"], env=e)
    v["cuda-bindings (installed)"] = out.strip() if rc == 0 else "not importable"
    if SITE:
        e["PYTHONPATH"] = SITE
        rc, out, err = sh([PYTHON, "-c", "import cuda.bindings as b; print(b.__version__)"], env=e)
        v["cuda-bindings (%s)" % SITE] = out.strip() if rc == 0 else "not importable"
    binfo = os.path.join(BIN, "BUILDINFO")
    if os.path.exists(binfo):
        v["clients built"] = open(binfo).read().strip().replace("\n", "; ")
    return v


def write_report(path, cases, started, outfile_arg):
    passed = sum(1 for c in cases if c.status == "pass")
    failed = sum(1 for c in cases if c.status == "FAIL")
    skipped = sum(1 for c in cases if c.status == "skip")
    d = EXTRA["driver"]
    vv = EXTRA["versions"]
    L = []
    L.append("# cubatchtrace on a real GPU")
    L.append("")
    L.append("Written by `tests/gpu/run` (the GPU test suite, `tests/gpu/`); not edited by hand.")
    L.append("")
    L.append("| | |")
    L.append("| --- | --- |")
    L.append("| date | %s |" % started.strftime("%Y-%m-%d %H:%M:%S UTC"))
    L.append("| host | %s, %s, glibc %s |" % (md_escape(platform.node()), md_escape(platform.platform()),
                                              md_escape(platform.libc_ver()[1])))
    L.append("| GPU | %s (%s device(s)) |" % (md_escape(d.get("DEVICE_NAME", "?")), d.get("DEVICE_COUNT", "?")))
    L.append("| driver | `cuDriverGetVersion` = %s; nvidia-smi: %s |" % (
        d.get("DRIVER_VERSION", "?"), md_escape(vv.get("nvidia-smi", "not available"))))
    L.append("| libcuda | %s |" % md_escape(d.get("LIBCUDA", "?")))
    for k in ("lttng", "babeltrace2", "cuda-bindings (installed)"):
        L.append("| %s | %s |" % (k, md_escape(vv.get(k, "?"))))
    for k in sorted(vv):
        if k.startswith("cuda-bindings (/"):
            L.append("| %s | %s |" % (k, md_escape(vv[k])))
    if "clients built" in vv:
        L.append("| clients | %s |" % md_escape(vv["clients built"]))
    if FAKE:
        L.append("| **dry run** | over the CPU test double in `%s`, not a GPU |" % md_escape(FAKE))
    L.append("")
    L.append("**%d passed, %d failed%s** (%.0f s)." % (passed, failed, (", %d skipped" % skipped) if skipped else "",
                                                       time.time() - started.timestamp()))
    L.append("")
    L.append("## Cases")
    L.append("")
    L.append("| case | what it checks | result | details |")
    L.append("| --- | --- | --- | --- |")
    for c in cases:
        L.append("| `%s` | %s | %s | %s |" % (c.name, md_escape(c.what), "pass" if c.status == "pass" else
                                             "**%s**" % c.status, md_escape(c.detail[:600])))
    rows = EXTRA["table_rows"]
    if rows:
        L.append("")
        L.append("## The accept/reject table, row by row")
        L.append("")
        L.append("Facts: `shared/facts/h200-driver.md`. *driver*: the return code through the shim in observe mode "
                 "(`table-observe-v2`; the 0xdead0000 row only runs in strict mode and in a forked child). "
                 "*verdict*: the batch's error findings: in observe mode those `cubatchtrace show` computes from the "
                 "trace, in strict mode the shim's own `finding` events (the reader must find the same), with the "
                 "stderr report its error lines.")
        L.append("")
        base = rows.get("table-observe-v2") or next(iter(rows.values()))
        names = [r["name"] for r in base]
        for case_rows in rows.values():
            for r in case_rows:
                if r["name"] not in names:
                    names.append(r["name"])
        cols = [k for k in ("table-bare-v2", "table-bare-gpa12080", "table-observe-v2", "table-observe-v2_ptsz",
                            "table-observe-gpa12080", "table-report-stderr", "table-strict") if k in rows]
        L.append("| row | facts | " + " | ".join("`%s`" % k for k in cols) + " |")
        L.append("| --- | --- | " + " | ".join("---" for _ in cols) + " |")
        idx = {k: {r["name"]: r for r in rows[k]} for k in cols}
        for n in names:
            want = next((idx[k][n]["want"] for k in cols if n in idx[k]), "?")
            cells = []
            for k in cols:
                r = idx[k].get(n)
                if not r:
                    cells.append("")
                    continue
                rc = {0: "SUCCESS", 1: "INVALID_VALUE"}.get(r["rc"], str(r["rc"]))
                if r["failidx"] not in ("-", str((1 << 64) - 1)):
                    rc += " (failIdx %s)" % r["failidx"]
                if r["verdict"]:
                    rc += "; %s%s" % (r["verdict"], (" " + r["rules"]) if r["rules"] else "")
                if r.get("outcome"):
                    rc += "; " + r["outcome"]
                cells.append(("" if r["agree"] else "**differs:** ") + md_escape(rc + ((" " + r["note"]) if r["note"]
                                                                                  else "")))
            L.append("| %s | %s | %s |" % (md_escape(n), {"ok": "SUCCESS", "iv": "INVALID_VALUE",
                                                         "crash": "SIGSEGV"}.get(want, want), " | ".join(cells)))
    iv = EXTRA["inline_vs_read"]
    if iv:
        L.append("")
        L.append("## Read-time findings against inline findings")
        L.append("")
        L.append("Case `table-inline-vs-read`: the accept/reject table via `%s`, run once in observe mode (the "
                 "findings are those `cubatchtrace show` computes from the recorded batch) and once with "
                 "`CUBATCHTRACE_REPORT=stderr` (the shim validates each batch as it is called and writes `finding` "
                 "events), both under a session%s. Equal in every field (rule, severity, op, other_op, side, value, "
                 "limit), batch by batch: %d of %d batches, %d findings%s." % (
                     iv["door"], ", without address-space randomisation" if iv["fixed"] else
                     " (address randomisation could not be turned off)", iv["same"], iv["batches"], iv["findings"],
                     " (in %d batches the two runs' addresses differed: there the overlap values, addresses, are "
                     "equal as offsets from their operand)" % iv["rebased"] if iv["rebased"] else ""))
    if EXTRA["probes"]:
        L.append("")
        L.append("## What the driver reads before it answers")
        L.append("")
        L.append("Cases `reads-*` (client `tests/gpu/clients/reads.c`): each probe runs in a forked child that "
                 "initialises CUDA, makes one warm-up batch (pageable host to device), then the probe through the "
                 "12.8 ABI (`cuMemcpy3DBatchAsync`, failIdx preset to 12345: *untouched*) on a non-blocking stream, "
                 "then synchronizes; op lists end exactly where a `PROT_NONE` page begins, so a driver that reads "
                 "one op too many dies with SIGSEGV. *bare*: the driver alone. Then the same program with the shim: "
                 "*observe* (no session), *session* (observe, a session listening), *report* "
                 "(`CUBATCHTRACE_REPORT=stderr`), *strict* (`CUBATCHTRACE_MODE=strict`, a session listening); "
                 "*same*: the answer the bare driver gives. *trace*: the probe batch in the session's trace and "
                 "the findings `cubatchtrace show` computes for it.")
        L.append("")
        L.append("| probe | what | bare driver | observe | session | report | strict | trace (session) |")
        L.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in EXTRA["probes"]:
            a = r["answers"]
            cells = []
            for md in ("observe", "session", "report", "strict"):
                v = a.get(md, "not run")
                cells.append("same" if v == a.get("bare") else ("**differs:** " + v) if md in r["bad"] else v)
            L.append("| `%s` | %s | %s | %s | %s |" % (r["name"], md_escape(r["what"]), md_escape(a.get("bare", "?")),
                                                       " | ".join(md_escape(c) for c in cells),
                                                       md_escape(r["trace"])))
    if EXTRA["peer_rows"]:
        L.append("")
        L.append("## Two GPUs: the validator against the driver")
        L.append("")
        L.append("Cases `peer_*` (client `tests/gpu/clients/peer.c`), one row per batch. *what*: the ops, "
                 "`devN`/`managedN` meaning device or managed memory on device N (the trace's `src_device` / "
                 "`dst_device` equal these). *driver*: the batch call's CUresult, `cuStreamSynchronize`'s, and "
                 "whether the bytes arrived (read back and compared). *validator*: `reject` when the shim recorded "
                 "an error finding for the batch, else `accept`, with its other findings. *agree*: the validator "
                 "rejects exactly what the driver refuses, and an accepted batch delivers every byte; `peer_noaccess` "
                 "is a measurement (no rule covers peer copies without peer access yet), so a difference there is "
                 "reported, not failed.")
        L.append("")
        L.append("| case | batch | what | peer access | driver | validator | agree |")
        L.append("| --- | --- | --- | --- | --- | --- | --- |")
        for r in EXTRA["peer_rows"]:
            agree = "yes" if r["agree"] else ("**differs**" + ("" if r["binding"] else " (measured)"))
            if r["note"]:
                agree += ": " + r["note"]
            L.append("| `%s` | %d | %s | %s | %s | %s | %s |" % (r["case"], r["batch"], md_escape(r["what"]),
                                                             md_escape(r["access"]), md_escape(r["driver"]),
                                                             md_escape(r["validator"]), md_escape(agree)))
    L.append("")
    L.append("## Driver against the facts file")
    L.append("")
    if EXTRA["facts_diff"]:
        L.append("The bare driver now answers differently from `shared/facts/h200-driver.md` on:")
        L.append("")
        for x in EXTRA["facts_diff"]:
            L.append("- %s" % md_escape(x))
    elif any(k.startswith("table-bare") for k in rows):
        L.append("Every row measured on the bare driver matches the facts file.")
    else:
        L.append("Not measured in this run.")
    if EXTRA["gpa"]:
        L.append("")
        L.append("## `cuGetProcAddress_v2` against `dlsym` (bare driver)")
        L.append("")
        L.append("| request | rc | status | handed out | exported symbol | same address |")
        L.append("| --- | --- | --- | --- | --- | --- |")
        for g in EXTRA["gpa"]:
            L.append("| `(\"%s\", %s, %s)` | %s | %s | `%s` %s | `%s` %s | %s |" % (
                g["symbol"], g["version"], g["flags"], g["rc"], g["status"], g["gotsym"], g["got"], g["want"],
                g["wantaddr"], g["match"]))
    L.append("")
    L.append("## How to rerun")
    L.append("")
    L.append("On the GPU machine, from the repository root (after building the shim into `gpu-stage/build` and the "
             "clients with `bash tests/gpu/build`): `bash tests/gpu/run %s`. One case or a group: "
             "`CBT_GPU_CASES=table-,drv-v2 bash tests/gpu/run %s`." % (outfile_arg, outfile_arg))
    L.append("")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(L))
    os.replace(tmp, path)


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rerun-arg", default="docs/gpu-results.md")
    a = ap.parse_args()
    global OUT
    OUT = a.out
    started = datetime.datetime.now(datetime.timezone.utc)
    workdir = tempfile.mkdtemp(prefix="cbt-gpu-")
    cases = [c for c in build_cases() if selected(c.name)]
    EXTRA["versions"] = versions()
    width = max(len(c.name) for c in cases) if cases else 10
    for c in cases:
        why = can_run(c)
        t0 = time.time()
        if why:
            c.status, c.detail = "skip", why
        elif time.time() > DEADLINE:
            c.status, c.detail = "FAIL", "not run: the suite's deadline passed"
        else:
            try:
                ok, detail = c.fn(c, workdir)  # ok None: the case cannot run here (skip)
                c.status, c.detail = ("skip" if ok is None else "pass" if ok else "FAIL"), detail
            except Exception as e:  # one broken case must not stop the others
                import traceback
                c.status = "FAIL"
                c.detail = "suite error: %s: %s" % (type(e).__name__, traceback.format_exc().strip().splitlines()[-3:])
        c.seconds = time.time() - t0
        c.detail = " ".join(str(c.detail).split())
        print("%-4s %-*s %5.1fs  %s" % (c.status if c.status != "pass" else "ok", width, c.name, c.seconds,
                                         c.detail[:300]), flush=True)
    passed = sum(1 for c in cases if c.status == "pass")
    failed = sum(1 for c in cases if c.status == "FAIL")
    skipped = sum(1 for c in cases if c.status == "skip")
    if "DEVICE_NAME" not in EXTRA["driver"]:
        driver_info()  # gpa-vs-dlsym was not selected: the report's header still names the GPU
    try:
        write_report(a.out, cases, started, a.rerun_arg)
        print("report: %s" % a.out)
    except Exception as e:
        print("FAIL could not write the report %s: %s" % (a.out, e))
        failed += 1
    if not ENV.get("CBT_GPU_KEEP"):
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print("traces kept in %s" % workdir)
    print("%d passed, %d failed%s" % (passed, failed, (", %d skipped" % skipped) if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
