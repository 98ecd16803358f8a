/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace: the shared vocabularies.
 *
 * Every list the shim, the trace catalogue, the cubatchtrace tool and the
 * documentation have in common is written here once, as an X-macro.  The
 * numeric values are recorded in traces: never renumber an entry, only
 * append.
 *
 * This header has no dependency besides <stdint.h>; it is safe to include
 * from the tracepoint header, from the pure validator and from the reader.
 */
#ifndef CUBATCHTRACE_CATALOG_H
#define CUBATCHTRACE_CATALOG_H

#include <stdint.h>

/* X(ID, value, "name") : the function the call was made to: the 3D batch
 * (cuMemcpy3DBatchAsync) and the 1D batch (cuMemcpyBatchAsync), each in its
 * CUDA 13 ABI (_v2) and its CUDA 12.8 ABI (with size_t *failIdx); the CUDA
 * 13.2 single-op forms of each, recorded as a batch of one (the 3D op as
 * opList[0], the 1D copy as count 1 with its attribute as attrs[0] from copy
 * 0); the CUDA 13.5 fabric batch, recorded by its fabric event alone.
 * Recorded in 4 bits of a batch event's w (events.h): at most 16 entries. */
#define CBT_API_LIST(X)                                                        \
    X(CBT_API_V2, 0, "cuMemcpy3DBatchAsync_v2")                               \
    X(CBT_API_V2_PTSZ, 1, "cuMemcpy3DBatchAsync_v2_ptsz")                     \
    X(CBT_API_V1, 2, "cuMemcpy3DBatchAsync")                                  \
    X(CBT_API_V1_PTSZ, 3, "cuMemcpy3DBatchAsync_ptsz")                        \
    X(CBT_API_1D_V2, 4, "cuMemcpyBatchAsync_v2")                              \
    X(CBT_API_1D_V2_PTSZ, 5, "cuMemcpyBatchAsync_v2_ptsz")                    \
    X(CBT_API_1D_V1, 6, "cuMemcpyBatchAsync")                                 \
    X(CBT_API_1D_V1_PTSZ, 7, "cuMemcpyBatchAsync_ptsz")                        \
    X(CBT_API_3D_ONE, 8, "cuMemcpy3DWithAttributesAsync")                     \
    X(CBT_API_3D_ONE_PTSZ, 9, "cuMemcpy3DWithAttributesAsync_ptsz")           \
    X(CBT_API_1D_ONE, 10, "cuMemcpyWithAttributesAsync")                      \
    X(CBT_API_1D_ONE_PTSZ, 11, "cuMemcpyWithAttributesAsync_ptsz")            \
    X(CBT_API_FABRIC, 12, "cuFabricCpyBatchAsync")                            \
    X(CBT_API_FABRIC_PTSZ, 13, "cuFabricCpyBatchAsync_ptsz")

/* X(ID, value, "name") : how the caller reached the shim. */
#define CBT_DOOR_LIST(X)                                                       \
    X(CBT_DOOR_SYMBOL, 0, "symbol")                                           \
    X(CBT_DOOR_GETPROCADDRESS, 1, "getprocaddress")                           \
    X(CBT_DOOR_BINDING, 2, "binding")                                         \
    X(CBT_DOOR_GRAPH_NODE, 3, "graph_node")     /* a CUDA graph's batch node: its copies, run by launches */ \
    X(CBT_DOOR_GRAPH_LAUNCH, 4, "graph_launch") /* the copies one cuGraphLaunch ran (the reader's) */

/* X(ID, value, "name") : what a batch became. */
#define CBT_OUTCOME_LIST(X)                                                    \
    X(CBT_OUTCOME_FORWARDED, 0, "forwarded")                                  \
    X(CBT_OUTCOME_REFUSED, 1, "refused")                                      \
    X(CBT_OUTCOME_NO_DRIVER, 2, "no_driver")                                  \
    X(CBT_OUTCOME_PENDING, 3, "pending")

