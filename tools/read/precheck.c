/* SPDX-License-Identifier: MIT */
/*
 * A local trace's framing, checked before libbabeltrace2 reads it (see
 * precheck.h).  CTF 1.8, section 7.3 ("Metadata packet"): a packetized
 * metadata file is a run of packets, each a 37-byte header (magic
 * 0x75D11D57 in the writer's byte order, the trace's uuid, checksum,
 * content and packet sizes in bits, compression, encryption and checksum
 * schemes, major 1, minor 8) and its text, the packet padded to its size.
 * LTTng's stream packets begin with its packet header (magic 0xC1FC1FC1,
 * uuid, stream id and instance id: 32 bytes) and context (timestamps, then
 * content and packet sizes in bits at bytes 48 and 56, ..., cpu_id ending at
 * byte 84); that layout is checked only where the metadata declares it.
 * The metadata is mapped; of a stream file only the packet headers are
 * read.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/precheck.h"

#define META_MAGIC 0x75D11D57u
#define META_HEADER 37u
#define STREAM_MAGIC 0xC1FC1FC1u
#define STREAM_HEADER 84u /* LTTng's packet header and context, cpu_id included */

static uint32_t get32(const uint8_t *p, bool be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t get64(const uint8_t *p, bool be)
{
    uint64_t hi = get32(p + (be ? 0 : 4), be), lo = get32(p + (be ? 4 : 0), be);
    return hi << 32 | lo;
}

/* LTTng's packet header and context as lttng-ust and lttng-modules declare them. */
/* Packet n at byte off (p, with left bytes to the file's end): its header
 * whole and its magic right; false with why said when not. */
static bool packet_start(const uint8_t *p, size_t left, unsigned n, size_t off, unsigned header, uint32_t magic,
                         const char *what, bool be, char *why, size_t whylen)
{
    if (left < header) {
        snprintf(why, whylen, "packet %u at byte %zu: its header is cut (%zu of %u bytes; the file ends there)", n,
                 off, left, header);
        return false;
    }
    if (get32(p, be) != magic) {
        snprintf(why, whylen, "packet %u at byte %zu: no %s magic (0x%08" PRIx32 ")", n, off, what, get32(p, be));
        return false;
    }
    return true;
}

/* Its content and packet sizes (bits; whole bytes for both when bytes) in
 * order, and the packet within the file's left bytes; false with why said. */
static bool packet_sizes(uint64_t content, uint64_t size, bool bytes, unsigned header, size_t left, unsigned n,
                         size_t off, char *why, size_t whylen)
{
    if (size % 8 || (bytes && content % 8) || content < header * 8ull || content > size) {
        snprintf(why, whylen, "packet %u at byte %zu: sizes make no sense (content %" PRIu64 " bits, packet %" PRIu64
                 " bits)", n, off, content, size);
        return false;
    }
    if (size / 8 > left) {
        snprintf(why, whylen, "packet %u at byte %zu is cut: it declares %" PRIu64 " bytes, the file ends %zu bytes in",
                 n, off, size / 8, left);
        return false;
    }
    return true;
}

static const char *const lttng_decls[] = {
    "uint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n",
    "struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n\tuint64_clock_monotonic_t "
    "timestamp_end;\n\tuint64_t content_size;\n\tuint64_t packet_size;\n",
};

int cbt_precheck_metadata(const uint8_t *buf, size_t len, struct cbt_meta_frame *mf, char *why, size_t whylen)
{
    memset(mf, 0, sizeof(*mf));
    if (len >= 4 && get32(buf, true) == META_MAGIC)
        mf->big_endian = true;
    else if (len < 4 || get32(buf, false) != META_MAGIC) {
        if (len == 0) {
            snprintf(why, whylen, "empty");
            return -1;
        }
        goto layout; /* plain text metadata: babeltrace2's parser judges it */
    }
    mf->packetized = true;
    bool be = mf->big_endian;
    size_t off = 0;
    for (unsigned n = 1; off < len; n++) {
        const uint8_t *p = buf + off;
        if (!packet_start(p, len - off, n, off, META_HEADER, META_MAGIC, "metadata packet", be, why, whylen))
            return -1;
        if (n == 1)
            memcpy(mf->uuid, p + 4, 16);
        else if (memcmp(mf->uuid, p + 4, 16) != 0) {
            snprintf(why, whylen, "packet %u at byte %zu: another trace's uuid than packet 1's", n, off);
            return -1;
        }
        uint32_t content = get32(p + 24, be), size = get32(p + 28, be);
        if (p[32] || p[33] || p[34]) {
            snprintf(why, whylen, "packet %u at byte %zu: compressed, encrypted or checksummed (not supported)", n,
                     off);
            return -1;
        }
        if (p[35] != 1 || p[36] != 8) {
            snprintf(why, whylen, "packet %u at byte %zu: CTF version %u.%u, not 1.8", n, off, p[35], p[36]);
            return -1;
        }
        if (!packet_sizes(content, size, true, META_HEADER, len - off, n, off, why, whylen))
            return -1;
        off += size / 8;
    }
layout:
    mf->lttng_layout = true;
    for (size_t i = 0; i < sizeof(lttng_decls) / sizeof(lttng_decls[0]); i++)
        if (!memmem(buf, len, lttng_decls[i], strlen(lttng_decls[i])))
            mf->lttng_layout = false;
    return 0;
}

int cbt_precheck_stream(int fd, size_t len, const struct cbt_meta_frame *mf, char *why, size_t whylen)
{
    if (!mf->lttng_layout)
        return 0;
    bool be = mf->big_endian;
    size_t off = 0;
    for (unsigned n = 1; off < len; n++) {
        uint8_t p[STREAM_HEADER];
        size_t want = len - off < sizeof(p) ? len - off : sizeof(p);
        ssize_t got = pread(fd, p, want, (off_t)off);
        if (got < 0) {
            snprintf(why, whylen, "packet %u at byte %zu: %s", n, off, strerror(errno));
            return -1;
        }
        if (!packet_start(p, (size_t)got, n, off, STREAM_HEADER, STREAM_MAGIC, "CTF packet", be, why, whylen))
            return -1;
        if (mf->packetized && memcmp(mf->uuid, p + 4, 16) != 0) {
            snprintf(why, whylen, "packet %u at byte %zu: another trace's uuid than the metadata's", n, off);
            return -1;
        }
        uint64_t content = get64(p + 48, be), size = get64(p + 56, be);
        if (!packet_sizes(content, size, false, STREAM_HEADER, len - off, n, off, why, whylen))
            return -1;
        off += (size_t)(size / 8);
    }
    return 0;
}

/* Opens dir/name and runs check on it (the metadata mapped whole, a stream
 * file by its descriptor); 1 when it is not a regular file (skipped). */
static int check_file(const char *dir, const char *name, bool stream, struct cbt_meta_frame *mf, char *why,
                      size_t whylen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whylen, "%s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return 1;
    }
    char what[512] = "";
    int rc = 0;
    if (stream) /* a header read per packet: a long trace's pages are not all touched and kept */
        rc = cbt_precheck_stream(fd, (size_t)st.st_size, mf, what, sizeof(what));
    else if (st.st_size == 0)
        rc = cbt_precheck_metadata(NULL, 0, mf, what, sizeof(what));
    else {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            snprintf(what, sizeof(what), "%s", strerror(errno)), rc = -1;
        else {
            rc = cbt_precheck_metadata(m, (size_t)st.st_size, mf, what, sizeof(what));
            munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    if (rc < 0)
        snprintf(why, whylen, "%s: %s", name, what);
    return rc;
}

int cbt_precheck_trace(const char *dir, char *why, size_t whylen)
{
    struct cbt_meta_frame mf;
    if (check_file(dir, "metadata", false, &mf, why, whylen) != 0)
        return -1;
    if (!mf.lttng_layout)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* babeltrace2 says why */
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) /* babeltrace2 skips dot files too */
        if (de->d_name[0] != '.' && strcmp(de->d_name, "metadata") != 0)
            rc = check_file(dir, de->d_name, true, &mf, why, whylen) < 0 ? -1 : 0;
    closedir(d);
    return rc;
}
