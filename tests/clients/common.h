/* SPDX-License-Identifier: MIT */
/*
 * Shared set-up of the test clients: the driver calls they need, memory of
 * every kind, ops built from a host-side model of each buffer, and checking
 * the bytes that arrived.
 *
 * The clients reach the driver in different ways (linked, dlopen +
 * cuGetProcAddress), so every driver call here goes through the table `cc`,
 * which a client fills either from the linked symbols (common_direct.c) or
 * from a cuGetProcAddress it obtained itself (cc_load_gpa).  The batch itself
 * is never in the table: each client calls it through the door it tests.
 *
 * Everything a buffer should hold is tracked in a host "shadow", and every
 * copy is applied to the shadows by the same address arithmetic as the
 * documented semantics, so a client can check any sequence of batches by
 * reading the buffers back (device and array contents through one more
 * batch into pinned memory, so the clients also run on a real GPU).
 */
#ifndef CBT_TESTS_CLIENTS_COMMON_H
#define CBT_TESTS_CLIENTS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#undef cuGetProcAddress

/* The driver functions the clients use besides the batch. */
struct cc_driver {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*Array3DCreate)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
    CUresult (*ArrayDestroy)(CUarray);
};
extern struct cc_driver cc;
/* The context cc_setup() made current (other threads make it current themselves). */
extern CUcontext cc_ctx;

typedef CUresult (*cc_gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*cc_batch_v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*cc_batch_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);

/* Fill `cc` from the linked driver (common_direct.c). */
void cc_load_direct(void);
/* Fill `cc` through a cuGetProcAddress_v2 the client obtained (version 12000, flags 0). */
void cc_load_gpa(cc_gpa5_fn gpa);

/* Die with a message (exit status 2) when a set-up call fails. */
void cc_check(CUresult r, const char *what);
void cc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* cuInit, primary context of device 0 made current, one non-blocking stream. */
CUstream cc_setup(void);

/* "pid P" on stdout, flushed: the tests find each process's events by it. */
void cc_say_pid(void);

/* T threads, each making cc_ctx current, creating a stream and calling
 * body(stream); all joined before it returns. */
void cc_threads(size_t t, void (*body)(CUstream s));

/* ---- buffers with a host model of their contents ---- */

enum cc_kind { CC_DEVICE, CC_PINNED, CC_PAGEABLE, CC_MANAGED, CC_ARRAY };

struct cc_buf {
    enum cc_kind kind;
    size_t size;                 /* bytes */
    CUdeviceptr ptr;             /* pointer kinds */
    CUarray array;               /* CC_ARRAY */
    size_t w, h, d, elem;        /* CC_ARRAY: size in elements, bytes per element */
    unsigned char *shadow;       /* what the buffer should hold */
    int known;                   /* the shadow is the truth (written or filled through a copy) */
};

/* A buffer of `size` bytes (pointer kinds), zeroed in the model only. */
struct cc_buf *cc_buf_new(enum cc_kind kind, size_t size);
/* A w x h x d CUDA array of `channels` x `format`. */
struct cc_buf *cc_array_new(size_t w, size_t h, size_t d, CUarray_format format, unsigned channels);
void cc_buf_free(struct cc_buf *b);
/* Host kinds: write a pattern directly (and into the model). */
void cc_host_fill(struct cc_buf *b, unsigned seed);

/* ---- ops ---- */

/* A pointer operand at byte offset `off` of b, with pitches in elements. */
CUmemcpy3DOperand cc_ptr(const struct cc_buf *b, size_t off, size_t row_length, size_t layer_height);
/* An array operand at element offset (x, y, z). */
CUmemcpy3DOperand cc_arr(const struct cc_buf *b, size_t x, size_t y, size_t z);
CUDA_MEMCPY3D_BATCH_OP cc_op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h, size_t d);

/*
 * A batch as a client builds it: the ops, and for each op which buffers it
 * reads and writes (for the model).  cc_batch_apply() applies a batch the
 * driver accepted to the model.
 */
#define CC_MAX_OPS 64
struct cc_batch {
    size_t n;
    CUDA_MEMCPY3D_BATCH_OP ops[CC_MAX_OPS];
    struct cc_buf *src[CC_MAX_OPS], *dst[CC_MAX_OPS];
};
void cc_add(struct cc_batch *bt, struct cc_buf *src, CUmemcpy3DOperand s, struct cc_buf *dst,
            CUmemcpy3DOperand d, size_t w, size_t h, size_t depth);
void cc_batch_apply(const struct cc_batch *bt);
/* Bytes the batch copies (extent x element size), as the summary counts them. */
uint64_t cc_batch_bytes(const struct cc_batch *bt);

/* The client's totals, printed by cc_summary(): batches=N ops=M bytes=B. */
extern uint64_t cc_batches, cc_ops, cc_bytes;
/* Count a batch the driver accepted (and apply it to the model). */
void cc_accepted(const struct cc_batch *bt);
void cc_summary(const char *prefix);
/* n blocks of `block` bytes read back into `back` in reverse order of `in`
 * (block i of in is block n - 1 - i of back): 0 when every one arrived, else 1
 * and a line on stderr naming `who`. */
int cc_reversed_check(const char *who, const unsigned char *back, const unsigned char *in, size_t n, size_t block);
/* "WHO: steps N" on stderr: how many of this thread's batches took the
 * shim's steps, not its steady path (cubatchtrace_thread_steps), when the
 * shim is loaded. */
void cc_say_steps(const char *who);

/*
 * A door to make batches through: the v2 ABI, or the 12.8 ABI (failIdx).
 * cc_call() makes the call and, for the 12.8 ABI, leaves failIdx in *fail.
 */
struct cc_door {
    cc_batch_v2_fn v2;
    cc_batch_v1_fn v1;
};
CUresult cc_call(struct cc_door door, struct cc_batch *bt, CUstream s, size_t *fail);

/*
 * Read back every buffer the model knows through `door` (device, managed and
 * array contents via one batch into pinned memory; host memory directly) and
 * compare with the model.  Returns the number of mismatching buffers.
 */
int cc_verify(struct cc_door door, CUstream s, struct cc_buf **bufs, size_t nbufs);

/* The mixed batch of every operand kind: returns 0 when all bytes arrived. */
int cc_mixed_scenario(struct cc_door door, CUstream s);

/* Add `nops` ops copying block i of src to block nops-1-i of dst (`bytes` each). */
void cc_blocks(struct cc_batch *bt, struct cc_buf *src, struct cc_buf *dst, size_t nops, size_t bytes);

/* A simple checked batch of `nops` pinned -> pinned copies of `bytes` each. */
int cc_simple_batch(struct cc_door door, CUstream s, size_t nops, size_t bytes, unsigned seed);

#endif
