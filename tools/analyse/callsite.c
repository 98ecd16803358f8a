/* SPDX-License-Identifier: MIT */
/*
 * Naming a caller address: the lttng_ust_statedump:bin_info events of the
 * same process say which object was loaded where, its build_id events which
 * build it was.  elfutils' libdwfl (libdw) does the rest, as eu-addr2line
 * does: it finds the object by build id (the debug directories'
 * .build-id/) or by its recorded path, refuses a file whose build id is not
 * the recorded one (the program was rebuilt since), follows .gnu_debuglink
 * and build id to separate debug information, and maps the address to its
 * symbol and its DWARF source line.  C++ symbols are demangled with the C++
 * ABI's own __cxa_demangle, from libstdc++ loaded when a first C++ name
 * needs it (linked to the tool, its loading and relocation would be paid by
 * every run, whatever the trace: bench/summary.sh).  A library made for this rather
 * than our own ELF reader: DWARF line tables, split debug files and build
 * ids are its trade.
 *
 * The trace is read offline: the debuginfod client that libdw may carry is
 * never asked (DEBUGINFOD_URLS is cleared in this process).
 * Only the few addresses that reach a printed table or finding are named,
 * so this is not on the per-event path; names are cached.
 */
#include "config.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/callsite.h"

/* The C++ ABI's demangler (libstdc++, <cxxabi.h>), found on first use. */
typedef char *demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static demangle_fn *demangler;

static void find_demangler(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    demangler = h ? (demangle_fn *)dlsym(h, "__cxa_demangle") : NULL;
}

/* NAME demangled (to be freed), or NULL when it is not a C++ name or cannot be. */
static char *demangle(const char *name)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    pthread_once(&once, find_demangler);
    int status = -1;
    char *dm = demangler ? demangler(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(dm);
        return NULL;
    }
    return dm;
}

#define MAX_OBJS 65536
#define MAX_PROCS 64
#define CACHE 1024

struct obj {
    uint32_t host;
    int64_t vpid;
    uint64_t baddr, memsz;
    char *path;
    bool is_pic;
    uint8_t *build_id;
    size_t build_id_len;
};

struct proc { /* one Dwfl per process whose addresses were named */
    uint32_t host;
    int64_t vpid;
    Dwfl *dwfl;
};

struct cached {
    bool used;
    uint32_t host;
    int64_t vpid;
    uint64_t addr;
    struct cbt_callsite cs;
};

struct cbt_objmap {
    struct obj **objs; /* each allocated once: libdwfl and the cache hold pointers to them */
    size_t n, cap;
    struct proc procs[MAX_PROCS];
    int nprocs, next_evict;
    struct cached *cache;
    bool cache_used;
};

struct cbt_objmap *cbt_objmap_new(void)
{
    struct cbt_objmap *m = calloc(1, sizeof(*m));
    if (m && !(m->cache = calloc(CACHE, sizeof(*m->cache)))) {
        free(m);
        return NULL;
    }
    return m;
}

void cbt_objmap_free(struct cbt_objmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->objs[i]->path);
        free(m->objs[i]->build_id);
        free(m->objs[i]);
    }
    free(m->objs);
    for (int i = 0; i < m->nprocs; i++)
        dwfl_end(m->procs[i].dwfl);
    free(m->cache);
    free(m);
}

static struct obj *obj_at(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->objs[i]->baddr == baddr && m->objs[i]->vpid == vpid && m->objs[i]->host == host)
            return m->objs[i];
    return NULL;
}

/* A process's objects changed: what was named of it may change too. */
static void forget(struct cbt_objmap *m, uint32_t host, int64_t vpid)
{
    for (int i = 0; i < m->nprocs; i++)
        if (m->procs[i].host == host && m->procs[i].vpid == vpid) {
            dwfl_end(m->procs[i].dwfl);
            m->procs[i] = m->procs[--m->nprocs];
            break;
        }
    if (m->cache_used) { /* statedumps come before any naming, mostly: then there is nothing to clear */
        memset(m->cache, 0, CACHE * sizeof(*m->cache));
        m->cache_used = false;
    }
}

