#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a tiny handmade CTF 1.8 trace: mkctf.py DIR EVENT-NAME [COUNT]

One stream, one event class EVENT-NAME with a single uint32 field `value`:
a trace of "another tracer" for the bad-input tests.
"""
import os
import struct
import sys

out, name = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.makedirs(out, exist_ok=True)
metadata = """/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace {
    major = 1;
    minor = 8;
    byte_order = le;
    packet.header := struct { uint32_t magic; uint32_t stream_id; };
};
env { hostname = "handmade"; domain = "ust"; tracer_name = "handmade"; };
stream {
    id = 0;
    event.header := struct { uint32_t id; };
};
event {
    name = "%s";
    id = 0;
    stream_id = 0;
    fields := struct { uint32_t value; };
};
""" % name
with open(os.path.join(out, "metadata"), "w") as f:
    f.write(metadata)
with open(os.path.join(out, "stream_0"), "wb") as f:
    f.write(struct.pack("<II", 0xC1FC1FC1, 0))
    for i in range(count):
        f.write(struct.pack("<II", 0, i))
