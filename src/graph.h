/* SPDX-License-Identifier: MIT */
/* Batch copies inside CUDA graphs (src/graph.c). */
#ifndef CBT_SRC_GRAPH_H
#define CBT_SRC_GRAPH_H

#include <stdbool.h>

#include <stdint.h>

#include <cuda.h>

#include <cubatchtrace/catalog.h>

#include "memwrap.h"

/* The shim's wrapper for a graph function the driver handed out (dlsym,
 * cuGetProcAddress) by its address; NULL when p is none of them. */
void *cbt_graph_wrap(void *p);

/* Is `name` one of the graph functions the shim wraps? */
bool cbt_graph_name(const char *name);

/* May a call that succeeded have been taken into a capture: has the program
 * begun a stream capture (memwrap.c sees every function that begins one,
 * through every door; GPU time relies on the same) and does the driver have
 * batch nodes (CUDA 13.5: it may take a batch call on a capturing stream
 * into the graph and answer CUDA_SUCCESS)?  Asked after every batch that
 * succeeds: one relaxed load until a capture begins, two after. */
extern int cbt_graph_capture_state __attribute__((visibility("hidden"))); /* 0 not known, 1 no, 2 yes */
bool cbt_graph_captures_batches_slow(void);
static inline bool cbt_graph_captures_batches(void)
{
    if (__builtin_expect(!__atomic_load_n(&cbt_capture_begun, __ATOMIC_RELAXED), 1))
        return false;
    int s = __atomic_load_n(&cbt_graph_capture_state, __ATOMIC_RELAXED);
    return __builtin_expect(s != 0, 1) ? s == 2 : cbt_graph_captures_batches_slow();
}

/* A batch the driver took into the graph of stream s's capture (result 0,
 * capture ACTIVE), before its record is written: the graph it went into
 * said, and the node it became (the capture's one dependency now) known by
 * the batch's id, which instantiation then names it by. */
/* In a forked child: the lock made the child's, the graphs forgotten (the
 * child's driver state is not the parent's). */
void cbt_graph_after_fork_child(void);

void cbt_graph_captured(CUstream s, int ptsz, uint64_t batch_id, void *caller);

#endif
