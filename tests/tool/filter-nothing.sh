#!/bin/sh
# SPDX-License-Identifier: MIT
# A filter that selects nothing that exists is an error (exit 2, one line,
# nothing on stdout) in every command that takes it: --pid of a process not
# in the trace, --begin after the trace's end, --end before its start.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session fn || { ok 1 "session starts"; done_testing; }
gen_run fn n=2,ops=2
gen_stop fn
T=$(trace_of fn)
P=$(pids_of fn)

cmd() { # COMMAND ARGS...: the command on T, its output in out/err, status in $st
    _c=$1; shift
    case $_c in
    timeline) "$CBT" timeline -o "$CBT_TMP/tl.json" "$@" "$T" ;;
    report) "$CBT" report -o "$CBT_TMP/r.html" --no-plots "$@" "$T" ;;
    *) "$CBT" "$_c" "$@" "$T" ;;
    esac >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    st=$?
}
for c in summary check show timeline report; do
    cmd $c $P
    is "$st" 0 "$c --pid of the program: exit 0"
    cmd $c --pid 1
    one_line_error "$c --pid 1 (no such process in the trace)" "$st" "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events of --pid 1"
    cmd $c --begin 4000000000
    one_line_error "$c --begin after the trace's end" "$st" "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events"
    cmd $c --end 1
    one_line_error "$c --end before the trace's start" "$st" "$CBT_TMP/out" "$CBT_TMP/err" "no cubatchtrace events"
done
done_testing
