#!/bin/sh
# SPDX-License-Identifier: MIT
# Memory kinds and bytes in the trace (src/operands.c): one batch with a
# pageable, an array, a pinned, a managed and a device source.  The pageable
# source sits in the page of the CUarray handle, which a cache keyed by
# address alone would mistake for the array (or the array for pageable
# memory).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

traced "kinds-$$" "$CLIENTS/client_kinds"
is "$st" 0 "client_kinds exits 0 (bytes arrived)"
# field NAME: the values of NAME for the batch's ops (show, tests/doors/btops.py), space-separated.
field() {
    "$PYTHON3" "$top_srcdir/tests/doors/btops.py" "$1" "$CBT_TMP/kinds-$$.show" "$top_srcdir/include/cubatchtrace/catalog.h"
}
is "$(field src_mem)" "3 5 2 4 1" "src_mem: host_pageable, array, host_pinned, managed, device"
is "$(field dst_mem)" "1 1 1 1 3" "dst_mem: device x4, then host_pageable"
is "$(field elem_size)" "1 4 1 1 1" "elem_size: 4 for the float array op, 1 for pointer copies"
is "$(field bytes)" "64 1024 128 128 128" "bytes: 64, 16x16 floats, 128 x3"
done_testing
