#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a handmade CTF 1.8 trace whose only event holds a sequence of LEN
bytes, LEN being the value of its length field, with 64 bytes behind it:

    mkctf-seq.py DIR LEN

A length far past the end of the stream is what damaged stream files look
like to libbabeltrace2 2.0.4: with 0x80000000 it crashes (SIGSEGV), with
0x1000000 it allocates about 1 GiB before noticing the stream ended, with
0x7fffffff it allocates without bound.
"""
import os
import struct
import sys

out, length = sys.argv[1], int(sys.argv[2], 0)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "metadata"), "w") as f:
    f.write("""/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
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
    name = "handmade:sequence";
    id = 0;
    stream_id = 0;
    fields := struct { uint32_t len; uint8_t data[len]; };
};
""")
with open(os.path.join(out, "stream_0"), "wb") as f:
    f.write(struct.pack("<II", 0xC1FC1FC1, 0))
    f.write(struct.pack("<II", 0, length) + b"x" * 64)
