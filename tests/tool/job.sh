# SPDX-License-Identifier: MIT
# Shell helpers for the tests of a job on several hosts (sourced after
# tests/lib.sh and tests/tool/common.sh): one local lttng-relayd, and "hosts"
# played on this machine by UTS and mount namespaces (`unshare`, as root),
# each with its own hostname, its own /var/run/lttng and /dev/shm (so its own
# root session daemon) and its own LTTNG_HOME.

RANK_CLIENT="$top_builddir/tests/tool/client_rank"

# need_hosts: skip, saying why, unless hosts can be played here.
need_hosts() {
    [ "$(id -u)" = 0 ] || skip_all "playing several hosts needs root (unshare --uts --mount)"
    command -v unshare >/dev/null 2>&1 || skip_all "unshare (util-linux) not installed"
    RELAYD=${LTTNG_RELAYD:-$(command -v lttng-relayd 2>/dev/null || true)}
    [ -n "$RELAYD" ] || skip_all "lttng-relayd (lttng-tools) not installed"
    [ -n "${LTTNG_SESSIOND:-}" ] || LTTNG_SESSIOND=$(command -v lttng-sessiond 2>/dev/null || true)
    [ -n "$LTTNG_SESSIOND" ] || skip_all "lttng-sessiond not installed"
    [ -n "${LTTNG:-}" ] && [ -n "${PYTHON3:-}" ] || skip_all "lttng or python3 not found"
    [ -x "$RANK_CLIENT" ] || skip_all "tests/tool/client_rank not built"
    _why=$(unshare --uts --mount --propagation private --fork sh -c \
        'hostname cbt-probe && mkdir -p /var/run/lttng && mount -t tmpfs tmpfs /var/run/lttng && mount -t tmpfs tmpfs /dev/shm' 2>&1) ||
        skip_all "this machine does not let root make UTS and mount namespaces: $_why"
    export LTTNG_SESSIOND
}

# relay_start: a relay daemon on free local ports writing to $CBT_TMP/relay;
# sets RELAY_PID, RELAY_URL (for sessions) and RELAY_LIVE (net://.../ for live readers).
relay_start() {
    set -- $("$PYTHON3" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
    "$RELAYD" -o "$CBT_TMP/relay" -C "tcp://127.0.0.1:$1" -D "tcp://127.0.0.1:$2" -L "tcp://127.0.0.1:$3" \
        >"$CBT_TMP/relayd.log" 2>&1 </dev/null &
    RELAY_PID=$!
    RELAY_URL="net://127.0.0.1:$1:$2"
    RELAY_LIVE="net://127.0.0.1:$3"
    _i=0
    while ! "$PYTHON3" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$3" 2>/dev/null; do
        _i=$((_i + 1))
        [ $_i -gt 100 ] && return 1
        kill -0 "$RELAY_PID" 2>/dev/null || return 1
        sleep 0.1
    done
}

# relay_stop: SIGTERM, then whether it ended within 10 s (status 0).
relay_stop() {
    kill "$RELAY_PID" 2>/dev/null
    _i=0
    while kill -0 "$RELAY_PID" 2>/dev/null; do
        _i=$((_i + 1))
        [ $_i -gt 100 ] && { kill -9 "$RELAY_PID" 2>/dev/null; return 1; }
        sleep 0.1
    done
    wait "$RELAY_PID" 2>/dev/null
    return 0
}

# on_host NAME SCRIPT: run the shell SCRIPT as host NAME (its own hostname,
# /var/run/lttng, /dev/shm and LTTNG_HOME), killed after $HOST_LIMIT s (120).
# The script also sees RELAY_LIVE.  The script sees CBT, RANK_CLIENT,
# RELAY_URL, HOST_DIR ($CBT_TMP/NAME, for its files) and the test's environment.
on_host() {
    HOST_DIR=$CBT_TMP/$1
    mkdir -p "$HOST_DIR/home"
    HOST_DIR=$HOST_DIR HOST_NAME=$1 CBT=$CBT RANK_CLIENT=$RANK_CLIENT RELAY_URL=$RELAY_URL RELAY_LIVE=$RELAY_LIVE \
    LTTNG_HOME=$HOST_DIR/home LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout -s KILL "${HOST_LIMIT:-120}" unshare --uts --mount --propagation private --fork --kill-child sh -c '
            hostname "$HOST_NAME" && mkdir -p /var/run/lttng &&
            mount -t tmpfs tmpfs /var/run/lttng && mount -t tmpfs tmpfs /dev/shm || exit 99
            '"$2"
}

# The host script'"'"'s end: wait (up to 30 s) until the keeper of the host'"'"'s
# session is gone, then say whether the daemon it started is gone too, into
# $HOST_DIR/end ("keeper gone", "daemon gone" or what is left).
HOST_END='
    daemon=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
    i=0
    while [ -f /var/run/lttng/cubatchtrace-keeper ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    if [ -f /var/run/lttng/cubatchtrace-keeper ]; then echo "keeper still there" >"$HOST_DIR/end"; else echo "keeper gone" >"$HOST_DIR/end"; fi
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then echo "daemon $daemon still running" >>"$HOST_DIR/end"; else echo "daemon gone" >>"$HOST_DIR/end"; fi
'
