/* SPDX-License-Identifier: MIT */
/*
 * The compact record (format 4): the batch events and the calling thread's
 * dictionaries of operands and streams.
 *
 * Cost, per batch: one sequence of words (t): four words (h), a few varint
 * bytes (hdr), the program's own op list or copy arrays as passed (for a
 * large batch, sequences of their own) and two 16-bit operand references
 * per op, or none when they repeat the thread's previous batch.  What the
 * shim learned of an operand (kind, device, allocation, array shape) is
 * written once, as a dictionary entry, when the thread first meets it; the
 * same for a stream's id, context and device.  The reader carries the
 * dictionaries (tools/read/compact.c).  A batch of the steady path (batch.c)
 * is written by cbt_record_steady3d or 1d: the same words, with the hdr kept
 * from the thread's previous steady batch while what it encodes repeats.
 *
 * The dictionary of a thread grows from CBT_EV_DICT entries as a batch needs
 * (an entry used by the batch being recorded is never reused for another
 * operand before the batch is written: its events refer to both), up to
 * 65535; past that an operand is CBT_REF_UNKNOWN.  Entries are reused round
 * robin; a direct-mapped table finds an operand already in it.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memwrap.h"
#include "record.h"
#include "tp.h"

_Static_assert(sizeof(struct cbt_ev_operand) == 8 * CBT_EV_OPERAND_WORDS, "operands travel as 64-bit words");
_Static_assert(sizeof(CUmemcpyAttributes) == 8 * CBT_EV_ATTR_WORDS, "attributes travel as 64-bit words");
_Static_assert(sizeof(CUdeviceptr) == 8 && sizeof(size_t) == 8, "copy arrays travel as 64-bit words");

#define MAX_ENTRIES 65535u /* indices 0..65534; 0xffff is CBT_REF_UNKNOWN */
#define STREAMS CBT_EV_STREAMS

/*
 * One writer of the process at a time: LTTng drops an event, even in
 * blocking mode, when a writer wraps around the ring onto a sub-buffer that
 * another writer, preempted between reserving and committing, still holds
 * (many threads, few CPUs, a small channel).  Serialized, the other threads
 * of the process wait for it instead.  The driver call is never under it.
 * While a single thread of the process writes batches, there is no other
 * writer to wait for, and the lock is not taken.
 */
pthread_mutex_t cbt_write_lock = PTHREAD_MUTEX_INITIALIZER;
CBT_HOT static int writer_threads;   /* threads with a dictionary: those that write batches */
CBT_HOT static int writing_unlocked; /* the one writer thread is writing without the lock */
static CBT_TLS bool tls_writer; /* this thread is one of them */

/*
 * Takes the lock when another thread writes batches too; says whether it did.
 * The one writer announces its unlocked write and then looks again, and a
 * new writer counts itself and then waits for such a write to end (see
 * writer_joins): one of the two sees the other, so no unlocked write
 * overlaps another write.  The fence that makes it so is asymmetric where
 * the kernel has membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered
 * once per process image): the one writer, on every batch, orders its two
 * accesses with a compiler barrier alone, and the new writer, once, has
 * every thread of the process pass a full barrier.  Without it, both sides
 * are sequentially consistent (a full fence per batch).
 */
CBT_HOT static int fence_asymmetric; /* membarrier registered for this image */

