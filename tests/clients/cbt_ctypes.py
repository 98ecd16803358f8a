# SPDX-License-Identifier: MIT
"""ctypes mirror of the CUDA 13 batch structures, for the Python clients.

Laid out as cuda.h lays them out (x86-64): CUmemcpy3DOperand is 40 bytes,
CUDA_MEMCPY3D_BATCH_OP 112 (checked on import, so a wrong layout fails
loudly instead of copying garbage).
"""
import ctypes

CU_MEMCPY_OPERAND_TYPE_POINTER = 1
CU_MEMCPY_OPERAND_TYPE_ARRAY = 2
CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 1


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _PtrOperand(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_uint64), ("rowLength", ctypes.c_size_t),
                ("layerHeight", ctypes.c_size_t), ("locHint", CUmemLocation)]


class CUoffset3D(ctypes.Structure):
    _fields_ = [("x", ctypes.c_size_t), ("y", ctypes.c_size_t), ("z", ctypes.c_size_t)]


class _ArrayOperand(ctypes.Structure):
    _fields_ = [("array", ctypes.c_void_p), ("offset", CUoffset3D)]


class _OperandUnion(ctypes.Union):
    _fields_ = [("ptr", _PtrOperand), ("array", _ArrayOperand)]


class CUmemcpy3DOperand(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("op", _OperandUnion)]


class CUextent3D(ctypes.Structure):
    _fields_ = [("width", ctypes.c_size_t), ("height", ctypes.c_size_t), ("depth", ctypes.c_size_t)]


class CUDA_MEMCPY3D_BATCH_OP(ctypes.Structure):
    _fields_ = [("src", CUmemcpy3DOperand), ("dst", CUmemcpy3DOperand), ("extent", CUextent3D),
                ("srcAccessOrder", ctypes.c_int), ("flags", ctypes.c_uint)]


assert ctypes.sizeof(CUmemcpy3DOperand) == 40, ctypes.sizeof(CUmemcpy3DOperand)
assert ctypes.sizeof(CUDA_MEMCPY3D_BATCH_OP) == 112, ctypes.sizeof(CUDA_MEMCPY3D_BATCH_OP)


def ptr_op(src, dst, width, height=1, depth=1):
    """A pointer-to-pointer op copying width x height x depth bytes, tightly packed."""
    op = CUDA_MEMCPY3D_BATCH_OP()
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER
    op.src.op.ptr.ptr = src
    op.dst.op.ptr.ptr = dst
    op.extent.width, op.extent.height, op.extent.depth = width, height, depth
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    return op


def pattern(n, seed):
    return bytes((seed * 151 + i * 7 + 1) & 0xFF for i in range(n))
