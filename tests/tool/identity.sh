#!/bin/sh
# SPDX-License-Identifier: MIT
# Which keys the reader uses for a process.  A trace recorded before process
# images (batch ids without a tag, a process event without `image`) is read
# with the old keys, (host, vpid), and the summary says so in one line and in
# its JSON; a trace with images is keyed by (host, vpid, image).  cbt-gen
# writes both kinds through the real provider: without --image the old ones,
# with --image TAG a process image's event and batch ids TAG << 32 | n.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond

gen_session id || { ok 1 "session starts"; done_testing; }
gen_run old n=5,ops=2
gen_run two --image 0x1234 n=3,ops=1 --image 0x5678 n=4,ops=2,src=host_pageable
gen_run mixed n=2,ops=1 --image 0x9abc n=6,ops=1
gen_stop id
T=$(trace_of id)
# fields P: the JSON's process_identity, processes, batches and by_process_rank (pid:image/images:tag:batches)
fields() {
    "$CBT" summary --json $(pids_of "$1") "$T" >"$CBT_TMP/$1.json" 2>&1
    "$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
i = d["process_identity"]
print(",".join(i["fields"]), i["untagged_batches"], d["processes"], d["batches"],
      " ".join("%s/%s:%s:%d" % (p["image"], p["images_of_pid"], p["image_tag"], p["batches"]) for p in d["by_process_rank"]))' \
        "$CBT_TMP/$1.json"
}

# ---- a trace recorded before images: the old keys, and a line says so
is "$(fields old)" "host,pid 5 1 5 None/None:None:5" "before images: keyed by host and pid, 5 batches untagged"
"$CBT" summary $(pids_of old) "$T" >"$CBT_TMP/old.txt" 2>&1
is "$(grep '^# process identity' "$CBT_TMP/old.txt")" \
    "# process identity: host and pid only for 5 batches (recorded before process images: an exec, pid namespaces or a reused pid are not told apart)" \
    "before images: the summary says in one line which keys it used"
"$CBT" show --records $(pids_of old) "$T" >"$CBT_TMP/old.show" 2>&1
is "$(grep '^batch ' "$CBT_TMP/old.show" | sed 's/.* id=\([0-9]*\) .*/\1/' | tr '\n' ' ')" "0 1 2 3 4 " \
    "before images: show numbers the batches as recorded"
is "$(grep -c 'image=' "$CBT_TMP/old.show")" 0 "before images: no record names an image"

# ---- two images under one pid (a pid reused, or an exec): two processes
is "$(fields two)" "host,pid,image 0 2 7 1/2:0x00001234:3 2/2:0x00005678:4" \
    "two images of one pid: two processes, numbered (same start: by tag), 3 and 4 batches"
"$CBT" summary $(pids_of two) "$T" >"$CBT_TMP/two.txt" 2>&1
is "$(grep -c '^# process identity' "$CBT_TMP/two.txt")" 0 "two images: no line about untagged batches"
is "$(sed -n 's/^# processes: //p' "$CBT_TMP/two.txt")" 2 "two images: the text summary counts 2 processes"
is "$(grep -c '^[^ ]* *| *[0-9]* *| *[12]/2 *| *4026531836 *| - *| cbt-gen' "$CBT_TMP/two.txt")" 2 \
    "two images: the process table gives each its number and pid namespace"
"$CBT" summary --by process $(pids_of two) "$T" >"$CBT_TMP/twob.txt" 2>&1
is "$(sed -n 's/^[^ ]* pid [0-9]* \(image [12]\/2\) cbt-gen *| *\([0-9]*\) .*/\1 \2/p' "$CBT_TMP/twob.txt" | sort | tr '\n' ';')" \
    "image 1/2 3;image 2/2 4;" "two images: --by process names each image"
"$CBT" show --records $(pids_of two) "$T" >"$CBT_TMP/two.show" 2>&1
is "$(grep '^batch ' "$CBT_TMP/two.show" | sed 's/.* id=\([0-9]*\) .* image=\(0x[0-9a-f]*\)$/\2:\1/' | tr '\n' ' ')" \
    "0x00001234:0 0x00001234:1 0x00001234:2 0x00005678:0 0x00005678:1 0x00005678:2 0x00005678:3 " \
    "two images: show numbers each image's batches from 0 and ends each line with its tag"
"$CBT" check --format json $(pids_of two) "$T" >"$CBT_TMP/two.check" 2>&1
is "$("$PYTHON3" -c 'import json, sys
print(sorted(set((f["image"], f["batch"]) for f in json.load(open(sys.argv[1]))["findings"])))' "$CBT_TMP/two.check")" \
    "[('0x00005678', 0), ('0x00005678', 1), ('0x00005678', 2), ('0x00005678', 3)]" \
    "two images: check gives each finding the batch number and tag of its image"
"$CBT" check $(pids_of two) "$T" >"$CBT_TMP/two.checktxt" 2>&1
is "$(grep -v '^#' "$CBT_TMP/two.checktxt" | sed -n 's/.* image=\(0x[0-9a-f]*\) .* batch=\([0-9]*\) .*/\1:\2/p' | sort -u | tr '\n' ' ')" \
    "0x00005678:0 0x00005678:1 0x00005678:2 0x00005678:3 " "two images: check's text lines name the image and the batch within it"

# ---- batches of both kinds in one process: the image keys, and the untagged ones counted
is "$(fields mixed)" "host,pid,image 2 2 8 1/2:0x00009abc:6 None/None:None:2" \
    "untagged and tagged batches: two processes (the untagged one without an image number), 2 batches untagged"
"$CBT" summary $(pids_of mixed) "$T" >"$CBT_TMP/mixed.txt" 2>&1
is "$(grep -c '^# process identity: host and pid only for 2 batches ' "$CBT_TMP/mixed.txt")" 1 \
    "untagged and tagged batches: the line counts the untagged ones"
done_testing
