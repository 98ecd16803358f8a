#!/bin/sh
# SPDX-License-Identifier: MIT
# Batches across two GPUs: tests/tool/client_peer over the test double with
# two devices (FAKECUDA_DEVICE_COUNT=2), under the shim, while a session
# records.  The trace must carry each op's source and destination device (as
# `cubatchtrace show` decodes them), and `summary --json --pid PID` must
# attribute the peer copies correctly:
# by_direction's `peer` and `DtoD` rows, and by_device equal to the totals
# the client computed itself.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found"
CLIENT="$top_builddir/tests/tool/client_peer"
[ -x "$CLIENT" ] || skip_all "tests/tool/client_peer not built"
FAKECUDA_DEVICE_COUNT=2; export FAKECUDA_DEVICE_COUNT

# As tests/doors/doors.sh's `traced`: the background subshell execs env, which
# execs the client, so $! is the client's own pid (its vpid in the trace).
cbt_session_start "peer-$$" || { echo "Bail out! cannot create the LTTng session peer-$$"; exit 1; }
( env() { exec env "$@"; }; cbt_run "$CLIENT" ) >"$CBT_TMP/peer.out" 2>"$CBT_TMP/peer.err" &
pid=$!
wait $pid
st=$?
cbt_session_stop "peer-$$"
TRACE="$CBT_TMP/peer-$$"
is "$st" 0 "client_peer exits 0 under the shim with two devices"
[ "$st" -eq 0 ] || sed 's/^/#   stderr: /' "$CBT_TMP/peer.err"
line=$(grep '^peer: ' "$CBT_TMP/peer.out")
want_tot=$(echo "$line" | sed -n 's/^peer: \([0-9]*\) batches, \([0-9]*\) ops, \([0-9]*\) bytes; all checked bytes arrived$/\1 \2 \3/p')
[ -n "$want_tot" ]; ok $? "the client says every checked byte arrived: $line"

# --- the trace: the batch-level fields of the client's 3 batches, as `cubatchtrace show` decodes them
"$CBT" show --records --pid "$pid" "$TRACE" >"$CBT_TMP/peer.show" 2>"$CBT_TMP/show.err"
is "$?" 0 "show --pid exits 0"
is "$(grep -c "^batch vpid=$pid " "$CBT_TMP/peer.show")" 3 "the trace holds the client's 3 batch events"
is "$(grep "^batch vpid=$pid " "$CBT_TMP/peer.show" | sed -n 's/.* num_ops=\([0-9]*\) recorded=\([0-9]*\) .* device_count=\([0-9-]*\) .*/\1 \2 \3/p' | tr '\n' ,)" \
   "2 2 2,6 6 2,2 2 2," "each batch records all its ops, and the system's 2 devices"

# --- the peer batch, op by op, as `cubatchtrace show` decodes it:
# "op I src_device S dst_device D bytes B", and every operand device memory
id=$(sed -n 's/^batch .* id=\([0-9]*\) .* num_ops=6 .*/\1/p' "$CBT_TMP/peer.show")
grep "^op vpid=$pid id=$id " "$CBT_TMP/peer.show" |
    sed -n 's/.* i=\([0-9]*\) src=POINTER:\([a-z_]*\):\([0-9-]*\):[^ ]* dst=POINTER:\([a-z_]*\):\([0-9-]*\):[^ ]* .* bytes=\([0-9]*\).*/op \1 src_device \3 dst_device \5 bytes \6 mem \2 \4/p' \
    >"$CBT_TMP/peer.ops"
is "$(sed 's/ mem .*//' "$CBT_TMP/peer.ops")" "$(grep '^op ' "$CBT_TMP/peer.out")" \
   "the peer batch's src_device, dst_device and bytes per op are the client's"
is "$(sed 's/.* mem //' "$CBT_TMP/peer.ops" | tr ' ' '\n' | sort -u | tr '\n' ' ')" "device " \
   "every operand of the peer batch is recorded as device memory"
is "$(grep -c "^finding vpid=$pid " "$CBT_TMP/peer.show")" 0 "no finding: no op writes what another touches"

# --- the summary
"$CBT" summary --json --pid "$pid" "$TRACE" >"$CBT_TMP/peer.json" 2>"$CBT_TMP/sum.err"
is "$?" 0 "summary --json --pid exits 0"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"], d["bytes"])' "$CBT_TMP/peer.json")" \
   "$want_tot" "summary batches/ops/bytes equal the client's own count"
