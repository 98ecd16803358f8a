#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/process-verdicts: a row judged over processes, the time bound below
# and from 64 ops (3D and 1D), the CPU bound with the floor's mean above and
# below zero, the t interval, a single process, the counts; a missing file.
. "$top_srcdir/tests/lib.sh"
A=$CBT_TMP/all.txt
# build round kind ops shim floor shim-floor cpu_shim cpu_floor cpu_shim-cpu_floor
cat >"$A" <<'EOT'
a 1 d2d 1 120 100 20 120 100 20
a 2 d2d 1 120 100 20 120 100 20
a 1 d2d 4 121 100 21 121 100 21
a 2 d2d 4 121 100 21 121 100 21
a 1 array 1 110 100 10 -50 -50 0
a 2 array 1 130 100 30 -50 -50 0
a 1 h2d_pageable 1 117 100 17 -3 0 -3
a 2 h2d_pageable 1 120 100 20 0 0 0
a 3 h2d_pageable 1 123 100 23 3 0 3
a 1 d2d 64 1320 1000 320 0 0 0
a 2 d2d 64 1320 1000 320 0 0 0
a 1 d2d_1d 64 1200 1000 200 0 0 0
a 2 d2d_1d 64 1200 1000 200 0 0 0
b 1 d2d 1 500 100 400 500 100 400
EOT
out=$(bash "$top_srcdir/bench/process-verdicts" "$A")
ok $? "process-verdicts runs"
g() { printf '%s\n' "$out" | grep -qxF -- "$1"; echo $?; }
# bound 1.1 x 100 + 10 = 120: an excess of 0 in every process is within
ok "$(g 'a d2d 1 2 20 0 [0, 0] ok 0 [0, 0] ok')" "time and cpu: at the bound is ok"
ok "$(g 'a d2d 4 2 21 1 [1, 1] OVER 1 [1, 1] OVER')" "time and cpu: 1 ns over in every process is OVER"
# -10 and +10: sd 14.14, t(1) 12.706: half-width 127; cpu floor's mean -50 < 0: held to the floor itself
ok "$(g 'a array 1 2 20 0 [-127, 127] ok? 0 [0, 0] ok')" "a spread straddling the bound; the cpu floor below zero"
# -3, 0, 3: sd 3, t(2) 4.303: half-width 7.45
ok "$(g 'a h2d_pageable 1 3 20 0 [-7, 7] ok? 0 [-7, 7] ok?')" "three processes: Student t with 2 degrees of freedom"
# from 64 ops: floor + 5 ns per op (3D), + 2 ns per copy (1D)
ok "$(g 'a d2d 64 2 320 0 [0, 0] ok 0 [0, 0] ok')" "64 3D ops: floor + 320 ns is within"
ok "$(g 'a d2d_1d 64 2 200 72 [72, 72] OVER 0 [0, 0] ok')" "64 copies: floor + 128 ns is the bound"
ok "$(g 'b d2d 1 1 400 380 [380, 380] - 380 [380, 380] -')" "one process: no verdict"
ok "$(g '# counts: time 2 ok, 2 ok?, 2 OVER, 1 not judged; cpu 4 ok, 1 ok?, 1 OVER, 1 not judged')" "the verdicts counted"
bash "$top_srcdir/bench/process-verdicts" "$CBT_TMP/none.txt" >/dev/null 2>"$CBT_TMP/err"
ok "$([ $? -eq 2 ] && grep -q 'cannot read' "$CBT_TMP/err"; echo $?)" "a missing file: exit 2 and said so"
done_testing
