/* SPDX-License-Identifier: MIT */
/*
 * Naming a caller address: the lttng_ust_statedump:bin_info events of the
 * same process say which object was loaded where; the object's ELF symbol
 * table (read from this host's file system, when the file is there) gives the
 * function.  Only the few addresses that reach a printed table are named, so
 * this is not on the per-event path.
 */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callsite.h"

#define MAX_OBJS 65536
#define MAX_ELFS 64

struct obj {
    uint32_t host;
    int64_t vpid;
    uint64_t baddr, memsz;
    char *path;
    bool is_pic;
};

struct elf {
    char *path;
    bool ok;
    const uint8_t *map;
    size_t size;
    uint64_t first_load_vaddr;
    const Elf64_Sym *syms;
    size_t nsyms;
    const char *strs;
    size_t strsz;
};

struct cbt_objmap {
    struct obj *objs;
    size_t n, cap;
    struct elf elfs[MAX_ELFS];
    int nelfs;
};

struct cbt_objmap *cbt_objmap_new(void) { return calloc(1, sizeof(struct cbt_objmap)); }

void cbt_objmap_free(struct cbt_objmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->objs[i].path);
    free(m->objs);
    for (int i = 0; i < m->nelfs; i++) {
        if (m->elfs[i].map)
            munmap((void *)m->elfs[i].map, m->elfs[i].size);
        free(m->elfs[i].path);
    }
    free(m);
}

void cbt_objmap_add(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, uint64_t memsz,
                    const char *path, bool is_pic)
{
    for (size_t i = 0; i < m->n; i++) /* statedumps repeat: keep one */
        if (m->objs[i].baddr == baddr && m->objs[i].vpid == vpid && m->objs[i].host == host)
            return;
    if (m->n >= MAX_OBJS)
        return;
    if (m->n == m->cap) {
        size_t c = m->cap ? m->cap * 2 : 64;
        struct obj *o = realloc(m->objs, c * sizeof(*o));
        if (!o)
            return;
        m->objs = o;
        m->cap = c;
    }
    char *p = strdup(path ? path : "?");
    if (!p)
        return;
    m->objs[m->n++] = (struct obj){host, vpid, baddr, memsz, p, is_pic};
}

/* Load the symbol table of an ELF64 file (symtab, else dynsym); false when unreadable. */
static bool elf_load(struct elf *e, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return false;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return false;
    e->map = map;
    e->size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->size ||
        eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > e->size)
        return false;
    const Elf64_Phdr *ph = (const void *)(e->map + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD) {
            e->first_load_vaddr = ph[i].p_vaddr;
            break;
        }
    const Elf64_Shdr *sh = (const void *)(e->map + eh->e_shoff);
    for (int want = SHT_SYMTAB; want >= 0; want = want == SHT_SYMTAB ? SHT_DYNSYM : -1) {
        for (unsigned i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != (unsigned)want || sh[i].sh_link >= eh->e_shnum)
                continue;
            const Elf64_Shdr *ss = &sh[sh[i].sh_link];
            if (sh[i].sh_offset + sh[i].sh_size > e->size || ss->sh_offset + ss->sh_size > e->size)
                continue;
            e->syms = (const void *)(e->map + sh[i].sh_offset);
            e->nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
            e->strs = (const char *)(e->map + ss->sh_offset);
            e->strsz = ss->sh_size;
            return true;
        }
    }
    return true; /* no symbols: object+offset only */
}

static struct elf *elf_get(struct cbt_objmap *m, const char *path)
{
    for (int i = 0; i < m->nelfs; i++)
        if (strcmp(m->elfs[i].path, path) == 0)
            return m->elfs[i].ok ? &m->elfs[i] : NULL;
    if (m->nelfs >= MAX_ELFS)
        return NULL;
    struct elf *e = &m->elfs[m->nelfs];
    memset(e, 0, sizeof(*e));
    if (!(e->path = strdup(path)))
        return NULL;
    m->nelfs++;
    e->ok = elf_load(e, path);
    return e->ok ? e : NULL;
}

static const char *elf_function(const struct elf *e, uint64_t vaddr, uint64_t *off)
{
    const Elf64_Sym *best = NULL;
    for (size_t i = 0; i < e->nsyms; i++) {
        const Elf64_Sym *s = &e->syms[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || s->st_name >= e->strsz)
            continue;
        if (vaddr < s->st_value)
            continue;
        if (s->st_size ? vaddr < s->st_value + s->st_size : vaddr == s->st_value) {
            best = s;
            break;
        }
    }
    if (!best)
        return NULL;
    *off = vaddr - best->st_value;
    return e->strs + best->st_name;
}

const char *cbt_objmap_name(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, char *buf, size_t len)
{
    const struct obj *o = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const struct obj *c = &m->objs[i];
        if (c->host == host && c->vpid == vpid && addr >= c->baddr && addr - c->baddr < c->memsz) {
            o = c;
            break;
        }
    }
    if (!o) {
        snprintf(buf, len, "0x%" PRIx64, addr);
        return buf;
    }
    const char *base = strrchr(o->path, '/');
    base = base ? base + 1 : o->path;
    uint64_t rel = addr - o->baddr;
    struct elf *e = elf_get(m, o->path);
    uint64_t foff;
    const char *fn = NULL;
    if (e) {
        uint64_t vaddr = o->is_pic ? rel + e->first_load_vaddr : addr;
        fn = elf_function(e, vaddr, &foff);
    }
    if (fn)
        snprintf(buf, len, "%s+0x%" PRIx64 " (%s+0x%" PRIx64 ")", base, rel, fn, foff);
    else
        snprintf(buf, len, "%s+0x%" PRIx64, base, rel);
    return buf;
}