static inline bool write_lock(void)
{
    if (cbt_likely(__atomic_load_n(&writer_threads, __ATOMIC_RELAXED) <= 1)) {
        if (cbt_likely(__atomic_load_n(&fence_asymmetric, __ATOMIC_RELAXED))) {
            __atomic_store_n(&writing_unlocked, 1, __ATOMIC_RELAXED);
            __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the new writer's membarrier does the rest */
            if (cbt_likely(__atomic_load_n(&writer_threads, __ATOMIC_RELAXED) <= 1))
                return false;
        } else {
            __atomic_store_n(&writing_unlocked, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&writer_threads, __ATOMIC_SEQ_CST) <= 1)
                return false;
        }
        __atomic_store_n(&writing_unlocked, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_lock(&cbt_write_lock);
    return true;
}

static inline void write_unlock(bool locked)
{
    if (cbt_unlikely(locked))
        pthread_mutex_unlock(&cbt_write_lock);
    else
        __atomic_store_n(&writing_unlocked, 0, __ATOMIC_RELEASE);
}

/* A thread about to write its first batch. */
static void writer_joins(void)
{
    __atomic_add_fetch(&writer_threads, 1, __ATOMIC_SEQ_CST);
    tls_writer = true;
    if (__atomic_load_n(&fence_asymmetric, __ATOMIC_RELAXED))
        (void)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    while (__atomic_load_n(&writing_unlocked, __ATOMIC_SEQ_CST))
        sched_yield();
}

/* The asymmetric fence, where the kernel has it (at init, and in a forked
 * child, whose image is not registered). */
static void fence_register(void)
{
    int ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    __atomic_store_n(&fence_asymmetric, ok, __ATOMIC_RELEASE);
}

void cbt_dict_release(struct cbt_dict *d)
{
    if (d->cap)
        __atomic_sub_fetch(&writer_threads, 1, __ATOMIC_RELAXED);
    free(d->info);
    free(d->written);
    free(d->used);
    free(d->serial);
    free(d->table);
    free(d->refs);
    free(d->prev_refs);
    memset(d, 0, sizeof *d);
}

static bool dict_grow(struct cbt_dict *d, uint32_t cap)
{
    struct cbt_operand_info *info = realloc(d->info, cap * sizeof *info);
    if (info)
        d->info = info;
    uint32_t *written = realloc(d->written, cap * sizeof *written);
    if (written)
        d->written = written;
    uint32_t *used = realloc(d->used, cap * sizeof *used);
    if (used)
        d->used = used;
    uint32_t *serial = realloc(d->serial, cap * sizeof *serial);
    if (serial)
        d->serial = serial;
    uint16_t *table = calloc(2 * (size_t)cap, sizeof *table);
    if (!info || !written || !used || !serial || !table) {
        free(table);
        return false;
    }
    memset(d->written + d->cap, 0, (cap - d->cap) * sizeof *written);
    memset(d->used + d->cap, 0, (cap - d->cap) * sizeof *used);
    memset(d->serial + d->cap, 0, (cap - d->cap) * sizeof *serial);
    memset(d->info + d->cap, 0, (cap - d->cap) * sizeof *info);
    free(d->table);
    d->table = table; /* refilled as entries are used again */
    d->table_mask = 2 * cap - 1;
    d->next = d->cap;
    d->cap = cap;
    return true;
}

struct cbt_dict *cbt_dict_for_batch(struct cbt_dict *d, bool emit, uint64_t batch_id, int32_t tid, uint64_t now_ns)
{
    d->now_ns = now_ns;
    if (cbt_unlikely(!d->cap)) {
        if (!dict_grow(d, CBT_EV_DICT)) {
            cbt_dict_release(d);
            return NULL;
        }
        d->epoch = 1;
        d->epoch_ns = d->now_ns;
        writer_joins();
    }
    uint64_t key = (batch_id & 0xffffffff00000000ull) | (uint32_t)tid;
    /* A new epoch: every entry is written again on its next use, and no
     * batch says its refs repeat one the reader may not have seen. */
    if (cbt_unlikely(key != d->key || (emit && !d->was_emitting) ||
                     cbt_dict_refresh_due(d, d->now_ns))) {
        d->epoch++;
        d->epoch_ns = d->now_ns;
        d->n_prev = 0;
        if (key != d->key) { /* a forked child: a thread of another image */
            d->key = key;
            d->tid = tid;
            memset(d->streams, 0, sizeof d->streams);
        }
    }
    d->was_emitting = emit;
    d->emit = emit;
    d->stamp++;
    return d;
}

static inline bool info_eq(const struct cbt_operand_info *a, const struct cbt_operand_info *b)
{
    return a->alloc_base == b->alloc_base && a->alloc_size == b->alloc_size && a->kind == b->kind &&
           a->device == b->device && a->array_width == b->array_width && a->array_height == b->array_height &&
           a->array_depth == b->array_depth && a->elem_size == b->elem_size;
}

static inline uint32_t info_hash(const struct cbt_operand_info *o)
{
    uint64_t h = o->alloc_base * 0x9e3779b97f4a7c15ull ^ o->alloc_size * 0xc2b2ae3d27d4eb4full ^
                 ((uint64_t)o->kind << 40 | (uint64_t)(uint32_t)o->device) * 0x165667b19e3779f9ull ^
                 o->array_width ^ o->array_height << 20 ^ o->array_depth << 40;
    return (uint32_t)(h >> 32 ^ h);
}

static void write_entry(struct cbt_dict *d, uint16_t i)
{
    d->written[i] = d->epoch;
    if (!cbt_tp_enabled(operand))
        return;
    const struct cbt_operand_info *o = &d->info[i];
    struct cbt_ev_operand w = {
        .alloc_base = o->alloc_base, .alloc_size = o->alloc_size, .array_width = o->array_width,
        .array_height = o->array_height, .array_depth = o->array_depth, .elem_size = o->elem_size,
        .device = o->device, .kind = o->kind,
    };
    bool locked = write_lock();
    cbt_tp(operand, d->key, i, &w, __builtin_return_address(0));
    write_unlock(locked);
}

uint16_t cbt_dict_ref(struct cbt_dict *d, const struct cbt_operand_info *o)
{
    uint32_t h = info_hash(o) & d->table_mask;
    uint32_t v = d->table[h];
    uint16_t i;
    if (v && info_eq(&d->info[v - 1], o)) {
        i = (uint16_t)(v - 1);
    } else {
        /* a new entry, round robin, never one this batch refers to */
        uint32_t tries = 0;
        while (d->used[d->next] == d->stamp && tries < d->cap) {
            d->next = d->next + 1 == d->cap ? 0 : d->next + 1;
            tries++;
        }
        if (tries == d->cap) {
            uint32_t cap = d->cap * 2 > MAX_ENTRIES ? MAX_ENTRIES : d->cap * 2;
            if (cap == d->cap || !dict_grow(d, cap))
                return CBT_REF_UNKNOWN;
            h = info_hash(o) & d->table_mask;
        }
        i = (uint16_t)d->next;
        d->next = d->next + 1 == d->cap ? 0 : d->next + 1;
        uint32_t old = info_hash(&d->info[i]) & d->table_mask;
        if (d->table[old] == (uint32_t)i + 1)
            d->table[old] = 0;
        d->info[i] = *o;
        d->written[i] = 0;
        d->serial[i] = ++d->next_serial;
        d->table[h] = (uint16_t)(i + 1);
    }
    d->used[i] = d->stamp;
    if (d->emit && d->written[i] != d->epoch)
        write_entry(d, i);
    return i;
}

void cbt_dict_touch(struct cbt_dict *d, const uint16_t *refs, size_t n)
{
    for (size_t k = 0; k < 2 * n; k++) {
        uint16_t i = refs[k];
        if (i >= d->cap)
            continue;
        d->used[i] = d->stamp;
        if (d->emit && d->written[i] != d->epoch)
            write_entry(d, i);
    }
}

uint32_t cbt_dict_serial(const struct cbt_dict *d, uint16_t i) { return i < d->cap ? d->serial[i] : 0; }

void cbt_dict_write(struct cbt_dict *d, uint16_t i) { write_entry(d, i); }

const struct cbt_operand_info *cbt_dict_info(const struct cbt_dict *d, uint16_t i)
{
    static const struct cbt_operand_info unknown = {.device = -1};
    return i < d->cap ? &d->info[i] : &unknown;
}

/* The j-th index a handle may hold (j < CBT_STREAM_PROBES). */
static inline uint8_t stream_index_of(uint64_t handle, unsigned j)
{
    return (uint8_t)((cbt_stream_hash((const void *)(uintptr_t)handle, STREAMS) + j) & (STREAMS - 1));
}

static inline bool stream_seen(const struct cbt_dict *d, const struct cbt_stream_seen *s, uint64_t handle,
                               uint64_t stream_id, uint64_t context, int32_t device, int32_t device_count)
{
    return s->epoch == d->epoch && s->handle == handle && s->id == stream_id && s->context == context &&
           s->device == device && s->device_count == device_count;
}

uint8_t cbt_dict_stream_known(const struct cbt_dict *d, uint64_t handle, uint64_t stream_id, uint64_t context,
                              int32_t device, int32_t device_count)
{
    for (unsigned j = 0; j < CBT_STREAM_PROBES; j++) {
        uint8_t i = stream_index_of(handle, j);
        if (stream_seen(d, &d->streams[i], handle, stream_id, context, device, device_count))
            return i;
    }
    return CBT_EV_NO_STREAM;
}

uint8_t cbt_dict_stream(struct cbt_dict *d, uint64_t handle, uint64_t stream_id, uint64_t context, int32_t device,
                        int32_t device_count)
{
    uint8_t i = cbt_dict_stream_known(d, handle, stream_id, context, device, device_count);
    if (i != CBT_EV_NO_STREAM)
        return i;
    /* an index this epoch has not described, or the handle's own (described
     * otherwise before), else the probe's indices in turn */
    i = stream_index_of(handle, d->stream_turn++ % CBT_STREAM_PROBES);
    for (unsigned j = 0; j < CBT_STREAM_PROBES; j++) {
        uint8_t c = stream_index_of(handle, j);
        if (d->streams[c].epoch != d->epoch || d->streams[c].handle == handle) {
            i = c;
            break;
        }
    }
    struct cbt_stream_seen *s = &d->streams[i];
    *s = (struct cbt_stream_seen){.handle = handle, .id = stream_id, .context = context, .device = device,
                              .device_count = device_count, .epoch = d->epoch};
    if (!d->emit || !cbt_tp_enabled(stream))
        return i;
    const struct cbt_ev_stream ev = {.key = d->key, .index = i, .handle = handle, .stream_id = stream_id,
                                     .context = context, .device = device, .device_count = device_count,
                                     .rules = CBT_RULES_VERSION};
    bool locked = write_lock();
    cbt_tp(stream, &ev, __builtin_return_address(0));
    write_unlock(locked);
    return i;
}

static bool grow16(uint16_t **p, size_t *cap, size_t want)
{
    if (want <= *cap && *p)
        return true; /* never NULL once asked for, even for no element */
    if (want > SIZE_MAX / 8)
        return false;
    size_t n = *cap ? *cap : 64;
    while (n < want)
        n *= 2;
    uint16_t *q = realloc(*p, n * sizeof *q);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

uint16_t *cbt_dict_refs(struct cbt_dict *d, size_t n)
{
    if (2 * n <= CBT_DICT_SMALL)
        return d->small_refs;
    return grow16(&d->refs, &d->cap_refs, 2 * n) ? d->refs : NULL;
}

/* ---- the batch events ---- */

static inline uint8_t *varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t zigzag(uint64_t d) { return d << 1 ^ (uint64_t)((int64_t)d >> 63); }

_Static_assert(CBT_CAPTURE_INVALIDATED == 2, "CBT_W_PACK keeps captures 0..2");

CBT_HOT_FN static uint64_t packed_w(const struct cbt_ev_batch *b, bool same_refs)
{
    unsigned res = b->result < CBT_W_RESULT_ESCAPE ? b->result : CBT_W_RESULT_ESCAPE;
    return CBT_W_PACK(b->api, b->door, b->outcome, b->capture, b->validated, same_refs, res, b->tid);
}

/* The optional values of hdr, after the ones every batch has: each there
 * only when its bit of the leading mask says so (it is not what a batch
 * usually holds). */
CBT_HOT_FN static uint8_t *hdr_optional(uint8_t *p, uint8_t *mask, const struct cbt_ev_batch *b, uint64_t recorded,
                             const struct cbt_ev_batch1d *b1)
{
    if (recorded != b->num_ops) {
        *mask |= CBT_HDR_RECORDED;
        p = varint(p, recorded);
    }
    if (b1) {
        if (b1->num_attrs != 1) {
            *mask |= CBT_HDR_NUM_ATTRS;
            p = varint(p, b1->num_attrs);
        }
        if (b1->attrs_recorded != b1->num_attrs) {
            *mask |= CBT_HDR_ATTRS_READ;
            p = varint(p, b1->attrs_recorded);
        }
        if (b1->abi) {
            *mask |= CBT_HDR_FLAGS;
            p = varint(p, b1->abi);
        }
    } else if (b->flags) {
        *mask |= CBT_HDR_FLAGS;
        p = varint(p, b->flags);
    }
    if (b->fail_idx != UINT64_MAX) {
        *mask |= CBT_HDR_FAIL_IDX;
        p = varint(p, b->fail_idx);
    }
    if (b->findings) {
        *mask |= CBT_HDR_FINDINGS;
        p = varint(p, b->findings);
    }
    if (b->result >= CBT_W_RESULT_ESCAPE) {
        *mask |= CBT_HDR_RESULT;
        p = varint(p, b->result);
    }
    return p;
}

/* Do this batch's refs repeat the previous single-chunk batch's (then none
 * are written)?  Remembers them for the next batch either way. */
CBT_HOT_FN static bool refs_repeat(struct cbt_dict *d, const uint16_t *refs, size_t n, size_t chunk)
{
    if (!refs || n == 0 || n > chunk)
        return false;
    bool small = 2 * n <= CBT_DICT_SMALL;
    if (d->n_prev == n) {
        const uint16_t *prev = small ? d->small_prev : d->prev_refs;
        if (n > 4) {
            if (memcmp(prev, refs, 2 * n * sizeof *refs) == 0)
                return true;
        } else {
            size_t i = 0; /* a few: no call */
            while (i < 2 * n && prev[i] == refs[i])
                i++;
            if (i == 2 * n)
                return true;
        }
    }
    d->prev_uniform = false;
    if (small) {
        memcpy(d->small_prev, refs, 2 * n * sizeof *refs);
        d->n_prev = (uint32_t)n;
    } else if (grow16(&d->prev_refs, &d->cap_prev, 2 * n)) {
        memcpy(d->prev_refs, refs, 2 * n * sizeof *refs);
        d->n_prev = (uint32_t)n;
    } else {
        d->n_prev = 0;
    }
    return false;
}

/*
 * t (events.h), built in a buffer of words: h, hdr, then what the event
 * carries there, then the refs.  Each piece is appended at p; whole words
 * are kept by padding hdr and the refs with zero bytes.
 */
struct tail {
    uint64_t w[CBT_EV_TAIL_WORDS];
    uint8_t *p;
};
_Static_assert(CBT_EV_HEAD_WORDS + (CBT_EV_HDR_MAX + 7) / 8 +
                       (CBT_EV_INLINE3D * CBT_EV_OP_SIZE + 4 * CBT_EV_INLINE3D + 7) / 8 <= CBT_EV_TAIL_WORDS,
              "a b event's t fits");
_Static_assert(CBT_EV_HEAD_WORDS + (CBT_EV_HDR_MAX + 7) / 8 + CBT_EV_INLINE_ATTRS * 4 + CBT_EV_INLINE1D * 3 +
                       (4 * CBT_EV_INLINE1D + 7) / 8 <= CBT_EV_TAIL_WORDS,
              "a c event's t fits");

static inline uint8_t *tail_hdr(struct tail *t) { return (uint8_t *)(t->w + CBT_EV_HEAD_WORDS); }

static inline void tail_pad(struct tail *t)
{
    while ((uintptr_t)(t->p - (uint8_t *)t->w) & 7)
        *t->p++ = 0;
}

static inline void tail_put(struct tail *t, const void *src, size_t bytes)
{
    if (bytes) {
        memcpy(t->p, src, bytes);
        t->p += bytes;
    }
}

/* hdr's mask byte (no bit yet) and the values every batch has first; returns hdr. */
static inline uint8_t *hdr_begin(struct tail *t, const struct cbt_ev_batch *b, uint8_t stream_index)
{
    uint8_t *h = tail_hdr(t);
    h[0] = 0;
    t->p = h + 1;
    t->p = varint(t->p, b->num_ops);
    t->p = varint(t->p, b->op_list);
    t->p = varint(t->p, stream_index);
    return h;
}

/* h, and the refs of the event's first n ops unless they repeat: t is done. */
static inline uint32_t tail_end(struct tail *t, const uint64_t h[CBT_EV_HEAD_WORDS], const uint16_t *refs, size_t n)
{
    memcpy(t->w, h, 8 * CBT_EV_HEAD_WORDS);
    if (n) {
        tail_put(t, refs, 4 * n);
        tail_pad(t);
    }
    return (uint32_t)((t->p - (uint8_t *)t->w) / 8);
}

CBT_HOT_FN void cbt_record_batch(struct cbt_dict *d, const struct cbt_ev_batch *b, uint8_t stream_index, bool gpu,
                      const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, const uint16_t *refs, void *ip)
{
    if (!cbt_tp_enabled(b))
        return;
    struct tail t;
    uint8_t *h = hdr_begin(&t, b, stream_index);
    t.p = hdr_optional(t.p, &h[0], b, n, NULL);
    h[0] |= gpu ? CBT_HDR_GPU : 0;
    tail_pad(&t);
    const uint32_t chunk = cbt_chunk3d;
    bool same = d && refs_repeat(d, refs, n, chunk);
    struct cbt_ev_rec r = {.h = {b->batch_id, packed_w(b, same), b->driver_ns, b->caller}, .tail = t.w};
    if (n <= CBT_EV_INLINE3D) { /* one event, the ops in t */
        tail_put(&t, ops, n * sizeof *ops);
        r.tail_words = tail_end(&t, r.h, refs, refs && !same ? n : 0);
        bool locked = write_lock();
        cbt_tp(b, t.w, (uint16_t)r.tail_words, ip);
        write_unlock(locked);
        return;
    }
    uint32_t count0 = n < chunk ? (uint32_t)n : chunk;
    r.tail_words = tail_end(&t, r.h, refs, refs && !same ? count0 : 0);
    bool locked = write_lock();
    size_t first = 0;
    do {
        uint32_t count = n - first < chunk ? (uint32_t)(n - first) : chunk;
        r.first = first;
        r.count = count;
        r.ops = ops + first;
        r.refs = refs ? refs + 2 * first : NULL;
        r.nrefs_ops = refs ? count : 0;
        if (first == 0)
            cbt_tp(bs, &r, ip);
        else
            cbt_tp(bo, &r, ip);
        first += count;
    } while (first < n);
    write_unlock(locked);
}

CBT_HOT_FN void cbt_record_batch1d(struct cbt_dict *d, const struct cbt_ev_batch *b, uint8_t stream_index, bool gpu,
                        const struct cbt_ev_batch1d *b1,
                        const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, const CUdeviceptr *dsts,
                        const CUdeviceptr *srcs, const size_t *sizes, size_t n, const uint16_t *refs, void *ip)
{
    if (!cbt_tp_enabled(c))
        return;
    struct tail t;
    uint8_t *h = hdr_begin(&t, b, stream_index);
    /* the other arrays, as distances from dsts (they lie near it: a few bytes, not a pointer's 7) */
    t.p = varint(t.p, zigzag(b1->srcs - b->op_list));
    t.p = varint(t.p, zigzag(b1->sizes - b->op_list));
    t.p = varint(t.p, zigzag(b1->attrs - b->op_list));
    t.p = varint(t.p, zigzag(b1->attrs_idxs - b->op_list));
    t.p = hdr_optional(t.p, &h[0], b, n, b1);
    h[0] |= gpu ? CBT_HDR_GPU : 0;
    tail_pad(&t);
    const uint32_t chunk = cbt_chunk1d;
    bool same = d && refs_repeat(d, refs, n, chunk);
    struct cbt_ev_rec r = {.h = {b->batch_id, packed_w(b, same), b->driver_ns, b->caller}, .tail = t.w};
    size_t na = b1->attrs_recorded;
    if (n <= CBT_EV_INLINE1D && na <= CBT_EV_INLINE_ATTRS) { /* one event, everything in t */
        tail_put(&t, attrs, na * sizeof *attrs);
        tail_put(&t, attrs_idxs, na * sizeof *attrs_idxs);
        tail_put(&t, dsts, n * sizeof *dsts);
        tail_put(&t, srcs, n * sizeof *srcs);
        tail_put(&t, sizes, n * sizeof *sizes);
        r.tail_words = tail_end(&t, r.h, refs, refs && !same ? n : 0);
        bool locked = write_lock();
        cbt_tp(c, t.w, (uint16_t)r.tail_words, ip);
        write_unlock(locked);
        return;
    }
    bool locked = write_lock();
    if (na > CBT_EV_ATTRS1D) {
        /* many attributes: before the batch event, so the reader has them when it comes */
        for (size_t k = 0; k < na; k += CBT_EV_ATTRS1D) {
            struct cbt_ev_rec a = {.h = {b->batch_id}, .first = k,
                                   .nattrs = na - k < CBT_EV_ATTRS1D ? (uint32_t)(na - k) : CBT_EV_ATTRS1D,
                                   .attrs = attrs + k, .attr_idxs = (const uint64_t *)attrs_idxs + k};
            cbt_tp(ca, &a, ip);
        }
    } else if (na) {
        r.nattrs = (uint32_t)na;
        r.attrs = attrs;
        tail_put(&t, attrs_idxs, na * sizeof *attrs_idxs);
    }
    uint32_t count0 = n < chunk ? (uint32_t)n : chunk;
    r.tail_words = tail_end(&t, r.h, refs, refs && !same ? count0 : 0);
    size_t first = 0;
    do {
        uint32_t count = n - first < chunk ? (uint32_t)(n - first) : chunk;
        r.first = first;
        r.count = count;
        static const uint64_t none[1];
        r.dsts = count ? (const uint64_t *)dsts + first : none;
        r.srcs = count ? (const uint64_t *)srcs + first : none;
        r.sizes = count ? (const uint64_t *)sizes + first : none;
        r.refs = refs ? refs + 2 * first : NULL;
        r.nrefs_ops = refs ? count : 0;
        if (first == 0)
            cbt_tp(cs, &r, ip);
        else
            cbt_tp(co, &r, ip);
        first += count;
    } while (first < n);
    write_unlock(locked);
}

/* ---- the steady path's record ---- */

/* t of a steady batch at most: h, the memo's hdr, then, in a b or c event,
 * the ops or the 1D arrays (one attribute) and the refs; in a bs or cs
 * event (the ops or arrays in sequences of their own), a cs event's
 * attrsIdxs and the refs of a whole chunk. */
#define STEADY_INLINE_WORDS                                                                                   \
    (CBT_EV_INLINE3D * CBT_EV_OP_WORDS + (4 * CBT_EV_INLINE3D + 7) / 8 >                                       \
             CBT_EV_ATTR_WORDS + 1 + 3 * CBT_EV_INLINE1D + (4 * CBT_EV_INLINE1D + 7) / 8                       \
         ? CBT_EV_INLINE3D * CBT_EV_OP_WORDS + (4 * CBT_EV_INLINE3D + 7) / 8                                   \
         : CBT_EV_ATTR_WORDS + 1 + 3 * CBT_EV_INLINE1D + (4 * CBT_EV_INLINE1D + 7) / 8)
#define STEADY_CHUNK_WORDS                                                                                    \
    (1 + (4 * CBT_EV_CHUNK1D_MAX + 7) / 8 > (4 * CBT_EV_CHUNK3D_MAX + 7) / 8 ? 1 + (4 * CBT_EV_CHUNK1D_MAX + 7) / 8 \
                                                                            : (4 * CBT_EV_CHUNK3D_MAX + 7) / 8)
#define STEADY_WORDS                                                                                          \
    (CBT_EV_HEAD_WORDS + CBT_MEMO_WORDS +                                                                     \
     (STEADY_INLINE_WORDS > STEADY_CHUNK_WORDS ? STEADY_INLINE_WORDS : STEADY_CHUNK_WORDS))

_Static_assert(offsetof(struct cbt_dict, small_refs) == 64 && offsetof(struct cbt_dict, memo_hdr1d) == 128 &&
                   offsetof(struct cbt_dict, memo_idxs) < 192,
               "a steady batch reads the dictionary's first two lines (a 1D batch's memo: the third)");

/* The memo's key for s (see struct cbt_dict), without its words. */
static inline uint64_t memo_key(const struct cbt_steady_rec *s)
{
    return (uint64_t)s->n << 16 | (uint64_t)s->stream_index << 8 | (s->d1 ? 0x80u : 0);
}

/* Does the memo hold s's hdr? */
static inline __attribute__((always_inline)) bool memo_holds(const struct cbt_dict *d,
                                                             const struct cbt_steady_rec *s, bool d1)
{
    if (d->memo_list != (uint64_t)(uintptr_t)s->list ||
        (d->memo_key & ~0x7full) != ((uint64_t)s->n << 16 | (uint64_t)s->stream_index << 8 | (d1 ? 0x80u : 0)) ||
        !(d->memo_key & 0x7f))
        return false;
    return !d1 || (d->memo_srcs == (uint64_t)(uintptr_t)s->srcs && d->memo_sizes == (uint64_t)(uintptr_t)s->sizes &&
                      d->memo_attrs == (uint64_t)(uintptr_t)s->attrs &&
                      d->memo_idxs == (uint64_t)(uintptr_t)s->attrs_idxs);
}

/* s's hdr encoded (no optional value: its mask is 0) and kept in the memo,
 * where it fits. */
CBT_COLD_FN static void memo_fill(struct cbt_dict *d, const struct cbt_steady_rec *s)
{
    struct tail t;
    struct cbt_ev_batch b = {.num_ops = s->n, .op_list = (uint64_t)(uintptr_t)s->list};
    uint8_t *h = hdr_begin(&t, &b, s->stream_index);
    if (s->d1) {
        t.p = varint(t.p, zigzag((uint64_t)(uintptr_t)s->srcs - b.op_list));
        t.p = varint(t.p, zigzag((uint64_t)(uintptr_t)s->sizes - b.op_list));
        t.p = varint(t.p, zigzag((uint64_t)(uintptr_t)s->attrs - b.op_list));
        t.p = varint(t.p, zigzag((uint64_t)(uintptr_t)s->attrs_idxs - b.op_list));
    }
    tail_pad(&t);
    size_t words = (size_t)(t.p - h) / 8;
    d->memo_key = 0;
    if (words > (s->d1 ? CBT_MEMO_WORDS : 3))
        return; /* arrays far apart: the general writer encodes it each time (memo_miss) */
    uint64_t w[CBT_MEMO_WORDS] = {0};
    memcpy(w, h, 8 * words);
    memcpy(d->memo_hdr, w, sizeof d->memo_hdr);
    memcpy(d->memo_hdr1d, w + 3, sizeof d->memo_hdr1d);
    d->memo_list = (uint64_t)(uintptr_t)s->list;
    d->memo_srcs = (uint64_t)(uintptr_t)s->srcs;
    d->memo_sizes = (uint64_t)(uintptr_t)s->sizes;
    d->memo_attrs = (uint64_t)(uintptr_t)s->attrs;
    d->memo_idxs = (uint64_t)(uintptr_t)s->attrs_idxs;
    d->memo_key = memo_key(s) | words;
}

/* Do the refs of a small batch (n <= CBT_DICT_SMALL / 2) repeat the previous
 * single-chunk batch's?  Remembers them for the next batch either way. */
static inline bool small_refs_repeat(struct cbt_dict *d, const uint16_t *refs, size_t n)
{
    bool same = d->n_prev == n;
    for (size_t i = 0; same && i < n; i++) {
        uint32_t a, b; /* an op's two refs at once */
        memcpy(&a, refs + 2 * i, 4);
        memcpy(&b, d->small_prev + 2 * i, 4);
        same = a == b;
    }
    if (!same) {
        memcpy(d->small_prev, refs, 4 * n);
        d->n_prev = (uint32_t)n;
        d->prev_uniform = false;
    }
    return same;
}

/* The memo (the latest hdr) as an older one, and back. */
static inline void memo_save(const struct cbt_dict *d, struct cbt_memo *m)
{
    m->list = d->memo_list;
    m->key = d->memo_key;
    memcpy(m->hdr, d->memo_hdr, sizeof d->memo_hdr);
    memcpy(m->hdr + 3, d->memo_hdr1d, sizeof d->memo_hdr1d);
    m->srcs = d->memo_srcs;
    m->sizes = d->memo_sizes;
    m->attrs = d->memo_attrs;
    m->idxs = d->memo_idxs;
}

static inline void memo_load(struct cbt_dict *d, const struct cbt_memo *m)
{
    d->memo_list = m->list;
    d->memo_key = m->key;
    memcpy(d->memo_hdr, m->hdr, sizeof d->memo_hdr);
    memcpy(d->memo_hdr1d, m->hdr + 3, sizeof d->memo_hdr1d);
    d->memo_srcs = m->srcs;
    d->memo_sizes = m->sizes;
    d->memo_attrs = m->attrs;
    d->memo_idxs = m->idxs;
}

/* Does older hdr m belong to s? */
static inline bool memo_more_holds(const struct cbt_memo *m, const struct cbt_steady_rec *s)
{
    return m->list == (uint64_t)(uintptr_t)s->list && (m->key & ~0x7full) == memo_key(s) && (m->key & 0x7f) &&
           (!s->d1 || (m->srcs == (uint64_t)(uintptr_t)s->srcs && m->sizes == (uint64_t)(uintptr_t)s->sizes &&
                       m->attrs == (uint64_t)(uintptr_t)s->attrs && m->idxs == (uint64_t)(uintptr_t)s->attrs_idxs));
}

/* A memo that does not hold s's hdr: an older hdr of s's swapped in (a
 * thread going round a few lists or streams), else the memo pushed in
 * front of the older ones (the oldest dropped) and filled; where s's hdr
 * cannot be kept, the batch is written by the general writer (true).  Out
 * of line, not cold: such a thread takes it every batch. */
__attribute__((noinline)) static bool memo_miss(struct cbt_dict *d, const struct cbt_steady_rec *s, void *ip)
{
    for (int i = 0; i < CBT_MEMO_MORE; i++) {
        if (memo_more_holds(&d->memo_more[i], s)) {
            struct cbt_memo m = d->memo_more[i];
            memo_save(d, &d->memo_more[i]);
            memo_load(d, &m);
            return false;
        }
    }
    if (d->memo_key & 0x7f) {
        memmove(&d->memo_more[1], &d->memo_more[0], (CBT_MEMO_MORE - 1) * sizeof d->memo_more[0]);
        memo_save(d, &d->memo_more[0]);
    }
    memo_fill(d, s);
    if (d->memo_key & 0x7f)
        return false;
    const uint64_t w = s->h[CBT_H_W];
    struct cbt_ev_batch b = {
        .batch_id = s->h[CBT_H_ID], .api = (uint8_t)CBT_W_API(w), .door = (uint8_t)CBT_W_DOOR(w),
        .outcome = (uint8_t)CBT_W_OUTCOME(w),
        .capture = (uint8_t)(CBT_W_CAPTURE(w) == 7 ? CBT_CAPTURE_UNKNOWN : CBT_W_CAPTURE(w)),
        .result = CBT_W_RESULT(w), .num_ops = s->n, .ops_recorded = s->n, .op_list = (uint64_t)(uintptr_t)s->list,
        .fail_idx = UINT64_MAX, .driver_ns = s->h[CBT_H_DRIVER_NS], .caller = s->h[CBT_H_CALLER],
        .tid = CBT_W_TID(w),
    };
    d->n_prev = 0; /* the general writer compares the refs itself */
    if (s->d1) {
        const struct cbt_ev_batch1d b1 = {
            .srcs = (uint64_t)(uintptr_t)s->srcs, .sizes = (uint64_t)(uintptr_t)s->sizes,
            .attrs = (uint64_t)(uintptr_t)s->attrs, .attrs_idxs = (uint64_t)(uintptr_t)s->attrs_idxs,
            .num_attrs = 1, .attrs_recorded = 1,
        };
        cbt_record_batch1d(d, &b, s->stream_index, s->gpu, &b1, s->attrs, s->attrs_idxs, s->list, s->srcs, s->sizes,
                           s->n, s->refs, ip);
    } else {
        cbt_record_batch(d, &b, s->stream_index, s->gpu, s->list, s->n, s->refs, ip);
    }
    return true;
}

/* n words from src to dst, one at a time.  For the few words of a small
 * batch: a copy of unknown length becomes rep movsq, whose start-up costs
 * tens of cycles however short the copy (a 1D batch of one copy made three
 * of them); the empty asm keeps the compiler from turning the loop back
 * into one. */
static inline __attribute__((always_inline)) void copy_words(uint64_t *dst, const void *src, size_t n)
{
    const char *from = src;
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, from + 8 * i, 8);
        dst[i] = w;
        __asm__ volatile("");
    }
}

