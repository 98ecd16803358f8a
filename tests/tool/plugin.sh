#!/bin/sh
# SPDX-License-Identifier: MIT
# The babeltrace2 plugin (filter.cubatchtrace.expand) in babeltrace2's own
# command line, on traces the suite makes:
#  - it is listed, and takes no parameters;
#  - its events, field for field, are what `cubatchtrace show` prints for the
#    same trace (tests/tool/expand_show.py writes each event as show's line):
#    handmade traces of every batch state (tests/tool/mkbatches.py), then the
#    door tests' clients under the shim over the test double;
#  - every other event passes through untouched (same text, same order);
#  - it composes: a time window (flt.utils.trimmer) gives what `show --begin
#    --end` gives; flt.lttng-utils.debug-info after it and sink.text.details;
#    sink.ctf.fs writes an expanded trace that plain babeltrace2 (no plugin)
#    reads back with the same events and counts.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
[ -n "${BABELTRACE2:-}" ] || skip_all "babeltrace2 not installed"
[ -n "${PYTHON3:-}" ] || skip_all "python3 not installed"
PLUG="$top_builddir/tools/plugin/.libs"
XS="$PYTHON3 $top_srcdir/tests/tool/expand_show.py"
MK="$top_srcdir/tests/tool/mkbatches.py"
unset BABELTRACE_PLUGIN_PATH
# bt ARGS...: babeltrace2 with the plugin of this build tree, the expand filter after the muxer
bt() { "$BABELTRACE2" --plugin-path="$PLUG" --no-delta "$@" -c filter.cubatchtrace.expand; }
# consumed: the events of a batch, which the filter takes in and expands
CONSUMED=' cubatchtrace:(b|bs|bo|c|cs|co|ca|operand|stream|batch|batch_ops|batch1d|batch_attrs|batch_end|finding): '
# the events of the filter's own trace: its common context is vpid and ip, with no packet context before it
OWN=' [a-z_.]+:[a-z_0-9]+: \{ vpid = -?[0-9]+, ip = 0x[0-9A-F]+ \}, \{'

# ---- the plugin, as babeltrace2 lists it
"$BABELTRACE2" --plugin-path="$PLUG" list-plugins >"$CBT_TMP/list" 2>&1
grep -q "'filter.cubatchtrace.expand'" "$CBT_TMP/list"; ok $? "list-plugins (--plugin-path to the build tree) lists filter.cubatchtrace.expand"
"$BABELTRACE2" --plugin-path="$PLUG" help filter.cubatchtrace.expand >"$CBT_TMP/help" 2>&1
is "$?" 0 "babeltrace2 help filter.cubatchtrace.expand"
"$BABELTRACE2" list-plugins 2>&1 | grep -q "'filter.cubatchtrace.expand'" && installed=1 || installed=0
[ "$installed" = 0 ] || diag "an installed cubatchtrace plugin is found without --plugin-path too"

# ---- handmade traces: every state a batch can end in
"$PYTHON3" "$MK" "$CBT_TMP/mal" malformed
bt "$CBT_TMP/mal" >"$CBT_TMP/mal.bt" 2>"$CBT_TMP/mal.err"
is "$?" 0 "malformed chunks: babeltrace2 with the filter exits 0"
is "$(cat "$CBT_TMP/mal.err")" "" "malformed chunks: nothing on stderr"
$XS bt <"$CBT_TMP/mal.bt" >"$CBT_TMP/mal.x"
"$CBT" show --records "$CBT_TMP/mal" | $XS show >"$CBT_TMP/mal.s"
is "$(awk '$1 == "batch" { for (i = 2; i <= NF; i++) if ($i ~ /^(id|state)=/) printf "%s ", $i; print "" }' "$CBT_TMP/mal.x" |
      sed 's/ $//' | sort -t= -k2 -n | sed 's/^id=6 state=\(complete\|malformed\)$/id=6 state=complete-or-malformed/')" \
"id=0 state=complete
id=1 state=malformed
id=2 state=malformed
id=3 state=malformed
id=4 state=malformed
id=5 state=malformed
id=6 state=complete-or-malformed
id=7 state=malformed
id=8 state=malformed
id=9 state=no_header
id=10 state=given_up
id=11 state=complete
id=12 state=incomplete
id=13 state=pending" "malformed chunks: each batch's state, as an enumeration of the batch event"
is "$(grep -c '^op .* id=11 ' "$CBT_TMP/mal.x")" 3 "a batch whose chunks came on two streams: its three op events"
is "$(cat "$CBT_TMP/mal.x")" "$(cat "$CBT_TMP/mal.s")" "malformed chunks: the expanded events are show's records, field for field"
"$PYTHON3" "$MK" "$CBT_TMP/unread" unread
bt "$CBT_TMP/unread" | $XS bt >"$CBT_TMP/unread.x"
is "$(cat "$CBT_TMP/unread.x")" "$("$CBT" show --records "$CBT_TMP/unread" | $XS show)" "empty sequences first: show's records, field for field"
grep -q '^finding .* rule=stream_null ' "$CBT_TMP/unread.x"; ok $? "empty sequences first: the validator's finding is an event"

