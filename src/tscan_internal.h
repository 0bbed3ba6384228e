/*
 * tscan_internal.h - what the library's own host code, kernels, tests and benchmark share
 * beyond the public header: errors, validation, the canonical problem, the strategy table
 * and the half-precision conversions. Not installed.
 */
#ifndef TSCAN_INTERNAL_H
#define TSCAN_INTERNAL_H

#include "tscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dtype facts, generated from TSCAN_DTYPE_LIST -------------------------------------- */

/* constexpr in C++, so that the kernels instantiate exactly the allowed pairs. */
#ifdef __cplusplus
#define TSCAN_CONSTEXPR constexpr
#else
#define TSCAN_CONSTEXPR
#endif

/* The kind column of TSCAN_DTYPE_LIST. */
typedef enum tscan_dtype_kind { TSCAN_KIND_signed, TSCAN_KIND_unsigned, TSCAN_KIND_float } tscan_dtype_kind;

/* Kind and bytes of t; t must be a valid dtype. */
static inline TSCAN_CONSTEXPR tscan_dtype_kind tscan_kind_of(tscan_dtype t) {
    switch (t) {
#define TSCAN_KIND_CASE(D, name, bytes, kind) case D: return TSCAN_KIND_##kind;
        TSCAN_DTYPE_LIST(TSCAN_KIND_CASE)
#undef TSCAN_KIND_CASE
    default: return TSCAN_KIND_float;
    }
}
static inline TSCAN_CONSTEXPR size_t tscan_bytes_of(tscan_dtype t) {
    switch (t) {
#define TSCAN_BYTES_CASE(D, name, bytes, kind) case D: return bytes;
        TSCAN_DTYPE_LIST(TSCAN_BYTES_CASE)
#undef TSCAN_BYTES_CASE
    default: return 0;
    }
}

/* The allowed (input, output) pairs (tscan.h, wider outputs) for two valid dtypes: integers
 * into integers at least as wide, floats into strictly wider floats, every type into itself. */
static inline TSCAN_CONSTEXPR int tscan_pair_allowed(tscan_dtype in, tscan_dtype out) {
    return in == out ||
           (tscan_kind_of(in) == TSCAN_KIND_float
                ? tscan_kind_of(out) == TSCAN_KIND_float && tscan_bytes_of(out) > tscan_bytes_of(in)
                : tscan_kind_of(out) != TSCAN_KIND_float && tscan_bytes_of(out) >= tscan_bytes_of(in));
}

/* ---- errors (src/errors.c) ------------------------------------------------------------ */

/* Sets this thread's message (printf format) and returns `status`, so that a failure
 * reads `return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "axis %u ...", axis);`. */
