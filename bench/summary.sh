#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/summary.sh: how fast `cubatchtrace summary` reads a trace, next to
# `babeltrace2 --output-format=dummy` on the same trace, measured in one run.
#
#   bench/summary.sh [--format F] [POINT...]   (default: 4000b 1000000 10000000)
#
# Run from the build directory after `make`.  Each POINT is a trace the
# generator tests/tool/cbt-gen writes in the shim's event format (CBT_EV_FORMAT,
# the compact record), by the shim's own writer (--format 2: the named
# fields of format 2):
#   OPS    cbt-gen --mix OPS: batches of 1 to 1024 ops, four pairs of memory
#          kinds, 1D and 2D extents, two call sites, an overlapping pair
#          every 32nd batch, OPS ops in all
#   Nb     cbt-gen --small N: N small batches of 1 to 8 ops (2.6 on
#          average), as real callers make them; in the shim's format half of them 1D
#          batches (cuMemcpyBatchAsync, mostly one copy), half 3D
# It records it as `cubatchtrace run` does (its events, contexts and
# channel), but with per-process buffers, keeping only the generator's
# directory: the session records every traced process of the user, and
# another program's events (of another build's catalogue, even) stay out.
# The session daemon running is used, else one is started and stopped.  The
# trace is kept under $CBT_BENCH_DIR (default /tmp/cbt-bench) for the next
# run (made again when the generator changed), then read with both
# readers, best of $CBT_BENCH_REPEAT (default 3; 5 times as many for an Nb
# point, which reads in tens of ms) wall times, and reports the
# peak RSS and the least CPU time of each (the wall time of a busy machine
# says little).  A new trace is first checked: the generator's process
# holds exactly OPS ops (N batches), no event was discarded.  `cubatchtrace
# summary` validates every batch as it reads it; the goal (issue 21) is at
# most 1.3x babeltrace2's time on a trace of 4,000 batches and 1.2x from
# 1 M ops, RSS flat from 1 M to 10 M ops.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$(pwd)}
CBT="$build/tools/cubatchtrace"
GEN="$build/tests/tool/cbt-gen"
BT=${BABELTRACE2:-$(command -v babeltrace2 || true)}
LTTNG=${LTTNG:-$(command -v lttng || true)}
SESSIOND=${LTTNG_SESSIOND:-$(command -v lttng-sessiond || true)}
dir=${CBT_BENCH_DIR:-/tmp/cbt-bench}
repeat=${CBT_BENCH_REPEAT:-3}
[ -x "$CBT" ] && [ -x "$GEN" ] || { echo "summary.sh: build first (run it from the build directory)" >&2; exit 2; }
[ -n "$BT" ] || { echo "summary.sh: babeltrace2 not found" >&2; exit 2; }
[ -n "$LTTNG" ] && [ -n "$SESSIOND" ] || { echo "summary.sh: lttng-tools not found" >&2; exit 2; }
: "${CUBATCHTRACE_SHIM:=$build/src/.libs/libcubatchtrace-tp.so}"; export CUBATCHTRACE_SHIM
shim_format=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top/include/cubatchtrace/events.h")
format=$shim_format
if [ "${1:-}" = --format ]; then
    format=${2:-}
    shift 2 || true
fi
case $format in 2|"$shim_format") ;; *) echo "summary.sh: --format is 2 or $shim_format (the shim's)" >&2; exit 2 ;; esac
[ $# -gt 0 ] || set -- 4000b 1000000 10000000
mkdir -p "$dir"

# measure CMD...: best wall time of $runs runs, the max RSS (KiB) and the
# least CPU time (user + system s), via wait4's rusage
measure() { python3 "$top/bench/measure.py" "$runs" "$@"; }

# record TRACE GEN-ARGS...: the generator's events in TRACE/ust/pid/cbt-gen-PID-*, its pid in TRACE.pid
record() {
    _t=$1; shift
    _started=""
    if [ "$(id -u)" = 0 ]; then _rundir=/var/run/lttng; else
        LTTNG_HOME=$dir/home; export LTTNG_HOME; mkdir -p "$LTTNG_HOME"; _rundir=$LTTNG_HOME/.lttng
    fi
    if ! { [ -f "$_rundir/lttng-sessiond.pid" ] && kill -0 "$(cat "$_rundir/lttng-sessiond.pid")" 2>/dev/null; }; then
        "$SESSIOND" --daemonize --no-kernel >/dev/null 2>&1 </dev/null
        _i=0
        until [ -f "$_rundir/lttng-sessiond.pid" ] && kill -0 "$(cat "$_rundir/lttng-sessiond.pid")" 2>/dev/null; do
            _i=$((_i + 1)); [ $_i -gt 100 ] && { echo "summary.sh: lttng-sessiond did not start" >&2; return 1; }
            sleep 0.1
        done
        _started=$(cat "$_rundir/lttng-sessiond.pid")
    fi
    _s="cbt-summary-$$"
    "$LTTNG" --no-sessiond create "$_s" --output="$_t" >/dev/null &&
    "$LTTNG" --no-sessiond enable-channel -u -s "$_s" --buffers-pid --blocking-timeout=inf --subbuf-size=1M \
        --num-subbuf=8 ch >/dev/null &&
    "$LTTNG" --no-sessiond enable-event -u -s "$_s" -c ch 'cubatchtrace:*' --loglevel=TRACE_INFO >/dev/null &&
    "$LTTNG" --no-sessiond enable-event -u -s "$_s" -c ch 'lttng_ust_statedump:*' >/dev/null &&
    "$LTTNG" --no-sessiond add-context -u -s "$_s" -c ch -t vpid -t vtid -t procname -t ip >/dev/null &&
    "$LTTNG" --no-sessiond start "$_s" >/dev/null || return 1
    LTTNG_UST_ALLOW_BLOCKING=1 "$GEN" --pidfile "$_t.pid" "$@" >/dev/null &
    _p=$!
    wait $_p
    _st=$?
    "$LTTNG" --no-sessiond stop "$_s" >/dev/null
    "$LTTNG" --no-sessiond destroy "$_s" >/dev/null
    [ -z "$_started" ] || kill "$_started"
    for _d in "$_t"/ust/pid/*; do
        case ${_d##*/} in cbt-gen-$_p-*) ;; *) rm -rf "$_d" ;; esac
    done
    return $_st
}

