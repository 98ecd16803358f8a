#!/bin/sh
# SPDX-License-Identifier: MIT
# --begin/--end +SECONDS: an offset from the trace's start (its earliest
# stream), in every reading command; absolute times as before.  Two runs of
# the generator 2 s apart: +1 s falls between them.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session wo || { ok 1 "session starts"; done_testing; }
gen_run wo n=3,ops=1
sleep 2
gen_run wo n=5,ops=1
gen_stop wo
T=$(trace_of wo)
P=$(pids_of wo)

batches() { "$CBT" summary --json $P "$@" "$T" | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["batches"])' 2>&1; }
is "$(batches)" 8 "no window: the 8 batches of both runs"
is "$(batches --begin +0)" 8 "--begin +0: from the trace's start, every batch"
is "$(batches --end +1)" 3 "--end +1: the first run's 3 batches"
is "$(batches --begin +1)" 5 "--begin +1: the second run's 5 batches"
is "$(batches --begin +1.0 --end +3600)" 5 "--begin +1.0 --end +3600"
is "$(batches --jobs 1 --end +1)" 3 "--jobs 1 --end +1: the same"
is "$("$CBT" show --records $P --end +1 "$T" | grep -c '^batch ')" 3 "show --end +1: the first run's batches"
"$CBT" check $P --begin +1 "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 0 "check --begin +1: exit 0"
"$CBT" timeline -o "$CBT_TMP/tl.json" $P --end +1 "$T" 2>"$CBT_TMP/err"
is "$?" 0 "timeline --end +1: exit 0"
# the same window as an absolute time: the trace's start from babeltrace2's own query
start=$("$BABELTRACE2" query src.ctf.fs babeltrace.trace-infos -p "inputs=[\"$(dirname "$(find "$T" -name metadata | head -1)")\"]" 2>/dev/null |
    sed -n 's/^ *begin: *\([0-9]*\)$/\1/p' | sort -n | head -1)
abs=$("$PYTHON3" -c 'import sys; t=int(sys.argv[1])+10**9; print("%d.%09d" % (t//10**9, t%10**9))' "$start")
is "$(batches --end "$abs")" 3 "--end at the start + 1 s, absolute: the same 3 batches"
"$CBT" summary --begin +x "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "--begin +x" $? "$CBT_TMP/out" "$CBT_TMP/err" "+SECONDS"
"$CBT" summary --begin +100000 "$T" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
one_line_error "--begin +100000, after the trace's end" $? "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events"
"$CBT" summary --help | grep -q '+SECONDS'; ok $? "summary --help documents +SECONDS"
done_testing
