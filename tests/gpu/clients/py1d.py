# SPDX-License-Identifier: MIT
"""GPU test client for the Python doors of the 1D batch (cuMemcpyBatchAsync).

    python3 py1d.py driver    cuda.bindings.driver.cuMemcpyBatchAsync
    python3 py1d.py runtime   cuda.bindings.runtime.cudaMemcpyBatchAsync
    python3 py1d.py v2        cuda.bindings._v2.driver.memcpy_batch_async_v2 (cuda-bindings >= 13.5)

Set-up through ctypes on libcuda.so.1 (the driver instance the bindings and
the shim use): a non-blocking stream, two device buffers, pinned memory in
and out.  Two batches through the door: 8 device-to-device copies (chunk i
to chunk 7-i; attributes STREAM from copy 0 and ANY from copy 5, except for
v2, which takes one attribute), then the read-back into pinned memory.
Prints PID, BINDINGS, "BATCH <k> count=<n> rc=<result>", "CHECK data ok|FAIL"
and "RESULT ok|FAIL".
"""
import ctypes
import os
import sys
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p

N, CHUNK = 8, 4096


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def die(what):
    out("CHECK setup FAIL %s" % what)
    out("RESULT FAIL")
    sys.exit(1)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "driver"
    out("PID %d" % os.getpid())
    import importlib.metadata as md
    try:
        out("BINDINGS %s" % md.version("cuda-bindings"))
    except Exception:  # noqa: BLE001
        out("BINDINGS unknown")
    cu = ctypes.CDLL("libcuda.so.1")

    def ck(rc, what):
        if rc != 0:
            die("%s -> %d" % (what, rc))

    ck(cu.cuInit(0), "cuInit")
    dev, ctx, stream = c_int(), c_void_p(), c_void_p()
    ck(cu.cuDeviceGet(byref(dev), 0), "cuDeviceGet")
    ck(cu.cuDevicePrimaryCtxRetain(byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ck(cu.cuStreamCreate(byref(stream), 1), "cuStreamCreate")
    src, dst = c_uint64(), c_uint64()
    ck(cu.cuMemAlloc_v2(byref(src), c_size_t(N * CHUNK)), "cuMemAlloc")
    ck(cu.cuMemAlloc_v2(byref(dst), c_size_t(N * CHUNK)), "cuMemAlloc")
    hin, hout = c_void_p(), c_void_p()
    ck(cu.cuMemAllocHost_v2(byref(hin), c_size_t(N * CHUNK)), "cuMemAllocHost")
    ck(cu.cuMemAllocHost_v2(byref(hout), c_size_t(N * CHUNK)), "cuMemAllocHost")
    pin_in = (ctypes.c_ubyte * (N * CHUNK)).from_address(hin.value)
    pin_out = (ctypes.c_ubyte * (N * CHUNK)).from_address(hout.value)
    for i in range(N * CHUNK):
        pin_in[i] = (i * 11 + 3) & 0xff
        pin_out[i] = 0
    ck(cu.cuMemcpyHtoD_v2(src, hin, c_size_t(N * CHUNK)), "cuMemcpyHtoD")

    batches = [
        ([dst.value + (N - 1 - i) * CHUNK for i in range(N)], [src.value + i * CHUNK for i in range(N)]),
        ([hout.value + i * CHUNK for i in range(N)], [dst.value + i * CHUNK for i in range(N)]),
    ]
    ok = True
    for k, (dsts, srcs) in enumerate(batches):
        sizes = [CHUNK] * N
        if mode == "driver":
            from cuda.bindings import driver as D
            a0, a1 = D.CUmemcpyAttributes(), D.CUmemcpyAttributes()
            a0.srcAccessOrder = D.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
            a1.srcAccessOrder = D.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_ANY
            r = D.cuMemcpyBatchAsync([D.CUdeviceptr(x) for x in dsts], [D.CUdeviceptr(x) for x in srcs], sizes, N,
                                     [a0, a1], [0, 5], 2, D.CUstream(stream.value))
            rc = int(r[0] if isinstance(r, tuple) else r)
        elif mode == "runtime":
            from cuda.bindings import runtime as R
            a0, a1 = R.cudaMemcpyAttributes(), R.cudaMemcpyAttributes()
            a0.srcAccessOrder = R.cudaMemcpySrcAccessOrder.cudaMemcpySrcAccessOrderStream
            a1.srcAccessOrder = R.cudaMemcpySrcAccessOrder.cudaMemcpySrcAccessOrderAny
            r = R.cudaMemcpyBatchAsync(dsts, srcs, sizes, N, [a0, a1], [0, 5], 2, R.cudaStream_t(stream.value))
            rc = int(r[0] if isinstance(r, tuple) else r)
        elif mode == "v2":
            import cuda.bindings._v2.driver as V
            a = V.MemCpyAttributes_v1()
            a.src_access_order = 1  # STREAM
            arr = (c_uint64 * N)
            cd, cs, cz, ci = arr(*dsts), arr(*srcs), (c_size_t * N)(*sizes), (c_size_t * 1)(0)
            r = V.memcpy_batch_async_v2(ctypes.addressof(cd), ctypes.addressof(cs), ctypes.addressof(cz), N, a,
                                        ctypes.addressof(ci), 1, stream.value)
            rc = int(r[0] if isinstance(r, tuple) else r) if r is not None else 0
        else:
            die("unknown mode %s" % mode)
        out("BATCH %d count=%d rc=%d" % (k, N, rc))
        ok = ok and rc == 0
    ck(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
    same = all(bytes(pin_out[(N - 1 - i) * CHUNK:(N - i) * CHUNK]) == bytes(pin_in[i * CHUNK:(i + 1) * CHUNK])
               for i in range(N))
    out("CHECK data %s" % ("ok" if same else "FAIL"))
    out("RESULT %s" % ("ok" if ok and same else "FAIL"))
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
