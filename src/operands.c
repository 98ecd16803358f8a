/* SPDX-License-Identifier: MIT */
/*
 * What the shim learns about each operand from the driver: the memory kind
 * and device of a pointer (cuPointerGetAttributes), the bounds of its
 * allocation (its RANGE attributes, else cuMemGetAddressRange), and for a
 * CUDA array its size and element size (cuArray3DGetDescriptor).
 *
 * Caching: what is learned is kept in a per-thread cache, across batches,
 * for as long as no memory-management call can have changed it.  The shim
 * wraps every driver function that creates, destroys or changes the kind of
 * a mapping or a CUarray (memwrap.c), through every door; each call logs
 * what it may have changed (an address range, an array handle, or
 * everything) and moves cbt_mem_generation on.  A batch that reads another
 * generation than its cache's first reads the changes logged since and
 * drops the entries and recents they touch (cbt_cache_catch_up).  It holds
 *   - CUDA allocations [base, base+size) with their kind, device and bounds;
 *   - CUarray handles with their descriptor (a name space of their own);
 *   - pageable host memory, as ranges of whole pages (adjacent pages merge,
 *     so a large malloc'd buffer is one entry).
 * An unmapped address is never kept: it may be mapped by the next batch.
 *
 * What no CUDA call announces: the program may munmap (or free back to the
 * system) pageable memory between batches, and a cached page would still
 * read as pageable.  In strict mode, which exists to refuse the unmapped
 * pointers the driver crashes on, a pageable hit is confirmed readable
 * (once per page and batch); in observe mode it is trusted, and such a
 * pointer is recorded as host_pageable instead of unmapped.
 *
 * Within one batch the answers stay true whatever happens elsewhere: while
 * the call runs the program cannot free or re-register its operands without
 * racing its own copy.  So when the cross-batch cache is off (memwrap.c
 * turns it off for good when cuGetProcAddress hands out a memory function
 * the shim cannot wrap, or when this library was not preloaded), the cache
 * is emptied at every batch and serves that batch only, as before.
 *
 * Bounded: at most CACHE_MAX address ranges and CACHE_MAX arrays; when one
 * side is full it is emptied.  Lookups are a binary search (after a check of
 * the entry hit last); no locks: each thread has its own, freed at exit.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "operands.h"
#include "memwrap.h"
#include "oplist.h"
#include "record.h"
#include "settings.h"

#define CACHE_MAX 4096

void cbt_cache_release(struct cbt_cache *c)
{
    free(c->addr.key);
    free(c->addr.info);
    free(c->arrays.key);
    free(c->arrays.info);
    memset(c, 0, sizeof *c);
}

/* Index of the first entry whose hi > key (the only one that can hold key). */
static uint32_t side_search(const struct cbt_cache_side *s, uint64_t key)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->key[mid][1] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const struct cbt_operand_info *cache_find(struct cbt_cache_side *s, uint64_t key)
{
    uint32_t i = s->last;
    if (i < s->n && key >= s->key[i][0] && key < s->key[i][1])
        return &s->info[i]; /* a hit is s->key[s->last] */
    i = s->last2;
    if (i < s->n && key >= s->key[i][0] && key < s->key[i][1]) {
        s->last2 = s->last;
        s->last = i;
        return &s->info[i];
    }
    i = side_search(s, key);
    if (i < s->n && key >= s->key[i][0]) {
        s->last2 = s->last;
        s->last = i;
        return &s->info[i];
    }
    return NULL;
}

static bool side_reserve(struct cbt_cache_side *s)
{
    if (s->n < s->cap)
        return true;
    if (s->cap >= CACHE_MAX) {
        s->n = s->last = s->last2 = 0; /* full: start over */
        return true;
    }
    uint32_t cap = s->cap ? s->cap * 2 : 32;
    void *k = realloc(s->key, cap * sizeof *s->key);
    if (!k)
        return false;
    s->key = k;
    void *in = realloc(s->info, cap * sizeof *s->info);
    if (!in)
        return false;
    s->info = in;
    s->cap = cap;
    return true;
}

