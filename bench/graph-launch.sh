#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/graph-launch.sh: the host time of one cuGraphLaunch with and without
# the shim, for a graph without batch nodes and one with a batch node of one
# copy (tests/clients/client_graph empty|one N: N launches timed in the
# program, ns per launch), judged by the calling-thread bounds a batch is
# judged by (bench/README.md).
#
#   bench/graph-launch.sh [N] [LIBCUDA_DIR]
#
# Run from the build directory after `make`.  LIBCUDA_DIR: the folder of the
# libcuda.so.1 to use (default: the test double, tests/fakecuda/lib; on a GPU
# machine, the driver's folder, or "" for the system's).  Five passes:
#   bare     no shim;
#   ust      liblttng-ust alone preloaded: LTTng's threads in the process,
#            which make glibc's locks, the driver's included, dearer than in
#            a process of one thread;
#   shim     the shim preloaded, no session: a launch costs its one lookup
#            (where graphs with batch nodes are known, the thread's answer
#            for its last graph);
#   floor    bench/floor preloaded in a session: LTTng's floor for recording
#            a launch (one cbtfloor:launch event per launch, every graph);
#   session  the shim preloaded in the same session: it records each launch
#            of a graph holding batch nodes (cubatchtrace:launch), none other.
# The floor and session passes run in an LTTng session this script makes
# for them in each round (a blocking channel, as bench/overhead-run's, so
# that no event is discarded), on a session daemon already running or one it
# starts and stops (CBT_SESSIOND_ARGS: more arguments for it); without lttng
# they print "-".
# Rounds (CBT_BENCH_ROUNDS, default 5) run every pass once each, in turn, so
# that a machine's drift reaches all passes alike; a pass's figure is the
# median of its rounds.  Prints one line per graph and pass (graph pass
# ns_per_launch), then the verdicts:
#   no session  shim - ust <= 10 ns (both graphs);
#   session     empty: session - ust <= 10 ns (nothing is recorded);
#               one: session - bare <= 1.1 x (floor - bare) + 10 ns, the
#               bound of a batch below 64 ops.
# On a shared machine the figures move by tens of ns from run to run:
# compare passes of one run only.
set -eu
N=${1:-100000}
LIBDIR=${2-tests/fakecuda/lib}
ROUNDS=${CBT_BENCH_ROUNDS:-5}
C=tests/clients/client_graph
SHIM=$(pwd)/src/.libs/libcubatchtrace.so
FLOOR=$(pwd)/bench/floor/.libs/libcbtfloor.so
[ -x "$C" ] && [ -f "$SHIM" ] && [ -f "$FLOOR" ] ||
    { echo "graph-launch.sh: run from the build directory after make" >&2; exit 2; }
