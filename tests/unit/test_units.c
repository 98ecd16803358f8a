/* SPDX-License-Identifier: MIT */
/*
 * The human units of the text tables (tools/base/util.c): bytes in powers of 1024,
 * times in ns/µs/ms/s, bandwidth in GB/s, each with 3 significant digits, and
 * rounding that carries into the next unit.
 */
#include <stdint.h>
#include <string.h>

#include "../tap.h"
#include "base/util.h"

static void expect(const char *got, const char *want, const char *what)
{
    if (!tap_ok(strcmp(got, want) == 0, "%s: \"%s\"", what, want))
        tap_diag("  got \"%s\"", got);
}

static void test_bytes(void)
{
    char b[32];
    expect(cbt_fmt_bytes(0, b, sizeof(b)), "0 B", "0 bytes");
    expect(cbt_fmt_bytes(512, b, sizeof(b)), "512 B", "512 bytes");
    expect(cbt_fmt_bytes(1023, b, sizeof(b)), "1023 B", "1023 bytes: still bytes, exact");
    expect(cbt_fmt_bytes(1024, b, sizeof(b)), "1.00 KiB", "1024 bytes");
    expect(cbt_fmt_bytes(1536, b, sizeof(b)), "1.50 KiB", "1536 bytes");
    expect(cbt_fmt_bytes(1536ull * 1024, b, sizeof(b)), "1.50 MiB", "1.5 MiB");
    expect(cbt_fmt_bytes(10 * 1024 - 6, b, sizeof(b)), "9.99 KiB", "10234 bytes: 3 digits");
    expect(cbt_fmt_bytes(10 * 1024 - 1, b, sizeof(b)), "10.0 KiB", "10239 bytes round up to 10.0, not 10.00");
    expect(cbt_fmt_bytes(100 * 1024 - 10, b, sizeof(b)), "100 KiB", "102390 bytes round up to 100, not 100.0");
    expect(cbt_fmt_bytes(123456, b, sizeof(b)), "121 KiB", "123456 bytes");
    expect(cbt_fmt_bytes(1048566, b, sizeof(b)), "1.00 MiB", "1023.99 KiB rounds up across the unit: 1.00 MiB");
    expect(cbt_fmt_bytes(1023ull * 1024, b, sizeof(b)), "1023 KiB", "1023 KiB stays");
    expect(cbt_fmt_bytes(1ull << 30, b, sizeof(b)), "1.00 GiB", "2^30");
    expect(cbt_fmt_bytes(1ull << 40, b, sizeof(b)), "1.00 TiB", "2^40");
    expect(cbt_fmt_bytes((1ull << 50) * 3, b, sizeof(b)), "3.00 PiB", "3 * 2^50");
    expect(cbt_fmt_bytes(UINT64_MAX, b, sizeof(b)), "16.0 EiB", "UINT64_MAX");
    char small[6];
    cbt_fmt_bytes(UINT64_MAX, small, sizeof(small));
    tap_ok(strlen(small) == 5, "a short buffer is cut, terminated");
}

static void test_ns(void)
{
    char b[32];
    expect(cbt_fmt_ns(0, b, sizeof(b)), "0 ns", "0 ns");
    expect(cbt_fmt_ns(7, b, sizeof(b)), "7 ns", "whole ns: exact");
    expect(cbt_fmt_ns(999, b, sizeof(b)), "999 ns", "999 ns");
    expect(cbt_fmt_ns(5.25, b, sizeof(b)), "5.25 ns", "a mean of 5.25 ns");
    expect(cbt_fmt_ns(999.7, b, sizeof(b)), "1.00 \xc2\xb5s", "999.7 ns rounds up across the unit");
    expect(cbt_fmt_ns(1000, b, sizeof(b)), "1.00 \xc2\xb5s", "1000 ns");
    expect(cbt_fmt_ns(12345, b, sizeof(b)), "12.3 \xc2\xb5s", "12345 ns");
    expect(cbt_fmt_ns(1.5e6, b, sizeof(b)), "1.50 ms", "1.5 ms");
    expect(cbt_fmt_ns(999.96e6, b, sizeof(b)), "1.00 s", "999.96 ms rounds up to 1.00 s");
    expect(cbt_fmt_ns(61e9, b, sizeof(b)), "61.0 s", "61 s");
    expect(cbt_fmt_ns(3600e9, b, sizeof(b)), "3600 s", "an hour: whole seconds");
    expect(cbt_fmt_ns((double)UINT64_MAX, b, sizeof(b)), "18446744074 s", "UINT64_MAX ns");
}

static void test_gbps(void)
{
    char b[32];
    expect(cbt_fmt_gbps(0, b, sizeof(b)), "0 GB/s", "0");
    expect(cbt_fmt_gbps(412.4, b, sizeof(b)), "412 GB/s", "412.4");
    expect(cbt_fmt_gbps(12.345, b, sizeof(b)), "12.3 GB/s", "12.345");
    expect(cbt_fmt_gbps(1.0, b, sizeof(b)), "1.00 GB/s", "1");
    expect(cbt_fmt_gbps(0.5, b, sizeof(b)), "0.500 GB/s", "0.5");
    expect(cbt_fmt_gbps(0.012345, b, sizeof(b)), "0.0123 GB/s", "0.012345");
    expect(cbt_fmt_gbps(0.99996, b, sizeof(b)), "1.00 GB/s", "0.99996 rounds up to 1.00");
    expect(cbt_fmt_gbps(0.099996, b, sizeof(b)), "0.100 GB/s", "0.099996 rounds up to 0.100");
    expect(cbt_fmt_gbps(3.2e3, b, sizeof(b)), "3200 GB/s", "3200");
}

int main(void)
{
    test_bytes();
    test_ns();
    test_gbps();
    return tap_done();
}
