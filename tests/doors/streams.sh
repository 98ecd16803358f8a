#!/bin/sh
# SPDX-License-Identifier: MIT
# What a stream handle names (id, context, device) is kept per thread across
# batches (src/batch.c: describe_stream) until cuStreamDestroy or a context's
# destruction, both wrapped (src/memwrap.c).  client_streams destroys each
# stream and creates the next, which the double places at the freed handle (it hands destroyed handles out again):
# every batch must still be recorded with its own stream's id, whether
# cuStreamDestroy was linked or came from cuGetProcAddress.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# ids TRACE: the stream_id of every batch after the first (a warm-up on the
# setup stream), in batch_id order, on one line (show: id, stream_id)
ids() {
    show_batches "$1" | show_field id stream_id | sort -n | awk 'NR > 1 { printf "%s ", $2 }'
}
# want OUT: each printed stream's id twice (two batches per stream)
want() { sed -n 's/^stream [0-9]* handle=[^ ]* id=\([0-9]*\)$/\1 \1/p' "$1" | tr '\n' ' '; }

for how in direct gpa; do
    traced "st$how-$$" "$CLIENTS/client_streams" $how
    is "$st" 0 "streams ($how cuStreamDestroy): the client exits 0"
    nh=$(sed -n 's/^stream [0-9]* handle=\([^ ]*\) .*/\1/p' "$CBT_TMP/st$how-$$.out" | sort -u | wc -l)
    ok "$([ "$nh" -lt 3 ] && echo 0 || echo 1)" \
        "streams ($how): the double handed out a destroyed stream's handle again ($nh distinct of 3; what the test needs)"
    is "$(ids "$CBT_TMP/st$how-$$.trace")" "$(want "$CBT_TMP/st$how-$$.out")" \
        "streams ($how): each batch is recorded with its own stream's id, not a destroyed one's"
done
done_testing
