#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/parallel.sh: how `cubatchtrace summary` scales with the threads that
# read trace directories (--jobs), on many traces of one job.
#
#   bench/parallel.sh [TRACES [OPS]]      (default: 64 1000000)
#
# Run from the build directory after `make`.  It records TRACES processes of
# tests/tool/cbt-gen --mix OPS in one session with per-process buffers (one
# trace directory each), two generators at a time, keeps them under
# $CBT_BENCH_DIR (default /tmp/cbt-bench) for the next run (made again when
# the generator or the event format changed), and checks them once: TRACES
# processes of exactly OPS ops each, nothing discarded.  Then, for J = 1 up
# to the CPUs this process may use, it reads them all with `summary --jobs J`
# (best wall time of $CBT_BENCH_REPEAT, default 1), with the peak RSS and the
# CPU time of the reading process, and compares the output with J = 1's (it
# must be the same).  The goal: at J threads, at least 0.7 x J times as fast
# as one thread (`ok`; `BELOW` otherwise); the peak RSS of one thread reading
# one of the traces is printed for comparison.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$(pwd)}
CBT="$build/tools/cubatchtrace"
GEN="$build/tests/tool/cbt-gen"
LTTNG=${LTTNG:-$(command -v lttng || true)}
SESSIOND=${LTTNG_SESSIOND:-$(command -v lttng-sessiond || true)}
dir=${CBT_BENCH_DIR:-/tmp/cbt-bench}
repeat=${CBT_BENCH_REPEAT:-1}
ntraces=${1:-64}
ops=${2:-1000000}
[ -x "$CBT" ] && [ -x "$GEN" ] || { echo "parallel.sh: build first (run it from the build directory)" >&2; exit 2; }
[ -n "$LTTNG" ] && [ -n "$SESSIOND" ] || { echo "parallel.sh: lttng-tools not found" >&2; exit 2; }
cpus=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
mkdir -p "$dir"

format=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top/include/cubatchtrace/events.h")
t="$dir/parallel-f$format-$ntraces-$ops"
if ! [ -f "$t.complete" ] || [ "$GEN" -nt "$t.complete" ]; then
    rm -rf "$t" "$t.complete"
    # a session daemon: the one running, else one of our own, stopped at the end
    started=""
    if [ "$(id -u)" = 0 ]; then rundir=/var/run/lttng; else
        LTTNG_HOME=$dir/home; export LTTNG_HOME; mkdir -p "$LTTNG_HOME"; rundir=$LTTNG_HOME/.lttng
    fi
    if ! { [ -f "$rundir/lttng-sessiond.pid" ] && kill -0 "$(cat "$rundir/lttng-sessiond.pid")" 2>/dev/null; }; then
        "$SESSIOND" --daemonize --no-kernel >/dev/null 2>&1 </dev/null
        i=0
        until [ -f "$rundir/lttng-sessiond.pid" ] && kill -0 "$(cat "$rundir/lttng-sessiond.pid")" 2>/dev/null; do
            i=$((i + 1)); [ $i -gt 100 ] && { echo "parallel.sh: lttng-sessiond did not start" >&2; exit 1; }
            sleep 0.1
        done
        started=$(cat "$rundir/lttng-sessiond.pid")
    fi
    s="cbt-parallel-$$"
    "$LTTNG" --no-sessiond create "$s" --output="$t" >/dev/null
    "$LTTNG" --no-sessiond enable-channel -u -s "$s" --buffers-pid --blocking-timeout=inf --subbuf-size=1M --num-subbuf=8 ch >/dev/null
    "$LTTNG" --no-sessiond enable-event -u -s "$s" -c ch 'cubatchtrace:*' >/dev/null
    "$LTTNG" --no-sessiond add-context -u -s "$s" -c ch -t vpid -t vtid -t procname >/dev/null
    "$LTTNG" --no-sessiond start "$s" >/dev/null
    i=0
    while [ $i -lt "$ntraces" ]; do
        LTTNG_UST_ALLOW_BLOCKING=1 "$GEN" --mix "$ops" >/dev/null &
        a=$!
        b=""
        if [ $((i + 1)) -lt "$ntraces" ]; then
            LTTNG_UST_ALLOW_BLOCKING=1 "$GEN" --mix "$ops" >/dev/null &
            b=$!
        fi
        wait $a
        [ -z "$b" ] || wait $b
        i=$((i + 2))
    done
    "$LTTNG" --no-sessiond stop "$s" >/dev/null
    "$LTTNG" --no-sessiond destroy "$s" >/dev/null
    [ -z "$started" ] || kill "$started"
    # the session recorded every traced process of the user: the directories
    # of other programs are dropped (said on stderr)
    for d in "$t"/ust/pid/*; do
        case ${d##*/} in
        cbt-gen-*) ;;
        *) echo "parallel.sh: dropped ${d##*/}: another program's process" >&2; rm -rf "$d" ;;
        esac
    done
    # TRACES processes of exactly OPS ops, nothing discarded
    "$CBT" summary --json "$t" | python3 -c 'import json, sys