/* From 8 words on, the C library's memcpy (vector moves, a few
 * instructions for a whole array), called: inlined, a copy whose length
 * the compiler sees bounded becomes rep movsq. */
static __attribute__((noinline)) void copy_bytes(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
}

/* t of a steady batch: h, the memo's hdr, what the event carries there
 * (inl: a b or c event; else a bs or cs event, which carries the ops or the
 * arrays and attributes in sequences of their own, and a cs event the
 * attrsIdxs in t), the refs unless they repeat; its words. */
static inline __attribute__((always_inline)) uint16_t steady_tail(struct cbt_dict *d, const struct cbt_steady_rec *s,
                                                                  uint64_t *t, bool d1, bool inl)
{
    const size_t n = s->n;
    memcpy(t, s->h, 8 * CBT_EV_HEAD_WORDS);
    uint64_t *p = t + CBT_EV_HEAD_WORDS;
    memcpy(p, d->memo_hdr, sizeof d->memo_hdr); /* whole: fewer branches than its words */
    if (d1 && (d->memo_key & 0x7f) > 3)
        memcpy(p + 3, d->memo_hdr1d, sizeof d->memo_hdr1d);
    *(uint8_t *)p |= (uint8_t)(s->gpu ? CBT_HDR_GPU : 0); /* the mask byte, 0 in the memo */
    p += d->memo_key & 0x7f;
    if (!inl) {
        if (d1)
            *p++ = *s->attrs_idxs;
    } else if (d1) {
        memcpy(p, s->attrs, 8 * CBT_EV_ATTR_WORDS);
        p[CBT_EV_ATTR_WORDS] = *s->attrs_idxs;
        p += CBT_EV_ATTR_WORDS + 1;
        if (cbt_likely(n < 8)) {
            copy_words(p, s->list, n);
            copy_words(p + n, s->srcs, n);
            copy_words(p + 2 * n, s->sizes, n);
        } else {
            copy_bytes(p, s->list, 8 * n);
            copy_bytes(p + n, s->srcs, 8 * n);
            copy_bytes(p + 2 * n, s->sizes, 8 * n);
        }
        p += 3 * n;
    } else if (cbt_likely(n == 1)) {
        memcpy(p, s->list, CBT_EV_OP_SIZE); /* the usual batch: a copy of known size */
        p += CBT_EV_OP_WORDS;
    } else {
        for (size_t i = 0; i < n; i++) {
            memcpy(p, (const CUDA_MEMCPY3D_BATCH_OP *)s->list + i, CBT_EV_OP_SIZE); /* as for one op */
            p += CBT_EV_OP_WORDS;
            __asm__ volatile(""); /* one op at a time (see copy_words) */
        }
    }
    /* a batch whose every op has op 0's refs, after one alike: no compare */
    uint32_t pair;
    memcpy(&pair, s->refs, sizeof pair);
    bool same;
    if (s->uniform && d->prev_uniform && d->n_prev == n && d->prev_pair == pair) {
        same = true;
    } else {
        same = cbt_likely(2 * n <= CBT_DICT_SMALL) ? small_refs_repeat(d, s->refs, n) : refs_repeat(d, s->refs, n, n);
        /* the previous refs are now these (or n_prev is 0) */
        d->prev_uniform = s->uniform;
        d->prev_pair = pair;
    }
    if (cbt_likely(same)) {
        t[CBT_H_W] |= CBT_W_SAME_REFS;
    } else {
        size_t words = (4 * n + 7) / 8;
        p[words - 1] = 0;
        memcpy(p, s->refs, 4 * n);
        p += words;
    }
    return (uint16_t)(p - t);
}

