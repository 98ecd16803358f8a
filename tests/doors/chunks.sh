#!/bin/sh
# SPDX-License-Identifier: MIT
# A large batch is written in as few events as the channel's sub-buffers
# hold: CUBATCHTRACE_SUBBUF_SIZE names the smallest sub-buffer of the
# sessions that record the process (`cubatchtrace run` sets it to its own);
# without it, a chunk is 128 ops (384 copies), which LTTng's smallest
# default sub-buffer (16 KiB, per process) holds.  However many events a
# batch takes, the tool reads the same batches, ops, findings and totals.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not installed"
TOOL="$top_builddir/tools/cubatchtrace"
NORM="$PYTHON3 $top_srcdir/tests/tool/format_norm.py"

# events NAME KIND: how many cubatchtrace:KIND events the client's process wrote
events() { grep -c " cubatchtrace:$2: " "$CBT_TMP/$1.trace" || true; }
# same NAME OTHER WHAT: show, summary and check of two runs agree (show's
# validated aside: a run with the stderr report validates every batch inline)
# (SAME_SHOW: more options of format_norm.py show)
same() {
    is "$(sed 's/ validated=[0-9]*//' "$CBT_TMP/$1.show" | $NORM show ${SAME_SHOW:-})" \
        "$(sed 's/ validated=[0-9]*//' "$CBT_TMP/$2.show" | $NORM show ${SAME_SHOW:-})" "$3: show prints the same batches and ops"
    for t in "$1" "$2"; do
        _p=$(sed -n 's/^client_[a-z0-9]*: pid \([0-9]*\)$/\1/p' "$CBT_TMP/$t.err")
        # advice off: how calls group into runs (unbatched_run) follows the
        # timing of each recording, not what the batches are
        "$TOOL" summary --json --advice off --pid "$_p" "$CBT_TMP/$t" 2>&1 | $NORM summary >"$CBT_TMP/$t.sum"
        "$TOOL" check --format json --advice off --pid "$_p" "$CBT_TMP/$t" 2>/dev/null | $NORM check >"$CBT_TMP/$t.chk"
    done
    is "$(cat "$CBT_TMP/$1.sum")" "$(cat "$CBT_TMP/$2.sum")" "$3: summary --json gives the same counts and tables"
    is "$(cat "$CBT_TMP/$1.chk")" "$(cat "$CBT_TMP/$2.chk")" "$3: check gives the same findings"
}

# against_steps NAME B WHAT [1d] CMD...: CMD run again (NAMEnc) with the
# stderr report on, which sends every batch through the steps (they
# validate each inline, the steady path none: all B batches must say so),
# gives the same show, summary and check as run NAME
# steps NAME: how many batches of run NAME took the shim's steps (the client says so)
steps() { sed -n 's/^client_[a-z0-9]*: steps \([0-9]*\)$/\1/p' "$CBT_TMP/$1.err"; }
# steps_at_most NAME MAX B WHAT: at most MAX of run NAME's B batches took the steps
steps_at_most() {
    _sm=$(steps "$1")
    ok "$([ "${_sm:-x}" -le "$2" ] 2>/dev/null && echo 0 || echo 1)" \
        "$4: at most $2 of $3 batches took the steps (${_sm:-none said}), the others the steady path"
}
against_steps() {
    _as_n=$1 _as_b=$2 _as_w=$3 _as_d=3d
    shift 3
    if [ "$1" = 1d ]; then _as_d=1d; shift; fi
    traced "${_as_n}nc" env CUBATCHTRACE_REPORT=stderr "$@"
    is "$(show_batches "$CBT_TMP/${_as_n}nc.trace" $_as_d | show_field validated | grep -c '^1$')" "$_as_b" \
        "$_as_w, the stderr report on: every batch went through the steps (validated inline)"
    same "${_as_n}nc" "$_as_n" "$_as_w: the same as each batch through the steps"
}

