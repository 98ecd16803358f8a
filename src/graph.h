/* SPDX-License-Identifier: MIT */
/* Batch copies inside CUDA graphs: the graph doors (src/graph.c). */
#ifndef CBT_SRC_GRAPH_H
#define CBT_SRC_GRAPH_H

#include <stdbool.h>

/* The shim's wrapper for a graph function the driver handed out (dlsym,
 * cuGetProcAddress) by its address; NULL when p is none of them. */
void *cbt_graph_wrap(void *p);

/* Is `name` one of the graph functions the shim wraps? */
bool cbt_graph_name(const char *name);

#endif