/* Remove entries [i, j). */
static void side_remove(struct cbt_cache_side *s, uint32_t i, uint32_t j)
{
    memmove(&s->key[i], &s->key[j], (s->n - j) * sizeof *s->key);
    memmove(&s->info[i], &s->info[j], (s->n - j) * sizeof *s->info);
    s->n -= j - i;
    s->last = s->last2 = 0;
}

static bool is_pageable(const struct cbt_operand_info *o) { return o->kind == CBT_MEM_HOST_PAGEABLE; }

/* Keep [lo, hi) -> info.  Entries it overlaps are dropped (the newer answer
 * wins); a pageable run merges with pageable neighbours it touches. */
static void cache_put(struct cbt_cache_side *s, uint64_t lo, uint64_t hi, const struct cbt_operand_info *info)
{
    if (lo >= hi || !side_reserve(s))
        return;
    uint32_t i = side_search(s, lo), j = i;
    while (j < s->n && s->key[j][0] < hi)
        j++;
    if (j > i)
        side_remove(s, i, j);
    if (is_pageable(info)) {
        bool left = i > 0 && s->key[i - 1][1] == lo && is_pageable(&s->info[i - 1]);
        bool right = i < s->n && s->key[i][0] == hi && is_pageable(&s->info[i]);
        if (left && right) {
            s->key[i - 1][1] = s->key[i][1];
            side_remove(s, i, i + 1);
            return;
        }
        if (left) {
            s->key[i - 1][1] = hi;
            return;
        }
        if (right) {
            s->key[i][0] = lo;
            return;
        }
    }
    memmove(&s->key[i + 1], &s->key[i], (s->n - i) * sizeof *s->key);
    memmove(&s->info[i + 1], &s->info[i], (s->n - i) * sizeof *s->info);
    s->key[i][0] = lo;
    s->key[i][1] = hi;
    s->info[i] = *info;
    s->n++;
}

/* Does any entry overlap [lo, hi)? */
static bool cache_overlaps(const struct cbt_cache_side *s, uint64_t lo, uint64_t hi)
{
    uint32_t i = side_search(s, lo);
    return i < s->n && s->key[i][0] < hi;
}

static void cache_clear(struct cbt_cache *c)
{
    c->recent[0].len = c->recent[1].len = 0;
    for (int i = 0; i < CBT_MORE_RECENTS; i++)
        c->more[i].len = 0;
    for (int i = 0; i < CBT_MORE_ARRAYS; i++)
        c->array_more[i].len = 0;
    c->addr.n = c->addr.last = c->addr.last2 = 0;
    c->arrays.n = c->arrays.last = c->arrays.last2 = 0;
    c->array_recent.len = 0;
}

/* Drops the entries of s that overlap [lo, hi). */
static void side_forget(struct cbt_cache_side *s, uint64_t lo, uint64_t hi)
{
    uint32_t i = side_search(s, lo), j = i;
    while (j < s->n && s->key[j][0] < hi)
        j++;
    if (j > i)
        side_remove(s, i, j);
}
/* Drops the recents r[0, n) that overlap [lo, hi). */
static void recents_forget(struct cbt_recent *r, int n, uint64_t lo, uint64_t hi)
{
    for (int i = 0; i < n; i++)
        if (r[i].len && (lo - r[i].lo < r[i].len || r[i].lo - lo < hi - lo)) /* lo in it, or it starts in [lo, hi) */
            r[i].len = 0;
}

void cbt_cache_catch_up(struct cbt_cache *c, uint64_t g)
{
    struct cbt_mem_change ch;
    int got;
    while ((got = cbt_log_next(&cbt_mem_log, &c->log_pos, &ch)) > 0) {
        if (ch.what == CBT_MEM_CHANGE_ARRAY) {
            side_forget(&c->arrays, ch.lo, ch.hi);
            recents_forget(&c->array_recent, 1, ch.lo, ch.hi);
            recents_forget(c->array_more, CBT_MORE_ARRAYS, ch.lo, ch.hi);
        } else {
            side_forget(&c->addr, ch.lo, ch.hi);
            recents_forget(c->recent, 2, ch.lo, ch.hi);
            recents_forget(c->more, CBT_MORE_RECENTS, ch.lo, ch.hi);
        }
    }
    if (got < 0)
        cache_clear(c);
    c->generation = g;
}

