#!/bin/sh
# SPDX-License-Identifier: MIT
# Pins the test double's 1D batch call (cuMemcpyBatchAsync and its 12.8 ABI)
# to what an H200 answered.  The client that measured the H200,
# tests/gpu/clients/table1d.c, runs here over the double, and every line of
# the measurement, tests/gpu/measured/table1d-h200.txt, is compared with the
# double's line for the same row and door: kind, rc, failIdx, the two
# synchronizations, which copies arrived, the signal of a crash.  The
# measurement is the only source of expected answers.
#
# Rows the double cannot model are skipped by name, never by their answer:
#  - deferred_*: the double performs every copy during the call, so it
#    cannot show a STREAM-ordered copy from pinned memory reading its source
#    later, when the stream gets to it;
#  - doors v2as1, v1as2-ninthstream, v1as2-ninthgarbage: each function called
#    with the other's arguments, so that the driver takes a pointer to a
#    stack variable or the stream object for its stream, or garbage for
#    either.  The H200 dereferences them and crashes; the double looks
#    handles up in its own lists instead.  v1as2-ninth0 (the 12.8 function
#    given a NULL stream) is compared like any other row.
. "$top_srcdir/tests/lib.sh"

CLIENT=$top_builddir/tests/gpu/table1d
TABLE=$top_srcdir/tests/gpu/measured/table1d-h200.txt
[ -x "$CLIENT" ] || skip_all "tests/gpu/table1d is not built"
[ -r "$TABLE" ] || skip_all "no measured table at $TABLE"

# The answers of the fields that decide a row, in one order, per "row@door".
answers() {
    awk '$1 == "ROW" {
        door = ""; out = ""
        for (i = 3; i <= NF; i++) {
            k = $i; sub(/=.*/, "", k); v = substr($i, length(k) + 2)
            if (k == "door") door = v
            else if (k == "kind" || k == "rc" || k == "failidx" || k == "sync" || k == "ctxsync" ||
                     k == "arrived" || k == "sig" || k == "code")
                out = out (out == "" ? "" : " ") k "=" v
        }
        print $2 "@" door "\t" out
    }' "$1"
}

LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$CLIENT" run >"$CBT_TMP/double.txt" 2>"$CBT_TMP/double.err"
is "$?" 0 "table1d run over the double exits 0"
answers "$TABLE" >"$CBT_TMP/want"
answers "$CBT_TMP/double.txt" >"$CBT_TMP/got"
rows=$(wc -l <"$CBT_TMP/want")
[ "$rows" -gt 0 ]; ok $? "the measured table has rows ($rows)"

# want and got side by side, in the table's order; "(no answer)" when the
# double's run printed nothing for that row and door.
awk -F '\t' 'NR == FNR { got[$1] = $2; next } { print $1 "\t" $2 "\t" (($1 in got) ? got[$1] : "(no answer)") }' \
    "$CBT_TMP/got" "$CBT_TMP/want" >"$CBT_TMP/pairs"

while IFS='	' read -r key want got; do
    row=${key%@*}
    door=${key##*@}
    why=""
    case $row in
    deferred_*) why="the double copies during the call: a stream-ordered read of pinned memory cannot come later" ;;
    esac
    case $door in
    v2as1 | v1as2-ninthstream | v1as2-ninthgarbage)
        why="mixed-up signature: the H200 dereferences what it takes for a stream or failIdx and crashes; the double looks handles up" ;;
    esac
    if [ -n "$why" ]; then
        echo "ok $((_tap_n = _tap_n + 1)) - $key: $want # SKIP $why"
    else
        is "$got" "$want" "$key: $want"
    fi
done <"$CBT_TMP/pairs"

# Rows the client has and the measurement has not: reported, not judged.
awk -F '\t' 'NR == FNR { want[$1] = 1; next } !($1 in want) { print "double only, not measured: " $1 " " $2 }' \
    "$CBT_TMP/want" "$CBT_TMP/got" | while read -r line; do diag "$line"; done
done_testing
