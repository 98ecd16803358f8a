#!/bin/sh
# SPDX-License-Identifier: MIT
# Bytes of trace per batch and per op: the shim's record against LTTng's
# floor (bench/floor), measured on the same calls.
#
#   sh bench/trace-size.sh [CALLS]        from the build directory (default 2000 calls per size)
#
# bench/overhead makes exactly CALLS (+ its warm-up) calls of each contender
# per batch size (--iters, one call per block), the shim's and the floor's,
# over the same ops (each kind's batches repeat their allocations); one
# session records the shim's events (cubatchtrace:*) in one channel and the
# floor's (cbtfloor:*) in another, so each channel's stream files hold one
# contender's bytes.  Bytes per batch at size n = the channel's bytes over
# the calls made; per op = the slope between two sizes.  Packet headers and
# the padding of the last packet of each stream are counted in, the same
# way for both.  Runs over whatever libcuda.so.1 the loader finds (the
# test double: LD_LIBRARY_PATH=tests/fakecuda/lib): bytes do not depend on
# the driver's speed.  Needs lttng and a running session daemon.
set -u
calls=${1:-2000}
warm=5
bench=./bench/overhead
shim=./src/.libs/libcubatchtrace.so
floor=./bench/floor/.libs/libcbtfloor.so
[ -x "$bench" ] || { echo "trace-size: run from a build directory (no $bench)" >&2; exit 1; }
command -v lttng >/dev/null 2>&1 && lttng list >/dev/null 2>&1 || { echo "trace-size: no lttng session daemon" >&2; exit 1; }

dir_bytes() { # dir_bytes DIR CHANNEL: bytes of the channel's stream files
    find "$1" -type f -name "$2_*" -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}

# measure KIND SIZE: "shim_bytes floor_bytes" for CALLS+warm-up calls each
measure() {
    s=cbtsize-$$-$1-$2
    t=$(mktemp -d)
    lttng --no-sessiond create "$s" --output="$t" >/dev/null || return 1
    for ch in shim floor; do
        lttng enable-channel -u -s "$s" --blocking-timeout=inf --subbuf-size=4M --num-subbuf=8 "$ch" >/dev/null || return 1
        lttng add-context -u -s "$s" -c "$ch" -t vpid -t vtid -t procname >/dev/null || return 1
    done
    lttng enable-event -u -s "$s" -c shim 'cubatchtrace:*' --loglevel=INFO >/dev/null &&
        lttng enable-event -u -s "$s" -c floor 'cbtfloor:*' --loglevel=INFO >/dev/null &&
        lttng start "$s" >/dev/null || return 1
    LTTNG_UST_ALLOW_BLOCKING=1 CUBATCHTRACE_SUBBUF_SIZE=4M "$bench" "$shim" --floor "$floor" --mode session --iters "$calls" --warmup "$warm" \
        --sizes "$2" --kinds "$1" >/dev/null 2>&1
    st=$?
    lttng stop "$s" >/dev/null
    lttng destroy "$s" >/dev/null
    echo "$(dir_bytes "$t" shim) $(dir_bytes "$t" floor)"
    rm -rf "$t"
    return $st
}

n=$((calls + warm))
echo "# bench/trace-size.sh: bytes of trace per batch, the shim (its compact record) against the floor, $n calls of each per row"
echo "# per batch: channel bytes / calls; per op: (bytes at 64 ops - bytes at 1 op) / 63 / calls; bound: shim <= floor + 32 per 1-op batch, <= floor + 4 per op"
printf '%-13s %10s %10s %8s %10s %10s %8s %s\n' kind shim_b1 floor_b1 diff_b1 shim_op floor_op diff_op verdict
for kind in d2d h2d_pageable array d2d_1d; do
    m1=$(measure "$kind" 1) || { echo "trace-size: $kind 1 failed" >&2; continue; }
    m64=$(measure "$kind" 64) || { echo "trace-size: $kind 64 failed" >&2; continue; }
    echo "$kind $n $m1 $m64" | awk '{
        n = $2; s1 = $3 / n; f1 = $4 / n; s64 = $5 / n; f64 = $6 / n
        so = (s64 - s1) / 63; fo = (f64 - f1) / 63
        v = (s1 <= f1 + 32 && so <= fo + 4) ? "ok" : "OVER"
        printf "%-13s %10.1f %10.1f %+8.1f %10.2f %10.2f %+8.2f %s\n", $1, s1, f1, s1 - f1, so, fo, so - fo, v
    }'
done
