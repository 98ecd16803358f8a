#!/bin/sh
# SPDX-License-Identifier: MIT
# A trace named twice (T T, T and T/, T and a directory under it, T through
# a symbolic link) is read once, the same in every command that reads traces.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session tw || { ok 1 "session starts"; done_testing; }
gen_run tw n=3,ops=2,violate=overlap_src_dst
gen_stop tw
T=$(trace_of tw)
P=$(pids_of tw)
ln -s "$T" "$CBT_TMP/link"
SUB=$(dirname "$(find "$T" -name metadata | head -1)")

batches() { "$CBT" summary --json $P "$@" | "$PYTHON3" -c 'import json,sys; d=json.load(sys.stdin); print(d["batches"], d["ops"])'; }
findings() { "$CBT" check $P "$@" | grep -c '^hazard'; }
shown() { "$CBT" show --records $P "$@" | grep -c '^batch '; }
is "$(batches "$T")" "3 6" "summary T: the 3 batches"
for twice in "$T $T" "$T $T/" "$T $SUB" "$T $CBT_TMP/link"; do
    is "$(batches $twice)" "3 6" "summary $(echo "$twice" | sed "s|$CBT_TMP/||g"): counted once"
    is "$(findings $twice)" "$(findings "$T")" "check, the same: each finding once"
    is "$(shown $twice)" 3 "show, the same: each batch once"
done
"$CBT" summary --json $P --jobs 1 "$T" "$T" >"$CBT_TMP/j1.json"
"$CBT" summary --json $P "$T" >"$CBT_TMP/j0.json"
"$PYTHON3" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a["batches"] != b["batches"])' \
    "$CBT_TMP/j0.json" "$CBT_TMP/j1.json"
ok $? "summary --jobs 1 T T: counted once"
done_testing
