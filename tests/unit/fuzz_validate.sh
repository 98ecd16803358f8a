#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the validator's libFuzzer target for a bounded time (TAP).
# CBT_FUZZ_SECONDS overrides the default of 20 seconds.
set -u
bin="${top_builddir:-.}/tests/unit/fuzz_validate-bin"
skip="${top_builddir:-.}/tests/unit/fuzz_validate.skip"
if [ ! -x "$bin" ]; then
    why="fuzz target not built"
    [ -f "$skip" ] && why=$(cat "$skip")
    echo "1..0 # SKIP $why"
    exit 0
fi
secs=${CBT_FUZZ_SECONDS:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/cbt-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
echo "1..1"
# -timeout: one input slower than 10 s is a failure too (the validator must stay cheap).
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1 </dev/null
rc=$?
sed 's/^/# /' "$work/log" | tail -n 25
if [ $rc -eq 0 ]; then
    echo "ok 1 - libFuzzer ran ${secs}s on cbt_validate without a crash, leak, UB or broken invariant"
else
    for a in "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-*; do
        [ -f "$a" ] || continue
        keep="${top_builddir:-.}/tests/unit/$(basename "$a")"
        cp "$a" "$keep"
        echo "# reproducer kept: $keep ($(od -An -tx1 "$a" | tr -d '\n' | head -c 300))"
    done
    echo "not ok 1 - libFuzzer found a failing input (exit $rc)"
fi
