/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): a local trace's framing checked before
 * libbabeltrace2 is handed it (precheck.c).  babeltrace2 2.0.4's
 * source.ctf.fs loops forever on a packetized `metadata` file cut inside a
 * packet; this refuses such a trace at once, naming the file and the damage.
 * Only the framing is checked (CTF 1.8 metadata packet headers; the stream
 * files' packet headers where the metadata declares LTTng's layout): what
 * passes is for libbabeltrace2 to decode, and the guard still watches it.
 */
#ifndef CBT_PRECHECK_H
#define CBT_PRECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the metadata tells about the stream files. */
struct cbt_meta_frame {
    bool packetized;   /* CTF 1.8 metadata packets (else plain text) */
    bool big_endian;   /* the packets' byte order */
    bool lttng_layout; /* the stream packets begin with LTTng's header and context */
    uint8_t uuid[16];  /* the packets' uuid (packetized only) */
};

/* 0 when the metadata's framing holds (fills *mf), else -1 with the damage in why. */
int cbt_precheck_metadata(const uint8_t *buf, size_t len, struct cbt_meta_frame *mf, char *why, size_t whylen);
/* 0 when the packets of a stream file (fd, len bytes long) are whole, else -1
 * with the damage in why.  Only each packet's header is read (pread). */
int cbt_precheck_stream(int fd, size_t len, const struct cbt_meta_frame *mf, char *why, size_t whylen);
/* The trace directory `dir` (its metadata and stream files): 0 when it may be
 * handed to libbabeltrace2, else -1 with "FILE: damage" in why. */
int cbt_precheck_trace(const char *dir, char *why, size_t whylen);

#endif
