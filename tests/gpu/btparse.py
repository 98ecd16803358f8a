# SPDX-License-Identifier: MIT
"""Read cubatchtrace traces for the GPU suite: babeltrace2's text output and `cubatchtrace show`.

babeltrace2's text output (the `pretty` sink, default options) has one event
per line:

    [14:54:37.245709932] (+0.000008533) host cubatchtrace:batch: { cpu_id = 0 }, { vpid = 1, ... }, { format = 2, rules = 2, batch_id = 0, api = ( "cuMemcpy3DBatchAsync_v2" : container = 0 ), ..., ops_first = 0, _ops_length = 112, ops = [ [0] = 1, [1] = 0, ... ], ... }

parse_line() returns (event_name, fields) where fields merges every
`{ ... }` block of the line (packet context, event context, payload) into
one dict.  Values: int for integers (decimal or 0x hex), str for strings and
for enumerations (the label, a str whose .value is the integer),
list for arrays/sequences, dict for structures.

Trace puts the batches of one process back together from the raw events
(include/cubatchtrace/events.h: the ops travel as the bytes of
CUDA_MEMCPY3D_BATCH_OP, their operands as struct cbt_ev_operand) and decodes
every op into the fields the clients print in their manifests.  It reads both
event formats: format 2 (batch, batch_ops: each chunk carries its operands)
and the compact record, format 4 as the shim writes it and format 3 before
it (b, bo, c, co, ca: a packed word and a varint header, the ops or the 1D
copy arrays as passed, and two operand references per op into the writing
thread's dictionary, which the operand and stream events fill; a batch's
refs may repeat the thread's previous single-chunk batch's; format 4 puts
the head words, header and refs in one sequence of words t, and a small
batch's ops or copy arrays there too: b and c, where bs and cs keep them in
sequences of their own).  A 1D batch's copies become ops as the shim
validates them (cbt_copy_op).  Findings do
not come from the trace in observe mode: parse_show() reads them from
`cubatchtrace show`, which validates each batch as it reads it; the shim's
own (inline) findings, written only in strict mode or with
CUBATCHTRACE_REPORT=stderr, are the `cubatchtrace:finding` events.
"""
import re
import struct

_HEAD = re.compile(r'^\[[^\]]*\] \([^)]*\) (?:\S+ )?(\S+): (.*)$')


class ParseError(Exception):
    pass


class _P:
    def __init__(self, s):
        self.s = s
        self.i = 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in ' \t':
            self.i += 1

    def peek(self):
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ''

    def expect(self, c):
        self.ws()
        if not self.s.startswith(c, self.i):
            raise ParseError("expected %r at %d: %r" % (c, self.i, self.s[self.i:self.i + 40]))
        self.i += len(c)

    def ident(self):
        self.ws()
        m = re.compile(r'[A-Za-z_][A-Za-z0-9_]*').match(self.s, self.i)
        if not m:
            raise ParseError("expected a name at %d: %r" % (self.i, self.s[self.i:self.i + 40]))
        self.i = m.end()
        return m.group(0)

    def string(self):
        self.expect('"')
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '\\' and self.i + 1 < len(self.s):
                out.append(self.s[self.i + 1])
                self.i += 2
                continue
            if c == '"':
                self.i += 1
                return ''.join(out)
            out.append(c)
            self.i += 1
        raise ParseError("unterminated string")

    def number(self):
        self.ws()
        m = re.compile(r'[-+]?(0x[0-9A-Fa-f]+|0b[01]+|0[0-7]*|[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)').match(self.s, self.i)
        if not m:
            raise ParseError("expected a value at %d: %r" % (self.i, self.s[self.i:self.i + 40]))
        self.i = m.end()
        t = m.group(0)
        neg = t.startswith('-')
        body = t.lstrip('+-')
        if body.startswith(('0x', '0X')):
            v = int(body, 16)
        elif body.startswith('0b'):
            v = int(body[2:], 2)
        elif '.' in body or 'e' in body or 'E' in body:
            v = float(body)
        elif len(body) > 1 and body.startswith('0'):
            v = int(body, 8)
        else:
            v = int(body)
        return -v if neg else v

    def value(self):
        c = self.peek()
        if c == '{':
            return self.struct()
        if c == '[':
            return self.array()
        if c == '"':
            return self.string()
        if c == '(':
            return self.enum()
        return self.number()

    def enum(self):
        # ( "label" : container = 3 )   or   ( <unknown> : container = 9 )   or   ( { "a", "b" } : container = 3 )
        self.expect('(')
        labels = []
        if self.peek() == '"':
            labels.append(self.string())
        elif self.peek() == '{':
            self.expect('{')
            while self.peek() != '}':
                labels.append(self.string())
                if self.peek() == ',':
                    self.expect(',')
            self.expect('}')
        elif self.peek() == '<':
            j = self.s.index('>', self.i)
            labels.append(self.s[self.i:j + 1])
            self.i = j + 1
        self.expect(':')
        self.expect('container')
        self.expect('=')
        v = self.number()
        self.expect(')')
        return _Enum(labels[0] if len(labels) == 1 else '|'.join(labels), v)

    def array(self):
        self.expect('[')
        out = []
        while self.peek() != ']':
            self.expect('[')
            self.number()
            self.expect(']')
            self.expect('=')
            out.append(self.value())
            if self.peek() == ',':
                self.expect(',')
        self.expect(']')
        return out

    def struct(self):
        self.expect('{')
        out = {}
        while self.peek() != '}':
            k = self.ident()
            self.expect('=')
            out[k] = self.value()
            if self.peek() == ',':
                self.expect(',')
        self.expect('}')
        return out


