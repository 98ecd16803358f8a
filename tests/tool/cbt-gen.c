/*
 * cbt-gen: emit synthetic cubatchtrace events through the real tracepoint
 * provider, so that tests know the totals a summary must find and the
 * benchmark gets traces of any size.  No CUDA involved.
 *
 *   cbt-gen [--exit N] [--raise SIG] [--mix OPS] [--hop] [--pidfile F] SPEC...
 *
 * Each SPEC is a comma-separated list of key=value describing `n` identical
 * batches (see usage()).  Batches get ids 0, 1, 2... in order.
 */
#include "config.h"

#define LTTNG_UST_TRACEPOINT_DEFINE
#include "cubatchtrace_tp.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct cbt_tp_ops ops;
static uint64_t next_batch_id;
static int hop; /* --hop: change CPU between the events of a batch (tests pairing across streams) */

static void hop_cpu(void)
{
    static int cpu;
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2)
        return;
    cpu = (cpu + 1) % (int)n;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void usage(void)
{
    fputs("usage: cbt-gen [--exit N] [--raise SIG] [--mix OPS] [--hop] [--pidfile F] SPEC...\n"
          "SPEC: key=value[,key=value...], keys:\n"
          "  n ops numops api door outcome result src dst srcdev dstdev srctype dsttype order bytes\n"
          "  driver_ns stream stream_id oplist site finding finding_op\n"
          "names are the catalogue's (catalog.h); numbers are accepted too\n",
          stderr);
    exit(2);
}

typedef const char *(*namefn)(unsigned);

static unsigned parse_enum(const char *key, const char *v, namefn fn)
{
    char *end;
    unsigned long n = strtoul(v, &end, 0);
    if (*v && !*end)
        return (unsigned)n;
    for (unsigned i = 0; i < 1024; i++) {
        const char *nm = fn(i);
        if (nm && strcmp(nm, v) == 0)
            return i;
    }
    fprintf(stderr, "cbt-gen: %s=%s: unknown name\n", key, v);
    exit(2);
}

static const char *rule_name(unsigned v)
{
    const struct cbt_rule_info *r = cbt_rule(v);
    return r ? r->name : NULL;
}

struct spec {
    uint64_t n, ops, numops, bytes, driver_ns, stream, stream_id, oplist;
    unsigned api, door, outcome, result, src, dst, srctype, dsttype, order, site;
    int srcdev, dstdev, finding, finding_op;
    int numops_set;
};

/* two distinct call sites the tests can name */
__attribute__((noinline)) void gen_site_a(const struct spec *s);
__attribute__((noinline)) void gen_site_b(const struct spec *s);

static void emit(const struct spec *s, void *caller)
{
    struct cbt_tp_batch b;
    memset(&b, 0, sizeof(b));
    b.batch_id = next_batch_id++;
    b.api = (uint8_t)s->api;
    b.door = (uint8_t)s->door;
    b.outcome = (uint8_t)s->outcome;
    b.capture = CBT_CAPTURE_NONE;
    b.num_ops = s->numops_set ? s->numops : s->ops;
    b.op_list = s->oplist;
    b.stream = s->stream;
    b.stream_id = s->stream_id;
    b.context = 0xc0;
    b.device = 0;
    b.result = s->result;
    b.fail_idx = UINT64_MAX;
    b.driver_ns = s->driver_ns;
    b.caller = (uint64_t)(uintptr_t)caller;
    b.tid = (uint32_t)syscall(SYS_gettid);
    b.validated = 1;
    b.findings = s->finding >= 0;

    if (s->finding >= 0) {
        struct cbt_tp_finding f = {
            .batch_id = b.batch_id, .rule = (uint16_t)s->finding,
            .severity = (uint8_t)cbt_rule((unsigned)s->finding)->severity, .side = CBT_SIDE_DST,
            .op = s->finding_op < 0 ? UINT64_MAX : (uint64_t)s->finding_op, .other_op = UINT64_MAX,
            .value = 1, .limit = 0, .caller = b.caller, .tid = b.tid,
        };
        lttng_ust_tracepoint(cubatchtrace, finding, &f, caller);
    }
    uint64_t first = 0, nops = s->oplist ? s->ops : 0; /* a NULL op list has no ops to record */
    do {
        uint64_t left = nops - first;
        ops.batch_id = b.batch_id;
        ops.first = first;
        ops.count = (uint32_t)(left > CBT_TP_OPS_PER_EVENT ? CBT_TP_OPS_PER_EVENT : left);
        for (uint32_t i = 0; i < ops.count; i++) {
            ops.src_type[i] = (uint8_t)s->srctype;
            ops.dst_type[i] = (uint8_t)s->dsttype;
            ops.src_mem[i] = (uint8_t)s->src;
            ops.dst_mem[i] = (uint8_t)s->dst;
            ops.src_device[i] = s->srcdev;
            ops.dst_device[i] = s->dstdev;
            ops.src_addr[i] = 0x7f0000000000ull + (first + i) * 0x10000;
            ops.dst_addr[i] = 0x7e0000000000ull + (first + i) * 0x10000;
            ops.width[i] = s->bytes;
            ops.height[i] = 1;
            ops.depth[i] = 1;
            ops.access_order[i] = (uint8_t)s->order;
            ops.op_flags[i] = 0;
            ops.elem_size[i] = 1;
            ops.bytes[i] = s->bytes;
        }
        if (hop)
            hop_cpu();
        if (first == 0)
            lttng_ust_tracepoint(cubatchtrace, batch, &b, &ops, caller);
        else
            lttng_ust_tracepoint(cubatchtrace, batch_ops, &ops, caller);
        first += ops.count;
    } while (first < nops);
}