static uint32_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    /* The multi-channel normalized formats carry their channels in the format. */
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
        return 1;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
        return 2;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
        return 4;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
        return 8;
    default:
        return 0; /* block-compressed and YUV formats: unknown here */
    }
}

static bool has_channels_in_format(CUarray_format f) { return f >= CU_AD_FORMAT_UNORM_INT8X1 && f <= CU_AD_FORMAT_SNORM_INT16X4; }

/* Can the page holding `p` be read in this process?  Unmapped, or mapped
 * PROT_NONE (a guard page, reserved address space), the driver crashes on
 * it all the same: the same test as the footprint check (oplist.c). */
static bool host_mapped(uint64_t p) { return cbt_range_readable(p, p); }

#define NO_PAGE 1 /* never a page address */

static void learn_pointer(const struct cbt_real *real, uint64_t p, struct cbt_operand_info *o, struct cbt_cache *c,
                          uint64_t page, bool strict)
{
    uint64_t pg = p & ~(page - 1);
    const struct cbt_operand_info *hit = c ? cache_find(&c->addr, p) : NULL;
    if (hit) {
        if (!strict || !is_pageable(hit) || pg == c->confirmed_page) {
            *o = *hit;
            return;
        }
        if (host_mapped(p)) {
            c->confirmed_page = pg;
            *o = *hit;
            return;
        }
        /* Unmapped since it was learned, with no CUDA call to say so. */
        cache_clear(c);
    }
    unsigned int memtype = 0;
    unsigned int managed = 0; /* CU_POINTER_ATTRIBUTE_IS_MANAGED is a bool; drivers write an int-sized value */
    int ordinal = -1;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memtype, &managed, &ordinal, &start, &size};
    CUresult r = real->pointer_get_attributes
                     ? real->pointer_get_attributes(5, attrs, data, (CUdeviceptr)p)
                     : CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS || memtype == 0) {
        /* Not CUDA memory: plain host memory, or nothing at all (never kept). */
        o->kind = host_mapped(p) ? CBT_MEM_HOST_PAGEABLE : CBT_MEM_UNMAPPED;
        o->device = -1;
        if (c && o->kind == CBT_MEM_HOST_PAGEABLE) {
            c->confirmed_page = pg;
            /* A page that also holds CUDA memory is not pageable as a whole. */
            if (!cache_overlaps(&c->addr, pg, pg + page))
                cache_put(&c->addr, pg, pg + page, o);
        }
        return;
    }
    if (managed & 0xff)
        o->kind = CBT_MEM_MANAGED;
    else if (memtype == CU_MEMORYTYPE_HOST)
        o->kind = CBT_MEM_HOST_PINNED;
    else
        o->kind = CBT_MEM_DEVICE;
    o->device = o->kind == CBT_MEM_HOST_PINNED ? -1 : ordinal;
    if (size == 0 && real->mem_get_address_range) {
        CUdeviceptr b;
        size_t s;
        if (real->mem_get_address_range(&b, &s, (CUdeviceptr)p) == CUDA_SUCCESS) {
            start = b;
            size = s;
        }
    }
    o->alloc_base = start;
    o->alloc_size = size;
    if (c && size && p >= start && p - start < size)
        cache_put(&c->addr, start, start + size, o);
}

static void learn_array(const struct cbt_real *real, CUarray a, struct cbt_operand_info *o, struct cbt_cache *c)
{
    uint64_t key = (uint64_t)(uintptr_t)a;
    const struct cbt_operand_info *hit = c ? cache_find(&c->arrays, key) : NULL;
    if (hit) {
        *o = *hit;
        return;
    }
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (!real->array3d_get_descriptor || real->array3d_get_descriptor(&d, a) != CUDA_SUCCESS)
        return; /* unknown: the array rules stay silent */
    o->kind = CBT_MEM_ARRAY;
    o->device = -1;
    o->array_width = d.Width;
    o->array_height = d.Height;
    o->array_depth = d.Depth;
    uint32_t fb = format_bytes(d.Format);
    o->elem_size = has_channels_in_format(d.Format) ? fb : fb * d.NumChannels;
    if (c && key != UINT64_MAX)
        cache_put(&c->arrays, key, key + 1, o);
}

