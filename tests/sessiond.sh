#!/bin/sh
# Start or stop the LTTng session daemon `make check` runs against.
#   tests/sessiond.sh start DIR   start a private daemon (or note a running one), write DIR/sessiond.env
#   tests/sessiond.sh stop DIR    stop the daemon started by `start`, by its pid
# As root the daemon's run directory is /var/run/lttng whatever LTTNG_HOME says;
# a daemon already running there is used and left running.
set -u
cmd=${1:?start|stop}
dir=${2:?directory}
mkdir -p "$dir"
env_file="$dir/sessiond.env"
pid_file="$dir/sessiond.pid"
: "${LTTNG_SESSIOND:=$(command -v lttng-sessiond 2>/dev/null || true)}"
: "${LTTNG:=$(command -v lttng 2>/dev/null || true)}"

if [ "$(id -u)" = 0 ]; then
    rundir=/var/run/lttng
    home_line=""
else
    LTTNG_HOME="$dir/lttng-home"; export LTTNG_HOME
    mkdir -p "$LTTNG_HOME"
    rundir="$LTTNG_HOME/.lttng"
    home_line="LTTNG_HOME='$LTTNG_HOME'; export LTTNG_HOME;"
fi

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

case $cmd in
start)
    rm -f "$pid_file"
    if [ -z "$LTTNG_SESSIOND" ] || [ -z "$LTTNG" ]; then
        echo "CBT_NO_SESSIOND='lttng-sessiond or lttng not installed'; export CBT_NO_SESSIOND;" >"$env_file"
        echo "sessiond.sh: lttng-tools missing: tracing tests will skip" >&2
        exit 0
    fi
    if alive "$rundir/lttng-sessiond.pid"; then
        echo "sessiond.sh: using the session daemon already running (pid $(cat "$rundir/lttng-sessiond.pid"))" >&2
    else
        "$LTTNG_SESSIOND" --daemonize --no-kernel >"$dir/sessiond.log" 2>&1 </dev/null
        i=0
        while ! alive "$rundir/lttng-sessiond.pid"; do
            i=$((i + 1))
            if [ $i -gt 100 ]; then
                echo "CBT_NO_SESSIOND='lttng-sessiond did not start (see $dir/sessiond.log)'; export CBT_NO_SESSIOND;" >"$env_file"
                echo "sessiond.sh: lttng-sessiond did not start; see $dir/sessiond.log" >&2
                exit 0
            fi
            sleep 0.1
        done
        cp "$rundir/lttng-sessiond.pid" "$pid_file"
        echo "sessiond.sh: started lttng-sessiond (pid $(cat "$pid_file"))" >&2
    fi
    echo "$home_line CBT_SESSIOND=1; export CBT_SESSIOND;" >"$env_file"
    ;;
stop)
    if [ -f "$pid_file" ]; then
        pid=$(cat "$pid_file")
        kill "$pid" 2>/dev/null
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$pid" 2>/dev/null
        rm -f "$pid_file"
        echo "sessiond.sh: stopped lttng-sessiond (pid $pid)" >&2
    fi
    rm -f "$env_file"
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