"$BABELTRACE2" --plugin-path="$PLUG" "$CBT_TMP/mal" -c filter.cubatchtrace.expand -p 'colour=1' >"$CBT_TMP/p.out" 2>"$CBT_TMP/p.err"
is "$?" 1 "a parameter: babeltrace2 fails (status 1)"
grep -q 'takes no parameters' "$CBT_TMP/p.err"; ok $? "a parameter: babeltrace2's error says the filter takes none"

# ---- the door tests' clients under the shim
if ! want_sessiond; then
    diag "SKIP the recorded traces: $CBT_NO_SESSIOND"
    done_testing
fi
C="$top_builddir/tests/clients"
LD_LIBRARY_PATH="$C/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH
# record NAME CMD...: CMD under the shim while session pl-NAME records it alone; $pid is its pid
record() {
    _n=$1; shift
    session_alone "pl-$_n" || { echo "Bail out! cannot create the LTTng session"; exit 1; }
    traced_alone "pl-$_n" "$@" >"$CBT_TMP/$_n.out" 2>&1
    cbt_session_stop "pl-$_n"
    echo "$pid" >"$CBT_TMP/$_n.pid"
}
# expanded NAME: the trace's expanded events for its pid, as show's lines; show's own
expanded() {
    _t="$CBT_TMP/pl-$1" _p=$(cat "$CBT_TMP/$1.pid")
    bt "$_t" >"$CBT_TMP/$1.bt" 2>"$CBT_TMP/$1.bterr"
    is "$?" 0 "$1: babeltrace2 with the filter exits 0"
    $XS bt "$_p" <"$CBT_TMP/$1.bt" >"$CBT_TMP/$1.x"
    "$CBT" show --records --pid "$_p" "$_t" | $XS show >"$CBT_TMP/$1.s"
}
compare() { # compare NAME: the field-for-field comparison and what it covered
    _b=$(grep -c '^batch ' "$CBT_TMP/$1.s") _o=$(grep -c '^op ' "$CBT_TMP/$1.s") _f=$(grep -c '^finding ' "$CBT_TMP/$1.s")
    [ "$_b" -gt 0 ]; ok $? "$1: show has batches to compare ($_b batches, $_o ops, $_f findings)"
    is "$(cat "$CBT_TMP/$1.x")" "$(cat "$CBT_TMP/$1.s")" "$1: the expanded events are show's records, field for field, in show's order"
}

record kinds "$C/client_kinds"
record streams "$C/client_streams"
record d1 "$C/client_1d" v2
record d1big "$C/client_1d" v2 big 700
record strict env CUBATCHTRACE_MODE=strict "$C/client_strict" table
record report env CUBATCHTRACE_REPORT=stderr "$C/client_strict" report
record threads "$C/client_threads"
record abimix "$C/client_abimix"
record gputime env CUBATCHTRACE_GPU_TIME=1 "$C/client_gputime" ok 5
# long batches in chunks as large as the sessions' 1 MiB sub-buffers hold (one event for 1000 ops)
record big3d env CUBATCHTRACE_SUBBUF_SIZE=1M "$C/client_big3d" 2 1000
record d1bigsb env CUBATCHTRACE_SUBBUF_SIZE=1M "$C/client_1d" v2 big 2000
for n in kinds streams d1 d1big strict report threads abimix gputime big3d d1bigsb; do
    expanded $n
    compare $n
