/* SPDX-License-Identifier: MIT */
/*
 * The real driver (src/driver.c): found once, from any thread or
 * constructor, without going through the shim's own symbols.
 */
#ifndef CBT_SRC_DRIVER_H
#define CBT_SRC_DRIVER_H

#include <cuda.h>
#undef cuGetProcAddress
#undef cuMemcpy3DBatchAsync
#undef cuMemcpyBatchAsync
#include <cubatchtrace/cuda13x.h>
#undef cuMemcpy3DWithAttributesAsync
#undef cuMemcpyWithAttributesAsync
#undef cuFabricCpyBatchAsync

#include <cubatchtrace/catalog.h>

#include "util.h"

/* The two ABIs of the batch function. */
typedef CUresult (*cbt_batch_v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*cbt_batch_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
/* The two ABIs of the 1D batch function. */
typedef CUresult (*cbt_batch1d_v2_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, CUstream);
typedef CUresult (*cbt_batch1d_v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, size_t *, CUstream);
/* The CUDA 13.2 single-op forms and the CUDA 13.5 fabric batch (cubatchtrace/cuda13x.h). */
typedef CUresult (*cbt_one3d_fn)(CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*cbt_one1d_fn)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *, CUstream);
typedef CUresult (*cbt_fabric_fn)(size_t, CUDA_FABRIC_COPY_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*cbt_gpa4_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*cbt_gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/*
 * The real driver's entry points the shim uses.  A NULL entry was not found.
 *
 * The shim's exported functions stand in for the definitions that come
 * after it (another interposer, or the program's own libcuda): they forward
 * to the `next_*` entries.  What cuGetProcAddress or dlsym on the driver
 * handed out is forwarded to exactly that (`batch`, `gpa4`, `gpa5`).
 */
struct cbt_real {
    /* What the exported functions of these names forward to: the next
     * definition after the shim, or the driver's own when there is none or
     * CUBATCHTRACE_LIBCUDA chose the driver.  NULL batch entries when the
     * driver could not be loaded: the batch doors then answer an error.
     * First: the doors read it every batch (the eight batch variants in
     * one cache line, the single-op and fabric ones in the next). */
    void *next_batch[CBT_API_COUNT_];
    void *handle;              /* dlopen handle of the real libcuda; NULL if not loaded */
    void *batch[CBT_API_COUNT_]; /* the exported batch, single-op and fabric functions, by enum cbt_api;
                                  * NULL where the driver lacks them (13.0: the 13.2 and 13.5 ones) */
    cbt_gpa4_fn gpa4;          /* cuGetProcAddress (4 arguments) */
    cbt_gpa5_fn gpa5;          /* cuGetProcAddress_v2 */
    cbt_gpa4_fn next_gpa4;
    cbt_gpa5_fn next_gpa5;
    bool chosen;               /* CUBATCHTRACE_LIBCUDA named the driver */
    CUresult (*pointer_get_attributes)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
    CUresult (*mem_get_address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*array3d_get_descriptor)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
    CUresult (*device_get_count)(int *);
    CUresult (*stream_get_ctx[2])(CUstream, CUcontext *);      /* [1]: _ptsz */
    CUresult (*stream_get_id[2])(CUstream, unsigned long long *);
    CUresult (*stream_is_capturing[2])(CUstream, CUstreamCaptureStatus *);
    CUresult (*ctx_get_device_v2)(CUdevice *, CUcontext);
    /* GPU time (src/gputime.c) */
    CUresult (*ctx_get_id)(CUcontext, unsigned long long *);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record[2])(CUevent, CUstream);                /* [1]: _ptsz */
    CUresult (*event_query)(CUevent);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_elapsed)(float *, CUevent, CUevent);
    CUresult (*stream_create)(CUstream *, unsigned int);
    CUresult (*thread_exchange_capture_mode)(CUstreamCaptureMode *);
    /* Graphs (src/nodes.c, src/graph.c) */
    CUresult (*driver_get_version)(int *);
    CUresult (*graph_get_nodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType *);
    CUresult (*graph_node_get_params)(CUgraphNode, CUgraphNodeParams *);
    CUresult (*graph_child_graph)(CUgraphNode, CUgraph *);
    CUresult (*stream_get_capture_info[2])(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                           const CUgraphNode **, const CUgraphEdgeData **, size_t *); /* [1]: _ptsz */
    char error[256];           /* why the driver could not be loaded */
};

/* The real driver, found once (thread-safe; safe to call from any constructor). */
extern struct cbt_real cbt_real_table __attribute__((visibility("hidden")));
extern int cbt_real_state __attribute__((visibility("hidden")));
const struct cbt_real *cbt_real_slow(void);
static inline const struct cbt_real *cbt_real(void)
{
    if (cbt_likely(__atomic_load_n(&cbt_real_state, __ATOMIC_ACQUIRE) == 2))
        return &cbt_real_table;
    return cbt_real_slow();
}

/* The real dlsym (glibc's), found without going through the shim's own:
 * lookups made with it are from the shim's point of view. */
void *cbt_real_dlsym(void *handle, const char *name);
/* The addresses of glibc's dlsym and of the dlsym that comes after the shim
 * (another library's dlsym wrapper, else glibc's); also used by src/dlsym_stub.S. */
void *cbt_real_dlsym_fn(void);
void *cbt_next_dlsym_fn(void);
/* The definition of `name` that comes after the shim (RTLD_NEXT), or NULL;
 * never one of the shim's own. */
void *cbt_next_definition(const char *name);
/* Is `p` an address inside the shim itself? */
bool cbt_in_shim(const void *p);
/* What the shim's exported function `name` forwards to, given the driver's
 * function of that name (cbt_real's next_* rule; called while the driver loads). */
void *cbt_export_target(void *driver_fn, const char *name);

/* The one stderr line said when the real driver cannot be had (once per process). */
void cbt_warn_no_driver(const char *function);

#endif
