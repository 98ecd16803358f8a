#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a handmade CTF 1.8 trace of cubatchtrace batch events, for what
LTTng never writes: chunks that do not fit the format, in any order.

    mkbatches.py DIR SCENARIO [ARGS]

The event layout is that of include/cubatchtrace/events.h (enumerations as
plain integers).  Events go to two stream files, so a reader that takes
streams round-robin sees them out of order.  SCENARIO is one of:

  malformed   one batch per way of getting a chunk wrong (ids below)
  version     one good 2-op batch, recorded with FORMAT and RULES
  pitched     one 3-op batch: a pitched 2D source (rowLength, layerHeight),
              a destination with a locHint, and a plain op
  unread      a first event with empty sequences: 4 ops passed, none read,
              on the NULL stream
  waiting N   N batches of 128 ops: their batch events (64 ops each) in one
              stream, their second chunks in the other, in reverse order, so
              that all N wait at once (for the reader's memory cap)
  timed N     N batches with timestamps, on two threads and two streams,
              and their GPU times (cubatchtrace:gpu_time) read back late, in
              reverse order, in the other stream (see timed() for the times)
"""
import os
import struct
import sys

OP_SIZE, OPND_SIZE = 112, 56


def _format2():
    """CBT_EV_FORMAT2 of include/cubatchtrace/events.h: the layout these events have (the shim now writes
    the compact record, CBT_EV_FORMAT; the reader still reads this one)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "cubatchtrace", "events.h")
    try:
        for line in open(path):
            if line.startswith("#define CBT_EV_FORMAT2 "):
                return int(line.split()[2])
    except OSError:
        pass
    return 2


FORMAT2 = _format2()
U64_MAX = (1 << 64) - 1
MEM_DEVICE = 1

BATCH_FIELDS = [  # name, struct code (the order and types of CBT_EV_BATCH_FIELDS)
    ("format", "H"), ("rules", "H"), ("batch_id", "Q"), ("api", "B"), ("door", "B"), ("outcome", "B"),
    ("result", "I"), ("num_ops", "Q"), ("ops_recorded", "Q"), ("flags", "Q"), ("op_list", "Q"),
    ("stream", "Q"), ("stream_id", "Q"), ("context", "Q"), ("device", "i"), ("capture", "B"),
    ("fail_idx", "Q"), ("driver_ns", "Q"), ("caller", "Q"), ("tid", "i"), ("device_count", "i"),
    ("validated", "B"), ("findings", "I"),
]
CTYPE = {"B": "uint8_t", "H": "uint16_t", "I": "uint32_t", "i": "int32_t", "Q": "uint64_t"}
# Field names carry a leading underscore, as LTTng writes them (`stream` is a
# TSDL keyword); babeltrace2 drops it.
CHUNK = "uint64_t _ops_first; uint32_t __ops_length; uint8_t _ops[__ops_length]; " \
        "uint32_t __operand_of_length; uint8_t _operand_of[__operand_of_length]; " \
        "uint32_t __operands_length; uint8_t _operands[__operands_length];"
BATCH = " ".join("%s _%s;" % (CTYPE[c], n) for n, c in BATCH_FIELDS)

METADATA = """/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace {
    major = 1;
    minor = 8;
    byte_order = le;
    packet.header := struct { uint32_t magic; uint32_t stream_id; };
};
env { hostname = "handmade"; domain = "ust"; tracer_name = "lttng-ust"; };
stream {
    id = 0;
    event.header := struct { uint32_t id; };
    event.context := struct { int32_t _vpid; int32_t _vtid; };
};
event { name = "cubatchtrace:batch"; id = 0; stream_id = 0; fields := struct { %s %s }; };
event { name = "cubatchtrace:batch_ops"; id = 1; stream_id = 0; fields := struct { uint64_t _batch_id; %s }; };
event { name = "cubatchtrace:batch_end"; id = 2; stream_id = 0; fields := struct { %s }; };
""" % (BATCH, CHUNK, CHUNK, BATCH)

PID = 4242


def op(src, dst, width):
    """A pointer-to-pointer op, width x 1 x 1, srcAccessOrder STREAM."""
    def operand(ptr):
        return struct.pack("<I4xQQQIi", 1, ptr, 0, 0, 0, 0)
    return operand(src) + operand(dst) + struct.pack("<QQQII", width, 1, 1, 1, 0)


def operand(base, size):
    return struct.pack("<QQQQQIiB7x", base, size, 0, 0, 0, 0, 0, MEM_DEVICE)


def chunk(first, ops, operand_of=None, operands=None):
    """ops: list of op bytes.  By default each op's source and destination are
    the operands 0 and 1 (device memory, 64 KiB at 0x10000 and 0x20000)."""
    if operand_of is None:
        operand_of = bytes([0, 1] * len(ops))
    if operands is None:
        operands = operand(0x10000, 0x10000) + operand(0x20000, 0x10000)
    b = b"".join(ops)
    return struct.pack("<QI", first, len(b)) + b + struct.pack("<I", len(operand_of)) + operand_of + \
        struct.pack("<I", len(operands)) + operands


