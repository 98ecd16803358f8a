#!/bin/sh
# SPDX-License-Identifier: MIT
# Pins the test double's graph capture to what an H200 answered.  The client
# that measured it, tests/gpu/clients/capture.c, runs here over the double
# with the same arguments as every line of tests/gpu/measured/capture-h200.txt
# (a batch on a capturing stream in each capture mode, 3D and 1D, valid,
# empty, malformed, on an unmapped source, on the legacy stream; another
# thread's GLOBAL capture while batches are made; the probe of the calls the
# shim makes against an active capture), and each line must come back equal.
# The measurement is the only source of expected answers.
. "$top_srcdir/tests/lib.sh"

CLIENT=$top_builddir/tests/gpu/capture
TABLE=$top_srcdir/tests/gpu/measured/capture-h200.txt
[ -x "$CLIENT" ] || skip_all "tests/gpu/capture is not built"
[ -r "$TABLE" ] || skip_all "no measured table at $TABLE"
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

n=0
grep '^CAPTURE ' "$TABLE" >"$CBT_TMP/rows"
while IFS= read -r want; do
    mode=$(field "$want" mode)
    kind=$(field "$want" kind)
    got=$("$CLIENT" batch "$mode" "$kind" 2>&1 | grep '^CAPTURE ')
    # the unmapped rows: the H200 answered in a forked child ("child"), as the double does
    is "$got" "$want" "capture $mode $kind: the double answers as the H200"
    n=$((n + 1))
done <"$CBT_TMP/rows"
[ "$n" -ge 30 ]; ok $? "the measured table has its batch rows ($n)"

grep '^OTHER ' "$TABLE" >"$CBT_TMP/other"
while IFS= read -r want; do
    kind=$(field "$want" kind)
    got=$("$CLIENT" other "$kind" "$(field "$want" n)" 2>&1 | grep '^OTHER ')
    is "$got" "$want" "another thread's GLOBAL capture while this one makes $kind batches: as on the H200"
done <"$CBT_TMP/other"

# The probe: every call the shim makes, against an ACTIVE capture, from the
# capturing thread, another thread, and another thread in RELAXED mode.
"$CLIENT" probe >"$CBT_TMP/probe" 2>&1
is "$?" 0 "the probe runs over the double"
grep '^PROBE ' "$TABLE" >"$CBT_TMP/probe.want"
grep '^PROBE ' "$CBT_TMP/probe" >"$CBT_TMP/probe.got"
is "$(wc -l <"$CBT_TMP/probe.got")" "$(wc -l <"$CBT_TMP/probe.want")" "the probe makes as many calls as on the H200"
while IFS= read -r want; do
    key=$(echo "$want" | sed 's/ rc=.*//')
    got=$(grep -F "$key rc=" "$CBT_TMP/probe.got" | head -n 1)
    is "$got" "$want" "probe: ${key#PROBE }"
done <"$CBT_TMP/probe.want"
done_testing
