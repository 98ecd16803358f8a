#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a trace of cbt-gen holds, and what `cubatchtrace summary --json` must report.

    expect.py CATALOG_H SUMMARY_JSON -- SPEC...
        the figures the summary must show for batches made by cbt-gen SPEC...
    expect.py --trace CATALOG_H BT_TEXT -- SPEC...
        the same figures, computed from the events themselves (BT_TEXT:
        `babeltrace2 TRACE` output, only the lines of the processes wanted):
        checks that the generator emitted what the SPECs describe
    expect.py --findings CATALOG_H -- SPEC...
        the findings of one batch of each SPEC, one line each, in the
        validator's order: rule op side other_op value limit

Prints one line per figure: KEY <tab> WANT <tab> GOT; the test compares them.

The ops of a SPEC are laid out here again from cbt-gen's documented layout
(defaults and addresses restated on purpose, not shared), and the findings
come from the rules of docs/rules.md as they apply to that layout, not from
the validator's code.
"""
import json
import re
import struct
import sys

SRC_BASE, DST_BASE = 0x7F0000000000, 0x7E0000000000
SRC_ARRAY, DST_ARRAY = 0xA0000000, 0xB0000000
OPS_PER_EVENT = 64
NO_OP = (1 << 64) - 1
NUMERIC = ("n", "ops", "numops", "recorded", "bytes", "elem", "driver_ns", "stream", "stream_id", "oplist", "flags",
           "fail_idx", "site", "srcdev", "dstdev", "device", "devices", "distinct", "format", "rules", "copies")


def catalogue(path):
    text = open(path).read()
    lists = {}
    for name in ("API", "DOOR", "OUTCOME", "MEMKIND", "ACCESS_ORDER", "CURESULT", "SEVERITY"):
        body = re.search(r"#define CBT_%s_LIST\(X\)(.*?)\n\n" % name, text, re.S).group(1)
        lists[name] = {m.group(2): int(m.group(1)) for m in re.finditer(r'X\(\w+,\s*(\d+),\s*"([^"]+)"\)', body)}
    body = re.search(r"#define CBT_RULE_LIST\(X\)(.*?)\n\n", text, re.S).group(1)
    sev = {"CBT_SEV_ERROR": "error", "CBT_SEV_HAZARD": "hazard", "CBT_SEV_WARNING": "warning",
           "CBT_SEV_ADVICE": "advice"}
    lists["RULE"] = {m.group(1): sev[m.group(2)] for m in re.finditer(r"X\((\w+),\s*\d+,\s*(CBT_SEV_\w+)", body)}
    lists["RULES_VERSION"] = int(re.search(r"#define CBT_RULES_VERSION (\d+)", text).group(1))
    events = open(path.replace("catalog.h", "events.h")).read()
    lists["FORMAT"] = int(re.search(r"#define CBT_EV_FORMAT (\d+)", events).group(1))  # the shim's
    # the format-2 layout, which cbt-gen writes (old traces stay readable)
    lists["FORMAT2"] = int(re.search(r"#define CBT_EV_FORMAT2 (\d+)", events).group(1))
    return lists


# ---- the model: a SPEC's batches, op by op --------------------------------

def parse(spec):
    s = dict(n=1, ops=1, numops=None, recorded=None, w=4096, h=1, d=1, elem=4, driver_ns=1000,
             api="cuMemcpy3DBatchAsync_v2", door="symbol", outcome="forwarded", result="CUDA_SUCCESS",
             src="device", dst="device", srcdev=0, dstdev=0, order="STREAM", oplist=0x5000, stream=0x1000,
             stream_id=7, flags=0, fail_idx=NO_OP, site=0, device=0, devices=2, distinct=0, pending="0",
             inline="0", violate=[], format=None, rules=None)
    for kv in spec.split(","):
        k, v = kv.split("=", 1)
        if k == "bytes":
            s["w"], s["h"], s["d"] = int(v, 0), 1, 1
        elif k == "shape":
            s["w"], s["h"], s["d"] = (int(x) for x in v.split("x"))
        elif k == "violate":
            s["violate"] = [(r.split("@")[0], int(r.split("@")[1]) if "@" in r else 0) for r in v.split("+")]
        elif k in NUMERIC:
            s[k] = int(v, 0)
        else:
            s[k] = v
    return s


def operand(oid, kind, dev, typ, where, base, size, aw, ah, ad, elem):
    """One side of one op: its CUDA fields (typ, where: pointer or CUarray) and what is known of its memory
    (oid: which recorded operand that is)."""
    ondev = kind in ("device", "managed", "array")
    o = dict(oid=oid, kind=kind, device=dev if ondev else -1, type=typ, where=where, row_length=0, layer_height=0,
             lochint=(0, 0), x=0, alloc_base=0, alloc_size=0, aw=0, ah=0, ad=0, elem=0)
    if kind == "array":
        o.update(aw=aw, ah=ah, ad=ad, elem=elem)
    elif kind not in ("host_pageable", "unmapped", "unknown"):
        o.update(alloc_base=base, alloc_size=size)
    return o


def model_batch(s):
    """The ops of one batch of spec s, violations applied: a list of dicts (src, dst, w, h, d, order, flags)."""
    k = s["ops"] if s["oplist"] else 0
    arr = "array" in (s["src"], s["dst"])
    fp = s["w"] * s["h"] * s["d"] * (s["elem"] if arr else 1)
    stride = (fp + 4095) // 4096 * 4096 if fp else 4096
    ops = []
    for i in range(k):
        op = dict(w=s["w"], h=s["h"], d=s["d"], order=s["order"], flags=0)
        for side, base, abase in (("src", SRC_BASE, SRC_ARRAY), ("dst", DST_BASE, DST_ARRAY)):
            kind, dev = s[side], s[side + "dev"]
            typ = "array" if kind == "array" else "pointer"
            if s["distinct"]:
                where = abase + i + 1 if typ == "array" else base + i * stride
                o = operand((side, i), kind, dev, typ, where, where, fp, s["w"], s["h"], s["d"], s["elem"])
            else:
                where = abase if typ == "array" else base + i * stride
                o = operand((side,), kind, dev, typ, where, base, k * stride, k * s["w"], s["h"], s["d"], s["elem"])
                if typ == "array":
                    o["x"] = i * s["w"]
            op[side] = o
        ops.append(op)
    for rule, i in s["violate"]:
        op = ops[i]
        if rule == "overlap_dst_dst":
            ops[i + 1]["dst"] = dict(op["dst"])
        elif rule == "overlap_src_dst":
            ops[i + 1]["src"] = dict(op["dst"])
        elif rule == "overlap_self":
            op["src"] = dict(op["dst"])
        elif rule == "row_length_too_small":
            op["dst"]["row_length"] = s["w"] - 1
        elif rule == "layer_height_too_small":
            op["dst"]["layer_height"] = s["h"] - 1
        elif rule == "extent_zero":
            op["d"] = 0
        elif rule == "access_order_invalid":
            op["order"] = "INVALID"
        elif rule == "op_flags_invalid":
            op["flags"] = 2
        elif rule == "pointer_null":
            op["src"]["where"] = 0
        elif rule == "device_out_of_bounds":
            op["dst"]["where"] = op["dst"]["alloc_base"] + op["dst"]["alloc_size"]
        elif rule in ("array_null", "array_out_of_bounds"):
            side = "src" if op["src"]["type"] == "array" else "dst"
            if rule == "array_null":
                op[side]["where"] = 0
            else:
                op[side]["x"] = op[side]["aw"] - s["w"] + 1
        elif rule == "lochint_ignored":
            side = [x for x in ("src", "dst") if op[x]["type"] == "pointer" and op[x]["kind"] in ("device", "host_pinned")][0]
            op[side]["lochint"] = (1, 0)
        elif rule == "lochint_invalid":
            op["dst"]["lochint"] = (9, 0)
        else:
            raise SystemExit("expect.py: no model for violate=%s" % rule)
    return ops


def elem_size(op):
    """Bytes per element of an op's copy: 1 between pointers, else the CUDA array's (0: unknown)."""
    a, b = op["src"], op["dst"]
    if a["type"] == "pointer" and b["type"] == "pointer":
        return 1
    return a["elem"] if a["type"] == "array" else b["elem"]


def op_bytes(op):
    return op["w"] * op["h"] * op["d"] * elem_size(op)


def model_findings(s, ops, num_ops, recorded):
    """The findings of one batch, in the validator's documented order: (rule, op, side, other_op, value, limit)."""
    out = []
    if num_ops == 0:
        out.append(("num_ops_zero", NO_OP, "none", NO_OP, 0, 1))
    if not s["oplist"] and num_ops:
        out.append(("op_list_null", NO_OP, "none", NO_OP, 0, 0))
    if s["flags"]:
        out.append(("flags_nonzero", NO_OP, "none", NO_OP, s["flags"], 0))
    if s["stream"] == 0:
        out.append(("stream_null", NO_OP, "none", NO_OP, 0, 0))
    elif s["stream"] == 1:
        out.append(("stream_legacy", NO_OP, "none", NO_OP, 1, 0))
    if s["oplist"] and recorded < num_ops:
        out.append(("ops_not_read", NO_OP, "none", NO_OP, recorded, num_ops))
    orders = {"INVALID": 0, "STREAM": 1, "DURING_API_CALL": 2, "ANY": 3}
    for i, op in enumerate(ops):
        ext_ok = op["w"] and op["h"] and op["d"]
        if not ext_ok:
            out.append(("extent_zero", i, "none", NO_OP, 0, 0 if not op["w"] else 1 if not op["h"] else 2))
        order = orders[op["order"]]
        if not 1 <= order <= 3:
            out.append(("access_order_invalid", i, "none", NO_OP, order, 3))
        if op["flags"] & ~1:
            out.append(("op_flags_invalid", i, "none", NO_OP, op["flags"], 1))
        es = elem_size(op)
        for side in ("src", "dst"):
            x = op[side]
            if x["type"] == "pointer":
                errs = 0
                if not x["where"]:
                    out.append(("pointer_null", i, side, NO_OP, 0, 0))
                    errs += 1
                if x["row_length"] and x["row_length"] < op["w"]:
                    out.append(("row_length_too_small", i, side, NO_OP, x["row_length"], op["w"]))
                    errs += 1
                if x["layer_height"] and x["layer_height"] < op["h"]:
                    out.append(("layer_height_too_small", i, side, NO_OP, x["layer_height"], op["h"]))
                    errs += 1
                if errs or x["kind"] == "unknown":
                    continue
                if x["kind"] == "unmapped":
                    out.append(("pointer_unmapped", i, side, NO_OP, x["where"], 0))
                elif x["kind"] in ("device", "managed") and x["alloc_size"] and es and ext_ok:
                    end = x["where"] - x["alloc_base"] + op_bytes(op)  # contiguous: no rowLength/layerHeight
                    if end > x["alloc_size"]:
                        out.append(("device_out_of_bounds", i, side, NO_OP, end, x["alloc_size"]))
            else:
                if not x["where"]:
                    out.append(("array_null", i, side, NO_OP, 0, 0))
                elif ext_ok and x["x"] + op["w"] > x["aw"]:
                    out.append(("array_out_of_bounds", i, side, NO_OP, x["x"] + op["w"], x["aw"]))
        for side in ("src", "dst"):
            x = op[side]
            if x["type"] != "pointer":
                continue
            t = x["lochint"][0]
            if t > 4:
                out.append(("lochint_invalid", i, side, NO_OP, t, 4))
            elif t and x["kind"] in ("device", "host_pinned"):
                out.append(("lochint_ignored", i, side, NO_OP, t, {"device": 1, "host_pinned": 2}[x["kind"]]))
        if op["src"]["type"] == "pointer":
            if op["src"]["kind"] == "host_pageable" and order == 1:
                out.append(("pageable_stream_order", i, "src", NO_OP, order, 0))
            if op["src"]["kind"] == "device" and order == 2:
                out.append(("during_api_call_device_source", i, "src", NO_OP, order, 0))
    for i, op in enumerate(ops):
        for rule in ("overlap_dst_dst", "overlap_src_dst", "overlap_self"):
            if (rule, i) in s["violate"]:
                other = i if rule == "overlap_self" else i + 1
                out.append((rule, i, "none" if rule == "overlap_self" else "dst", other, op["dst"]["where"], 0))
    return out


