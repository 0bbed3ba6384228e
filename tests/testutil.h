/*
 * testutil.h - what the test suites share: a seeded RNG, typed element access, random data
 * of a chosen kind, layouts (strided host buffers with slack around the views), the case
 * matrix, and the checks (element comparison with a documented tolerance, bytes outside the
 * output view untouched).
 *
 * Everything works on host memory. A GPU suite builds a layout here, copies in_buf/out_buf
 * to the device, moves the views there with tu_view_rebase, scans, copies the output buffer
 * back and checks it with tu_check_output against tu_layout_expected.
 */
#ifndef TSCAN_TESTUTIL_H
#define TSCAN_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tscan_internal.h"

/* ---- RNG: splitmix64, deterministic for a given seed ---------------------------------- */

typedef struct tu_rng {
    uint64_t state;
} tu_rng;

tu_rng tu_rng_make(uint64_t seed);
uint64_t tu_rng_u64(tu_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t tu_rng_below(tu_rng *r, uint64_t n);
/* Uniform in [lo, hi], lo <= hi. */
int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi);
/* Uniform in [0, 1), 53 random bits. */
double tu_rng_unit(tu_rng *r);
/* A seed from a name and an index (FNV-1a), so each test has its own fixed stream. */
uint64_t tu_seed(const char *name, uint64_t index);

/* ---- dtype facts and element access ----------------------------------------------------- */

int tu_dtype_is_float(tscan_dtype t);       /* float32, float16, bfloat16, float64 */
int tu_dtype_is_signed_int(tscan_dtype t);  /* int8 .. int64 */

/* The value of the element at p as a double: exact for every float dtype and for
 * integers of magnitude up to 2^53. */
double tu_get(tscan_dtype t, const void *p);
/* Stores v. Floats: rounded to the dtype (half types through float32, so v should be
 * a float32 value); integers: v must be integral, and is reduced modulo 2^bits. */
void tu_set(tscan_dtype t, void *p, double v);
/* An integer element modulo 2^64: signed dtypes sign-extend, unsigned ones zero-extend;
 * a float element gives its bit pattern, zero-extended. */
uint64_t tu_get_u64(tscan_dtype t, const void *p);
/* Stores the low bits of v (an integer modulo 2^bits, or a float's bit pattern). */
void tu_set_u64(tscan_dtype t, void *p, uint64_t v);

/* Whether two elements hold the same value: integers bit for bit, floats by value and
 * sign (-0 differs from +0: the reference defines it), NaN equal to NaN whatever the payloads. */
int tu_values_equal(tscan_dtype t, const void *a, const void *b);

/* ---- views ------------------------------------------------------------------------------ */

/* Address of the element at idx[0..ndim-1] of t. */
void *tu_elem(const tscan_tensor *t, const int64_t *idx);
/* Row-major odometer over t's sizes: advances idx (start from all zeros) and returns 1,
 * or returns 0 (idx back to zeros) after the last index. Loop as
 * `if (tscan_numel(t) > 0) do { ... } while (tu_next_index(t, idx));` */
int tu_next_index(const tscan_tensor *t, int64_t *idx);
/* The view t of a buffer at `from`, moved to the same byte offset in a buffer at `to`
 * (a device copy, a snapshot, an expected-output buffer). */
tscan_tensor tu_view_rebase(const tscan_tensor *t, const void *from, void *to);
/* The same elements with dimension `dim` reversed: data moves to the last element along
 * dim and the stride is negated. */
tscan_tensor tu_view_reversed(const tscan_tensor *t, uint32_t dim);
/* A packed row-major copy of t's elements in a new malloc'd buffer (*buf, free it);
 * returns the packed view. Empty tensors get a 1-byte buffer. */
tscan_tensor tu_packed_copy(const tscan_tensor *t, void **buf);

/* ---- random data -------------------------------------------------------------------------- */

