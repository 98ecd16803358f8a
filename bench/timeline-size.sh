#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/timeline-size.sh: how large `cubatchtrace timeline` output grows, in
# bytes per batch and per event, on a handmade trace of N GPU-timed batches
# (tests/tool/mkbatches.py timed N: two threads, two streams, GPU times read
# back late, one finding per batch of the handmade kind).  docs/timeline.md
# and docs/PERFORMANCE.md (bench/report) quote this output.
#
#   bench/timeline-size.sh [N]    (default 20000; run from the build directory)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$(pwd)}
CBT="$build/tools/cubatchtrace"
n=${1:-20000}
[ -x "$CBT" ] || { echo "timeline-size.sh: build first (run it from the build directory)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$top/tests/tool/mkbatches.py" "$tmp/trace" timed "$n"
"$CBT" timeline -o "$tmp/t.json" "$tmp/trace" 2>/dev/null
python3 - "$tmp/t.json" "$n" <<'PY'
import collections, os, sys
path, n = sys.argv[1], int(sys.argv[2])
lens = collections.defaultdict(list)
for line in open(path):  # one event per line, as the tool writes them
    if not line.startswith('{"ph":'):
        continue
    ph = line[7]
    kind = {"M": "metadata", "s": "flow start", "f": "flow finish", "i": "finding"}.get(ph, "call")
    if kind == "call" and '"GB/s"' in line:
        kind = "GPU span"
    lens[kind].append(len(line))
size = os.path.getsize(path)
per = sum(sum(lens[k]) for k in ("call", "GPU span", "flow start", "flow finish")) // n
print("%d GPU-timed batches: a file of %d bytes; per batch %d bytes for its call, GPU span and flow, "
      "plus %d per finding" % (n, size, per, sum(lens["finding"]) // max(1, len(lens["finding"]))))
for k in ("call", "GPU span", "flow start", "flow finish", "finding", "metadata"):
    if lens[k]:
        print("  %-12s %7d events, %4d bytes each on average" % (k, len(lens[k]), sum(lens[k]) // len(lens[k])))
PY
