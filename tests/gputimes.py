# SPDX-License-Identifier: MIT
"""The batches' GPU times a cubatchtrace:gpu_time event carries, from its
line in babeltrace2's text output, in both of its forms: the shim's
(batch_id, status, start_rel_ns and gpu_ns as sequences, one element per
batch: several batches per event) and that of earlier traces (one batch per
event, the same fields as integers, the status an enumeration).  The tests'
checkers import it (sys.path: this folder).
"""
import os
import re

_SEQ = re.compile(r"\b(batch_id|status|start_rel_ns|gpu_ns) = \[ ((?:\[\d+\] = -?\w+(?:, )?)*) \]")
_ELEM = re.compile(r"\[\d+\] = (-?(?:0x[0-9a-fA-F]+|\d+))")
_ONE = re.compile(r"\b(batch_id|status|start_rel_ns|gpu_ns) = (\( \"\w+\" : container = (-?\d+) \)|-?(?:0x[0-9a-fA-F]+|\d+))")
FIELDS = ("batch_id", "status", "start_rel_ns", "gpu_ns")


def entries(line):
    """[{batch_id, status, start_rel_ns, gpu_ns}] of a gpu_time event's line (status: its number)."""
    seqs = {m.group(1): [int(v, 0) for v in _ELEM.findall(m.group(2))] for m in _SEQ.finditer(line)}
    if seqs:
        n = min(len(seqs.get(f, [])) for f in FIELDS)
        return [{f: seqs[f][k] for f in FIELDS} for k in range(n)]
    one = {}
    for m in _ONE.finditer(line):
        if m.group(1) not in one:
            one[m.group(1)] = int(m.group(3)) if m.group(3) is not None else int(m.group(2), 0)
    return [one] if all(f in one for f in FIELDS) else []


def status_names(catalog=None):
    """{number: name} of the GPU statuses (CBT_GPU_STATUS_LIST of include/cubatchtrace/catalog.h)."""
    catalog = catalog or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include", "cubatchtrace",
                                      "catalog.h")
    body = re.search(r"#define CBT_GPU_STATUS_LIST\(X\)(.*?)\n\n", open(catalog).read(), re.S).group(1)
    return {int(v): n for v, n in re.findall(r"X\(\w+, (\d+), \"([^\"]+)\"\)", body)}