typedef enum tu_data {
    /* Integers in [-2, 2] ([0, 4] for unsigned dtypes). Float sums are exact in any order
     * while partial sums stay below 2^24, float products while lines are shorter than 127
     * (values are 0 or ±2^k, and no float32 overflow happens). */
    TU_DATA_SMALL_INT,
    /* ±1 and ±2 (1 and 2 for unsigned), no zeros: float products are exact in any order
     * at any length (powers of two; overflow to inf happens at the same prefix whatever
     * the association, because no factor shrinks the magnitude). */
    TU_DATA_POW2,
    /* Floats uniform in [-1, 1) (random signs, so rounding errors cancel like a random
     * walk); integers: uniformly random bit patterns, the whole range. */
    TU_DATA_RANDOM,
    /* Floats ±[0.5, 2) log-uniform, for products of random floats; integers: uniformly
     * random bit patterns. */
    TU_DATA_NEAR_ONE,
    TU_DATA_COUNT
} tu_data;

const char *tu_data_name(tu_data kind);
/* One random element of kind `kind` stored at p. */
void tu_random_elem(tu_rng *r, tscan_dtype t, tu_data kind, void *p);
/* Fills every element reachable through view t (a broadcast element is written more than
 * once, harmlessly). */
void tu_fill(tu_rng *r, const tscan_tensor *t, tu_data kind);

/* ---- cases and layouts ---------------------------------------------------------------- */

typedef enum tu_layout_kind {
    TU_LAYOUT_PACKED,    /* input and output packed row-major, separate buffers */
    TU_LAYOUT_PERMUTED,  /* dimensions stored in random orders (one for input, one for output) */
    TU_LAYOUT_PADDED,    /* row-major with gaps: a random inner stride and padding per dimension */
    TU_LAYOUT_NEGATIVE,  /* some strides negated (input and output chosen independently) */
    TU_LAYOUT_BROADCAST, /* the input has stride 0 on some dimensions (maybe the axis); output packed */
    TU_LAYOUT_IN_PLACE,  /* output is the very same view as the input: permuted, padded, negated */
    TU_LAYOUT_TRANSPOSED, /* the input stores its dimensions in reverse order; output packed */
    TU_LAYOUT_PITCHED,   /* input rows one element longer than the last dimension; output packed */
    TU_LAYOUT_COUNT
} tu_layout_kind;

const char *tu_layout_name(tu_layout_kind kind);

/* One scan to run: shape, request, layout and data. desc.algo is left to the suite. */
typedef struct tu_case {
    tscan_dtype dtype;       /* the input's, and the output's unless `wider` */
    int wider;               /* 1: the output is of wider_dtype (CONTRACT §1.2) */
    tscan_dtype wider_dtype;
    uint32_t ndim;
    int64_t sizes[TSCAN_MAX_DIMS];
    tscan_scan_desc desc;
    tu_layout_kind layout;
    tu_data data;
    uint64_t seed; /* drives the layout's random choices and the data */
    int aligned;   /* views start SLACK elements into their buffers, not a random 0..3 more */
} tu_case;

/* "float32 sum axis 1 decreasing exclusive sizes {2,5,3} permuted random seed 0x1234"; a wider
 * output shows as "uint8->int32". */
void tu_case_describe(const tu_case *c, char *buf, size_t size);

/* The output's dtype of c: dtype, or wider_dtype when c->wider. */
tscan_dtype tu_case_out_dtype(const tu_case *c);

/* Byte written around and between the views, so stray writes show. */
#define TU_POISON 0xA5

/*
 * The host memory of one case. in_buf holds the input view's elements (random data of
 * c.data) and poison everywhere else; out_buf is all poison (in place: out_buf == in_buf and
 * output == input). Each buffer has slack before and after its view, and views start a
 * random 0..3 elements into the slack, so data is aligned to the element size only; with
 * c.aligned they start exactly SLACK (8) elements in, so that whole vectors of up to 8
 * elements (and 32-bit words of small ones) line up wherever the strides allow.
 * in_init/out_init are snapshots of the buffers as built: the original input (for a
 * tolerance bound, or a fresh copy to the device) after a scan wrote the buffers.
 */
typedef struct tu_layout {
    tu_case c;
    unsigned char *in_buf;
    size_t in_bytes;
    unsigned char *out_buf; /* == in_buf in place */
    size_t out_bytes;
    tscan_tensor input, output; /* views into in_buf / out_buf */
    unsigned char *in_init;
    unsigned char *out_init; /* == in_init in place */
} tu_layout;

/* Builds the layout of c; aborts on allocation failure, or on an in-place case with a wider
 * output (tests only). */
