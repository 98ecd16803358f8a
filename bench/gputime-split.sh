#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a timed batch's cost goes (CUBATCHTRACE_GPU_TIME): from a configured
# build directory BUILD, two more builds of the shim beside it, each with one
# piece of GPU time taken out (src/gputime.c; for measuring only, never
# for use):
#   BUILD-nq  -DCBT_GT_BENCH_NO_QUEUE: a timed batch is not queued, its
#             slot's two events are recorded again by the next (one pair, as
#             bench/floor records them; nothing read back)
#   BUILD-ne  -DCBT_GT_BENCH_NO_ELAPSED: queued, and the reader asks the
#             driver nothing of the events (every batch written as lost)
# Each holds what bench/overhead-run needs (bench/overhead, the floor, the
# shim and its provider); BUILD is built again as it was.  Then, e.g.:
#   bench/abn.sh gputime OUT 3 BUILD BUILD-nq BUILD-ne
#
#   bench/gputime-split.sh BUILD
set -eu
build=$(cd "${1:?usage: bench/gputime-split.sh BUILD}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
base_cflags=$(sed -n 's/^CFLAGS = //p' "$build/Makefile")
for v in nq:CBT_GT_BENCH_NO_QUEUE ne:CBT_GT_BENCH_NO_ELAPSED; do
    name=${v%%:*}
    flag=${v#*:}
    dir=$build-$name
    rm -rf "$dir"
    mkdir -p "$dir/src/.libs" "$dir/bench/floor/.libs"
    cp "$build/bench/overhead" "$dir/bench/"
    cp -P "$build"/bench/floor/.libs/libcbtfloor.so* "$dir/bench/floor/.libs/"
    touch "$src/src/gputime.c"
    make -C "$build" CFLAGS="$base_cflags -D$flag" src/libcubatchtrace.la >/dev/null
    cp "$build/src/.libs/libcubatchtrace.so" "$build/src/.libs/libcubatchtrace-tp.so" "$dir/src/.libs/"
    echo "$dir: -D$flag"
done
touch "$src/src/gputime.c"
make -C "$build" src/libcubatchtrace.la >/dev/null
