#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad LTTng traces: no cubatchtrace events (a session recording
# lttng_ust_statedump:* only), a truncated and a corrupted stream file, a
# metadata file cut inside a packet (libbabeltrace2 2.0.4 loops forever on
# it; refused at once): ONE line on stderr, exit 2, nothing on stdout, no crash, no hang.
# A trace that lost events: summary says so and check fails (exit 4) unless
# --allow-discarded.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/guarded.sh"
need_sessiond

# a trace of the same generator where only the statedump was recorded
cbt_session_start "sd-$$" 'lttng_ust_statedump:*' || { ok 1 "session starts"; done_testing; }
gen_run sd n=3,ops=2
cbt_session_stop "sd-$$"
SD=$(trace_of sd)
find "$SD" -name metadata | grep -q .; ok $? "the statedump-only session wrote a trace"

# a good trace, then damaged copies of it
gen_session good && gen_run good n=40,ops=300 && gen_stop good
GOOD=$(trace_of good)
"$CBT" summary $(pids_of good) "$GOOD" >/dev/null 2>&1; ok $? "the undamaged trace reads"
cp -r "$GOOD" "$CBT_TMP/trunc"
cp -r "$GOOD" "$CBT_TMP/corrupt"
cp -r "$GOOD" "$CBT_TMP/metacut"
n=0
for f in $(find "$CBT_TMP/trunc" -path '*/index' -prune -o -type f -name 'ch*' -print); do
    s=$(wc -c <"$f"); [ "$s" -gt 0 ] && truncate -s $((s / 2 + 3)) "$f" && n=$((n + 1))
done
[ $n -gt 0 ]; ok $? "truncated $n stream files"
n=0
for f in $(find "$CBT_TMP/corrupt" -path '*/index' -prune -o -type f -name 'ch*' -print); do
    s=$(wc -c <"$f"); [ "$s" -gt 0 ] && printf 'garbage!' | dd of="$f" bs=1 conv=notrunc 2>/dev/null && n=$((n + 1))
done
[ $n -gt 0 ]; ok $? "corrupted $n stream files"
# LTTng writes its metadata as packets of 4 KiB: cut 100 bytes into the second
M=$(find "$CBT_TMP/metacut" -type f -name metadata)
s=$(wc -c <"$M")
[ "$s" -gt 4196 ]; ok $? "the metadata has two packets or more ($s bytes)"
truncate -s 4196 "$M"
METACUT=$(dirname "$M")

bad() { # DESCRIPTION PATTERN ARGS...
    _d=$1 _pat=$2; shift 2
    for _cmd in summary check; do
        guarded $_cmd "$@"
        one_line_error "$_cmd: $_d" "$st" "$CBT_TMP/out" "$CBT_TMP/err" "$_pat"
    done
}
bad "a trace with no cubatchtrace events" "$SD: no cubatchtrace events" "$SD"
bad "a truncated stream file" "cannot read trace $CBT_TMP/trunc" "$CBT_TMP/trunc"
bad "a corrupted stream file" "cannot read trace $CBT_TMP/corrupt/.*magic" "$CBT_TMP/corrupt"
# refused before libbabeltrace2 sees it (tools/read/precheck.c), not by the watchdog
bad "metadata cut inside a packet" \
    "cannot read trace $METACUT: metadata: packet 2 at byte 4096 is cut: it declares 4096 bytes, the file ends 100 bytes in\$" \
    "$CBT_TMP/metacut"
within "$took" 1; ok $? "check: metadata cut inside a packet: refused within a second ($took s)"

# A non-blocking channel of two 4 KiB sub-buffers per CPU: the generator's
# 20000 batches overflow it, and the tracer discards events.
"$LTTNG" --no-sessiond create "lossy-$$" --output="$CBT_TMP/lossy-$$" >/dev/null &&
    _cbt_sessions="$_cbt_sessions lossy-$$" &&
    "$LTTNG" enable-channel -u -s "lossy-$$" --subbuf-size=4096 --num-subbuf=2 ch >/dev/null &&
    "$LTTNG" enable-event -u -s "lossy-$$" -c ch 'cubatchtrace:*' >/dev/null &&
    "$LTTNG" add-context -u -s "lossy-$$" -c ch -t vpid -t vtid -t procname >/dev/null &&
    "$LTTNG" start "lossy-$$" >/dev/null
ok $? "a session with a small non-blocking channel starts"
gen_run lossy n=20000,ops=1
cbt_session_stop "lossy-$$"
LOSSY=$(trace_of lossy)
"$CBT" summary $(pids_of lossy) "$LOSSY" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 0 "summary of a lossy trace: exit 0"
lost=$(sed -n 's/^# discarded events: \([0-9]*\).*/\1/p' "$CBT_TMP/out")
[ "${lost:-0}" -gt 0 ]; ok $? "summary says the tracer discarded events (${lost:-none})"
"$CBT" check $(pids_of lossy) "$LOSSY" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 4 "check of a lossy trace: exit 4"
# (packets lost whole, as the ring overflows, may leave events uncounted: said so)
grep -Eq "^# the tracer discarded $lost events and [0-9]+ packets( \(and more, uncounted\))?: findings may be missing\$" \
    "$CBT_TMP/out"
ok $? "check says how many events the tracer discarded"
is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "check of a lossy trace: nothing on stderr"
"$CBT" check --allow-discarded $(pids_of lossy) "$LOSSY" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 0 "check --allow-discarded of a lossy trace: exit 0"
grep -q "^# the tracer discarded $lost events .* (--allow-discarded)\$" "$CBT_TMP/out"
ok $? "check --allow-discarded still says so"
"$CBT" check $(pids_of good) "$GOOD" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is $? 0 "check of a trace that lost nothing: exit 0"
grep -q '^# the tracer discarded' "$CBT_TMP/out"; is $? 1 "check of a trace that lost nothing: no discarded line"
done_testing
