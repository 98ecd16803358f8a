#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/launch-ir.sh: instructions per cuGraphLaunch of a graph holding one
# batch node, in an LTTng session, over the test double, under callgrind:
# bare (no preload), the floor (bench/floor: one cbtfloor:launch event per
# launch) and the shim of each build directory given.  Instruction counts do
# not move from run to run as times do (bench/graph-launch.sh), so builds
# that differ by a few tens of ns per launch can be told apart.
#
#   bench/launch-ir.sh BUILD [BUILD...]
#
# The first BUILD gives the client (tests/clients/client_graph), the test
# double and the floor.  Per pass, two runs (10,000 and 30,000 launches):
# Ir per launch is their difference over 20,000, which leaves out start-up.
# Needs valgrind, lttng and a session daemon (started and stopped here when
# none runs).  Prints "pass Ir_per_launch", one line each.
set -eu
[ $# -ge 1 ] || { echo "usage: bench/launch-ir.sh BUILD [BUILD...]" >&2; exit 2; }
first=$(cd "$1" && pwd)
C=$first/tests/clients/client_graph
FAKE=$first/tests/fakecuda/lib
FLOOR=$first/bench/floor/.libs/libcbtfloor.so
[ -x "$C" ] && [ -f "$FLOOR" ] && [ -e "$FAKE/libcuda.so.1" ] ||
    { echo "launch-ir.sh: build $1 first (make; make tests/clients/client_graph)" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 && command -v lttng >/dev/null 2>&1 ||
    { echo "launch-ir.sh: needs valgrind and lttng" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/launch-ir.XXXXXX")
s=cbt-launch-ir-$$ daemon=""
cleanup() {
    lttng destroy "$s" >/dev/null 2>&1 || true
    [ -z "$daemon" ] || kill "$daemon" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! lttng list >/dev/null 2>&1; then
    lttng-sessiond --daemonize --no-kernel --pidfile="$tmp/sessiond.pid" >"$tmp/sessiond.log" 2>&1 </dev/null
    i=0
    while ! lttng list >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    daemon=$(cat "$tmp/sessiond.pid" 2>/dev/null || true)
fi
lttng --no-sessiond create "$s" --output="$tmp/trace" >/dev/null
lttng enable-channel -u -s "$s" --blocking-timeout=inf --subbuf-size=8M --num-subbuf=8 ch >/dev/null
lttng enable-event -u -s "$s" -c ch 'cubatchtrace:*' >/dev/null
lttng enable-event -u -s "$s" -c ch 'cbtfloor:*' >/dev/null
lttng add-context -u -s "$s" -c ch -t vpid -t vtid -t procname >/dev/null
lttng start "$s" >/dev/null
ir() { # preload launches: the program's instructions
    env LD_LIBRARY_PATH="$FAKE" LTTNG_UST_ALLOW_BLOCKING=1 ${1:+LD_PRELOAD=$1} \
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$C" one "$2" >/dev/null 2>&1
    callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
pass() { # name preload
    a=$(ir "$2" 10000) b=$(ir "$2" 30000)
    echo "$1 $(( (b - a) / 20000 ))"
}
pass bare ""
pass floor "$FLOOR"
for b in "$@"; do
    pass "shim:$b" "$(cd "$b" && pwd)/src/.libs/libcubatchtrace.so"
done
