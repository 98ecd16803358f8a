/*
 * Internal interfaces of the preload library.  Every exported door (doors.c)
 * hands over to cbt_batch() (batch.c); the real driver is found once
 * (driver.c); what the shim learns about operands is operands.c; findings go
 * to the trace and, on request, to stderr (report.c).
 */
#ifndef CBT_SHIM_H
#define CBT_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#undef cuGetProcAddress
#undef cuMemcpy3DBatchAsync

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/validate.h>

#define CBT_EXPORT __attribute__((visibility("default")))
#define CBT_TLS __attribute__((tls_model("initial-exec"))) __thread
#define cbt_likely(x) __builtin_expect(!!(x), 1)
#define cbt_unlikely(x) __builtin_expect(!!(x), 0)

/* The two ABIs of the batch function. */
typedef CUresult (*cbt_batch_v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*cbt_batch_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
typedef CUresult (*cbt_gpa4_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*cbt_gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/*
 * The real driver's entry points the shim uses.  A NULL entry was not found.
 *
 * The shim's exported functions stand in for the definitions that come
 * after it (another interposer, or the program's own libcuda): they forward
 * to the `next_*` entries.  What cuGetProcAddress or dlsym on the driver
 * handed out is forwarded to exactly that (`batch`, `gpa4`, `gpa5`).
 */
struct cbt_real {
    void *handle;              /* dlopen handle of the real libcuda; NULL if not loaded */
    void *batch[CBT_API_COUNT_]; /* the four exported batch functions, by enum cbt_api */
    cbt_gpa4_fn gpa4;          /* cuGetProcAddress (4 arguments) */
    cbt_gpa5_fn gpa5;          /* cuGetProcAddress_v2 */
    /* What the exported functions of these names forward to: the next
     * definition after the shim, or the driver's own when there is none or
     * CUBATCHTRACE_LIBCUDA chose the driver.  NULL batch entries when the
     * driver could not be loaded: the batch doors then answer an error. */
    void *next_batch[CBT_API_COUNT_];
    cbt_gpa4_fn next_gpa4;
    cbt_gpa5_fn next_gpa5;
    bool chosen;               /* CUBATCHTRACE_LIBCUDA named the driver */
    CUresult (*pointer_get_attributes)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
    CUresult (*mem_get_address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*array3d_get_descriptor)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
    CUresult (*device_get_count)(int *);
    CUresult (*stream_get_ctx[2])(CUstream, CUcontext *);      /* [1]: _ptsz */
    CUresult (*stream_get_id[2])(CUstream, unsigned long long *);
    CUresult (*stream_is_capturing[2])(CUstream, CUstreamCaptureStatus *);
    CUresult (*ctx_get_device_v2)(CUdevice *, CUcontext);
    char error[256];           /* why the driver could not be loaded */
};

/* The real driver, found once (thread-safe; safe to call from any constructor). */
extern struct cbt_real cbt_real_table __attribute__((visibility("hidden")));
extern int cbt_real_state __attribute__((visibility("hidden")));
const struct cbt_real *cbt_real_slow(void);
static inline const struct cbt_real *cbt_real(void)
{
    if (cbt_likely(__atomic_load_n(&cbt_real_state, __ATOMIC_ACQUIRE) == 2))
        return &cbt_real_table;
    return cbt_real_slow();
}

/* The real dlsym (glibc's), found without going through the shim's own:
 * lookups made with it are from the shim's point of view. */
void *cbt_real_dlsym(void *handle, const char *name);
/* The addresses of glibc's dlsym and of the dlsym that comes after the shim
 * (another library's dlsym wrapper, else glibc's); also used by src/dlsym_stub.S. */
void *cbt_real_dlsym_fn(void);
void *cbt_next_dlsym_fn(void);
/* The definition of `name` that comes after the shim (RTLD_NEXT), or NULL;
 * never one of the shim's own. */
void *cbt_next_definition(const char *name);
/* Is `p` an address inside the shim itself? */
bool cbt_in_shim(const void *p);
/* What the shim's exported function `name` forwards to, given the driver's
 * function of that name (cbt_real's next_* rule; called while the driver loads). */
void *cbt_export_target(void *driver_fn, const char *name);

/* The one stderr line said when the real driver cannot be had (once per process). */
void cbt_warn_no_driver(const char *function);

/* Print one line on stderr, prefixed "cubatchtrace: ", at most once per `once` flag. */
void cbt_warn_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Configuration, read once with secure_getenv. */
enum cbt_mode { CBT_MODE_OBSERVE, CBT_MODE_OFF, CBT_MODE_STRICT };
struct cbt_config {
    enum cbt_mode mode;
    bool strict_hazards;  /* CUBATCHTRACE_STRICT=hazards */
    bool report_stderr;   /* CUBATCHTRACE_REPORT=stderr */
};
extern struct cbt_config cbt_config_table __attribute__((visibility("hidden")));
extern int cbt_config_ready __attribute__((visibility("hidden")));
const struct cbt_config *cbt_config_slow(void);
static inline const struct cbt_config *cbt_config(void)
{
    if (cbt_likely(__atomic_load_n(&cbt_config_ready, __ATOMIC_ACQUIRE)))
        return &cbt_config_table;
    return cbt_config_slow();
}

/* Set by the first batch once configuration is read and the provider loaded. */
extern int cbt_ready __attribute__((visibility("hidden")));
/* Strict mode or a stderr report: every batch is validated, listened to or not. */
extern bool cbt_always_validate __attribute__((visibility("hidden")));

/* The common path behind every door. fail_idx is non-NULL only for the 12.8 ABI. */
CUresult cbt_batch(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                   CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                   void *caller);

/* Map a pointer the driver handed out (by cuGetProcAddress or dlsym) to the
 * shim's wrapper for it; returns `p` itself when it is not one the shim hooks. */
void *cbt_wrap_proc(const char *symbol, void *p, int version, cuuint64_t flags, enum cbt_door door);

/* Tracing: load the provider on first use; true when any cubatchtrace event is enabled. */
void cbt_tracing_init(void);

/* operands.c: learn what the driver knows about every operand of a batch. */
void cbt_learn_operands(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                        struct cbt_operand_info *src, struct cbt_operand_info *dst);
/* The same, deduplicated: infos[idx[i].src] and infos[idx[i].dst] are op i's;
 * returns how many infos (at most 2n) were written. */
struct cbt_op_infos {
    uint32_t src, dst;
};
size_t cbt_learn_indexed(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                         struct cbt_op_infos *idx, struct cbt_operand_info *infos);
int cbt_device_count(const struct cbt_real *real);

/*
 * memwrap.c: the driver's memory-management functions, wrapped.  Each call
 * adds one to cbt_mem_generation before and after the real one, so what was
 * learned about memory kinds at another generation may be stale.
 */
extern uint64_t cbt_mem_generation __attribute__((visibility("hidden")));
extern int cbt_kind_cache_off __attribute__((visibility("hidden")));
/* Find the real functions in the driver just opened (driver.c, under its lock). */
void cbt_memwrap_load(void *handle);
/* The wrapper of the real function at `p`, or NULL when `p` is not one. */
void *cbt_memwrap_for_pointer(const void *p);
/* Is `name` an exported name the shim wraps (dlsym door)? */
bool cbt_memwrap_exports(const char *name);
/* Is `name` one cuGetProcAddress is asked for to get a wrapped function? */
bool cbt_memwrap_gpa_name(const char *name);
/* Memory may change unseen: no memory kind is kept across batches any more. */
void cbt_kind_cache_disable(void);
/* May memory kinds be kept across batches (not disabled, the shim interposes)? */
bool cbt_kind_cache_enabled(void);

/* report.c: one line on stderr per (rule, call site). */
void cbt_report_finding(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t num_ops,
                        uint64_t batch_id, enum cbt_api api, enum cbt_door door, void *caller);

#endif