for dir in peer DtoD HtoD DtoH; do
    want=$(sed -n "s/^direction $dir ops \([0-9]*\) bytes \([0-9]*\)$/\1 \2/p" "$CBT_TMP/peer.out")
    got=$("$PYTHON3" -c 'import json,sys
d=json.load(open(sys.argv[1])); r=[r for r in d["by_direction"] if r["name"] == sys.argv[2]]
print("%d %d" % (r[0]["ops"], r[0]["bytes"]) if r else "no row")' "$CBT_TMP/peer.json" "$dir")
    is "$got" "$want" "by_direction $dir: ops and bytes"
done
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(r["name"] for r in d["by_direction"])))' "$CBT_TMP/peer.json")" \
   "DtoD DtoH HtoD peer" "by_direction has no other row"
# memory kinds: pinned host memory on the host side, device memory on both sides of DtoD and peer
want=$(awk '/^direction / {k[$2] = $4; b[$2] = $6}
    END {printf "device->device %d %d,device->host_pinned %d %d,host_pinned->device %d %d,", k["DtoD"] + k["peer"], b["DtoD"] + b["peer"], k["DtoH"], b["DtoH"], k["HtoD"], b["HtoD"]}' "$CBT_TMP/peer.out")
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("".join("%s %d %d," % (r["name"], r["ops"], r["bytes"]) for r in sorted(d["by_memkinds"], key=lambda r: r["name"])))' "$CBT_TMP/peer.json")" \
   "$want" "by_memkinds: device->device, device->host_pinned, host_pinned->device, ops and bytes"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["findings"]), d["read"])' "$CBT_TMP/peer.json")" \
   "0 {'pending_batches': 0, 'malformed_batches': 0, 'incomplete_batches': 0, 'not_validated_batches': 0, 'findings_not_counted': 0}" \
   "no finding; every batch whole and validated"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(r["device"]) for r in d["by_device"]))' "$CBT_TMP/peer.json")" \
   "0 1" "by_device: one row per device, in ordinal order"
"$PYTHON3" -c 'import json,sys
d=json.load(open(sys.argv[1]))
keys = ("ops_out", "bytes_out", "ops_in", "bytes_in", "peer_ops_out", "peer_bytes_out", "peer_ops_in", "peer_bytes_in")
for r in d["by_device"]:
    print("device %s %s" % (r["device"], " ".join("%s %d" % (k, r[k]) for k in keys)))' "$CBT_TMP/peer.json" >"$CBT_TMP/peer.dev"
for dev in 0 1; do
    is "$(grep "^device $dev " "$CBT_TMP/peer.dev")" "$(grep "^device $dev " "$CBT_TMP/peer.out")" \
       "by_device $dev equals the client's own totals"
done
# every peer byte out of one device went into the other
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d["by_device"]
print(v[0]["peer_bytes_out"] == v[1]["peer_bytes_in"] and v[1]["peer_bytes_out"] == v[0]["peer_bytes_in"],
      sum(r["peer_bytes_out"] for r in v) == [r["bytes"] for r in d["by_direction"] if r["name"] == "peer"][0])' "$CBT_TMP/peer.json")" \
   "True True" "peer bytes out of each device are the other's peer bytes in, and add up to by_direction peer"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(list(d).index("by_device") == list(d).index("by_direction") + 1, d["unpaired"]["tables_full"])' "$CBT_TMP/peer.json")" \
   "True False" "by_device follows by_direction; no table full"

# --- the text summary has the same table
"$CBT" summary --all --raw --pid "$pid" "$TRACE" >"$CBT_TMP/peer.txt" 2>>"$CBT_TMP/sum.err"
is "$?" 0 "summary (text) exits 0"
grep -q '^# Bytes by device ' "$CBT_TMP/peer.txt"; ok $? "text: the Bytes by device table"
grep -q '^Device *| *Ops out | *Bytes out | *Ops in | *Bytes in | *Peer ops out | *Peer bytes out | *Peer ops in | *Peer bytes in$' \
    "$CBT_TMP/peer.txt"; ok $? "text: its columns"
for dev in 0 1; do
    want=$(sed -n "s/^device $dev ops_out \([0-9]*\) bytes_out \([0-9]*\) ops_in \([0-9]*\) bytes_in \([0-9]*\) peer_ops_out \([0-9]*\) peer_bytes_out \([0-9]*\) peer_ops_in \([0-9]*\) peer_bytes_in \([0-9]*\)$/$dev \1 \2 \3 \4 \5 \6 \7 \8/p" "$CBT_TMP/peer.out")
    got=$(grep "^$dev *| " "$CBT_TMP/peer.txt" | tr -d '|' | tr -s ' ')
    is "$got" "$want" "text: device $dev row"
done
[ -s "$CBT_TMP/sum.err" ] && sed 's/^/#   summary stderr: /' "$CBT_TMP/sum.err"
done_testing