/* X(ID, value, "name") : CUmemcpy3DOperandType as recorded. */
#define CBT_OPERAND_LIST(X)                                                    \
    X(CBT_OPERAND_INVALID, 0, "INVALID")                                      \
    X(CBT_OPERAND_POINTER, 1, "POINTER")                                      \
    X(CBT_OPERAND_ARRAY, 2, "ARRAY")

/* X(ID, value, "name") : CUmemcpySrcAccessOrder as recorded. */
#define CBT_ACCESS_ORDER_LIST(X)                                               \
    X(CBT_ORDER_INVALID, 0, "INVALID")                                        \
    X(CBT_ORDER_STREAM, 1, "STREAM")                                          \
    X(CBT_ORDER_DURING_API_CALL, 2, "DURING_API_CALL")                        \
    X(CBT_ORDER_ANY, 3, "ANY")

/* X(ID, value, "name") : CUmemLocationType of a locHint. */
#define CBT_LOCATION_LIST(X)                                                   \
    X(CBT_LOC_NONE, 0, "NONE")                                                \
    X(CBT_LOC_DEVICE, 1, "DEVICE")                                            \
    X(CBT_LOC_HOST, 2, "HOST")                                                \
    X(CBT_LOC_HOST_NUMA, 3, "HOST_NUMA")                                      \
    X(CBT_LOC_HOST_NUMA_CURRENT, 4, "HOST_NUMA_CURRENT")

/* X(ID, value, "name") : the memory an operand lives in, as the shim learned it. */
#define CBT_MEMKIND_LIST(X)                                                    \
    X(CBT_MEM_UNKNOWN, 0, "unknown")                                          \
    X(CBT_MEM_DEVICE, 1, "device")                                            \
    X(CBT_MEM_HOST_PINNED, 2, "host_pinned")                                  \
    X(CBT_MEM_HOST_PAGEABLE, 3, "host_pageable")                              \
    X(CBT_MEM_MANAGED, 4, "managed")                                          \
    X(CBT_MEM_ARRAY, 5, "array")                                              \
    X(CBT_MEM_UNMAPPED, 6, "unmapped")

/* X(ID, value, "name") : CUstreamCaptureStatus. */
#define CBT_CAPTURE_LIST(X)                                                    \
    X(CBT_CAPTURE_NONE, 0, "NONE")                                            \
    X(CBT_CAPTURE_ACTIVE, 1, "ACTIVE")                                        \
    X(CBT_CAPTURE_INVALIDATED, 2, "INVALIDATED")                              \
    X(CBT_CAPTURE_UNKNOWN, 255, "UNKNOWN")

/* X(ID, value, "name") : what became of a batch's GPU time
 * (CUBATCHTRACE_GPU_TIME=1, the cubatchtrace:gpu_time event). */
#define CBT_GPU_STATUS_LIST(X)                                                 \
    X(CBT_GPU_TIMED, 0, "timed")                                              \
    X(CBT_GPU_CAPTURING, 1, "capturing")     /* its stream was being captured into a graph */ \
    X(CBT_GPU_NO_EVENTS, 2, "no_events")     /* timing events could not be created or recorded */ \
    X(CBT_GPU_CALL_FAILED, 3, "call_failed") /* the call returned an error: no copy to time */ \
    X(CBT_GPU_LOST, 4, "lost")               /* the events could not be read back (context gone, error) */ \
    X(CBT_GPU_OVERFLOW, 5, "overflow")       /* too many batches in flight: not timed */

/* The memory kind of a gpu_time event's sources or destinations when they
 * are not all of one kind; its device when they are not all on one. */
#define CBT_GPU_MIXED_KIND 255
#define CBT_GPU_MIXED_DEVICE (-2)

/* X(ID, value, "name") : which operand of an op a finding is about. */
#define CBT_SIDE_LIST(X)                                                       \
    X(CBT_SIDE_NONE, 0, "none")                                               \
    X(CBT_SIDE_SRC, 1, "src")                                                 \
    X(CBT_SIDE_DST, 2, "dst")

