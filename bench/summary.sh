#!/bin/sh
# bench/summary.sh: how fast `cubatchtrace summary` reads a trace, next to
# `babeltrace2 --output-format=dummy` on the same trace, measured in one run.
#
#   bench/summary.sh [OPS...]        (default: 1000000 10000000)
#
# Run from the build directory after `make`.  For each OPS it records a trace
# of tests/tool/cbt-gen --mix OPS (batches of 1 to 1024 ops, several memory
# kinds, two call sites) with `cubatchtrace run` (which reuses or starts a
# session daemon), keeps it under $CBT_BENCH_DIR (default /tmp/cbt-bench) for
# the next run, then reads it with both readers, best of $CBT_BENCH_REPEAT
# (default 3) wall times, and reports max RSS of each.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$(pwd)}
CBT="$build/tools/cubatchtrace"
GEN="$build/tests/tool/cbt-gen"
BT=${BABELTRACE2:-$(command -v babeltrace2 || true)}
dir=${CBT_BENCH_DIR:-/tmp/cbt-bench}
repeat=${CBT_BENCH_REPEAT:-3}
[ -x "$CBT" ] && [ -x "$GEN" ] || { echo "summary.sh: build first (run it from the build directory)" >&2; exit 2; }
[ -n "$BT" ] || { echo "summary.sh: babeltrace2 not found" >&2; exit 2; }
: "${CUBATCHTRACE_SHIM:=$build/src/.libs/libcubatchtrace-tp.so}"; export CUBATCHTRACE_SHIM
[ $# -gt 0 ] || set -- 1000000 10000000
mkdir -p "$dir"

# measure LABEL CMD...: best wall time of $repeat runs and the max RSS (KiB), via getrusage
measure() {
    python3 - "$repeat" "$@" <<'PY'
import os, resource, subprocess, sys, time
n = int(sys.argv[1]); cmd = sys.argv[2:]
best, rss = None, 0
for _ in range(n):
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
        os.execvp(cmd[0], cmd)
    _, st, ru = os.wait4(pid, 0)
    dt = time.monotonic() - t
    if os.waitstatus_to_exitcode(st) != 0:
        print("FAILED %s" % os.waitstatus_to_exitcode(st)); sys.exit(1)
    best = dt if best is None or dt < best else best
    rss = max(rss, ru.ru_maxrss)
print("%.3f %d" % (best, rss))
PY
}

printf '# cubatchtrace summary vs babeltrace2 --output-format=dummy (best of %s; RSS: max resident KiB)\n' "$repeat"
printf '# host: %s, %s CPUs\n' "$(uname -n)" "$(nproc)"
printf '%-10s | %-8s | %-8s | %-10s | %-10s | %-9s | %-9s | %-11s | %s\n' \
    Ops Events "Trace MB" "dummy s" "summary s" "ratio" "dummy RSS" "summary RSS" "summary Mops/s"
for ops in "$@"; do
    t="$dir/mix-$ops"
    if ! [ -f "$t/.complete" ]; then
        rm -rf "$t"
        "$CBT" run -o "$t" -- "$GEN" --mix "$ops" >/dev/null 2>"$dir/run-$ops.log" || { cat "$dir/run-$ops.log" >&2; exit 1; }
        touch "$t/.complete"
    fi
    got=$("$CBT" summary --json "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"])')
    [ "$got" -ge "$ops" ] || { echo "summary.sh: trace $t holds $got ops, expected $ops" >&2; exit 1; }
    mb=$(du -sm "$t" | cut -f1)
    events=$("$BT" -c sink.utils.counter "$t" 2>/dev/null | awk '/Event messages/ {n = $1} END {print n}')
    set -- $(measure "$BT" --output-format=dummy "$t") $(measure "$CBT" summary "$t")
    ratio=$(python3 -c "print('%.2f' % ($3 / $1))")
    mops=$(python3 -c "print('%.2f' % ($ops / $3 / 1e6))")
    printf '%-10s | %-8s | %-8s | %-10s | %-10s | %-9s | %-9s | %-11s | %s\n' \
        "$ops" "${events:-?}" "$mb" "$1" "$3" "${ratio}x" "$2" "$4" "$mops"
done