void cbt_objmap_add(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, uint64_t memsz,
                    const char *path, bool is_pic)
{
    if (obj_at(m, host, vpid, baddr) || m->n >= MAX_OBJS) /* statedumps repeat: keep one */
        return;
    if (m->n == m->cap) {
        size_t c = m->cap ? m->cap * 2 : 64;
        struct obj **o = realloc(m->objs, c * sizeof(*o));
        if (!o)
            return;
        m->objs = o;
        m->cap = c;
    }
    struct obj *o = malloc(sizeof(*o));
    char *p = strdup(path ? path : "?");
    if (!o || !p) {
        free(o);
        free(p);
        return;
    }
    *o = (struct obj){host, vpid, baddr, memsz, p, is_pic, NULL, 0};
    m->objs[m->n++] = o;
    forget(m, host, vpid);
}

void cbt_objmap_build_id(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, const uint8_t *id,
                         size_t len)
{
    struct obj *o = obj_at(m, host, vpid, baddr);
    if (!o || o->build_id || !len || !(o->build_id = malloc(len)))
        return;
    memcpy(o->build_id, id, len);
    o->build_id_len = len;
    forget(m, host, vpid);
}

/* The object at its recorded path, when its build id is the recorded one
 * (not when the object was rebuilt since the trace was taken: its lines
 * would be another build's), or when none was recorded (need_id false);
 * else -1. */
static int elf_at_path(const struct obj *o, const char *modname, bool need_id, char **file_name, Elf **elfp)
{
    if (need_id && !(o && o->build_id))
        return -1;
    int fd = open(modname, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *id = NULL;
    ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    bool same = o && o->build_id ? n == (ssize_t)o->build_id_len && memcmp(id, o->build_id, (size_t)n) == 0 : elf != NULL;
    if (!same || !(*file_name = strdup(modname))) {
        if (elf)
            elf_end(elf);
        close(fd);
        return -1;
    }
    *elfp = elf;
    return fd;
}

/* The object by its recorded build id where distributions link the objects
 * they install, /usr/lib/debug/.build-id/xx/rest (where libdwfl's own
 * search, dwfl_build_id_find_elf, looks first); else -1.  Not libdwfl's
 * search itself: where that finds nothing it loads the debuginfod client
 * (libcurl and its TLS libraries, milliseconds a run), which this process
 * never asks anyway (DEBUGINFOD_URLS is cleared); and a trace read on
 * another machine than the one that took it is the common case of an
 * object missing from its recorded path. */
static int elf_by_build_id(const struct obj *o, char **file_name, Elf **elfp)
{
    static const char dir[] = "/usr/lib/debug/.build-id/";
    char path[sizeof dir + 3 + 2 * 64];
    if (!o || !o->build_id || o->build_id_len < 2 || o->build_id_len > 64)
        return -1;
    int p = snprintf(path, sizeof path, "%s%02x/", dir, o->build_id[0]);
    for (size_t i = 1; i < o->build_id_len; i++)
        p += snprintf(path + p, sizeof path - (size_t)p, "%02x", o->build_id[i]);
    return elf_at_path(o, path, true, file_name, elfp);
}

/* libdwfl's find_elf: the recorded path when it holds the recorded build,
 * else by build id (elf_by_build_id), else the recorded path of an object
 * recorded without a build id.  The path first: the same build id is the
 * same build.  The module's userdata is its struct obj. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
    (void)mod;
    (void)base;
    const struct obj *o = *userdata;
    int fd = elf_at_path(o, modname, true, file_name, elfp);
    if (fd < 0)
        fd = elf_by_build_id(o, file_name, elfp);
    if (fd < 0)
        fd = elf_at_path(o, modname, false, file_name, elfp);
    return fd;
}

/* The function the call is in, from DWARF: the innermost subprogram or
 * inlined subroutine (a call in an inlined function is named after it, not
 * after the function it was inlined into); its linkage name demangled, else
 * its name.  false when the object has no DWARF for the address. */
static bool dwarf_function(Dwfl_Module *mod, Dwarf_Addr pc, char *out, size_t len)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    bool found = false;
    for (int i = 0; i < n && !found; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
            continue;
        Dwarf_Attribute at;
        const char *name = NULL;
        if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &at) ||
            dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &at))
            name = dwarf_formstring(&at);
        if (!name && dwarf_attr_integrate(&scopes[i], DW_AT_name, &at))
            name = dwarf_formstring(&at);
        if (!name)
            continue;
        char *dm = demangle(name);
        snprintf(out, len, "%s", dm ? dm : name);
        free(dm);
        found = true;
    }
    free(scopes);
    return found;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