tscan_status tscan_fail(tscan_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- half-precision conversions (src/half.c) ------------------------------------------ */

/* Exact widening of IEEE binary16 / bfloat16 bit patterns; NaN payloads are kept. */
float tscan_half_to_float(uint16_t h);
float tscan_bfloat16_to_float(uint16_t b);
/* Narrowing with round to nearest, ties to even; overflow gives infinity, NaN stays NaN. */
uint16_t tscan_float_to_half(float f);
uint16_t tscan_float_to_bfloat16(float f);

/* ---- validation (src/validate.c) ------------------------------------------------------ */

/* Every rule of CONTRACT §1.4 (Layout) and §2, in one place: the status and message that
 * tscan_scan, tscan_scan_workspace_size and tscan_scan_reference return for bad input.
 * Touches no tensor memory. */
tscan_status tscan_validate(const tscan_scan_desc *desc, const tscan_tensor *input,
                            const tscan_tensor *output);

/* The dtype, ndim and sizes of one tensor, named `name` in the message. */
tscan_status tscan_check_tensor_fields(const tscan_tensor *t, const char *name);

/* Number of elements (product of sizes); 0 for an empty tensor. Assumes a valid tensor. */
int64_t tscan_numel(const tscan_tensor *t);

/* Adds each dimension's extent, stride * (size - 1), to *lo when negative and to *hi when
 * positive: from 0 and 0, the smallest and largest element offsets of a view. */
void tscan_extend_offset_range(uint32_t ndim, const int64_t *sizes, const int64_t *strides, int64_t *lo,
                               int64_t *hi);

/* 1 when a and b are the same view: same data, and the same stride on every dimension
 * longer than 1 (the in-place case). */
int tscan_same_view(const tscan_tensor *a, const tscan_tensor *b);

/* ---- the canonical problem (src/tensor.c) -------------------------------------------- */

/*
 * A validated, non-empty request reduced to what the kernels need: `lines` independent
 * lines of `n` elements. Line b starts at in + in_offset(b) and out + out_offset(b), where
 * the offsets come from the batch dimensions; element k of a line sits k * in_step
 * (out_step) elements further. Size-1 dimensions are dropped, batch dimensions are ordered
 * by decreasing |output stride| (so the last one is the most nearly contiguous) and merged
 * where both tensors allow, and views whose output runs backwards are flipped (the base
 * moves to the far end and `reverse` toggles for the axis), so one layout has one form.
 */
typedef struct tscan_problem {
    tscan_dtype dtype;                         /* the input's */
    size_t elem_size;
    tscan_dtype out_dtype;                     /* dtype, or a wider type (tscan_pair_allowed) */
    size_t out_elem_size;
    tscan_op op;
    int exclusive;
    int reverse;                               /* 1: scan from element n-1 down to element 0 */
    const char *in;                            /* bytes; element 0 of line 0 */
    char *out;
    int64_t n;                                 /* line length, >= 1 */
    int64_t in_step, out_step;                 /* strides along the axis, elements */
    uint32_t batch_ndim;                       /* 0..7 */
    int64_t batch_sizes[TSCAN_MAX_DIMS];       /* each >= 2 */
    int64_t in_batch_strides[TSCAN_MAX_DIMS];  /* elements */
    int64_t out_batch_strides[TSCAN_MAX_DIMS];
    int64_t lines;                             /* product of batch_sizes (1 when batch_ndim == 0) */
} tscan_problem;

/* Builds the canonical problem. Precondition: tscan_validate passed and the tensor is not
 * empty. */
void tscan_problem_init(tscan_problem *p, const tscan_scan_desc *desc, const tscan_tensor *input,
                        const tscan_tensor *output);

/* The odometer that walks a tensor's own indices (the reference's lines, validation's
 * addresses): advances idx (last dimension fastest, dimension `skip` held at 0; ndim for none)
 * and adds each dimension's step to offset[t] for the `count` stride arrays strides[t].
 * Returns 0 once every index has wrapped (the offsets are then back at their start). The
 * canonical problem's offsets (below) and the kernels' batch_map are its counterparts for
 * merged dimensions; the reference stays on this one so that it never shares their mapping. */
int tscan_next_index(uint32_t ndim, const int64_t *sizes, uint32_t skip, int64_t *idx, int count,
                     const int64_t *const *strides, int64_t *offset);

/* A dimension of the canonical problem: the axis (n > 1) or a batch dimension. */
typedef struct tscan_problem_dim {
    int64_t size, in_stride, out_stride;
    int axis;
} tscan_problem_dim;

/* p's dimensions in the output's memory order, fastest first, in dims (TSCAN_MAX_DIMS of them at
 * most); their count where the output is dense (each stride the product of the extents below
 * it, from 1: positive, no gaps), else 0. */
uint32_t tscan_dense_output_dims(const tscan_problem *p, tscan_problem_dim *dims);

/* Element offsets (not bytes) of line b's first element in the input and the output. */
void tscan_problem_line_offsets(const tscan_problem *p, int64_t b, int64_t *in_offset,
                                int64_t *out_offset);

/* ---- devices (src/device.c) ---------------------------------------------------------- */

/* What tscan reads of a device, once per device (cached; safe from several threads). */
typedef struct tscan_device_info {
    int ordinal;
    char name[256];
    int cc;                       /* compute capability, major * 10 + minor */
    int sm_count;
    size_t smem_per_block_optin;  /* shared memory a block can have, opted in */
    size_t smem_per_sm;
    int pageable_memory_access;   /* the device reads pageable host memory */
    int kernel_image;             /* this build holds code that the device runs */
} tscan_device_info;

/* Devices whose facts tscan caches (src/device.c, and each kernel's fit: cuda/lookback/launch.cuh). */
enum { TSCAN_MAX_DEVICES = 64 };

/* The device's info; TSCAN_ERROR_CUDA, with a message naming the built and the present
 * architectures, when this build holds no code the device can run (*info is still set). */
tscan_status tscan_device_info_of(int device, const tscan_device_info **info);
tscan_status tscan_current_device_info(const tscan_device_info **info);

/* 1 when the runtime has a current device; asks quietly (no message, no error left). */
int tscan_device_present(void);

/* ---- AUTO's tuning (src/policy.c) ------------------------------------------------------ */

/* The thresholds of AUTO's rules (src/dispatch.c), one row per architecture. Sizes count
 * elements, or lookback's 4-byte words where 1- and 2-byte elements pack ("units"). */
typedef struct tscan_auto_policy {
    int min_cc;                          /* the row serves compute capabilities from this one */
    const char *measured_on;             /* where its values were measured */
    int64_t few_lines;                   /* "one to a few long lines" means at most this many */
    int64_t long_line_min;               /* a few lines this long are "long" */
    int64_t cub_sum_below_4byte;         /* CUB's tuned sum leads below this many 4-byte elements */
    int64_t cub_sum_below_8byte;         /* ... and 8-byte ones */
    int64_t unpacked_cub_below;          /* a few unpacked 1-2-byte lines: CUB below this length, stream from it */
    int one_wave_tiles_per_sm;           /* one-wave tiles resident at once, per SM */
    int64_t rows_max_units;              /* rows take lines up to this */
    int64_t rows_max_units_many_lines;   /* ... and below this with many lines */
    int64_t many_lines;                  /* "many lines" */
    int64_t transposed_min_lines;        /* a transposed input goes to lookback from these lines */
    int64_t transposed_min_n;            /* ... and this axis length */
    int64_t transposed_columns_below_bytes; /* a transposed input's lines of 1-2-byte outputs
                                               shorter than this (bytes) go to columns */
    int64_t columns_max_n;               /* a strided axis this short goes to columns */
    int64_t columns_from_lines;          /* columns from this many lines, unless lookback leads */
    int64_t packed_lookback_below_lines; /* packed small elements: lookback below this many lines */
    int64_t wide_lookback_min_n;         /* 4-8-byte strided axes: lookback from this length ... */
    int row_alignment_bytes;             /* ... with rows a multiple of this apart */
    int64_t columns_short_line_n;        /* many contiguous lines this short (elements) ... */
    int64_t columns_short_line_bytes;    /* ... and bytes (from columns_short_line_min_bytes) go */
    int64_t columns_short_line_min_bytes; /* ... to columns, a thread a line */
    int64_t stream_short_line_bytes;     /* many lines of 1-2-byte elements shorter than this: stream */
    int64_t stream_unaligned_line_bytes; /* ... or than this, lines end to end (input too) off the 16-byte grid */
    int64_t stream_byte_halo_max_bytes;  /* 1-byte lines into 1-byte outputs whose tiles read halos: stream up to this */
    int64_t lanes_min_n;                 /* a strided axis of 4-8-byte elements this long: stream's lanes */
    int64_t lanes_max_inner;             /* ... of any length, over a packed block of this many lanes or fewer */
    int64_t lanes_along_lines_min;       /* lanes of a block read along its lines, for stream's lanes form */
    int64_t pairs_lookback_min_run;      /* 4-byte lines in lookback's pairs, runs this long: lookback over columns' single lines */
    int lookback_min_fill_pct;           /* many contiguous lines: lookback where its tiles are this full on average */
    int64_t replicate_min_copies;        /* broadcast lines: scanned once and copied from this many copies ... */
    int64_t replicate_min_output_bytes;  /* ... and this much output (src/replication.c), where the output's */
    int64_t replicate_min_row_bytes;     /* ... fastest kept run is this long, or where it repeats elements */
    int64_t replicate_repeated_max_elem_bytes;     /* ... this wide at most, */
    int64_t replicate_repeated_max_distinct_bytes; /* ... of a distinct output this small at most */
    int64_t gather_min_output_bytes;     /* a permuted input that columns would read a sector an element:
                                            gathered into the output and scanned in place from this much
                                            output (src/gather.c), */
    int64_t gather_min_lane_gap_bytes;   /* ... where columns' lanes lie this far apart in the input */
    int64_t gather_min_sharing_lines;    /* ... and the lines that share an input sector this many apart, */
    int64_t gather_wide_min_reuse_bytes; /* ... of 8-byte elements, the sectors read between them this many bytes */
} tscan_auto_policy;

/* The row for compute capability cc (major * 10 + minor). */
const tscan_auto_policy *tscan_auto_policy_for(int cc);

/* What AUTO plans with: the current device's row and SM count, or an H100's (sm_90, 132 SMs)
 * where no device answers (a host-only query; nothing will run). */
typedef struct tscan_planning {
    const tscan_auto_policy *policy;
    int sm_count;
} tscan_planning;
tscan_planning tscan_planning_for_current_device(void);

/* cudaSuccess when the current device can run this build's kernels (cuda/kernel_image.cu). */
cudaError_t tscan_probe_kernel_image(void);

/* ---- GPU strategies (cuda/, one file each) and dispatch (src/dispatch.c) ------------------------- */

/* How a strategy would move p, for AUTO's rules (src/dispatch.c): what AUTO may know of a
 * strategy without reaching into it. Zero where the strategy has no such thing. */
typedef struct tscan_strategy_outline {
    int packs_small_elements; /* 1- and 2-byte elements move several to a slot (the layout packs);
                                 stream: its lanes form scans them as 32-bit words */
    int64_t one_wave_tiles;   /* tiles of a path that needs them all resident at once */
    int64_t tile_bytes;       /* the data a tile moves, whatever its shape */
    int takes_layout;         /* stream: its plan would take p's layout (lines end to end, or lanes) */
    int reads_along_lines;    /* stream: its lanes form reads an input that runs along its lines */
    int reads_flat;           /* stream: its segment form reads the lines end to end as one flat
                                 run of 16-byte vectors (a packed input, not gathered line by line) */
    int reads_halos;          /* stream: reads flat, each tile the head of its first line itself
                                 (lines of up to 8 KB, not in place) */
    int64_t thread_items;     /* rows: the consecutive elements a thread of a group holds */
    int whole_vector_ends;    /* rows: a thread at a line's end moves its vectors inside the line
                                 whole (its others element by element) */
    int column_blocks;        /* lookback: a tile is a block of 32 lanes of lines (a strided axis
                                 over 16 lines or more), not a chunk of one line */
    int packs_lines;          /* lookback: column blocks move words of neighbouring lines (on their
                                 grid or off it) */
    int packs_axis;           /* lookback: line chunks move slots of several consecutive elements
                                 (a narrower input's as words of it) */
    int runs_bulk;            /* lookback: its bulk line-chunk kernel would run p on the current
                                 device (layout, element, op, and tiles enough for its floor) */
    int vector_lines;         /* columns: a thread moves 16 bytes of neighbouring lines a step */
    int stages_lines;         /* columns: tiles of a permuted input's short lines go through shared
                                 memory, loaded along the input's unit stride (the staged form) */
} tscan_strategy_outline;

/* What a strategy decided for one problem, once a call: the workspace it needs, and in
 * `state` whatever its launch reads (the kernel it chose, grid, layout), in a type of the
 * strategy's own. */
enum { TSCAN_PLAN_STATE_BYTES = 1024 };
typedef struct tscan_launch_plan {
    size_t workspace_bytes;
    union {
        unsigned char bytes[TSCAN_PLAN_STATE_BYTES];
        long double align_long_double; /* the union is aligned for any state type */
        void *align_pointer;
        int64_t align_int64;
    } state;
} tscan_launch_plan;

/* One scan strategy. `plan` answers SUCCESS with *plan filled, or NOT_SUPPORTED (the reason set
 * through tscan_fail); it launches nothing, and reads device facts only through the per-device
 * caches (src/device.c and the kernels' own). `launch` runs a plan that succeeded, on the
 * current device, asynchronously on `stream`; it allocates and synchronises nothing.
 * `outline`, where not NULL, describes how it would move p (host only, launching nothing; device
 * facts as `plan` reads them). */
typedef struct tscan_strategy {
    tscan_algo algo;
    tscan_status (*plan)(const tscan_problem *p, tscan_launch_plan *plan);
    tscan_status (*launch)(const tscan_launch_plan *plan, void *workspace, cudaStream_t stream);
    void (*outline)(const tscan_problem *p, tscan_strategy_outline *outline);
} tscan_strategy;

extern const tscan_strategy tscan_strategy_cub_device; /* cuda/cub_device.cu */
extern const tscan_strategy tscan_strategy_rows;       /* cuda/rows.cu */
extern const tscan_strategy tscan_strategy_columns;    /* cuda/columns.cu */
extern const tscan_strategy tscan_strategy_lookback;   /* cuda/lookback.cu */
extern const tscan_strategy tscan_strategy_stream;     /* cuda/stream.cu */

/* ---- broadcast lines scanned once (src/replication.c, cuda/replicate.cu) ---------------- */

/* An output whose lines repeat along the input's broadcast dimensions (stride 0, other than the
 * axis): what the copies of its distinct lines take. The output is a dense block, seen in memory
 * order as runs of dimensions ("groups", fastest first) that are alternately kept (distinct
 * data) and replicated (the input repeats along them); an element's source is the element at
 * index 0 of every replicated group. */
typedef struct tscan_replication {
    int64_t copies;          /* lines of the output per distinct line; 0: no replication */
    char *out;               /* the output's first element (the lowest address) */
    size_t elem_size;
    int64_t elements;        /* of the output, under 2^32 */
    uint32_t groups;
    int64_t extents[TSCAN_MAX_DIMS];
    int first_replicated;    /* group 0 is replicated (the groups then alternate) */
} tscan_replication;

/* 1, with *r filled, where AUTO scans p's distinct lines and copies them (policy's thresholds):
 * copies enough, output large enough, dense with positive strides and under 2^32 elements, and
 * a layout where the copies pay (a long fastest kept run, or repeated small elements of a small
 * distinct output); else 0. Host only. */
int tscan_plan_replication(const tscan_problem *p, const tscan_auto_policy *policy, tscan_replication *r);

/* The views of the distinct lines: input and output with the input's broadcast dimensions
 * other than the axis set to size 1 (the output's lines at index 0 of them). */
void tscan_distinct_view(const tscan_tensor *input, const tscan_tensor *output, uint32_t axis,
                         tscan_tensor *distinct_input, tscan_tensor *distinct_output);

/* Copies r's distinct lines, already scanned, into the rest of the output: async on stream. */
tscan_status tscan_replicate(const tscan_replication *r, cudaStream_t stream);

/* ---- permuted inputs gathered into the output (src/gather.c, cuda/gather.cu) ------------ */

/* Dimensions decoded from a flat index, fastest first: index i holds digit i % sizes[0], then
 * (i / sizes[0]) % sizes[1], ...; its offset is the sum of digit times stride. */
typedef struct tscan_radix {
    uint32_t ndim;
    int64_t sizes[TSCAN_MAX_DIMS];
    int64_t strides[TSCAN_MAX_DIMS];
} tscan_radix;

/* A permuted input (its unit stride on another dimension than the output's) copied into the
 * dense output in the output's order, element for element, so that a scan in place reads it
 * along memory. The dimensions fall in three sets: U, a run that is contiguous in the input
 * from its unit stride (so index u lies u elements in); V, a run contiguous in the output from
 * its unit stride (index v lies v elements in); and the rest. A tile of U x V goes through
 * shared memory: loaded along U, stored along V. */
typedef struct tscan_gather {
    const char *in;             /* the input's element (0, ..., 0) */
    char *out;                  /* the output's, its lowest address */
    size_t elem_size;           /* one width in and out; 0: nothing gathered */
    int64_t u_extent, v_extent; /* elements of U and V */
    tscan_radix u_out;          /* U's dimensions, their output strides */
    tscan_radix v_in;           /* V's, their input strides */
    tscan_radix rest_in, rest_out; /* the others (the same sizes), each tensor's strides */
    int64_t rest_extent;
} tscan_gather;

/* 1, with *g filled, where p's permuted input would cost columns' thread a line a sector an
 * element and AUTO may gather it into the output and scan that in place (policy's thresholds):
 * one width in and out, the output dense with positive strides and under 2^31 elements, the input's unit stride on a
 * batch dimension other than the output's fastest and more than a block's lines from its
 * neighbours in columns' order, columns' lanes a sector apart in the input; else 0. AUTO asks
 * only where its rules chose columns' thread a line. Host only. */
int tscan_plan_gather(const tscan_problem *p, const tscan_auto_policy *policy, tscan_gather *g);

/* Copies g's input into its output: async on stream. */
tscan_status tscan_gather_input(const tscan_gather *g, cudaStream_t stream);

/* The views that AUTO's strategy scans for a valid, non-empty request on the current device:
 * the request's own, the distinct lines' (broadcast lines copied after the scan), or the
 * output's in place (a permuted input gathered into it before). Host only. */
void tscan_auto_scanned_views(const tscan_scan_desc *desc, const tscan_tensor *input, const tscan_tensor *output,
                              tscan_tensor *scanned_input, tscan_tensor *scanned_output);

#ifdef __cplusplus
}
#endif

#endif /* TSCAN_INTERNAL_H */
