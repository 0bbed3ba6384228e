/* run.h - the run loop: every case checked, then timed, beside a copy of the same bytes. */
#ifndef TSCAN_BENCH_RUN_H
#define TSCAN_BENCH_RUN_H

#include <stdio.h>

#include "backend.h"
#include "data.h"
#include "stats.h"
#include "sweep.h"

typedef enum case_status { CASE_PASSED, CASE_FAILED, CASE_SKIPPED } case_status;

typedef struct case_result {
    case_status status;
    int checked;           /* the output was compared with the reference */
    check_result check;
    int timed;
    timing_stats time;
    int copy_index;        /* into run_results.copies; -1 when there is none */
    int resolved_strategy; /* the strategy AUTO ran; -1 otherwise */
    size_t workspace_bytes;
    char message[640];     /* why skipped, or why failed */
} case_result;

/* A device-to-device copy (memcpy on the reference backend) of `bytes`, which moves twice
 * that: the ceiling a scan of the same tensor bytes is measured against. */
typedef struct copy_result {
    size_t bytes;
    timing_stats time;
} copy_result;

typedef struct run_results {
    case_result *cases;
    copy_result *copies;
    size_t copy_count;
    size_t passed, failed, skipped;
    double walltime;
} run_results;

/* Bytes a case moves: every element read once and written once. Padding gaps are not
 * counted, and a broadcast input element counts each time it is read. */
int64_t case_bytes_moved(const bench_case *c);

/* Backends one run times side by side (tscan-bench ab: two builds of the library). */
#define MAX_BACKENDS 2

/* Runs every case on each backend in turn, printing a table row per case and backend to
 * `table` and progress to stderr. Fills results[k] for backends[k] (arrays allocated here;
 * free each with run_results_free). Returns 0, or -1 when out of host memory or given more
 * than MAX_BACKENDS. */
int run_cases(bench_backend *const *backends, size_t backend_count, const measure_settings *settings, uint64_t seed,
              const bench_case *cases, size_t count, run_results *results, FILE *table);
void run_results_free(run_results *results);


#endif
