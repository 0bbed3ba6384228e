/*
 * reference.c - tscan_scan_reference, the oracle: a sequential walk of every line of the
 * original tensor, exactly as CONTRACT §1 defines the scan.
 *
 * Each element is read before its output is written, so the output may be the very same
 * view as the input. Offsets are int64 element counts throughout.
 */
#include "tscan_internal.h"

/* One line, walked in scan order: element k is at in + k * in_step (bytes). The input is of
 * in_dtype, the output's type or a narrower one (widened on load). */
typedef struct ref_line {
    const char *in;
    char *out;
    int64_t n;
    int64_t in_step, out_step;
    tscan_op op;
    int exclusive;
    tscan_dtype in_dtype;
    int widens; /* in_dtype is not the output's type */
} ref_line;

/* An integer element as C converts it to uint64_t: signed types sign-extend, unsigned ones
 * zero-extend. Converting that on to a narrower unsigned type keeps it modulo 2^bits, as a
 * direct conversion would. */
static uint64_t ref_integer(tscan_dtype t, const void *p) {
    switch (t) {
    case TSCAN_INT8: return (uint64_t)(int64_t)*(const int8_t *)p;
    case TSCAN_UINT8: return *(const uint8_t *)p;
    case TSCAN_INT16: return (uint64_t)(int64_t)*(const int16_t *)p;
    case TSCAN_UINT16: return *(const uint16_t *)p;
    case TSCAN_INT32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case TSCAN_UINT32: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p; /* int64, uint64 */
    }
}

/* A float element, exactly, as a double (every float type widens to it without rounding). */
static double ref_float(tscan_dtype t, const void *p) {
    switch (t) {
    case TSCAN_FLOAT16: return tscan_half_to_float(*(const uint16_t *)p);
    case TSCAN_BFLOAT16: return tscan_bfloat16_to_float(*(const uint16_t *)p);
    case TSCAN_FLOAT32: return *(const float *)p;
    default: return *(const double *)p; /* float64 */
    }
}

/* The input of a widening scan, by the output's kind (TSCAN_DTYPE_LIST). */
#define REF_WIDEN_signed ref_integer
#define REF_WIDEN_unsigned ref_integer
#define REF_WIDEN_float ref_float

/*
 * Per dtype: the running-value type and how an element loads into it and stores from it.
 * Half types run in float and round each output to nearest even. Integers run in an
 * unsigned type of at least 32 bits (narrower ones would promote to int and could overflow
 * it), loaded and stored through the unsigned type of the element's width: the result
 * modulo 2^bits is then exact for signed types too, with no undefined behaviour.
 */
#define REF_ACC_float32 float
#define REF_LOAD_float32(p) (*(const float *)(p))
#define REF_STORE_float32(p, v) (*(float *)(p) = (v))
#define REF_ACC_float64 double
#define REF_LOAD_float64(p) (*(const double *)(p))
#define REF_STORE_float64(p, v) (*(double *)(p) = (v))
#define REF_ACC_float16 float
#define REF_LOAD_float16(p) tscan_half_to_float(*(const uint16_t *)(p))
#define REF_STORE_float16(p, v) (*(uint16_t *)(p) = tscan_float_to_half(v))
#define REF_ACC_bfloat16 float
#define REF_LOAD_bfloat16(p) tscan_bfloat16_to_float(*(const uint16_t *)(p))
#define REF_STORE_bfloat16(p, v) (*(uint16_t *)(p) = tscan_float_to_bfloat16(v))
#define REF_ACC_int8 uint32_t
#define REF_LOAD_int8(p) ((uint32_t)*(const uint8_t *)(p))
#define REF_STORE_int8(p, v) (*(uint8_t *)(p) = (uint8_t)(v))
#define REF_ACC_uint8 uint32_t
#define REF_LOAD_uint8(p) REF_LOAD_int8(p)
#define REF_STORE_uint8(p, v) REF_STORE_int8(p, v)
#define REF_ACC_int16 uint32_t
#define REF_LOAD_int16(p) ((uint32_t)*(const uint16_t *)(p))
#define REF_STORE_int16(p, v) (*(uint16_t *)(p) = (uint16_t)(v))
#define REF_ACC_uint16 uint32_t
#define REF_LOAD_uint16(p) REF_LOAD_int16(p)
#define REF_STORE_uint16(p, v) REF_STORE_int16(p, v)
#define REF_ACC_int32 uint32_t
#define REF_LOAD_int32(p) (*(const uint32_t *)(p))
#define REF_STORE_int32(p, v) (*(uint32_t *)(p) = (v))
#define REF_ACC_uint32 uint32_t
#define REF_LOAD_uint32(p) REF_LOAD_int32(p)
#define REF_STORE_uint32(p, v) REF_STORE_int32(p, v)
#define REF_ACC_int64 uint64_t
#define REF_LOAD_int64(p) (*(const uint64_t *)(p))
#define REF_STORE_int64(p, v) (*(uint64_t *)(p) = (v))
#define REF_ACC_uint64 uint64_t
#define REF_LOAD_uint64(p) REF_LOAD_int64(p)
#define REF_STORE_uint64(p, v) REF_STORE_int64(p, v)

