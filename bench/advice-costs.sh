#!/bin/bash
# SPDX-License-Identifier: MIT
# The cost table of the advice's savings (cubatchtrace --advice-costs FILE,
# docs/rules.md § Advice), measured on the GPU machine.  From the repository
# root:
#
#   bash bench/advice-costs.sh [OUT] [bench/advice-costs options...]
#
# runs bench/advice-costs (gpu-stage/bin/advice-costs, built by
# tests/gpu/build; else built here with $CC against the CUDA toolkit of
# nvcc or /usr/local/cuda) and writes its table to OUT (default
# bench/results/current/advice-costs.txt), with the GPU's name (from the
# driver), the driver's version (nvidia-smi, else the CUDA driver API's
# number) and the date it was measured.  A few seconds on one GPU.  The
# figures are the program's own: nothing here is typed in.
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-bench/results/current/advice-costs.txt}
[ $# -gt 0 ] && shift
bin=${ADVICE_COSTS:-gpu-stage/bin/advice-costs}
if [ ! -x "$bin" ]; then
    NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
    CUDA=$(cd "$(dirname "$NVCC")/.." 2>/dev/null && pwd) || CUDA=/usr/local/cuda
    STUBS=""
    for d in "$CUDA/lib64/stubs" "$CUDA/targets/x86_64-linux/lib/stubs"; do
        [ -f "$d/libcuda.so" ] && { STUBS=-L$d; break; }
    done
    bin=$(mktemp -d)/advice-costs
    ${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -I"$CUDA/include" -o "$bin" bench/advice-costs.c $STUBS -lcuda || {
        echo "advice-costs: cannot build bench/advice-costs.c (CUDA headers under $CUDA?)" >&2
        exit 1
    }
fi
table=$("$bin" "$@") || { echo "advice-costs: $bin failed" >&2; exit 1; }
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$driver" ] || driver="CUDA driver API $(printf '%s\n' "$table" | sed -n 's/^cuda_driver_api=//p')"
mkdir -p "$(dirname "$out")" || exit 1
{
    printf '# made by bench/advice-costs.sh on %s; read by cubatchtrace --advice-costs\n' "$(uname -n)"
    printf '%s\n' "$table"
    printf 'driver=%s\n' "$driver"
    printf 'measured=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out.tmp" && mv "$out.tmp" "$out" || exit 1
echo "advice-costs: $out"
