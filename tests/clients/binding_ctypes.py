# SPDX-License-Identifier: MIT
"""Door "binding" from Python ctypes: memcpy_3d_batch_async_v2 of the shim.

Run with the shim preloaded (it is loaded again here with ctypes.CDLL, which
returns the same object) over the test double, which ctypes also opens for
cuInit, the context, memory and the stream.  Makes an H2D batch (two ops,
halves swapped) and a D2H batch, checks the bytes, prints the summary line.
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cbt_ctypes import CUDA_MEMCPY3D_BATCH_OP, ptr_op, pattern  # noqa: E402

shim_path = os.environ.get("CBT_SHIM")
if not shim_path:
    sys.exit("binding_ctypes.py: CBT_SHIM is not set")
shim = ctypes.CDLL(shim_path)
cuda = ctypes.CDLL("libcuda.so.1")

binding = shim.memcpy_3d_batch_async_v2
binding.restype = ctypes.c_int
binding.argtypes = [ctypes.c_size_t, ctypes.c_ssize_t, ctypes.c_ulonglong, ctypes.c_ssize_t]


def check(r, what):
    if r != 0:
        sys.exit("binding_ctypes.py: %s failed: CUresult %d" % (what, r))


check(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
stream = ctypes.c_void_p()
check(cuda.cuStreamCreate(ctypes.byref(stream), 0), "cuStreamCreate")

N = 2048
src, back = ctypes.c_void_p(), ctypes.c_void_p()
check(cuda.cuMemAllocHost_v2(ctypes.byref(src), N), "cuMemAllocHost")
check(cuda.cuMemAllocHost_v2(ctypes.byref(back), N), "cuMemAllocHost")
dev_buf = ctypes.c_uint64()
check(cuda.cuMemAlloc_v2(ctypes.byref(dev_buf), N), "cuMemAlloc")
data = pattern(N, 9)
ctypes.memmove(src, data, N)
ctypes.memset(back, 0, N)

half = N // 2
h2d = (CUDA_MEMCPY3D_BATCH_OP * 2)(ptr_op(src.value, dev_buf.value + half, half),
                                   ptr_op(src.value + half, dev_buf.value, half))
d2h = (CUDA_MEMCPY3D_BATCH_OP * 1)(ptr_op(dev_buf.value, back.value, N))
batches = ops = nbytes = 0
for batch in (h2d, d2h):
    r = binding(len(batch), ctypes.addressof(batch), 0, stream.value)
    check(r, "memcpy_3d_batch_async_v2")
    batches += 1
    ops += len(batch)
    nbytes += sum(op.extent.width * op.extent.height * op.extent.depth for op in batch)
check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize")
got = ctypes.string_at(back, N)
print("batches=%d ops=%d bytes=%d" % (batches, ops, nbytes))
if got != data[half:] + data[:half]:
    sys.exit("binding_ctypes.py: the bytes copied are wrong")
