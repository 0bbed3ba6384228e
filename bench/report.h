/* report.h - the JSON report (format in bench/REPORT.md, schema in bench/report.schema.json). */
#ifndef TSCAN_BENCH_REPORT_H
#define TSCAN_BENCH_REPORT_H

#include <stdio.h>

#include "backend.h"
#include "options.h"
#include "run.h"
#include "sweep.h"

#define REPORT_FORMAT "tscan-bench-report"
#define REPORT_FORMAT_VERSION 1
#define CASE_LIST_FORMAT "tscan-bench-cases"

/* What a report says about the run besides its cases. */
typedef struct run_context {
    int argc;
    char **argv;
    const bench_options *options;
    const measure_settings *measure; /* with the time limit resolved */
    const char *backend;             /* "gpu" or "reference" */
    const char *timer;
    size_t flush_bytes;
    const device_info *device;       /* NULL without a GPU */
    const char *gpu_unavailable;     /* why there is no GPU, or NULL */
    const tscan_library *library;    /* the build the cases ran (tscan-bench ab: one of two) */
} run_context;

/* Writes the report, and its summary's distribution as a table to `table` unless NULL;
 * returns 0, or -1 with a message. */
int report_write(const char *path, const run_context *context, const bench_case *cases, size_t count,
                 const run_results *results, FILE *table, char *err, size_t errlen);

/* Writes the cases alone (--list --output): what bench/peers.py reads to time the same cases. */
int case_list_write(const char *path, const run_context *context, const bench_case *cases, size_t count,
                    char *err, size_t errlen);

#endif
