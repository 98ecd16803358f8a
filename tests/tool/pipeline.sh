#!/bin/sh
# SPDX-License-Identifier: MIT
# Decoding on a second thread (tools/read/reader.c, CUBATCHTRACE_PIPELINE=1)
# reads what decoding on the graph's thread (=0) reads: every command's
# output, byte for byte, and its exit status, on the format-2 and format-3
# traces of tests/tool/format2.tar.xz and format3.tar.xz (with --jobs, too),
# and, when a session daemon can be had, on a trace of the shim's format
# written by the generator (chunked and 1D batches, findings).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
command -v xz >/dev/null 2>&1 || skip_all "xz not installed"
TOOL="$top_builddir/tools/cubatchtrace"
unpack_formats

# same LABEL CMD...: CMD's output and status with each way of decoding
same() {
    _l=$1; shift
    CUBATCHTRACE_PIPELINE=0 "$TOOL" "$@" >"$CBT_TMP/out0" 2>"$CBT_TMP/err0"
    _s0=$?
    CUBATCHTRACE_PIPELINE=1 "$TOOL" "$@" >"$CBT_TMP/out1" 2>"$CBT_TMP/err1"
    _s1=$?
    is "$_s1" "$_s0" "$_l: the same exit status ($_s0)"
    cmp -s "$CBT_TMP/out0" "$CBT_TMP/out1"; ok $? "$_l: the same output ($(wc -c <"$CBT_TMP/out0") bytes)"
    cmp -s "$CBT_TMP/err0" "$CBT_TMP/err1"; ok $? "$_l: the same standard error"
}

# every command on trace T (its label L)
all() {
    _t=$1 _l=$2; shift 2
    same "$_l show" show "$@" "$_t"
    same "$_l show --records" show --records "$@" "$_t"
    same "$_l summary" summary "$@" "$_t"
    same "$_l summary --json" summary --json "$@" "$_t"
    same "$_l check" check "$@" "$_t"
    same "$_l check --format json" check --format json "$@" "$_t"
    same "$_l check --format sarif" check --format sarif "$@" "$_t"
    rm -f "$CBT_TMP/tl0.json" "$CBT_TMP/tl1.json"
    CUBATCHTRACE_PIPELINE=0 "$TOOL" timeline -o "$CBT_TMP/tl0.json" "$@" "$_t" >/dev/null 2>&1
    _s0=$?
    CUBATCHTRACE_PIPELINE=1 "$TOOL" timeline -o "$CBT_TMP/tl1.json" "$@" "$_t" >/dev/null 2>&1
    is "$?" "$_s0" "$_l timeline: the same exit status"
    cmp -s "$CBT_TMP/tl0.json" "$CBT_TMP/tl1.json"; ok $? "$_l timeline: the same file"
}

for f in 2 3; do
    for d in "$CBT_TMP/format$f"/*/; do
        d=${d%/}
        all "$d" "format $f ${d##*/}"
    done
    same "format $f, all traces, --jobs 2: summary --json" summary --json --jobs 2 "$CBT_TMP/format$f"
    same "format $f, all traces, --jobs 1: check" check --jobs 1 "$CBT_TMP/format$f"
done
same "a directory without a trace" summary "$CBT_TMP"/format2/*/pid

# The second thread does run when asked for, and only then (the outputs
# above would be the same without it).
d=$(ls -d "$CBT_TMP/format3"/*/ | head -n 1)
for p in 0 1; do
    CUBATCHTRACE_DEBUG=1 CUBATCHTRACE_PIPELINE=$p "$TOOL" summary "$d" >/dev/null 2>"$CBT_TMP/dbg$p"
    n=$(grep -c '^cubatchtrace: decoding on a second thread$' "$CBT_TMP/dbg$p")
    is "$n" "$p" "CUBATCHTRACE_PIPELINE=$p: $p reader decoding on a second thread (CUBATCHTRACE_DEBUG says)"
done

if want_sessiond; then
    F=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h")
    gen_session g || { echo "Bail out! cannot create the LTTng session"; exit 1; }
    gen_run g "n=20,ops=300,src=host_pinned,dst=device,bytes=4096,format=$F" \
        "n=9,ops=2,src=managed,dst=device,order=ANY,violate=overlap_dst_dst,format=$F" \
        "n=4,ops=8,src=array,dst=device,shape=8x2x1,elem=4,format=$F" \
        "n=12,ops=500,copies=1,api=cuMemcpyBatchAsync_v2_ptsz,src=device,dst=host_pinned,bytes=256,format=$F" \
        "n=30,ops=3,copies=1,api=cuMemcpyBatchAsync_v2,src=device,dst=device,violate=overlap_dst_dst@1,format=$F"
    ok $? "generator ran"
    gen_stop g
    # shellcheck disable=SC2046
    all "$(trace_of g)" "format $F" $(pids_of g)
else
    diag "no trace of the shim's format: $CBT_NO_SESSIOND"
fi
done_testing
