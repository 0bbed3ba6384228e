/*
 * random_sweep.h - the random sweep (--random N): cases drawn reproducibly from a seed, each
 * its own shape, dtype, operator, direction, exclusive form and input layout, every strategy
 * run on it. What is drawn and with which weights: bench/README.md.
 */
#ifndef TSCAN_BENCH_RANDOM_SWEEP_H
#define TSCAN_BENCH_RANDOM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "sweep.h"

/* A drawn input view spans at most this many times the tensor's elements (padding, slicing):
 * with the output, a case holds at most (factor + 1) x its tensor bytes on the device. */
#define RANDOM_MAX_SPAN_FACTOR 4

/* Default tensor (input) byte range of a draw, MiB: beyond the L2 on the GPU; small and
 * quick on the host reference backend. */
#define RANDOM_GPU_MIN_MIB 64.0
#define RANDOM_GPU_MAX_MIB 1024.0
#define RANDOM_REFERENCE_MIN_MIB 0.25
#define RANDOM_REFERENCE_MAX_MIB 2.0
/* One case in this many, of a dtype that widens, draws a wider output dtype. */
#define RANDOM_WIDER_ONE_IN 5
/* Largest --random-max-mib taken: beyond any GPU's memory at the span factor. */
#define RANDOM_LIMIT_MIB 65536.0

typedef struct random_spec {
    size_t count;               /* cases to draw */
    double min_bytes, max_bytes; /* tensor bytes (elements x element size), drawn log-uniformly */
    /* What a draw may pick from, per axis (0: every value). The algo mask is not drawn from:
     * every case runs each strategy in it. */
    uint32_t masks[AXIS_COUNT];
} random_spec;

/* Builds the sweep of spec->count drawn cases, one entry (one shape) each. The same seed and
 * spec give the same cases. Returns 0, or -1 with a message. */
int sweep_random(bench_sweep *sweep, const random_spec *spec, uint64_t seed, char *err, size_t errlen);

#endif
