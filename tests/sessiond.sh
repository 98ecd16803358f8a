#!/bin/sh
# SPDX-License-Identifier: MIT
# The LTTng session daemon the tests run against.
#
#   tests/sessiond.sh use     make sure a daemon runs (start a private one if
#                             none does); print the shell lines a test evals
#   tests/sessiond.sh stop    stop the daemon this script started, by its pid
#   tests/sessiond.sh state   print the directory of its lock and pid files
#
# Tests call `use` through need_sessiond (tests/lib.sh) while holding a shared
# lock on $state/lock for their whole run.  A daemon started here comes with a
# watchdog that stops it, by pid, once no test has held that lock for a few
# seconds: `make check` (and `make distcheck`, which shares it) start one
# daemon and leave nothing behind, whether the tests pass or fail.
#
# As root the daemon's run directory is /var/run/lttng whatever LTTNG_HOME
# says; a daemon already running there that this script did not start is
# used and left alone.  Other users get a private LTTNG_HOME.
set -u
cmd=${1:?use|stop|state}
uid=$(id -u)
# The lock that says a test needs the daemon goes with the daemon: root's is
# the machine's one (/var/run/lttng), shared by test runs of any TMPDIR (the
# sanitizer stages set their own), so its state has one fixed place, or one
# run's watchdog stops the daemon under another's tests; another user's
# daemon is private to its TMPDIR (LTTNG_HOME below).
if [ "$uid" = 0 ]; then
    state=/tmp/cubatchtrace-sessiond-0
else
    state=${TMPDIR:-/tmp}/cubatchtrace-sessiond-$uid
fi
mkdir -p "$state"
: "${LTTNG_SESSIOND:=$(command -v lttng-sessiond 2>/dev/null || true)}"
if [ "$uid" = 0 ]; then
    rundir=/var/run/lttng
    env_lines=""
else
    LTTNG_HOME=$state/home
    export LTTNG_HOME
    mkdir -p "$LTTNG_HOME"
    rundir=$LTTNG_HOME/.lttng
    env_lines="LTTNG_HOME='$LTTNG_HOME'; export LTTNG_HOME;"
fi
alive() { [ -f "$1" ] && kill -0 "$(cat "$1" 2>/dev/null)" 2>/dev/null; }

stop_ours() {
    if [ -f "$state/pid" ]; then
        pid=$(cat "$state/pid")
        kill "$pid" 2>/dev/null
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$pid" 2>/dev/null
        rm -f "$state/pid"
    fi
}

case $cmd in
use)
    [ -n "$LTTNG_SESSIOND" ] || { echo "lttng-sessiond is not installed"; exit 1; }
    exec 8>>"$state/start.lock"
    flock -x 8
    if ! alive "$rundir/lttng-sessiond.pid"; then
        rm -f "$state/pid"
        "$LTTNG_SESSIOND" --daemonize --no-kernel >"$state/log" 2>&1 </dev/null 8>&- 9>&-
        i=0
        while ! alive "$rundir/lttng-sessiond.pid"; do
            i=$((i + 1))
            [ $i -gt 100 ] && { echo "lttng-sessiond did not start (see $state/log)"; exit 1; }
            sleep 0.1
        done
        cp "$rundir/lttng-sessiond.pid" "$state/pid"
        # The watchdog: stop our daemon once no test has held the lock for 3 s.
        (
            idle=0
            while [ -f "$state/pid" ]; do
                sleep 1
                if flock -xn "$state/lock" true; then idle=$((idle + 1)); else idle=0; fi
                if [ $idle -ge 3 ]; then
                    # Under the start lock, so no test can be starting to use it.
                    exec 8>>"$state/start.lock"
                    flock -x 8
                    if flock -xn "$state/lock" true; then
                        stop_ours
                        exit 0
                    fi
                    flock -u 8
                    idle=0
                fi
            done
        ) >/dev/null 2>&1 </dev/null 8>&- 9>&- &
    fi
    echo "$env_lines"
    ;;
state)
    echo "$state"
    ;;
stop)
    exec 8>>"$state/start.lock"
    flock -x 8
    stop_ours
    ;;
*)
    echo "usage: $0 use|stop|state" >&2
    exit 2
    ;;
esac