# 3D: 5 batches of 1000 ops (the first and last from and to pinned memory)
traced "c3-least-$$" "$CLIENTS/client_big3d" 3 1000
is "$st $(out "c3-least-$$")" "0 batches=5 ops=5000" "3D, no setting: every byte arrives"
is "$(events "c3-least-$$" bs) $(events "c3-least-$$" bo)" "5 35" "3D, no setting: 8 events a batch (128 ops each)"
traced "c3-1m-$$" env CUBATCHTRACE_SUBBUF_SIZE=1M "$CLIENTS/client_big3d" 3 1000
is "$st $(out "c3-1m-$$")" "0 batches=5 ops=5000" "3D, 1M: every byte arrives"
is "$(events "c3-1m-$$" bs) $(events "c3-1m-$$" bo)" "5 0" "3D, 1M sub-buffers: one event a batch"
is "$(grep -c '^op ' "$CBT_TMP/c3-1m-$$.show")" 5000 "3D, 1M: show decodes every op"
same "c3-least-$$" "c3-1m-$$" "3D, one event a batch against eight"
traced "c3-64k-$$" env CUBATCHTRACE_SUBBUF_SIZE=65536 "$CLIENTS/client_big3d" 3 1000
is "$(events "c3-64k-$$" bs) $(events "c3-64k-$$" bo)" "5 5" "3D, 64 KiB: two events a batch (547 ops, then the rest)"
same "c3-least-$$" "c3-64k-$$" "3D, two events a batch against eight"
traced "c3-bad-$$" env CUBATCHTRACE_SUBBUF_SIZE=lots "$CLIENTS/client_big3d" 3 1000
is "$(grep -c 'CUBATCHTRACE_SUBBUF_SIZE=lots is not a size' "$CBT_TMP/c3-bad-$$.err")" 1 \
    "a value that is not a size: one line on stderr says so"
is "$(events "c3-bad-$$" bs) $(events "c3-bad-$$" bo)" "5 35" "... and a batch is written 128 ops an event"

# batches whose every op has op 0's refs, those of each batch unlike the
# batch's before (a -> b, b -> a, in turn, on the steady path): the record
# must not mark them as repeating, or the reader gives each op the other
# buffer and finds its footprint outside that allocation
# (1000 ops in one event each: the steady path's writer)
for n in 16 1000; do
    traced "c3-swap$n-$$" env CUBATCHTRACE_SUBBUF_SIZE=1M "$CLIENTS/client_big3d" 6 "$n" swap
    is "$st $(out "c3-swap$n-$$")" "0 batches=8 ops=$((8 * n))" "swap, $n ops: every byte arrives"
    is "$(grep -c '^op ' "$CBT_TMP/c3-swap$n-$$.show")" $((8 * n)) "swap, $n ops: show decodes every op"
    is "$(grep -c '^finding ' "$CBT_TMP/c3-swap$n-$$.show")" 0 "swap, $n ops: no finding (each op's operands are its own)"
done

# batches that go round four buffers (one of each batch's two is the batch
# before's, the other one three batches older): the steady path takes them
# from its older recents, and the refs it gives must be each buffer's own
# (else the reader gives an op another allocation, outside which its
# footprint lies); with the stderr report on, the steps record them all;
# the steady path takes all but the first round's (the client says how many
# took the steps: cubatchtrace_thread_steps; the lookup: tests/unit/test_recents)
for n in 1 16; do
    traced "c3-pool$n-$$" "$CLIENTS/client_big3d" 9 "$n" pool
    is "$st $(out "c3-pool$n-$$")" "0 batches=11 ops=$((11 * n))" "pool of four, $n ops: every byte arrives"
    is "$(grep -c '^op ' "$CBT_TMP/c3-pool$n-$$.show")" $((11 * n)) "pool of four, $n ops: show decodes every op"
    is "$(grep -c '^finding ' "$CBT_TMP/c3-pool$n-$$.show")" 0 \
        "pool of four, $n ops: no finding (each op's operands are its own)"
    steps_at_most "c3-pool$n-$$" 6 11 "pool of four, $n ops (the first round's)"
    against_steps "c3-pool$n-$$" 11 "pool of four, $n ops" "$CLIENTS/client_big3d" 9 "$n" pool
done