def inline_events(s, true):
    """The finding events cbt-gen writes for a batch of spec s whose findings are `true`."""
    if s["inline"] == "0":
        return []
    if s["inline"] == "wrong":  # the first true finding left out, one the ops do not have added
        return true[1:] + [("lochint_invalid", 0, "src", NO_OP, 99, 4)]
    return true


def counts(s, ops):
    """numOps and ops_recorded of a batch of spec s whose chunks carry `ops`."""
    return (s["numops"] if s["numops"] is not None else s["ops"],
            s["recorded"] if s["recorded"] is not None else len(ops))


def true_and_inline(s):
    """The findings of one batch of spec s, and the finding events cbt-gen writes for it."""
    ops = model_batch(s)
    true = model_findings(s, ops, *counts(s, ops))
    return true, inline_events(s, true)


def model(s, summary=False):
    """The batches of spec s, one dict per batch (all n alike): as the events hold them, or
    (summary) as the reader must count them.  The reader puts a batch back together from its
    events: the ops its chunks carry (a chunk reaching past the header's ops_recorded does not fit
    and is left out; the batch is then malformed), checked with the validator only when whole
    (complete, or pending: its process ended inside the driver); ops_not_read (fewer ops recorded
    than numOps, op list not NULL) is the reader's own finding, made for every batch.  Inline
    findings are compared when the batch was checked and recorded with the current rules
    (ops_not_read left out on both sides), and left unchecked otherwise."""
    ops = model_batch(s)
    num_ops, recorded = counts(s, ops)
    true, inl = true_and_inline(s)
    state = "complete"
    if s["oplist"] and (recorded > num_ops or any(c + min(OPS_PER_EVENT, len(ops) - c) > recorded
                                                  for c in range(0, len(ops), OPS_PER_EVENT))):
        state = "malformed"
    elif s["oplist"] and recorded > len(ops):
        state = "incomplete"
    elif s["pending"] == "lost":
        state = "pending"
    b = dict(api=s["api"], door=s["door"], outcome=s["outcome"], result=s["result"], driver_ns=s["driver_ns"],
             num_ops=num_ops, ops=ops, findings=[f[0] for f in true], site=s["site"], stream=s["stream"],
             stream_id=s["stream_id"], state=state, rules=s["rules"], checked=0, disagreeing=0, unchecked=0)
    if s["pending"] == "lost":
        b.update(outcome="pending", result="CUDA_SUCCESS", driver_ns=0)
    if summary:
        if state in ("complete", "pending") and s["inline"] != "0" and s["rules"] == s["current_rules"]:
            a = [f for f in true if f[0] != "ops_not_read"]
            c = [f for f in inl if f[0] != "ops_not_read"]
            both = sum(min(a.count(f), c.count(f)) for f in set(a))
            b.update(checked=len(c), disagreeing=len(a) - both + len(c) - both)
        elif s["inline"] != "0":
            b["unchecked"] = len(inl)
        if state not in ("complete", "pending"):
            b["findings"] = [f[0] for f in true if f[0] == "ops_not_read"]
        b["ops"] = [op for c in range(0, len(ops), OPS_PER_EVENT) if c + len(ops[c:c + OPS_PER_EVENT]) <= recorded
                    for op in ops[c:c + OPS_PER_EVENT]]
    return [b] * s["n"]