def header(batch_id, num_ops, recorded, fmt=FORMAT2, rules=2, outcome=0, stream=0x5000):
    v = dict(format=fmt, rules=rules, batch_id=batch_id, api=0, door=0, outcome=outcome, result=0,
             num_ops=num_ops, ops_recorded=recorded, flags=0, op_list=0x7000, stream=stream, stream_id=7,
             context=0xC0, device=0, capture=0, fail_idx=U64_MAX, driver_ns=1000, caller=0x401000, tid=PID,
             device_count=1, validated=0, findings=0)
    return b"".join(struct.pack("<" + c, v[n]) for n, c in BATCH_FIELDS)


def ev(event_id, payload):
    return struct.pack("<Iii", event_id, PID, PID) + payload


def good_ops(n, base=0):
    return [op(0x10000 + 256 * (base + i), 0x20000 + 256 * (base + i), 256) for i in range(n)]


def malformed():
    """Events for stream 0 and stream 1."""
    s0, s1 = [], []
    # 0: a good 3-op batch, for contrast
    s0.append(ev(0, header(0, 3, 3) + chunk(0, good_ops(3))))
    # 1: ops not a multiple of 112 bytes
    s0.append(ev(0, header(1, 1, 1) + chunk(0, [good_ops(1)[0][:100]], bytes([0, 1]))))
    # 2: operand_of of 3 bytes for 2 ops
    s0.append(ev(0, header(2, 2, 2) + chunk(0, good_ops(2), bytes([0, 1, 0]))))
    # 3: an operand index past the operands
    s0.append(ev(0, header(3, 1, 1) + chunk(0, good_ops(1), bytes([0, 7]))))
    # 4: operands not a multiple of 56 bytes
    s0.append(ev(0, header(4, 1, 1) + chunk(0, good_ops(1), None, operand(0x10000, 16) + b"\0" * 10)))
    # 5: a further chunk starting past num_ops (first = 1000 of a 2-op batch)
    s0.append(ev(0, header(5, 2, 2) + chunk(0, good_ops(1))))
    s1.append(ev(1, struct.pack("<Q", 5) + chunk(1000, good_ops(1))))
    # 6: the same chunk twice
    s0.append(ev(0, header(6, 3, 3) + chunk(0, good_ops(1))))
    s1.append(ev(1, struct.pack("<Q", 6) + chunk(1, good_ops(2, 1))))
    s1.append(ev(1, struct.pack("<Q", 6) + chunk(1, good_ops(2, 1))))
    # 7: overlapping chunks ([0,2) then [1,3))
    s0.append(ev(0, header(7, 3, 3) + chunk(0, good_ops(2))))
    s1.append(ev(1, struct.pack("<Q", 7) + chunk(1, good_ops(2, 1))))
    # 8: ops_recorded > num_ops
    s0.append(ev(0, header(8, 1, 2) + chunk(0, good_ops(2))))
    # 9: a chunk whose batch event never comes
    s1.append(ev(1, struct.pack("<Q", 9) + chunk(0, good_ops(2))))
    # 10: ops_recorded of 2^40: never held in memory
    s0.append(ev(0, header(10, 1 << 40, 1 << 40) + chunk(0, good_ops(2))))
    # 11: a 3-op batch in two chunks, the later chunk in the other stream: fine
    s0.append(ev(0, header(11, 3, 3) + chunk(0, good_ops(2))))
    s1.append(ev(1, struct.pack("<Q", 11) + chunk(2, good_ops(1, 2))))
    # 12: a batch with empty sequences and ops_recorded 2: waits forever (incomplete)
    s0.append(ev(0, header(12, 2, 2) + chunk(0, [])))
    # 13: outcome pending, no batch_end: the process ended inside the driver call
    s0.append(ev(0, header(13, 1, 1, outcome=3) + chunk(0, good_ops(1))))
    return s0, s1


def version(fmt, rules):
    return [ev(0, header(0, 2, 2, fmt, rules) + chunk(0, good_ops(2)))], []


def pitched():
    def operand(ptr, row_length=0, layer_height=0, loc=(0, 0)):
        return struct.pack("<I4xQQQIi", 1, ptr, row_length, layer_height, *loc)
    ops = [operand(0x10000, 512, 4) + operand(0x20000) + struct.pack("<QQQII", 256, 4, 1, 1, 0),
           operand(0x11000) + operand(0x21000, loc=(1, 0)) + struct.pack("<QQQII", 256, 1, 1, 1, 0),
           op(0x12000, 0x22000, 256)]
    return [ev(0, header(0, 3, 3) + chunk(0, ops))], []


def waiting(n):
    s0 = [ev(0, header(i, 128, 128) + chunk(0, good_ops(64))) for i in range(n)]
    s1 = [ev(1, struct.pack("<Q", i) + chunk(64, good_ops(64, 64))) for i in reversed(range(n))]
    return s0, s1