CBT_HOT_FN void cbt_record_steady3d(struct cbt_dict *d, const struct cbt_steady_rec *s, void *ip)
{
    if (!cbt_tp_enabled(b) || (cbt_unlikely(!memo_holds(d, s, false)) && memo_miss(d, s, ip)))
        return;
    uint64_t t[STEADY_WORDS];
    const bool inl = cbt_likely(s->n <= CBT_EV_INLINE3D);
    uint16_t words = steady_tail(d, s, t, false, inl);
    bool locked = write_lock();
    if (inl) {
        cbt_tp(b, t, words, ip);
    } else {
        struct cbt_ev_rec r; /* what bs reads, alone: an initialiser of the whole struct is a rep stosq */
        r.tail = t;
        r.tail_words = words;
        r.count = (uint32_t)s->n;
        r.ops = s->list;
        cbt_tp(bs, &r, ip);
    }
    write_unlock(locked);
}

CBT_HOT_FN void cbt_record_steady1d(struct cbt_dict *d, const struct cbt_steady_rec *s, void *ip)
{
    if (!cbt_tp_enabled(c) || (cbt_unlikely(!memo_holds(d, s, true)) && memo_miss(d, s, ip)))
        return;
    uint64_t t[STEADY_WORDS];
    const bool inl = cbt_likely(s->n <= CBT_EV_INLINE1D);
    uint16_t words = steady_tail(d, s, t, true, inl);
    bool locked = write_lock();
    if (inl) {
        cbt_tp(c, t, words, ip);
    } else {
        struct cbt_ev_rec r; /* what cs reads, alone (as for bs above) */
        r.tail = t;
        r.tail_words = words;
        r.count = (uint32_t)s->n;
        r.nattrs = 1;
        r.attrs = s->attrs;
        r.dsts = (const uint64_t *)s->list;
        r.srcs = (const uint64_t *)s->srcs;
        r.sizes = (const uint64_t *)s->sizes;
        cbt_tp(cs, &r, ip);
    }
    write_unlock(locked);
}

