"""Parse babeltrace2's text output (the `pretty` sink, default options).

One event per line:

    [14:54:37.245709932] (+0.000008533) host cubatchtrace:batch: { cpu_id = 0 }, { vpid = 1, ... }, { batch_id = 0, api = ( "cuMemcpy3DBatchAsync_v2" : container = 0 ), src_type = [ [0] = 1 ], ... }

parse_line() returns (event_name, fields) where fields merges every
`{ ... }` block of the line (packet context, event context, payload) into
one dict.  Values: int for integers (decimal or 0x hex), str for strings and
for enumerations (the label; the integer is kept under "<field>#value"),
list for arrays/sequences, dict for structures.
"""
import re

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


class Trace:
    """The cubatchtrace events of one process (vpid), batches with their ops reassembled."""

    OP_FIELDS = ("src_type", "src_mem", "src_device", "src_addr", "src_row_length", "src_layer_height",
                 "src_lochint_type", "src_lochint_id", "src_x", "src_y", "src_z", "dst_type", "dst_mem", "dst_device",
                 "dst_addr", "dst_row_length", "dst_layer_height", "dst_lochint_type", "dst_lochint_id", "dst_x",
                 "dst_y", "dst_z", "width", "height", "depth", "access_order", "op_flags", "elem_size", "bytes")

    def __init__(self, events, vpid):
        self.vpid = vpid
        mine = [(n, f) for n, f in events if f.get("vpid") == vpid]
        self.batches = {}     # batch_id -> batch fields, with "ops": list of per-op dicts
        self.findings = {}    # batch_id -> [finding fields]
        self.op_events = {}   # batch_id -> [op event fields]
        self.lookups = []
        self.duplicates = []
        chunks = {}
        for name, f in mine:
            if name == "cubatchtrace:batch":
                bid = f["batch_id"]
                if bid in self.batches:
                    self.duplicates.append(bid)
                self.batches[bid] = f
                chunks.setdefault(bid, []).append(f)
            elif name == "cubatchtrace:batch_ops":
                chunks.setdefault(f["batch_id"], []).append(f)
            elif name == "cubatchtrace:finding":
                self.findings.setdefault(f["batch_id"], []).append(f)
            elif name == "cubatchtrace:op":
                self.op_events.setdefault(f["batch_id"], []).append(f)
            elif name == "cubatchtrace:lookup":
                self.lookups.append(f)
        for bid, b in self.batches.items():
            ops = {}
            for c in chunks.get(bid, []):
                first = c.get("ops_first", 0)
                n = len(c.get("width", []))
                for k in range(n):
                    ops[first + k] = {fld: c[fld][k] for fld in self.OP_FIELDS if fld in c}
            b["ops"] = [ops[i] for i in sorted(ops)]

    def errors(self, bid):
        return [f for f in self.findings.get(bid, []) if f.get("severity") == "error"]

    def rules(self, bid, severity=None):
        return [str(f.get("rule")) for f in self.findings.get(bid, []) if severity is None or f.get("severity") == severity]
