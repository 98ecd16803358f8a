#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/report's "Where the goals stand": the verdicts of each table
# counted, GPU time beyond its two events, trace size and the reader's
# ratios, from a results directory made here (laid out as bench/results:
# current/ for the first document, history/ for the experiments); and a
# directory with none.
. "$top_srcdir/tests/lib.sh"
R=$CBT_TMP/results
C=$R/current
H=$R/history
mkdir -p "$C/overhead-small" "$H"
h=kind,ops,shim_ns,floor_ns,time_vs_floor,cpu_vs_floor,aa,date
{
    echo "$h"
    echo "d2d,1,700,600,ok?,ok,-,2026-01-02 03:04:05 UTC"
    echo "d2d,16,1500,900,OVER,OVER,-,2026-01-02 03:04:05 UTC"
    echo "d2d_1d,1,500,500,ok,ok?,-,2026-01-02 03:04:05 UTC"
} >"$C/overhead-session.csv"
{
    echo "$h"
    echo "d2d,1,1000,700,ok?,ok,-,2026-01-02 03:05:00 UTC"
    echo "d2d,16,1900,1150,ok,ok,-,2026-01-02 03:05:00 UTC"
    echo "d2d_1d,1,650,650,ok,ok,-,2026-01-02 03:05:00 UTC"
} >"$C/overhead-gputime.csv"
printf '%s\n' "$h" "d2d,1,10,12,-,-,ok,2026-01-02 03:03:00 UTC" "d2d,4,30,12,-,-,OVER,2026-01-02 03:03:00 UTC" >"$C/overhead-none.csv"
: >"$C/overhead-session.txt"
: >"$C/overhead-gputime.txt"
: >"$C/overhead-none.txt"
cat >"$C/trace-size.txt" <<'EOT'
# bench/trace-size.sh
kind             shim_b1   floor_b1  diff_b1    shim_op   floor_op  diff_op verdict
d2d                194.2      183.9    +10.2     112.30     112.23    +0.07 ok
d2d_1d             257.4      139.0   +118.4      24.26      24.03    +0.23 OVER
EOT
cat >"$C/summary.txt" <<'EOT'
Point      | Ops        | Events   | Trace MB | dummy s    | summary s  | ratio     | dummy RSS
4000b      | 10500      | 4050     | 2        | 0.011      | 0.014      | 1.27x     | 10012
1000000    | 1000000    | 10177    | 112      | 0.332      | 0.378      | 1.14x     | 22804
EOT
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>"$CBT_TMP/perf.err"
ok $? "bench/report runs"
g() { grep -F -- "$1" "$CBT_TMP/perf.md" >/dev/null; echo $?; }
ok "$(g '| `overhead-session` | 2026-01-02 03:04:05 UTC | 3 | 1 ok, 1 ok?, 1 OVER | 1 ok, 1 ok?, 1 OVER | - |')" \
    "session: each verdict counted, its date and rows"
ok "$(g '| `overhead-none` | 2026-01-02 03:03:00 UTC | 2 | - | - | 1 ok, 0 ok?, 1 OVER |')" \
    "none: only the A/A verdicts judged"
# GPU time, decided.  Beyond the events: (1000 - 700) - (700 - 600) = 200,
# (1900 - 1500) - (1150 - 900) = 150, (650 - 500) - (650 - 500) = 0.  Every
# batch timed is judged against 2 x cuEventElapsedTime (measured beside the
# passes: costs-gputime.txt) + 200 ns; without that figure it is not judged,
# and no number is made up for it.
ok "$(g 'below 64 ops (every batch timed): 3 rows, not judged: the bound is its two `cuEventRecord` plus the two `cuEventElapsedTime` it must ask plus 200 ns, and this run did not measure `cuEventElapsedTime` beside it; the judgement awaits a run that does')" \
    "GPU time, every batch: no cuEventElapsedTime beside the run, the judgement awaits one"
ok "$(g 'over 200 ns' | grep -qx 1; echo $?)" "GPU time, every batch: not judged against 200 ns alone"
ok "$(g '| `d2d` | 1 | 200 | - |')" "GPU time, every batch: its figure unmarked where not judged"
ok "$(g '*Not measured yet: the judgement awaits that run, its output copied into `bench/results/current/gputime-costs/`.*')" \
    "GPU time, decided: its section says the run is awaited"
# cuEventElapsedTime 60.5 ns beside the run: bound 2 x 60.5 + 200 = 321 ns
cat >"$C/costs-gputime.txt" <<'EOT'
# bench/costs: host cost of the shim's building blocks, ns per call (median of 31 rounds of 20000)
cuEventQuery, an event that completed                             141.8
cuEventElapsedTime, two events that completed                      60.5
cuEventRecord on an idle stream                                  1301.8
EOT
sed -i 's/^d2d,1,1000,700,/d2d,1,1121,700,/' "$C/overhead-gputime.csv"
# one batch in 16 keeps its own row and its 200 ns: (900 - 700) - (600 - 600) = 200
printf '%s\n' "$h" "d2d,1,900,600,ok,ok,-,2026-01-02 03:06:00 UTC" >"$C/overhead-gputime16.csv"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
ok "$(g 'below 64 ops (every batch timed): 0 of 3 rows over 321 ns (its two `cuEventElapsedTime`, 60.5 ns each, measured beside it, + 200 ns).')" \
    "GPU time, every batch: 321 ns at the bound 2 x 60.5 + 200 is within"
