/*
 * What the shim learns about each operand from the driver: the memory kind
 * and device of a pointer (cuPointerGetAttributes), the bounds of its
 * allocation (its RANGE attributes, else cuMemGetAddressRange), and for a
 * CUDA array its size and element size (cuArray3DGetDescriptor).
 *
 * Caching: results are reused within one batch only.  Ops of a batch often
 * point into the same allocation, and while the call runs the program cannot
 * free or re-register that memory without racing its own copy, so the
 * answers stay true for the whole call.  Across batches nothing is kept: the
 * shim does not see cuMemFree, cuMemHostUnregister or munmap, and an address
 * reused by a later allocation of another kind would be misread.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#define CACHE_SLOTS 8

struct cache {
    struct {
        uint64_t lo, hi; /* [lo, hi): the allocation, the host page, or the CUarray handle */
        bool array;      /* CUarray handles and addresses are different name spaces */
        struct cbt_operand_info info;
    } slot[CACHE_SLOTS];
    unsigned used, next;
};

static const struct cbt_operand_info *cache_find(const struct cache *c, uint64_t key, bool array)
{
    for (unsigned i = 0; i < c->used; i++)
        if (c->slot[i].array == array && key >= c->slot[i].lo && key < c->slot[i].hi)
            return &c->slot[i].info;
    return NULL;
}

static void cache_put(struct cache *c, uint64_t lo, uint64_t hi, bool array, const struct cbt_operand_info *info)
{
    unsigned i = c->next;
    c->next = (c->next + 1) % CACHE_SLOTS;
    if (c->used < CACHE_SLOTS)
        c->used++;
    c->slot[i].lo = lo;
    c->slot[i].hi = hi;
    c->slot[i].array = array;
    c->slot[i].info = *info;
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

/* Is the page holding `p` mapped in this process? mincore says ENOMEM when not. */
static bool host_mapped(uint64_t p, uint64_t page)
{
    unsigned char vec;
    return mincore((void *)(uintptr_t)(p & ~(page - 1)), 1, &vec) == 0 || errno != ENOMEM;
}

static void learn_pointer(const struct cbt_real *real, uint64_t p, struct cbt_operand_info *o, struct cache *c,
                          uint64_t page)
{
    const struct cbt_operand_info *hit = cache_find(c, p, false);
    if (hit) {
        *o = *hit;
        return;
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
        /* Not CUDA memory: plain host memory, or nothing at all. */
        o->kind = host_mapped(p, page) ? CBT_MEM_HOST_PAGEABLE : CBT_MEM_UNMAPPED;
        o->device = -1;
        cache_put(c, p & ~(page - 1), (p & ~(page - 1)) + page, false, o);
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
    if (size)
        cache_put(c, start, start + size, false, o);
}

static void learn_array(const struct cbt_real *real, CUarray a, struct cbt_operand_info *o, struct cache *c)
{
    uint64_t key = (uint64_t)(uintptr_t)a;
    const struct cbt_operand_info *hit = cache_find(c, key, true);
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
    cache_put(c, key, key + 1, true, o);
}

static void learn(const struct cbt_real *real, const CUmemcpy3DOperand *op, struct cbt_operand_info *o,
                  struct cache *c, uint64_t page)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
    if (op->type == CU_MEMCPY_OPERAND_TYPE_POINTER && op->op.ptr.ptr)
        learn_pointer(real, (uint64_t)op->op.ptr.ptr, o, c, page);
    else if (op->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && op->op.array.array)
        learn_array(real, op->op.array.array, o, c);
}

void cbt_learn_operands(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                        struct cbt_operand_info *src, struct cbt_operand_info *dst)
{
    static uint64_t page;
    if (cbt_unlikely(!page))
        page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct cache c;
    c.used = c.next = 0;
    for (size_t i = 0; i < n; i++) {
        learn(real, &ops[i].src, &src[i], &c, page);
        learn(real, &ops[i].dst, &dst[i], &c, page);
    }
}

int cbt_device_count(const struct cbt_real *real)
{
    static int count; /* devices do not come and go while a process runs */
    int n = __atomic_load_n(&count, __ATOMIC_RELAXED);
    if (n > 0 || !real->device_get_count)
        return n > 0 ? n : -1;
    if (real->device_get_count(&n) != CUDA_SUCCESS || n <= 0)
        return -1; /* before cuInit: ask again next time */
    __atomic_store_n(&count, n, __ATOMIC_RELAXED);
    return n;
}
