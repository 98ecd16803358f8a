#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace run` when nothing is recorded, and the time windows of the
# reading commands.
#  - a program that cannot be executed: one line, exit 127, no trace kept,
#    nothing on stdout;
#  - a program that makes no batch: one line saying so instead of an empty
#    summary (with --json the JSON is still printed);
#  - --begin/--end (babeltrace2's trimmer) on a trace of the demo run twice,
#    a pause between: a window around each run counts that run's 6 batches
#    only, for summary, check and show; a window before the first event is
#    one line and exit 2.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
DEMO="$top_builddir/examples/demo"
[ -x "$DEMO" ] || skip_all "examples/demo not built"

"$CBT" run -o "$CBT_TMP/none" -- "$CBT_TMP/no-such-program" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 127 "run -- a program that does not exist: exit 127"
is "$(cat "$CBT_TMP/err")" "cubatchtrace run: cannot execute $CBT_TMP/no-such-program: No such file or directory: nothing was recorded" \
   "one line says it could not be executed and that nothing was recorded"
is "$(wc -c <"$CBT_TMP/out" | tr -d ' ')" 0 "nothing on stdout (no empty summary)"
[ ! -e "$CBT_TMP/none" ]; ok $? "no trace directory is left"

"$CBT" run -o "$CBT_TMP/true" -- true >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 0 "run -- true: the program's status 0"
grep -q "^cubatchtrace run: true made no batch copy (3D or 1D) that reached the shim: nothing was recorded" "$CBT_TMP/err"
ok $? "stderr says the program made no batch"
is "$(wc -c <"$CBT_TMP/out" | tr -d ' ')" 0 "no empty summary on stdout"
"$CBT" run -o "$CBT_TMP/truej" --json -- true >"$CBT_TMP/out" 2>"$CBT_TMP/err"
grep -q "made no batch copy (3D or 1D)" "$CBT_TMP/err"; ok $? "--json: stderr says so too"
is "$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["batches"])' "$CBT_TMP/out")" 0 \
   "--json: the JSON is still printed, with 0 batches"

# two runs of the demo, 1.5 s apart
"$CBT" run -o "$CBT_TMP/two" -- sh -c "\"$DEMO\" && sleep 1.5 && \"$DEMO\"" >/dev/null 2>&1
is "$?" 0 "the demo twice under one run"
# the batch events' times (a batch's first event: `b` or `bs`, `c` or `cs` for a 1D batch)
"$BABELTRACE2" --clock-seconds "$CBT_TMP/two" 2>/dev/null | grep -E ' cubatchtrace:(b|bs|c|cs): ' |
    sed 's/^\[\([0-9.]*\)\].*vpid = \([0-9]*\),.*/\2 \1/' >"$CBT_TMP/times"
is "$(cut -d' ' -f1 "$CBT_TMP/times" | sort -u | wc -l | tr -d ' ')" 2 "two processes made batches"
p1=$(head -1 "$CBT_TMP/times" | cut -d' ' -f1)
end1=$(grep "^$p1 " "$CBT_TMP/times" | tail -1 | cut -d' ' -f2)
begin2=$(grep -v "^$p1 " "$CBT_TMP/times" | head -1 | cut -d' ' -f2)
first=$(head -1 "$CBT_TMP/times" | cut -d' ' -f2)
diag "first run ends at $end1 s, the second begins at $begin2 s"
batches() { "$CBT" summary --json "$@" "$CBT_TMP/two" | "$PYTHON3" -c 'import json,sys; d=json.load(sys.stdin); print(d["batches"], d["processes"])'; }
is "$(batches)" "12 2" "no window: 12 batches of 2 processes"
is "$(batches --end "$end1")" "6 1" "--end at the first run's last batch: its 6 batches"
is "$(batches --begin "$begin2")" "6 1" "--begin at the second run's first batch: its 6 batches"
is "$(batches --begin "$first" --end "$end1")" "6 1" "--begin and --end around the first run"
"$CBT" check --begin "$begin2" "$CBT_TMP/two" >"$CBT_TMP/check.out" 2>&1
is "$?" 1 "check --begin: the second run's hazard"
is "$(grep -c '^hazard' "$CBT_TMP/check.out")" 1 "check --begin: one finding, the second run's"
is "$("$CBT" show --records --end "$end1" "$CBT_TMP/two" | grep -c '^batch ')" 6 "show --end: the first run's 6 batches"
"$CBT" summary --end 1 "$CBT_TMP/two" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a window before the first event" $? "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events between --begin (the start) and --end 1"
"$CBT" summary --begin yesterday "$CBT_TMP/two" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "a time babeltrace2 does not read" $? "$CBT_TMP/out" "$CBT_TMP/err" "begin"
done_testing
