# SPDX-License-Identifier: MIT
"""cuda-python (cuda.bindings) over the test double.

  cuda_python_client.py driver   cuda.bindings.driver.cuMemcpy3DBatchAsync
  cuda_python_client.py v2       cuda.bindings._v2.driver.memcpy_3d_batch_async_v2

cuda.bindings resolves the batch through cuGetProcAddress_v2 at 13000 (flags
2 when CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM is set).  Makes an H2D batch
(two ops, halves swapped) and a D2H batch, checks the bytes and prints the
summary line.  Exits 77 when the module is missing.
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cbt_ctypes import CUDA_MEMCPY3D_BATCH_OP as CtOp, ptr_op, pattern  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "driver"
try:
    from cuda.bindings import driver as d
    if mode == "v2":
        from cuda.bindings._v2 import driver as v2
except ImportError as e:
    print("cuda_python_client.py: cannot import: %s" % e, file=sys.stderr)
    sys.exit(77)


def ok(res, what):
    err = res[0] if isinstance(res, tuple) else res
    if err != d.CUresult.CUDA_SUCCESS:
        sys.exit("cuda_python_client.py: %s failed: %s" % (what, err))
    return res[1] if isinstance(res, tuple) and len(res) > 1 else None


ok(d.cuInit(0), "cuInit")
dev = ok(d.cuDeviceGet(0), "cuDeviceGet")
ctx = ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
ok(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
stream = ok(d.cuStreamCreate(0), "cuStreamCreate")
N = 2048
src = ok(d.cuMemAllocHost(N), "cuMemAllocHost")
back = ok(d.cuMemAllocHost(N), "cuMemAllocHost")
dev_buf = int(ok(d.cuMemAlloc(N), "cuMemAlloc"))
data = pattern(N, 11)
ctypes.memmove(src, data, N)
ctypes.memset(back, 0, N)
half = N // 2
batches = [[(src, dev_buf + half, half), (src + half, dev_buf, half)], [(dev_buf, back, N)]]


def py_op(s, t, n):
    op = d.CUDA_MEMCPY3D_BATCH_OP()
    for side, addr in ((op.src, s), (op.dst, t)):
        side.type = d.CUmemcpy3DOperandType.CU_MEMCPY_OPERAND_TYPE_POINTER
        side.op.ptr.ptr = addr
    op.extent.width, op.extent.height, op.extent.depth = n, 1, 1
    op.srcAccessOrder = d.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    return op


n_ops = n_bytes = 0
for batch in batches:
    if mode == "driver":
        ops = [py_op(*b) for b in batch]
        ok(d.cuMemcpy3DBatchAsync(len(ops), ops, 0, stream), "cuMemcpy3DBatchAsync")
    else:
        arr = (CtOp * len(batch))(*[ptr_op(*b) for b in batch])
        r = v2.memcpy_3d_batch_async_v2(len(batch), ctypes.addressof(arr), 0, int(stream))
        if r is not None and int(r) != 0:
            sys.exit("cuda_python_client.py: memcpy_3d_batch_async_v2 returned %s" % (r,))
    n_ops += len(batch)
    n_bytes += sum(b[2] for b in batch)
ok(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
got = ctypes.string_at(back, N)
print("batches=%d ops=%d bytes=%d" % (len(batches), n_ops, n_bytes))
if got != data[half:] + data[:half]:
    sys.exit("cuda_python_client.py: the bytes copied are wrong")
