/* SPDX-License-Identifier: MIT */
/*
 * GPU test client for the driver-API doors of cuMemcpy3DBatchAsync.
 *
 *   drv data DOOR          the data suite (cbt_gpu.h) through DOOR
 *   drv table DOOR [unmapped]
 *                          the accept/reject table of shared/facts/h200-driver.md,
 *                          one batch call per row, each from its own call site;
 *                          "unmapped" adds the 0xdead0000 row in-process (only
 *                          safe under CUBATCHTRACE_MODE=strict)
 *   drv crash DOOR         the 0xdead0000 row in a forked child; the parent
 *                          reports how the child ended (the driver kills it
 *                          with SIGSEGV unless the shim refuses the batch)
 *
 * DOOR: v2 / v2_ptsz      the exported cuMemcpy3DBatchAsync_v2(_ptsz), linked
 *       dlsym_v2 / dlsym_v1  dlsym(dlopen("libcuda.so.1"), "cuMemcpy3DBatchAsync_v2" / "cuMemcpy3DBatchAsync")
 *       gpa13000 / gpa12080 / gpa12080_ptsz
 *                          cuGetProcAddress_v2("cuMemcpy3DBatchAsync", 13000 or 12080, flags 0 or PTDS)
 *
 * Table rows print
 *   CASE <row> batch=<k> want=ok|iv|crash rc=<CUresult> failidx=<n|-> wantidx=<n|-> name=<text>
 * and the suite judges them (against the trace, the shim's stderr report or the facts).
 */
#define _GNU_SOURCE
#include <cudaTypedefs.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cbt_gpu.h"

/* cuda.h 13 declares only one of these per translation unit (the PTDS macro picks). */
extern CUresult cuMemcpy3DBatchAsync_v2(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
extern CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

typedef CUresult (*v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);

enum kind { K_V2, K_V2_PTSZ, K_PTR_V2, K_PTR_V1 };
struct drv_door {
    struct door d;
    enum kind kind;
};

static int door_call(const struct door *d, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, CUstream s)
{
    switch (((const struct drv_door *)d)->kind) {
    case K_V2:
        return cuMemcpy3DBatchAsync_v2(n, ops, 0, s);
    case K_V2_PTSZ:
        return cuMemcpy3DBatchAsync_v2_ptsz(n, ops, 0, s);
    case K_PTR_V2:
        return ((v2_fn)d->fn)(n, ops, 0, s);
    default:
        return ((v1_fn)d->fn)(n, ops, fail_idx, 0, s);
    }
}

/* Resolve DOOR (after cuInit). Exits with a CHECK line when it cannot. */
static struct drv_door resolve(const char *name)
{
    struct drv_door r;
    memset(&r, 0, sizeof r);
    r.d.name = name;
    r.d.call = door_call;
    if (!strcmp(name, "v2")) {
        r.kind = K_V2;
    } else if (!strcmp(name, "v2_ptsz")) {
        r.kind = K_V2_PTSZ;
    } else if (!strcmp(name, "dlsym_v2") || !strcmp(name, "dlsym_v1")) {
        int v1 = !strcmp(name, "dlsym_v1");
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        r.d.fn = h ? dlsym(h, v1 ? "cuMemcpy3DBatchAsync" : "cuMemcpy3DBatchAsync_v2") : NULL;
        check("resolve", r.d.fn != NULL, "dlsym(libcuda.so.1, %s) = %p", v1 ? "cuMemcpy3DBatchAsync" : "cuMemcpy3DBatchAsync_v2",
              r.d.fn);
        r.kind = v1 ? K_PTR_V1 : K_PTR_V2;
        r.d.has_fail_idx = v1;
    } else if (!strcmp(name, "gpa13000") || !strcmp(name, "gpa12080") || !strcmp(name, "gpa12080_ptsz")) {
        int ver = strstr(name, "12080") ? 12080 : 13000;
        cuuint64_t flags = strstr(name, "ptsz") ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void *fn = NULL;
        CUresult rc = cuGetProcAddress("cuMemcpy3DBatchAsync", &fn, ver, flags, &st);
        check("resolve", rc == CUDA_SUCCESS && fn && st == CU_GET_PROC_ADDRESS_SUCCESS,
              "cuGetProcAddress_v2(cuMemcpy3DBatchAsync, %d, %llu) -> %s, %p, status %d", ver,
              (unsigned long long)flags, drv_err_name(rc), fn, (int)st);
        r.d.fn = fn;
        r.kind = ver == 12080 ? K_PTR_V1 : K_PTR_V2;
        r.d.has_fail_idx = ver == 12080;
    } else {
        printf("CHECK resolve FAIL unknown door %s\n", name);
        exit(2);
    }
    if (r.kind >= K_PTR_V2 && !r.d.fn)
        exit(finish());
    return r;
}

/* ---------------------------------------------------------------- table */

/*
 * Each row calls from its own call site (a case of this switch), so that the
 * shim's stderr report, which reports a rule once per call site, reports every
 * row.  Built with -O0 so that the compiler keeps the sites apart.
 */
#define SITE(k)                                                              \
    case k:                                                                  \
        if (dd->kind == K_V2)                                                \
            return cuMemcpy3DBatchAsync_v2(n, ops, flags, s);                \
        if (dd->kind == K_V2_PTSZ)                                           \
            return cuMemcpy3DBatchAsync_v2_ptsz(n, ops, flags, s);           \
        if (dd->kind == K_PTR_V1)                                            \
            return ((v1_fn)dd->d.fn)(n, ops, fidx, flags, s);                \
        return ((v2_fn)dd->d.fn)(n, ops, flags, s);
#define SITE10(t) SITE(t##0) SITE(t##1) SITE(t##2) SITE(t##3) SITE(t##4) SITE(t##5) SITE(t##6) SITE(t##7) SITE(t##8) SITE(t##9)
#define MAX_SITES 80

__attribute__((noinline, optimize("O0"))) static CUresult site_call(int site, const struct drv_door *dd, size_t n,
                                                                    CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fidx,
                                                                    unsigned long long flags, CUstream s)
{
    switch (site) {
        SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7) SITE(8) SITE(9)
        SITE10(1) SITE10(2) SITE10(3) SITE10(4) SITE10(5) SITE10(6) SITE10(7)
    }
    return (CUresult)-1;
}

