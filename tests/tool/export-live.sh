#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace export` of a live session (an LTTng live URL, as summary
# reads it): a local lttng-relayd, a live session streaming to it, export
# attached while a program runs; once the session is destroyed export ends,
# and the rows it wrote for that program equal those of the export of the
# finished trace the relay daemon wrote (and show's of it, export.sh says
# the rest).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/job.sh"
need_sessiond
RELAYD=${LTTNG_RELAYD:-$(command -v lttng-relayd 2>/dev/null || true)}
[ -n "$RELAYD" ] || skip_all "lttng-relayd (lttng-tools) not installed"
C="$top_builddir/tests/clients"

relay_start || { echo "Bail out! lttng-relayd did not start: $(cat "$CBT_TMP/relayd.log")"; exit 1; }
S=x-live-$$
session_alone "$S" --live "$RELAY_URL" || { echo "Bail out! cannot set up the live session"; exit 1; }
# a first program makes the session's streams (a reader attaching to a
# session without any can wait past its end); then export attaches
traced_alone "$S" "$C/client_threads" >/dev/null 2>&1
URL="$RELAY_LIVE/host/$(hostname)/$S"
CUBATCHTRACE_TIMEOUT=120 "$CBT" export -o "$CBT_TMP/live.sqlite" "$URL" >"$CBT_TMP/live.out" 2>"$CBT_TMP/live.err" &
reader=$!
clients() { sh "$top_srcdir/tests/tool/relay-readers.sh" "$RELAY_LIVE" "$S"; }
i=0
while [ "$(clients)" != 1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
is "$(clients)" 1 "export is attached to the live session before the program it is checked on runs"
traced_alone "$S" env CUBATCHTRACE_MODE=strict "$C/client_strict" table >/dev/null 2>&1
p=$pid
"$LTTNG" stop "$S" >/dev/null
"$LTTNG" destroy "$S" >/dev/null
wait $reader
is "$?:$(cat "$CBT_TMP/live.err")" "0:" "export of the live URL ends by itself, status 0, once the session is destroyed"
grep -q "live.sqlite: batches: [1-9]" "$CBT_TMP/live.out"; ok $? "export says what it wrote"
T=$(dirname "$(dirname "$(find "$CBT_TMP/relay" -name metadata | head -1)")")
"$CBT" export -o "$CBT_TMP/done.sqlite" --pid "$p" "$T" >/dev/null 2>&1
is "$?" 0 "export of the finished trace the relay daemon wrote"
# rows of program p, keys left out: batches, ops and findings
rows() {
    "$PYTHON3" - "$1" "$p" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
pk = "SELECT process_key FROM process_image WHERE pid = %d" % int(sys.argv[2])
for t, order in (("batch", "b.batch_key"), ("op", "b.batch_key, o.i"), ("finding", "b.batch_key, o.finding_key")):
    src = "batch b" if t == "batch" else "%s o JOIN batch b USING (batch_key)" % t
    sel = "b.*" if t == "batch" else "o.*"
    cur = db.execute("SELECT %s FROM %s WHERE b.process_key IN (%s) ORDER BY %s" % (sel, src, pk, order))
    names = [d[0] for d in cur.description]
    for r in cur:
        print(t, {k: v for k, v in zip(names, r) if not k.endswith("_key")})
PY
}
rows "$CBT_TMP/done.sqlite" >"$CBT_TMP/done.rows"
rows "$CBT_TMP/live.sqlite" >"$CBT_TMP/live.rows"
is "$(grep -c '^batch ' "$CBT_TMP/done.rows") $(grep -c '^finding ' "$CBT_TMP/done.rows")" "$(grep -c '^batch ' "$CBT_TMP/live.rows") $(grep -c '^finding ' "$CBT_TMP/live.rows")" \
    "live: as many batch and finding rows of the program as the finished trace's"
grep -q '^finding ' "$CBT_TMP/done.rows"; ok $? "the program made findings (client_strict table)"
cmp -s "$CBT_TMP/done.rows" "$CBT_TMP/live.rows"; ok $? "live: the program's batch, op and finding rows equal the finished trace's"
relay_stop
done_testing
