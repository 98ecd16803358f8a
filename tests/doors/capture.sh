#!/bin/sh
# SPDX-License-Identifier: MIT
# Batch copies on a stream being captured into a graph, over the test double
# (which captures as the H200 does: tests/fakecuda/capture.sh).  In every
# mode of the shim the program sees what it sees without it: the batch's
# result and failIdx, the capture still ACTIVE afterwards, cuStreamEndCapture's
# result and the graph's node count; another thread's GLOBAL capture survives
# batches timed on the GPU.  The trace names each refused copy: `check`
# exits 1 with refused_in_capture, the summary counts the batches, `show`
# marks them.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
C="$top_builddir/tests/gpu/capture"
[ -x "$C" ] || skip_all "tests/gpu/capture is not built"
TOOL="$top_builddir/tools/cubatchtrace"
KINDS="3d 3dv1 3d0 1d 1dv1 1d0 3dbad 1dbad 3dlegacy"

# the CAPTURE line of one run, its PID line dropped
line() { grep '^CAPTURE ' "$1"; }

for mode in global thread relaxed; do
    for k in $KINDS; do
        cbt_run_bare "$C" batch $mode $k >"$CBT_TMP/bare-$mode-$k" 2>&1
    done
done

# name ENV...: one session, every kind in every capture mode under the shim
for setting in observe report strict gputime; do
    case $setting in
    gputime) envs="CUBATCHTRACE_GPU_TIME=1" ;;
    *) envs=$(mode_env $setting) ;;
    esac
    cbt_session_start "cap-$setting" || { echo "Bail out! cannot create the LTTng session"; exit 1; }
    for mode in global thread relaxed; do
        for k in $KINDS; do
            cbt_run env $envs "$C" batch $mode $k >"$CBT_TMP/$setting-$mode-$k" 2>"$CBT_TMP/$setting-$mode-$k.err"
            is "$(line "$CBT_TMP/$setting-$mode-$k")" "$(line "$CBT_TMP/bare-$mode-$k")" \
                "$setting, $mode capture, $k: result, failIdx, capture state, end of capture and graph as without the shim"
        done
    done
    cbt_session_stop "cap-$setting"
    # every batch refused in capture (900) is named, and only those
    refused=$(cat "$CBT_TMP/$setting"-*-* 2>/dev/null | grep -c '^CAPTURE .* rc=900 ')
    # the session records every process of the user: read only this setting's runs
    pids=$(cat "$CBT_TMP/$setting"-*-* 2>/dev/null | sed -n 's/^PID \([0-9]*\)$/--pid \1/p' | tr '\n' ' ')
    is "$(echo $pids | wc -w)" 54 "$setting: the process id of each of the 27 runs"
    "$TOOL" check --format json $pids "$CBT_TMP/cap-$setting" >"$CBT_TMP/check-$setting.json" 2>"$CBT_TMP/check-$setting.err"
    st=$?
    is "$st" 1 "$setting: check exits 1 on the trace"
    got=$(grep -o '"rule": *"refused_in_capture"' "$CBT_TMP/check-$setting.json" | wc -l)
    is "$got" "$refused" "$setting: one refused_in_capture finding per batch refused in capture ($refused)"
    "$TOOL" summary --json $pids "$CBT_TMP/cap-$setting" >"$CBT_TMP/sum-$setting.json" 2>/dev/null
    got=$(sed -n 's/.*"refused_in_capture_batches": *\([0-9]*\).*/\1/p' "$CBT_TMP/sum-$setting.json" | head -n 1)
    is "$got" "$refused" "$setting: the summary counts the batches refused in capture"
    "$TOOL" show --records $pids "$CBT_TMP/cap-$setting" >"$CBT_TMP/show-$setting" 2>"$CBT_TMP/show-$setting.err"
    got=$(grep -c '^batch .* mark=refused_in_capture' "$CBT_TMP/show-$setting")
    [ "$got" = "$refused" ] || diag "show: $(head -c 600 "$CBT_TMP/show-$setting.err")"
    is "$got" "$refused" "$setting: show marks each batch refused in capture"
    _inl=$(grep -c '^inline_finding \|^finding .* inline=0' "$CBT_TMP/show-$setting")
    is "$_inl" 0 "$setting: every finding the calling thread wrote equals one computed when the trace is read"