# batches that go round three streams (the same buffers): the steady path
# moves from stream to stream (src/batch.c: steady_switch) and keeps each
# stream's hdr among its older ones (src/record.c: memo_miss); every batch
# must name its own stream (else show's and summary's streams differ from
# those of the steps, which the stderr report makes every batch take); the
# steady path takes all but the batches on a stream or buffer new to it
for n in 1 16; do
    traced "c3-streams$n-$$" "$CLIENTS/client_big3d" 9 "$n" streams
    is "$st $(out "c3-streams$n-$$")" "0 batches=11 ops=$((11 * n))" "three streams, $n ops: every byte arrives"
    is "$(show_batches "$CBT_TMP/c3-streams$n-$$.trace" | show_field stream_id | sort -u | wc -l)" 3 \
        "three streams, $n ops: the batches name three streams"
    steps_at_most "c3-streams$n-$$" 5 11 "three streams, $n ops (each new stream's and buffer's)"
    against_steps "c3-streams$n-$$" 11 "three streams, $n ops" "$CLIENTS/client_big3d" 9 "$n" streams
done

# three streams whose handles the shim hashes alike (the driver's often
# are): each keeps a slot and a stream index of its own (src/batch.c
# slot_of, src/record.c cbt_dict_stream), so the batches stay steady too
traced "c3-meet-$$" "$CLIENTS/client_big3d" 9 16 streams-meet
is "$st $(out "c3-meet-$$")" "0 batches=11 ops=176" "three streams that hash alike: every byte arrives"
is "$(show_batches "$CBT_TMP/c3-meet-$$.trace" | show_field stream_id | sort -u | wc -l)" 4 \
    "three streams that hash alike: the batches name them and the first and last batches' stream"
steps_at_most "c3-meet-$$" 5 11 "three streams that hash alike (each new stream's and buffer's)"
# (each run picks its own three: their ids are compared by first appearance)
SAME_SHOW=--stream-ids
against_steps "c3-meet-$$" 11 "three streams that hash alike" "$CLIENTS/client_big3d" 9 16 streams-meet
SAME_SHOW=

# memory allocated and freed between batches (another buffer than theirs):
# what the thread learned of its own buffers stays, and so does the steady
# path (without it, every batch takes the steps and asks the driver again)
for n in 1 16; do
    traced "c3-churn$n-$$" "$CLIENTS/client_big3d" 9 "$n" churn
    is "$st $(out "c3-churn$n-$$")" "0 batches=11 ops=$((11 * n))" "churn, $n ops: every byte arrives"
    traced "c3-still$n-$$" "$CLIENTS/client_big3d" 9 "$n"
    steps_at_most "c3-churn$n-$$" "$(steps "c3-still$n-$$")" 11 "churn, $n ops (as many as with no allocation between batches)"
    against_steps "c3-churn$n-$$" 11 "churn, $n ops" "$CLIENTS/client_big3d" 9 "$n" churn
    # the same while two more threads allocate and free all the time: the
    # log of changes is written while it is read and runs over between two
    # batches (the thread then forgets everything): the same record
    traced "c3-tchurn$n-$$" "$CLIENTS/client_big3d" 9 "$n" churn-threads
    is "$st $(out "c3-tchurn$n-$$")" "0 batches=11 ops=$((11 * n))" "churn on three threads, $n ops: every byte arrives"
    against_steps "c3-tchurn$n-$$" 11 "churn on three threads, $n ops" "$CLIENTS/client_big3d" 9 "$n" churn-threads
    # a stream made and destroyed before each batch: only its handle is forgotten
    traced "c3-schurn$n-$$" "$CLIENTS/client_big3d" 9 "$n" stream-churn
    is "$st $(out "c3-schurn$n-$$")" "0 batches=11 ops=$((11 * n))" "stream churn, $n ops: every byte arrives"
    steps_at_most "c3-schurn$n-$$" "$(steps "c3-still$n-$$")" 11 "stream churn, $n ops (as many as with no stream destroyed)"
    against_steps "c3-schurn$n-$$" 11 "stream churn, $n ops" "$CLIENTS/client_big3d" 9 "$n" stream-churn
done

