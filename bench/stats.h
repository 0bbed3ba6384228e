/*
 * stats.h - the timing method shared by every backend: warm-up, then samples until the
 * relative standard deviation falls under the noise target or the case's time limit runs
 * out (at least min_samples either way), then order statistics of the samples.
 */
#ifndef TSCAN_BENCH_STATS_H
#define TSCAN_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct measure_settings {
    int64_t warmup;       /* untimed runs before the first sample */
    int64_t min_samples;  /* >= 2, so that a standard deviation exists */
    double max_noise;     /* stop once stdev / mean falls under this fraction */
    double time_limit;    /* seconds of sampling per case, after min_samples */
} measure_settings;

typedef enum stop_reason { STOP_NOISE, STOP_TIME_LIMIT } stop_reason;

/* Seconds, from the samples of one case. */
typedef struct timing_stats {
    double min, q1, median, q3, max, mean;
    double stdev_relative;  /* sample standard deviation / mean */
    int64_t samples;
    double walltime;        /* seconds spent sampling, flushes and waits included */
    stop_reason stop;
} timing_stats;

/* Takes one sample: does the untimed preparation (the cache flush), times the operation
 * alone and stores its duration in seconds. Returns 0, or -1 with a message in err. */
typedef int (*sample_fn)(void *ctx, double *seconds, char *err, size_t errlen);

/* Runs the warm-up and the sampling loop and fills *stats. Returns 0, or -1 with the
 * sampler's message in err. */
int measure(const measure_settings *settings, sample_fn sample, void *ctx, timing_stats *stats,
            char *err, size_t errlen);

/* qsort's comparison of doubles, ascending. */
int compare_doubles(const void *a, const void *b);

/* Quantile q of n >= 1 sorted values by linear interpolation between order statistics (the
 * "type 7" rule of R and numpy's default), so reports match what numpy would compute. */
double quantile(const double *sorted, int64_t n, double q);

/* Monotonic clock, seconds. */
double bench_now(void);

const char *stop_reason_name(stop_reason r);

/* A duration for people: "1.234 ms". */
void format_seconds(char *buf, size_t len, double seconds);

#endif
