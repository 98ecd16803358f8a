#!/bin/sh
# SPDX-License-Identifier: MIT
# The CUDA 13.2 single-op calls through every door of the shim: the exported
# cuMemcpy3DWithAttributesAsync and cuMemcpyWithAttributesAsync and their
# _ptsz, dlsym on the driver, cuGetProcAddress_v2 at 13020 (and _ptsz), and
# the runtime's way (cuGetProcAddress asked for itself, then for them).
# Each is recorded as what it is: a batch of one op (copy) under its own API
# name and door; the valid ones move every byte, the invalid one gets the
# finding an op of a batch gets (extent_zero, copy_size_zero), with the
# driver's answer unchanged.  Without a door's hook the client reaches the
# double directly and no batch event appears.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

want_out="one3d=0 one1d=0 bad3d=1 bad1d=1 bytes=same"
bare bare_single "$CLIENTS/client_single" sym
is "$bst $(bare_out bare_single | grep -v '^pid')" "0 $want_out" "client_single without the shim: the two valid calls move every byte, the two invalid ones fail"

for spec in sym::symbol sym_ptsz:_ptsz:symbol dlsym::symbol gpa13020::getprocaddress \
            gpa13020_ptsz:_ptsz:getprocaddress runtime::getprocaddress; do
    door=${spec%%:*}; rest=${spec#*:}
    suffix=${rest%%:*}; via=${rest#*:}
    t="one_$door-$$"
    traced "$t" env CUBATCHTRACE_REPORT=stderr "$CLIENTS/client_single" "$door"
    is "$st $(out "$t" | grep -v '^pid')" "0 $want_out" "$door: under the shim (validating) the same answers, every byte arrives"
    is "$(nbatches "$CBT_TMP/$t.trace") $(nbatches1d "$CBT_TMP/$t.trace")" "2 2" \
        "$door: two 3D batch events (cubatchtrace:b) and two 1D (cubatchtrace:c) for its vpid"
    is "$(show_of "$CBT_TMP/$t.trace" | grep '^batch ' | show_field api door num_ops recorded outcome result)" \
"cuMemcpy3DWithAttributesAsync$suffix $via 1 1 forwarded CUDA_SUCCESS
cuMemcpyWithAttributesAsync$suffix $via 1 1 forwarded CUDA_SUCCESS
cuMemcpy3DWithAttributesAsync$suffix $via 1 1 forwarded CUDA_ERROR_INVALID_VALUE
cuMemcpyWithAttributesAsync$suffix $via 1 1 forwarded CUDA_ERROR_INVALID_VALUE" \
        "$door: four batches of one under their own API names, via $via, with the driver's results"
    is "$(show_of "$CBT_TMP/$t.trace" | grep '^op ' | awk '{print $7}' | tr '\n' ';')" \
        "extent=4096x1x1;extent=4096x1x1;extent=0x1x1;extent=0x1x1;" "$door: each op (copy) recorded with its extent"
    is "$(show_of "$CBT_TMP/$t.trace" | grep '^finding ' | show_field rule op | tr '\n' ';')" \
        "extent_zero 0;copy_size_zero 0;" "$door: the invalid op and copy get the findings of op 0 of a batch"
    is "$(grep -c 'extent_zero\|copy_size_zero' "$CBT_TMP/$t.err")" 2 "$door: the stderr report names both"
done

# Repeated single-op calls take the shim's short path once their buffers
# are known (a batch like the thread's previous one), and every call is
# recorded: 2 x 40 batches of one, each with its bytes.
t="one_loop-$$"
traced "$t" "$CLIENTS/client_single" gpa13020 loop 40
is "$(out "$t" | grep '^loop=' | sed 's/ steps=.*//')" "loop=40 failed=0 bytes=44780" "loop: 80 calls, every one succeeds"
steps=$(out "$t" | sed -n 's/.* steps=\([0-9-]*\)$/\1/p')
ok "$([ -n "$steps" ] && [ "$steps" -ge 1 ] && [ "$steps" -lt 20 ]; echo $?)" \
    "loop: most calls take the short path (the full steps: $steps of 80)"
"$top_builddir/tools/cubatchtrace" summary --json --pid "$pid" "$CBT_TMP/$t" >"$CBT_TMP/$t.json" 2>&1
is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["batches"], d["ops"], d["bytes"], ";".join("%s %d %d" % (r["name"], r["batches"], r["bytes"]) for r in d["by_api"]))
' "$CBT_TMP/$t.json" 2>&1)" "80 80 44780 cuMemcpy3DWithAttributesAsync 40 40000;cuMemcpyWithAttributesAsync 40 4780" \
    "loop: summary counts the 80 batches of one and their exact bytes"

# Over the double built as the 13.0 driver, which lacks them: every lookup
# door answers the program as the driver does (nothing found), with the
# shim as without it, under a session.
for door in dlsym gpa13020 gpa13020_ptsz runtime; do
    t="one13_$door-$$"
    ( CBT_FAKECUDA_DIR=$CBT_FAKECUDA13_0_DIR; bare "$t" "$CLIENTS/client_single" "$door"; echo "$bst" >"$CBT_TMP/$t.bst" )
    ( CBT_FAKECUDA_DIR=$CBT_FAKECUDA13_0_DIR; traced "$t" "$CLIENTS/client_single" "$door" >/dev/null; echo "$st" >"$CBT_TMP/$t.st" )
    is "$(cat "$CBT_TMP/$t.bst") $(bare_out "$t" | grep -v '^pid') / $(cat "$CBT_TMP/$t.st") $(out "$t" | grep -v '^pid')" \
        "3 door $door: not found / 3 door $door: not found" "13.0 driver, $door: not found, with the shim as without it"
done

# Every reader treats them as batches of one: the summary's API table, the
# timeline, the SQLite export and the babeltrace2 plugin name them, and GPU
# time times the two the driver took.
t="one_gpu-$$"
traced "$t" env CUBATCHTRACE_GPU_TIME=1 "$CLIENTS/client_single" gpa13020
tool="$top_builddir/tools/cubatchtrace"
"$tool" summary --json --pid "$pid" "$CBT_TMP/$t" >"$CBT_TMP/$t.json" 2>&1
is "$("$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["batches"], d["ops"], d["bytes"], d["failed_batches"], sum(f["count"] for f in d["findings"]))
for r in d["by_api"]:
    print(r["name"], r["batches"], r["ops"], r["bytes"])
