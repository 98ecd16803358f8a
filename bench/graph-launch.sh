#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/graph-launch.sh: the host time of one cuGraphLaunch with and without
# the shim, for a graph without batch nodes and one with a batch node of one
# copy (tests/clients/client_graph empty|one N: N launches timed in the
# program, ns per launch).
#
#   bench/graph-launch.sh [N] [LIBCUDA_DIR]
#
# Run from the build directory after `make`.  LIBCUDA_DIR: the folder of the
# libcuda.so.1 to use (default: the test double, tests/fakecuda/lib; on a GPU
# machine, the driver's folder, or "" for the system's).  Four passes each:
# bare (no shim), ust (liblttng-ust alone preloaded: the floor, LTTng's
# threads in the process, which make glibc's locks, the driver's included,
# dearer than in a process of one thread), shim (preloaded, no session: the
# launch's one lookup; its own cost is shim - ust), and session (preloaded
# under `cubatchtrace run`, which records the launch events).
# Prints one line per graph and pass: graph pass ns_per_launch (the median of
# three runs).  On a shared machine the figures move by tens of ns from run
# to run: compare passes of one run only.
set -eu
N=${1:-100000}
LIBDIR=${2-tests/fakecuda/lib}
C=tests/clients/client_graph
SHIM=$(pwd)/src/.libs/libcubatchtrace.so
TOOL=tools/cubatchtrace
[ -x "$C" ] && [ -f "$SHIM" ] || { echo "graph-launch.sh: run from the build directory after make" >&2; exit 2; }
ldp=${LIBDIR:+$(cd "$LIBDIR" && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/graph-launch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the liblttng-ust the shim's tracepoint provider loads (ldd: this environment's library path)
UST=$(ldd "$(dirname "$SHIM")/libcubatchtrace-tp.so" 2>/dev/null | awk '$1 ~ /^liblttng-ust\.so/ { print $3; exit }')
one() { # pass graph: ns per launch of one run
    case $1 in
    bare) env ${ldp:+LD_LIBRARY_PATH=$ldp} "$C" "$2" "$N" ;;
    ust) [ -n "$UST" ] && env ${ldp:+LD_LIBRARY_PATH=$ldp} LD_PRELOAD="$UST" "$C" "$2" "$N" ;;
    shim) env ${ldp:+LD_LIBRARY_PATH=$ldp} LD_PRELOAD="$SHIM" "$C" "$2" "$N" ;;
    session) rm -rf "$tmp/t" && env ${ldp:+LD_LIBRARY_PATH=$ldp} "$TOOL" run -o "$tmp/t" -- "$C" "$2" "$N" ;;
    esac 2>/dev/null | sed -n 's/^ns_per_launch=//p'
}
median3() { printf '%s\n%s\n%s\n' "$1" "$2" "$3" | sort -g | sed -n 2p; }
for graph in empty one; do
    for pass in bare ust shim session; do
        m=$(median3 "$(one $pass $graph)" "$(one $pass $graph)" "$(one $pass $graph)")
        # a driver without batch nodes refuses the graph of one (CUDA 13.5 and later only)
        echo "$graph $pass ${m:--}"
    done
done
