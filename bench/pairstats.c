/* SPDX-License-Identifier: MIT */
/* bench/pairstats: see pairstats.h. */
#include "pairstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOOTSTRAP_RESAMPLES 1000

const char *const verdict_name[V_COUNT] = {"-", "ok", "ok?", "OVER"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_sorted(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The largest k with P(Binomial(n, 1/2) < k) <= 2.5 %: exact up to 2000
 * values, the normal approximation beyond (where it is at most one rank
 * wider than exact). */
size_t median_ci_rank(size_t n)
{
    if (n > 2000) {
        double k = floor((double)n / 2 - 0.98 * sqrt((double)n) + 0.5);
        return k < 0 ? 0 : (size_t)k;
    }
    double logp = -(double)n * log(2), cum = 0; /* log P(X = 0) */
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        cum += exp(logp); /* P(X <= j) */
        if (cum > 0.025)
            break;
        k = j + 1;
        logp += log((double)(n - j)) - log((double)(j + 1));
    }
    return k;
}

struct ci median_ci(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof *x);
    qsort(scratch, n, sizeof *scratch, cmp_double);
    size_t k = median_ci_rank(n);
    if (k == 0 || k > n / 2) /* too few values for a 95 % interval: the range */
        return (struct ci){median_sorted(scratch, n), scratch[0], scratch[n - 1]};
    return (struct ci){median_sorted(scratch, n), scratch[k - 1], scratch[n - k]};
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int mean_cis(const double *const *x, int nx, size_t n, uint64_t seed, struct ci *out)
{
    if (nx > 4)
        nx = 4;
    double *means = malloc((size_t)nx * BOOTSTRAP_RESAMPLES * sizeof *means);
    if (!means)
        return -1;
    uint64_t s = seed | 1;
    for (int b = 0; b < BOOTSTRAP_RESAMPLES; b++) {
        double sum[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            size_t j = (size_t)(xorshift(&s) % n);
            for (int v = 0; v < nx; v++)
                sum[v] += x[v][j];
        }
        for (int v = 0; v < nx; v++)
            means[v * BOOTSTRAP_RESAMPLES + b] = sum[v] / (double)n;
    }
    for (int v = 0; v < nx; v++) {
        double *m = means + v * BOOTSTRAP_RESAMPLES, sum = 0;
        qsort(m, BOOTSTRAP_RESAMPLES, sizeof *m, cmp_double);
        for (size_t i = 0; i < n; i++)
            sum += x[v][i];
        /* the 25th smallest and the 25th largest of 1000 */
        out[v] = (struct ci){sum / (double)n, m[BOOTSTRAP_RESAMPLES / 40 - 1],
                             m[BOOTSTRAP_RESAMPLES - BOOTSTRAP_RESAMPLES / 40]};
    }
    free(means);
    return 0;
}

enum verdict judge(struct ci c, double bound)
{
    if (c.lo > bound)
        return V_OVER;
    return c.hi <= bound ? V_OK : V_UNSURE;
}