ldp=${LIBDIR:+$(cd "$LIBDIR" && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/graph-launch.XXXXXX")
session="" daemon=""
cleanup() {
    [ -z "$session" ] || lttng destroy "$session" >/dev/null 2>&1 || true
    [ -z "$daemon" ] || kill "$daemon" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# the liblttng-ust the shim's tracepoint provider loads (ldd: this environment's library path)
UST=$(ldd "$(dirname "$SHIM")/libcubatchtrace-tp.so" 2>/dev/null | awk '$1 ~ /^liblttng-ust\.so/ { print $3; exit }')

# The session of the floor and session passes, made for them in each round
# (a session enables the shim's events in every process, the shim pass's too)
have_lttng=no
if command -v lttng >/dev/null 2>&1; then
    if ! lttng list >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1; then
        # output to a file, never a pipe: the daemon would keep the pipe open
        # shellcheck disable=SC2086
        lttng-sessiond --daemonize --no-kernel --pidfile="$tmp/sessiond.pid" ${CBT_SESSIOND_ARGS:-} \
            >"$tmp/sessiond.log" 2>&1 </dev/null || true
        i=0
        while ! lttng list >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        [ -f "$tmp/sessiond.pid" ] && daemon=$(cat "$tmp/sessiond.pid")
    fi
    if lttng list >/dev/null 2>&1; then have_lttng=yes
    else echo "graph-launch.sh: no LTTng session daemon: no floor or session pass" >&2; fi
else
    echo "graph-launch.sh: no lttng on PATH: no floor or session pass" >&2
fi
discarded=0
session_up() {
    [ $have_lttng = yes ] || return 0
    s=cbt-graph-launch-$$
    lttng --no-sessiond create "$s" --output="$tmp/trace" >/dev/null 2>&1 || return 0
    session=$s
    lttng enable-channel -u -s "$s" --blocking-timeout=inf --subbuf-size=8M --num-subbuf=8 ch >/dev/null &&
        lttng enable-event -u -s "$s" -c ch 'cubatchtrace:*' --loglevel=INFO >/dev/null &&
        lttng enable-event -u -s "$s" -c ch 'cbtfloor:*' --loglevel=INFO >/dev/null &&
        lttng add-context -u -s "$s" -c ch -t vpid -t vtid -t procname >/dev/null &&
        lttng start "$s" >/dev/null && return 0
    echo "graph-launch.sh: the LTTng session could not be set up" >&2
    session_down
}
session_down() {
    [ -n "$session" ] || return 0
    lttng stop "$session" >/dev/null 2>&1 || true
    d=$(lttng list "$session" 2>/dev/null | sed -n 's/.*[Dd]iscarded events: *\([0-9]*\).*/\1/p' | head -1)
    discarded=$((discarded + ${d:-0}))
    lttng destroy "$session" >/dev/null 2>&1 || true
    session=""
    rm -rf "$tmp/trace"
}

one() { # pass graph: ns per launch of one run
    case $1 in
    bare) env ${ldp:+LD_LIBRARY_PATH=$ldp} "$C" "$2" "$N" ;;
    ust) [ -n "$UST" ] && env ${ldp:+LD_LIBRARY_PATH=$ldp} LD_PRELOAD="$UST" "$C" "$2" "$N" ;;
    shim) env ${ldp:+LD_LIBRARY_PATH=$ldp} LD_PRELOAD="$SHIM" "$C" "$2" "$N" ;;
    floor) [ -n "$session" ] &&
        env ${ldp:+LD_LIBRARY_PATH=$ldp} LTTNG_UST_ALLOW_BLOCKING=1 LD_PRELOAD="$FLOOR" "$C" "$2" "$N" ;;
    session) [ -n "$session" ] &&
        env ${ldp:+LD_LIBRARY_PATH=$ldp} LTTNG_UST_ALLOW_BLOCKING=1 LD_PRELOAD="$SHIM" "$C" "$2" "$N" ;;
    esac 2>/dev/null | sed -n 's/^ns_per_launch=//p'
}
PASSES="bare ust shim floor session"
for graph in empty one; do
    r=1
    while [ $r -le "$ROUNDS" ]; do
        for pass in $PASSES; do
            case $pass in floor) session_up ;; esac
            one $pass $graph >>"$tmp/$graph.$pass" || true
        done
        session_down
        r=$((r + 1))
    done
done
median() { [ -s "$1" ] && sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for graph in empty one; do
    for pass in $PASSES; do
        m=$(median "$tmp/$graph.$pass" || true)
        # a driver without batch nodes refuses the graph of one (CUDA 13.5 and later only)
        echo "$graph $pass ${m:--}"
        eval "m_${graph}_$pass=\${m:--}"
    done
done
[ $have_lttng = no ] || echo "# lttng: discarded events: $discarded"
# the verdicts: "-" where a pass has no figure
verdict() { # name value bound
    awk -v n="$1" -v v="$2" -v b="$3" 'BEGIN {
        if (v == "-" || b == "-") { printf "# verdict %s: -\n", n; exit }
        printf "# verdict %s = %.1f ns, bound %.1f ns: %s\n", n, v, b, (v + 0 <= b + 0) ? "ok" : "OVER" }'
}
diff_() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f", a - b }'; }
for graph in empty one; do
    eval "bare=\$m_${graph}_bare ust=\$m_${graph}_ust shim=\$m_${graph}_shim floor=\$m_${graph}_floor ses=\$m_${graph}_session"
    verdict "$graph shim - ust (no session)" "$(diff_ "$shim" "$ust")" 10
    if [ $graph = empty ]; then
        verdict "$graph session - ust (nothing recorded)" "$(diff_ "$ses" "$ust")" 10
    else
        fb=$(diff_ "$floor" "$bare")
        verdict "$graph session - bare (floor - bare = $fb)" "$(diff_ "$ses" "$bare")" \
            "$(awk -v f="$fb" 'BEGIN { if (f == "-") print "-"; else printf "%.1f", 1.1 * f + 10 }')"
    fi
done
