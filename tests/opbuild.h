/* SPDX-License-Identifier: MIT */
/*
 * Builders for cuMemcpy3DBatchAsync ops, shared by the test programs.
 *
 * Every test (unit, fakecuda, clients, GPU clients) needs the same few
 * zero-initialised CUmemcpy3DOperand / CUDA_MEMCPY3D_BATCH_OP values; they
 * used to carry a copy each.  Header-only (static inline) so that programs
 * built outside automake (tests/gpu/build, gcc and nvcc) need only
 * `-I tests`.  examples/demo.c keeps its own copy: it stays self-contained.
 */
#ifndef CBT_TESTS_OPBUILD_H
#define CBT_TESTS_OPBUILD_H

#include <stddef.h>
#include <string.h>

#include <cuda.h>

/* A pointer operand; row_length/layer_height 0 mean "tightly packed". */
static inline CUmemcpy3DOperand ob_ptr(CUdeviceptr ptr, size_t row_length, size_t layer_height)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = ptr;
    o.op.ptr.rowLength = row_length;
    o.op.ptr.layerHeight = layer_height;
    return o;
}

/* A CUDA array operand at element offset (x, y, z). */
static inline CUmemcpy3DOperand ob_array(CUarray array, size_t x, size_t y, size_t z)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = array;
    o.op.array.offset.x = x;
    o.op.array.offset.y = y;
    o.op.array.offset.z = z;
    return o;
}

/* An op copying a w x h x d extent from src to dst; flags and hints zero. */
static inline CUDA_MEMCPY3D_BATCH_OP ob_op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h,
                                           size_t d, CUmemcpySrcAccessOrder order)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src = src;
    op.dst = dst;
    op.extent.width = w;
    op.extent.height = h;
    op.extent.depth = d;
    op.srcAccessOrder = order;
    return op;
}

#endif