class _Enum(str):
    """An enumeration's label that also remembers its integer."""

    def __new__(cls, label, value):
        s = str.__new__(cls, label)
        s.value = value
        return s


def parse_line(line):
    """(event_name, fields) or None for a line that is not an event."""
    m = _HEAD.match(line.rstrip('\n'))
    if not m:
        return None
    name, rest = m.group(1), m.group(2)
    p = _P(rest)
    fields = {}
    while p.peek() == '{':
        fields.update(p.struct())
        if p.peek() == ',':
            p.expect(',')
    return name, fields


def parse_text(text):
    """All events of a babeltrace2 text dump: list of (name, fields); unparsable lines are returned apart."""
    events, bad = [], []
    for line in text.splitlines():
        if not line.startswith('['):
            if line.strip():
                bad.append(line)
            continue
        try:
            ev = parse_line(line)
        except (ParseError, ValueError) as e:
            bad.append("%s: %s" % (e, line[:200]))
            continue
        if ev:
            events.append(ev)
        else:
            bad.append(line[:200])
    return events, bad


# ------------------------------------------------------------------ the ops, decoded

OP_SIZE = 112      # CBT_EV_OP_SIZE: sizeof(CUDA_MEMCPY3D_BATCH_OP) in CUDA 13
OPERAND_SIZE = 56  # sizeof(struct cbt_ev_operand)
U64_MAX = (1 << 64) - 1
TYPE_POINTER, TYPE_ARRAY = 1, 2
MEM_ARRAY = 5


def decode_operand(b):
    """struct cbt_ev_operand (56 bytes, little-endian): what the shim learned about one operand."""
    base, size, aw, ah, ad, elem, dev = struct.unpack_from("<QQQQQIi", b, 0)
    return {"alloc_base": base, "alloc_size": size, "array_width": aw, "array_height": ah, "array_depth": ad,
            "elem_size": elem, "device": dev, "kind": b[48]}


def _side(op, off, prefix, info, out):
    """One CUmemcpy3DOperand (40 bytes at off): type at 0, the union at 8."""
    t = struct.unpack_from("<I", op, off)[0]
    out[prefix + "_type"] = t
    out[prefix + "_mem"] = info["kind"]
    out[prefix + "_device"] = info["device"]
    if t == TYPE_ARRAY:
        handle, x, y, z = struct.unpack_from("<QQQQ", op, off + 8)
        out.update({prefix + "_addr": handle, prefix + "_x": x, prefix + "_y": y, prefix + "_z": z})
    else:
        ptr, rl, lh, ht, hid = struct.unpack_from("<QQQIi", op, off + 8)
        out.update({prefix + "_addr": ptr, prefix + "_row_length": rl, prefix + "_layer_height": lh,
                    prefix + "_lochint_type": ht, prefix + "_lochint_id": hid})
    return t


def decode_op(op, src, dst):
    """One op (112 bytes of CUDA_MEMCPY3D_BATCH_OP) with its two operands, as the manifests name the fields;
    elem_size and bytes as the validator counts them (cbt_op_elem_size, cbt_op_bytes)."""
    out = {}
    st = _side(op, 0, "src", src, out)
    dt = _side(op, 40, "dst", dst, out)
    w, h, d, order, flags = struct.unpack_from("<QQQII", op, 80)
    if st == TYPE_POINTER and dt == TYPE_POINTER:
        es = 1
    elif st == TYPE_ARRAY and dt in (TYPE_POINTER, TYPE_ARRAY):
        es = src["elem_size"] if src["kind"] == MEM_ARRAY else 0
    elif st == TYPE_POINTER and dt == TYPE_ARRAY:
        es = dst["elem_size"] if dst["kind"] == MEM_ARRAY else 0
    else:
        es = 0
    out.update({"width": w, "height": h, "depth": d, "access_order": order, "op_flags": flags, "elem_size": es,
                "bytes": min(w * h * d * es, U64_MAX)})
    out["src_info"], out["dst_info"] = src, dst
    return out