/* ---- the other events of a batch ---- */

void cbt_record_end(const struct cbt_ev_batch *b, void *caller)
{
    if (!cbt_tp_enabled(batch_end))
        return;
    bool locked = write_lock();
    cbt_tp(batch_end, b, caller);
    write_unlock(locked);
}

void cbt_record_finding(const struct cbt_ev_finding *f, void *caller)
{
    if (!cbt_tp_enabled(finding))
        return;
    bool locked = write_lock();
    cbt_tp(finding, f, caller);
    write_unlock(locked);
}

/* ---- the short stack (CUBATCHTRACE_STACK=N) ---- */

/*
 * The walk is glibc's backtrace(): it unwinds with the DWARF call-frame
 * information (libgcc_s), so it needs no frame pointer in the program or
 * the libraries between it and the driver, and it never reads past a frame
 * it cannot describe (a frame-pointer walk, __builtin_frame_address, would
 * follow garbage where a library is built without them).  Its first call
 * dlopens libgcc_s, which must not happen inside a batch (a batch may be
 * made where taking the loader's lock is not safe): cbt_record_stack_init
 * calls it once, with the configuration, before the first batch.  The
 * shim's own frames (this function, the door) are left out: the stack
 * starts at the batch's caller.
 */
static const void *own_base; /* this library's load address (dladdr) */

