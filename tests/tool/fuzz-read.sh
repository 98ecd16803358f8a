#!/bin/sh
# SPDX-License-Identifier: MIT
# Fuzzing the reading path: copies of a real trace damaged at fixed seeds
# (random bytes over the stream files, over packet headers, bit flips,
# truncated stream and metadata files, damaged metadata), each read with
# `summary` and `check`.  Every run must end by itself with a status of its
# command (never a signal) within the time-out, print at most one line on
# stderr and nothing on stdout when it fails, and stay within the memory
# limit.  Runs for CBT_FUZZ_SECONDS (default 15) from seed CBT_FUZZ_SEED
# (default 1); a case is replayed with CBT_FUZZ_SEED=K CBT_FUZZ_SECONDS=0
# (every kind of damage runs once at least).  CBT_FUZZ_KEEP=DIR keeps the
# trace the cases were made from.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

# The trace: batches of all sizes, findings, the statedump, a second process.
gen_session fz || { ok 1 "session starts"; done_testing; }
gen_run fz n=150,ops=40 n=20,ops=3,violate=overlap_src_dst n=5,ops=300 n=3,ops=1,violate=pointer_null
gen_run fz n=30,ops=2,src=host_pageable
gen_stop fz
T=$(trace_of fz)
"$CBT" summary "$T" >/dev/null 2>&1; ok $? "the undamaged trace reads"
[ -n "${CBT_FUZZ_KEEP:-}" ] && mkdir -p "$CBT_FUZZ_KEEP" && cp -r "$T" "$CBT_FUZZ_KEEP/"

mkdir -p "$CBT_TMP/work"
mem=512M
if no_memory_limit; then
    mem=off
    skip "each reading stays within 512M of data: the memory limit is off in a $CBT_SANITIZER build"
fi
"$PYTHON3" "$top_srcdir/tests/tool/damage.py" "$CBT" "$T" "$CBT_TMP/work" \
    "${CBT_FUZZ_SECONDS:-15}" "${CBT_FUZZ_SEED:-1}" 2 "$mem" >"$CBT_TMP/results"
ok $? "the fuzzer ran"
tab=$(printf '\t')
while IFS="$tab" read -r holds what; do
    case $holds in
    0 | 1) ok "$holds" "$what" ;;
    *) echo "$holds${what:+$tab$what}" ;;
    esac
done <"$CBT_TMP/results"
done_testing
