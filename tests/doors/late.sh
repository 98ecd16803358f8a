#!/bin/sh
# SPDX-License-Identifier: MIT
# A session that starts while the program runs and another session already
# records it.  Tracing was on for the program all along, so nothing tells
# its threads to write their dictionaries again but the refresh: each thread
# writes its operand and stream entries again on first use once a second
# (CBT_EV_DICT_REFRESH_NS, docs/events.md), also on the steady path that
# batches like the previous one take.  So the late session decodes every
# batch from one refresh after it started: the stream and the operands'
# memory known.  Its batches before that name entries it never saw: unknown
# memory (and they are there, counted).  The session that ran from the
# start decodes every batch.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
CBT="$top_builddir/tools/cubatchtrace"
N=90 MS=40 # 3.6 s of batches, one every 40 ms, on one stream, the same memory (the late session
# may start a second late on a loaded machine: 10 batches or more still follow its refresh)

A=lateA-$$ B=lateB-$$
cbt_session_start "$A" || { echo "Bail out! cannot create the LTTng session $A"; exit 1; }
( env() { exec env "$@"; }; cbt_run "$CLIENTS/client_loss" paced $N $MS ) >"$CBT_TMP/late.out" 2>"$CBT_TMP/late.err" &
pid=$!
made() { grep -c '^returned' "$CBT_TMP/late.out"; }
# the late session: once 10 batches were made (0.4 s in, before the first refresh)
i=0
while [ $i -lt 400 ] && [ "$(made)" -lt 10 ]; do sleep 0.05; i=$((i + 1)); done
b0=$(made)
cbt_session_start "$B" || { echo "Bail out! cannot create the LTTng session $B"; exit 1; }
b1=$(made)
wait $pid
st=$?
cbt_session_stop "$B"
cbt_session_stop "$A"
is "$st" 0 "the program made its $N batches and exited 0"

"$CBT" show --records --pid "$pid" "$CBT_TMP/$A" >"$CBT_TMP/a.show" 2>"$CBT_TMP/a.err"
"$CBT" show --records --pid "$pid" "$CBT_TMP/$B" >"$CBT_TMP/b.show" 2>"$CBT_TMP/b.err"
# decoded: the batch's stream id known and both operands device memory
decoded() {
    awk '$1 == "batch" { for (i = 2; i <= NF; i++) if ($i ~ /^stream_id=/) { split($i, kv, "="); sid[$3] = kv[2] } }
         $1 == "op" { ok[$3] = ($0 ~ / src=POINTER:device:/ && $0 ~ / dst=POINTER:device:/) }
         END { for (id in sid) print substr(id, 4), (sid[id] != 0 && ok[id]) ? "decoded" : "unknown" }' "$1" | sort -n
}
decoded "$CBT_TMP/a.show" >"$CBT_TMP/a.dec"
decoded "$CBT_TMP/b.show" >"$CBT_TMP/b.dec"
is "$(grep -c decoded "$CBT_TMP/a.dec")" "$N" "the session there from the start decodes all $N batches"
nb=$(wc -l <"$CBT_TMP/b.dec" | tr -d ' ')
[ "$nb" -ge $((N - b1 - 1)) ] && [ "$nb" -le $((N - b0)) ]
ok $? "the late session holds the batches made after it started ($nb; $b0 to $b1 were made before)"
is "$(head -1 "$CBT_TMP/b.dec" | cut -d' ' -f2)" unknown \
    "its first batch names dictionary entries written before it started: unknown memory"
# one refresh after the late session started: at most 1 s, at most 25 batches
# (the pace only slows down), and 5 more for margin
tail_n=$((nb - 30))
[ "$tail_n" -ge 10 ] && [ "$(tail -n "$tail_n" "$CBT_TMP/b.dec" | grep -c decoded)" = "$tail_n" ]
ok $? "from one refresh after it started, it decodes every batch (the last $tail_n of $nb)"
is "$(cat "$CBT_TMP/a.err" "$CBT_TMP/b.err")" "" "both traces read without a word on stderr"
done_testing
