#!/bin/sh
# SPDX-License-Identifier: MIT
# The compact record (event format 3) tells the tool what format 2 told it.
# tests/tool/format2.tar.xz holds traces that the shim of event format 2
# recorded over the test double, without address-space randomisation, from
# the door tests' clients (each run named below with its arguments and
# mode).  This test records the same runs with the shim of today and holds
# `cubatchtrace show`, `summary --json` and `check --format json` of both
# traces against each other (tests/tool/format_norm.py says what is
# compared: everything but what differs from run to run, and addresses
# renamed by first appearance).  Old traces stay readable, too: every
# format-2 trace is read without error.  Each old trace holds its run's
# process alone; the new one is read for the run's pid.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not installed"
command -v setarch >/dev/null 2>&1 || skip_all "setarch (util-linux) not installed"
setarch -R true 2>/dev/null || skip_all "setarch -R is not permitted here"
command -v xz >/dev/null 2>&1 || skip_all "xz not installed"
TOOL="$top_builddir/tools/cubatchtrace"
C="$top_builddir/tests/clients"
NORM="$PYTHON3 $top_srcdir/tests/tool/format_norm.py"
( cd "$CBT_TMP" && xz -dc "$top_srcdir/tests/tool/format2.tar.xz" | tar xf - ) ||
    { echo "Bail out! cannot unpack tests/tool/format2.tar.xz"; exit 1; }

# case NAME [--sort] -- CMD...: the run, recorded now, against format2/NAME
case_() {
    name=$1; shift
    sort=""
    [ "$1" = --sort ] && { sort=--sort; shift; }
    [ "$1" = -- ] && shift
    cbt_session_start "fe-$name" || { echo "Bail out! cannot create the LTTng session"; exit 1; }
    # the session records every process of the user (tests run in parallel): the run's own pid is read
    ( env() { exec env "$@"; }; LD_LIBRARY_PATH="$C/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        cbt_run setarch -R "$@" ) >"$CBT_TMP/$name.out" 2>&1 &
    pid=$!
    wait $pid
    cbt_session_stop "fe-$name"
    old=$CBT_TMP/format2/$name new=$CBT_TMP/fe-$name
    "$TOOL" show "$old" >"$CBT_TMP/$name.show2" 2>"$CBT_TMP/$name.err2"
    is "$?" 0 "$name: the format-2 trace is read"
    grep -q ' format=2 ' "$CBT_TMP/$name.show2"; ok $? "$name: the old trace is of format 2"
    "$TOOL" show --pid "$pid" "$new" >"$CBT_TMP/$name.show3" 2>&1
    grep -q " format=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h") " \
        "$CBT_TMP/$name.show3"
    ok $? "$name: the new trace is of the shim's format"
    n2=$(grep -c '^batch ' "$CBT_TMP/$name.show2")
    [ "$n2" -gt 0 ]; ok $? "$name: the old trace has batches ($n2)"
    is "$($NORM show $sort <"$CBT_TMP/$name.show3")" "$($NORM show $sort <"$CBT_TMP/$name.show2")" \
        "$name: show prints the same batches, ops and findings"
    is "$("$TOOL" summary --json --pid "$pid" "$new" 2>&1 | $NORM summary)" "$("$TOOL" summary --json "$old" 2>&1 | $NORM summary)" \
        "$name: summary --json: the same counts and tables"
    is "$("$TOOL" check --format json --pid "$pid" "$new" 2>/dev/null | $NORM check)" \
        "$("$TOOL" check --format json "$old" 2>/dev/null | $NORM check)" "$name: check: the same findings"
}

case_ kinds -- "$C/client_kinds"
case_ streams -- "$C/client_streams"
case_ d1 -- "$C/client_1d" v2
case_ d1v1 -- "$C/client_1d" v1
case_ d1big -- "$C/client_1d" v2 big 700
case_ strict -- env CUBATCHTRACE_MODE=strict "$C/client_strict" table
case_ report -- env CUBATCHTRACE_REPORT=stderr "$C/client_strict" report
case_ threads --sort -- "$C/client_threads"
case_ abimix -- "$C/client_abimix"
done_testing
