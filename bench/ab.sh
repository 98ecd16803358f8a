#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of the shim against each other: one pass of bench/overhead-run on
# each, alternating (A B A B ...), each against the floor in its own run, so
# that the machine's drift from one run to the next falls on both alike.
#
#   bench/ab.sh PASS BUILD_A BUILD_B OUT_DIR [ROUNDS] [bench/overhead options...]
#
# PASS: session, gputime, ... (bench/overhead-run's passes).  Uses:
#   - a change on the calling thread's path: BUILD_B the build before it;
#   - what the GPU-time reader thread saves: PASS gputime, BUILD_B configured
#     with CFLAGS="-O2 -g -DCBT_GT_NO_READER" (src/gputime.c: the calling
#     threads read back, as before the reader).
# Writes OUT_DIR/{a,b}-N.txt and prints shim - floor (ns) per row and run.
# Needs what the pass needs (lttng and a session daemon for session passes).
set -u
pass=${1:?usage: bench/ab.sh PASS BUILD_A BUILD_B OUT_DIR [ROUNDS] [options...]}
a=${2:?BUILD_A}
b=${3:?BUILD_B}
out=${4:?OUT_DIR}
rounds=${5:-3}
shift 4
[ $# -gt 0 ] && shift
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--cpu 2 --budget 2 --kinds d2d,h2d_pageable,array,d2d_1d --sizes 1,4)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
    for side in b a; do
        build=$a
        [ $side = b ] && build=$b
        tmp=$(mktemp -d)
        "$here/overhead-run" --passes "$pass" "$build" "$tmp" "${opts[@]}" >/dev/null 2>&1
        cp "$tmp/overhead-$pass.txt" "$out/$side-$i.txt" 2>/dev/null
        rm -rf "$tmp"
        echo "== $side ($build), run $i: kind ops shim_ns floor_ns shim-floor"
        awk '/^(d2d|h2d_pageable|array|d2d_1d) / { print $1, $2, $7, $10, $7 - $10 }' "$out/$side-$i.txt"
    done
done