# a destination allocated again before each batch (an RMM DeviceBuffer, a
# caching allocator's block): the operand is new to the thread every
# batch; the steady path learns it (src/batch.c steady_learn: the cache,
# else one question to the driver) instead of the steps, and the record is
# the steps'
for n in 1 16; do
    traced "c3-renew$n-$$" "$CLIENTS/client_big3d" 9 "$n" renew
    is "$st $(out "c3-renew$n-$$")" "0 batches=11 ops=$((11 * n))" "renewed destination, $n ops: every byte arrives"
    steps_at_most "c3-renew$n-$$" "$(steps "c3-still$n-$$")" 11 "renewed destination, $n ops (as many as with the same buffers)"
    against_steps "c3-renew$n-$$" 11 "renewed destination, $n ops" "$CLIENTS/client_big3d" 9 "$n" renew
    traced "c1-renew$n-$$" "$CLIENTS/client_1d" v2 renew "$n"
    is "$st $(out "c1-renew$n-$$")" "0 batches=11 copies=$((11 * n)) bytes=$((11 * n * 256))" \
        "1D, renewed destination, $n copies: every byte arrives"
    steps_at_most "c1-renew$n-$$" 2 11 "1D, renewed destination, $n copies (the first two batches')"
    against_steps "c1-renew$n-$$" 11 "1D, renewed destination, $n copies" 1d "$CLIENTS/client_1d" v2 renew "$n"
done

# 1D: 3 batches of 2000 copies
traced "c1-least-$$" "$CLIENTS/client_1d" v2 big 2000
is "$st $(out "c1-least-$$")" "0 batches=3 copies=6000 bytes=1536000" "1D, no setting: every byte arrives"
is "$(events "c1-least-$$" cs) $(events "c1-least-$$" co)" "3 15" "1D, no setting: 6 events a batch (384 copies each)"
traced "c1-1m-$$" env CUBATCHTRACE_SUBBUF_SIZE=1048576 "$CLIENTS/client_1d" v2 big 2000
is "$(events "c1-1m-$$" cs) $(events "c1-1m-$$" co)" "3 3" "1D, 1M sub-buffers: 2 events a batch (1024 copies, then the rest)"
same "c1-least-$$" "c1-1m-$$" "1D, two events a batch against six"

# 1D: the same over three streams (one copy and 16 a batch)
for n in 1 16; do
    traced "c1-streams$n-$$" "$CLIENTS/client_1d" v2 streams "$n"
    is "$st $(out "c1-streams$n-$$")" "0 batches=11 copies=$((11 * n)) bytes=$((11 * n * 256))" \
        "1D, three streams, $n copies: every byte arrives"
    is "$(show_batches "$CBT_TMP/c1-streams$n-$$.trace" 1d | show_field stream_id | sort -u | wc -l)" 3 \
        "1D, three streams, $n copies: the batches name three streams"
    steps_at_most "c1-streams$n-$$" 5 11 "1D, three streams, $n copies"
    against_steps "c1-streams$n-$$" 11 "1D, three streams, $n copies" 1d "$CLIENTS/client_1d" v2 streams "$n"
done

# a setting that matches a tiny channel (per process, 16 KiB sub-buffers): nothing discarded
t=c3-tiny-$$
"$LTTNG" --no-sessiond create "$t" --output="$CBT_TMP/$t" >/dev/null &&
    _cbt_sessions="$_cbt_sessions $t" &&
    "$LTTNG" enable-channel -u -s "$t" --buffers-pid --blocking-timeout=inf --subbuf-size=16384 --num-subbuf=4 tiny >/dev/null &&
    "$LTTNG" enable-event -u -s "$t" -c tiny 'cubatchtrace:*' >/dev/null &&
    "$LTTNG" add-context -u -s "$t" -c tiny -t vpid -t vtid >/dev/null &&
    "$LTTNG" start "$t" >/dev/null || { echo "Bail out! cannot create the LTTng session $t"; exit 1; }
cbt_run env CUBATCHTRACE_SUBBUF_SIZE=16K "$CLIENTS/client_big3d" 3 1000 >"$CBT_TMP/$t.out" 2>"$CBT_TMP/$t.err"
st=$?
cbt_session_stop "$t"
p=$(sed -n 's/^client_big3d: pid \([0-9]*\)$/\1/p' "$CBT_TMP/$t.err")
"$TOOL" summary --json --pid "$p" "$CBT_TMP/$t" >"$CBT_TMP/$t.json" 2>&1
is "$st $("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"], d["discarded_events"], d["read"]["incomplete_batches"])' "$CBT_TMP/$t.json" 2>&1)" \
    "0 5 5000 0 0" "16K in a channel of 16 KiB sub-buffers: every batch whole, nothing discarded"
done_testing
