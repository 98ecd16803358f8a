#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace show --begin/--end` (and `summary`) on a handmade trace whose
# times are known (tests/tool/mkbatches.py timed 6: batch i at (i + 1) ms
# after the clock's offset, 1764500000 s): the batches of the window and only
# those, exit 0, nothing on stderr.  babeltrace2's trimmer, which makes the
# window, needs packets with beginning times (2.0.4's seek crashes without
# them), as LTTng writes them.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
MK="$top_srcdir/tests/tool/mkbatches.py"
T0=1764500000

"$PYTHON3" "$MK" "$CBT_TMP/timed" timed 6
# window NAME OPTIONS WANT-IDS: show's batch ids with these options
window() {
    _n=$1 _w=$3; shift
    eval "set -- $1"
    "$CBT" show --records "$@" "$CBT_TMP/timed" >"$CBT_TMP/$_n.out" 2>"$CBT_TMP/$_n.err"
    is "$?:$(cat "$CBT_TMP/$_n.err")" "0:" "$_n: show exits 0, nothing on stderr"
    is "$(sed -n 's/^batch vpid=[0-9]* id=\([0-9]*\) .*/\1/p' "$CBT_TMP/$_n.out" | sort -n | tr '\n' ' ')" "$_w" \
        "$_n: the batches of the window"
    is "$(grep -c '^op ' "$CBT_TMP/$_n.out")" "$(($(echo $_w | wc -w) * 2))" "$_n: their ops, 2 each"
}
window whole "" "0 1 2 3 4 5 "
window begin "--begin $T0.0025" "2 3 4 5 "
window end "--end $T0.0035" "0 1 2 "
window both "--begin $T0.0025 --end $T0.0045" "2 3 "
"$CBT" show --begin "$T0" --end "$T0.0005" "$CBT_TMP/timed" >"$CBT_TMP/none.out" 2>"$CBT_TMP/none.err"
is "$?:$(grep -vc '^#' "$CBT_TMP/none.out")" "2:0" "a window before the first batch: exit 2, no record"
grep -q "no cubatchtrace events between --begin $T0 and --end $T0.0005" "$CBT_TMP/none.err"
ok $? "a window before the first batch: says so"
"$CBT" summary --begin "$T0.0025" --end "$T0.0045" "$CBT_TMP/timed" >"$CBT_TMP/sum.out" 2>"$CBT_TMP/sum.err"
is "$?:$(cat "$CBT_TMP/sum.err")" "0:" "summary --begin --end: exits 0, nothing on stderr"
is "$(grep '^# batches:' "$CBT_TMP/sum.out" | head -1)" "# batches: 2" "summary --begin --end: the 2 batches of the window"
done_testing