void tu_layout_make(tu_layout *l, const tu_case *c);
void tu_layout_free(tu_layout *l);
/* The input view on the snapshot in_init: the original input whatever ran since. */
tscan_tensor tu_layout_input_init(const tu_layout *l);
/* A new malloc'd buffer of out_bytes: out_init after tscan_scan_reference ran on copies of
 * the snapshots (free it). Aborts if the reference fails. */
unsigned char *tu_layout_expected(const tu_layout *l);

/*
 * The case matrix: every dtype × op × direction × exclusive × ndim 1..8 × layout
 * (TU_MATRIX_COUNT cases), each with small random sizes (axis up to 9, other dimensions
 * up to 3, one case in 32 empty), a data kind suited to the op drawn from the seed
 * (integers: random bit patterns; float sums: SMALL_INT or RANDOM; float products:
 * SMALL_INT, POW2 or NEAR_ONE) and a fixed seed. desc.algo is AUTO.
 */
#define TU_MATRIX_COUNT ((size_t)TSCAN_DTYPE_COUNT * TSCAN_OP_COUNT * 2 * 2 * TSCAN_MAX_DIMS * TU_LAYOUT_COUNT)
void tu_matrix_case(size_t index, tu_case *c);

/* ---- checks --------------------------------------------------------------------------- */

/*
 * Tolerance. Integers, and floats whose data makes every order exact (tu_case_tolerance_k
 * answers 0), compare exactly: equal values of the same sign (-0 is not +0; no association
 * of such data changes the sign of a zero), or both NaN whatever the payload.
 * Other floats compare with
 *     sum:   |a - b| <= k * u * S      + ulp(max(|a|, |b|))
 *     prod:  |a - b| <= k * u * m * P  + ulp(max(|a|, |b|))
 * where S is the sum of |x| over the terms of that output element (the running sum of |x|
 * the spec names), P the product of |x| over them and m their number; u is the unit
 * roundoff of the accumulator (2^-24 for float32, float16 and bfloat16, 2^-53 for
 * float64), and ulp(v) the spacing of the output type at v (the subnormal spacing near 0).
 * Why these: any association of a sum differs from the exact one by at most h·u·S for a
 * tree of depth h (Higham, γ_h); with random signs the rounding errors cancel like a random
 * walk and both sides stay within about u·S of the exact value, so TU_TOLERANCE_K = 16
 * leaves wide headroom and still catches a dropped or doubled term (an error of |x|, far
 * above 16u·S for the short lines of the matrix). A product of m factors carries at most
 * m relative roundings on each side, so 2·u·m·P is a rigorous bound and 16 is generous.
 * The ulp term is the one final rounding of a half output: two float32 running values that
 * close round to output values at most one output ulp further apart (for float32/float64
 * it only adds a rounding step, and covers results near zero).
 * Both sides must agree on non-finite values: the same infinity, or both NaN.
 */
#define TU_TOLERANCE_K 16.0

/* 0 when c must match exactly (integer dtype, or SMALL_INT/POW2 data), else TU_TOLERANCE_K. */
double tu_case_tolerance_k(const tu_case *c);

/* Compares actual with expected (views of the same shape and dtype) over every element,
 * with tolerance k (0: exact) as above; input is the original input (the bound's terms).
 * Returns 1 when all match; else 0, with the first mismatch described in msg. */
int tu_compare_views(const tscan_scan_desc *desc, const tscan_tensor *input,
                     const tscan_tensor *expected, const tscan_tensor *actual, double k, char *msg,
                     size_t msg_size);

/* 1 when every byte of buf (bytes long) outside the elements of view (which points into
 * buf) equals the same byte of orig; else 0 with the first changed offset in msg. */
int tu_outside_view_unchanged(const tscan_tensor *view, const void *buf, const void *orig,
                              size_t bytes, char *msg, size_t msg_size);

/* The whole check of one run of l's case: `actual` is the output buffer after the scan
 * (out_bytes, host memory: l->out_buf itself or a copy of the device buffer), `expected`
 * what tu_layout_expected gave. Output elements compare with tolerance k, and every byte
 * outside the output view must be as built. Returns 1, or 0 with msg (which starts with
 * the case's description). */
int tu_check_output(const tu_layout *l, const void *actual, const void *expected, double k,
                    char *msg, size_t msg_size);

#endif /* TSCAN_TESTUTIL_H */
