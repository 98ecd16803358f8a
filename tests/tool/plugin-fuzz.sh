#!/bin/sh
# SPDX-License-Identifier: MIT
# The babeltrace2 plugin on damaged traces: the damage of the fuzz test
# (tests/tool/damage.py --make: random bytes, packet headers, bit flips,
# truncated streams and metadata, damaged metadata) over two recorded traces
# of the compact record (findings; 1D batches in several chunks).  On every
# damaged copy babeltrace2 with filter.cubatchtrace.expand must end by
# itself (no signal, within the time-out) with status 0 or 1; when it fails
# it says so with babeltrace2's own error report; where plain babeltrace2
# (no filter) reads the copy, a failure is the filter's, named as such;
# where plain babeltrace2 fails, so does it.  A copy on which plain
# babeltrace2 itself crashes is said, and not held against the filter.
# CBT_FUZZ_CASES (default 24) damaged copies per trace, from seed
# CBT_FUZZ_SEED (default 1).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
[ -n "${BABELTRACE2:-}" ] || skip_all "babeltrace2 not installed"
need_sessiond
PLUG="$top_builddir/tools/plugin/.libs"
C="$top_builddir/tests/clients"
LD_LIBRARY_PATH="$C/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH
unset BABELTRACE_PLUGIN_PATH
LIMIT=10 # s: plain babeltrace2 runs into it on some damaged metadata

session_alone pf-strict && traced_alone pf-strict env CUBATCHTRACE_MODE=strict "$C/client_strict" table >/dev/null 2>&1
cbt_session_stop pf-strict
session_alone pf-d1big && traced_alone pf-d1big "$C/client_1d" v2 big 700 >/dev/null 2>&1
cbt_session_stop pf-d1big

# run_bt OUT ERR ARGS...: babeltrace2 ARGS within the time-out; its status (137: killed at the time-out)
run_bt() {
    _o=$1 _e=$2; shift 2
    timeout -s KILL "$LIMIT" "$BABELTRACE2" "$@" >"$_o" 2>"$_e"
}

for t in strict d1big; do
    T="$CBT_TMP/pf-$t"
    run_bt "$CBT_TMP/o" "$CBT_TMP/e" --plugin-path="$PLUG" "$T" -c filter.cubatchtrace.expand
    is "$?" 0 "$t: the undamaged trace reads through the filter"
    grep -q ' cubatchtrace\.expand:batch' "$CBT_TMP/o"; ok $? "$t: the undamaged trace has expanded batches"
    "$PYTHON3" "$top_srcdir/tests/tool/damage.py" --make "$T" "$CBT_TMP/dmg-$t" "${CBT_FUZZ_CASES:-24}" \
        "${CBT_FUZZ_SEED:-1}" >"$CBT_TMP/cases-$t"
    ok $? "$t: the damaged copies are made"
    tab=$(printf '\t')
    while IFS="$tab" read -r k what; do
        case_="$CBT_TMP/dmg-$t/seed-$k"
        name="$t, seed $k, $what"
        run_bt "$CBT_TMP/plain.o" "$CBT_TMP/plain.e" "$case_"
        plain=$?
        if [ "$plain" -gt 1 ]; then
            diag "$name: plain babeltrace2 itself ends with status $plain (137: stopped at the time-out): not held against the filter"
            continue
        fi
        run_bt "$CBT_TMP/x.o" "$CBT_TMP/x.e" --plugin-path="$PLUG" "$case_" -c filter.cubatchtrace.expand
        st=$?
        [ "$st" -eq 0 ] || [ "$st" -eq 1 ]; ok $? "$name: ends by itself with status 0 or 1 (got $st)"
        [ "$st" -le 1 ] || tail -n 5 "$CBT_TMP/x.e" | sed 's/^/#   stderr: /'
        if [ "$st" -eq 1 ]; then
            grep -q '^ERROR: ' "$CBT_TMP/x.e"; ok $? "$name: fails with babeltrace2's error report"
            [ -s "$CBT_TMP/x.o" ] || [ -s "$CBT_TMP/x.e" ]; ok $? "$name: says something"
        fi
        if [ "$plain" -eq 0 ] && [ "$st" -eq 1 ]; then
            grep -q "CAUSED BY \[filter.cubatchtrace.expand" "$CBT_TMP/x.e"
            ok $? "$name: read without the filter, read with it: the cause named is the filter's"
            grep -A2 'CAUSED BY \[filter.cubatchtrace.expand' "$CBT_TMP/x.e" | sed -n '2p' | sed 's/^/#   /'
        fi
        if [ "$plain" -eq 1 ]; then
            is "$st" 1 "$name: unreadable without the filter, unreadable with it"
        fi
    done <"$CBT_TMP/cases-$t"
done
done_testing