static void learn(const struct cbt_real *real, const CUmemcpy3DOperand *op, struct cbt_operand_info *o,
                  struct cbt_cache *c, uint64_t page, bool strict)
{
    *o = (struct cbt_operand_info){.device = -1};
    if (op->type == CU_MEMCPY_OPERAND_TYPE_POINTER && op->op.ptr.ptr)
        learn_pointer(real, (uint64_t)op->op.ptr.ptr, o, c, page, strict);
    else if (op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && op->op.array.array)
        learn_array(real, op->op.array.array, o, c);
}

/* The calling thread's cache c (NULL: none), brought to the current generation
 * (emptied at every batch when the cross-batch cache is off). */
static struct cbt_cache *cache_for_batch(struct cbt_cache *c, uint64_t *page, bool *strict)
{
    *page = cbt_page_size();
    *strict = cbt_config()->mode == CBT_MODE_STRICT;
    /* Without memory for a cache, every operand is asked about. */
    if (c) {
        /* Read before any question is asked: a change under way moves it on again. */
        uint64_t g = __atomic_load_n(&cbt_mem_generation, __ATOMIC_ACQUIRE);
        if (cbt_unlikely(!cbt_kind_cache_enabled())) {
            cache_clear(c);
            c->generation = g;
        } else if (g != c->generation) {
            cbt_cache_catch_up(c, g);
        }
        c->confirmed_page = NO_PAGE;
    }
    return c;
}

/* An operand's info: on a cache hit the cached entry itself (no copy), else
 * `tmp`, filled by learn(); *changed when the cache may have moved. */
static inline const struct cbt_operand_info *learn_ref(const struct cbt_real *real, const CUmemcpy3DOperand *op,
                                                       struct cbt_operand_info *tmp, struct cbt_cache *c,
                                                       uint64_t page, bool strict, bool *changed)
{
    if (c && !strict) {
        const struct cbt_operand_info *hit = NULL;
        if (op->type == CU_MEMCPY_OPERAND_TYPE_POINTER && op->op.ptr.ptr)
            hit = cache_find(&c->addr, (uint64_t)op->op.ptr.ptr);
        else if (op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && op->op.array.array)
            hit = cache_find(&c->arrays, (uint64_t)(uintptr_t)op->op.array.array);
        if (hit)
            return hit;
    }
    *changed = true;
    learn(real, op, tmp, c, page, strict);
    return tmp;
}

/*
 * The refs of a batch: for each operand, its index in the thread's
 * dictionary (src/record.c).  Most operands lie in one of the last two
 * address ranges met (a CUDA allocation, or a run of pageable pages) or are
 * the last CUDA array met: that range's cache entry is the one the cache
 * would find (entries never overlap), and its index is known; the range and
 * the index are kept by value (they stay true for the whole batch: an entry
 * a batch refers to is not reused before it is written), so that check is a
 * subtraction and a compare.  The others are learned (the cache, else the
 * driver) and looked up in the dictionary.  *risky: an operand is unmapped
 * memory, which the driver may crash on.  Strict mode keeps no recents: its
 * pageable hits are confirmed each batch.
 */
struct learn_ctx {
    const struct cbt_real *real;
    struct cbt_cache *c;
    uint64_t page;
    bool strict;
    struct cbt_dict *d;
    struct cbt_recent r[2], ra; /* pointer ranges; the last CUarray (lo: its handle, len 1) */
    bool risky;
};

static __attribute__((noinline)) uint16_t ref_slow(struct learn_ctx *x, const CUmemcpy3DOperand *op)
{
    struct cbt_operand_info tmp;
    bool changed = false;
    const struct cbt_operand_info *p = learn_ref(x->real, op, &tmp, x->c, x->page, x->strict, &changed);
    if (cbt_unlikely(p->kind == CBT_MEM_UNMAPPED))
        x->risky = true;
    uint16_t r = cbt_dict_ref(x->d, p);
    if (x->strict || p == &tmp || r == CBT_REF_UNKNOWN)
        return r;
    /* a cache hit: the entry's range (cache_find left it `last`) is a recent */
    bool array = op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
    const struct cbt_cache_side *s = array ? &x->c->arrays : &x->c->addr;
    struct cbt_recent got = {.lo = s->key[s->last][0], .len = s->key[s->last][1] - s->key[s->last][0], .ref = r,
                         .serial = cbt_dict_serial(x->d, r)};
    if (array) {
        x->ra = got;
    } else {
        x->r[1] = x->r[0];
        x->r[0] = got;
    }
    return r;
}

