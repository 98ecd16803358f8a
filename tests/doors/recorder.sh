#!/bin/sh
# Deferred recording (src/recorder.c): in observe mode the recorder thread
# writes the events, and nothing is lost when it cannot keep up.  With a
# queue of 16 KiB (CUBATCHTRACE_QUEUE_KB=16), a 64-op batch is larger than a
# quarter of it and 8 threads of 6-op batches fill it: those batches are
# recorded by their calling threads.  Every batch must still be in the trace,
# each exactly once, with the right thread.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# writer TRACE: "vtid tid" of every batch event
writer() { grep ' cubatchtrace:batch: ' "$1" | sed -n 's/.* vtid = \([0-9]*\),.* tid = \([0-9]*\),.*/\1 \2/p'; }

export CUBATCHTRACE_QUEUE_KB=16
K=4; M=64
traced "rbig-$$" "$CLIENTS/client_threads" $K $M
t="$CBT_TMP/rbig-$$.trace"
is "$st" 0 "a 64-op batch, larger than a quarter of a 16 KiB queue: the client exits 0"
is "$(nbatches "$t")" $((8 * K)) "every one of the $((8 * K)) large batches is recorded"
is "$(writer "$t" | awk '$1 == $2' | wc -l)" $((8 * K)) \
    "each large batch is recorded by its calling thread (vtid = tid), not the recorder"

K=200; M=6
traced "rfull-$$" "$CLIENTS/client_threads" $K $M
t="$CBT_TMP/rfull-$$.trace"
is "$st" 0 "8 threads x $K batches into a 16 KiB queue: the client exits 0"
is "$(nbatches "$t")" $((8 * K)) "every one of the $((8 * K)) batches is recorded, queue full or not"
ids=$(batch_results "$t" | awk '{print $1}' | sort -n | uniq | wc -l)
is "$ids" $((8 * K)) "each batch exactly once (distinct batch_ids)"
is "$(writer "$t" | awk '{print $2}' | sort | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')" "$K " \
    "$K batch events for each of the 8 calling threads"
"$top_builddir/tools/cubatchtrace" summary --json --pid "$pid" "$CBT_TMP/rfull-$$" >"$CBT_TMP/rfull.json" 2>&1
is "$(grep -o '"ops": [0-9]*' "$CBT_TMP/rfull.json" | head -1) $(grep -o '"bytes": [0-9]*' "$CBT_TMP/rfull.json" | head -1)" \
    "\"ops\": $((8 * K * M)) \"bytes\": $((K * M * (64 + 65 + 66 + 67 + 68 + 69 + 70 + 71)))" \
    "every op of every batch recorded with its size, through the full queue (the client's own count)"
deferred=$(writer "$t" | awk '$1 != $2' | wc -l)
ok "$([ "$deferred" -gt 0 ] && echo 0 || echo 1)" "some batches went through the recorder thread ($deferred of $((8 * K)))"
unset CUBATCHTRACE_QUEUE_KB

# A bad setting is said once and the default used.
traced "rbad-$$" env CUBATCHTRACE_QUEUE_KB=lots CUBATCHTRACE_RECORD=sometimes "$CLIENTS/client_threads" 1 2
is "$st" 0 "bad CUBATCHTRACE_QUEUE_KB and CUBATCHTRACE_RECORD: the client still exits 0"
is "$(grep -c 'CUBATCHTRACE_QUEUE_KB=lots is not a size' "$CBT_TMP/rbad-$$.err")" 1 \
    "bad CUBATCHTRACE_QUEUE_KB: one line on stderr"
is "$(grep -c 'CUBATCHTRACE_RECORD=sometimes is not one of deferred, inline' "$CBT_TMP/rbad-$$.err")" 1 \
    "bad CUBATCHTRACE_RECORD: one line on stderr"
is "$(nbatches "$CBT_TMP/rbad-$$.trace")" 8 "bad settings: the 8 batches are recorded"
# driver_ns: with the double taking at least 3 ms per batch call, each batch's
# driver_ns must lie between 3 ms and 1 s, and their median below 4.5 ms (raw
# time-stamp counter ticks, unconverted, would read at least 1.5 times too
# long), whether the calling thread timed it with the time-stamp counter
# (deferred) or the monotonic clock (inline).
for rec in deferred inline; do
    traced "rns$rec-$$" env FAKECUDA_BATCH_SLEEP_US=3000 CUBATCHTRACE_RECORD=$rec "$CLIENTS/client_threads" 2 2
    t="$CBT_TMP/rns$rec-$$.trace"
    ns=$(grep ' cubatchtrace:batch: ' "$t" | sed -n 's/.* driver_ns = \([0-9]*\),.*/\1/p')
    is "$(echo "$ns" | awk 'NF' | wc -l) $(echo "$ns" | awk '$1 >= 3000000 && $1 < 1000000000' | wc -l)" "16 16" \
        "driver_ns ($rec): all 16 batches timed at 3 ms to 1 s ($(echo "$ns" | sort -n | sed -n '1p;$p' | tr '\n' ' '))"
    med=$(echo "$ns" | sort -n | sed -n 8p)
    ok "$([ "${med:-0}" -lt 4500000 ] && echo 0 || echo 1)" "driver_ns ($rec): median $med ns, under 4.5 ms"
done
done_testing