d = json.load(sys.stdin); n, ops = int(sys.argv[1]), int(sys.argv[2])
mine = [p for p in d["by_process_rank"] if p["procname"] == "cbt-gen"]
ok = len(mine) == n and all(p["ops"] == ops for p in mine) and d["discarded_events"] == 0 and d["processes"] == n
sys.exit(0 if ok else "parallel.sh: %d generator processes (want %d), ops %s, %d discarded, %d processes" %
         (len(mine), n, sorted(set(p["ops"] for p in mine)), d["discarded_events"], d["processes"]))' "$ntraces" "$ops"
    touch "$t.complete"
fi
ndirs=$(find "$t" -name metadata | wc -l)
one=$(dirname "$(find "$t" -name metadata | sort | head -n 1)")

# measure CMD...: best wall time of $repeat runs, the max RSS (KiB) and the
# CPU time (user + system s) of the best run, via wait4's rusage; the output
# of the last run in $out
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT
measure() {
    python3 - "$repeat" "$out" "$@" <<'PY'
import os, sys, time
n = int(sys.argv[1]); out = sys.argv[2]; cmd = sys.argv[3:]
best = None
for _ in range(n):
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.dup2(fd, 1)
        os.execvp(cmd[0], cmd)
    _, st, ru = os.wait4(pid, 0)
    dt = time.monotonic() - t
    if os.waitstatus_to_exitcode(st) != 0:
        print("FAILED %s" % os.waitstatus_to_exitcode(st)); sys.exit(1)
    if best is None or dt < best[0]:
        best = (dt, ru.ru_maxrss, ru.ru_utime + ru.ru_stime)
print("%.3f %d %.3f" % best)
PY
}

printf '# cubatchtrace summary --jobs J over %s trace directories of %s ops each (%s MB), best of %s\n' \
    "$ndirs" "$ops" "$(du -sm "$t" | cut -f1)" "$repeat"
printf '# host: %s, %s CPUs usable; load average before: %s\n' "$(uname -n)" "$cpus" "$(cut -d' ' -f1-3 /proc/loadavg)"
set -- $(measure "$CBT" summary --jobs 1 "$one")
printf '# one trace directory on one thread: %s s, peak RSS %s KiB\n' "$1" "$2"
printf '%-4s | %-9s | %-9s | %-8s | %-8s | %-9s | %-10s | %s\n' J "wall s" "CPU s" speedup goal verdict "peak RSS" "same output as J=1"
j=1 t1=""
while [ $j -le "$cpus" ]; do
    set -- $(measure "$CBT" summary --json --jobs $j "$t")
    [ "$1" != FAILED ] || { echo "parallel.sh: summary --jobs $j failed" >&2; exit 1; }
    if [ -z "$t1" ]; then t1=$1; cp "$out" "$out.1"; fi
    same=no
    cmp -s "$out" "$out.1" && same=yes
    set -- $(python3 -c "import sys; t1, tj, j = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
s = t1 / tj; print('%.2f %.2f %s' % (s, 0.7 * j, 'ok' if s >= 0.7 * j else 'BELOW'))" "$t1" "$1" "$j") "$@"
    printf '%-4s | %-9s | %-9s | %-8s | %-8s | %-9s | %-10s | %s\n' "$j" "$4" "$6" "$1" "$2" "$3" "$5" "$same"
    j=$((j + 1))
done
printf '# load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
