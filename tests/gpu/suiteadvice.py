# SPDX-License-Identifier: MIT
"""The advice's estimated savings against what doing as it says buys, in the GPU suite: its cases, built by
cases(S) where S is the suite module.

  advice-costs      bench/advice-costs.sh (the client gpu-stage/bin/advice-costs) writes the cost table of this run
                    beside the report (OUTFILE without .md, then -advice-costs.txt; CBT_GPU_ADVICE_COSTS=FILE uses
                    that table instead and the case is skipped): it must say its GPU and driver and hold every figure
  advice-unbatched  unbatched_run     (host time: (calls - 1) x the cost table's batch_call_ns, at most the run's cheapest call each;
                    skipped, both figures said, when neither the estimate nor the measurement reaches 10 % of the
                    advised way's time: a driver whose call costs per copy, nothing a call, has nothing to save)
  advice-tiny       tiny_copies       (host time: the batch call's share of its tiny copies, measured in the trace)
  advice-pageable   pageable_source   (wall time of the bytes from pageable against pinned memory, cost table)
  advice-engine     overlap_flag_large_copy and same_device_engine_copy (wall time, cost table): the case says
                    which of them the driver shows a difference for (estimated or measured saving at least
                    10 % of the advised way's time), holds those to the estimate, and is skipped when neither

Each rule case runs tests/gpu/clients/advice.c twice: `advice PATTERN trace` under the shim and a session, then
`cubatchtrace summary --json --pid PID [--advice-costs TABLE]` of that trace: the rule drawn, as many times as the
client made the pattern, its estimated saving per occurrence (the rule's saving_ns / count); then `advice PATTERN
measure` without the shim: the pattern and the advised change in one process, each timed in the quantity the
estimate is of (docs/rules.md § Advice).  Pass: the measured saving within 30 % of the estimate.  Over the test
double (dry run) the advice is checked and the comparison skipped: the double's timings are not a GPU's.
"""
import json
import os
import re

TOLERANCE = 0.30
DIFFERENCE = 0.10  # engine, unbatched: a saving below this share of the advised way's time is no difference
NO_DIFFERENCE_KEYS = ("engine", "unbatched")
STATE = {"table": None, "why": "the advice-costs case did not run"}

# pattern: (client pattern, {rule: occurrences the trace run makes}, needs the cost table, reps of the measurement)
PATTERNS = {
    "unbatched": ("unbatched", {"unbatched_run": 3}, False, 41),
    "tiny": ("tiny", {"tiny_copies": 5}, False, 21),
    "pageable": ("pageable", {"pageable_source": 1}, True, 15),
    "engine": ("engine", {"overlap_flag_large_copy": 1, "same_device_engine_copy": 1}, True, 15),
}
FIGURES = ("batch_h2d_gibps", "batch_h2d_overlap_gibps", "batch_d2h_gibps", "batch_d2h_overlap_gibps",
           "batch_d2d_gibps", "batch_d2d_overlap_gibps", "batch_h2d_pageable_gibps", "sm_d2d_gibps")


def table_out(S):
    return os.path.splitext(os.path.abspath(S.OUT or "gpu-results.md"))[0] + "-advice-costs.txt"


def read_table(path):
    kv = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            kv[k] = v
    return kv


def us(ns):
    return "%.1f us" % (ns / 1000.0)


def costs_case(S):
    def fn(case, workdir):
        given = S.ENV.get("CBT_GPU_ADVICE_COSTS")
        if given:
            if not os.path.isfile(given):
                STATE["why"] = "CBT_GPU_ADVICE_COSTS=%s: no such file" % given
                return False, STATE["why"]
            STATE["table"], STATE["why"] = os.path.abspath(given), ""
            return None, "CBT_GPU_ADVICE_COSTS=%s: that table is used, none measured here" % given
        if S.FAKE:
            STATE["why"] = "dry run: no cost table (bench/advice-costs.c measures a GPU; the double's timings are " \
                           "not one's)"
            return None, STATE["why"]
        out = table_out(S)
        binary = S.b("advice-costs")
        env = S.tool_env()
        if os.path.exists(binary):
            env["ADVICE_COSTS"] = os.path.abspath(binary)
        script = os.path.join(S.HERE, "..", "..", "bench", "advice-costs.sh")
        rc, o, e = S.sh(["bash", script, out], timeout=120, env=env)
        if rc != 0:
            STATE["why"] = "bench/advice-costs.sh exit %d: %s" % (rc, (e or o).strip()[-300:])
            return False, STATE["why"]
        kv = read_table(out)
        problems = ["no %s" % k for k in ("gpu", "driver", "measured") if not kv.get(k)]
        for k in FIGURES:
            try:
                if not float(kv.get(k, "0")) > 0:
                    problems.append("%s=%s" % (k, kv.get(k)))
            except ValueError:
                problems.append("%s=%s" % (k, kv.get(k)))
        if problems:
            STATE["why"] = "the cost table %s: %s" % (out, "; ".join(problems))
            return False, STATE["why"]
        STATE["table"], STATE["why"] = out, ""
        return True, "%s: %s, driver %s, %s copies of %s bytes; GiB/s: %s" % (
            out, kv["gpu"], kv["driver"], kv.get("copies", "?"), kv.get("copy_bytes", "?"),
            ", ".join("%s %s" % (k.replace("_gibps", ""), kv[k]) for k in FIGURES))
    return fn


