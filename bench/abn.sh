#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Several builds of the shim against each other: one bench/overhead-run pass
# on each in turn, for ROUNDS rounds, each against the floor in its own run
# (so that the machine's drift falls on all alike); bench/ab.sh for more
# than two builds, at the small sizes by default.
#
#   bench/abn.sh PASS OUT_DIR ROUNDS BUILD... [-- bench/overhead options...]
#
# Writes OUT_DIR/NAME-N.txt (NAME: the build directory's name) and
# OUT_DIR/all.txt (build, round, kind, ops, shim_ns, floor_ns, shim - floor,
# then the same for the added CPU of every thread: cpu_shim, cpu_floor,
# cpu_shim - cpu_floor), and prints the means of both differences (ns) over
# the rounds, per build and row; then OUT_DIR/verdicts.txt, each build's rows
# judged over its rounds (bench/process-verdicts: each round is a process).
# Needs what the pass needs (lttng and a session daemon for session passes).
# For where GPU time's cost goes: bench/gputime-split.sh makes the builds.
set -u
pass=${1:?usage: bench/abn.sh PASS OUT_DIR ROUNDS BUILD... [-- options...]}
out=${2:?OUT_DIR}
rounds=${3:?ROUNDS}
shift 3
builds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    builds+=("$1")
    shift
done
[ $# -gt 0 ] && shift
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--cpu 2 --budget 1.5 --kinds d2d,h2d_pageable,array,d2d_1d --sizes 1,4,16)
[ ${#builds[@]} -gt 0 ] || { echo "abn.sh: no build given" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/all.txt"
for i in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
        n=$(basename "$b")
        tmp=$(mktemp -d)
        "$here/overhead-run" --passes "$pass" "$b" "$tmp" "${opts[@]}" >/dev/null 2>&1
        cp "$tmp/overhead-$pass.txt" "$out/$n-$i.txt" 2>/dev/null ||
            echo "abn.sh: $n, round $i: no result (see bench/overhead-run $pass $b)" >&2
        rm -rf "$tmp"
        awk -v b="$n" -v i="$i" '/^(d2d|h2d_pageable|array|d2d_1d) / { print b, i, $1, $2, $7, $10, $7 - $10, $13, $15, $13 - $15 }' \
            "$out/$n-$i.txt" 2>/dev/null >>"$out/all.txt"
    done
done
echo "# mean shim - floor (ns) over $rounds round(s): kind ops build time cpu"
awk '{ k = $3 " " $4 " " $1; s[k] += $7; u[k] += $10; c[k]++ } END { for (k in s) printf "%s %.0f %.0f\n", k, s[k] / c[k], u[k] / c[k] }' \
    "$out/all.txt" | sort -k1,1 -k2n -k3,3
# each build's rows judged over its rounds, each round a process of its own
"$here/process-verdicts" "$out/all.txt" | tee "$out/verdicts.txt"