static Dwfl *proc_dwfl(struct cbt_objmap *m, uint32_t host, int64_t vpid)
{
    for (int i = 0; i < m->nprocs; i++)
        if (m->procs[i].host == host && m->procs[i].vpid == vpid)
            return m->procs[i].dwfl;
    unsetenv("DEBUGINFOD_URLS");
    Dwfl *d = dwfl_begin(&callbacks);
    if (!d)
        return NULL;
    dwfl_report_begin(d);
    for (size_t i = 0; i < m->n; i++) {
        const struct obj *o = m->objs[i];
        if (o->host != host || o->vpid != vpid || !o->memsz)
            continue;
        Dwfl_Module *mod = dwfl_report_module(d, o->path, o->baddr, o->baddr + o->memsz);
        void **ud = NULL;
        if (!mod)
            continue;
        dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
        if (ud)
            *ud = (void *)o;
        if (o->build_id)
            dwfl_module_report_build_id(mod, o->build_id, o->build_id_len, 0);
    }
    dwfl_report_end(d, NULL, NULL);
    int slot = m->nprocs < MAX_PROCS ? m->nprocs++ : (m->next_evict++ & 0x7fffffff) % MAX_PROCS;
    if (m->procs[slot].dwfl)
        dwfl_end(m->procs[slot].dwfl);
    m->procs[slot] = (struct proc){host, vpid, d};
    return d;
}

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static void lookup(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, struct cbt_callsite *cs)
{
    memset(cs, 0, sizeof(*cs));
    cs->addr = addr;
    const struct obj *o = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const struct obj *c = m->objs[i];
        if (c->host == host && c->vpid == vpid && addr >= c->baddr && addr - c->baddr < c->memsz) {
            o = c;
            break;
        }
    }
    if (!o)
        return;
    cs->object = o->path;
    cs->offset = addr - o->baddr;
    Dwfl *d = proc_dwfl(m, host, vpid);
    Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;
    if (!mod)
        return;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *fn = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
    if (fn) {
        char *dm = demangle(fn);
        copy(cs->function, sizeof(cs->function), dm ? dm : fn);
        free(dm);
        cs->function_offset = off;
    }
    /* a return address: the call is the instruction before it */
    Dwarf_Addr pc = addr ? addr - 1 : addr;
    char inner[sizeof(cs->function)];
    if (dwarf_function(mod, pc, inner, sizeof(inner)) && strcmp(inner, cs->function) != 0) {
        memcpy(cs->function, inner, sizeof(inner)); /* inlined: the symbol's offset is another function's */
        cs->function_offset = UINT64_MAX;
    }
    Dwfl_Line *ln = dwfl_module_getsrc(mod, pc);
    int line = 0;
    const char *src = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
    if (src && line > 0) {
        /* a name relative to the compilation's directory (a build in the source tree) made absolute */
        Dwarf_Addr bias;
        Dwarf_Die *cu = src[0] != '/' ? dwfl_module_addrdie(mod, pc, &bias) : NULL;
        Dwarf_Attribute at;
        const char *dir = cu && dwarf_attr(cu, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
        if (dir && dir[0] == '/')
            snprintf(cs->file, sizeof(cs->file), "%s/%s", dir, src);
        else
            copy(cs->file, sizeof(cs->file), src);
        char real[PATH_MAX]; /* "dir/../../x.c" as the file system names it, when it is there */
        if (cs->file[0] == '/' && strstr(cs->file, "/..") && realpath(cs->file, real) &&
            strlen(real) < sizeof(cs->file))
            memcpy(cs->file, real, strlen(real) + 1);
        cs->line = (unsigned)line;
    }
}

