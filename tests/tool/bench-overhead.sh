#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/overhead over the test double: the time bound each row is judged by
# (1.1 x the floor + 10 ns below 64 ops; from 64 ops the floor + 5 ns per op
# for 3D, + 2 ns per copy for 1D), the CPU excess (1.2 x the floor's, the
# floor's where that is below zero), the "outside the driver" figures,
# present through bench/drvclock and absent without it, and, in a session,
# the count of the shim's measured calls that took the steps.
. "$top_srcdir/tests/lib.sh"

bench=$top_builddir/bench/overhead
clock=$top_builddir/bench/drvclock/.libs/libcbtdrvclock.so
floor=$top_builddir/bench/floor/.libs/libcbtfloor.so
[ -x "$bench" ] && [ -f "$clock" ] && [ -f "$floor" ] || skip_all "bench/overhead, bench/drvclock or the floor not built"
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run() { # run OUT-PREFIX LIBCUDA
    "$bench" --quick --iters 20 --warmup 2 --sizes 1,64 --kinds d2d,d2d_1d --mode none --floor "$floor" \
        --libcuda "$2" --csv "$1.csv" "$CBT_SHIM" >"$1.txt" 2>&1
}

run "$CBT_TMP/clock" "$clock"; ok $? "bench/overhead runs through bench/drvclock"
run "$CBT_TMP/plain" "$CBT_FAKECUDA_DIR/libcuda.so.1"; ok $? "bench/overhead runs on the test double itself"

# Each row's bound at the floor's median, against the rule.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    {
        f = $(c["floor_ns"]); n = $(c["ops"])
        want = n < 64 ? 1.1 * f + 10 : f + n * ($(c["kind"]) == "d2d_1d" ? 2 : 5)
        got = $(c["time_bound_ns"])
        if (got == "" || got - want > 0.1 || want - got > 0.1) { printf "%s/%s: bound %s, want %.1f\n", $1, n, got, want; bad++ }
        rows++
    }
    END { exit !(rows == 4 && !bad) }' "$CBT_TMP/clock.csv" >"$CBT_TMP/bounds" 2>&1
ok $? "every row's time bound follows its size and kind"
diag "$(cat "$CBT_TMP/bounds")"

# Each row's CPU excess: the shim's added CPU less 1.2 x the floor's, or less
# the floor's where the floor's mean is below zero (1.2 x a negative floor
# would hold the shim below the floor itself).
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    {
        f = $(c["cpu_floor_ns"]); want = $(c["cpu_shim_ns"]) - (f >= 0 ? 1.2 : 1) * f; got = $(c["cpu_excess_ns"])
        if (got == "" || got - want > 1 || want - got > 1) { printf "%s/%s: cpu excess %s, want %.1f\n", $1, $2, got, want; bad++ }
        rows++
    }
    END { exit !(rows == 4 && !bad) }' "$CBT_TMP/clock.csv" >"$CBT_TMP/cpu" 2>&1
ok $? "every row's CPU excess follows the floor's sign"
diag "$(cat "$CBT_TMP/cpu")"

# The outside figures: a table of four rows and filled CSV columns through
# the clock; neither on the double itself.
is "$(grep -c '^outside \(d2d\|d2d_1d\) ' "$CBT_TMP/clock.txt")" 4 "through bench/drvclock: an outside row per row"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $(c["out_shim_ns"]) == "" || $(c["out_floor_ns"]) == "" || $(c["out_shim_lo_ns"]) > $(c["out_shim_hi_ns"]) { bad++ }
    END { exit !(NR == 5 && !bad) }' "$CBT_TMP/clock.csv"
ok $? "through bench/drvclock: the CSV's outside columns are filled, each interval in order"
is "$(grep -c '^outside ' "$CBT_TMP/plain.txt")" 0 "on the double itself: no outside table"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $(c["out_shim_ns"]) != "" { bad++ } END { exit !(NR == 5 && !bad) }' \
    "$CBT_TMP/plain.csv"
ok $? "on the double itself: the CSV's outside columns are empty"

# --fresh: the list built again before each call, in every kind; the header says which.
"$bench" --quick --iters 5 --warmup 1 --sizes 1,4 --kinds d2d,h2d_pageable,array,d2d_1d --mode none --floor "$floor" \
    --libcuda "$clock" --fresh "$CBT_SHIM" >"$CBT_TMP/fresh.txt" 2>&1
