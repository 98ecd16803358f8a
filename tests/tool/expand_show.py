#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The records of `cubatchtrace show`, from either side, for comparing them.

expand_show.py bt [PID] < `babeltrace2 ... -c filter.cubatchtrace.expand` text
expand_show.py show < `cubatchtrace show` output

bt:   every cubatchtrace.expand:* event that sink.text.pretty printed (of
      process PID when given) written as the line `cubatchtrace show` prints
      for it (docs/events.md), from the event's fields alone: the field
      names and enumeration labels are the plugin's, the layout show's.
show: show's records (`show --records`), its `#` lines left out, and a
      finding's words and fix (the text that ends its record: the events
      carry the raw fields they are made of).

Both sides then write every hexadecimal number (0x...) in decimal: show
prints some finding values in hexadecimal (addresses) where the event
carries the integer, and sink.text.pretty prints hexadecimal in capitals.
Nothing else is changed: a field the plugin got wrong, missing or extra
makes the lines differ.
"""
import re
import sys

HEX = re.compile(r"0x([0-9a-fA-F]+)")
WORDS = re.compile(r' words="(?:[^"\\]|\\.)*" fix="(?:[^"\\]|\\.)*"$')
FIELD = re.compile(r'(\w+) = (\( "((?:[^"\\]|\\.)*)" : container = (-?\d+) \)|\( <unknown> : container = (-?\d+) \)|'
                   r'"((?:[^"\\]|\\.)*)"|[^,{}\s]+)')
NONE = 2**64 - 1


def dec(line):
    return HEX.sub(lambda m: str(int(m.group(1), 16)), line)


def fields(payload):
    out = {}
    for m in FIELD.finditer(payload):
        name, raw = m.group(1), m.group(2)
        if m.group(3) is not None or raw.startswith("( <unknown>"):
            out[name] = m.group(3) if m.group(3) is not None else m.group(5)  # label, or the number when unmapped
        elif m.group(6) is not None:
            out[name] = m.group(6)
        else:
            out[name] = raw
    return out


def num(v):
    return int(v, 0)


def idx(v):
    return "-" if num(v) == NONE else str(num(v))


def hexs(v):
    return "0x%x" % num(v)


def image(f):
    return " image=0x%08x" % num(f["image"]) if num(f["image"]) else ""


def where(kind, f):
    return "%s vpid=%s id=%s" % (kind, f["vpid"], f["id"])


def batch(f, d1):
    s = where("batch", f)
    if f["state"] != "no_header":
        s += (" api=%s door=%s outcome=%s result=%s num_ops=%s recorded=%s flags=%s op_list=%s stream=%s"
              " stream_id=%s context=%s device=%s capture=%s fail_idx=%s driver_ns=%s tid=%s caller=%s"
              " device_count=%s format=%s rules=%s validated=%s inline_findings=%s") % (
            f["api"], f["door"], f["outcome"], f["result"], f["num_ops"], f["ops_recorded"], hexs(f["flags"]),
            hexs(f["op_list"]), hexs(f["stream"]), f["stream_id"], hexs(f["context"]), f["device"], f["capture"],
            idx(f["fail_idx"]), f["driver_ns"], f["tid"], hexs(f["caller"]), f["device_count"], f["format"],
            f["rules"], f["validated"], f["findings"])
    if d1:
        s += " srcs=%s sizes=%s attrs=%s attrs_idxs=%s num_attrs=%s attrs_recorded=%s abi=%s" % (
            hexs(f["srcs"]), hexs(f["sizes"]), hexs(f["attrs"]), hexs(f["attrs_idxs"]), f["num_attrs"],
            f["attrs_recorded"], f["abi"])
    if f["state"] != "no_header" and f["outcome"] == "forwarded" and f["result"] == "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED":
        s += " mark=refused_in_capture"
    return s + " host=%s state=%s%s" % (f["host"], f["state"], image(f))


def operand(f, side):
    g = lambda k: f["%s_%s" % (side, k)]
    s = " %s=%s:%s:%s:%s" % (side, g("type"), g("kind"), g("device"), hexs(g("address")))
    if g("type") == "ARRAY":
        s += "+%s,%s,%s" % (g("offset_x"), g("offset_y"), g("offset_z"))
    return s


def operand_detail(f, side):
    g = lambda k: f["%s_%s" % (side, k)]
    if g("type") == "POINTER":
        s = " %s_rowLength=%s %s_layerHeight=%s %s_locHint=%s:%s" % (
            side, g("rowLength"), side, g("layerHeight"), side, g("locHint_type"), g("locHint_id"))
        if num(g("alloc_size")):
            s += " %s_alloc=%s+%s" % (side, hexs(g("alloc_base")), g("alloc_size"))
        return s
    if g("type") == "ARRAY" and g("kind") == "array" and num(g("array_width")):
        return " %s_array=%sx%sx%s*%s" % (side, g("array_width"), g("array_height"), g("array_depth"), g("elem_size"))
    return ""


def op(f):
    return (where("op", f) + " i=%s" % f["i"] + operand(f, "src") + operand(f, "dst") +
            " extent=%sx%sx%s order=%s flags=%s bytes=%s" % (f["extent_width"], f["extent_height"], f["extent_depth"],
                                                             f["order"], hexs(f["flags"]), f["bytes"]) +
            operand_detail(f, "src") + operand_detail(f, "dst") + image(f))


def attr(f):
    return where("attr", f) + " k=%s idx=%s order=%s flags=%s src_locHint=%s:%s dst_locHint=%s:%s%s" % (
        f["k"], f["idx"], f["order"], hexs(f["flags"]), f["src_locHint_type"], f["src_locHint_id"],
        f["dst_locHint_type"], f["dst_locHint_id"], image(f))


def finding(f, kind):
    s = where(kind, f) + " rule=%s severity=%s op=%s other_op=%s side=%s value=%s limit=%s" % (
        f["rule"], f["severity"], idx(f["op"]), idx(f["other_op"]), f["side"], f["value"], f["limit"])
    if kind == "finding":
        s += " inline=%s" % {"yes": "1", "no": "0", "not_compared": "-"}[f["inline"]]
    return s + image(f)


def gpu(f):
    kind = lambda k: "mixed" if f[k] == "255" else f[k]
    device = lambda k: "mixed" if num(f[k]) == -2 else f[k]
    return where("gpu", f) + (" status=%s gpu_ns=%s start_rel_ns=%s tid=%s api=%s stream=%s stream_id=%s device=%s"
                              " driver_ns=%s ops=%s bytes=%s src_kind=%s dst_kind=%s src_device=%s dst_device=%s") % (
        f["status"], f["gpu_ns"], f["start_rel_ns"], f["tid"], f["api"], hexs(f["stream"]), f["stream_id"], f["device"],
        f["driver_ns"], f["ops"], f["bytes"], kind("src_kind"), kind("dst_kind"), device("src_device"),
        device("dst_device")) + image(f)


def from_bt(pid):
    make = {"batch": lambda f: batch(f, False), "batch1d": lambda f: batch(f, True), "op": op, "attr": attr,
            "finding": lambda f: finding(f, "finding"), "inline_finding": lambda f: finding(f, "inline_finding"),
            "gpu": gpu}
    for line in sys.stdin:
        m = re.search(r" cubatchtrace\.expand:(\w+): (\{.*\})\s*$", line)
        if not m:
            continue
        f = fields(m.group(2))
        if pid is not None and f.get("vpid") != pid:
            continue
        print(dec(make[m.group(1)](f)))


def from_show():
    for line in sys.stdin:
        if not line.startswith("#") and line.strip():
            print(dec(WORDS.sub("", line.rstrip("\n"))))


if sys.argv[1] == "bt":
    from_bt(sys.argv[2] if len(sys.argv) > 2 else None)
else:
    from_show()