printf '# cubatchtrace summary vs babeltrace2 --output-format=dummy (best of %s, of %s for Nb points; RSS: max resident KiB; CPU: user + system s)\n' "$repeat" "$((5 * repeat))"
printf '# host: %s, %s CPUs\n' "$(uname -n)" "$(nproc)"
printf '# event format %s; Point: OPS ops of --mix, or Nb: N batches of --small\n' "$format"
printf '%-10s | %-10s | %-8s | %-8s | %-10s | %-10s | %-9s | %-9s | %-11s | %-14s | %-9s | %-11s | %s\n' \
    Point Ops Events "Trace MB" "dummy s" "summary s" "ratio" "dummy RSS" "summary RSS" "summary Mops/s" "dummy CPU" "summary CPU" \
    "CPU ratio"
first_rss="" first_ops=""
for point in "$@"; do
    case $point in
    *b) batches=${point%b} gen="--small $batches" t="$dir/small-f$format-$batches" what=batches want=$batches ;;
    *) batches="" gen="--mix $point" t="$dir/mix-f$format-$point" what=ops want=$point ;;
    esac
    case ${batches:-$point} in ''|*[!0-9]*) echo "summary.sh: $point: not OPS or Nb" >&2; exit 2 ;; esac
    if ! [ -f "$t.complete" ] || ! [ -f "$t.processes" ] || ! [ -f "$t.ops" ] || [ "$GEN" -nt "$t.complete" ]; then
        rm -rf "$t" "$t.complete" "$t.processes" "$t.ops"
        record "$t" --format "$format" $gen 2>"$t.log" || { cat "$t.log" >&2; exit 1; }
        # the generator's process holds exactly OPS ops (N batches), no event was lost
        got=$("$CBT" summary --json --by process "$t" | python3 -c 'import json,sys
d = json.load(sys.stdin); pid = sys.argv[1]
mine = [r for r in d["by_process"] if (" pid %s " % pid) in r["name"] + " "]
print(mine[0][sys.argv[2]] if mine else None, mine[0]["ops"] if mine else None, d["discarded_events"], d["processes"])' \
            "$(cat "$t.pid")" "$what")
        set -- $got
        [ "$1 $3" = "$want 0" ] || { echo "summary.sh: trace $t: the generator's $what, discarded events: $1 $3; expected $want 0" >&2; rm -rf "$t"; exit 1; }
        echo "$2" >"$t.ops"
        echo "$4" >"$t.processes"
        "$BT" -c sink.utils.counter "$t" 2>/dev/null | awk '/Event messages/ {n = $1} END {print n}' >"$t.events"
        touch "$t.complete"
    fi
    [ "$(cat "$t.processes")" = 1 ] ||
        echo "# warning: $t holds $(cat "$t.processes") processes: its figures include another traced program's events"
    ops=$(cat "$t.ops")
    mb=$(du -sm "$t" | cut -f1)
    events=$(cat "$t.events")
    # a trace of small batches reads in a few tens of ms: more runs, for a best time that holds
    runs=$repeat
    [ -z "$batches" ] || runs=$((5 * repeat))
    set -- $(measure "$BT" --output-format=dummy "$t") $(measure "$CBT" summary "$t")
    [ "$1" != FAILED ] && [ "$4" != FAILED ] || { echo "summary.sh: a reader failed on $t" >&2; exit 1; }
    ratio=$(python3 -c "print('%.2f' % ($4 / $1))")
    cpu_ratio=$(python3 -c "print('%.2f' % ($6 / $3))")
    mops=$(python3 -c "print('%.2f' % ($ops / $4 / 1e6))")
    printf '%-10s | %-10s | %-8s | %-8s | %-10s | %-10s | %-9s | %-9s | %-11s | %-14s | %-9s | %-11s | %s\n' \
        "$point" "$ops" "${events:-?}" "$mb" "$1" "$4" "${ratio}x" "$2" "$5" "$mops" "$3" "$6" "${cpu_ratio}x"
    if [ -n "$batches" ]; then
        : # RSS flat is a matter of the OPS points
    elif [ -z "$first_rss" ]; then
        first_rss=$5 first_ops=$ops first_dummy_rss=$2
    else
        last_rss=$5 last_ops=$ops last_dummy_rss=$2
    fi
done
if [ -n "${last_rss:-}" ]; then
    printf '# summary peak RSS: %s KiB at %s ops, %s KiB at %s ops (x%s)\n' "$first_rss" "$first_ops" \
        "$last_rss" "$last_ops" "$(python3 -c "print('%.2f' % ($last_rss / $first_rss))")"
    # what babeltrace2 itself holds grows with the trace too: summary's own memory is the difference
    printf '# summary peak RSS over dummy'"'"'s: %+d KiB at %s ops, %+d KiB at %s ops\n' \
        "$((first_rss - first_dummy_rss))" "$first_ops" "$((last_rss - last_dummy_rss))" "$last_ops"
fi
