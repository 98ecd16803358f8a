#!/bin/sh
# SPDX-License-Identifier: MIT
# The compact record tells the tool what the formats before it told it.
# tests/tool/format2.tar.xz holds traces that the shim of event format 2
# recorded over the test double, without address-space randomisation, from
# the door tests' clients (each run named below with its arguments and
# mode); tests/tool/format3.tar.xz holds the same runs recorded alike by the
# shim of event format 3 (the first compact record).  This test records the
# same runs with the shim of today and holds `cubatchtrace show`,
# `summary --json` and `check --format json` of each old trace against those
# of the new one (tests/tool/format_norm.py says what is compared:
# everything but what differs from run to run, and addresses renamed by
# first appearance).  Old traces stay readable, too: every format-2 and
# format-3 trace is read without error.  Each format-2 trace holds its run's
# process alone; a format-3 trace is read for the pid in its `pid` file, the
# new one for the run's pid.
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
unpack_formats

# case NAME [--sort] -- CMD...: the run, recorded now, against format2/NAME and format3/NAME
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
    new=$CBT_TMP/fe-$name
    "$TOOL" show --records --pid "$pid" "$new" >"$CBT_TMP/$name.show" 2>&1
    grep -q " format=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h") " \
        "$CBT_TMP/$name.show"
    ok $? "$name: the new trace is of the shim's format"
    for f in 2 3; do
        old=$CBT_TMP/format$f/$name
        oldpid=""
        [ $f = 2 ] || oldpid="--pid $(cat "$old/pid")"
        # shellcheck disable=SC2086
        "$TOOL" show --records $oldpid "$old" >"$CBT_TMP/$name.show$f" 2>"$CBT_TMP/$name.err$f"
        is "$?" 0 "$name: the format-$f trace is read"
        grep -q " format=$f " "$CBT_TMP/$name.show$f"; ok $? "$name: the format-$f trace is of format $f"
        n=$(grep -c '^batch ' "$CBT_TMP/$name.show$f")
        [ "$n" -gt 0 ]; ok $? "$name: the format-$f trace has batches ($n)"
        is "$($NORM show $sort <"$CBT_TMP/$name.show")" "$($NORM show $sort <"$CBT_TMP/$name.show$f")" \
            "$name: show prints the same batches, ops and findings as format $f"
        # advice off: runs of small batches (unbatched_run) follow the time between calls, which differs from run to run
        # shellcheck disable=SC2086
        is "$("$TOOL" summary --json --advice off --pid "$pid" "$new" 2>&1 | $NORM summary)" \
            "$("$TOOL" summary --json --advice off $oldpid "$old" 2>&1 | $NORM summary)" \
            "$name: summary --json: the same counts and tables as format $f"
        # shellcheck disable=SC2086
        is "$("$TOOL" check --format json --advice off --pid "$pid" "$new" 2>/dev/null | $NORM check)" \
            "$("$TOOL" check --format json --advice off $oldpid "$old" 2>/dev/null | $NORM check)" \
            "$name: check: the same findings as format $f"
    done
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
