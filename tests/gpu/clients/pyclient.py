# SPDX-License-Identifier: MIT
"""GPU test client for the Python doors of cuMemcpy3DBatchAsync.

    python3 pyclient.py ctypes       memcpy_3d_batch_async_v2, the shim's binding entry, through ctypes
    python3 pyclient.py bindings     cuda.bindings.driver.cuMemcpy3DBatchAsync (cuda-python)
    python3 pyclient.py bindings_v2  cuda.bindings._v2.driver.memcpy_3d_batch_async_v2 (cuda-bindings >= 13.5)

Everything but the batch call itself is done through ctypes on libcuda.so.1
(the same driver instance the bindings and the shim use), so the three doors
run the very same data suite as the C clients (tests/gpu/clients/cbt_gpu.h)
and print the same manifest: PID, BATCH/OP lines, CHECK lines, RESULT.
"""
import ctypes
import os
import sys
from ctypes import (POINTER, Structure, Union, addressof, byref, c_char_p, c_int, c_size_t, c_ssize_t, c_uint,
                    c_uint64, c_ulonglong, c_void_p, sizeof)


class MemLocation(Structure):
    _fields_ = [("type", c_int), ("id", c_int)]


class PtrOperand(Structure):
    _fields_ = [("ptr", c_uint64), ("rowLength", c_size_t), ("layerHeight", c_size_t), ("locHint", MemLocation)]


class Offset3D(Structure):
    _fields_ = [("x", c_size_t), ("y", c_size_t), ("z", c_size_t)]


class ArrayOperand(Structure):
    _fields_ = [("array", c_void_p), ("offset", Offset3D)]


class OperandUnion(Union):
    _fields_ = [("ptr", PtrOperand), ("array", ArrayOperand)]


class Operand(Structure):
    _fields_ = [("type", c_int), ("op", OperandUnion)]


class Extent3D(Structure):
    _fields_ = [("width", c_size_t), ("height", c_size_t), ("depth", c_size_t)]


class BatchOp(Structure):
    _fields_ = [("src", Operand), ("dst", Operand), ("extent", Extent3D), ("srcAccessOrder", c_int),
                ("flags", c_uint)]


class Array3DDescriptor(Structure):
    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Depth", c_size_t), ("Format", c_int),
                ("NumChannels", c_uint), ("Flags", c_uint)]


assert sizeof(BatchOp) == 112 and sizeof(Operand) == 40

POINTER_T, ARRAY_T = 1, 2
STREAM, DURING, ANY = 1, 2, 3
MK_DEVICE, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_ARRAY = 1, 2, 3, 4, 5
FORMAT_FLOAT = 0x20
SIZE_MAX = (1 << 64) - 1

failed = False
batches = 0
cu = None


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def check(name, ok, detail=""):
    global failed
    out("CHECK %s %s%s" % (name, "ok" if ok else "FAIL", (" " + detail) if detail else ""))
    if not ok:
        failed = True


def finish():
    out("RESULT %s" % ("FAIL" if failed else "ok"))
    sys.exit(1 if failed else 0)


def err_name(rc):
    s = c_char_p()
    if cu.cuGetErrorName(c_int(rc), byref(s)) == 0 and s.value:
        return s.value.decode()
    return "CUresult %d" % rc


def ck(what, rc):
    if rc != 0:
        out("CHECK setup FAIL %s -> %s" % (what, err_name(rc)))
        finish()


# ---------------------------------------------------------------- driver setup

