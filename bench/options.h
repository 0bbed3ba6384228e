/* options.h - the command line of a run (compare has its own, in compare.c). */
#ifndef TSCAN_BENCH_OPTIONS_H
#define TSCAN_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"
#include "sweep.h"

/* Exit statuses of every tscan-bench command. */
enum { EXIT_PASSED = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef enum backend_choice { BACKEND_AUTO, BACKEND_GPU, BACKEND_REFERENCE } backend_choice;

#define MAX_CLI_SHAPES 64

typedef struct bench_options {
    uint32_t masks[AXIS_COUNT];         /* 0: keep the sweep's selection */
    bench_shape shapes[MAX_CLI_SHAPES]; /* --shape (with its --axis and --layout) */
    uint32_t shape_count;
    const char *sweep_path;  /* --sweep, or NULL for the built-in sweep */
    const char *output_path; /* --output */
    int output_given;
    int list;                /* --list: print the cases, run nothing */
    int quick;
    int help;
    int device;
    backend_choice backend;
    measure_settings measure;
    int time_limit_given;    /* the default limit depends on the backend */
    uint64_t seed;
    int64_t random_count;                  /* --random N: N drawn cases replace the sweep; 0: none */
    double random_min_mib, random_max_mib; /* tensor bytes of a draw; 0: the backend's default */
    int output_dtype;                      /* --output-dtype: a tscan_dtype, or -1 (each case's input dtype) */
} bench_options;

/* Parses argv[1..] of a run. Returns 0, or -1 with a message naming the problem in err. */
int parse_run_options(int argc, char **argv, bench_options *options, char *err, size_t errlen);

void print_run_usage(FILE *out);

#endif
