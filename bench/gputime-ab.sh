#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the GPU-time reader thread saves the calling thread: bench/overhead-run's
# gputime pass on two builds, alternating (A B A B ...), each against the floor
# with its two timing events in its own run.
#
#   bench/gputime-ab.sh BUILD_A BUILD_B OUT_DIR [ROUNDS] [bench/overhead options...]
#
# BUILD_B is usually a build configured with CFLAGS="-O2 -g -DCBT_GT_NO_READER"
# (src/gputime.c: the calling threads read back, as before the reader).
# Writes OUT_DIR/{a,b}-N.txt and prints shim - floor (ns) per row and run.
# Needs what the gputime pass needs (lttng, a session daemon).
set -u
a=${1:?usage: bench/gputime-ab.sh BUILD_A BUILD_B OUT_DIR [ROUNDS] [options...]}
b=${2:?BUILD_B}
out=${3:?OUT_DIR}
rounds=${4:-2}
shift 3
[ $# -gt 0 ] && shift
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--cpu 2 --budget 2 --kinds d2d,d2d_1d --sizes 1,4)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
    for side in a b; do
        build=$a
        [ $side = b ] && build=$b
        tmp=$(mktemp -d)
        "$here/overhead-run" --passes gputime "$build" "$tmp" "${opts[@]}" >/dev/null 2>&1
        cp "$tmp/overhead-gputime.txt" "$out/$side-$i.txt" 2>/dev/null
        rm -rf "$tmp"
        echo "== $side ($build), run $i: kind ops shim_ns floor_ns shim-floor"
        awk '/^(d2d|h2d_pageable|array|d2d_1d) / { print $1, $2, $7, $10, $7 - $10 }' "$out/$side-$i.txt"
    done
done