struct call {
    size_t n;
    CUDA_MEMCPY3D_BATCH_OP ops[3];
    int null_list;
    unsigned long long flags;
    CUstream stream;
};

static CUstream stream;
static CUdeviceptr dsrc, ddst, dbig, dlin, managed;
static void *pinned, *pageable;
static CUarray arr_f4, arr_u8, arr_f1a, arr_f1b;
static struct drv_door table_door;
static int rows;

#define PTR_BYTES 8192
#define OK 0
#define IV 1
#define CRASH 2
#define NOIDX SIZE_MAX

static struct call base_call(void)
{
    struct call c;
    memset(&c, 0, sizeof c);
    c.n = 1;
    c.ops[0] = ob_op(ob_ptr(dsrc, 0, 0), ob_ptr(ddst, 0, 0), 256, 4, 2, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    c.ops[1] = c.ops[0];
    c.ops[2] = c.ops[0];
    c.stream = stream;
    return c;
}

/* want_idx: what the 12.8 ABI must leave in *failIdx, or -2 when the facts do not say.
 * The facts file gives failIdx only for "a bad third op"; the values for the
 * other rows were measured by this suite on the H200 (driver 580.159.04,
 * 2026-11-29): the driver writes the op's index only for what it checks op by
 * op first (extent, rowLength, layerHeight, srcAccessOrder, flags, operand
 * type, element sizes); a NULL pointer and footprints past an allocation or
 * an array are found later and leave SIZE_MAX; a NULL stream leaves *failIdx
 * untouched (the caller's 12345). */
#define IDX_UNKNOWN ((size_t)-2)
#define UNTOUCHED ((size_t)12345)

static void row(const char *name, struct call c, int want, size_t want_idx)
{
    size_t idx = (size_t)12345;
    int r = rows++;
    if (r >= MAX_SITES) {
        printf("CHECK table FAIL more rows than call sites (%d)\n", MAX_SITES);
        g_failed = 1;
        return;
    }
    int k = g_batches++;
    CUresult rc = site_call(r, &table_door, c.n, c.null_list ? NULL : c.ops, &idx, c.flags, c.stream);
    cuStreamSynchronize(stream);
    printf("CASE %d batch=%d want=%s rc=%d", r, k, want == OK ? "ok" : want == IV ? "iv" : "crash", (int)rc);
    if (table_door.d.has_fail_idx) {
        printf(" failidx=%zu", idx);
        if (want_idx == IDX_UNKNOWN)
            printf(" wantidx=-");
        else
            printf(" wantidx=%zu", want_idx);
    } else {
        printf(" failidx=- wantidx=-");
    }
    printf(" name=%s\n", name);
    fflush(stdout);
}

static void table_setup(void)
{
    CUDA_ARRAY3D_DESCRIPTOR f4 = {64, 64, 4, CU_AD_FORMAT_FLOAT, 4, 0};
    CUDA_ARRAY3D_DESCRIPTOR u8 = {64, 64, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
    CUDA_ARRAY3D_DESCRIPTOR f1 = {64, 64, 4, CU_AD_FORMAT_FLOAT, 1, 0};
    if (cuMemAlloc(&dsrc, PTR_BYTES) || cuMemAlloc(&ddst, PTR_BYTES) || cuMemAlloc(&dbig, 64u << 20) ||
        cuMemAlloc(&dlin, 2 * 64 * 64 * 4 * 16) || cuMemAllocHost(&pinned, PTR_BYTES) ||
        cuMemAllocManaged(&managed, PTR_BYTES, CU_MEM_ATTACH_GLOBAL) || !(pageable = calloc(1, PTR_BYTES)) ||
        cuArray3DCreate(&arr_f4, &f4) || cuArray3DCreate(&arr_u8, &u8) || cuArray3DCreate(&arr_f1a, &f1) ||
        cuArray3DCreate(&arr_f1b, &f1))
        setup_fail("table buffers and arrays", "failed", __LINE__);
}

static void walk_table(int with_unmapped)
{
    struct call c;

    c = base_call();
    row("valid", c, OK, NOIDX);
    c = base_call();
    c.n = 0;
    row("numOps = 0", c, IV, NOIDX);
    c = base_call();
    c.null_list = 1;
    row("opList = NULL, numOps = 1", c, IV, NOIDX);
    c = base_call();
    c.flags = 1;
    row("flags = 1", c, IV, NOIDX);
    c = base_call();
    c.stream = NULL;
    row("stream NULL (0)", c, IV, UNTOUCHED);
    c = base_call();
    c.stream = CU_STREAM_LEGACY;
    row("stream CU_STREAM_LEGACY (0x1)", c, IV, NOIDX);
    c = base_call();
    c.stream = CU_STREAM_PER_THREAD;
    row("stream CU_STREAM_PER_THREAD (0x2)", c, OK, NOIDX);

    c = base_call();
    c.ops[0].extent.width = 0;
    row("extent width = 0", c, IV, 0);
    c = base_call();
    c.ops[0].extent.depth = 0;
    row("extent depth = 0", c, IV, 0);
    c = base_call();
    c.ops[0].src.op.ptr.rowLength = 100;
    row("src rowLength 100 < width 256", c, IV, 0);
    c = base_call();
    c.ops[0].src.op.ptr.rowLength = 512;
    row("src rowLength 512 >= width", c, OK, NOIDX);
    c = base_call();
    c.ops[0].dst.op.ptr.layerHeight = 2;
    row("dst layerHeight 2 < height 4", c, IV, 0);

    static const unsigned bad_orders[] = {0, 4, 7};
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        c = base_call();
        c.ops[0].srcAccessOrder = (CUmemcpySrcAccessOrder)bad_orders[i];
        snprintf(name, sizeof name, "srcAccessOrder %u", bad_orders[i]);
        row(name, c, IV, 0);
    }
    c = base_call();
    c.ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    row("srcAccessOrder DURING_API_CALL on device memory", c, OK, NOIDX);
    c = base_call();
    c.ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    row("srcAccessOrder ANY on device memory", c, OK, NOIDX);

    c = base_call();
    c.ops[0].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    row("op flags 1 (PREFER_OVERLAP_WITH_COMPUTE)", c, OK, NOIDX);
    c = base_call();
    c.ops[0].flags = 2;
    row("op flags 2", c, IV, 0);
    c = base_call();
    c.ops[0].flags = 0x80;
    row("op flags 0x80", c, IV, 0);

    c = base_call();
    c.ops[0].src.type = (CUmemcpy3DOperandType)0;
    row("src operand type 0", c, IV, 0);
    c = base_call();
    c.ops[0].src.type = (CUmemcpy3DOperandType)3;
    row("src operand type 3", c, IV, 0);
    c = base_call();
    c.ops[0].src.op.ptr.ptr = 0;
    row("src ptr = 0", c, IV, NOIDX);
    if (with_unmapped) {
        c = base_call();
        c.ops[0].src.op.ptr.ptr = 0xdead0000;
        row("src ptr = 0xdead0000 (unmapped host address)", c, CRASH, IDX_UNKNOWN);
    }

    static const struct {
        const char *name;
        int type, id;
    } hints[] = {{"locHint type DEVICE id 0", CU_MEM_LOCATION_TYPE_DEVICE, 0},
                 {"locHint type 9", 9, 0},
                 {"locHint type 99", 99, 0},
                 {"locHint type DEVICE id 77", CU_MEM_LOCATION_TYPE_DEVICE, 77}};
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        c = base_call();
        c.ops[0].src.op.ptr.locHint.type = (CUmemLocationType)hints[i].type;
        c.ops[0].src.op.ptr.locHint.id = hints[i].id;
        c.ops[0].dst.op.ptr.locHint = c.ops[0].src.op.ptr.locHint;
        row(hints[i].name, c, OK, NOIDX);
    }