ok "$(g 'below 64 ops (one batch in 16): 0 of 1 rows over 200 ns.')" "GPU time, one in 16: its own row, 200 ns is within"
ok "$(g '| `d2d` | 1 | 321 | 200 |')" "GPU time: the table's figures at their bounds, unmarked"
sed -i 's/^d2d,1,1121,700,/d2d,1,1122,700,/' "$C/overhead-gputime.csv"
sed -i 's/^d2d,1,900,600,/d2d,1,901,600,/' "$C/overhead-gputime16.csv"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
ok "$(g 'below 64 ops (every batch timed): 1 of 3 rows over 321 ns')" "GPU time, every batch: 1 ns over the bound is over"
ok "$(g 'below 64 ops (one batch in 16): 1 of 1 rows over 200 ns.')" "GPU time, one in 16: 201 ns is over"
ok "$(g '| `d2d` | 1 | 322 (over) | 201 (over) |')" "GPU time: the table marks both over"
ok "$(g 'Bounds: every batch timed, 321 ns (2 × `cuEventElapsedTime` 60.5 ns, measured by `bench/costs` beside the passes in the same run, + 200 ns);')" \
    "GPU time: the table says its bound"
# a costs file without the cuEventElapsedTime line: not judged either
sed -i '/^cuEventElapsedTime/d' "$C/costs-gputime.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
ok "$(g 'below 64 ops (every batch timed): 3 rows, not judged')" "GPU time, every batch: a costs file without cuEventElapsedTime, not judged"
rm "$C/costs-gputime.txt" "$C/overhead-gputime16.csv"
# the run of bench/README.md's command, into current/gputime-costs/: judged, its section
mkdir -p "$C/gputime-costs"
printf '%s\n' "$h" "d2d,4,800,700,ok,ok,-,2026-01-05 00:00:00 UTC" >"$C/gputime-costs/overhead-session.csv"
printf '%s\n' "$h" "d2d,4,1200,800,ok,ok,-,2026-01-05 00:01:00 UTC" >"$C/gputime-costs/overhead-gputime.csv"
printf '%s\n' '# bench/costs' 'cuEventElapsedTime, two events that completed      150.0' >"$C/gputime-costs/costs-gputime.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
# (1200 - 800) - (800 - 700) = 300 <= 2 x 150 + 200 = 500
ok "$(g 'below 64 ops (gputime-costs/, every batch timed): 0 of 1 rows over 500 ns (its two `cuEventElapsedTime`, 150.0 ns each, measured beside it, + 200 ns).')" \
    "gputime-costs/: judged at the top"
ok "$(g 'Bound of every batch timed: 500 ns (2 × `cuEventElapsedTime` 150.0 ns')" "gputime-costs/: its section says the bound"
ok "$(g '| `d2d` | 4 | 300 | 0 |')" "gputime-costs/: its table"
ok "$(g 'files `gputime-costs/overhead-gputime.txt` and `gputime-costs/overhead-gputime.csv`')" "gputime-costs/: its passes' tables"
ok "$(g 'Not measured yet' | grep -qx 1; echo $?)" "gputime-costs/: no longer awaited"
ok "$(g 'Trace size (bytes per 1-op batch and per op against the floor): 1 of 2 kinds within.')" "trace size: kinds within counted"
ok "$(g '4000 batches 1.27 ×, 1000000 ops 1.14 ×.')" "the reader's ratios, per point"
# long-rows/: a call's passes counted with the others, its GPU time beyond
# its events on a line of its own, a pass whose text file is missing shown from its CSV
mkdir -p "$C/long-rows/call-x"
echo "bench/overhead-run --passes session,gputime BUILD OUT --budget 8" >"$C/long-rows/call-x/COMMAND"
printf '%s\n' "$h" "d2d,1,600,500,OVER,ok,-,2026-01-03 01:00:00 UTC" >"$C/long-rows/call-x/overhead-session.csv"
printf '%s\n' "$h" "d2d,1,1300,900,ok,ok,-,2026-01-03 01:01:00 UTC" >"$C/long-rows/call-x/overhead-gputime.csv"
: >"$C/long-rows/call-x/overhead-gputime.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
ok "$(g '| `long-rows/call-x/overhead-session` | 2026-01-03 01:00:00 UTC | 1 | 0 ok, 0 ok?, 1 OVER | 1 ok, 0 ok?, 0 OVER | - |')" \
    "long-rows: a call's session pass counted"