def measured_of(out):
    m = {}
    for line in out.splitlines():
        if line.startswith("MEASURED "):
            kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
            m[kv["rule"]] = kv
    return m


def within(est, meas):
    return est > 0 and abs(meas - est) <= TOLERANCE * est


def verdict(key, est, saving, advised):
    """ok (the measured saving within 30 % of the estimate), bad, or for advice-engine and advice-unbatched none
    (neither the estimate nor the measurement shows a difference: both below 10 % of the advised way's time)."""
    if key in NO_DIFFERENCE_KEYS and max(est or 0, saving) < DIFFERENCE * advised:
        return "none"
    return "ok" if est is not None and within(est, saving) else "bad"


WORDS = {
    "dry": lambda e, m: "",
    "none": lambda e, m: ": no difference on this driver",
    "ok": lambda e, m: ": within 30 %% (%.0f %% apart)" % (100 * abs(m - e) / e),
    "bad": lambda e, m: ": NOT within 30 %%%s" % (" (%.0f %% apart)" % (100 * abs(m - e) / e) if e else ""),
}


def selftest():
    """The verdicts on made-up figures (tests/gpu/dryrun.sh runs this: the dry run cannot compare timings)."""
    cases = [("tiny", 100.0, 100.0, 5.0, "ok"), ("tiny", 100.0, 129.0, 5.0, "ok"), ("tiny", 100.0, 71.0, 5.0, "ok"),
             ("tiny", 100.0, 131.0, 5.0, "bad"), ("tiny", 100.0, 69.0, 5.0, "bad"), ("tiny", None, 50.0, 5.0, "bad"),
             ("tiny", 0.0, 0.0, 5.0, "bad"), ("engine", 5.0, 9.0, 100.0, "none"), ("engine", 0.0, 50.0, 100.0, "bad"),
             ("engine", 50.0, 60.0, 100.0, "ok"), ("engine", 50.0, 0.0, 100.0, "bad"),
             ("pageable", 5.0, 9.0, 100.0, "bad"), ("unbatched", 0.1, 12.5, 642.7, "none"),
             ("unbatched", 100.0, 150.0, 500.0, "bad"), ("unbatched", 100.0, 110.0, 500.0, "ok")]
    bad = ["verdict%r = %s, want %s" % (c[:4], verdict(*c[:4]), c[4]) for c in cases if verdict(*c[:4]) != c[4]]
    for line in bad:
        print(line)
    return not bad