void gen_site_a(const struct spec *s) { emit(s, (void *)((uintptr_t)&gen_site_a + 1)); }
void gen_site_b(const struct spec *s) { emit(s, (void *)((uintptr_t)&gen_site_b + 1)); }

static void parse_spec(char *arg, struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->n = 1;
    s->ops = 1;
    s->bytes = 4096;
    s->driver_ns = 1000;
    s->stream = 0x1000;
    s->stream_id = 7;
    s->oplist = 0x5000;
    s->api = CBT_API_V2;
    s->door = CBT_DOOR_SYMBOL;
    s->outcome = CBT_OUTCOME_FORWARDED;
    s->result = CBT_CU_SUCCESS;
    s->src = s->dst = CBT_MEM_DEVICE;
    s->srctype = s->dsttype = CBT_OPERAND_POINTER;
    s->order = CBT_ORDER_STREAM;
    s->finding = -1;
    s->finding_op = 0;
    char *save = NULL;
    for (char *kv = strtok_r(arg, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v)
            usage();
        *v++ = 0;
        if (!strcmp(kv, "n")) s->n = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "ops")) s->ops = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "numops")) { s->numops = strtoull(v, NULL, 0); s->numops_set = 1; }
        else if (!strcmp(kv, "bytes")) s->bytes = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "driver_ns")) s->driver_ns = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "stream")) s->stream = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "stream_id")) s->stream_id = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "oplist")) s->oplist = strtoull(v, NULL, 0);
        else if (!strcmp(kv, "site")) s->site = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(kv, "srcdev")) s->srcdev = atoi(v);
        else if (!strcmp(kv, "dstdev")) s->dstdev = atoi(v);
        else if (!strcmp(kv, "api")) s->api = parse_enum(kv, v, cbt_api_name);
        else if (!strcmp(kv, "door")) s->door = parse_enum(kv, v, cbt_door_name);
        else if (!strcmp(kv, "outcome")) s->outcome = parse_enum(kv, v, cbt_outcome_name);
        else if (!strcmp(kv, "result")) s->result = parse_enum(kv, v, cbt_curesult_name);
        else if (!strcmp(kv, "src")) s->src = parse_enum(kv, v, cbt_memkind_name);
        else if (!strcmp(kv, "dst")) s->dst = parse_enum(kv, v, cbt_memkind_name);
        else if (!strcmp(kv, "srctype")) s->srctype = parse_enum(kv, v, cbt_operand_name);
        else if (!strcmp(kv, "dsttype")) s->dsttype = parse_enum(kv, v, cbt_operand_name);
        else if (!strcmp(kv, "order")) s->order = parse_enum(kv, v, cbt_access_order_name);
        else if (!strcmp(kv, "finding")) s->finding = (int)parse_enum(kv, v, rule_name);
        else if (!strcmp(kv, "finding_op")) s->finding_op = atoi(v);
        else {
            fprintf(stderr, "cbt-gen: unknown key %s\n", kv);
            usage();
        }
    }
}

/* The benchmark's mix: batch sizes 1..1024, a few memory kinds, until `total` ops. */
static void mix(uint64_t total)
{
    static const uint64_t sizes[] = {1, 8, 64, 256, 1024, 16, 4, 512};
    static const unsigned kinds[][2] = {{CBT_MEM_HOST_PINNED, CBT_MEM_DEVICE}, {CBT_MEM_DEVICE, CBT_MEM_HOST_PINNED},
                                        {CBT_MEM_DEVICE, CBT_MEM_DEVICE}, {CBT_MEM_HOST_PAGEABLE, CBT_MEM_DEVICE}};
    struct spec s;
    char none[] = "n=1";
    parse_spec(none, &s);
    uint64_t done = 0;
    for (unsigned k = 0; done < total; k++) {
        s.ops = sizes[k % 8];
        if (s.ops > total - done)
            s.ops = total - done;
        s.src = kinds[k % 4][0];
        s.dst = kinds[k % 4][1];
        s.bytes = 512u << (k % 6);
        s.driver_ns = 3600 * s.ops;
        s.api = k % 3 == 0 ? CBT_API_V2 : CBT_API_V2_PTSZ;
        if (k & 1)
            gen_site_a(&s);
        else
            gen_site_b(&s);
        done += s.ops;
    }
}

int main(int argc, char **argv)
{
    int exit_code = 0, raise_sig = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
            exit_code = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--raise") && i + 1 < argc) {
            raise_sig = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--mix") && i + 1 < argc) {
            mix(strtoull(argv[++i], NULL, 0));
        } else if (!strcmp(argv[i], "--hop")) {
            hop = 1;
        } else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc) {
            FILE *f = fopen(argv[++i], "w");
            if (f) {
                fprintf(f, "%ld\n", (long)getpid());
                fclose(f);
            }
        } else if (!strcmp(argv[i], "--help")) {
            usage();
        } else {
            struct spec s;
            parse_spec(argv[i], &s);
            for (uint64_t k = 0; k < s.n; k++) {
                if (s.site == 1)
                    gen_site_b(&s);
                else
                    gen_site_a(&s);
            }
        }
    }
    if (raise_sig) {
        signal(raise_sig, SIG_DFL);
        raise(raise_sig);
    }
    return exit_code;
}