# (1300 - 600) - (900 - 500) = 300, no cuEventElapsedTime beside it
ok "$(g 'below 64 ops (long-rows/call-x/, every batch timed): 1 rows, not judged')" "long-rows: GPU time beyond its events, per call"
ok "$(g '| `d2d` | 1 | 300 | 0 |')" "long-rows: the call's beyond-events table"
ok "$(g "This pass's text file did not come back")" "long-rows: a pass without its text file says so"
ok "$(g 'Command: `bench/overhead-run --passes session,gputime BUILD OUT --budget 8`')" "long-rows: the call's command"
# processes/: a row judged over processes, counted at the top and tabled
mkdir -p "$C/processes/x"
echo "bench/abn.sh session OUT 2 BUILD -- --sizes 1" >"$C/processes/x/COMMAND"
printf '%s\n' "b 1 d2d 1 121 100 21 100 100 0" "b 2 d2d 1 121 100 21 100 100 0" >"$C/processes/x/all.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
ok "$(g 'Judged over processes (`processes/x/`, up to 2 processes a row, `bench/process-verdicts`): time 0 ok, 0 ok?, 1 OVER, 0 not judged; cpu 1 ok, 0 ok?, 0 OVER, 0 not judged.')" \
    "processes: the verdicts over processes counted at the top"
ok "$(g '| `d2d` | 1 | 2 | 21 | 1 [1, 1] | **OVER** | -20 [-20, -20] | ok |')" "processes: the row's verdicts tabled"
# the A/B runs go into the experiments document, not the first one
mkdir -p "$H/gputime-noqueue/h200"
echo "new 1 d2d 1 700 600 100 750 620 130" >"$H/gputime-noqueue/h200/all.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
bash "$top_srcdir/bench/report" --experiments "$R" >"$CBT_TMP/exp.md" 2>>"$CBT_TMP/perf.err"
ok "$(grep -q '^## GPU time: timed batches never queued' "$CBT_TMP/perf.md" && echo 1 || echo 0)" "an A/B run is not in the first document"
ok "$(grep -q '^new 1 d2d 1 700 600 100 750 620 130$' "$CBT_TMP/exp.md" && grep -q '^## GPU time: timed batches never queued' "$CBT_TMP/exp.md"; echo $?)" \
    "--experiments: the A/B run's table, under its title"
ok "$(grep -q 'Where the goals stand' "$CBT_TMP/exp.md" && echo 1 || echo 0)" "--experiments: not the goals' counts"
# the layout: a file left at the top of the results directory (the old flat
# layout) is not read; an older call's pass is read from history/ and named
# so; the experiments read history/, and current/profile.txt beside it
mkdir -p "$H/overhead-rerun" "$H/since-795145a"
printf '%s\n' "$h" "array,1,900,100,OVER,OVER,-,2025-09-09 09:09:09 UTC" >"$R/overhead-session.csv"
printf '%s\n' "$h" "array,4,800,700,ok,ok,-,2026-01-04 00:00:00 UTC" >"$H/overhead-rerun/overhead-session.csv"
printf '%s\n' '== session' 'CALLING THREAD TOTAL 11 22' >"$H/since-795145a/profile-795145a.txt"
printf '%s\n' '== session' 'CALLING THREAD TOTAL 33 44' >"$C/profile.txt"
bash "$top_srcdir/bench/report" "$R" >"$CBT_TMP/perf.md" 2>>"$CBT_TMP/perf.err"
bash "$top_srcdir/bench/report" --experiments "$R" >"$CBT_TMP/exp.md" 2>>"$CBT_TMP/perf.err"
ok "$(g '2025-09-09 09:09:09 UTC' | grep -qx 1; echo $?)" "a file at the top of the results directory is not read"
ok "$(g 'files `history/overhead-rerun/overhead-session.txt` and `history/overhead-rerun/overhead-session.csv`.'; )" \
    "an older call's pass read from history/, named so"
ok "$(g '| `array` | 4 | 0.00 |')" "the older call's table"
ok "$(grep -qx 'profile-795145a instructions 11 22' "$CBT_TMP/exp.md" && grep -qx 'profile instructions 33 44' "$CBT_TMP/exp.md" &&
      grep -qF '`current/profile.txt`' "$CBT_TMP/exp.md"; echo $?)" "--experiments: history/ beside current/profile.txt"
ok "$(head -n 15 "$CBT_TMP/perf.md" | grep -qF '**What is current:**' && head -n 15 "$CBT_TMP/perf.md" | grep -qF 'bench/results/current/'; echo $?)" \
    "the first screen says what is current"
ok "$(head -n 20 "$CBT_TMP/exp.md" | grep -qF '**This is history, not the current figures.**' &&
      head -n 20 "$CBT_TMP/exp.md" | grep -qF 'bench/results/history/INDEX.md'; echo $?)" "the experiments' first screen says they are history"
mkdir -p "$CBT_TMP/empty"
bash "$top_srcdir/bench/report" "$CBT_TMP/empty" >"$CBT_TMP/empty.md" 2>>"$CBT_TMP/perf.err"
ok "$(grep -c '^| table |' "$CBT_TMP/empty.md" | grep -qx 0 && grep -qF 'No overhead table in this directory.' "$CBT_TMP/empty.md"; echo $?)" \
    "a directory with no table: said so, no empty table"
is "$(cat "$CBT_TMP/perf.err")" "" "bench/report writes nothing to stderr"
done_testing
