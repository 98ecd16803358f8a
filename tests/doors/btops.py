#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The ops of each 3D batch as `cubatchtrace show` decodes them:
btops.py FIELD SHOW-TEXT CATALOG-H

Prints, for each 3D batch (a `batch` line whose api is cuMemcpy3DBatchAsync*),
the values of FIELD for its ops, space-separated, one line per batch.  FIELD
is one of src_mem, dst_mem, src_device, dst_device, src_type, dst_type,
elem_size, bytes.  Memory kinds and operand types are printed as the numbers
of include/cubatchtrace/catalog.h (CBT_MEMKIND_LIST, CBT_OPERAND_LIST), read
from CATALOG-H.  An op's side is TYPE:KIND:DEVICE:ADDRESS; elem_size is 1 for
a pointer-to-pointer copy, else the element size of its array side when that
side's kind is array (show's *_array WxHxD*ELEMENT_SIZE), else 0; bytes is
show's bytes.
"""
import re
import sys

field, path, catalog = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(catalog).read()


def numbers(listname):
    body = re.search(r"#define %s\(X\)(.*?)\n\n" % listname, text, re.S).group(1)
    return {n: int(v) for v, n in re.findall(r'X\(\w+, (\d+), "(\w+)"\)', body)}


kinds, types = numbers("CBT_MEMKIND_LIST"), numbers("CBT_OPERAND_LIST")


def keys(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def number(names, v):
    return names[v] if v in names else int(v)


rows = []  # one list of values per 3D batch, in show's order
for line in open(path):
    if line.startswith("batch "):
        k = keys(line)
        rows.append([] if k.get("api", "").startswith("cuMemcpy3DBatchAsync") else None)
        continue
    if not line.startswith("op ") or not rows or rows[-1] is None:
        continue
    k = keys(line)
    sides = {}
    for s in ("src", "dst"):
        typ, mem, dev = k[s].split(":")[:3]
        m = re.search(r"\*(\d+)$", k.get(s + "_array", ""))
        sides[s] = {"type": number(types, typ), "mem": number(kinds, mem), "device": int(dev),
                    "elem": int(m.group(1)) if m else 0}
    src, dst = sides["src"], sides["dst"]
    if src["type"] == 1 and dst["type"] == 1:
        es = 1
    elif src["type"] == 2:
        es = src["elem"] if src["mem"] == kinds["array"] else 0
    elif dst["type"] == 2:
        es = dst["elem"] if dst["mem"] == kinds["array"] else 0
    else:
        es = 0
    values = {
        "src_mem": src["mem"], "dst_mem": dst["mem"], "src_device": src["device"],
        "dst_device": dst["device"], "src_type": src["type"], "dst_type": dst["type"],
        "elem_size": es, "bytes": int(k["bytes"]),
        "src_alloc_size": int(k["src_alloc"].split("+")[1]) if "src_alloc" in k else 0,
    }
    rows[-1].append(str(values[field]))
for r in rows:
    if r is not None:
        print(" ".join(r))