def unread():
    return [ev(0, header(0, 4, 0, stream=0) + chunk(0, [], b"", b""))], []


GPU_FIELDS = [  # the order and types of CBT_EV_GPU_FIELDS
    ("batch_id", "Q"), ("status", "B"), ("start_rel_ns", "q"), ("gpu_ns", "Q"), ("tid", "i"), ("api", "B"),
    ("stream", "Q"), ("stream_id", "Q"), ("device", "i"), ("driver_ns", "Q"), ("ops", "Q"), ("bytes", "Q"),
    ("src_kind", "B"), ("dst_kind", "B"), ("src_device", "i"), ("dst_device", "i"),
]
CTYPE["q"] = "int64_t"
TIMED_METADATA = METADATA.replace(
    "trace {", """typealias integer { size = 64; align = 8; signed = true; } := int64_t;
clock { name = "monotonic"; freq = 1000000000; offset_s = 1764500000; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;
trace {""").replace(
    "event.header := struct { uint32_t id; };",
    # packets with beginning and end times, as LTTng writes them: babeltrace2's
    # trimmer (--begin/--end) needs them (2.0.4's seeks crash without)
    "packet.context := struct { uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end; };\n"
    "    event.header := struct { uint32_t id; uint64_clock_t timestamp; };") + \
    'event { name = "cubatchtrace:gpu_time"; id = 3; stream_id = 0; fields := struct { %s }; };\n' % \
    " ".join("%s _%s;" % (CTYPE[c], n) for n, c in GPU_FIELDS)


def timed(n):
    """Batch i (2 ops of 256 bytes) at (i + 1) ms on thread PID + i % 2,
    stream 0x5000 + i % 2, its call 1000 ns long (driver_ns); its GPU time
    starts 500 ns before the batch event and lasts 250 * (i + 1) ns.  The
    gpu_time events come at (n + 5) ms, in reverse order; then one for a
    batch never made (id 1000, timed) and one not timed (status 1, capturing)."""
    def tev(event_id, ts, tid, payload):
        return struct.pack("<IQii", event_id, ts, PID, tid) + payload

    def gpu(batch_id, status, start_rel, gpu_ns, tid, stream):
        v = dict(batch_id=batch_id, status=status, start_rel_ns=start_rel, gpu_ns=gpu_ns, tid=tid, api=0,
                 stream=stream, stream_id=stream & 0xf, device=0, driver_ns=1000, ops=2, bytes=512, src_kind=1,
                 dst_kind=1, src_device=0, dst_device=0)
        return b"".join(struct.pack("<" + c, v[k]) for k, c in GPU_FIELDS)

    s0, s1 = [], []
    late = (n + 5) * 1000000
    for i in range(n):
        h = bytearray(header(i, 2, 2, stream=0x5000 + i % 2))
        off = struct.calcsize("<" + "".join(c for k, c in BATCH_FIELDS[:BATCH_FIELDS.index(("tid", "i"))]))
        struct.pack_into("<i", h, off, PID + i % 2)
        s0.append(tev(0, (i + 1) * 1000000, PID + i % 2, bytes(h) + chunk(0, good_ops(2, 2 * i))))
    for i in reversed(range(n)):
        start = (i + 1) * 1000000 - 500
        s1.append(tev(3, late, PID + i % 2, gpu(i, 0, start - late, 250 * (i + 1), PID + i % 2, 0x5000 + i % 2)))
    s1.append(tev(3, late, PID, gpu(1000, 0, -100, 50, PID, 0x5000)))
    s1.append(tev(3, late, PID, gpu(n, 1, 0, 0, PID, 0x5000)))
    return (s0, (1000000, max(n, 1) * 1000000)), (s1, (late, late))


def write(out, streams, metadata=METADATA):
    """streams: a list of events each, or (events, (begin, end)) for a packet
    context with those times (TIMED_METADATA)."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "metadata"), "w") as f:
        f.write(metadata)
    for i, events in enumerate(streams):
        with open(os.path.join(out, "stream_%d" % i), "wb") as f:
            f.write(struct.pack("<II", 0xC1FC1FC1, 0))
            if isinstance(events, tuple):
                events, times = events
                f.write(struct.pack("<QQ", *times))
            for e in events:
                f.write(e)


def main():
    out, scenario = sys.argv[1], sys.argv[2]
    if scenario == "malformed":
        write(out, malformed())
    elif scenario == "unread":
        write(out, unread())
    elif scenario == "pitched":
        write(out, pitched())
    elif scenario == "waiting":
        write(out, waiting(int(sys.argv[3])))
    elif scenario == "timed":
        write(out, timed(int(sys.argv[3])), TIMED_METADATA)
    elif scenario == "version":
        write(out, version(int(sys.argv[3]), int(sys.argv[4])))
    else:
        sys.exit("mkbatches.py: unknown scenario %s" % scenario)


main()
