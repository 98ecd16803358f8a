#!/usr/bin/env python3
"""What `cubatchtrace summary --json` must report for batches made by cbt-gen.

    expect.py CATALOG_H SUMMARY_JSON -- SPEC...

Computes the expected figures from the SPECs given to cbt-gen (same
defaults as cbt-gen, written again here on purpose) and prints one line per
figure: KEY <tab> WANT <tab> GOT.  The test compares them.
"""
import json
import re
import sys


def catalogue(path):
    text = open(path).read()
    lists = {}
    for name in ("API", "DOOR", "OUTCOME", "MEMKIND", "ACCESS_ORDER", "CURESULT", "SEVERITY"):
        body = re.search(r"#define CBT_%s_LIST\(X\)(.*?)\n\n" % name, text, re.S).group(1)
        lists[name] = {m.group(2): int(m.group(1)) for m in re.finditer(r'X\(\w+,\s*(\d+),\s*"([^"]+)"\)', body)}
    body = re.search(r"#define CBT_RULE_LIST\(X\)(.*?)\n\n", text, re.S).group(1)
    sev = {"CBT_SEV_ERROR": "error", "CBT_SEV_HAZARD": "hazard", "CBT_SEV_WARNING": "warning"}
    lists["RULE"] = {m.group(1): sev[m.group(2)] for m in re.finditer(r"X\((\w+),\s*\d+,\s*(CBT_SEV_\w+)", body)}
    return lists


def parse(spec):
    s = dict(n=1, ops=1, bytes=4096, driver_ns=1000, api="cuMemcpy3DBatchAsync_v2", door="symbol",
             outcome="forwarded", result="CUDA_SUCCESS", src="device", dst="device", srcdev=0, dstdev=0,
             order="STREAM", finding=None, oplist=1, numops=None)
    for kv in spec.split(","):
        k, v = kv.split("=", 1)
        s[k] = int(v, 0) if k in ("n", "ops", "bytes", "driver_ns", "srcdev", "dstdev", "oplist", "numops") else v
    return s


def direction(s):
    cls = {"device": "D", "managed": "D", "host_pinned": "H", "host_pageable": "H", "array": "A"}
    a, b = cls.get(s["src"]), cls.get(s["dst"])
    if a is None or b is None:
        return "unknown"
    if a == "D" and b == "D" and s["srcdev"] != s["dstdev"]:
        return "peer"
    return "%sto%s" % (a, b)


def pow2_bin(v):
    if v == 0:
        return "0"
    lo = 1 << (v.bit_length() - 1)
    hi = (lo << 1) - 1
    return str(lo) if lo == hi else "%d-%d" % (lo, hi)


def main():
    cat, summary = sys.argv[1], sys.argv[2]
    specs = sys.argv[sys.argv.index("--") + 1:]
    c = catalogue(cat)
    got = json.load(open(summary))
    want = {"batches": 0, "ops": 0, "bytes": 0, "failed_batches": 0, "refused_batches": 0, "driver_ns": 0}
    tables = {"by_api": {}, "by_door": {}, "by_direction": {}, "by_memkinds": {}, "batch_size_histogram": {},
              "op_size_histogram": {}, "by_access_order": {}}
    findings = {}

    def add(table, name, batches, ops, nbytes):
        r = tables[table].setdefault(name, [0, 0, 0])
        r[0] += batches
        r[1] += ops
        r[2] += nbytes

    for spec in specs:
        s = parse(spec)
        for k in ("api", "door", "outcome", "src", "dst", "order", "result"):
            table = {"api": "API", "door": "DOOR", "outcome": "OUTCOME", "src": "MEMKIND", "dst": "MEMKIND",
                     "order": "ACCESS_ORDER", "result": "CURESULT"}[k]
            assert s[k] in c[table], "%s=%s is not in the catalogue" % (k, s[k])
        n, ops = s["n"], s["ops"] if s["oplist"] else 0
        nbytes = n * ops * s["bytes"]
        want["batches"] += n
        want["ops"] += n * ops
        want["bytes"] += nbytes
        want["driver_ns"] += n * s["driver_ns"]
        if s["outcome"] == "refused":
            want["refused_batches"] += n
        elif s["outcome"] == "forwarded" and s["result"] != "CUDA_SUCCESS":
            want["failed_batches"] += n
        add("by_api", s["api"], n, n * ops, nbytes)
        add("by_door", s["door"], n, n * ops, nbytes)
        add("batch_size_histogram", pow2_bin(s["numops"] if s["numops"] is not None else s["ops"]), n, n * ops, nbytes)
        if ops:
            add("by_direction", direction(s), n, n * ops, nbytes)
            add("by_memkinds", "%s->%s" % (s["src"], s["dst"]), n, n * ops, nbytes)
            add("by_access_order", s["order"], n, n * ops, nbytes)
            add("op_size_histogram", pow2_bin(s["bytes"]), n, n * ops, nbytes)
        if s["finding"]:
            f = findings.setdefault(s["finding"], [c["RULE"][s["finding"]], 0])
            f[1] += n

    for k, v in want.items():
        print("%s\t%s\t%s" % (k, v, got.get(k)))
    for t, rows in tables.items():
        gotrows = {r["name"]: [r["batches"], r["ops"], r["bytes"]] for r in got.get(t, [])}
        for name in sorted(set(rows) | set(gotrows)):
            print("%s[%s]\t%s\t%s" % (t, name, rows.get(name), gotrows.get(name)))
    gotf = {f["rule"]: [f["severity"], f["count"]] for f in got.get("findings", [])}
    for name in sorted(set(findings) | set(gotf)):
        print("findings[%s]\t%s\t%s" % (name, findings.get(name), gotf.get(name)))


if __name__ == "__main__":
    main()
