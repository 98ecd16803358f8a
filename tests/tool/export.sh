#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace export`: the traces as SQLite tables (or CSV files) that say
# what `show` and `summary --json` say, row for row
# (tests/tool/export_compare.py): on handmade traces of every batch state and
# GPU times (tests/tool/mkbatches.py), and on the door clients' traces over
# the test double (3D and 1D batches, arrays, findings, exec'd images,
# threads, GPU times); the same filters; CSV files equal to the tables; and
# bad input: an existing or unwritable output refused in one line, a
# damaged trace leaving no database behind.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/doors/doors.sh"
MK="$top_srcdir/tests/tool/mkbatches.py"
CMP="$top_srcdir/tests/tool/export_compare.py"

# compare NAME TRACE [READ-OPTIONS...]: export, show and summary --json of
# TRACE with the same options, one test per figure of export_compare.py
compare() {
    _n=$1 _t=$2; shift 2
    rm -f "$CBT_TMP/$_n.sqlite"
    "$CBT" export -o "$CBT_TMP/$_n.sqlite" "$@" "$_t" >"$CBT_TMP/$_n.xout" 2>"$CBT_TMP/$_n.xerr"
    is "$?:$(cat "$CBT_TMP/$_n.xerr")" "0:" "$_n: export exits 0, nothing on stderr"
    "$CBT" show --records "$@" "$_t" >"$CBT_TMP/$_n.show" 2>/dev/null
    "$CBT" summary --json "$@" "$_t" >"$CBT_TMP/$_n.json" 2>/dev/null
    is "$(sed -n 's/^# batches: \([0-9]*\), ops: \([0-9]*\), findings: \([0-9]*\)$/\1 \2 \3/p' "$CBT_TMP/$_n.show")" \
        "$(sed -n 's/^# .*: batches: \([0-9]*\), ops: \([0-9]*\), findings: \([0-9]*\)$/\1 \2 \3/p' "$CBT_TMP/$_n.xout")" \
        "$_n: export says it wrote the batches, ops and findings show prints"
    "$PYTHON3" "$CMP" "$CBT_TMP/$_n.sqlite" "$CBT_TMP/$_n.show" "$CBT_TMP/$_n.json" >"$CBT_TMP/$_n.cmp" ||
        { ok 1 "$_n: export_compare.py ran"; return; }
    while IFS="$(printf '\t')" read -r _k _want _got; do
        is "$_got" "$_want" "$_n: $_k"
    done <"$CBT_TMP/$_n.cmp"
}
# export_error DESCRIPTION STATUS STDOUT-FILE STDERR-FILE PATTERN: exit 2, nothing on
# stdout, one line on stderr, "cubatchtrace export: ..." matching PATTERN
export_error() {
    is "$2" 2 "$1: exit status 2"
    is "$(wc -c <"$3" | tr -d ' ')" 0 "$1: nothing on stdout"
    is "$(wc -l <"$4" | tr -d ' ')" 1 "$1: exactly one line on stderr"
    grep -q "^cubatchtrace export: .*$5" "$4"; ok $? "$1: the line is 'cubatchtrace export: ...$5...'"
    [ $_tap_failed -eq 0 ] || sed 's/^/#   stderr: /' "$4"
}
q() { "$PYTHON3" -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$@"; }

# ---- usage
"$CBT" export --help >"$CBT_TMP/out" 2>&1; is $? 0 "export --help exits 0"
for o in --format --force --pid --begin; do
    grep -q -- "$o" "$CBT_TMP/out"; ok $? "export --help documents $o"
done
"$CBT" --help | grep -q '^  export '; ok $? "cubatchtrace --help lists export"
"$CBT" export -o "$CBT_TMP/x.sqlite" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "export without a trace" $? "$CBT_TMP/out" "$CBT_TMP/err" "no trace given" export
"$CBT" export "$CBT_TMP" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "export without -o" $? "$CBT_TMP/out" "$CBT_TMP/err" "no output given" export
"$CBT" export --format xml -o "$CBT_TMP/x" "$CBT_TMP" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
usage_error_lines "export --format xml" $? "$CBT_TMP/out" "$CBT_TMP/err" "expected sqlite or csv" export

# ---- handmade traces: every batch state, the reader's own counts; GPU times, late and of unknown batches
"$PYTHON3" "$MK" "$CBT_TMP/mal" malformed
compare mal "$CBT_TMP/mal"
is "$(q "$CBT_TMP/mal.sqlite" "SELECT state, count(*) FROM batch GROUP BY state ORDER BY state")" "complete|3
given_up|1
incomplete|1
malformed|7
no_header|1
pending|1" "malformed chunks: one row per batch, with its state"
is "$(q "$CBT_TMP/mal.sqlite" "SELECT value FROM meta WHERE key IN ('schema', 'formats', 'malformed_batches') ORDER BY key")" \
    "[2]
8
cubatchtrace-export" "meta: the schema, the event formats read and the reader's counts"
"$PYTHON3" "$MK" "$CBT_TMP/unread" unread
compare unread "$CBT_TMP/unread"
"$PYTHON3" "$MK" "$CBT_TMP/pitched" pitched
compare pitched "$CBT_TMP/pitched"
is "$(q "$CBT_TMP/pitched.sqlite" "SELECT i, side, row_length, layer_height, loc_type FROM op_pointer ORDER BY i")" "0|src|512|4|0
1|dst|0|0|1" "op_pointer: a row per pointer whose rowLength, layerHeight and locHint are not all 0, none for the others"
"$PYTHON3" "$MK" "$CBT_TMP/timed" timed 6
compare timed "$CBT_TMP/timed"
is "$(q "$CBT_TMP/timed.sqlite" "SELECT count(*), count(batch_key) FROM gpu_time")" "8|6" \
    "timed: a gpu_time row per GPU time, joined to its batch where the batch is in the trace"
is "$(q "$CBT_TMP/timed.sqlite" "SELECT count(*) FROM batch WHERE gpu_status = 'timed' AND gpu_end_ns - gpu_start_ns = gpu_ns")" \
    "$(q "$CBT_TMP/timed.sqlite" "SELECT count(*) FROM gpu_time WHERE status = 'timed' AND batch_key IS NOT NULL")" \
    "timed: each timed batch carries its GPU start and end"
# the process filter, as show and summary apply it
compare timed-pid "$CBT_TMP/timed" --pid 4242
# a filter that selects nothing is an error, as in every command: one line, exit 2, no file
"$CBT" export -o "$CBT_TMP/timed-otherpid.sqlite" --pid 1 "$CBT_TMP/timed" >/dev/null 2>"$CBT_TMP/otherpid.err"
is "$?:$(wc -l <"$CBT_TMP/otherpid.err")" "2:1" "--pid of another process: exit 2, one line"
grep -q 'no such process in this trace' "$CBT_TMP/otherpid.err"
ok $? "--pid of another process: the line says so"
is "$(ls "$CBT_TMP" | grep -c '^timed-otherpid')" 0 "--pid of another process: no database, no scratch file left"

# ---- the door clients over the test double
need_sessiond
traced "x3d-$$" "$CLIENTS/client_kinds"
compare kinds "$CBT_TMP/x3d-$$" --pid "$pid"
is "$(q "$CBT_TMP/kinds.sqlite" "SELECT count(*) > 0, count(*) = (SELECT count(*) FROM op WHERE src_type = 'ARRAY') + (SELECT count(*) FROM op WHERE dst_type = 'ARRAY') FROM op_array")" "1|1" \
    "op_array: a row per array operand"
traced "x1d-$$" "$CLIENTS/client_1d" dlsym_v2
compare 1d "$CBT_TMP/x1d-$$" --pid "$pid"
is "$(q "$CBT_TMP/1d.sqlite" "SELECT count(*), sum(k = 1 AND idx = 5 AND access_order = 'ANY') FROM attribute")" "5|1" \
    "1D batches: a row per attribute recorded, with its start index and order"
traced "xstrict-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" overlap
compare strict "$CBT_TMP/xstrict-$$" --pid "$pid"
is "$(q "$CBT_TMP/strict.sqlite" "SELECT count(*) > 0 FROM finding WHERE inline = 1")" 1 \
    "strict mode: findings the shim made inline too"
traced "xexec-$$" "$CLIENTS/client_exec" 3/2 exec 5/1 exec 7/3
compare exec "$CBT_TMP/xexec-$$" --pid "$pid"
is "$(q "$CBT_TMP/exec.sqlite" "SELECT group_concat(image || '/' || images_of_pid) FROM (SELECT * FROM process_image ORDER BY image)")" \
    "1/3,2/3,3/3" "exec: one process_image row per image, numbered as the summary numbers them"
traced "xthr-$$" "$CLIENTS/client_threads" 3 4
compare threads "$CBT_TMP/xthr-$$" --pid "$pid"
# the time window, as show and summary apply it: from the 3rd batch to the 8th (ts_ns: ns since the origin)
win() { q "$CBT_TMP/threads.sqlite" "SELECT printf('%d.%09d', ts_ns / 1000000000, ts_ns % 1000000000) FROM batch
    ORDER BY ts_ns LIMIT 1 OFFSET $1"; }
b=$(win 2) e=$(win 7)
compare threads-window "$CBT_TMP/xthr-$$" --pid "$pid" --begin "$b" --end "$e"
is "$(q "$CBT_TMP/threads-window.sqlite" "SELECT count(*) FROM batch")" 6 "--begin/--end: the batches of the window"
# with the statedump (session_alone), so that call sites are named
session_alone "xgpu-$$" || { echo "Bail out! cannot create the LTTng session xgpu-$$"; exit 1; }
traced_alone "xgpu-$$" env CUBATCHTRACE_GPU_TIME=1 "$CLIENTS/client_gputime" ok 5 >/dev/null 2>&1
cbt_session_stop "xgpu-$$"
compare gputime "$CBT_TMP/xgpu-$$" --pid "$pid"
is "$(q "$CBT_TMP/gputime.sqlite" "SELECT count(*) FROM batch WHERE gpu_status = 'timed' AND gpu_start_ns IS NOT NULL")" 5 \
    "GPU time: every batch timed, its start and end on the trace's clock"
is "$(q "$CBT_TMP/gputime.sqlite" "SELECT count(*) FROM call_site WHERE function IS NOT NULL")" \
    "$(q "$CBT_TMP/gputime.sqlite" "SELECT count(*) FROM call_site")" "call sites named from the statedump"
is "$(q "$CBT_TMP/gputime.sqlite" "SELECT count(*) > 0 FROM call_site")" 1 "call sites: a row each"

# ---- CSV: one file per table, equal to the tables
"$CBT" export --format csv -o "$CBT_TMP/csv" --pid "$pid" "$CBT_TMP/xgpu-$$" >/dev/null 2>"$CBT_TMP/err"
is "$?:$(cat "$CBT_TMP/err")" "0:" "--format csv exits 0, nothing on stderr"
is "$(cd "$CBT_TMP/csv" && ls -A | tr '\n' ' ')" \
    "allocation.csv attribute.csv batch.csv call_site.csv finding.csv gpu_time.csv meta.csv op.csv process_image.csv stream.csv thread.csv " \
    "--format csv: one file per table, nothing else"
"$PYTHON3" - "$CBT_TMP/gputime.sqlite" "$CBT_TMP/csv" >"$CBT_TMP/csvcmp" <<'EOF'
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for t in ("process_image", "thread", "stream", "batch", "op", "attribute", "finding", "gpu_time", "call_site", "allocation"):
    cur = db.execute("SELECT * FROM " + t)
    want = [[d[0] for d in cur.description]] + [["" if v is None else str(v) for v in r] for r in cur]
    got = list(csv.reader(open("%s/%s.csv" % (sys.argv[2], t), newline="")))
    print("%s\t%d\t%s" % (t, len(want), len(got) if got == want else "differs"))
EOF
while IFS="$(printf '\t')" read -r t want got; do
    is "$got" "$want" "CSV $t.csv: the table's rows, header first"
done <"$CBT_TMP/csvcmp"
"$CBT" export --format csv -o "$CBT_TMP/csv" "$CBT_TMP/timed" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
export_error "--format csv into an existing directory" $? "$CBT_TMP/out" "$CBT_TMP/err" "exists: not replaced (--force"
"$CBT" export --format csv --force -o "$CBT_TMP/csv" "$CBT_TMP/timed" >/dev/null 2>&1
is "$?:$(($(wc -l <"$CBT_TMP/csv/batch.csv") - 1))" "0:6" "--format csv --force: the files replaced"

# ---- bad input
echo keep >"$CBT_TMP/exists.sqlite"
"$CBT" export -o "$CBT_TMP/exists.sqlite" "$CBT_TMP/timed" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
export_error "an existing output" $? "$CBT_TMP/out" "$CBT_TMP/err" "exists: not replaced (--force replaces it)"
is "$(cat "$CBT_TMP/exists.sqlite")" keep "an existing output is left as it was"
"$CBT" export --force -o "$CBT_TMP/exists.sqlite" "$CBT_TMP/timed" >/dev/null 2>&1
is "$?:$(q "$CBT_TMP/exists.sqlite" "SELECT count(*) FROM batch")" "0:6" "--force replaces it"
mkdir -p "$CBT_TMP/ro"
chmod a-w "$CBT_TMP/ro"
if touch "$CBT_TMP/ro/probe" 2>/dev/null; then
    rm -f "$CBT_TMP/ro/probe"
    ok 0 "# SKIP an unwritable directory: running as a user that writes anywhere"
else
    "$CBT" export -o "$CBT_TMP/ro/x.sqlite" "$CBT_TMP/timed" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    export_error "an unwritable output" $? "$CBT_TMP/out" "$CBT_TMP/err" "cannot write $CBT_TMP/ro/x.sqlite"
fi
# where nobody may create a file (root too)
"$CBT" export -o /proc/cbt-export-$$.sqlite "$CBT_TMP/timed" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
export_error "an output where no file can be made (/proc)" $? "$CBT_TMP/out" "$CBT_TMP/err" "cannot write /proc/cbt-export-$$.sqlite"
"$CBT" export -o "$CBT_TMP/nodir/x.sqlite" "$CBT_TMP/timed" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
export_error "an output in a missing directory" $? "$CBT_TMP/out" "$CBT_TMP/err" "cannot write $CBT_TMP/nodir/x.sqlite"
"$CBT" export -o "$CBT_TMP/none.sqlite" "$CBT_TMP/nothing-here" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 2 "a missing trace: exit 2"
is "$(ls "$CBT_TMP" | grep -c '^none\.sqlite')" 0 "a missing trace: no database, no scratch file left"
# damaged copies: either a whole database or none (no scratch file left either)
"$PYTHON3" "$top_srcdir/tests/tool/damage.py" --make "$CBT_TMP/xstrict-$$" "$CBT_TMP/dmg" 12 1 >"$CBT_TMP/dmg.list"
while IFS="$(printf '\t')" read -r seed kind; do
    rm -f "$CBT_TMP/dmg.sqlite"
    CUBATCHTRACE_TIMEOUT=10 "$CBT" export -o "$CBT_TMP/dmg.sqlite" "$CBT_TMP/dmg/seed-$seed" >/dev/null 2>"$CBT_TMP/err"
    st=$?
    left=$(ls "$CBT_TMP" | grep -c '^dmg\.sqlite\.tmp-')
    if [ $st -eq 0 ]; then
        is "$left:$(q "$CBT_TMP/dmg.sqlite" "SELECT value FROM meta WHERE key = 'schema'")" "0:cubatchtrace-export" \
            "damaged ($kind, seed $seed): read, a whole database"
    else
        is "$st:$left:$(test -e "$CBT_TMP/dmg.sqlite"; echo $?):$(wc -l <"$CBT_TMP/err" | tr -d ' ')" "2:0:1:1" \
            "damaged ($kind, seed $seed): exit 2, one line, no database and no scratch file left"
    fi
done <"$CBT_TMP/dmg.list"
# the guard ends the process (a live peer that never answers: the watchdog):
# its scratch database is removed on the way out
"$PYTHON3" - "$CBT_TMP/port" <<'EOF2' &
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(1)
held, end = [], time.monotonic() + 60
while time.monotonic() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
EOF2
mute=$!
i=0
while [ ! -s "$CBT_TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url="net://127.0.0.1:$(cat "$CBT_TMP/port")/host/none/s"
CUBATCHTRACE_TIMEOUT=2 "$CBT" export -o "$CBT_TMP/mute.sqlite" "$url" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
export_error "a live peer that never answers" $? "$CBT_TMP/out" "$CBT_TMP/err" "no answer in 2 s"
is "$(ls "$CBT_TMP" | grep -c '^mute\.sqlite')" 0 "a live peer that never answers: no database, no scratch file left"
kill "$mute" 2>/dev/null
wait "$mute" 2>/dev/null
# a reading out of memory (CUBATCHTRACE_MAX_MEMORY): its scratch database removed too
if no_memory_limit; then
    skip "out of memory (CUBATCHTRACE_MAX_MEMORY=1): the memory limit is off in a $CBT_SANITIZER build"
else
    CUBATCHTRACE_MAX_MEMORY=1 "$CBT" export -o "$CBT_TMP/mem.sqlite" "$CBT_TMP/timed" >/dev/null 2>"$CBT_TMP/err"
    is "$?:$(ls "$CBT_TMP" | grep -c '^mem\.sqlite')" "2:0" "out of memory: exit 2, nothing left behind"
fi
done_testing
