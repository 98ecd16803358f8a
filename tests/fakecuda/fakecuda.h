/* SPDX-License-Identifier: MIT */
/*
 * fakecuda: test-only introspection of the fake libcuda.so.1.
 *
 * The fake driver exports these next to the CUDA driver API so that tests
 * can tell whether a batch call actually reached "the driver" (for instance
 * that the shim's strict mode refused a batch instead of forwarding it).
 * Resolve them with dlsym(): a program that links them directly would not
 * run against a real libcuda.
 */
#ifndef CBT_TESTS_FAKECUDA_H
#define CBT_TESTS_FAKECUDA_H

/* Calls that reached any of the four cuMemcpy3DBatchAsync or the four
 * cuMemcpyBatchAsync entry points, rejected ones included, since load or the
 * last fakecuda_reset_counts(). */
unsigned long long fakecuda_batch_calls(void);
void fakecuda_reset_counts(void);

/* Calls of cuPointerGetAttributes and cuPointerGetAttribute since load or
 * the last fakecuda_reset_counts(). */
unsigned long long fakecuda_pointer_queries(void);

/* Calls of cuThreadExchangeStreamCaptureMode since load, on every thread. */
unsigned long long fakecuda_mode_exchanges(void);
unsigned long long fakecuda_thread_mode_exchanges(void); /* the calling thread's alone */

/* Calls of cuCtxPushCurrent since load, on every thread. */
unsigned long long fakecuda_ctx_pushes(void);

/* The next allocation of any kind (cuMemAlloc, cuMemAllocHost, cuMemHostAlloc,
 * cuMemAllocManaged) is placed at addr instead of the double's heap: memory
 * the caller owns, keeps mapped, and that is not freed with the allocation.
 * Lets a test reuse one address for memory of several kinds. */
void fakecuda_place_next_alloc(void *addr);

typedef unsigned long long (*fakecuda_batch_calls_fn)(void);
typedef void (*fakecuda_reset_counts_fn)(void);
typedef unsigned long long (*fakecuda_pointer_queries_fn)(void);
typedef void (*fakecuda_place_next_alloc_fn)(void *);
typedef unsigned long long (*fakecuda_mode_exchanges_fn)(void);
typedef unsigned long long (*fakecuda_ctx_pushes_fn)(void);

#endif
