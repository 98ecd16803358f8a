#!/bin/sh
# SPDX-License-Identifier: MIT
# Memory kinds kept across batches (src/operands.c) and forgotten where memory
# changes (src/memwrap.c), with the changes made through each door of the
# driver: direct calls, pointers from cuGetProcAddress, pointers from dlsym.
# tests/clients/client_kindcache.c makes the same batch over an address that
# is device memory, then pageable (freed), then pinned (registered), then
# device memory of one page and of two, over a pageable buffer that is
# registered, unregistered, allocated pinned in place and freed, and over a
# CUDA array replaced by one of another element size.  A second batch over
# unchanged memory, or after a capture of another stream
# (cuStreamBeginCapture is wrapped through the same doors, for GPU time), or
# a stream destroyed, must ask the driver nothing; a batch after a change
# asks again about the operands the change touched, only those, and records
# their new kind and bounds (all of them after more changes than the
# shim's log holds).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# field NAME RUN: the values of NAME for each op (show, tests/doors/btops.py), one line per batch.
field() {
    "$PYTHON3" "$top_srcdir/tests/doors/btops.py" "$1" "$CBT_TMP/$2.show" "$top_srcdir/include/cubatchtrace/catalog.h"
}
# queries RUN: the client's "NAME queries=N" lines, without the result.
queries() { sed -n 's/^\([a-z0-9-]*\) queries=\([0-9]*\) result=0$/\1 \2/p' "$CBT_TMP/$1.out"; }

src_mem_want="1 3 3 3 3 5
1 3 3 3 3 5
3 3 3 3 3 5
2 3 3 3 3 5
2 3 3 3 3 5
2 3 3 3 3 5
2 2 2 2 2 5
2 3 3 3 3 5
2 3 3 3 3 5
1 3 3 3 3 5
1 3 3 3 3 5
3 2 2 2 2 5
3 3 3 3 3 5
1 3 3 3 3 5
3 3 3 3 3 5"
elem_want="1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 4
1 1 1 1 1 1
1 1 1 1 1 1
1 1 1 1 1 1
1 1 1 1 1 1
1 1 1 1 1 1
1 1 1 1 1 1
1 1 1 1 1 1"
queries_want="learn 6
again 0
freed 1
registered 1
again2 0
captured 0
registered-b 1
unregistered-b 4
new-array 0
realloc-small 1
realloc-large 1
hostalloc-b 2
freehost-b 4
before-overflow 1
after-overflow 6"

for door in symbol gpa dlsym; do
    run="kc-$door-$$"
    traced "$run" "$CLIENTS/client_kindcache" "$door"
    is "$st" 0 "$door: client exits 0"
    is "$(grep -c ' result=0$' "$CBT_TMP/$run.out")" 15 "$door: 15 batches succeed"
    is "$(grep 'array handle' "$CBT_TMP/$run.out")" "array handle reused: yes" \
        "$door: the new array has the destroyed one's handle (else the array check proves nothing)"
    is "$(field src_mem "$run")" "$src_mem_want" \
        "$door: src kinds follow every change (device, freed -> pageable, registered -> pinned, unregistered)"
    is "$(field dst_mem "$run" | sort -u)" "1 1 1 1 1 1" "$door: dst kinds: device"
    is "$(field elem_size "$run")" "$elem_want" "$door: a new array with a reused handle is asked about again"
    is "$(field src_alloc_size "$run" | sed -n '10,11p' | cut -d' ' -f1 | tr '\n' ' ')" "4096 8192 " \
        "$door: a new allocation at a freed one's address is recorded with its own size"
    is "$(queries "$run")" "$queries_want" \
        "$door: no pointer query for unchanged memory (a capture begun and ended on another stream, a stream destroyed change none); after a change, only the operands it touched (R: 1; B: 1 pinned range, 4 pageable pages; an array: none; after more changes than the log holds, all)"
done

# A driver whose cuGetProcAddress hands out internal addresses for cuMemFree
# and cuMemHostRegister: the shim cannot see those calls, so it keeps nothing
# across batches, and every kind is still right.
run="kc-internal-$$"
FAKECUDA_GPA_INTERNAL=1 traced "$run" "$CLIENTS/client_kindcache" gpa
is "$st" 0 "internal addresses: client exits 0"
is "$(field src_mem "$run")" "$src_mem_want" "internal addresses: src kinds follow every change"
is "$(queries "$run" | awk '{print $2}' | tr '\n' ' ')" "6 6 6 6 6 6 3 6 6 6 6 3 6 6 6 " \
    "internal addresses: nothing kept across batches (each batch asks again)"

# Strict mode: pageable memory unmapped with no CUDA call is caught, not
# trusted from the cache (forwarded, the driver would crash the process).
run="kc-munmap-$$"
CUBATCHTRACE_MODE=strict traced "$run" "$CLIENTS/client_kindcache" symbol munmap
is "$st" 0 "strict, munmap: client exits 0 (the batch from unmapped memory was refused)"
is "$(sed -n 's/^unmapped-b queries=[0-9]* result=\([0-9]*\)$/\1/p' "$CBT_TMP/$run.out")" 1 \
    "strict, munmap: the batch from unmapped memory fails with CUDA_ERROR_INVALID_VALUE"
is "$(field src_mem "$run" | tail -n 1)" "3 6 6 6 6 5" "strict, munmap: the unmapped pages are recorded unmapped"
done_testing