def advice_case(S, key):
    pattern, rules, needs_table, reps = PATTERNS[key]

    def fn(case, workdir):
        table = STATE["table"]
        given = S.ENV.get("CBT_GPU_ADVICE_COSTS")
        if not table and given and os.path.isfile(given):  # advice-costs not selected
            table = os.path.abspath(given)
        if needs_table and not table and not S.FAKE:
            return False, "no cost table: %s" % STATE["why"]
        sess = S.Session(case.name, workdir)
        if not sess.start():
            return False, "lttng session: " + sess.error
        try:
            rc, out, err = S.run_client([S.b("advice"), pattern, "trace"], 60)
        finally:
            sess.stop()
        if rc != 0 or "RESULT ok" not in out:
            return False, "traced client exit %d: %s %s" % (rc, out.strip()[-200:], err.strip()[-200:])
        pid = re.search(r"^PID (\d+)", out, re.M).group(1)
        cmd = [S.TOOL, "summary", "--json", "--pid", pid] + (["--advice-costs", table] if table else []) + [sess.dir]
        rc, js, err = S.sh(cmd, timeout=120, env=S.cbt_tool_env())
        if rc != 0:
            return False, "summary exit %d: %s" % (rc, err.strip()[-300:])
        adv = json.loads(js)["advice"]
        got = {r["rule"]: r for r in adv["rules"]}
        problems, est = [], {}
        for rule, want in sorted(rules.items()):
            r = got.get(rule)
            if not r:
                problems.append("%s not drawn (advice: %s)" % (rule, ", ".join(sorted(got)) or "none"))
                continue
            # unbatched_run: a run of calls the machine paused in (a gap above
            # run_gap) is two runs, two advice whose savings add up to nearly
            # the whole run's; so at least once per pattern, and the estimate
            # is the savings per pattern made
            split = rule == "unbatched_run"
            if r["count"] != want and not (split and r["count"] > want):
                problems.append("%s drawn %d times, the client made the pattern %d times" % (rule, r["count"], want))
            if r["saving_ns"] is None:
                if table or not (S.FAKE and needs_table):  # a dry run may have no table
                    problems.append("%s: no estimated saving (%s)" % (rule, r.get("saving_words")))
            else:
                est[rule] = r["saving_ns"] / float(want if split else r["count"])
        ct = adv.get("cost_table")
        if table and (not ct or os.path.abspath(ct["path"]) != os.path.abspath(table)):
            problems.append("the summary used cost table %s, not %s" % (ct and ct["path"], table))
        if problems:
            return False, "; ".join(problems)
        rc, mout, err = S.run_client([S.b("advice"), pattern, "measure", str(reps)], 120, shim=False)
        if rc != 0 or "RESULT ok" not in mout:
            return False, "measuring client exit %d: %s %s" % (rc, mout.strip()[-200:], err.strip()[-200:])
        meas = measured_of(mout)
        shown = os.path.relpath(ct["path"]) if ct else ""
        shown = ct["path"] if shown.startswith("..") else shown
        used = ("cost table %s (%s, driver %s%s)" % (shown, ct["gpu"], ct["driver"],
                                                     ", measured " + ct["measured"] if ct["measured"] else "")
                if ct else "no cost table")
        parts, verdicts = [], []
        for rule in sorted(rules):
            m = meas.get(rule)
            e = est.get(rule)
            if not m or "unavailable" in m:
                parts.append("%s: estimated %s, not measured (%s)" % (rule, us(e) if e is not None else "none",
                                                                      m and m.get("unavailable")))
                verdicts.append((rule, "unmeasured"))
                continue
            saving, advised = float(m["saving_ns"]), float(m["advised_ns"])
            v = "dry" if S.FAKE else verdict(key, e, saving, advised)
            txt = "%s: estimated %s, measured %s (%s time, %s of %s: %s as is, %s advised)%s" % (
                rule, us(e) if e is not None else "none", us(saving), m["time"], m["stat"], m["reps"],
                us(float(m["as_is_ns"])), us(advised), WORDS[v](e, saving))
            verdicts.append((rule, v))
            parts.append(txt)
        pc = re.search(r"^PERCALL one_call_ns=(\d+) per_copy_in_batch_ns=(\d+)", mout, re.M)
        if pc:  # what the driver's cost per call is made of: a call's own cost against a copy's
            one, per = float(pc.group(1)), float(pc.group(2))
            calls = int(re.search(r"calls=(\d+)", out).group(1))
            parts.append("a one-copy call alone %s, a copy within the one batch %s: only the rest, %s a call, is "
                         "saved, (calls - 1) x that = %s" % (us(one), us(per), us(one - per),
                                                             us((calls - 1) * (one - per))))
        detail = "; ".join(parts) + "; " + used
        if S.FAKE:
            return None, "dry run: the advice drawn as expected, the measured saving not compared (the double's " \
                         "timings are not a GPU's): " + detail
        if any(v == "bad" for _, v in verdicts):
            return False, detail
        if key == "engine":
            shown = [r for r, v in verdicts if v == "ok"]
            if not shown:
                return None, "neither overlap_flag_large_copy nor same_device_engine_copy shows a difference on " \
                             "this driver: " + detail
            return True, "the driver shows a difference for %s: %s" % (" and ".join(shown), detail)
        if verdicts and all(v == "none" for _, v in verdicts):
            return None, "no difference on this driver (estimate and measurement both below %d %% of the advised " \
                         "way's time): %s" % (int(DIFFERENCE * 100), detail)
        return all(v == "ok" for _, v in verdicts), detail
    return fn


def cases(S):
    C = S.Case
    return [
        C("advice-costs", "bench/advice-costs.sh writes this run's cost table beside the report (its GPU, driver, "
          "date and every figure), which the advice-* cases pass to `--advice-costs`", costs_case(S)),
        C("advice-unbatched", "unbatched_run: 3 runs of 128 one-copy batches drawn 3 times; the estimate ((calls - 1) "
          "x the cost table's batch_call_ns, host time) against the host time one batch of the 128 copies saves, "
          "median, no shim: within 30 % (skipped when neither reaches 10 % of the time)", advice_case(S, "unbatched")),
        C("advice-tiny", "tiny_copies: 5 batches of 4096 x 256 B drawn 5 times; the estimate (the call's host time "
          "for its tiny copies, in the trace) against the host time of one 1 MiB copy instead, median, no shim: "
          "within 30 %", advice_case(S, "tiny")),
        C("advice-pageable", "pageable_source: 8 x 8 MiB from pageable memory drawn once; the estimate (cost "
          "table) against the wall time pinned memory saves, best of 15, no shim: within 30 %",
          advice_case(S, "pageable")),
        C("advice-engine", "overlap_flag_large_copy and same_device_engine_copy: 8 x 8 MiB device to device with "
          "PREFER_OVERLAP_WITH_COMPUTE drawn once each; the estimates (cost table) against the wall time without "
          "the flag, and as cuMemcpyDtoDAsync, saves: says which the driver shows a difference for, that one within "
          "30 %; skipped when neither", advice_case(S, "engine")),
    ]
