#!/bin/sh
# Bad LTTng traces: no cubatchtrace events (a session recording
# lttng_ust_statedump:* only), a truncated and a corrupted stream file.
# ONE line on stderr, exit 2, nothing on stdout, no crash.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
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

bad() { # DESCRIPTION PATTERN ARGS...
    _d=$1 _pat=$2; shift 2
    for _cmd in summary check; do
        "$CBT" $_cmd "$@" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
        one_line_error "$_cmd: $_d" $? "$CBT_TMP/out" "$CBT_TMP/err" "$_pat"
    done
}
bad "a trace with no cubatchtrace events" "$SD: no cubatchtrace events" "$SD"
bad "a truncated stream file" "cannot read trace $CBT_TMP/trunc" "$CBT_TMP/trunc"
bad "a corrupted stream file" "cannot read trace $CBT_TMP/corrupt/.*magic" "$CBT_TMP/corrupt"
done_testing
