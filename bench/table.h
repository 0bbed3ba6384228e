/* table.h - the run's table rows and its progress line (bench/table.c). */
#ifndef TSCAN_BENCH_TABLE_H
#define TSCAN_BENCH_TABLE_H

#include <stdio.h>

#include "run.h"

/* The table's header, and one row: a case on one backend, timed, skipped or failed. */
void table_header(FILE *out);
void table_row(FILE *out, const bench_case *c, const case_result *r, const run_results *results);

/* Progress on stderr, at most every 2 s. The ETA weighs each case by the bytes it moves plus
 * a fixed cost (case_weight), since a sweep mixes 2^10-element cases with 2^28-element ones. */
typedef struct progress {
    double start, last, total_weight, done_weight;
} progress;
double case_weight(const bench_case *c);
void progress_update(progress *p, const bench_case *c, size_t done, size_t count);

#endif