print(d["gpu"]["batches_timed"])
' "$CBT_TMP/$t.json" 2>&1)" "4 4 8192 2 2
cuMemcpy3DWithAttributesAsync 2 2 4096
cuMemcpyWithAttributesAsync 2 2 4096
2" "summary --json: 4 batches of one op, 8192 bytes, 2 failed, 2 findings; by API variant; 2 batches timed on the GPU"
"$tool" timeline -o "$CBT_TMP/$t.tl.json" --pid "$pid" "$CBT_TMP/$t" >/dev/null 2>&1
is "$("$PYTHON3" -c '
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
c = collections.Counter(e["name"] for e in ev if e.get("ph") == "X" and "WithAttributes" in e.get("name", ""))
print(";".join("%s %d" % kv for kv in sorted(c.items())))
' "$CBT_TMP/$t.tl.json" 2>&1)" "cuMemcpy3DWithAttributesAsync 3;cuMemcpyWithAttributesAsync 3" \
    "timeline: each API's two calls a slice on the thread, the one the GPU ran another on its stream track"
"$tool" export -o "$CBT_TMP/$t.sqlite" --pid "$pid" "$CBT_TMP/$t" >/dev/null 2>&1
is "$("$PYTHON3" -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(";".join("%s %d" % r for r in db.execute("select api, count(*) from batch group by api order by api")))
' "$CBT_TMP/$t.sqlite" 2>&1)" "cuMemcpy3DWithAttributesAsync 2;cuMemcpyWithAttributesAsync 2" "export: the batch table names their API"
plugin="$top_builddir/tools/plugin/.libs"
if [ -d "$plugin" ]; then
    is "$("$BABELTRACE2" --plugin-path="$plugin" "$CBT_TMP/$t" -c filter.cubatchtrace.expand 2>&1 | grep -F "vpid = $pid," |
        grep -o 'api = ( "[A-Za-z0-9_]*"' | sort | uniq -c | awk '{print $1, $5}' | tr '\n' ';')" \
        '4 "cuMemcpy3DWithAttributesAsync";4 "cuMemcpyWithAttributesAsync";' \
        "babeltrace2 plugin: each batch and its gpu_time decoded with the API's name"
else
    ok 0 "babeltrace2 plugin: not built in $plugin"
fi
done_testing
