/*
 * data.h - the input of a case and the check of its output.
 *
 * Inputs are chosen so that every correct scan is exact whatever order it associates in,
 * and the check can ask for bit-for-bit agreement with tscan_scan_reference:
 *   sum:                 small non-zero integers (+-1, +-2): every partial sum of a line of
 *                        2^28 stays far below 2^24, so float32 (and float16/bfloat16, which
 *                        accumulate in float32 and round once) holds it exactly;
 *   product, floats:     along the axis, pairs (r, 1/r) with r in {1/2, 1, 2, 4} and random
 *                        signs: every partial product is a signed power of two in [1/8, 8];
 *   product, integers:   odd values (+-1, +-3), exact modulo 2^bits and never zero.
 * No input element is zero.
 */
#ifndef TSCAN_BENCH_DATA_H
#define TSCAN_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "sweep.h"

/* Tensors up to CHECK_FULL_LIMIT elements are checked in full; above it, sampled lines:
 * enough to hold CHECK_SAMPLE_ELEMENTS, and at least CHECK_MIN_LINES (so that a wrong line
 * index shows in long-line tensors too) where those hold at most CHECK_FULL_LIMIT elements;
 * never fewer than two, the first and the last. */
#define CHECK_FULL_LIMIT (INT64_C(1) << 24)
#define CHECK_SAMPLE_ELEMENTS (INT64_C(1) << 20)
#define CHECK_MIN_LINES INT64_C(64)

/* splitmix64's finaliser: a counter-based generator, so any element's value follows from its
 * index alone (and the random sweep's draws from their counter). */
uint64_t mix64(uint64_t x);

/* Writes the input of (shape, dtype, op) through `data`, the address of element (0,...,0)
 * of the input view. */
void data_fill_input(void *data, const bench_shape *shape, tscan_dtype dtype, tscan_op op, uint64_t seed);

/* Element offsets of line `line` (row-major over every dimension but the axis). */
void line_offsets(const bench_shape *shape, int64_t line, int64_t *in_offset, int64_t *out_offset);

/* The reference answer for the lines a check looks at. */
typedef struct reference_lines {
    int64_t *ids;   /* sorted line numbers */
    int64_t count;
    void *values;   /* count lines of n elements, packed */
    size_t capacity_bytes;
    size_t ids_capacity;
} reference_lines;

typedef struct check_result {
    int64_t lines_total, lines_checked, elements_checked, mismatches;
    int64_t first_line, first_index; /* where the first mismatch is */
    char expected[48], actual[48];
} check_result;

/* Computes the reference for the lines to check, with tscan_scan_reference on each line of
 * the host input (`input`: element (0,...,0), of `dtype`) into `out_dtype` (dtype or a wider
 * one). Reuses ref's buffers. Returns 0, or -1 with a message. */
int reference_compute(reference_lines *ref, const bench_shape *shape, tscan_dtype dtype, tscan_dtype out_dtype,
                      const tscan_scan_desc *desc, const void *input, uint64_t seed, char *err, size_t errlen);

/* Compares a host copy of the output (`output`: element (0,...,0), of `dtype`: the case's
 * output dtype) with the reference. */
void reference_check(const reference_lines *ref, const bench_shape *shape, tscan_dtype dtype, const void *output,
                     check_result *result);

void reference_free(reference_lines *ref);

#endif