done
# GPU time: a gpu event per batch GPU time (several per gpu_time event), the batch's fields joined as show joins them
is "$(grep -c '^gpu .* status=timed .* ops=2 bytes=5120 src_kind=mixed dst_kind=device src_device=mixed dst_device=0' "$CBT_TMP/gputime.x")" 5 \
    "gputime: 5 gpu events, timed, with their batches' ops, bytes, memory kinds and devices (sources mixed: device and pinned host)"
is "$(grep -c '^finding .* inline=1' "$CBT_TMP/report.x")" "$(grep -c '^finding ' "$CBT_TMP/report.s")" \
    "report: every read-time finding is marked as one the shim made too"
grep -q '^attr ' "$CBT_TMP/d1big.x"; ok $? "d1big: a 1D batch's attributes are attr events"
grep -q '^finding ' "$CBT_TMP/strict.x"; ok $? "strict: the validator's findings are finding events"

# everything else untouched: the same lines in the same order, the batch's own events aside
for n in kinds d1big report; do
    "$BABELTRACE2" --no-delta "$CBT_TMP/pl-$n" | grep -Ev "$CONSUMED" >"$CBT_TMP/$n.plain"
    # the filter's own trace: the expanded events, and the statedump copied for debug-info (no packet context)
    grep -Ev "$OWN" "$CBT_TMP/$n.bt" >"$CBT_TMP/$n.passed"
    n_plain=$(wc -l <"$CBT_TMP/$n.plain")
    [ "$n_plain" -gt 0 ]; ok $? "$n: events other than a batch's to pass through ($n_plain)"
    cmp -s "$CBT_TMP/$n.plain" "$CBT_TMP/$n.passed"; ok $? "$n: every other event passes through untouched, in order"
    is "$(grep -E "$OWN" "$CBT_TMP/$n.bt" | grep -Evc ' cubatchtrace\.expand:')" "$(grep -c ' lttng_ust_statedump:' "$CBT_TMP/$n.plain")" \
        "$n: the filter's trace holds a copy of each statedump event"
done
grep -q ' cubatchtrace:process: ' "$CBT_TMP/kinds.passed"; ok $? "kinds: the process event passes through"
# the filter's output in time order (the expanded events stamped when their batch was whole)
for n in kinds d1big threads; do
    sed -n 's/^\[\([0-9:.]*\)\].*/\1/p' "$CBT_TMP/$n.bt" >"$CBT_TMP/$n.times"
    sort -c "$CBT_TMP/$n.times" 2>/dev/null; ok $? "$n: the filter's messages come in time order"
done

# ---- composing
# a time window: babeltrace2's trimmer before the filter, as `show --begin/--end` places it
p=$(cat "$CBT_TMP/threads.pid")
ts=$("$BABELTRACE2" --no-delta "$CBT_TMP/pl-threads" | grep " vpid = $p, " | grep ' cubatchtrace:b: ' |
     sed -n 's/^\[\([0-9:.]*\)\].*/\1/p')
nb=$(echo "$ts" | wc -l)
begin=$(echo "$ts" | sed -n "$((nb / 4))p") end=$(echo "$ts" | sed -n "$((3 * nb / 4))p")
"$BABELTRACE2" --plugin-path="$PLUG" --no-delta --begin="$begin" --end="$end" "$CBT_TMP/pl-threads" \
    -c filter.cubatchtrace.expand | $XS bt "$p" >"$CBT_TMP/win.x"
"$CBT" show --records --pid "$p" --begin="$begin" --end="$end" "$CBT_TMP/pl-threads" | $XS show >"$CBT_TMP/win.s"
w=$(grep -c '^batch ' "$CBT_TMP/win.s")
[ "$w" -gt 0 ] && [ "$w" -lt "$(grep -c '^batch ' "$CBT_TMP/threads.s")" ]
ok $? "a window of the threads trace holds some of its batches ($w)"
is "$(cat "$CBT_TMP/win.x")" "$(cat "$CBT_TMP/win.s")" "after flt.utils.trimmer: the expanded events of the window are show's"