def read_stats(batches, got):
    """The reader's own figures: inline findings compared, rules versions, batches not whole."""
    want = {"inline_findings[checked]": sum(b["checked"] for b in batches),
            "inline_findings[disagreeing]": sum(b["disagreeing"] for b in batches),
            "inline_findings[unchecked]": sum(b["unchecked"] for b in batches),
            "rules[recorded]": sorted({b["rules"] for b in batches}),
            "read[pending_batches]": sum(b["state"] == "pending" for b in batches),
            "read[malformed_batches]": sum(b["state"] == "malformed" for b in batches),
            "read[incomplete_batches]": sum(b["state"] == "incomplete" for b in batches)}
    for k, v in want.items():
        member, key = k[:-1].split("[")
        g = got.get(member, {}).get(key)
        print("%s\t%s\t%s" % (k, v, sorted(g) if isinstance(g, list) else g))


# ---- the same batches, decoded from babeltrace2's text ----------------------

SEQ = re.compile(r"(\w+) = \[ ((?:\[\d+\] = -?\w+(?:, )?)*) ?\]")
ENUM = re.compile(r'(\w+) = \( "([^"]*)" : container = (-?\d+) \)')
SCALAR = re.compile(r"(\w+) = (0x[0-9A-Fa-f]+|-?\d+)\b")
OP = struct.Struct("<I4x32sI4x32s3Q2I")
OPERAND = struct.Struct("<5QIiB7x")