def setup():
    global cu
    cu = ctypes.CDLL("libcuda.so.1")
    cu.cuGetErrorName.argtypes = [c_int, POINTER(c_char_p)]
    cu.cuMemAlloc_v2.argtypes = [POINTER(c_uint64), c_size_t]
    cu.cuMemAllocHost_v2.argtypes = [POINTER(c_void_p), c_size_t]
    cu.cuMemAllocManaged.argtypes = [POINTER(c_uint64), c_size_t, c_uint]
    cu.cuArray3DCreate_v2.argtypes = [POINTER(c_void_p), POINTER(Array3DDescriptor)]
    cu.cuStreamSynchronize.argtypes = [c_void_p]
    dev, ctx, stream = c_int(), c_void_p(), c_void_p()
    ck("cuInit", cu.cuInit(0))
    ck("cuDeviceGet", cu.cuDeviceGet(byref(dev), 0))
    cu.cuDevicePrimaryCtxRetain.argtypes = [POINTER(c_void_p), c_int]
    ck("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(byref(ctx), dev.value))
    cu.cuCtxSetCurrent.argtypes = [c_void_p]
    ck("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    cu.cuStreamCreate.argtypes = [POINTER(c_void_p), c_uint]
    ck("cuStreamCreate", cu.cuStreamCreate(byref(stream), 1))  # CU_STREAM_NON_BLOCKING
    return stream.value


def dev_alloc(n):
    p = c_uint64()
    ck("cuMemAlloc", cu.cuMemAlloc_v2(byref(p), n))
    return p.value


def host_alloc(n):
    p = c_void_p()
    ck("cuMemAllocHost", cu.cuMemAllocHost_v2(byref(p), n))
    return p.value


def managed_alloc(n):
    p = c_uint64()
    ck("cuMemAllocManaged", cu.cuMemAllocManaged(byref(p), n, 1))  # CU_MEM_ATTACH_GLOBAL
    return p.value


def array3d(w, h, d, channels):
    a = c_void_p()
    desc = Array3DDescriptor(w, h, d, FORMAT_FLOAT, channels, 0)
    ck("cuArray3DCreate", cu.cuArray3DCreate_v2(byref(a), byref(desc)))
    return a.value


def sync(stream):
    ck("cuStreamSynchronize", cu.cuStreamSynchronize(c_void_p(stream)))


def pageable(n, fill=None):
    """malloc-like host memory the driver does not know: a ctypes buffer."""
    buf = (ctypes.c_ubyte * n)()
    if fill is not None:
        ctypes.memmove(buf, fill, n)
    return buf


def read(addr, n):
    return ctypes.string_at(addr, n)


def write(addr, data):
    ctypes.memmove(addr, data, len(data))


# ---------------------------------------------------------------- ops and manifest

def ptr_operand(o, p, row_length=0, layer_height=0, hint=(0, 0)):
    o.type = POINTER_T
    o.op.ptr.ptr = p
    o.op.ptr.rowLength = row_length
    o.op.ptr.layerHeight = layer_height
    o.op.ptr.locHint.type, o.op.ptr.locHint.id = hint


def array_operand(o, a, x=0, y=0, z=0):
    o.type = ARRAY_T
    o.op.array.array = a
    o.op.array.offset.x, o.op.array.offset.y, o.op.array.offset.z = x, y, z


def make_ops(specs):
    """specs: (src, dst, (w, h, d), order, src_mem, dst_mem, bytes); src/dst: ('p', addr, rl, lh[, hint]) or ('a', arr, x, y, z)."""
    ops = (BatchOp * len(specs))()
    info = []
    for i, (src, dst, ext, order, smem, dmem, nbytes) in enumerate(specs):
        for o, s in ((ops[i].src, src), (ops[i].dst, dst)):
            if s[0] == 'p':
                ptr_operand(o, *s[1:])
            else:
                array_operand(o, *s[1:])
        ops[i].extent.width, ops[i].extent.height, ops[i].extent.depth = ext
        ops[i].srcAccessOrder = order
        ops[i].flags = 0
        info.append((smem, dmem, nbytes))
    return ops, info


def side_text(side, o, mem):
    t = " %s_type=%d %s_mem=%d" % (side, o.type, side, mem)
    if o.type == ARRAY_T:
        a = o.op.array
        t += " %s_addr=0x%x %s_x=%d %s_y=%d %s_z=%d" % (side, a.array or 0, side, a.offset.x, side, a.offset.y, side,
                                                       a.offset.z)
    else:
        p = o.op.ptr
        t += " %s_addr=0x%x %s_row_length=%d %s_layer_height=%d %s_lochint_type=%d %s_lochint_id=%d" % (
            side, p.ptr, side, p.rowLength, side, p.layerHeight, side, p.locHint.type, side, p.locHint.id)
    return t


def do_batch(door, name, ops, info, stream, expect_ok, want_fail_idx=SIZE_MAX):
    global batches
    k = batches
    batches += 1
    rc = door(len(ops), ops, stream)
    out("BATCH %d n=%d rc=%d failidx=- expect=%s" % (k, len(ops), rc, "ok" if expect_ok else "fail"))
    for i, op in enumerate(ops):
        smem, dmem, nbytes = info[i]
        out("OP %d %d%s%s width=%d height=%d depth=%d access_order=%d op_flags=%d bytes=%d" % (
            k, i, side_text("src", op.src, smem), side_text("dst", op.dst, dmem), op.extent.width, op.extent.height,
            op.extent.depth, op.srcAccessOrder, op.flags, nbytes))
    if expect_ok:
        check("batch%d-%s" % (k, name), rc == 0, "%s" % err_name(rc))
    else:
        check("batch%d-%s" % (k, name), rc == 1, "%s (want CUDA_ERROR_INVALID_VALUE)" % err_name(rc))
    return rc


def compare(name, got, want):
    bad = [i for i in range(len(want)) if got[i] != want[i]]
    if bad:
        check(name, False, "%d of %d bytes wrong, first at %d (got 0x%02x want 0x%02x)" % (
            len(bad), len(want), bad[0], got[bad[0]], want[bad[0]]))
    else:
        check(name, True, "%d bytes" % len(want))


# ---------------------------------------------------------------- the data suite (as in cbt_gpu.h)

def data_suite(door, stream):
    AW, AH, AD, AE = 8, 6, 3, 16
    BW, BH, BD, BE = 16, 8, 3, 4
    a_bytes, b_bytes = AW * AH * AD * AE, BW * BH * BD * BE
    pat_a = bytes((i * 7 + 3) & 0xff for i in range(3600))
    pat_b = bytes((i * 13 + 5) & 0xff for i in range(1200))
    pat_c = bytes((i * 31 + 1) & 0xff for i in range(4096))
    pat_arr = bytes((i * 3 + 7) & 0xff for i in range(a_bytes))
    pat_box = bytes(i % 251 + 1 for i in range(640))
    pat_B = b"".join((i + 1).to_bytes(4, "little") for i in range(b_bytes // 4))

    h_a, h_c, h_z = pageable(3600, pat_a), pageable(4096, pat_c), pageable(b_bytes)
    h_out_e, h_out_A = pageable(2048, b"\xee" * 2048), pageable(a_bytes, b"\xee" * a_bytes)
    p_b, p_A, p_box, p_B = host_alloc(1200), host_alloc(a_bytes), host_alloc(640), host_alloc(b_bytes)
    p_out_b, p_out_f, p_out_C = host_alloc(1200), host_alloc(4096), host_alloc(b_bytes)
    write(p_b, pat_b)
    write(p_A, pat_arr)
    write(p_box, pat_box)
    write(p_B, pat_B)
    write(p_out_b, b"\xee" * 1200)
    write(p_out_f, b"\xee" * 4096)
    write(p_out_C, b"\xee" * b_bytes)
    d_a, d_b, d_e, d_f = dev_alloc(2600), dev_alloc(3072), dev_alloc(2048), dev_alloc(4096)
    m_c = managed_alloc(4096)
    A, B, C = array3d(AW, AH, AD, 4), array3d(BW, BH, BD, 1), array3d(BW, BH, BD, 1)
    ha, hc, hz, hoe, hoA = (addressof(x) for x in (h_a, h_c, h_z, h_out_e, h_out_A))

    ops, info = make_ops([
        (('p', ha, 300, 6), ('p', d_a, 260, 5), (256, 4, 2), STREAM, MK_PAGEABLE, MK_DEVICE, 2048),
        (('p', p_b, 0, 0), ('p', d_b, 512, 0), (200, 3, 2), STREAM, MK_PINNED, MK_DEVICE, 1200),
        (('p', hc, 0, 0), ('p', m_c, 0, 0, (1, 0)), (4096, 1, 1), DURING, MK_PAGEABLE, MK_MANAGED, 4096),
        (('p', p_A, 0, 0), ('a', A, 0, 0, 0), (AW, AH, AD), STREAM, MK_PINNED, MK_ARRAY, a_bytes),
        (('p', p_B, 0, 0), ('a', B, 0, 0, 0), (BW, BH, BD), STREAM, MK_PINNED, MK_ARRAY, b_bytes),
        (('p', hz, 0, 0), ('a', C, 0, 0, 0), (BW, BH, BD), DURING, MK_PAGEABLE, MK_ARRAY, b_bytes),
    ])
    do_batch(door, "uploads", ops, info, stream, True)
    sync(stream)
    ops, info = make_ops([
        (('p', d_a, 260, 5), ('p', d_e, 0, 0), (256, 4, 2), ANY, MK_DEVICE, MK_DEVICE, 2048),
        (('p', p_box, 5, 4), ('a', A, 1, 2, 1), (4, 3, 2), STREAM, MK_PINNED, MK_ARRAY, 4 * 3 * 2 * AE),
        (('p', m_c, 0, 0), ('p', d_f, 0, 0), (4096, 1, 1), STREAM, MK_MANAGED, MK_DEVICE, 4096),
        (('a', B, 2, 1, 0), ('a', C, 3, 0, 1), (5, 4, 2), STREAM, MK_ARRAY, MK_ARRAY, 5 * 4 * 2 * BE),
    ])
    do_batch(door, "device-moves", ops, info, stream, True)
    sync(stream)
    ops, info = make_ops([
        (('p', d_e, 0, 0), ('p', hoe, 0, 0), (256, 4, 2), STREAM, MK_DEVICE, MK_PAGEABLE, 2048),
        (('p', d_b, 512, 3), ('p', p_out_b, 0, 0), (200, 3, 2), STREAM, MK_DEVICE, MK_PINNED, 1200),
        (('p', d_f, 0, 0), ('p', p_out_f, 0, 0), (4096, 1, 1), STREAM, MK_DEVICE, MK_PINNED, 4096),
        (('a', A, 0, 0, 0), ('p', hoA, 0, 0), (AW, AH, AD), STREAM, MK_ARRAY, MK_PAGEABLE, a_bytes),
        (('a', C, 0, 0, 0), ('p', p_out_C, 0, 0), (BW, BH, BD), STREAM, MK_ARRAY, MK_PINNED, b_bytes),
    ])
    do_batch(door, "readbacks", ops, info, stream, True)
    sync(stream)

    want = bytearray(2048)
    for z in range(2):
        for y in range(4):
            want[(z * 4 + y) * 256:(z * 4 + y) * 256 + 256] = pat_a[(z * 6 + y) * 300:(z * 6 + y) * 300 + 256]
    compare("data-pageable>device>device>pageable-pitched", bytes(h_out_e), want)
    compare("data-pinned>device>pinned-pitched", read(p_out_b, 1200), pat_b)
    compare("data-pageable>managed>device>pinned", read(p_out_f, 4096), pat_c)
    compare("data-managed-host-view", read(m_c, 4096), pat_c)
    want = bytearray(pat_arr)
    for z in range(1, 3):
        for y in range(2, 5):
            for x in range(1, 5):
                e = (z * AH + y) * AW + x
                s = (((z - 1) * 4 + (y - 2)) * 5 + (x - 1)) * AE
                want[e * AE:e * AE + AE] = pat_box[s:s + AE]
    compare("data-pinned>float4-array(offset,pitched)>pageable", bytes(h_out_A), want)
    want = bytearray(b_bytes)
    for z in range(1, 3):
        for y in range(4):
            for x in range(3, 8):
                v = ((z - 1) * BH + (y + 1)) * BW + (x - 3 + 2) + 1
                want[((z * BH + y) * BW + x) * 4:((z * BH + y) * BW + x) * 4 + 4] = v.to_bytes(4, "little")
    compare("data-array>array(offsets)>pinned", read(p_out_C, b_bytes), want)

    try:
        dtoh = cu.cuMemcpyDtoH_v2
    except AttributeError:
        dtoh = None
    if dtoh:
        dtoh.argtypes = [c_void_p, c_uint64, c_size_t]
        back = pageable(1200)
        r = dtoh(addressof(back), d_b, 1200)
        check("data-independent-readback", r == 0 and bytes(back)[:200] == pat_b[:200], err_name(r))
    else:
        out("CHECK data-independent-readback skip no cuMemcpyDtoH_v2 in this driver (test double)")

    ops, info = make_ops([(('p', d_e, 0, 0), ('p', d_f, 0, 0), (256, 4, 2), STREAM, MK_DEVICE, MK_DEVICE, 2048)] * 2 +
                         [(('p', d_e, 0, 0), ('p', d_f, 0, 0), (0, 4, 2), STREAM, MK_DEVICE, MK_DEVICE, 0)])
    do_batch(door, "third-op-bad", ops, info, stream, False)
    sync(stream)
    ops, info = make_ops([(('p', d_e, 0, 0), ('p', d_f, 0, 0), (256, 4, 2), STREAM, MK_DEVICE, MK_DEVICE, 2048)])
    do_batch(door, "after-failure", ops, info, stream, True)
    sync(stream)


# ---------------------------------------------------------------- the doors

def door_ctypes():
    try:
        fn = ctypes.CDLL(None).memcpy_3d_batch_async_v2
    except AttributeError:
        check("resolve", False, "memcpy_3d_batch_async_v2 not found: is libcubatchtrace.so preloaded?")
        finish()
    fn.argtypes = [c_size_t, c_ssize_t, c_ulonglong, c_ssize_t]
    fn.restype = c_int
    check("resolve", True, "ctypes.CDLL(None).memcpy_3d_batch_async_v2")
    return lambda n, ops, stream: fn(n, addressof(ops), 0, stream or 0)


def bindings_version():
    import cuda.bindings
    v = getattr(cuda.bindings, "__version__", "?")
    out("BINDINGS %s %s" % (v, os.path.dirname(cuda.bindings.__file__)))


def door_bindings():
    from cuda.bindings import driver
    bindings_version()
    out("PTDS_ENV %s" % os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "-"))

    def as_binding_op(ops, i):
        try:
            return driver.CUDA_MEMCPY3D_BATCH_OP(_ptr=addressof(ops[i]))
        except TypeError:  # no _ptr in this release: fill the fields
            o = driver.CUDA_MEMCPY3D_BATCH_OP()
            ctypes.memmove(o.getPtr(), addressof(ops[i]), sizeof(BatchOp))
            return o

    def call(n, ops, stream):
        lst = [as_binding_op(ops, i) for i in range(n)]
        res = driver.cuMemcpy3DBatchAsync(n, lst, 0, driver.CUstream(stream))
        err = res[0] if isinstance(res, tuple) else res
        return int(err)
    return call


def door_bindings_v2():
    from cuda.bindings._v2 import driver as d2
    bindings_version()

    def call(n, ops, stream):
        try:
            r = d2.memcpy_3d_batch_async_v2(n, addressof(ops), 0, stream)
        except Exception as e:  # the snake_case bindings raise on a CUresult other than success
            import re
            txt = str(e)
            code = None
            for attr in ("status", "error", "code", "result"):
                v = getattr(e, attr, None)
                if isinstance(v, int):
                    code = v
                    break
            m = re.search(r"\((\d+)\)", txt)
            if code is None and m:
                code = int(m.group(1))
            if code is None:
                code = 1 if "INVALID_VALUE" in txt else 999
            out("EXCEPTION %s: %s -> rc %d" % (type(e).__name__, txt.replace("\n", " ")[:200], code))
            return int(code)
        return int(r) if r is not None else 0
    return call


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "ctypes"
    out("PID %d" % os.getpid())
    stream = setup()
    if mode == "ctypes":
        door = door_ctypes()
    elif mode == "bindings":
        door = door_bindings()
    elif mode == "bindings_v2":
        door = door_bindings_v2()
    else:
        check("mode", False, "unknown mode %s" % mode)
        finish()
    data_suite(door, stream)
    finish()


if __name__ == "__main__":
    main()
