#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim reads no more of an op list, and refuses no more, than the driver:
# an op list that turns unreadable after an op the driver rejects, an
# unreadable list the driver rejects without reading (NULL or legacy stream,
# flags, an unknown stream), an absurd numOps.  The program gets exactly what
# the driver alone gives it, in every mode; each batch is in the trace with
# the ops that could be read (ops_recorded) and an ops_not_read finding.  A
# pageable source running into an unmapped page crashes the driver: strict
# mode refuses it (pointer_unmapped).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# recorded FILE: "num_ops ops_recorded" of every 3D batch (show: num_ops, recorded)
recorded() { show_batches "$1" | show_field num_ops recorded; }

for m in partial unread absurd steady repeat; do
    bare "r$m" "$CLIENTS/client_reads" $m
    is "$bst" 0 "$m: exits 0 without the shim"
    for mode in observe strict report; do
        case $mode in
        report) set -- env CUBATCHTRACE_REPORT=stderr ;;
        *) set -- env CUBATCHTRACE_MODE=$mode ;;
        esac
        cbt_run "$@" "$CLIENTS/client_reads" $m >"$CBT_TMP/r$m-$mode.out" 2>"$CBT_TMP/r$m-$mode.err"
        is "$?:$(cat "$CBT_TMP/r$m-$mode.out")" "0:$(bare_out "r$m")" "$m, $mode, no session: the same results as the driver alone"
    done
    traced "r$m-$$" "$CLIENTS/client_reads" $m
    is "$st:$(out "r$m-$$")" "0:$(bare_out "r$m")" "$m, a session listening: the same results as the driver alone"
done

t="$CBT_TMP/rpartial-$$.trace"
is "$(recorded "$t" | tr '\n' ' ')" "3 2 3 2 100000 2 100000 2 16777216 2 16777216 2 " \
    "partial: six batches, each with the 2 ops the driver reads (the bad op 1 included)"
is "$(findings "$t" | awk '{print $2, $3, $4}' | sort | uniq -c | awk '{print $1, $2, $3, $4}' | tr '\n' ';')" \
    "6 ops_not_read warning -;6 row_length_too_small error 1;" \
    "partial: each batch gets row_length_too_small on op 1 and ops_not_read"
is "$(batches "$t" | awk '{print $1, $3, $4, $6}' | sort | uniq -c | awk '{print $1, $2, $3, $4, $5}' | tr '\n' ';')" \
    "3 cuMemcpy3DBatchAsync forwarded CUDA_ERROR_INVALID_VALUE 1;3 cuMemcpy3DBatchAsync_v2 forwarded CUDA_ERROR_INVALID_VALUE -;" \
    "partial: forwarded, INVALID_VALUE, failIdx 1 for the 12.8 ABI"

t="$CBT_TMP/runread-$$.trace"
is "$(recorded "$t" | tr '\n' ' ')" "4 0 4 0 4 0 4 0 " "unread: four batches, none of their ops read"
is "$(findings "$t" | awk '$3 == "error" {print $2}' | tr '\n' ' ')" "stream_null stream_legacy flags_nonzero " \
    "unread: the batch-level errors the driver answers with"

t="$CBT_TMP/rabsurd-$$.trace"
is "$(recorded "$t" | tr '\n' ' ')" "1099511627776 0 18446744073709551615 0 1099511627776 1 " \
    "absurd: numOps 2^40 and SIZE_MAX are recorded as they were, with the ops that could be read"
is "$(findings "$t" | awk '$3 == "error" {print $1, $2}' | tr '\n' ';')" "0 op_list_null;1 op_list_null;2 extent_zero;" \
    "absurd: op_list_null for the NULL lists, extent_zero for the bad first op"

# Batches on the thread's steady path (after a good one): the ops of a list
# in one page are read whole and recorded as far as the driver read them (op
# 2 bad: 3; op 1 bad: 2); a list whose op 0 is bad before an unreadable page
# is read no further than op 0, as the driver reads it.
t="$CBT_TMP/rsteady-$$.trace"
is "$(recorded "$t" | tr '\n' ' ')" "2 2 3 3 3 3 2 2 4 2 4 2 2 2 3 1 3 1 2 2 " \
    "steady: each batch with the ops the driver reads (the bad one included)"
is "$(findings "$t" | awk '$3 == "error" {print $1, $2, $4}' | tr '\n' ';')" \
    "1 row_length_too_small 2;2 row_length_too_small 2;4 row_length_too_small 1;5 row_length_too_small 1;7 row_length_too_small 0;8 row_length_too_small 0;" \
    "steady: row_length_too_small on the bad op of each"
is "$(batches "$t" | awk '{print $4}' | tr '\n' ' ')" \
    "CUDA_SUCCESS CUDA_ERROR_INVALID_VALUE CUDA_ERROR_INVALID_VALUE CUDA_SUCCESS CUDA_ERROR_INVALID_VALUE CUDA_ERROR_INVALID_VALUE CUDA_SUCCESS CUDA_ERROR_INVALID_VALUE CUDA_ERROR_INVALID_VALUE CUDA_SUCCESS " \
    "steady: the driver's results"

# Batches repeated as they were (16 ops in one page, 40, and 130: more than
# a chunk; 400, and 300 alike but for their pointers; 1D: 5, 40 and 400
# copies): the second and third of each size, on the steady path, read back
# exactly as the first, which a memory allocation before it sends through
# the steps (every batch, attribute and op field but the ids and times).
t="$CBT_TMP/rrepeat-$$.trace"
is "$(show_of "$t" | awk '
    $1 == "batch" || $1 == "op" || $1 == "attr" {
        id = ""; line = $1
        for (i = 2; i <= NF; i++) {
            e = index($i, "="); k = substr($i, 1, e - 1)
            if (k == "id") id = substr($i, e + 1)
            else if (k != "vpid" && k != "driver_ns") line = line " " $i
            if (k == "num_ops") num[id] = substr($i, e + 1)
        }
        if (!(id in sig)) order[++n] = id
        sig[id] = sig[id] "|" line
    }
    END {
        for (j = 1; j + 2 <= n; j += 3) {
            a = order[j]
            printf "%s:%s ", num[a], (sig[a] == sig[order[j + 1]] && sig[a] == sig[order[j + 2]]) ? "same" : "differ"
        }
    }')" "16:same 40:same 130:same 400:same 300:same 5:same 40:same 400:same " \
    "repeat: each size's second and third batch (the steady path) read back as its first"

bare straddle "$CLIENTS/client_reads" straddle 2>/dev/null
is "$bst" 139 "straddle: without the shim the driver crashes on the unmapped page (SIGSEGV)"
traced "rstrad-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_reads" straddle
is "$st:$(tail -n 1 "$CBT_TMP/rstrad-$$.out")" "0:straddle result=1 fail_idx=-" \
    "straddle, strict: refused with INVALID_VALUE, the process lives"
is "$(findings "$CBT_TMP/rstrad-$$.trace" | grep ' error ')" "1 pointer_unmapped error 0" \
    "straddle, strict: pointer_unmapped on op 0 (the footprint, not only its first page)"
done_testing
