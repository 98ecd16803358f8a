/* SPDX-License-Identifier: MIT */
/*
 * bench/pairstats: the statistics bench/overhead reports, on per-round
 * paired differences: the median with its order-statistics (sign-test)
 * 95 % interval, means with percentile-bootstrap 95 % intervals, and the
 * verdict an interval gives against a bound.
 */
#ifndef CBT_BENCH_PAIRSTATS_H
#define CBT_BENCH_PAIRSTATS_H

#include <stddef.h>
#include <stdint.h>

/* An estimate and its 95 % interval. */
struct ci {
    double est, lo, hi;
};

static inline double ci_half_width(struct ci c) { return (c.hi - c.lo) / 2; }

/* The median of sorted v[0..n). */
double median_sorted(const double *v, size_t n);

/* The rank (1-based) of the lower end of the 95 % interval of the median of
 * n values; the interval is [x(k), x(n+1-k)]; 0 when n is too small. */
size_t median_ci_rank(size_t n);

/* The median of x[0..n) (n >= 1) and its 95 % interval; scratch holds n values. */
struct ci median_ci(const double *x, size_t n, double *scratch);

/* The means of nx (at most 4) series of n values, with 95 % percentile-
 * bootstrap intervals drawn from the same resamples, so paired series stay
 * paired; seeded, so a run repeats.  -1 when out of memory. */
int mean_cis(const double *const *x, int nx, size_t n, uint64_t seed, struct ci *out);

enum verdict { V_NONE, V_OK, V_UNSURE, V_OVER, V_COUNT };
extern const char *const verdict_name[V_COUNT];

/* OVER only when the whole interval lies above the bound; ok when it lies
 * at or below it; ok? (V_UNSURE) when it straddles the bound. */
enum verdict judge(struct ci c, double bound);

#endif