def fields(line):
    payload = line[line.index("}, {", line.index(" cubatchtrace:")):]
    f = {}
    for m in SEQ.finditer(payload):
        values = [int(v, 0) for v in re.findall(r"\[\d+\] = (-?\w+)", m.group(2))]
        if m.group(1) == "operand_of":  # one 16-bit value per op: source | destination << 8
            f[m.group(1)] = bytes(b for v in values for b in (v & 0xFF, v >> 8))
        else:  # ops, operands: little-endian 64-bit words
            f[m.group(1)] = b"".join(v.to_bytes(8, "little") for v in values)
    payload = SEQ.sub("", payload)
    for m in ENUM.finditer(payload):
        f[m.group(1)] = m.group(2)
    payload = ENUM.sub("", payload)
    for m in SCALAR.finditer(payload):
        f.setdefault(m.group(1), int(m.group(2), 0))
    return f


def decode_side(typ, u, info, kinds):
    base, size, aw, ah, ad, elem, device, kind = info
    o = dict(kind=kinds.get(kind, "?"), device=device, alloc_base=base, alloc_size=size, aw=aw, ah=ah, ad=ad, elem=elem, row_length=0, layer_height=0, lochint=(0, 0), x=0)
    if typ == 1:
        ptr, rl, lh, lt, lid = struct.unpack("<3QIi", u)
        o.update(type="pointer", where=ptr, row_length=rl, layer_height=lh, lochint=(lt, lid))
    elif typ == 2:
        arr, x, y, z = struct.unpack("<4Q", u)
        o.update(type="array", where=arr, x=x)
    else:
        o.update(type="invalid", where=0)
    return o