/*
 * The scan of one line for one output dtype. Inclusive starts from x[0] itself, not e ⊕ x[0]
 * (they differ for a sum starting at -0); exclusive writes the running value, identity
 * first, before folding the element in. A narrower input converts to the accumulator (exact
 * for floats; modulo 2^32 or 2^64 for integers, which the store reduces to the output's bits).
 */
#define REF_DEFINE_LINE_SCAN(D, name, bytes, kind)                                             \
    static void scan_line_##name(const ref_line *l) {                                          \
        const int sum = l->op == TSCAN_OP_SUM;                                                 \
        REF_ACC_##name acc = sum ? (REF_ACC_##name)0 : (REF_ACC_##name)1;                      \
        for (int64_t k = 0; k < l->n; ++k) {                                                   \
            const char *in = l->in + k * l->in_step;                                           \
            REF_ACC_##name x = l->widens ? (REF_ACC_##name)REF_WIDEN_##kind(l->in_dtype, in)   \
                                         : REF_LOAD_##name(in);                                \
            char *out = l->out + k * l->out_step;                                              \
            if (l->exclusive) {                                                                \
                REF_STORE_##name(out, acc);                                                    \
                acc = sum ? (REF_ACC_##name)(acc + x) : (REF_ACC_##name)(acc * x);             \
            } else {                                                                           \
                acc = k == 0 ? x : sum ? (REF_ACC_##name)(acc + x) : (REF_ACC_##name)(acc * x); \
                REF_STORE_##name(out, acc);                                                    \
            }                                                                                  \
        }                                                                                      \
    }
TSCAN_DTYPE_LIST(REF_DEFINE_LINE_SCAN)
#undef REF_DEFINE_LINE_SCAN

typedef void (*ref_line_scan)(const ref_line *l);

static ref_line_scan line_scan_for(tscan_dtype dtype) {
    switch (dtype) {
#define REF_LINE_SCAN_CASE(D, name, bytes, kind) \
    case D: return scan_line_##name;
        TSCAN_DTYPE_LIST(REF_LINE_SCAN_CASE)
#undef REF_LINE_SCAN_CASE
    default: return NULL; /* tscan_validate refused it already */
    }
}

tscan_status tscan_scan_reference(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output) {
    tscan_status status = tscan_validate(desc, input, output);
    if (status != TSCAN_SUCCESS)
        return status;
    if (tscan_numel(input) == 0)
        return TSCAN_SUCCESS;

    ref_line_scan scan = line_scan_for(output->dtype);
    const int64_t in_elem = (int64_t)tscan_dtype_size(input->dtype);
    const int64_t out_elem = (int64_t)tscan_dtype_size(output->dtype);
    const uint32_t ndim = input->ndim, axis = desc->axis;
    const int64_t n = input->sizes[axis];
    ref_line line = {
        .n = n,
        .in_step = input->strides[axis] * in_elem,
        .out_step = output->strides[axis] * out_elem,
        .op = desc->op,
        .exclusive = desc->exclusive,
        .in_dtype = input->dtype,
        .widens = input->dtype != output->dtype,
    };
    /* Decreasing: the same walk started from element n-1 with the steps negated. */
    const int64_t first = desc->direction == TSCAN_DECREASING ? n - 1 : 0;
    if (desc->direction == TSCAN_DECREASING) {
        line.in_step = -line.in_step;
        line.out_step = -line.out_step;
    }

    /* Odometer over every index but the axis (idx[axis] stays 0): one line per position. */
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    int64_t offset[2] = {first * input->strides[axis], first * output->strides[axis]};
    const int64_t *const strides[2] = {input->strides, output->strides};
    do {
        line.in = (const char *)input->data + offset[0] * in_elem;
        line.out = (char *)output->data + offset[1] * out_elem;
        scan(&line);
    } while (tscan_next_index(ndim, input->sizes, axis, idx, 2, strides, offset));
    return TSCAN_SUCCESS;
}
