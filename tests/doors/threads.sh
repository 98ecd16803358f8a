#!/bin/sh
# SPDX-License-Identifier: MIT
# 8 threads at once, each 25 batches of 6 ops through the exported
# cuMemcpy3DBatchAsync_v2 (door symbol).  The blocking channel loses nothing,
# so the counts are exact; per-thread scratch and the thread-safe first use
# of the driver (src/batch.c, src/driver.c) are what this covers.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

K=25; M=6
bare thr "$CLIENTS/client_threads" $K $M
traced "thr-$$" "$CLIENTS/client_threads" $K $M
t="$CBT_TMP/thr-$$.trace"
is "$st" 0 "8 threads: exits 0 (every batch's bytes checked)"
is "$(out "thr-$$")" "$(bare_out thr)" "8 threads: same summary as without the shim"
is "$(bare_out thr)" "batches=$((8 * K)) ops=$((8 * K * M)) bytes=$((K * M * (64 + 65 + 66 + 67 + 68 + 69 + 70 + 71)))" \
    "8 threads: the client made 8 x $K batches of $M ops"
is "$(nbatches "$t")" $((8 * K)) "8 threads: exactly $((8 * K)) batch events for the vpid"
is "$(batches "$t" | sort -u)" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS $M -" \
    "8 threads: every batch recorded as cuMemcpy3DBatchAsync_v2 via symbol with $M ops"
# Each calling thread writes its own events: the payload's tid is the vtid
# of the thread that wrote the event.
tids() { batch_events "$1" | awk '$1 == "b" {print $4}'; }
per_thread=$(tids "$t" | sort | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')
nthreads=$(tids "$t" | sort -u | wc -l)
is "$nthreads $per_thread" "8 $K " "8 threads: 8 distinct tids with $K batch events each"
same=$(batch_events "$t" | awk '$1 == "b" && $2 == $4' | wc -l)
is "$same" $((8 * K)) "8 threads: every batch event written by its calling thread (tid = vtid)"
ids=$(batch_results "$t" | awk '{print $1}' | sort -n | uniq | wc -l)
is "$ids" $((8 * K)) "8 threads: every batch_id distinct"
# A thread takes its batch numbers in blocks (src/process.h): they rise
# along each thread's events, whatever the other threads take.
falls=$(batch_events "$t" | awk '$1 == "b" { if (($2 in last) && $3 <= last[$2]) n++; last[$2] = $3 } END { print n + 0 }')
is "$falls" 0 "8 threads: each thread's batch numbers rise along its events"
"$top_builddir/tools/cubatchtrace" summary --json --pid "$pid" "$CBT_TMP/thr-$$" >"$CBT_TMP/thr-$$.json" 2>&1
is "$(grep -o '"threads": [0-9]*' "$CBT_TMP/thr-$$.json")" '"threads": 8' \
    "8 threads: cubatchtrace summary counts the 8 calling threads"

# A setting of earlier versions is said once and changes nothing.
traced "throld-$$" env CUBATCHTRACE_RECORD=inline CUBATCHTRACE_QUEUE_KB=16 "$CLIENTS/client_threads" 2 2
is "$st" 0 "CUBATCHTRACE_RECORD and CUBATCHTRACE_QUEUE_KB set: exits 0"
is "$(grep -c 'is no longer read' "$CBT_TMP/throld-$$.err")" 2 "each old setting said once on stderr"
is "$(nbatches "$CBT_TMP/throld-$$.trace")" 16 "old settings: the 16 batches are recorded"
done_testing