ok $? "bench/overhead --fresh runs every kind"
is "$(grep -c '^# ops:.*the list built again before each call (--fresh)$' "$CBT_TMP/fresh.txt")" 1 "--fresh: the header says the list is built again"
is "$(grep -c '^# ops:.*the list built once per row$' "$CBT_TMP/clock.txt")" 1 "without --fresh: the header says the list is built once"
# Lists built against measured calls: one before each call with --fresh, one per row without.
lists() { awk '/^# lists: / { exit !($3 '"$2"' $8 && $8 > 0) } END { if (NR == 0) exit 1 }' "$1"; }
lists "$CBT_TMP/fresh.txt" '>='; ok $? "--fresh: a list built before every measured call"
lists "$CBT_TMP/clock.txt" '<'; ok $? "without --fresh: fewer lists built than calls measured"
# In a session: how many measured calls of the shim took the steps.  Batches
# like the previous ones take the steady path; in strict mode every batch is
# validated, through the steps.
if want_sessiond; then
    cbt_session_start steps 'cubatchtrace:*' 'cbtfloor:*' || diag "cannot start a session"
    steps() { # steps OUT [ENV...]
        _o=$1; shift
        env LTTNG_UST_ALLOW_BLOCKING=1 "$@" "$bench" --quick --iters 20 --warmup 2 --sizes 1,4 --kinds d2d,d2d_1d \
            --mode session --floor "$floor" --csv "$_o.csv" "$CBT_SHIM" >"$_o.txt" 2>&1
    }
    steps "$CBT_TMP/steady"; ok $? "bench/overhead runs in a session"
    is "$(grep '^# steps: ' "$CBT_TMP/steady.txt")" \
        "# steps:   the shim's measured calls that took the steps, not the steady path: none" \
        "in a session: no measured call took the steps"
    steps "$CBT_TMP/strict" CUBATCHTRACE_MODE=strict; ok $? "bench/overhead runs in strict mode"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $(c["shim_steps"]) != $(c["calls"]) || $(c["calls"]) == 0 { bad++ } END { exit !(NR == 5 && !bad) }' \
        "$CBT_TMP/strict.csv"
    ok $? "strict mode: every measured call took the steps (the CSV's shim_steps)"
    is "$(grep -c '^# steps: .* d2d/1 (\([0-9]*\) of \1) .* d2d_1d/4 (\([0-9]*\) of \2)$' "$CBT_TMP/strict.txt")" 1 \
        "strict mode: the text names every row with its count"
    cbt_session_stop steps
    # bench/overhead-run's gputimeN pass: a session with CUBATCHTRACE_GPU_TIME=N
    bash "$top_srcdir/bench/overhead-run" --passes gputime4 "$top_builddir" "$CBT_TMP/run" \
        --quick --iters 6 --warmup 1 --sizes 1 --kinds d2d >"$CBT_TMP/run.log" 2>&1
    ok $? "overhead-run: a gputime4 pass runs"
    grep -q '^# gpu time:  CUBATCHTRACE_GPU_TIME=4:' "$CBT_TMP/run/overhead-gputime4.txt" 2>/dev/null
    ok $? "overhead-run: the gputime4 pass times one batch in 4 (its header says so)"
    # beside it, in the same run, bench/costs: cuEventElapsedTime's cost for bench/report's bound
    grep -q '^cuEventElapsedTime, two events that completed  *[0-9][0-9.]*$' "$CBT_TMP/run/costs-gputime.txt" 2>/dev/null
    ok $? "overhead-run: bench/costs beside the GPU-time pass (costs-gputime.txt, cuEventElapsedTime)"
else
    diag "no session: $CBT_NO_SESSIOND"
fi
# The CUDA 13.2 single-op calls: a row of one op each, other sizes left out;
# a driver without them (the 13.0 double) refused with the reason
"$bench" --quick --iters 20 --warmup 2 --sizes 1,4 --kinds d2d_single,d2d_single1d --mode none --floor "$floor" \
    --csv "$CBT_TMP/single.csv" "$CBT_SHIM" >"$CBT_TMP/single.txt" 2>&1
ok $? "bench/overhead runs the single-op kinds"
is "$(awk -F, 'NR > 1 { printf "%s/%s ", $1, $2 }' "$CBT_TMP/single.csv")" "d2d_single/1 d2d_single1d/1 " \
    "the single-op kinds: one row each, of one op"
if [ -f "$CBT_FAKECUDA13_0_DIR/libcuda.so.1" ]; then
    "$bench" --quick --sizes 1 --kinds d2d_single --mode none --floor "$floor" \
        --libcuda "$CBT_FAKECUDA13_0_DIR/libcuda.so.1" "$CBT_SHIM" >"$CBT_TMP/single13.txt" 2>&1
    st=$?
    is "$st $(grep -c 'no cuMemcpy3DWithAttributesAsync or cuMemcpyWithAttributesAsync (CUDA 13.2)' "$CBT_TMP/single13.txt")" \
        "1 1" "a driver without the single-op calls: the kinds refused, said why"
fi
bash "$top_srcdir/bench/overhead-run" --passes gputimex "$top_builddir" "$CBT_TMP/bad" >/dev/null 2>"$CBT_TMP/bad.err"
is "$?" 2 "overhead-run: an unknown pass is refused"
grep -q "unknown pass 'gputimex'" "$CBT_TMP/bad.err"; ok $? "overhead-run: and named"
done_testing
