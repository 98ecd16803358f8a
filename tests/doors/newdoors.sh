#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that asks for the CUDA 13.2 and 13.5 entry points
# (cuMemcpy3DWithAttributesAsync, cuMemcpyWithAttributesAsync, their _ptsz,
# cuFabricCpyBatchAsync) through cuGetProcAddress(_v2) at 13000, 13020 and
# 13050, dlsym on the driver's handle and dlsym(RTLD_DEFAULT) gets the same
# answers with the shim as without it: over the double built as the 13.0
# driver (tests/fakecuda/lib13.0: none of them, answered as the real 13.0
# driver answers: cuGetProcAddress_v2 NULL with CUDA_SUCCESS and symbolStatus
# SYMBOL_NOT_FOUND, cuGetProcAddress CUDA_ERROR_NOT_FOUND, dlerror set) and over the 13.5 double
# (every one found where its version allows).  The driver is asked for
# exactly what the program asked (FAKECUDA_GPA_LOG): the shim looks up
# nothing of its own through cuGetProcAddress.
. "$top_srcdir/tests/lib.sh"

prog="$top_builddir/tests/gpu/newdoors"
[ -x "$prog" ] || skip_all "tests/gpu/newdoors is not built"
[ -f "$CBT_FAKECUDA13_0_DIR/libcuda.so.1" ] || skip_all "the 13.0 double (tests/fakecuda/lib13.0) is not built"

for lib in 13.0:$CBT_FAKECUDA13_0_DIR 13.5:$CBT_FAKECUDA_DIR; do
    name=${lib%%:*}; dir=${lib#*:}
    rm -f "$CBT_TMP/gpa-$name.bare" "$CBT_TMP/gpa-$name.shim"
    env LD_LIBRARY_PATH="$dir" FAKECUDA_GPA_LOG="$CBT_TMP/gpa-$name.bare" "$prog" >"$CBT_TMP/nd-$name.bare" 2>&1
    bst=$?
    env LD_PRELOAD="${CBT_SAN_PRELOAD:+$CBT_SAN_PRELOAD:}$CBT_SHIM" LD_LIBRARY_PATH="$dir" \
        FAKECUDA_GPA_LOG="$CBT_TMP/gpa-$name.shim" "$prog" >"$CBT_TMP/nd-$name.shim" 2>&1
    sst=$?
    is "$bst $sst" "0 0" "$name driver: the prober exits 0 with and without the shim"
    is "$(grep -c '^ASK ' "$CBT_TMP/nd-$name.bare")" 48 "$name driver: 36 cuGetProcAddress requests and 12 dlsym lookups"
    is "$(diff "$CBT_TMP/nd-$name.bare" "$CBT_TMP/nd-$name.shim" && echo same)" same \
        "$name driver: every answer (result, symbolStatus, function or NULL, dlerror) the same with the shim"
    is "$(cmp "$CBT_TMP/gpa-$name.bare" "$CBT_TMP/gpa-$name.shim" && wc -l <"$CBT_TMP/gpa-$name.shim")" 36 \
        "$name driver: the driver is asked the 36 requests the program made, nothing more"
done

# What the 13.0 driver answers, which the shim passes on unchanged.
is "$(sed -n 's/^DRIVER_VERSION //p' "$CBT_TMP/nd-13.0.shim")" 13000 "13.0 driver: cuDriverGetVersion 13000"
is "$(grep -c '^ASK gpa5 .* rc=0 status=1 fn=NULL$' "$CBT_TMP/nd-13.0.shim")" 18 \
    "13.0 driver: every cuGetProcAddress_v2 request: CUDA_SUCCESS, SYMBOL_NOT_FOUND, NULL"
is "$(grep -c '^ASK gpa4 .* rc=500 fn=fn$' "$CBT_TMP/nd-13.0.shim")" 18 \
    "13.0 driver: every cuGetProcAddress request: CUDA_ERROR_NOT_FOUND, the pointer not written (the client's 0x1)"
is "$(grep -c '^ASK dlsym_.* fn=NULL dlerror=yes$' "$CBT_TMP/nd-13.0.shim")" 12 \
    "13.0 driver: dlsym on the handle and RTLD_DEFAULT: NULL, with dlerror set (not the shim's own export)"
# The 13.5 double: the single-op calls from 13020, the fabric batch from 13050.
is "$(grep '^ASK gpa5 ' "$CBT_TMP/nd-13.5.shim" | awk '{print $3, $4, $6, $7, $8}' | sort | uniq -c | awk '{print $1, $2, $3, $4, $5, $6}' | tr '\n' ';')" \
"2 cuFabricCpyBatchAsync 13000 rc=0 status=2 fn=NULL;2 cuFabricCpyBatchAsync 13020 rc=0 status=2 fn=NULL;2 cuFabricCpyBatchAsync 13050 rc=0 status=0 fn=fn;2 cuMemcpy3DWithAttributesAsync 13000 rc=0 status=2 fn=NULL;2 cuMemcpy3DWithAttributesAsync 13020 rc=0 status=0 fn=fn;2 cuMemcpy3DWithAttributesAsync 13050 rc=0 status=0 fn=fn;2 cuMemcpyWithAttributesAsync 13000 rc=0 status=2 fn=NULL;2 cuMemcpyWithAttributesAsync 13020 rc=0 status=0 fn=fn;2 cuMemcpyWithAttributesAsync 13050 rc=0 status=0 fn=fn;" \
    "13.5 double under the shim: found from the version that has them, VERSION_NOT_SUFFICIENT below"
is "$(grep -c '^ASK dlsym_.* fn=fn dlerror=no$' "$CBT_TMP/nd-13.5.shim")" 12 "13.5 double under the shim: every dlsym finds its function"
done_testing
