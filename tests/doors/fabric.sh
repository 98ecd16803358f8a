#!/bin/sh
# SPDX-License-Identifier: MIT
# cuFabricCpyBatchAsync (CUDA 13.5) through the exported symbol and _ptsz,
# dlsym and cuGetProcAddress_v2 at 13050 (and _ptsz): forwarded unchanged
# (the double has no fabric: CUDA_ERROR_NOT_SUPPORTED for well-formed ops,
# INVALID_VALUE for flags 1) and recorded as one cubatchtrace:fabric event
# per call, decoded by the trace's own metadata: the API's name, the door,
# the op count and the result by name.  The summary counts the calls, their
# ops and failures apart from the copies (a fabric call's ops are not read).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

want_out="fabric=801 fabric_bad=1"
bare bare_fabric "$CLIENTS/client_single" sym fabric
is "$bst $(bare_out bare_fabric | grep -v '^pid')" "0 $want_out" "without the shim: NOT_SUPPORTED, then INVALID_VALUE"

for spec in sym::symbol sym_ptsz:_ptsz:symbol dlsym::symbol gpa13050::getprocaddress gpa13050_ptsz:_ptsz:getprocaddress; do
    door=${spec%%:*}; rest=${spec#*:}
    suffix=${rest%%:*}; via=${rest#*:}
    t="fabric_$door-$$"
    traced "$t" "$CLIENTS/client_single" "$door" fabric
    is "$st $(out "$t" | grep -v '^pid')" "0 $want_out" "$door: under the shim the driver's answers unchanged"
    is "$(grep ' cubatchtrace:fabric: ' "$CBT_TMP/$t.trace" | sed 's/.*api = ( "\([A-Za-z_]*\)".*door = ( "\([a-z]*\)".*num_ops = \([0-9]*\),.*flags = \([0-9]*\),.*result = ( "\([A-Z_]*\)".*/\1 \2 \3 \4 \5/')" \
"cuFabricCpyBatchAsync$suffix $via 2 0 CUDA_ERROR_NOT_SUPPORTED
cuFabricCpyBatchAsync$suffix $via 2 1 CUDA_ERROR_INVALID_VALUE" \
        "$door: two cubatchtrace:fabric events: API, door, 2 ops, flags, the result by name"
    is "$(grep -cE ' cubatchtrace:(bs?|cs?): ' "$CBT_TMP/$t.trace")" 0 "$door: no copy batch event"
done
"$top_builddir/tools/cubatchtrace" summary --json --pid "$pid" "$CBT_TMP/$t" >"$CBT_TMP/$t.json" 2>"$CBT_TMP/$t.json.err"
is "$? $("$PYTHON3" -c 'import json, sys; d = json.load(open(sys.argv[1])); f = d["fabric"]
print(d["batches"], d["ops"], d["bytes"], f["calls"], f["ops"], f["failed_calls"], f["driver_ns"] > 0)' "$CBT_TMP/$t.json" 2>&1)" \
    "0 0 0 0 2 4 2 True" "summary --json: no copy batch, no op; the fabric calls counted apart (2 calls, 4 ops, 2 failed, their driver time)"
"$top_builddir/tools/cubatchtrace" summary --pid "$pid" "$CBT_TMP/$t" >"$CBT_TMP/$t.txt" 2>&1
is "$? $(grep '^# fabric batches:' "$CBT_TMP/$t.txt")" \
    "0 # fabric batches: 2 cuFabricCpyBatchAsync calls of 4 ops (2 failed); their copies are not read, and no other figure counts them" \
    "summary: one line for the fabric calls"
"$top_builddir/tools/cubatchtrace" report -o "$CBT_TMP/$t.html" --pid "$pid" "$CBT_TMP/$t" >"$CBT_TMP/$t.report" 2>&1
is "$? $(grep -o 'Fabric batch calls[^<]*</t[dh]><t[dh][^>]*>[^<]*' "$CBT_TMP/$t.html" | sed 's/<[^>]*>/|/g')" \
    "0 Fabric batch calls (cuFabricCpyBatchAsync; their copies not read)||2" "report: the fabric calls in its totals"
done_testing