def decode_chunk(c):
    """{index in the batch: decoded op} of one batch/batch_ops event; raises ValueError when it does not fit
    the format (the suite reports it)."""
    # ops and operands travel as little-endian 64-bit words, operand_of as one
    # 16-bit value per op (source | destination << 8)
    ops = b"".join(int(v).to_bytes(8, "little") for v in c.get("ops", []))
    operands = b"".join(int(v).to_bytes(8, "little") for v in c.get("operands", []))
    idx = bytes(b for v in c.get("operand_of", []) for b in (int(v) & 0xFF, int(v) >> 8))
    if len(ops) % OP_SIZE or len(operands) % OPERAND_SIZE or len(idx) != 2 * (len(ops) // OP_SIZE):
        raise ValueError("chunk of batch %s: %d op bytes, %d operand_of bytes, %d operand bytes" % (
            c.get("batch_id"), len(ops), len(idx), len(operands)))
    infos = [decode_operand(operands[k:k + OPERAND_SIZE]) for k in range(0, len(operands), OPERAND_SIZE)]
    first = c.get("ops_first", 0)
    out = {}
    for i in range(len(ops) // OP_SIZE):
        a, b = idx[2 * i], idx[2 * i + 1]
        if a >= len(infos) or b >= len(infos):
            raise ValueError("chunk of batch %s: op %d names operand %d/%d of %d" % (
                c.get("batch_id"), first + i, a, b, len(infos)))
        out[first + i] = decode_op(ops[OP_SIZE * i:OP_SIZE * (i + 1)], infos[a], infos[b])
    return out


# ------------------------------------------------------------------ findings

def finding_key(f):
    """(rule, severity, op, other_op, side, value, limit) of a finding, from a `finding` event or a show line;
    op and other_op None for "none" (2^64-1, `-`)."""
    def idx(v):
        if v in (None, "-"):
            return None
        v = int(v)
        return None if v == U64_MAX else v
    return (str(f.get("rule")), str(f.get("severity")), idx(f.get("op")), idx(f.get("other_op")), str(f.get("side")),
            int(f.get("value", 0)), int(f.get("limit", 0)))


# ------------------------------------------------------------------ formats 3 and 4, the compact record

FORMAT_COMPACT = 4       # CBT_EV_FORMAT: the events b, bo, c, co, ca, operand, stream
FORMAT_COMPACT3 = 3      # the same events, b and c with their head and tail fields one by one
CHUNK3D, CHUNK1D = 128, 384  # CBT_EV_CHUNK3D, CBT_EV_CHUNK1D: ops (copies) of a b (c) event
W_VALIDATED, W_SAME_REFS, W_RESULT_ESCAPE = 1 << 14, 1 << 15, 0xFFFF
ATTR_SIZE = 24           # sizeof(CUmemcpyAttributes)
API_NAMES = {0: "cuMemcpy3DBatchAsync_v2", 1: "cuMemcpy3DBatchAsync_v2_ptsz", 2: "cuMemcpy3DBatchAsync",
             3: "cuMemcpy3DBatchAsync_ptsz", 4: "cuMemcpyBatchAsync_v2", 5: "cuMemcpyBatchAsync_v2_ptsz",
             6: "cuMemcpyBatchAsync", 7: "cuMemcpyBatchAsync_ptsz"}
DOOR_NAMES = {0: "symbol", 1: "getprocaddress", 2: "binding"}
OUTCOME_NAMES = {0: "forwarded", 1: "refused", 2: "no_driver", 3: "pending"}
CAPTURE_NAMES = {0: "NONE", 1: "ACTIVE", 2: "INVALIDATED", 255: "UNKNOWN"}
CURESULT_NAMES = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
                  3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 100: "CUDA_ERROR_NO_DEVICE",
                  101: "CUDA_ERROR_INVALID_DEVICE", 201: "CUDA_ERROR_INVALID_CONTEXT",
                  303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", 400: "CUDA_ERROR_INVALID_HANDLE",
                  500: "CUDA_ERROR_NOT_FOUND", 700: "CUDA_ERROR_ILLEGAL_ADDRESS", 800: "CUDA_ERROR_NOT_PERMITTED",
                  801: "CUDA_ERROR_NOT_SUPPORTED", 900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                  901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", 999: "CUDA_ERROR_UNKNOWN"}
UNKNOWN_OPERAND = {"alloc_base": 0, "alloc_size": 0, "array_width": 0, "array_height": 0, "array_depth": 0,
                   "elem_size": 0, "device": -1, "kind": 0}


def _named(names, v):
    """An enumeration value as babeltrace2 prints it: its label, or <unknown>."""
    return _Enum(names.get(v, "<unknown>"), v)


def _s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def varints(seq):
    """The unsigned LEB128 values of a byte sequence (a truncated last value counts as read)."""
    out, v, shift, open_ = [], 0, 0, False
    for b in seq:
        v |= (int(b) & 0x7F) << shift
        shift += 7
        open_ = True
        if not int(b) & 0x80:
            out.append(v)
            v, shift, open_ = 0, 0, False
    if open_:
        out.append(v)
    return out


def _words(seq):
    return b"".join(int(v).to_bytes(8, "little") for v in seq)


# hdr's mask bits (include/cubatchtrace/events.h CBT_HDR_*)
HDR_RECORDED, HDR_NUM_ATTRS, HDR_ATTRS_READ, HDR_FLAGS, HDR_FAIL_IDX, HDR_FINDINGS, HDR_RESULT = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40)


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def hdr_len(t, d1):
    """The bytes of the hdr at the start of t's bytes after its head words (cbt_ev_hdr_len): the mask byte, then the
    varints every batch has (3 for 3D, 7 for 1D) and one per bit of the mask."""
    if not t:
        return 0
    values, i = (7 if d1 else 3) + bin(t[0] & 0x7F).count("1"), 1
    while values and i < len(t):
        if not t[i] & 0x80:
            values -= 1
        i += 1
    return i


def as_format3(f, d1):
    """A format-4 b, bs, c or cs event's fields as format 3 named them: t (64-bit words) split into id, w,
    driver_ns and caller (its head words), hdr, then what b and c carry there (the ops; the attributes,
    their attr_idxs and the dsts, srcs and sizes) or cs its attr_idxs, then refs.  Format 3's events come
    back unchanged."""
    if "t" not in f or "hdr" in f:
        return f
    g = dict(f)
    t = b"".join(int(v).to_bytes(8, "little") for v in f["t"])
    g["id"], g["w"], g["driver_ns"], g["caller"] = struct.unpack_from("<4Q", t.ljust(32, b"\0"), 0)
    t = t[32:]
    n = hdr_len(t, d1)
    g["hdr"] = list(t[:n])
    g["format"] = FORMAT_COMPACT
    head = compact_header(g, d1)
    at = [(n + 7) // 8 * 8]

    def take(count, size):
        k = min(count, max(0, len(t) - at[0]) // size)
        out = t[at[0]:at[0] + k * size]
        at[0] += k * size
        return out

    def words(b):
        return [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b), 8)]

    inline = "dsts" not in f if d1 else "ops" not in f
    if inline and d1:
        attrs = take(head["attrs_recorded"], ATTR_SIZE)
        g["attrs"] = words(attrs)
        g["attr_idxs"] = words(take(len(attrs) // ATTR_SIZE, 8))
        g["dsts"] = words(take(head["ops_recorded"], 8))
        g["srcs"] = words(take(len(g["dsts"]), 8))
        g["sizes"] = words(take(len(g["dsts"]), 8))
    elif inline:
        g["ops"] = words(take(head["ops_recorded"], OP_SIZE))
    elif d1:
        g["attr_idxs"] = words(take(len(f.get("attrs", [])) // 3, 8))
    nops = len(g.get("dsts", [])) if d1 else len(g.get("ops", [])) // (OP_SIZE // 8)
    rest = t[at[0]:]
    g["refs"] = [int.from_bytes(rest[2 * k:2 * k + 2], "little") for k in range(2 * nops)] \
        if len(rest) >= 4 * nops else []
    return g


def compact_header(f, d1):
    """The batch fields of a b (d1 False) or c (d1 True) event, format 2's names: w unpacked, hdr decoded
    (a mask byte, then varints: the values every batch has, then those the mask says are there)."""
    w, bid = f["w"], f["id"]
    raw = [int(x) for x in f.get("hdr", [])]
    mask = raw[0] if raw else 0
    hv = varints(raw[1:])
    it = iter(hv + [0] * 32)
    vals = {"num_ops": next(it), "op_list": next(it), "stream_index": next(it)}
    if d1:
        for k in ("srcs", "sizes", "attrs", "attrs_idxs"):
            vals[k] = (vals["op_list"] + unzigzag(next(it))) & U64_MAX
    vals["ops_recorded"] = next(it) if mask & HDR_RECORDED else vals["num_ops"]
    if d1:
        vals["num_attrs"] = next(it) if mask & HDR_NUM_ATTRS else 1
        vals["attrs_recorded"] = next(it) if mask & HDR_ATTRS_READ else vals["num_attrs"]
        vals["abi"] = next(it) if mask & HDR_FLAGS else 0
        vals["flags"] = 0
    else:
        vals["flags"] = next(it) if mask & HDR_FLAGS else 0
    fail_idx = next(it) if mask & HDR_FAIL_IDX else U64_MAX
    vals["findings"] = next(it) if mask & HDR_FINDINGS else 0
    result = w >> 16 & 0xFFFF
    if mask & HDR_RESULT:
        result = next(it)
    cap = w >> 11 & 7
    b = dict(vals)
    b.update({
        "format": f.get("format", FORMAT_COMPACT3), "batch_id": bid, "image_tag": bid >> 32,
        "api": _named(API_NAMES, w & 0xF), "door": _named(DOOR_NAMES, w >> 4 & 0xF),
        "outcome": _named(OUTCOME_NAMES, w >> 8 & 7), "result": _named(CURESULT_NAMES, result),
        "capture": _named(CAPTURE_NAMES, cap if cap <= 2 else 255),
        "validated": 1 if w & W_VALIDATED else 0, "same_refs": 1 if w & W_SAME_REFS else 0,
        "tid": _s32(w >> 32), "fail_idx": fail_idx & U64_MAX, "device_count": -1, "rules": 0,
        "driver_ns": f.get("driver_ns"), "caller": f.get("caller"),
        "stream": 0, "stream_id": 0, "context": 0, "device": -1,
    })
    for k in ("vpid", "vtid", "procname"):
        if k in f:
            b[k] = f[k]
    return b


def copy_op(dst, src, size, attr):
    """The op a 1D copy is validated as (cbt_copy_op): POINTER to POINTER, extent {size, 1, 1}, the
    attribute's srcAccessOrder, flags and locHints (attr: 24 bytes of CUmemcpyAttributes, or zeros)."""
    order, sht, shid, dht, dhid, flags = struct.unpack_from("<IIiIiI", attr, 0)
    op = bytearray(OP_SIZE)
    struct.pack_into("<IxxxxQQQIi", op, 0, TYPE_POINTER, src, 0, 0, sht, shid)
    struct.pack_into("<IxxxxQQQIi", op, 40, TYPE_POINTER, dst, 0, 0, dht, dhid)
    struct.pack_into("<QQQII", op, 80, size, 1, 1, order, flags)
    return bytes(op)


class _Compact:
    """The compact record read in event order: the per-thread dictionaries (key = image tag << 32 | tid), the refs of
    each thread's previous single-chunk batch, the 1D attributes, and each batch's ops decoded as its
    events come (a dictionary entry may later be reused for another operand)."""

    def __init__(self, trace):
        self.tr = trace
        self.operands = {}   # key -> {index: decoded operand}
        self.streams = {}    # key -> {index: (handle, stream_id, context, device, device_count, rules)}
        self.prev = {}       # key -> refs of the previous single-chunk batch (list of u16)
        self.ca = {}         # full id -> {k: (attribute bytes, attrsIdxs[k])}, from ca events
        self.of = {}         # full id -> (key, 1D?, the batch dict, its attributes)

    def operand(self, f):
        info = _words(f.get("info", []))
        if len(info) != OPERAND_SIZE:
            self.tr.problems.append("operand event with %d bytes of info" % len(info))
            return
        self.operands.setdefault(f["key"], {})[f["index"]] = decode_operand(info)

    def stream(self, f):
        self.streams.setdefault(f["key"], {})[f["index"]] = (f["handle"], f["stream_id"], f["context"], f["device"],
                                                            f["device_count"], f["rules"])

    def attrs(self, f):
        got = self.ca.setdefault(f["id"], {})
        self._attrs_into(got, f, f.get("first", 0))

    def _attrs_into(self, got, f, first):
        words = _words(f.get("attrs", []))
        idxs = f.get("attr_idxs", [])
        if len(words) != ATTR_SIZE * len(idxs):
            self.tr.problems.append("batch %d: %d attribute bytes for %d attrsIdxs" % (
                f["id"] & 0xFFFFFFFF, len(words), len(idxs)))
        for k in range(min(len(idxs), len(words) // ATTR_SIZE)):
            got[first + k] = (words[ATTR_SIZE * k:ATTR_SIZE * (k + 1)], int(idxs[k]))

    def _ops(self, key, bid, f, d1, first, refs, attrs):
        """{index: decoded op} of the event's ops (or copies) [first, first + n)."""
        if d1:
            dsts, srcs, sizes = f.get("dsts", []), f.get("srcs", []), f.get("sizes", [])
            if not len(dsts) == len(srcs) == len(sizes):
                self.tr.problems.append("batch %d: %d dsts, %d srcs, %d sizes" % (bid, len(dsts), len(srcs),
                                                                                 len(sizes)))
                return {}
            n = len(dsts)
            ks = sorted(attrs)
            raw = []
            for i in range(n):
                at = first + i
                a = 0  # the attribute of copy `at`: the last k whose attrsIdxs[k] <= at
                while a + 1 < len(ks) and attrs[ks[a + 1]][1] <= at:
                    a += 1
                attr = attrs[ks[a]][0] if ks else bytes(ATTR_SIZE)
                raw.append(copy_op(int(dsts[i]), int(srcs[i]), int(sizes[i]), attr))
        else:
            ops = _words(f.get("ops", []))
            if len(ops) % OP_SIZE:
                self.tr.problems.append("batch %d: %d op bytes, not whole ops" % (bid, len(ops)))
                return {}
            n = len(ops) // OP_SIZE
            raw = [ops[OP_SIZE * i:OP_SIZE * (i + 1)] for i in range(n)]
        if refs is not None and len(refs) != 2 * n:
            self.tr.problems.append("batch %d: %d refs for %d ops at %d" % (bid, len(refs), n, first))
            refs = None
        dict_ = self.operands.get(key, {})
        out = {}
        for i in range(n):
            src = dict_.get(refs[2 * i], UNKNOWN_OPERAND) if refs is not None else UNKNOWN_OPERAND
            dst = dict_.get(refs[2 * i + 1], UNKNOWN_OPERAND) if refs is not None else UNKNOWN_OPERAND
            out[first + i] = decode_op(raw[i], src, dst)
        return out

    def batch(self, f, d1):
        f = as_format3(f, d1)
        b = compact_header(f, d1)
        fid, bid = f["id"], f["id"] & 0xFFFFFFFF
        key = (fid & ~0xFFFFFFFF) | (f["w"] >> 32 & 0xFFFFFFFF)
        s = self.streams.get(key, {}).get(b["stream_index"])
        if s:
            b["stream"], b["stream_id"], b["context"], b["device"], b["device_count"], b["rules"] = s
        n = len(f.get("dsts", [])) if d1 else len(f.get("ops", [])) // (OP_SIZE // 8)
        refs = [int(v) for v in f.get("refs", [])]
        recorded, chunk = b["ops_recorded"], CHUNK1D if d1 else CHUNK3D
        if b["same_refs"]:
            refs = self.prev.get(key)
            if refs is None or len(refs) != 2 * n:
                self.tr.problems.append("batch %d: its refs repeat the thread's previous single-chunk batch's, "
                                        "which had %s" % (bid, "none" if refs is None else len(refs) // 2))
                refs = None
        elif refs and len(refs) == 2 * n and 0 < recorded <= chunk:
            self.prev[key] = refs
        elif not refs and n:
            refs = None  # operands not recorded: unknown memory
        attrs = {}
        if d1:
            if f.get("attr_idxs"):
                self._attrs_into(attrs, f, 0)
            elif b["attrs_recorded"]:
                attrs = self.ca.pop(fid, {})
            if len(attrs) != b["attrs_recorded"] or sorted(attrs) != list(range(len(attrs))):
                self.tr.problems.append("batch %d: %d attributes recorded, %d in the trace" % (
                    bid, b["attrs_recorded"], len(attrs)))
            b["attr_list"] = [{"k": k, "idx": attrs[k][1], "bytes": attrs[k][0]} for k in sorted(attrs)]
        self.of[fid] = (key, d1, attrs)
        return b, self._ops(key, bid, f, d1, 0, refs, attrs)

    def chunk(self, f, d1):
        fid, bid = f["id"], f["id"] & 0xFFFFFFFF
        if fid not in self.of or self.of[fid][1] != d1:
            self.tr.problems.append("batch %d: a further chunk without its batch event" % bid)
            return bid, {}
        key, _, attrs = self.of[fid]
        refs = [int(v) for v in f.get("refs", [])] or None
        return bid, self._ops(key, bid, f, d1, f.get("first", 0), refs, attrs)


class Trace:
    """The cubatchtrace events of one process (vpid), batches with their ops reassembled and decoded.

    Both formats: format 2 (batch, batch_ops: named fields, each chunk with its operands) and formats 3 and 4 (the
    compact record: b, bo, c, co, ca with the per-thread operand and stream dictionaries).

    batches:  batch_id -> the batch fields (those of batch_end, when one came, replace the header's), with
              "ops": the decoded ops in index order (a 1D batch's copies as ops) and "ended": whether a
              batch_end came
    inline:   batch_id -> [finding event fields]: the shim's own findings (strict mode, stderr report)
    findings: batch_id -> [finding dicts]: the reader's, from `cubatchtrace show` (attach_show), else empty
    """

    END_FIELDS = ("outcome", "result", "fail_idx", "driver_ns", "stream_id", "context", "device", "capture")

    def __init__(self, events, vpid):
        self.vpid = vpid
        mine = [(n, f) for n, f in events if f.get("vpid") == vpid]
        self.batches = {}
        self.inline = {}
        self.findings = {}
        self.show = None
        self.lookups = []
        self.duplicates = []
        self.problems = []   # chunks that do not fit the format, ops in two chunks
        chunks, ends, decoded = {}, {}, {}
        compact = _Compact(self)

        def new_batch(bid, f):
            if bid in self.batches:
                self.duplicates.append(bid)
            self.batches[bid] = f

        def add_ops(bid, got):
            ops = decoded.setdefault(bid, {})
            for i in got:
                if i in ops:
                    self.problems.append("batch %d: op %d in two chunks" % (bid, i))
            ops.update(got)

        for name, f in mine:
            if "batch_id" in f:  # its number within the process image (the high 32 bits tag the image)
                f["batch_id"] &= 0xffffffff
            ev = name.split(":", 1)[-1]
            if name == "cubatchtrace:batch":
                new_batch(f["batch_id"], f)
                chunks.setdefault(f["batch_id"], []).append(f)
            elif name == "cubatchtrace:batch_ops":
                chunks.setdefault(f["batch_id"], []).append(f)
            elif name.startswith("cubatchtrace:") and ev in ("b", "bs", "c", "cs"):
                try:
                    b, got = compact.batch(f, ev in ("c", "cs"))
                except (KeyError, TypeError, IndexError, struct.error) as e:
                    self.problems.append("%s event of batch %s: %s" % (ev, f.get("id"), e))
                    continue
                b["batch_id"] &= 0xffffffff
                new_batch(b["batch_id"], b)
                add_ops(b["batch_id"], got)
            elif name.startswith("cubatchtrace:") and ev in ("bo", "co"):
                try:
                    bid, got = compact.chunk(f, ev == "co")
                except (KeyError, TypeError, IndexError, struct.error) as e:
                    self.problems.append("%s event of batch %s: %s" % (ev, f.get("id"), e))
                    continue
                add_ops(bid, got)
            elif name == "cubatchtrace:ca":
                compact.attrs(f)
            elif name == "cubatchtrace:operand":
                compact.operand(f)
            elif name == "cubatchtrace:stream":
                compact.stream(f)
            elif name == "cubatchtrace:batch_end":
                ends[f["batch_id"]] = f
            elif name == "cubatchtrace:finding":
                self.inline.setdefault(f["batch_id"], []).append(f)
            elif name == "cubatchtrace:lookup":
                self.lookups.append(f)
        for bid, cs in chunks.items():
            for c in cs:
                try:
                    add_ops(bid, decode_chunk(c))
                except ValueError as e:
                    self.problems.append(str(e))
        for bid in set(decoded) - set(self.batches):
            self.problems.append("ops of batch %d without its batch event" % bid)
        for bid, b in self.batches.items():
            ops = decoded.get(bid, {})
            b["ops"] = [ops[i] for i in sorted(ops)]
            if sorted(ops) != list(range(len(ops))):
                self.problems.append("batch %d: ops %s recorded, not 0..%d" % (bid, sorted(ops)[:8], len(ops) - 1))
            b["ended"] = bid in ends
            if bid in ends:
                b["pending_outcome"] = b.get("outcome")
                for k in self.END_FIELDS:
                    if k in ends[bid]:
                        b[k] = ends[bid][k]
        for bid in set(ends) - set(self.batches):
            self.problems.append("batch_end of batch %d without its batch event" % bid)

    def attach_show(self, show):
        """Take the reader's findings (and its view of each batch) from parse_show() of this vpid."""
        self.show = show
        self.findings = {}
        for bid, fs in show["findings"].items():
            for f in fs:
                t = dict(f)
                for k in ("op", "other_op"):
                    t[k] = None if f.get(k, "-") == "-" else int(f[k])
                for k in ("value", "limit"):
                    t[k] = int(str(f.get(k, 0)), 0)  # hexadecimal for addresses, handles, flags
                self.findings.setdefault(bid, []).append(t)

    def errors(self, bid):
        return [f for f in self.findings.get(bid, []) if f.get("severity") == "error"]

    def rules(self, bid, severity=None):
        return [str(f.get("rule")) for f in self.findings.get(bid, []) if severity is None or f.get("severity") == severity]

    def inline_errors(self, bid):
        return [f for f in self.inline.get(bid, []) if f.get("severity") == "error"]

    def inline_keys(self, bid):
        return sorted(finding_key(f) for f in self.inline.get(bid, []))

    def read_keys(self, bid):
        return sorted(finding_key(f) for f in self.findings.get(bid, []))


# ------------------------------------------------------------------ cubatchtrace show

SHOW_FIELD = re.compile(r'\s*(?:(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))|\S+)')


def parse_show(text, vpid=None):
    """`cubatchtrace show --records` output: {"batches": {id: fields}, "ops": {id: {i: fields}}, "attrs": {id: {k:
    fields}} (1D batches), "findings": {id: [fields]}, "inline_only": {id: [fields]}, "bad": [unparsable lines]};
    values are strings (key=value; a finding's words and fix are quoted: key="...", a " or \\ inside escaped)."""
    out = {"batches": {}, "ops": {}, "attrs": {}, "findings": {}, "inline_only": {}, "bad": []}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split(" ", 1)
        kind, kv = words[0], {}
        try:
            rest = words[1] if len(words) > 1 else ""
            for m in SHOW_FIELD.finditer(rest):
                if m.group(0).strip():
                    if m.group(1) is None:
                        raise ValueError(m.group(0))
                    kv[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else m.group(3)
            if vpid is not None and int(kv.get("vpid", "-1")) != vpid:
                continue
            bid = int(kv["id"])
        except (ValueError, KeyError):
            out["bad"].append(line[:200])
            continue
        if kind == "batch":
            out["batches"][bid] = kv
        elif kind == "op":
            out["ops"].setdefault(bid, {})[int(kv["i"])] = kv
        elif kind == "attr":
            out["attrs"].setdefault(bid, {})[int(kv["k"])] = kv
        elif kind == "finding":
            out["findings"].setdefault(bid, []).append(kv)
        elif kind == "inline_finding":
            out["inline_only"].setdefault(bid, []).append(kv)
        else:
            out["bad"].append(line[:200])
    return out


MEMKIND_NAMES = {0: "unknown", 1: "device", 2: "host_pinned", 3: "host_pageable", 4: "managed", 5: "array",
                 6: "unmapped"}
TYPE_NAMES = {0: "INVALID", 1: "POINTER", 2: "ARRAY"}


def show_op_mismatches(op, sop):
    """Differences between an op decoded here and the tool's `op` line for it (an independent decoder)."""
    diffs = []

    def want_operand(p):
        t = op[p + "_type"]
        s = "%s:%s:%d:0x%x" % (TYPE_NAMES.get(t, str(t)), MEMKIND_NAMES.get(op[p + "_mem"], str(op[p + "_mem"])),
                               op[p + "_device"], op[p + "_addr"])
        if t == TYPE_ARRAY:
            s += "+%d,%d,%d" % (op[p + "_x"], op[p + "_y"], op[p + "_z"])
        return s

    for p in ("src", "dst"):
        if sop.get(p) != want_operand(p):
            diffs.append("%s %s, decoded %s" % (p, sop.get(p), want_operand(p)))
        if op[p + "_type"] == TYPE_POINTER:
            for key, mine in (("_rowLength", "_row_length"), ("_layerHeight", "_layer_height")):
                if sop.get(p + key) != str(op[p + mine]):
                    diffs.append("%s%s %s, decoded %s" % (p, key, sop.get(p + key), op[p + mine]))
    ext = "%dx%dx%d" % (op["width"], op["height"], op["depth"])
    if sop.get("extent") != ext:
        diffs.append("extent %s, decoded %s" % (sop.get("extent"), ext))
    if sop.get("bytes") != str(op["bytes"]):
        diffs.append("bytes %s, decoded %s" % (sop.get("bytes"), op["bytes"]))
    if sop.get("flags") != "0x%x" % op["op_flags"]:
        diffs.append("flags %s, decoded 0x%x" % (sop.get("flags"), op["op_flags"]))
    return diffs
