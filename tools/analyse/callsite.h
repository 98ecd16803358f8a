/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): naming a caller address from the
 * lttng_ust_statedump events (which object was loaded where, its build id)
 * and the object's debug information, read with elfutils' libdwfl
 * (callsite.c).
 */
#ifndef CBT_CALLSITE_H
#define CBT_CALLSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cbt_objmap;
struct cbt_objmap *cbt_objmap_new(void);
void cbt_objmap_free(struct cbt_objmap *m);
void cbt_objmap_add(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, uint64_t memsz,
                    const char *path, bool is_pic);
/* The build id the statedump recorded for the object loaded at baddr. */
void cbt_objmap_build_id(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, const uint8_t *id,
                         size_t len);

/* What is known of a call site; the strings are "" when unknown. */
struct cbt_callsite {
    uint64_t addr;
    const char *object;       /* the object's path as the statedump recorded it */
    uint64_t offset;          /* addr - the object's base */
    char function[256];       /* demangled */
    uint64_t function_offset; /* addr - the function's start; UINT64_MAX: unknown (an inlined function) */
    char file[512];           /* source file of the call, from DWARF line information */
    unsigned line;            /* 0: unknown */
};
void cbt_callsite_lookup(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, struct cbt_callsite *cs);
/* "demo.c:72 (batch, demo+0x2600)" where debug information names the line,
 * else "demo+0x2600 (batch+0x20)", "demo+0x2600" or "0x55d0c0a00600"; returns buf. */
const char *cbt_callsite_format(const struct cbt_callsite *cs, char *buf, size_t len);
/* lookup + format */
const char *cbt_objmap_name(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, char *buf,
                            size_t len);

/*
 * The short stack (cubatchtrace:stack, run --stack N): stack[0] the batch's
 * caller, then its callers.  --skip-frames LIB (cbt_callsite_skip, once per
 * library, before reading): a batch is placed at the first frame of its
 * stack outside those libraries and outside libcubatchtrace, libcuda and
 * libcudart (a name matches with or without a version: libfoo.so names
 * libfoo.so.1); without a stack, or with no such frame, at its caller.
 */
void cbt_callsite_skip(const char *lib);
bool cbt_callsite_skipping(void);
uint64_t cbt_callsite_pick(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t caller, const uint64_t *stack,
                           unsigned n);
/* The callers beyond the direct one (stack[1..n)), each named as
 * cbt_objmap_name names it, joined by " <- "; "" when none.  Returns buf. */
const char *cbt_callsite_stack(struct cbt_objmap *m, uint32_t host, int64_t vpid, const uint64_t *stack, unsigned n,
                               char *buf, size_t len);

#endif
