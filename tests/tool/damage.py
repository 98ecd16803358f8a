#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Damage copies of a trace and read each with `cubatchtrace summary` and `check`.

    damage.py CUBATCHTRACE TRACE WORKDIR SECONDS FIRST-SEED TIMEOUT MEMORY

Case k (seeds FIRST-SEED, FIRST-SEED+1, ... until SECONDS have passed, every
kind of damage at least once) copies TRACE to WORKDIR, damages the copy with
the kind k selects, seeded with k (so `CBT_FUZZ_SEED=k` replays it), and
runs both commands on it with CUBATCHTRACE_TIMEOUT=TIMEOUT and
CUBATCHTRACE_MAX_MEMORY=MEMORY.  Each run must end by itself (no signal, an
exit status of its command, within TIMEOUT plus a margin), print at most one
line on stderr, nothing on stdout when it fails, and stay within MEMORY.

Prints one line per assertion for the TAP script: "0<TAB>description" (holds)
or "1<TAB>description" (does not), and "#" lines.

    damage.py --make TRACE WORKDIR COUNT FIRST-SEED

only makes the damaged copies, WORKDIR/seed-K for K = FIRST-SEED ... (COUNT
of them, every kind of damage once at least), and prints "K<TAB>kind" for
each: for readers other than the tool (tests/tool/plugin-fuzz.sh).
"""
import os
import random
import resource
import shutil
import subprocess
import sys
import time

make_only = sys.argv[1] == "--make"
if not make_only:
    tool, src, work, seconds, first, timeout, memory = sys.argv[1:8]
    seconds, first, timeout = float(seconds), int(first), float(timeout)
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    # "off": the tool has no memory limit (a sanitizer build), none is checked
    memory_bytes = None if memory == "off" else \
        int(float(memory[:-1]) * units[memory[-1]]) if memory[-1] in units else int(memory)
margin = 10.0  # start-up, a loaded machine
statuses = {"summary": {0, 2}, "check": {0, 1, 2, 3, 4}}


def files(root, want):
    out = []
    for d, _, names in os.walk(root):
        if os.path.basename(d) == "index":
            continue
        out += [os.path.join(d, n) for n in sorted(names) if want(n)]
    return sorted(out)


def streams(root):
    return files(root, lambda n: n != "metadata")


def metadata(root):
    return files(root, lambda n: n == "metadata")


def overwrite(rng, path, spans, span_max):
    data = bytearray(open(path, "rb").read())
    if not data:
        return
    for _ in range(spans):
        at = rng.randrange(len(data))
        n = min(rng.randint(1, span_max), len(data) - at)
        data[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
    open(path, "wb").write(data)


def random_bytes(rng, root):
    """random bytes over the stream files"""
    for p in streams(root):
        overwrite(rng, p, rng.randint(1, 40), 64)


def packet_headers(rng, root):
    """random bytes over the first bytes of packets (headers, contexts)"""
    for p in streams(root):
        data = bytearray(open(p, "rb").read())
        size = 4096
        while size < len(data) and len(data) % (size * 2) == 0 and size < (1 << 20):
            size *= 2
        for start in range(0, len(data), size):
            if rng.random() < 0.3:
                at = start + rng.randrange(min(96, len(data) - start))
                n = min(rng.randint(1, 8), len(data) - at)
                data[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
        open(p, "wb").write(data)


def bit_flips(rng, root):
    """single bits flipped in the stream files"""
    for p in streams(root):
        data = bytearray(open(p, "rb").read())
        for _ in range(rng.randint(1, 64) if data else 0):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        open(p, "wb").write(data)


def truncate_streams(rng, root):
    """stream files truncated at a random length"""
    for p in streams(root):
        if rng.random() < 0.7:
            os.truncate(p, rng.randrange(os.path.getsize(p) + 1))


def truncate_metadata(rng, root):
    """metadata truncated (to half, or at a random length)"""
    for p in metadata(root):
        size = os.path.getsize(p)
        os.truncate(p, size // 2 if rng.random() < 0.5 else rng.randrange(size + 1))


def metadata_bytes(rng, root):
    """random bytes and bit flips in the metadata"""
    for p in metadata(root):
        data = bytearray(open(p, "rb").read())
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data))
            if rng.random() < 0.5:
                data[at] ^= 1 << rng.randrange(8)
            else:
                data[at] = rng.choice(b"{};=:0123456789 \0\xff")
        open(p, "wb").write(data)


kinds = [random_bytes, packet_headers, bit_flips, truncate_streams, truncate_metadata, metadata_bytes]


if make_only:
    src, work, count, first = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    for k in range(first, first + max(count, len(kinds))):
        kind = kinds[k % len(kinds)]
        case = os.path.join(work, "seed-%d" % k)
        shutil.rmtree(case, ignore_errors=True)
        shutil.copytree(src, case)
        kind(random.Random(k), case)
        print("%d\t%s" % (k, kind.__doc__))
    sys.exit(0)


def emit(holds, text):
    print("%d\t%s" % (0 if holds else 1, text), flush=True)


env = dict(os.environ, CUBATCHTRACE_TIMEOUT=str(timeout), CUBATCHTRACE_MAX_MEMORY=memory)
env.pop("CUBATCHTRACE_DEBUG", None)
start = time.monotonic()
k = first
counts = {}
while k < first + len(kinds) or time.monotonic() - start < seconds:
    kind = kinds[k % len(kinds)]
    case = os.path.join(work, "case")
    shutil.rmtree(case, ignore_errors=True)
    shutil.copytree(src, case)
    kind(random.Random(k), case)
    name = "seed %d, %s" % (k, kind.__doc__)
    for cmd in ("summary", "check"):
        t0 = time.monotonic()
        try:
            r = subprocess.run([tool, cmd, case], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout + margin)
            status, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            status, out, err = "hung", e.stdout or b"", e.stderr or b""
        took = time.monotonic() - t0
        lines = err.decode(errors="replace").splitlines()
        counts[(cmd, status)] = counts.get((cmd, status), 0) + 1
        what = "%s: %s" % (name, cmd)
        emit(status in statuses[cmd], "%s ends by itself with a status of its own (got %s)" % (what, status))
        emit(took <= timeout + margin, "%s takes %.1f s, within the time-out" % (what, took))
        emit(len(lines) <= 1, "%s prints at most one line on stderr (%d)" % (what, len(lines)))
        if status == 2:
            emit(len(out) == 0, "%s fails with nothing on stdout" % what)
            emit(len(lines) == 1 and lines[0].startswith("cubatchtrace %s: " % cmd), "%s says why, once" % what)
            print("#   %s" % (lines[0] if lines else "(nothing on stderr)"))
        if len(lines) > 1 or status not in statuses[cmd]:
            for line in lines[:5]:
                print("#   stderr: %s" % line)
        # The limit is on the decoder's data (RLIMIT_DATA); its resident set
        # also holds the code and the stream files it maps: 128 MiB for those.
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        if memory_bytes is not None:
            emit(maxrss <= memory_bytes + (128 << 20), "%s stays within %s of data, 128 MiB more resident (largest so far %d MiB)"
                 % (what, memory, maxrss >> 20))
    k += 1
print("# %d cases in %.1f s; outcomes: %s" % (k - first, time.monotonic() - start,
                                              ", ".join("%s %s: %d" % (c, s, n) for (c, s), n in sorted(
                                                  counts.items(), key=lambda x: (x[0][0], str(x[0][1]))))))