def decode_chunk(f, kinds, orders):
    raw, idx, opnds = f["ops"], f["operand_of"], f["operands"]
    infos = [OPERAND.unpack_from(opnds, k) for k in range(0, len(opnds), OPERAND.size)]
    ops = []
    for i in range(len(raw) // OP.size):
        st, su, dt, du, w, h, d, order, flags = OP.unpack_from(raw, i * OP.size)
        ops.append(dict(src=decode_side(st, su, infos[idx[2 * i]], kinds), dst=decode_side(dt, du, infos[idx[2 * i + 1]], kinds),
                        w=w, h=h, d=d, order=orders.get(order, "(out of range)"), flags=flags))
    return ops, len(infos)


def decode(path, cat):
    kinds = {v: k for k, v in cat["MEMKIND"].items()}
    orders = {v: k for k, v in cat["ACCESS_ORDER"].items()}
    batches, order, extra = {}, [], {"events": {}, "max_operands": 0, "findings": {}, "headers": {}}
    for line in open(path):
        m = re.search(r" cubatchtrace:(\w+): ", line)
        if not m:
            continue
        ev = m.group(1)
        extra["events"][ev] = extra["events"].get(ev, 0) + 1
        f = fields(line)
        key = (f["vpid"], f["batch_id"])
        if ev == "finding":
            extra["findings"][f["rule"]] = extra["findings"].get(f["rule"], 0) + 1
            extra.setdefault("finding_list", []).append(
                (f["rule"], f["op"], f["side"], f["other_op"], f["value"], f["limit"]))
            continue
        if ev == "batch_end":
            batches[key].update(outcome=f["outcome"], result=f["result"], driver_ns=f["driver_ns"])
            continue
        if ev == "batch":
            b = dict(api=f["api"], door=f["door"], outcome=f["outcome"], result=f["result"],
                     driver_ns=f["driver_ns"], num_ops=f["num_ops"], ops=[], findings=[],
                     stream=f["stream"], stream_id=f["stream_id"])
            for k in ("format", "rules", "ops_recorded", "validated", "findings"):
                extra["headers"].setdefault(k, set()).add(f[k])
            batches[key] = b
            order.append(key)
        ops, nopnd = decode_chunk(f, kinds, orders)
        extra["max_operands"] = max(extra["max_operands"], nopnd)
        b = batches[key]
        assert f["ops_first"] == len(b["ops"]), "chunk out of order"
        b["ops"].extend(ops)
    return [batches[k] for k in order], extra


# ---- the figures --------------------------------------------------------------

def direction(op):
    cls = {"device": "D", "managed": "D", "host_pinned": "H", "host_pageable": "H", "array": "A"}
    a, b = cls.get(op["src"]["kind"]), cls.get(op["dst"]["kind"])
    if a is None or b is None:
        return "unknown"
    if a == "D" and b == "D" and op["src"]["device"] != op["dst"]["device"]:
        return "peer"
    return "%sto%s" % (a, b)


def pow2_bin(v):
    if v == 0:
        return "0"
    lo = 1 << (v.bit_length() - 1)
    hi = (lo << 1) - 1
    return str(lo) if lo == hi else "%d-%d" % (lo, hi)


def figures(batches):
    want = {"batches": 0, "ops": 0, "bytes": 0, "failed_batches": 0, "refused_batches": 0, "no_driver_batches": 0,
            "driver_ns": 0}
    tables = {t: {} for t in ("by_api", "by_door", "by_api_door", "by_direction", "by_memkinds", "by_access_order",
                              "batch_size_histogram", "op_size_histogram")}
    devices, findings = {}, {}

    def add(table, name, ops, nbytes, sample, seen):
        r = tables[table].setdefault(name, [0, 0, 0, None, None])
        if name not in seen:
            r[0] += 1
            seen.add(name)
        r[1] += ops
        r[2] += nbytes
        r[3] = sample if r[3] is None else min(r[3], sample)
        r[4] = sample if r[4] is None else max(r[4], sample)

    def dev(d, prefix, key, nbytes):
        name = str(d) if d >= 0 else "unknown"
        r = devices.setdefault(name, dict.fromkeys(("ops_out", "bytes_out", "ops_in", "bytes_in", "peer_ops_out",
                                                    "peer_bytes_out", "peer_ops_in", "peer_bytes_in"), 0))
        r[prefix + "ops_" + key] += 1
        r[prefix + "bytes_" + key] += nbytes

    for b in batches:
        nbytes = sum(op_bytes(op) for op in b["ops"])
        nops = len(b["ops"])
        want["batches"] += 1
        want["ops"] += nops
        want["bytes"] += nbytes
        want["driver_ns"] += b["driver_ns"]
        if b["outcome"] == "refused":
            want["refused_batches"] += 1
        elif b["outcome"] == "no_driver":
            want["no_driver_batches"] += 1
        elif b["outcome"] == "forwarded" and b["result"] != "CUDA_SUCCESS":
            want["failed_batches"] += 1
        for t, name in (("by_api", b["api"]), ("by_door", b["door"]), ("by_api_door", "%s / %s" % (b["api"], b["door"])),
                        ("batch_size_histogram", pow2_bin(b["num_ops"]))):
            add(t, name, nops, nbytes, b["driver_ns"], set())
        seen = {t: set() for t in tables}
        for op in b["ops"]:
            ob = op_bytes(op)
            d = direction(op)
            add("by_direction", d, 1, ob, ob, seen["by_direction"])
            add("by_memkinds", "%s->%s" % (op["src"]["kind"], op["dst"]["kind"]), 1, ob, ob, seen["by_memkinds"])
            add("by_access_order", op["order"], 1, ob, ob, seen["by_access_order"])
            add("op_size_histogram", pow2_bin(ob), 1, ob, ob, seen["op_size_histogram"])
            for side, key in (("src", "out"), ("dst", "in")):
                x = op[side]
                if x["type"] == "pointer" and x["kind"] in ("device", "managed"):
                    dev(x["device"], "", key, ob)
                    if d == "peer":
                        dev(x["device"], "peer_", key, ob)
        for rule in b["findings"]:
            findings[rule] = findings.get(rule, 0) + 1
    return want, tables, devices, findings


def report(want, tables, devices, findings, rule_sev, got):
    """KEY want got, one line each; `got` in the shape of the summary's JSON."""
    for k, v in want.items():
        print("%s\t%s\t%s" % (k, v, got.get(k)))
    for t, rows in tables.items():
        gotrows = {r["name"]: [r["batches"], r["ops"], r["bytes"], r.get("min"), r.get("max")] for r in got.get(t, [])}
        for name in sorted(set(rows) | set(gotrows)):
            print("%s[%s]\t%s\t%s" % (t, name, rows.get(name), gotrows.get(name)))
    gotdev = {r["name"]: {k: v for k, v in r.items() if k.startswith(("ops_", "bytes_", "peer_"))}
              for r in got.get("by_device", [])}
    for name in sorted(set(devices) | set(gotdev)):
        w, g = devices.get(name), gotdev.get(name)
        print("by_device[%s]\t%s\t%s" % (name, sorted(w.items()) if w else None, sorted(g.items()) if g else None))
    gotf = {f["rule"]: [f["severity"], f["count"]] for f in got.get("findings", [])}
    for name in sorted(set(findings) | set(gotf)):
        print("findings[%s]\t%s\t%s" % (name, [rule_sev[name], findings[name]] if name in findings else None,
                                        gotf.get(name)))


def as_json(want, tables, devices, findings, rule_sev):
    """Figures computed from a decoded trace, in the summary's JSON shape."""
    got = dict(want)
    for t, rows in tables.items():
        got[t] = [dict(name=n, batches=r[0], ops=r[1], bytes=r[2], min=r[3], max=r[4]) for n, r in rows.items()]
    got["by_device"] = [dict(name=n, **r) for n, r in devices.items()]
    got["findings"] = [dict(rule=r, severity=rule_sev.get(r), count=c) for r, c in findings.items()]
    return got


def main():
    args = sys.argv[1:]
    mode = args.pop(0) if args[0].startswith("--") else "--summary"
    specs = [parse(x) for x in args[args.index("--") + 1:]]
    args = args[:args.index("--")]
    cat = catalogue(args[0])
    for s in specs:
        for k, table in (("api", "API"), ("door", "DOOR"), ("outcome", "OUTCOME"), ("src", "MEMKIND"),
                         ("dst", "MEMKIND"), ("order", "ACCESS_ORDER"), ("result", "CURESULT")):
            assert s[k] in cat[table], "%s=%s is not in the catalogue" % (k, s[k])
        for rule, _ in s["violate"]:
            assert rule in cat["RULE"], "violate=%s is not a rule of the catalogue" % rule
        s["format"] = cat["FORMAT2"] if s["format"] is None else s["format"]  # cbt-gen's default
        s["rules"] = cat["RULES_VERSION"] if s["rules"] is None else s["rules"]
        s["current_rules"] = cat["RULES_VERSION"]
    if mode == "--findings":
        for s in specs:
            for f in true_and_inline(s)[0]:
                print(" ".join(str(x) for x in f))
        return
    batches = [b for s in specs for b in model(s, summary=mode == "--summary")]
    want, tables, devices, findings = figures(batches)
    if mode == "--trace":
        got_batches, extra = decode(args[1], cat)
        gw, gt, gd, _ = figures(got_batches)
        # the trace carries finding events only for inline specs: compare those
        inline, inline_list = {}, []
        for s in specs:
            fs = true_and_inline(s)[1]
            for f in fs:
                inline[f[0]] = inline.get(f[0], 0) + s["n"]
            inline_list += fs * s["n"]
        report(want, tables, devices, inline, cat["RULE"], as_json(gw, gt, gd, extra["findings"], cat["RULE"]))
        got_list = extra.get("finding_list", [])
        first = next((i for i, (a, b) in enumerate(zip(inline_list, got_list)) if a != b), None)
        print("finding_events\t%d, all alike\t%d, %s" % (len(inline_list), len(got_list), "all alike" if first is None
              else "event %d is %s, not %s" % (first, got_list[first], inline_list[first])))
        most = 0
        for s in specs:
            ops = model_batch(s)
            for c in range(0, len(ops), OPS_PER_EVENT):
                most = max(most, len({op[x]["oid"] for op in ops[c:c + OPS_PER_EVENT] for x in ("src", "dst")}))
        print("operands_per_chunk_max\t%s\t%s" % (most, extra["max_operands"]))
        header = {"format": {s["format"] for s in specs}, "rules": {s["rules"] for s in specs},
                  "ops_recorded": {counts(s, model_batch(s))[1] for s in specs},
                  "validated": {int(s["inline"] != "0") for s in specs},
                  "findings": {len(true_and_inline(s)[1]) for s in specs}}
        for k, v in header.items():
            print("header[%s]\t%s\t%s" % (k, sorted(v), sorted(extra["headers"].get(k, ()))))
        return
    got = json.load(open(args[1]))
    report(want, tables, devices, findings, cat["RULE"], got)
    read_stats(batches, got)


if __name__ == "__main__":
    main()
