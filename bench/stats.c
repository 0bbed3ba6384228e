/* stats.c - the sampling loop and its statistics. */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void format_seconds(char *buf, size_t len, double s) {
    if (s < 1e-6) snprintf(buf, len, "%.1f ns", s * 1e9);
    else if (s < 1e-3) snprintf(buf, len, "%.3f us", s * 1e6);
    else if (s < 1.0) snprintf(buf, len, "%.3f ms", s * 1e3);
    else snprintf(buf, len, "%.3f s", s);
}

const char *stop_reason_name(stop_reason r) { return r == STOP_NOISE ? "noise" : "time_limit"; }

int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double quantile(const double *sorted, int64_t n, double q) {
    double position = q * (double)(n - 1);
    int64_t below = (int64_t)floor(position);
    double fraction = position - (double)below;
    if (below + 1 >= n) return sorted[n - 1];
    return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

int measure(const measure_settings *settings, sample_fn sample, void *ctx, timing_stats *stats,
            char *err, size_t errlen) {
    size_t capacity = (size_t)settings->min_samples * 2;
    double *samples = malloc(capacity * sizeof *samples);
    double mean = 0.0, m2 = 0.0, seconds, start;
    int64_t n = 0;

    if (!samples) {
        snprintf(err, errlen, "out of host memory for %zu samples", capacity);
        return -1;
    }
    for (int64_t i = 0; i < settings->warmup; ++i) {
        if (sample(ctx, &seconds, err, errlen)) goto fail;
    }
    start = bench_now();
    for (;;) {
        double delta, rsd;
        if (sample(ctx, &seconds, err, errlen)) goto fail;
        if ((size_t)n == capacity) {
            double *grown = realloc(samples, 2 * capacity * sizeof *samples);
            if (!grown) {
                snprintf(err, errlen, "out of host memory for %zu samples", 2 * capacity);
                goto fail;
            }
            samples = grown;
            capacity *= 2;
        }
        samples[n++] = seconds;
        /* Welford's update keeps the stopping test O(1) per sample. */
        delta = seconds - mean;
        mean += delta / (double)n;
        m2 += delta * (seconds - mean);
        if (n < settings->min_samples) continue;
        rsd = mean > 0.0 ? sqrt(m2 / (double)(n - 1)) / mean : 0.0;
        if (rsd < settings->max_noise) {
            stats->stop = STOP_NOISE;
            break;
        }
        if (bench_now() - start >= settings->time_limit) {
            stats->stop = STOP_TIME_LIMIT;
            break;
        }
    }
    stats->walltime = bench_now() - start;
    stats->samples = n;
    stats->mean = mean;
    stats->stdev_relative = mean > 0.0 ? sqrt(m2 / (double)(n - 1)) / mean : 0.0;
    qsort(samples, (size_t)n, sizeof *samples, compare_doubles);
    stats->min = samples[0];
    stats->q1 = quantile(samples, n, 0.25);
    stats->median = quantile(samples, n, 0.5);
    stats->q3 = quantile(samples, n, 0.75);
    stats->max = samples[n - 1];
    free(samples);
    return 0;
fail:
    free(samples);
    return -1;
}