static inline uint16_t ref_of(struct learn_ctx *x, const CUmemcpy3DOperand *op)
{
    if (cbt_likely(op->type == CU_MEMCPY_OPERAND_TYPE_POINTER)) {
        uint64_t a = (uint64_t)op->op.ptr.ptr;
        if (a - x->r[0].lo < x->r[0].len)
            return x->r[0].ref;
        if (a - x->r[1].lo < x->r[1].len)
            return x->r[1].ref;
    } else if (op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && x->ra.len &&
               (uint64_t)(uintptr_t)op->op.array.array == x->ra.lo) {
        return x->ra.ref;
    }
    return ref_slow(x, op);
}

/* The recents of the thread's previous batch, while the cache kept them (no
 * memory-management call since) and the dictionary still holds their entries. */
static void recents_begin(struct learn_ctx *x, struct cbt_cache *c)
{
    x->c = cache_for_batch(c, &x->page, &x->strict);
    if (!x->c || x->strict)
        return;
    for (int i = 0; i < 2; i++)
        if (x->c->recent[i].len && cbt_dict_keep(x->d, x->c->recent[i].ref, x->c->recent[i].serial))
            x->r[i] = x->c->recent[i];
    if (x->c->array_recent.len && cbt_dict_keep(x->d, x->c->array_recent.ref, x->c->array_recent.serial))
        x->ra = x->c->array_recent;
}

/* The batch's ranges become the recents (recents.c). */
static void recents_end(const struct learn_ctx *x)
{
    if (x->c && !x->strict)
        cbt_recents_update(x->c, x->d, x->r, &x->ra);
}

void cbt_learn_refs(const struct cbt_real *real, struct cbt_cache *c, struct cbt_dict *d, size_t n,
                    const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs, bool *risky)
{
    struct learn_ctx x = {.real = real, .d = d};
    recents_begin(&x, c);
    for (size_t i = 0; i < n; i++) {
        refs[2 * i] = ref_of(&x, &ops[i].src);
        refs[2 * i + 1] = ref_of(&x, &ops[i].dst);
    }
    recents_end(&x);
    *risky |= x.risky;
}

void cbt_learn_refs1d(const struct cbt_real *real, struct cbt_cache *c, struct cbt_dict *d, size_t n,
                      const CUdeviceptr *dsts, const CUdeviceptr *srcs, uint16_t *refs, bool *risky)
{
    struct learn_ctx x = {.real = real, .d = d};
    recents_begin(&x, c);
    CUmemcpy3DOperand op;
    memset(&op, 0, sizeof op);
    op.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    for (size_t i = 0; i < n; i++) {
        uint64_t s = srcs[i], t = dsts[i];
        if (s - x.r[0].lo < x.r[0].len)
            refs[2 * i] = x.r[0].ref;
        else if (s - x.r[1].lo < x.r[1].len)
            refs[2 * i] = x.r[1].ref;
        else {
            op.op.ptr.ptr = (CUdeviceptr)s;
            refs[2 * i] = ref_slow(&x, &op);
        }
        if (t - x.r[0].lo < x.r[0].len)
            refs[2 * i + 1] = x.r[0].ref;
        else if (t - x.r[1].lo < x.r[1].len)
            refs[2 * i + 1] = x.r[1].ref;
        else {
            op.op.ptr.ptr = (CUdeviceptr)t;
            refs[2 * i + 1] = ref_slow(&x, &op);
        }
    }
    recents_end(&x);
    *risky |= x.risky;
}

CBT_HOT int cbt_devices; /* devices do not come and go while a process runs */

int cbt_device_count(const struct cbt_real *real)
{
    int n = __atomic_load_n(&cbt_devices, __ATOMIC_RELAXED);
    if (n > 0 || !real->device_get_count)
        return n > 0 ? n : -1;
    if (real->device_get_count(&n) != CUDA_SUCCESS || n <= 0)
        return -1; /* before cuInit: ask again next time */
    __atomic_store_n(&cbt_devices, n, __ATOMIC_RELAXED);
    return n;
}