void cbt_record_stack_init(void)
{
    void *one[2];
    (void)backtrace(one, 2);
    Dl_info info;
    if (dladdr((void *)cbt_record_stack_init, &info))
        own_base = info.dli_fbase;
}

__attribute__((noinline)) void cbt_record_stack(unsigned depth, void *caller)
{
    if (!cbt_tp_enabled(stack))
        return;
    void *raw[CBT_EV_STACK_MAX + 5]; /* the shim's own frames (this one, cbt_batch, the door) and some slack */
    int n = backtrace(raw, (int)(depth + 5)); /* each frame walked costs: no more than needed */
    int i = 0;
    while (i < n && raw[i] != caller)
        i++;
    if (i == n) { /* the caller not seen (a tail call): from the first frame outside this library */
        Dl_info info;
        for (i = 0; i < n && dladdr(raw[i], &info) && info.dli_fbase == own_base; i++)
            ;
    }
    uint64_t frames[CBT_EV_STACK_MAX];
    uint8_t k = 0;
    for (; i < n && k < depth; i++)
        frames[k++] = (uint64_t)(uintptr_t)raw[i];
    if (!k)
        return;
    bool locked = write_lock();
    cbt_tp(stack, cbt_tid(), frames, k, caller);
    write_unlock(locked);
}

