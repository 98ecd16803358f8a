#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Decode the ops of cubatchtrace:batch events from babeltrace2's text output,
without the cubatchtrace tool: btops.py FIELD TRACE-TEXT

Prints, for each cubatchtrace:batch event (batches of one chunk), the values of
FIELD for its ops, space-separated, one line per event.  FIELD is one of
src_mem, dst_mem, src_device, dst_device, src_type, dst_type, elem_size, bytes.
The layout is that of include/cubatchtrace/events.h: the ops as the bytes of
CUDA 13's CUDA_MEMCPY3D_BATCH_OP (112 bytes) in little-endian 64-bit words,
one 16-bit value per op holding its source (low byte) and destination (high
byte) operand index, and 56-byte operands (kind at byte 48, device at 44,
elem_size at 40), also in 64-bit words.
"""
import re
import struct
import sys

field, path = sys.argv[1], sys.argv[2]


def seq(line, name):
    m = re.search(r"\b%s = \[ ((?:\[\d+\] = \w+(?:, )?)*) \]" % name, line)
    return [int(v, 0) for v in re.findall(r"\] = (\w+)", m.group(1))] if m else []


def words(values):
    return b"".join(v.to_bytes(8, "little") for v in values)


for line in open(path):
    if " cubatchtrace:batch: " not in line:
        continue
    ops, operands = words(seq(line, "ops")), words(seq(line, "operands"))
    idx = [b for v in seq(line, "operand_of") for b in (v & 0xFF, v >> 8)]
    out = []
    for i in range(len(ops) // 112):
        op = ops[112 * i:112 * (i + 1)]
        sides = []
        for s in range(2):
            kind_type = struct.unpack_from("<I", op, 40 * s)[0]
            o = operands[56 * idx[2 * i + s]:56 * (idx[2 * i + s] + 1)]
            elem, dev = struct.unpack_from("<Ii", o, 40)
            sides.append({"type": kind_type, "mem": o[48], "device": dev, "elem": elem})
        w, h, d = struct.unpack_from("<QQQ", op, 80)
        src, dst = sides
        if src["type"] == 1 and dst["type"] == 1:
            es = 1
        elif src["type"] == 2:
            es = src["elem"] if src["mem"] == 5 else 0
        elif dst["type"] == 2:
            es = dst["elem"] if dst["mem"] == 5 else 0
        else:
            es = 0
        values = {
            "src_mem": src["mem"], "dst_mem": dst["mem"], "src_device": src["device"],
            "dst_device": dst["device"], "src_type": src["type"], "dst_type": dst["type"],
            "elem_size": es, "bytes": w * h * d * es,
        }
        out.append(str(values[field]))
    print(" ".join(out))
