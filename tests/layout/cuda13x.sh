#!/bin/sh
# SPDX-License-Identifier: MIT
# include/cubatchtrace/cuda13x.h declares what CUDA 13.2 and 13.5 added
# where the toolkit's cuda.h lacks it.  Its layouts must be the release
# header's: one C program prints the size and every member's offset of each
# struct it declares, the enum values and the CUgraphNodeParams accessor's
# offset, built once against the toolkit (CUDA_CPPFLAGS, 13.0 here) with
# cuda13x.h, once against the cuda.h of PyPI's nvidia-cuda-runtime 13.5
# wheel; the two outputs must be equal, line for line.  A third build, with
# CUDA_API_PER_THREAD_DEFAULT_STREAM against the wheel, holds the _ptsz
# prototypes to the real ones (-Werror: a mismatch does not compile).
#
# The wheel comes from $CBT_WHEEL_CACHE (default ~/.cache/cubatchtrace/wheels,
# where scripts/install-deps puts it), else pip downloads it there; without
# it the test is skipped, and says so.
. "$top_srcdir/tests/lib.sh"

WHEEL_VERSION=13.5.37
cache=${CBT_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cubatchtrace/wheels}
wheel=$(ls "$cache"/nvidia_cuda_runtime-$WHEEL_VERSION-*.whl 2>/dev/null | head -n 1)
if [ -z "$wheel" ]; then
    mkdir -p "$cache" 2>/dev/null
    timeout 120 "$PYTHON3" -m pip download -q --disable-pip-version-check --no-deps \
        --platform manylinux2014_x86_64 --only-binary=:all: -d "$cache" \
        "nvidia-cuda-runtime==$WHEEL_VERSION" >"$CBT_TMP/pip.log" 2>&1
    wheel=$(ls "$cache"/nvidia_cuda_runtime-$WHEEL_VERSION-*.whl 2>/dev/null | head -n 1)
fi
[ -n "$wheel" ] || skip_all "nvidia-cuda-runtime==$WHEEL_VERSION not in $cache and pip could not download it (offline?): $(tail -n 1 "$CBT_TMP/pip.log" 2>/dev/null)"
"$PYTHON3" -m zipfile -e "$wheel" "$CBT_TMP/wheel" >/dev/null 2>&1
inc=$(dirname "$(find "$CBT_TMP/wheel" -path '*/include/cuda.h' | head -n 1)")
[ -f "$inc/cuda.h" ] || skip_all "$wheel holds no include/cuda.h"
is "$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$inc/cuda.h")" 13050 "the wheel's cuda.h is CUDA 13.5"

cat >"$CBT_TMP/layout.c" <<'C'
#include <stdio.h>
#include <stddef.h>
#include <cubatchtrace/cuda13x.h>

#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, m) printf("offsetof %s %s %zu\n", #t, #m, offsetof(t, m))
#define VAL(e) printf("value %s %lld\n", #e, (long long)(e))

/* The prototypes, as types: a mismatch does not compile. */
#define SAME_TYPE(f, t) _Static_assert(__builtin_types_compatible_p(__typeof__(&f), t), #f)
typedef CUresult (*one3d_t)(CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*one1d_t)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *, CUstream);
typedef CUresult (*fabric_t)(size_t, CUDA_FABRIC_COPY_BATCH_OP *, unsigned long long, CUstream);
SAME_TYPE(cuMemcpy3DWithAttributesAsync, one3d_t);
SAME_TYPE(cuMemcpyWithAttributesAsync, one1d_t);
SAME_TYPE(cuFabricCpyBatchAsync, fabric_t);
SAME_TYPE(cuMemcpy3DWithAttributesAsync_ptsz, one3d_t);
SAME_TYPE(cuMemcpyWithAttributesAsync_ptsz, one1d_t);
SAME_TYPE(cuFabricCpyBatchAsync_ptsz, fabric_t);

