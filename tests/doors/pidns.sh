#!/bin/sh
# SPDX-License-Identifier: MIT
# Processes that share a pid in one trace: two, then eight, each pid 1 in a
# pid namespace of its own (`unshare --pid --fork`, as containers run them),
# recorded by one session; and two processes of one private pid namespace
# given the same pid one after the other (ns_last_pid written before each
# fork).  Each is a process image of its own (src/process.c): summary, check,
# show, timeline and report count each one's batches exactly, the summary
# numbers them by start time and gives each its pid namespace, and no batch
# is malformed.  Before images they were one process, half its batches
# "malformed".  Needs root (unshare, ns_last_pid): skipped, loudly, without.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
CBT="$top_builddir/tools/cubatchtrace"
command -v unshare >/dev/null 2>&1 || skip_all "unshare (util-linux) not installed: pid namespaces NOT tested"
_why=$(unshare --pid --fork sh -c 'echo 41 >/proc/sys/kernel/ns_last_pid && sh -c "echo \$\$"' 2>&1)
[ "$_why" = 42 ] || skip_all "pid namespaces and ns_last_pid not permitted here (run as root): NOT tested: $_why"

# images NAME WANT PID: as in tests/doors/exec.sh
# namespaces NAME: how many distinct pid namespaces the summary gives its processes ("null" when one has none)
namespaces() {
    "$PYTHON3" -c 'import json, sys
ns = [p["pid_ns"] for p in json.load(open(sys.argv[1]))["by_process_rank"]]
print(len(set(ns)) if None not in ns else "null")' "$CBT_TMP/images.json"
}

# not_ours: how many images have a known pid namespace other than this shell's
not_ours() {
    "$PYTHON3" -c 'import json, os, sys
ours = os.stat("/proc/self/ns/pid").st_ino
ns = [p["pid_ns"] for p in json.load(open(sys.argv[1]))["by_process_rank"]]
print(sum(1 for n in ns if n and n != ours))' "$CBT_TMP/images.json"
}

# N containers one after the other, container k making k batches of k ops
# (then one batch with a warning), each pid 1 of its own namespace
containers() {
    _cn=$1 _name=$2
    cbt_session_start "$_name" || { echo "Bail out! cannot create the LTTng session $_name"; exit 1; }
    _k=1 _want="" _bad=0
    while [ $_k -le "$_cn" ]; do
        cbt_run unshare --pid --fork "$CLIENTS/client_exec" $_k/$_k warn >"$CBT_TMP/$_name.$_k.out" 2>&1 || _bad=$((_bad + 1))
        _want="$_want${_want:+
}pid=1 image=$_k/$_cn batches=$((_k + 1)) ops=$((_k * _k + 1))"
        _k=$((_k + 1))
    done
    cbt_session_stop "$_name"
    is "$_bad" 0 "$_cn containers: each exits 0"
    is "$(cat "$CBT_TMP/$_name".*.out | sed -n 's/^image \([0-9]*\): .*/\1/p' | sort -u | tr '\n' ' ')" "1 " \
        "$_cn containers: each is pid 1"
    images "$_name" "$_want" 1
    # each its own namespace: not this shell's (the kernel may give a namespace
    # that has ended the inode number of the next, so distinct numbers are not asked)
    is "$(not_ours)" "$_cn" "$_cn containers: the summary gives each a pid namespace other than this shell's"
    _f=$(sed -n 's/^check pid=1 image=\([0-9]*\)\/[0-9]* .* findings=\([0-9]*\)$/\1:\2/p' "$CBT_TMP/$_name.images" | tr '\n' ' ')
    is "$_f" "$(seq 1 "$_cn" | sed 's/$/:1/' | tr '\n' ' ')" "$_cn containers: check lists one finding under each"
}
containers 2 "ns2-$$"
"$CBT" summary --pid 1 "$CBT_TMP/ns2-$$" >"$CBT_TMP/ns2.txt" 2>&1
is "$(grep -c '^[^ ]* *| *1 *| *[12]/2 *| *[0-9]* *| - *| client_exec' "$CBT_TMP/ns2.txt")" 2 \
    "2 containers: the text summary lists both as pid 1, images 1/2 and 2/2"
containers 8 "ns8-$$"
for jobs in 1 3; do
    "$CBT" summary --json --jobs $jobs --pid 1 "$CBT_TMP/ns8-$$" >"$CBT_TMP/ns8.j$jobs.json" 2>&1
done
cmp -s "$CBT_TMP/ns8.j1.json" "$CBT_TMP/ns8.j3.json"; ok $? "8 containers: the JSON summary is the same with --jobs 1 and 3"

# one pid namespace, one pid, two processes one after the other
cbt_session_start "reuse-$$" || { echo "Bail out! cannot create the LTTng session reuse-$$"; exit 1; }
cbt_run unshare --pid --fork sh -c '
    echo 99 >/proc/sys/kernel/ns_last_pid && "$0" 3/1
    echo 99 >/proc/sys/kernel/ns_last_pid && "$0" 5/2 warn
    true' "$CLIENTS/client_exec" >"$CBT_TMP/reuse.out" 2>&1
st=$?
cbt_session_stop "reuse-$$"
is "$st" 0 "reused pid: both processes exit 0"
is "$(sed -n 's/^image \([0-9]*\): .*/\1/p' "$CBT_TMP/reuse.out" | tr '\n' ' ')" "100 100 " "reused pid: both ran as pid 100"
images "reuse-$$" "pid=100 image=1/2 batches=3 ops=3
pid=100 image=2/2 batches=6 ops=11" 100
is "$(namespaces)" 1 "reused pid: both in the one pid namespace"
is "$(sed -n 's/^check //p' "$CBT_TMP/reuse-$$.images")" "pid=100 image=2/2 batches=-1 ops=-1 findings=1" \
    "reused pid: check gives the finding to the second process"

# the three sessions at once (ten images of pid 1 in two traces): the same
# summary, text and JSON, and the same check, read on one thread and on three
all="$CBT_TMP/ns2-$$ $CBT_TMP/ns8-$$ $CBT_TMP/reuse-$$"
for jobs in 1 3; do
    "$CBT" summary --json --jobs $jobs --pid 1 --pid 100 $all >"$CBT_TMP/all.j$jobs.json" 2>&1
    "$CBT" summary --by process,thread,stream --jobs $jobs --pid 1 --pid 100 $all >"$CBT_TMP/all.j$jobs.txt" 2>&1
    "$CBT" check --format json --jobs $jobs --pid 1 --pid 100 $all >"$CBT_TMP/all.j$jobs.check" 2>&1
done
for f in json txt check; do
    cmp -s "$CBT_TMP/all.j1.$f" "$CBT_TMP/all.j3.$f"; ok $? "all sessions: summary/check ($f) the same with --jobs 1 and 3"
done
is "$("$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["processes"], d["batches"], " ".join("%s:%s/%s:%d" % (p["pid"], p["image"], p["images_of_pid"], p["batches"]) for p in d["by_process_rank"]))' "$CBT_TMP/all.j3.json")" \
    "12 58 1:1/10:2 1:2/10:3 1:3/10:2 1:4/10:3 1:5/10:4 1:6/10:5 1:7/10:6 1:8/10:7 1:9/10:8 1:10/10:9 100:1/2:3 100:2/2:6" \
    "all sessions: the ten images of pid 1 numbered by start time across both traces, then pid 100's two"
done_testing
