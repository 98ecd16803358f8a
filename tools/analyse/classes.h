/* SPDX-License-Identifier: MIT */
/*
 * How the aggregate classes ops and batches (header only): directions,
 * memory classes, power-of-two bins, and the sizes of its fixed tables.
 * The op tables (agg.c) and the GPU tables (agg_gpu.c) share them.
 */
#ifndef CBT_CLASSES_H
#define CBT_CLASSES_H

#include <stdint.h>

#include <cubatchtrace/catalog.h>

enum { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_HTOH, DIR_HTOA, DIR_ATOH, DIR_DTOA, DIR_ATOD, DIR_ATOA, DIR_PEER, DIR_UNKNOWN,
       DIR_COUNT };
/* The directions' names (the JSON's by_direction rows, export's op.direction). */
static inline const char *cbt_direction_name(int dir)
{
    static const char *const names[DIR_COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH", "HtoA", "AtoH",
                                                 "DtoA", "AtoD", "AtoA", "peer", "unknown"};
    return dir >= 0 && dir < DIR_COUNT ? names[dir] : "unknown";
}

/* The class of an operand's memory: 'D' device or managed, 'H' host (pinned
 * or pageable), 'A' array; 0 unknown. */
static inline int cbt_mem_class(uint8_t mem, uint8_t type)
{
    switch (mem) {
    case CBT_MEM_DEVICE:
    case CBT_MEM_MANAGED: return 'D';
    case CBT_MEM_HOST_PINNED:
    case CBT_MEM_HOST_PAGEABLE: return 'H';
    case CBT_MEM_ARRAY: return 'A';
    default: return type == CBT_OPERAND_ARRAY ? 'A' : 0;
    }
}

/* The direction (DIR_*) of a copy from memory class s to d; D to D is peer
 * when both devices are known (>= 0) and differ. */
static inline int cbt_direction(int s, int d, int32_t sdev, int32_t ddev)
{
    switch (s << 8 | d) {
    case 'H' << 8 | 'D': return DIR_HTOD;
    case 'D' << 8 | 'H': return DIR_DTOH;
    case 'D' << 8 | 'D': return sdev >= 0 && ddev >= 0 && sdev != ddev ? DIR_PEER : DIR_DTOD;
    case 'H' << 8 | 'H': return DIR_HTOH;
    case 'H' << 8 | 'A': return DIR_HTOA;
    case 'A' << 8 | 'H': return DIR_ATOH;
    case 'D' << 8 | 'A': return DIR_DTOA;
    case 'A' << 8 | 'D': return DIR_ATOD;
    case 'A' << 8 | 'A': return DIR_ATOA;
    default: return DIR_UNKNOWN;
    }
}

/* The power-of-two bin of v: 0 for 0, k+1 for [2^k, 2^(k+1)). */
static inline unsigned cbt_hist_bin(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0u; }

#define NKIND 8   /* the 7 memory kinds + out of range */
#define NORDER 5  /* the 4 access orders + out of range */
#define NAPI (CBT_API_COUNT_ + 1)
#define NDOOR 4
#define NHIST 66  /* 0, then [2^k, 2^(k+1)) for k = 0..63 (index k+1), plus spare */
#define NDEV 64   /* rows by (host, device): at most this many, then "other" */

/* Bytes by device: one row per (host, device ordinal) of a device or managed
 * pointer operand, at most NDEV rows, then "other"; a negative ordinal goes
 * to "unknown". */
struct devrow {
    uint32_t host;
    int32_t dev;
    uint64_t ops_out, bytes_out, ops_in, bytes_in;
    uint64_t peer_ops_out, peer_bytes_out, peer_ops_in, peer_bytes_in;
};

#endif