/* X(ID, value, "name") : the CUresult values a batch call is seen to return. */
#define CBT_CURESULT_LIST(X)                                                   \
    X(CBT_CU_SUCCESS, 0, "CUDA_SUCCESS")                                      \
    X(CBT_CU_INVALID_VALUE, 1, "CUDA_ERROR_INVALID_VALUE")                    \
    X(CBT_CU_OUT_OF_MEMORY, 2, "CUDA_ERROR_OUT_OF_MEMORY")                    \
    X(CBT_CU_NOT_INITIALIZED, 3, "CUDA_ERROR_NOT_INITIALIZED")                \
    X(CBT_CU_DEINITIALIZED, 4, "CUDA_ERROR_DEINITIALIZED")                    \
    X(CBT_CU_NO_DEVICE, 100, "CUDA_ERROR_NO_DEVICE")                          \
    X(CBT_CU_INVALID_DEVICE, 101, "CUDA_ERROR_INVALID_DEVICE")                \
    X(CBT_CU_INVALID_CONTEXT, 201, "CUDA_ERROR_INVALID_CONTEXT")              \
    X(CBT_CU_SHARED_OBJECT_INIT_FAILED, 303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED") \
    X(CBT_CU_INVALID_HANDLE, 400, "CUDA_ERROR_INVALID_HANDLE")                \
    X(CBT_CU_NOT_FOUND, 500, "CUDA_ERROR_NOT_FOUND")                          \
    X(CBT_CU_ILLEGAL_ADDRESS, 700, "CUDA_ERROR_ILLEGAL_ADDRESS")              \
    X(CBT_CU_NOT_PERMITTED, 800, "CUDA_ERROR_NOT_PERMITTED")                  \
    X(CBT_CU_NOT_SUPPORTED, 801, "CUDA_ERROR_NOT_SUPPORTED")                  \
    X(CBT_CU_CAPTURE_UNSUPPORTED, 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED") \
    X(CBT_CU_CAPTURE_INVALIDATED, 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED") \
    X(CBT_CU_UNKNOWN, 999, "CUDA_ERROR_UNKNOWN")

/* X(ID, value, "name") */
#define CBT_SEVERITY_LIST(X)                                                   \
    X(CBT_SEV_ERROR, 0, "error")                                              \
    X(CBT_SEV_HAZARD, 1, "hazard")                                            \
    X(CBT_SEV_WARNING, 2, "warning")                                          \
    X(CBT_SEV_ADVICE, 3, "advice")

/*
 * X(name, value, severity, "one line of explanation")
 * The rule names are part of the interface (trace, tool, documentation).
 */
#define CBT_RULE_LIST(X)                                                                                       \
    X(num_ops_zero, 0, CBT_SEV_ERROR, "numOps is 0: the driver returns CUDA_ERROR_INVALID_VALUE")                \
    X(op_list_null, 1, CBT_SEV_ERROR, "opList is NULL with numOps > 0")                                        \
    X(flags_nonzero, 2, CBT_SEV_ERROR, "the batch flags argument is not 0")                                    \
    X(stream_null, 3, CBT_SEV_ERROR, "the stream is NULL (the legacy default stream is not allowed)")           \
    X(stream_legacy, 4, CBT_SEV_ERROR, "the stream is CU_STREAM_LEGACY")                                       \
    X(extent_zero, 5, CBT_SEV_ERROR, "a width, height or depth of the extent is 0")                            \
    X(row_length_too_small, 6, CBT_SEV_ERROR, "a pointer operand's rowLength is neither 0 nor >= the width")  \
    X(layer_height_too_small, 7, CBT_SEV_ERROR, "a pointer operand's layerHeight is neither 0 nor >= the height") \
    X(access_order_invalid, 8, CBT_SEV_ERROR, "srcAccessOrder is not STREAM, DURING_API_CALL or ANY")          \
    X(op_flags_invalid, 9, CBT_SEV_ERROR, "the op's flags hold a bit other than PREFER_OVERLAP_WITH_COMPUTE")   \
    X(operand_type_invalid, 10, CBT_SEV_ERROR, "an operand type is neither POINTER nor ARRAY")                 \
    X(pointer_null, 11, CBT_SEV_ERROR, "a pointer operand is NULL")                                            \
    X(pointer_unmapped, 12, CBT_SEV_ERROR,                                                                     \
      "a pointer operand is neither CUDA memory nor mapped host memory (the driver crashes on it)")             \
    X(array_null, 13, CBT_SEV_ERROR, "an array operand's CUarray is NULL")                                     \
    X(array_out_of_bounds, 14, CBT_SEV_ERROR, "offset + extent runs past the CUDA array's size")               \
    X(array_element_size_mismatch, 15, CBT_SEV_ERROR,                                                          \
      "an array-to-array copy between arrays whose element sizes differ")                                      \
    X(device_out_of_bounds, 16, CBT_SEV_ERROR, "the operand's footprint runs past the end of its allocation")  \
    X(overlap_dst_dst, 17, CBT_SEV_HAZARD, "two ops of the batch write the same bytes (copies have no order)")  \
    X(overlap_src_dst, 18, CBT_SEV_HAZARD, "one op reads bytes another op of the batch writes")                \
    X(overlap_self, 19, CBT_SEV_HAZARD, "an op's source and destination overlap")                              \
    X(lochint_ignored, 20, CBT_SEV_WARNING,                                                                    \
      "a locHint on memory that is neither managed nor pageable: the driver ignores it")                       \
    X(lochint_invalid, 21, CBT_SEV_WARNING,                                                                    \
      "a locHint type outside the enum or a device id the system lacks (silently accepted)")                   \
    X(pageable_stream_order, 22, CBT_SEV_WARNING,                                                              \
      "a pageable host source copied with srcAccessOrder STREAM (the driver stages it synchronously)")         \
    X(during_api_call_device_source, 23, CBT_SEV_WARNING,                                                      \
      "DURING_API_CALL on a device-memory source, where it buys nothing")                                      \
    X(ops_not_read, 24, CBT_SEV_WARNING,                                                                       \
      "not every op of numOps was read: the rest lie past an op the driver rejects first")      \
    X(copy_array_null, 25, CBT_SEV_ERROR,                                                                      \
      "1D: dsts, srcs, sizes, attrs or attrsIdxs is NULL")                   \
    X(num_attrs_zero, 26, CBT_SEV_ERROR, "1D: numAttrs is 0 (every copy needs an attribute)")                  \
    X(num_attrs_above_count, 27, CBT_SEV_ERROR, "1D: numAttrs is larger than count")                          \
    X(attrs_idx_first_not_zero, 28, CBT_SEV_ERROR, "1D: attrsIdxs[0] is not 0")                               \
    X(attrs_idxs_not_start_indices, 29, CBT_SEV_ERROR,                                                         \
      "1D: attrsIdxs[k] is not the first copy attrs[k] applies to: the entries must increase strictly and "   \
      "stay below count (attrsIdxs holds numAttrs starting indices, not one entry per copy)")                  \
    X(attr_access_order_invalid, 30, CBT_SEV_ERROR,                                                            \
      "1D: an attribute's srcAccessOrder is not STREAM, DURING_API_CALL or ANY")                               \
    X(attr_flags_invalid, 31, CBT_SEV_ERROR,                                                                   \
      "1D: an attribute's flags hold a bit other than PREFER_OVERLAP_WITH_COMPUTE")                            \
    X(attr_lochint_invalid, 32, CBT_SEV_ERROR,                                                                 \
      "1D: an attribute's locHint has a type outside the enum or a device id the system lacks "               \
      "(the 1D call rejects it, whatever the memory)")                                                         \
    X(copy_size_zero, 33, CBT_SEV_ERROR, "1D: a copy's size is 0")                                            \
    X(stream_on_stack, 34, CBT_SEV_ERROR,                                                                      \
      "1D: the stream argument points into the calling thread's stack: a failIdx pointer where "              \
      "cuMemcpyBatchAsync_v2 takes its stream (12.8 arguments through a 13.0 pointer); the driver crashes")    \
    X(fail_idx_is_stream, 35, CBT_SEV_ERROR,                                                                   \
      "1D: failIdx is a stream handle (a special handle, the call's stream or that of an earlier batch): 13.0 " \
      "arguments through a 12.8 pointer; the driver writes into the stream and crashes")                     \
    X(refused_in_capture, 36, CBT_SEV_ERROR,                                                                  \
      "the stream was being captured into a graph: the driver refused the batch "                             \
      "(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and the capture went on without it, so the copy is not in "    \
      "the graph; make it outside the capture, or add it to the graph as a memcpy node")                     \
    X(unbatched_run, 37, CBT_SEV_ADVICE,                                                                       \
      "a run of batches of few copies on one stream and thread, close in time: one batch would pay the "      \
      "call's cost once")                                                                                      \
    X(tiny_copies, 38, CBT_SEV_ADVICE,                                                                         \
      "a batch of many tiny copies: the cost per copy outweighs the bytes it moves")                          \
    X(huge_batch, 39, CBT_SEV_ADVICE,                                                                          \
      "a batch of more copies than some drivers survive (one of 51,828 crashed a Blackwell machine)")         \
    X(overlap_flag_large_copy, 40, CBT_SEV_ADVICE,                                                             \
      "PREFER_OVERLAP_WITH_COMPUTE on a large copy: since CUDA 13.1 it forces the copy engines, which do not " \
      "reach the memory's bandwidth")                                                                          \
    X(any_order_device_source, 41, CBT_SEV_ADVICE,                                                             \
      "srcAccessOrder ANY on a device or managed source: the copy may read it before the work that writes "   \
      "it has finished")                                                                                       \
    X(deferred_host_source, 42, CBT_SEV_ADVICE,                                                                \
      "srcAccessOrder ANY on a host source: the read is deferred, so the memory must stay allocated and "     \
      "unchanged until the stream has passed the copy")                                                        \
    X(pageable_source, 43, CBT_SEV_ADVICE,                                                                     \
      "many bytes copied from pageable host memory: the driver stages them through pinned buffers")           \
    X(same_device_engine_copy, 44, CBT_SEV_ADVICE,                                                             \
      "a large device-to-device copy within one GPU in a batch: a copy engine may move it far slower than "   \
      "an SM copy")                                                                                            \
    X(low_bandwidth, 45, CBT_SEV_ADVICE,                                                                       \
      "a batch whose GPU time shows a bandwidth far below the peak measured for its direction and memory")

/*
 * X(name, "what to change"): the fix of each rule, in the order of
 * CBT_RULE_LIST (tests/unit/test_finding_words checks both lists agree).
 * What a finding says of its own values (which op, which operand, the
 * sizes) is cbt_finding_words() (validate.h); this is the advice after it.
 */
#define CBT_RULE_FIX_LIST(X)                                                                                   \
    X(num_ops_zero, "pass at least one op, or make no call when there is nothing to copy")                      \
    X(op_list_null, "pass the array of numOps CUDA_MEMCPY3D_BATCH_OP")                                        \
    X(flags_nonzero, "pass 0 as the batch's flags (each op has flags of its own)")                              \
    X(stream_null, "pass a stream you created, or CU_STREAM_PER_THREAD")                                       \
    X(stream_legacy, "pass a stream you created, or CU_STREAM_PER_THREAD")                                     \
    X(extent_zero, "give the extent's width, height and depth each at least 1 (a flat copy is N x 1 x 1), "     \
                   "or leave the op out")                                                                     \
    X(row_length_too_small, "set rowLength to 0 (rows packed) or to the row pitch in elements, at least the "   \
                            "width")                                                                          \
    X(layer_height_too_small, "set layerHeight to 0 (layers packed) or to the rows per layer, at least the "    \
                              "height")                                                                       \
    X(access_order_invalid, "set srcAccessOrder to CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, _DURING_API_CALL or "     \
                            "_ANY")                                                                           \
    X(op_flags_invalid, "set the op's flags to 0 or CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE")               \
    X(operand_type_invalid, "set the operand's type to CU_MEMCPY_OPERAND_TYPE_POINTER or _ARRAY")              \
    X(pointer_null, "pass the address of memory that holds the whole copy")                                    \
    X(pointer_unmapped, "pass device, managed or host memory that is allocated for the whole copy (not freed, " \
                        "not a stray address)")                                                               \
    X(array_null, "pass a CUarray made by cuArrayCreate or cuArray3DCreate")                                   \
    X(array_out_of_bounds, "make offset + extent fit the array, or make the array larger")                     \
    X(array_element_size_mismatch, "copy between arrays of one element size (format and channels), or copy "   \
                                   "through linear memory")                                                   \
    X(device_out_of_bounds, "shrink the extent or the pitch, or allocate more: the copy must end inside the "   \
                            "allocation")                                                                     \
    X(overlap_dst_dst, "give each op a destination of its own, or put the op that must land last in a later "  \
                       "batch")                                                                               \
    X(overlap_src_dst, "read the bytes in a batch before the one that writes them, or write somewhere else")    \
    X(overlap_self, "copy through a temporary buffer, or make the source and the destination apart")            \
    X(lochint_ignored, "leave the locHint zero (it applies to managed and pageable memory only), or drop it")    \
    X(lochint_invalid, "use a CUmemLocationType and, for DEVICE, an ordinal below the device count")            \
    X(pageable_stream_order, "pin the source (cuMemHostAlloc, cuMemHostRegister), or use srcAccessOrder "       \
                             "DURING_API_CALL or ANY when it may be read during the call")                     \
    X(during_api_call_device_source, "use srcAccessOrder STREAM (or ANY) for a device-memory source")           \
    X(ops_not_read, "correct the first op the driver rejects (its own finding says how); the ops after it "     \
                    "were not checked")                                                                       \
    X(copy_array_null, "pass arrays of count entries for dsts, srcs and sizes, and of numAttrs entries for "    \
                       "attrs and attrsIdxs")                                                                 \
    X(num_attrs_zero, "pass at least one attribute, with attrsIdxs[0] set to 0")                                    \
    X(num_attrs_above_count, "pass at most one attribute per copy (numAttrs at most count)")                        \
    X(attrs_idx_first_not_zero, "set attrsIdxs[0] to 0: attrs[0] applies from the first copy")                 \
    X(attrs_idxs_not_start_indices, "list in attrsIdxs the first copy of each attribute, increasing and below " \
                                    "count (one attribute for every copy: numAttrs 1, attrsIdxs {0})")        \
    X(attr_access_order_invalid, "set the attribute's srcAccessOrder to CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, "   \
                                 "_DURING_API_CALL or _ANY")                                                  \
    X(attr_flags_invalid, "set the attribute's flags to 0 or CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE")      \
    X(attr_lochint_invalid, "use a CUmemLocationType and, for DEVICE, an ordinal below the device count")      \
    X(copy_size_zero, "leave the copy out, or give its size in bytes")                                         \
    X(stream_on_stack, "call cuMemcpyBatchAsync_v2 with the CUDA 13.0 arguments (no failIdx), or call the "     \
                       "12.8 entry point for the 12.8 arguments")                                             \
    X(fail_idx_is_stream, "call the 12.8 entry point with failIdx (a size_t *) before the stream, or "         \
                          "cuMemcpyBatchAsync_v2 with the CUDA 13.0 arguments")                                \
    X(refused_in_capture, "make the copy outside the capture, or add it to the graph as a memcpy node")        \
    X(unbatched_run, "gather the copies of the run into one batch (one call with all their ops)")             \
    X(tiny_copies, "pack the tiny pieces into one contiguous buffer and copy that, or copy larger pieces")     \
    X(huge_batch, "split the batch into chunks of at most the advised number of copies")                      \
    X(overlap_flag_large_copy, "set PREFER_OVERLAP_WITH_COMPUTE only when every copy of the batch is small "  \
                               "(cuDF and RMM: at most 128 KiB)")                                             \
    X(any_order_device_source, "use srcAccessOrder STREAM unless the source is known to be complete when "    \
                               "the call is made")                                                            \
    X(deferred_host_source, "use srcAccessOrder DURING_API_CALL for a temporary host source, or keep it "     \
                            "alive until the stream has passed the copy")                                     \
    X(pageable_source, "copy from pinned memory (cuMemHostAlloc, or cuMemHostRegister on the buffer)")         \
    X(same_device_engine_copy, "copy large same-GPU buffers with cuMemcpyDtoDAsync or a copy kernel, not "   \
                               "in a batch")                                                                  \
    X(low_bandwidth, "look at the batch's other advice (pinned memory, larger copies, no overlap flag), and at "\
                     "what else the GPU ran at the time")

/* The version of the rule catalogue above: recorded in every trace, raised
 * whenever a rule of the validator is added or its meaning changes (the
 * reader compares the shim's findings with its own only at one version).
 * The advice rules (cbt_rule_is_advice) are the tool's, never the
 * validator's: adding one leaves the version as it is. */
#define CBT_RULES_VERSION 4

#define CBT_ENUM_ENTRY_(ID, val, name) ID = val,
enum cbt_api { CBT_API_LIST(CBT_ENUM_ENTRY_) CBT_API_COUNT_ = 14 };
enum cbt_door { CBT_DOOR_LIST(CBT_ENUM_ENTRY_) };
enum cbt_outcome { CBT_OUTCOME_LIST(CBT_ENUM_ENTRY_) };
enum cbt_operand_kind { CBT_OPERAND_LIST(CBT_ENUM_ENTRY_) };
enum cbt_access_order { CBT_ACCESS_ORDER_LIST(CBT_ENUM_ENTRY_) };
enum cbt_location { CBT_LOCATION_LIST(CBT_ENUM_ENTRY_) };
enum cbt_memkind { CBT_MEMKIND_LIST(CBT_ENUM_ENTRY_) };
enum cbt_capture { CBT_CAPTURE_LIST(CBT_ENUM_ENTRY_) };
enum cbt_side { CBT_SIDE_LIST(CBT_ENUM_ENTRY_) };
enum cbt_severity { CBT_SEVERITY_LIST(CBT_ENUM_ENTRY_) };
enum cbt_curesult { CBT_CURESULT_LIST(CBT_ENUM_ENTRY_) };
enum cbt_gpu_status { CBT_GPU_STATUS_LIST(CBT_ENUM_ENTRY_) };
#undef CBT_ENUM_ENTRY_

#define CBT_RULE_ENUM_ENTRY_(name, val, sev, text) CBT_RULE_##name = val,
enum cbt_rule { CBT_RULE_LIST(CBT_RULE_ENUM_ENTRY_) CBT_RULE_COUNT };
#undef CBT_RULE_ENUM_ENTRY_

struct cbt_rule_info {
    const char *name;
    enum cbt_severity severity;
    const char *text;
};

/*
 * Name lookups for the enumerations above; NULL for a value outside the
 * list.  Defined as static inline so the shim, the tool and tests share
 * them without a library.
 */
#define CBT_NAME_CASE_(ID, val, name) \
    case val:                         \
        return name;
static inline const char *cbt_api_name(unsigned v) { switch (v) { CBT_API_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_door_name(unsigned v) { switch (v) { CBT_DOOR_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_outcome_name(unsigned v) { switch (v) { CBT_OUTCOME_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_operand_name(unsigned v) { switch (v) { CBT_OPERAND_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_access_order_name(unsigned v) { switch (v) { CBT_ACCESS_ORDER_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_location_name(unsigned v) { switch (v) { CBT_LOCATION_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_memkind_name(unsigned v) { switch (v) { CBT_MEMKIND_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_capture_name(unsigned v) { switch (v) { CBT_CAPTURE_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_side_name(unsigned v) { switch (v) { CBT_SIDE_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_severity_name(unsigned v) { switch (v) { CBT_SEVERITY_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_curesult_name(unsigned v) { switch (v) { CBT_CURESULT_LIST(CBT_NAME_CASE_) } return (const char *)0; }
static inline const char *cbt_gpu_status_name(unsigned v) { switch (v) { CBT_GPU_STATUS_LIST(CBT_NAME_CASE_) } return (const char *)0; }
#undef CBT_NAME_CASE_

/* The 1D batch (cuMemcpyBatchAsync) and its single-copy form, the 12.8
 * ABIs (with failIdx), the single-op forms, the per-thread-stream variants. */
static inline int cbt_api_is_1d(unsigned v)
{
    return (v >= CBT_API_1D_V2 && v <= CBT_API_1D_V1_PTSZ) || v == CBT_API_1D_ONE || v == CBT_API_1D_ONE_PTSZ;
}
static inline int cbt_api_is_one(unsigned v) { return v >= CBT_API_3D_ONE && v <= CBT_API_1D_ONE_PTSZ; }
static inline int cbt_api_is_fabric(unsigned v) { return v == CBT_API_FABRIC || v == CBT_API_FABRIC_PTSZ; }
static inline int cbt_api_has_fail_idx(unsigned v)
{
    return v == CBT_API_V1 || v == CBT_API_V1_PTSZ || v == CBT_API_1D_V1 || v == CBT_API_1D_V1_PTSZ;
}
static inline int cbt_api_is_ptsz(unsigned v)
{
    return v == CBT_API_V2_PTSZ || v == CBT_API_V1_PTSZ || v == CBT_API_1D_V2_PTSZ || v == CBT_API_1D_V1_PTSZ ||
           v == CBT_API_3D_ONE_PTSZ || v == CBT_API_1D_ONE_PTSZ || v == CBT_API_FABRIC_PTSZ;
}
/* Rules about one attribute of a 1D batch: the finding's other_op is its index k. */
static inline int cbt_rule_is_attr(unsigned r) { return r >= 28 && r <= 32; }
/* Advice (severity advice): what the tool's analysis of many batches says
 * could be changed, and what it would buy; never made by the validator. */
static inline int cbt_rule_is_advice(unsigned r) { return r >= 37 && r <= 45; }

#define CBT_RULE_INFO_ENTRY_(name, val, sev, text) [val] = {#name, sev, text},
static const struct cbt_rule_info cbt_rules[CBT_RULE_COUNT] = {CBT_RULE_LIST(CBT_RULE_INFO_ENTRY_)};
#undef CBT_RULE_INFO_ENTRY_

#define CBT_RULE_FIX_ENTRY_(name, fix) [CBT_RULE_##name] = fix,
static const char *const cbt_rule_fixes[CBT_RULE_COUNT] = {CBT_RULE_FIX_LIST(CBT_RULE_FIX_ENTRY_)};
#undef CBT_RULE_FIX_ENTRY_

/* What to change for a finding of rule v (CBT_RULE_FIX_LIST); NULL for a rule outside the catalogue. */
static inline const char *cbt_rule_fix(unsigned v) { return v < CBT_RULE_COUNT ? cbt_rule_fixes[v] : (const char *)0; }

static inline const struct cbt_rule_info *cbt_rule(unsigned v)
{
    return v < CBT_RULE_COUNT ? &cbt_rules[v] : (const struct cbt_rule_info *)0;
}

#endif /* CUBATCHTRACE_CATALOG_H */
