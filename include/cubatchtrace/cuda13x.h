/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace: the CUDA driver API past the toolkit the project is built
 * with.
 *
 * What CUDA 13.2 and 13.5 added to the batch-copy API, declared here only
 * where <cuda.h> lacks it (CUDA_VERSION below 13020, below 13050), so the
 * shim and the test double build against a 13.0 toolkit and still speak to
 * a driver that has these calls.  Every layout is the release header's:
 * tests/layout/cuda13x.sh compiles each struct declared here against the
 * cuda.h of PyPI's nvidia-cuda-runtime 13.5 wheel and compares every size
 * and offset.  With a toolkit of 13.5 or newer this header adds only the
 * accessors (cbt_node_params_memcpy_batch).
 *
 * Names are CUDA's own, so code written against a newer cuda.h reads the
 * same here.  Nothing in it is defined by the project: a declaration that
 * disagreed with the driver's would be a bug of this header.
 */
#ifndef CUBATCHTRACE_CUDA13X_H
#define CUBATCHTRACE_CUDA13X_H

#include <stddef.h>

#include <cuda.h>

/* ---- CUDA 13.2: the single-op forms of the batch calls ---- */

#if CUDA_VERSION < 13020
/* One op of cuMemcpy3DBatchAsync's own struct; flags must be 0. */
CUresult CUDAAPI cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags,
                                               CUstream hStream);
/* One copy of cuMemcpyBatchAsync with its attribute. */
CUresult CUDAAPI cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                             CUmemcpyAttributes *attr, CUstream hStream);
#endif

/* The per-thread-default-stream variants.  A 13.2+ cuda.h declares them only
 * under CUDA_API_PER_THREAD_DEFAULT_STREAM (by its macros); declared here
 * always, the same prototype twice is harmless. */
CUresult CUDAAPI cuMemcpy3DWithAttributesAsync_ptsz(CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags,
                                                    CUstream hStream);
CUresult CUDAAPI cuMemcpyWithAttributesAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                                  CUmemcpyAttributes *attr, CUstream hStream);

/* ---- CUDA 13.5: copies between logical endpoints of a fabric ---- */

#if CUDA_VERSION < 13050
typedef cuuint32_t CUlogicalEndpointId;

typedef enum CUfabricCpyOperandType_enum {
    CU_FABRIC_COPY_OPERAND_TYPE_POINTER = 0x1,          /* ptr: an address */
    CU_FABRIC_COPY_OPERAND_TYPE_LOGICAL_ENDPOINT = 0x2, /* le: an endpoint and an offset into it */
    CU_FABRIC_COPY_OPERAND_TYPE_MAX = 0x7FFFFFFF
} CUfabricCpyOperandType;

typedef struct CUfabricCpyOperand_st {
    CUfabricCpyOperandType type;
    union {
        struct {
            CUdeviceptr ptr;       /* where the copy begins */
            CUmemLocation locHint; /* for managed or pageable memory */
        } ptr;
        struct {
            CUlogicalEndpointId id; /* the logical endpoint */
            cuuint64_t offset;      /* bytes into it */
        } le;
    } op;
} CUfabricCpyOperand;

typedef struct CUDA_FABRIC_COPY_BATCH_OP_st {
    CUfabricCpyOperand src;
    CUfabricCpyOperand dst;
    size_t size;        /* bytes; 0 makes the op a no-op (its operands still checked) */
    unsigned int flags; /* must be 0 */
} CUDA_FABRIC_COPY_BATCH_OP_v1;
typedef CUDA_FABRIC_COPY_BATCH_OP_v1 CUDA_FABRIC_COPY_BATCH_OP;

/* CUDA_ERROR_NOT_SUPPORTED where the platform has no logical endpoints. */
CUresult CUDAAPI cuFabricCpyBatchAsync(size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList, unsigned long long flags,
                                       CUstream hStream);
#endif

CUresult CUDAAPI cuFabricCpyBatchAsync_ptsz(size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList,
                                            unsigned long long flags, CUstream hStream);

/* ---- CUDA 13.5: batch copies as graph nodes ----
 *
 * CUgraphNodeParams keeps the 13.0 layout (type, int reserved0[3], a
 * 232-byte union, long long reserved2); 13.5 adds members to the union.
 * Read and write them through cbt_node_params_memcpy_batch(), which is the
 * member itself with a 13.5 cuda.h and a cast over the union's bytes
 * before. */

#if CUDA_VERSION < 13050
/* A CUgraphNodeType value the 13.0 enum lacks. */
#define CU_GRAPH_NODE_TYPE_MEMCPY_BATCH ((CUgraphNodeType)14)
#define CU_GRAPH_NODE_TYPE_FABRIC_CPY_BATCH ((CUgraphNodeType)18)

typedef struct CUDA_MEMCPY_BATCH_NODE_PARAMS_V1_st {
    size_t count;              /* entries of dsts, srcs, sizes; fixed once instantiated */
    CUdeviceptr *dsts;         /* may change in an instantiated graph */
    CUdeviceptr *srcs;         /* may change in an instantiated graph */
    size_t *sizes;             /* may change; a size of 0 disables that copy */
    CUmemcpyAttributes *attrs; /* contents fixed once instantiated */
    size_t *attrsIdxs;         /* first copy of each attribute; fixed once instantiated */
    size_t numAttrs;           /* entries of attrs and attrsIdxs; fixed once instantiated */
    union {
        CUcontext ctx;   /* preferred context for the copies */
        CUgreenCtx gCtx; /* or green context */
    };
} CUDA_MEMCPY_BATCH_NODE_PARAMS_V1;
typedef CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 CUDA_MEMCPY_BATCH_NODE_PARAMS;

typedef struct CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1_st {
    size_t numOps;                     /* fixed once instantiated */
    CUDA_FABRIC_COPY_BATCH_OP *opList; /* endpoints and operand types fixed once instantiated */
    unsigned long long flags;          /* must be 0 */
    union {
        CUcontext ctx;
        CUgreenCtx gCtx;
    };
} CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1;
typedef CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1 CUDA_FABRIC_CPY_BATCH_NODE_PARAMS;

_Static_assert(sizeof(CUDA_MEMCPY_BATCH_NODE_PARAMS_V1) <= sizeof(((CUgraphNodeParams *)0)->reserved1),
               "the batch node's parameters fit CUgraphNodeParams' union");
_Static_assert(sizeof(CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1) <= sizeof(((CUgraphNodeParams *)0)->reserved1),
               "the fabric node's parameters fit CUgraphNodeParams' union");
#endif

/* The memcpyBatch member of a CUgraphNodeParams (its union, read as
 * CUDA_MEMCPY_BATCH_NODE_PARAMS_V1); the fabricCpyBatch member likewise. */
static inline CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 *cbt_node_params_memcpy_batch(CUgraphNodeParams *p)
{
#if CUDA_VERSION >= 13050
    return &p->memcpyBatch;
#else
    return (CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 *)(void *)p->reserved1;
#endif
}

static inline const CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 *cbt_node_params_memcpy_batch_const(const CUgraphNodeParams *p)
{
#if CUDA_VERSION >= 13050
    return &p->memcpyBatch;
#else
    return (const CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 *)(const void *)p->reserved1;
#endif
}

static inline CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1 *cbt_node_params_fabric_cpy_batch(CUgraphNodeParams *p)
{
#if CUDA_VERSION >= 13050
    return &p->fabricCpyBatch;
#else
    return (CUDA_FABRIC_CPY_BATCH_NODE_PARAMS_V1 *)(void *)p->reserved1;
#endif
}

/* (graph-node declarations continue here) */

#endif