/* ---- the calling thread's id, the clock ---- */

CBT_HOT static unsigned fork_generation;
static CBT_TLS int32_t tls_tid;
static CBT_TLS unsigned tls_tid_generation;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool fence_wanted; /* cbt_record_init ran: a forked child registers again */

static void record_init(void)
{
    fence_register();
    fence_wanted = true;
}

void cbt_record_init(void) { pthread_once(&init_once, record_init); }

/* In a forked child the thread that held the write lock is gone, the
 * thread ids are new, and the child's image has no fence registered. */
void cbt_record_after_fork_child(void)
{
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_init(&cbt_write_lock, NULL);
    __atomic_store_n(&writer_threads, tls_writer ? 1 : 0, __ATOMIC_RELAXED); /* the one thread a child has */
    __atomic_store_n(&writing_unlocked, 0, __ATOMIC_RELAXED);
    if (fence_wanted)
        fence_register();
}

CBT_HOT_FN int32_t cbt_tid(void)
{
    unsigned g = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    if (cbt_unlikely(!tls_tid || tls_tid_generation != g)) {
        tls_tid = (int32_t)syscall(SYS_gettid);
        tls_tid_generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    }
    return tls_tid;
}

uint64_t cbt_mono_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

CBT_HOT_FN uint64_t cbt_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
