/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): naming a caller address from the
 * lttng_ust_statedump:bin_info events and the ELF symbols of the objects
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
/* "libfoo.so+0x1234 (func+0x10)" or "0x7f..." when unknown; returns buf */
const char *cbt_objmap_name(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, char *buf,
                            size_t len);

#endif