# flt.lttng-utils.debug-info after the filter, then sink.text.details
# (source.ctf.fs here takes one trace: the directory holding its metadata)
td=$(dirname "$(find "$CBT_TMP/pl-d1big" -name metadata | head -1)")
"$BABELTRACE2" --plugin-path="$PLUG" run \
    --component src:source.ctf.fs --params "inputs=[\"$td\"]" \
    --component mux:filter.utils.muxer --component exp:filter.cubatchtrace.expand \
    --component dbg:filter.lttng-utils.debug-info --component out:sink.text.details \
    --connect src:mux --connect mux:exp --connect exp:dbg --connect dbg:out >"$CBT_TMP/details" 2>"$CBT_TMP/details.err"
is "$?" 0 "source.ctf.fs, muxer, the filter, debug-info, sink.text.details: the graph runs"
is "$(grep -c "^Event \`cubatchtrace.expand:op\`" "$CBT_TMP/details")" "$(grep -c ' cubatchtrace\.expand:op: ' "$CBT_TMP/d1big.bt")" \
    "sink.text.details: one op event per op"
grep -q 'rule: Unsigned enumeration' "$CBT_TMP/details"; ok $? "sink.text.details: a finding's rule is an enumeration"

# debug-info after the filter names each op's call site from the statedump the filter copies into its
# trace: the file:line the tool's own call-site table gives for it
p=$(cat "$CBT_TMP/kinds.pid")
td=$(dirname "$(find "$CBT_TMP/pl-kinds" -name metadata | head -1)")
"$BABELTRACE2" --plugin-path="$PLUG" run \
    --component src:source.ctf.fs --params "inputs=[\"$td\"]" \
    --component mux:filter.utils.muxer --component exp:filter.cubatchtrace.expand \
    --component dbg:filter.lttng-utils.debug-info --component out:sink.text.pretty \
    --connect src:mux --connect mux:exp --connect exp:dbg --connect dbg:out >"$CBT_TMP/dbg" 2>"$CBT_TMP/dbg.err"
is "$?" 0 "debug-info after the filter, sink.text.pretty: the graph runs"
site=$("$CBT" summary --by caller --pid "$p" "$CBT_TMP/pl-kinds" | sed -n '/^# Top call sites/,/^$/p' |
       sed -n '/^Name /{n;p;}' | sed 's/ (.*//')
case $site in *.c:[0-9]*) ok 0 "kinds: the tool names the call site ($site)" ;; *) ok 1 "kinds: the tool names the call site ($site)" ;; esac
nops=$(grep -c '^op ' "$CBT_TMP/kinds.x")
is "$(grep " cubatchtrace\.expand:op: { vpid = $p, " "$CBT_TMP/dbg" | grep -c "src = \"$site\"")" "$nops" \
    "debug-info: each of the $nops op events has the call site the tool names, src = \"$site\""
is "$(grep " cubatchtrace\.expand:batch: { vpid = $p, " "$CBT_TMP/dbg" | grep -c "src = \"$site\"")" \
    "$(grep -c '^batch ' "$CBT_TMP/kinds.x")" "debug-info: the batch event too"

# sink.ctf.fs: an ordinary CTF trace, read back by babeltrace2 without the plugin
for n in d1big strict; do
    "$BABELTRACE2" --plugin-path="$PLUG" "$CBT_TMP/pl-$n" -c filter.cubatchtrace.expand \
        -c sink.ctf.fs -p "path=\"$CBT_TMP/$n.ctf\"" >"$CBT_TMP/$n.ctf.log" 2>&1
    is "$?" 0 "$n: the expanded trace is written by sink.ctf.fs"
    env -u BABELTRACE_PLUGIN_PATH "$BABELTRACE2" --no-delta "$CBT_TMP/$n.ctf" >"$CBT_TMP/$n.back" 2>"$CBT_TMP/$n.back.err"
    is "$?" 0 "$n: plain babeltrace2 reads the written trace"
    counts() { sed -n 's/^\[[^]]*\] [^ ]* \([^ ]*\): .*/\1/p' "$1" | sort | uniq -c; }
    is "$(counts "$CBT_TMP/$n.back")" "$(counts "$CBT_TMP/$n.bt")" "$n: read back, the same count of every event name"
    is "$($XS bt "$(cat "$CBT_TMP/$n.pid")" <"$CBT_TMP/$n.back")" "$(cat "$CBT_TMP/$n.s")" \
        "$n: read back, the expanded events are still show's records"
done
done_testing