done

# the stderr report says what happened in words a user can act on
grep -q 'refused_in_capture' "$CBT_TMP/report-global-3d.err"; ok $? "report: the stderr report names refused_in_capture"
grep -q 'the copy is not in the graph' "$CBT_TMP/report-global-3d.err"; ok $? "report: it says the copy is not in the graph"

# Another thread's GLOBAL capture while this thread makes batches timed on
# the GPU: the shim's event queries and waits break no capture.
for k in 3d 1d; do
    cbt_run_bare "$C" other $k 20 >"$CBT_TMP/bare-other-$k" 2>&1
    cbt_session_start "cap-other-$k" || { echo "Bail out! cannot create the LTTng session"; exit 1; }
    cbt_run env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=2 "$C" other $k 20 >"$CBT_TMP/other-$k" 2>&1
    cbt_session_stop "cap-other-$k"
    is "$(grep '^OTHER ' "$CBT_TMP/other-$k")" "$(grep '^OTHER ' "$CBT_TMP/bare-other-$k")" \
        "GPU time, $k: another thread's GLOBAL capture ends as without the shim (graph of 1 node)"
    "$TOOL" summary --json $(sed -n 's/^PID \([0-9]*\)$/--pid \1/p' "$CBT_TMP/other-$k") "$CBT_TMP/cap-other-$k" >"$CBT_TMP/sum-other-$k.json" 2>&1
    timed=$(grep -o '"batches_timed": *[0-9]*' "$CBT_TMP/sum-other-$k.json" | head -n 1 | grep -o '[0-9]*$')
    [ "${timed:-0}" = 20 ] || diag "$(head -c 800 "$CBT_TMP/sum-other-$k.json")"
    is "${timed:-0}" 20 "GPU time, $k: the 20 batches made during that capture are timed"
done

# A capture begun after timed batches, through each door that begins one:
# GPU time does not ask whether a stream is captured until the process
# began a capture, so each door must be seen; the batch in the capture
# adds no timing event to the graph (its node count, as without the shim)
# and its gpu_time says capturing.
cbt_session_start "cap-late" || { echo "Bail out! cannot create the LTTng session"; exit 1; }
for d in direct gpa dlsym tograph; do
    for k in 3d 1d; do
        cbt_run_bare "$C" late $d $k 3 >"$CBT_TMP/bare-late-$d-$k" 2>&1
        cbt_run env CUBATCHTRACE_GPU_TIME=1 "$C" late $d $k 3 >"$CBT_TMP/late-$d-$k" 2>&1
        want=$(grep '^LATE ' "$CBT_TMP/bare-late-$d-$k")
        [ -n "$want" ] || diag "late $d $k: $(head -c 400 "$CBT_TMP/bare-late-$d-$k")"
        is "$(grep '^LATE ' "$CBT_TMP/late-$d-$k")" "${want:-no LATE line}" \
            "GPU time, a capture begun ($d) after 3 timed $k batches: the batch in it, the capture and its graph as without the shim"
    done
done
cbt_session_stop "cap-late"
pids=$(cat "$CBT_TMP"/late-direct-* "$CBT_TMP"/late-gpa-* "$CBT_TMP"/late-dlsym-* | sed -n 's/^PID \([0-9]*\)$/--pid \1/p' | tr '\n' ' ')
"$TOOL" summary --json $pids "$CBT_TMP/cap-late" >"$CBT_TMP/sum-late.json" 2>&1
timed=$(grep -o '"batches_timed": *[0-9]*' "$CBT_TMP/sum-late.json" | head -n 1 | grep -o '[0-9]*$')
capturing=$(grep -o '"capturing": *[0-9]*' "$CBT_TMP/sum-late.json" | head -n 1 | grep -o '[0-9]*$')
is "${timed:-none} ${capturing:-none}" "18 6" \
   "GPU time, late captures (direct, gpa, dlsym): the 18 batches before each capture timed, the 6 in it said capturing"
done_testing
