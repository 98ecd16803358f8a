#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU time, decided: the run bench/report judges timing every batch by.
# On the GPU machine, from the repository root:
#
#   bash bench/gputime-costs.sh BUILD_DIR OUT_DIR [bench/overhead options...]
#
# runs bench/overhead-run --passes session,gputime,gputime16 BUILD_DIR OUT_DIR
# --cpu 2 --budget 2 --kinds d2d,h2d_pageable,array,d2d_1d --sizes 1,4,16,
# which runs bench/costs beside the GPU-time passes (OUT_DIR/costs-gputime.txt:
# cuEventElapsedTime's cost in the same run).  A few minutes on one H200.
# Options after OUT_DIR go to bench/overhead after these (a later --cpu or
# --sizes wins: for a dry run over the test double, say).
# Copy OUT_DIR to bench/results/current/gputime-costs/ and run bench/report.
#
# LTTng: from PATH, or else the Debian packages of gpu-stage/debs unpacked
# into /tmp/lttng-root (as tests/gpu/run does); a session daemon of its
# own is started when none runs, and stopped again by its pid on exit.
set -u
build=${1:?usage: bench/gputime-costs.sh BUILD_DIR OUT_DIR}
out=${2:?usage: bench/gputime-costs.sh BUILD_DIR OUT_DIR}
cd "$(dirname "$0")/.." || exit 1
[ -x "$build/bench/overhead" ] && [ -x "$build/bench/costs" ] || {
    echo "gputime-costs: no $build/bench/overhead or bench/costs (build it first)" >&2
    exit 1
}
mkdir -p "$out" || exit 1

if command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1; then
    sessiond=$(command -v lttng-sessiond) sessiond_args=()
else
    R=/tmp/lttng-root
    ls gpu-stage/debs/*.deb >/dev/null 2>&1 || { echo "gputime-costs: no LTTng on PATH and no gpu-stage/debs" >&2; exit 1; }
    rm -rf "$R" && mkdir -p "$R" || exit 1
    for f in gpu-stage/debs/*.deb; do dpkg -x "$f" "$R" || echo "gputime-costs: dpkg -x $f failed" >&2; done
    lib=$R/usr/lib/x86_64-linux-gnu
    export PATH=$R/usr/bin:$PATH LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LTTNG_HOME=${LTTNG_HOME:-/tmp/lttng-home} LTTNG_SESSION_CONFIG_XSD_PATH=$R/usr/share/xml/lttng
    mkdir -p "$LTTNG_HOME"
    sessiond=$R/usr/bin/lttng-sessiond
    sessiond_args=(--consumerd64-path="$lib/lttng/libexec/lttng-consumerd" --consumerd64-libdir="$lib")
fi
if [ "$(id -u)" = 0 ]; then rundir=/var/run/lttng; else rundir=${LTTNG_HOME:-$HOME}/.lttng; fi
pidfile=$rundir/lttng-sessiond.pid
alive() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; }
started=""
stop() { [ -n "$started" ] && kill "$started" 2>/dev/null; }
trap stop EXIT
if ! alive; then
    # Output to a file, never a pipe: the daemon would keep the pipe open.
    "$sessiond" --daemonize --no-kernel "${sessiond_args[@]}" >/tmp/cbt-gputime-costs-sessiond.log 2>&1 </dev/null
    i=0
    while ! alive && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    alive || { echo "gputime-costs: lttng-sessiond did not start: $(tail -3 /tmp/cbt-gputime-costs-sessiond.log)" >&2; exit 1; }
    started=$(cat "$pidfile")
fi

bash bench/overhead-run --passes session,gputime,gputime16 "$build" "$out" \
    --cpu 2 --budget 2 --kinds d2d,h2d_pageable,array,d2d_1d --sizes 1,4,16 "${@:3}"
st=$?
grep -h '^# verdicts:' "$out"/overhead-*.txt 2>/dev/null
grep '^cuEventElapsedTime' "$out/costs-gputime.txt" 2>/dev/null
exit $st