void cbt_callsite_lookup(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, struct cbt_callsite *cs)
{
    size_t h = (size_t)((addr * 0x9E3779B97F4A7C15ull) ^ (uint64_t)vpid ^ ((uint64_t)host << 40)) % CACHE;
    struct cached *c = &m->cache[h];
    if (c->used && c->addr == addr && c->vpid == vpid && c->host == host) {
        *cs = c->cs;
        return;
    }
    lookup(m, host, vpid, addr, cs);
    *c = (struct cached){true, host, vpid, addr, *cs};
    m->cache_used = true;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

const char *cbt_callsite_format(const struct cbt_callsite *cs, char *buf, size_t len)
{
    if (!cs->object)
        snprintf(buf, len, "0x%" PRIx64, cs->addr);
    else if (cs->line && cs->function[0])
        snprintf(buf, len, "%s:%u (%s, %s+0x%" PRIx64 ")", base_name(cs->file), cs->line, cs->function,
                 base_name(cs->object), cs->offset);
    else if (cs->line)
        snprintf(buf, len, "%s:%u (%s+0x%" PRIx64 ")", base_name(cs->file), cs->line, base_name(cs->object),
                 cs->offset);
    else if (cs->function[0] && cs->function_offset != UINT64_MAX)
        snprintf(buf, len, "%s+0x%" PRIx64 " (%s+0x%" PRIx64 ")", base_name(cs->object), cs->offset, cs->function,
                 cs->function_offset);
    else if (cs->function[0])
        snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", base_name(cs->object), cs->offset, cs->function);
    else
        snprintf(buf, len, "%s+0x%" PRIx64, base_name(cs->object), cs->offset);
    return buf;
}

const char *cbt_objmap_name(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, char *buf, size_t len)
{
    struct cbt_callsite cs;
    cbt_callsite_lookup(m, host, vpid, addr, &cs);
    return cbt_callsite_format(&cs, buf, len);
}

/* ---- the short stack (cubatchtrace:stack) and --skip-frames ---- */

static char **skipped;
static size_t nskipped;

void cbt_callsite_skip(const char *lib)
{
    char **n = realloc(skipped, (nskipped + 1) * sizeof *n);
    if (!n || !(n[nskipped] = strdup(lib)))
        return;
    skipped = n;
    nskipped++;
}

bool cbt_callsite_skipping(void) { return nskipped > 0; }

/* name is lib, or lib and a version ("libfoo.so" names libfoo.so.1.2) */
static bool names(const char *name, const char *lib)
{
    size_t n = strlen(lib);
    return strncmp(name, lib, n) == 0 && (name[n] == 0 || name[n] == '.');
}

static bool skipped_object(const char *path)
{
    const char *b = base_name(path);
    static const char *const always[] = {"libcubatchtrace.so", "libcuda.so", "libcudart.so"};
    for (size_t i = 0; i < sizeof always / sizeof *always; i++)
        if (names(b, always[i]))
            return true;
    for (size_t i = 0; i < nskipped; i++)
        if (names(b, base_name(skipped[i])))
            return true;
    return false;
}

uint64_t cbt_callsite_pick(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t caller, const uint64_t *stack,
                           unsigned n)
{
    if (!nskipped || !n)
        return caller;
    for (unsigned i = 0; i < n; i++) {
        struct cbt_callsite cs;
        cbt_callsite_lookup(m, host, vpid, stack[i], &cs);
        if (!cs.object || !skipped_object(cs.object))
            return stack[i];
    }
    return caller; /* every frame recorded in those libraries: the direct caller still */
}

const char *cbt_callsite_stack(struct cbt_objmap *m, uint32_t host, int64_t vpid, const uint64_t *stack, unsigned n,
                               char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = 0;
    for (unsigned i = 1; i < n && at + 1 < len; i++) {
        char one[1024];
        int k = snprintf(buf + at, len - at, "%s%s", i > 1 ? " <- " : "",
                         cbt_objmap_name(m, host, vpid, stack[i], one, sizeof one));
        if (k < 0)
            break;
        at += (size_t)k < len - at ? (size_t)k : len - at - 1;
    }
    return buf;
}