    static const struct {
        const char *name;
        CUmemcpySrcAccessOrder order;
    } orders[] = {{"STREAM", CU_MEMCPY_SRC_ACCESS_ORDER_STREAM},
                  {"DURING_API_CALL", CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL},
                  {"ANY", CU_MEMCPY_SRC_ACCESS_ORDER_ANY}};
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        c = base_call();
        c.ops[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pinned;
        c.ops[0].srcAccessOrder = orders[i].order;
        snprintf(name, sizeof name, "H2D from pinned host, %s", orders[i].name);
        row(name, c, OK, NOIDX);
        c.ops[0].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)pageable;
        snprintf(name, sizeof name, "H2D from pageable malloc, %s", orders[i].name);
        row(name, c, OK, NOIDX);
    }

    c = base_call();
    c.ops[0].dst.op.ptr.ptr = managed;
    c.ops[0].dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    c.ops[0].dst.op.ptr.locHint.id = 0;
    row("D2managed with locHint DEVICE", c, OK, NOIDX);

    c = base_call();
    c.ops[0] = ob_op(ob_ptr(dbig + (16u << 20), 0, 0), ob_ptr(dbig + (40u << 20), 0, 0), 1u << 20, 1, 1,
                     CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    row("D2D 1 MiB inside a 64 MiB allocation", c, OK, NOIDX);
    c = base_call();
    c.ops[0].src.op.ptr.ptr = dsrc + PTR_BYTES - 1024; /* footprint 2048 */
    row("D2D whose footprint runs past the end of the device allocation", c, IV, NOIDX);

    c = base_call();
    c.n = 2;
    row("two ops whose destinations overlap", c, OK, NOIDX);
    for (size_t bad = 0; bad < 3; bad++) {
        char name[64];
        c = base_call();
        c.n = 3;
        c.ops[bad].extent.width = 0;
        snprintf(name, sizeof name, "one bad op (index %zu) of three", bad);
        row(name, c, IV, bad);
    }

    c = base_call();
    c.ops[0] = ob_op(ob_ptr(dlin, 0, 0), ob_array(arr_f4, 0, 0, 0), 64, 64, 4,
                     CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    row("device -> float4 CUDA array 64x64x4", c, OK, NOIDX);
    c.ops[0].extent.width = 65;
    row("device -> float4 array, width 65 (past the array)", c, IV, NOIDX);
    c.ops[0].extent.width = 64;
    c.ops[0].dst.op.array.offset.x = 1;
    row("device -> float4 array, offset.x 1 with width 64", c, IV, NOIDX);
    c = base_call();
    c.ops[0] = ob_op(ob_array(arr_u8, 0, 0, 0), ob_array(arr_f1a, 0, 0, 0), 64, 64, 4,
                     CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    row("u8 array -> float array (element sizes differ)", c, IV, 0);
    c.ops[0] = ob_op(ob_array(arr_f1a, 0, 0, 0), ob_array(arr_f1b, 0, 0, 0), 64, 64, 4,
                     CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    row("float array -> float array", c, OK, NOIDX);
}

/* ---------------------------------------------------------------- crash */

static int crash(const char *door_name)
{
    fflush(stdout);
    pid_t pid = fork(); /* before any CUDA call: the child initialises CUDA itself */
    if (pid < 0) {
        check("crash-fork", 0, "fork failed");
        return finish();
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        printf("CHILDPID %d\n", (int)getpid());
        fflush(stdout);
        CUstream s;
        drv_setup(&s);
        struct drv_door dd = resolve(door_name);
        CUdeviceptr dst;
        if (cuMemAlloc(&dst, PTR_BYTES))
            _exit(4);
        CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(0xdead0000, 0, 0), ob_ptr(dst, 0, 0), 256, 4, 2,
                                          CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        size_t idx = 0;
        int rc = dd.d.call(&dd.d, 1, &op, &idx, s);
        printf("CHILD returned rc=%d\n", rc);
        fflush(stdout);
        _exit(3);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        printf("CRASH signal=%d\n", WTERMSIG(st));
    else
        printf("CRASH exit=%d\n", WEXITSTATUS(st));
    check("unmapped-source-kills-child-with-SIGSEGV", WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status 0x%x", st);
    return finish();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) {
        fprintf(stderr, "usage: %s data|table|crash DOOR [unmapped]\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "crash"))
        return crash(argv[2]);
    printf("PID %d\n", (int)getpid());
    CUstream s;
    const struct backend *be = drv_setup(&s);
    struct drv_door dd = resolve(argv[2]);
    if (!strcmp(argv[1], "data")) {
        data_suite(be, &dd.d, s);
    } else if (!strcmp(argv[1], "table")) {
        stream = s;
        table_door = dd;
        table_setup();
        walk_table(argc > 3 && !strcmp(argv[3], "unmapped"));
        printf("ROWS %d\n", rows);
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    return finish();
}
