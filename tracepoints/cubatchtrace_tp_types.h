/*
 * The records the shim hands to the tracepoints.  Kept out of the
 * tracepoint header's multi-read part so they are declared once.
 */
#ifndef CUBATCHTRACE_TP_TYPES_H
#define CUBATCHTRACE_TP_TYPES_H

#include <stdint.h>

/* Ops travel in chunks of at most this many per event, so an event stays far
 * below the smallest sub-buffer LTTng gives a channel by default. */
#define CBT_TP_OPS_PER_EVENT 256

/* One batch, as recorded after the driver answered (or the shim refused it). */
struct cbt_tp_batch {
    uint64_t batch_id;       /* per process, from 0 */
    uint8_t api;             /* enum cbt_api */
    uint8_t door;            /* enum cbt_door */
    uint8_t outcome;         /* enum cbt_outcome */
    uint8_t capture;         /* enum cbt_capture */
    uint64_t num_ops;
    uint64_t flags;
    uint64_t op_list;        /* the opList pointer */
    uint64_t stream;         /* the CUstream handle */
    uint64_t stream_id;      /* cuStreamGetId; 0 when unknown */
    uint64_t context;        /* cuStreamGetCtx */
    int32_t device;          /* device ordinal of the context; -1 when unknown */
    uint32_t result;         /* the CUresult the caller saw */
    uint64_t fail_idx;       /* 12.8 ABI: *failIdx after the call; UINT64_MAX otherwise */
    uint64_t driver_ns;      /* host time spent in the driver call */
    uint64_t caller;         /* return address in the caller (also the `ip` argument) */
    uint32_t tid;            /* the calling thread (the event may be written by the recorder thread) */
    uint32_t findings;       /* validator findings for this batch (0: not validated or clean) */
    uint8_t validated;       /* 1 when the validator ran on this batch */
};

/* A chunk of a batch's ops as a structure of arrays (one entry per op). */
struct cbt_tp_ops {
    uint64_t batch_id;
    uint64_t first;  /* index of the chunk's first op in the batch */
    uint32_t count;  /* ops in the chunk */
    /* operands: type (enum cbt_operand_kind), memory kind (enum cbt_memkind), device */
    uint8_t src_type[CBT_TP_OPS_PER_EVENT], dst_type[CBT_TP_OPS_PER_EVENT];
    uint8_t src_mem[CBT_TP_OPS_PER_EVENT], dst_mem[CBT_TP_OPS_PER_EVENT];
    int32_t src_device[CBT_TP_OPS_PER_EVENT], dst_device[CBT_TP_OPS_PER_EVENT];
    /* POINTER: ptr; ARRAY: the CUarray handle */
    uint64_t src_addr[CBT_TP_OPS_PER_EVENT], dst_addr[CBT_TP_OPS_PER_EVENT];
    /* POINTER operands (0 for arrays) */
    uint64_t src_row_length[CBT_TP_OPS_PER_EVENT], dst_row_length[CBT_TP_OPS_PER_EVENT];
    uint64_t src_layer_height[CBT_TP_OPS_PER_EVENT], dst_layer_height[CBT_TP_OPS_PER_EVENT];
    uint8_t src_lochint_type[CBT_TP_OPS_PER_EVENT], dst_lochint_type[CBT_TP_OPS_PER_EVENT];
    int32_t src_lochint_id[CBT_TP_OPS_PER_EVENT], dst_lochint_id[CBT_TP_OPS_PER_EVENT];
    /* ARRAY operands (0 for pointers) */
    uint64_t src_x[CBT_TP_OPS_PER_EVENT], src_y[CBT_TP_OPS_PER_EVENT], src_z[CBT_TP_OPS_PER_EVENT];
    uint64_t dst_x[CBT_TP_OPS_PER_EVENT], dst_y[CBT_TP_OPS_PER_EVENT], dst_z[CBT_TP_OPS_PER_EVENT];
    /* the op */
    uint64_t width[CBT_TP_OPS_PER_EVENT], height[CBT_TP_OPS_PER_EVENT], depth[CBT_TP_OPS_PER_EVENT];
    uint8_t access_order[CBT_TP_OPS_PER_EVENT];
    uint32_t op_flags[CBT_TP_OPS_PER_EVENT];
    uint32_t elem_size[CBT_TP_OPS_PER_EVENT]; /* 0 when unknown (array not described) */
    uint64_t bytes[CBT_TP_OPS_PER_EVENT];     /* bytes moved; 0 when unknown */
};

/* One validator finding. */
struct cbt_tp_finding {
    uint64_t batch_id;
    uint16_t rule;     /* enum cbt_rule */
    uint8_t severity;  /* enum cbt_severity */
    uint8_t side;      /* enum cbt_side */
    uint64_t op;       /* UINT64_MAX for batch-level rules */
    uint64_t other_op; /* UINT64_MAX unless an overlap */
    uint64_t value, limit;
    uint64_t caller;
    uint32_t tid;      /* the calling thread */
};

#endif