int main(void)
{
    SIZE(CUlogicalEndpointId);
    SIZE(CUfabricCpyOperandType);
    VAL(CU_FABRIC_COPY_OPERAND_TYPE_POINTER);
    VAL(CU_FABRIC_COPY_OPERAND_TYPE_LOGICAL_ENDPOINT);
    VAL(CU_FABRIC_COPY_OPERAND_TYPE_MAX);
    SIZE(CUfabricCpyOperand);
    OFF(CUfabricCpyOperand, type);
    OFF(CUfabricCpyOperand, op);
    OFF(CUfabricCpyOperand, op.ptr.ptr);
    OFF(CUfabricCpyOperand, op.ptr.locHint);
    OFF(CUfabricCpyOperand, op.le.id);
    OFF(CUfabricCpyOperand, op.le.offset);
    SIZE(CUDA_FABRIC_COPY_BATCH_OP);
    SIZE(CUDA_FABRIC_COPY_BATCH_OP_v1);
    OFF(CUDA_FABRIC_COPY_BATCH_OP, src);
    OFF(CUDA_FABRIC_COPY_BATCH_OP, dst);
    OFF(CUDA_FABRIC_COPY_BATCH_OP, size);
    OFF(CUDA_FABRIC_COPY_BATCH_OP, flags);
    /* ---- graph nodes ---- */
    VAL(CU_GRAPH_NODE_TYPE_MEMCPY_BATCH);
    VAL(CU_GRAPH_NODE_TYPE_FABRIC_CPY_BATCH);
    SIZE(CUDA_MEMCPY_BATCH_NODE_PARAMS);
    SIZE(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, count);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, dsts);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, srcs);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, sizes);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, attrs);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, attrsIdxs);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, numAttrs);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, ctx);
    OFF(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1, gCtx);
    SIZE(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS);
    SIZE(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1);
    OFF(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1, numOps);
    OFF(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1, opList);
    OFF(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1, flags);
    OFF(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1, ctx);
    OFF(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1, gCtx);
    SIZE(CUgraphNodeParams);
    OFF(CUgraphNodeParams, type);
    OFF(CUgraphNodeParams, reserved0);
    OFF(CUgraphNodeParams, reserved2);
    CUgraphNodeParams p;
    printf("accessor memcpyBatch %td\n", (char *)cbt_node_params_memcpy_batch(&p) - (char *)&p);
    printf("accessor memcpyBatch const %td\n", (const char *)cbt_node_params_memcpy_batch_const(&p) - (char *)&p);
    printf("accessor fabricCpyBatch %td\n", (char *)cbt_node_params_fabric_cpy_batch(&p) - (char *)&p);
    return 0;
}
C

build() { # build NAME CPPFLAGS...: the layout program, -Werror
    _n=$1; shift
    $CC -std=gnu11 -Wall -Wextra -Werror -I"$top_srcdir/include" "$@" -o "$CBT_TMP/$_n" "$CBT_TMP/layout.c" \
        >"$CBT_TMP/$_n.cc" 2>&1
}
build ours $CUDA_CPPFLAGS
ok $? "the layout program builds against the toolkit's cuda.h ($(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$(echo "$CUDA_CPPFLAGS" | sed 's/^-I//;s/ .*//')/cuda.h" 2>/dev/null)) with cuda13x.h: $(head -c 300 "$CBT_TMP/ours.cc")"
build real -I"$inc"
ok $? "the layout program builds against the 13.5 wheel's cuda.h: $(head -c 300 "$CBT_TMP/real.cc")"
build real_ptsz -DCUDA_API_PER_THREAD_DEFAULT_STREAM -I"$inc"
ok $? "with CUDA_API_PER_THREAD_DEFAULT_STREAM, the _ptsz prototypes agree with the wheel's: $(head -c 300 "$CBT_TMP/real_ptsz.cc")"
"$CBT_TMP/ours" >"$CBT_TMP/ours.txt" 2>&1
"$CBT_TMP/real" >"$CBT_TMP/real.txt" 2>&1
is "$(wc -l <"$CBT_TMP/real.txt")" 45 "45 lines of sizes, offsets and values from the wheel's header"
is "$(diff "$CBT_TMP/ours.txt" "$CBT_TMP/real.txt" && echo equal)" equal \
    "every size, offset and value of cuda13x.h equals the 13.5 release header's"
is "$(grep -E '^(sizeof CUgraphNodeParams |offsetof CUgraphNodeParams reserved2 |accessor memcpyBatch [0-9])' "$CBT_TMP/ours.txt" | tr '\n' ';')" \
    "sizeof CUgraphNodeParams 256;offsetof CUgraphNodeParams reserved2 248;accessor memcpyBatch 16;" \
    "CUgraphNodeParams: 256 bytes, the union at 16, its batch member read there"
done_testing
