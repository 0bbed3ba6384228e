/*
 * sweep.h - what a run measures. A sweep is a list of entries; an entry crosses a list of
 * shapes with sets of dtypes, operators, directions, exclusive flags and strategies. The
 * default sweeps, the --sweep file and the command-line overrides all end in the same
 * list of cases, each with a unique flat name.
 */
#ifndef TSCAN_BENCH_SWEEP_H
#define TSCAN_BENCH_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "tscan.h"

/* The reference backend's one strategy: tscan_scan_reference on host memory. */
#define STRATEGY_REFERENCE ((int)TSCAN_ALGO_COUNT)

typedef enum bench_layout {
    LAYOUT_PACKED,     /* input and output packed row-major */
    LAYOUT_TRANSPOSED, /* input is the transpose (last two dimensions) of packed memory */
    LAYOUT_PADDED,     /* input rows one element longer than the last size: rows misaligned */
    LAYOUT_STRIDED,    /* strides given explicitly (sweep file) */
    LAYOUT_COUNT
} bench_layout;

typedef struct bench_shape {
    char class_name[48];
    uint32_t ndim, axis;
    bench_layout layout;
    int64_t sizes[TSCAN_MAX_DIMS];
    int64_t in_strides[TSCAN_MAX_DIMS]; /* elements */
    int64_t out_strides[TSCAN_MAX_DIMS];
} bench_shape;

/* The axes a sweep crosses. Each selection is a bit set over the enumerators. */
typedef enum sweep_axis { AXIS_DTYPE, AXIS_OP, AXIS_DIRECTION, AXIS_EXCLUSIVE, AXIS_ALGO, AXIS_COUNT } sweep_axis;

typedef struct sweep_entry {
    size_t *shape_ids;
    size_t shape_count;
    uint32_t masks[AXIS_COUNT];
    int output_dtype; /* a wider output for every case (tscan_output_dtype_allowed), or -1: the input's */
} sweep_entry;

typedef struct bench_sweep {
    bench_shape *shapes;
    size_t shape_count;
    sweep_entry *entries;
    size_t entry_count;
} bench_sweep;

typedef struct bench_case {
    const bench_shape *shape;
    size_t shape_id;
    tscan_dtype dtype;
    tscan_dtype out_dtype; /* dtype, or a wider one */
    tscan_op op;
    tscan_direction direction;
    int exclusive;
    int strategy; /* a tscan_algo, or STRATEGY_REFERENCE */
    char name[512];
} bench_case;

/* Names of an axis's values, as flags, sweep files and case names spell them. */
int axis_value_count(sweep_axis axis);
const char *axis_value_name(sweep_axis axis, int value);
uint32_t axis_all(sweep_axis axis);

/* Parses a comma-separated list of value names (or "all"/"both") into *mask; the message
 * names the unknown value and lists the known ones. */
int parse_axis_list(sweep_axis axis, const char *list, uint32_t *mask, char *err, size_t errlen);

const char *layout_name(bench_layout layout);
int parse_layout(const char *name, bench_layout *layout);
const char *strategy_name(int strategy);

/* Checks a shape (ndim, sizes, axis, layout, strides) and derives its strides: in_strides
 * is read only for LAYOUT_STRIDED, out_strides may be NULL for packed output. */
int shape_init(bench_shape *shape, const char *class_name, uint32_t ndim, const int64_t *sizes,
               uint32_t axis, bench_layout layout, const int64_t *in_strides,
               const int64_t *out_strides, char *err, size_t errlen);

/* Parses "AxBxC" into sizes; returns the number of dimensions, or 0 with a message. */
uint32_t parse_sizes(const char *text, int64_t *sizes, char *err, size_t errlen);

/* Row-major strides (elements) of a packed tensor of these sizes. */
void packed_strides(uint32_t ndim, const int64_t *sizes, int64_t *strides);

int64_t shape_numel(const bench_shape *shape);
int64_t shape_lines(const bench_shape *shape);
/* Smallest and largest element offsets of a view with these strides. */
void view_extent(const bench_shape *shape, const int64_t *strides, int64_t *lowest, int64_t *highest);

/* The built-in sweeps (see bench/README.md): the GPU one, or the small one the reference
 * backend runs; --quick shrinks either. */
int sweep_default(bench_sweep *sweep, int reference_backend, int quick);
/* Reads a sweep file (format in bench/README.md). err names the file and the field. */
int sweep_load_file(bench_sweep *sweep, const char *path, char *err, size_t errlen);
/* Adds a shape unless one of the same geometry is there (the first class name stays);
 * returns its id, or (size_t)-1 when out of memory. */
size_t sweep_add_shape(bench_sweep *sweep, const bench_shape *shape);
/* Appends an entry that owns a copy of the shape ids. */
int sweep_add_entry(bench_sweep *sweep, const size_t *shape_ids, size_t shape_count, const uint32_t *masks);
/* Command-line overrides: shapes replace every entry's shapes, a non-zero mask replaces
 * every entry's selection of that axis. */
int sweep_override(bench_sweep *sweep, const bench_shape *shapes, size_t shape_count,
                   const uint32_t *masks);
/* The output dtype of every entry: `dtype` (>= 0) replaces theirs; then every entry's must
 * hold a scan of each of its dtypes, else -1 with a message naming both. */
int sweep_output_dtype(bench_sweep *sweep, int dtype, char *err, size_t errlen);
/* The tscan_dtype named `name` ("uint8"), or -1. */
int parse_dtype_name(const char *name);
/* Crosses every entry into cases: duplicates (by name) dropped, ordered so that cases
 * sharing input data run one after another. The reference backend has one strategy. */
int sweep_expand(const bench_sweep *sweep, int reference_backend, bench_case **cases, size_t *count);
void sweep_free(bench_sweep *sweep);

/* "16384x16384" */
void shape_label(const bench_shape *shape, char *buf, size_t len);
/* The case name without its strategy: what compare matches across strategies. */
size_t case_key_length(const bench_case *c);

#endif
