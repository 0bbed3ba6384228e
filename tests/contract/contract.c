/*
 * contract.c - holds include/tscan.h to CONTRACT §3, compiled against the public header
 * alone as C99 with -pedantic (and, through contract.cpp, as C++17): every name and enum
 * value, the members of tscan_tensor and tscan_scan_desc with their types and order, every
 * function's exact type, and the semantics of CONTRACT §1 through tscan_scan_reference
 * with hand-computed answers (the DirectML worked examples, exclusive + decreasing, in place,
 * zero and negative strides, integer wrap-around).
 *
 * Self-contained on purpose: no testutil, no src/ header.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tscan.h"

/* A type mismatch below must stop the build, not warn. */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#pragma GCC diagnostic error "-Wpointer-sign"
#endif

/* C99 has no static_assert: a negative array size stops the build. */
#define CONTRACT_CAT2_(a, b) a##b
#define CONTRACT_CAT_(a, b) CONTRACT_CAT2_(a, b)
#define CONTRACT_STATIC_ASSERT(cond) \
    typedef char CONTRACT_CAT_(contract_static_assert_line_, __LINE__)[(cond) ? 1 : -1]

/* ---- names and values (CONTRACT §2 and §3) ---------------------------------------------- */

CONTRACT_STATIC_ASSERT(TSCAN_MAX_DIMS == 8);

CONTRACT_STATIC_ASSERT(TSCAN_SUCCESS == 0);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_INVALID_ARGUMENT != TSCAN_SUCCESS);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_OVERLAP != TSCAN_SUCCESS);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_NOT_SUPPORTED != TSCAN_SUCCESS);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_WORKSPACE != TSCAN_SUCCESS);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_CUDA != TSCAN_SUCCESS);
CONTRACT_STATIC_ASSERT(TSCAN_ERROR_INTERNAL != TSCAN_SUCCESS);

CONTRACT_STATIC_ASSERT(TSCAN_FLOAT32 == 0);
CONTRACT_STATIC_ASSERT(TSCAN_FLOAT16 == 1);
CONTRACT_STATIC_ASSERT(TSCAN_BFLOAT16 == 2);
CONTRACT_STATIC_ASSERT(TSCAN_FLOAT64 == 3);
CONTRACT_STATIC_ASSERT(TSCAN_INT8 == 4);
CONTRACT_STATIC_ASSERT(TSCAN_UINT8 == 5);
CONTRACT_STATIC_ASSERT(TSCAN_INT16 == 6);
CONTRACT_STATIC_ASSERT(TSCAN_UINT16 == 7);
CONTRACT_STATIC_ASSERT(TSCAN_INT32 == 8);
CONTRACT_STATIC_ASSERT(TSCAN_UINT32 == 9);
CONTRACT_STATIC_ASSERT(TSCAN_INT64 == 10);
CONTRACT_STATIC_ASSERT(TSCAN_UINT64 == 11);
CONTRACT_STATIC_ASSERT(TSCAN_DTYPE_COUNT == 12);

CONTRACT_STATIC_ASSERT(TSCAN_OP_SUM == 0);
CONTRACT_STATIC_ASSERT(TSCAN_OP_PROD == 1);
CONTRACT_STATIC_ASSERT(TSCAN_OP_COUNT == 2);

CONTRACT_STATIC_ASSERT(TSCAN_INCREASING == 0);
CONTRACT_STATIC_ASSERT(TSCAN_DECREASING == 1);

/* AUTO, then one value per strategy; CONTRACT §4 asks for at least four strategies. */
CONTRACT_STATIC_ASSERT(TSCAN_ALGO_AUTO == 0);
CONTRACT_STATIC_ASSERT(TSCAN_ALGO_COUNT >= 5);

/* The members, in CONTRACT §3's order, so positional initialisation means what it shows. */
CONTRACT_STATIC_ASSERT(offsetof(tscan_tensor, data) == 0);
CONTRACT_STATIC_ASSERT(offsetof(tscan_tensor, dtype) > offsetof(tscan_tensor, data));
CONTRACT_STATIC_ASSERT(offsetof(tscan_tensor, ndim) > offsetof(tscan_tensor, dtype));
CONTRACT_STATIC_ASSERT(offsetof(tscan_tensor, sizes) > offsetof(tscan_tensor, ndim));
CONTRACT_STATIC_ASSERT(offsetof(tscan_tensor, strides) > offsetof(tscan_tensor, sizes));
CONTRACT_STATIC_ASSERT(sizeof(((tscan_tensor *)0)->sizes) == TSCAN_MAX_DIMS * sizeof(int64_t));
CONTRACT_STATIC_ASSERT(sizeof(((tscan_tensor *)0)->strides) == TSCAN_MAX_DIMS * sizeof(int64_t));
CONTRACT_STATIC_ASSERT(sizeof(((tscan_tensor *)0)->ndim) == sizeof(uint32_t));
CONTRACT_STATIC_ASSERT(offsetof(tscan_scan_desc, op) == 0);
CONTRACT_STATIC_ASSERT(offsetof(tscan_scan_desc, axis) > offsetof(tscan_scan_desc, op));
CONTRACT_STATIC_ASSERT(offsetof(tscan_scan_desc, direction) > offsetof(tscan_scan_desc, axis));
CONTRACT_STATIC_ASSERT(offsetof(tscan_scan_desc, exclusive) > offsetof(tscan_scan_desc, direction));
CONTRACT_STATIC_ASSERT(offsetof(tscan_scan_desc, algo) > offsetof(tscan_scan_desc, exclusive));
CONTRACT_STATIC_ASSERT(sizeof(((tscan_scan_desc *)0)->axis) == sizeof(uint32_t));
CONTRACT_STATIC_ASSERT(sizeof(((tscan_scan_desc *)0)->exclusive) == sizeof(int));

/* Member types: each pointer initialisation fails to compile (see the pragmas) when the member
 * has another type. Called from a test so that nothing is unused. */
static int contract_member_types(void) {
    tscan_tensor t;
    tscan_scan_desc d;
    void **data = &t.data;
    tscan_dtype *dtype = &t.dtype;
    uint32_t *ndim = &t.ndim;
    int64_t(*sizes)[TSCAN_MAX_DIMS] = &t.sizes;
    int64_t(*strides)[TSCAN_MAX_DIMS] = &t.strides;
    tscan_op *op = &d.op;
    uint32_t *axis = &d.axis;
    tscan_direction *direction = &d.direction;
    int *exclusive = &d.exclusive;
    tscan_algo *algo = &d.algo;
    return data != NULL && dtype != NULL && ndim != NULL && sizes != NULL && strides != NULL &&
           op != NULL && axis != NULL && direction != NULL && exclusive != NULL && algo != NULL;
}

Test(contract, member_types_and_positional_init) {
    static float buf[6];
    tscan_tensor t = {buf, TSCAN_INT32, 2u, {2, 3}, {3, 1}};
    tscan_scan_desc d = {TSCAN_OP_PROD, 1u, TSCAN_DECREASING, 1, TSCAN_ALGO_AUTO};

    cr_assert(contract_member_types());
    cr_assert_eq(t.data, (void *)buf);
    cr_assert_eq(t.dtype, TSCAN_INT32);
    cr_assert_eq(t.ndim, 2u);
    cr_assert_eq(t.sizes[0], 2);
    cr_assert_eq(t.sizes[1], 3);
    cr_assert_eq(t.sizes[2], 0);
    cr_assert_eq(t.strides[0], 3);
    cr_assert_eq(t.strides[1], 1);
    cr_assert_eq(d.op, TSCAN_OP_PROD);
    cr_assert_eq(d.axis, 1u);
    cr_assert_eq(d.direction, TSCAN_DECREASING);
    cr_assert_eq(d.exclusive, 1);
    cr_assert_eq(d.algo, TSCAN_ALGO_AUTO);
    /* every int64 value must fit, including ones past 2^31 and negative strides */
    t.sizes[7] = INT64_MAX;
    t.strides[7] = INT64_MIN;
    cr_assert_eq(t.sizes[7], INT64_MAX);
    cr_assert_eq(t.strides[7], INT64_MIN);
}

/* ---- function types: each initialisation fails to compile on any other signature -------- */

Test(contract, function_types) {
    tscan_status (*p_tensor_init)(tscan_tensor *, void *, tscan_dtype, uint32_t, const int64_t *,
                                  const int64_t *) = tscan_tensor_init;
    tscan_status (*p_workspace_size)(const tscan_scan_desc *, const tscan_tensor *,
                                     const tscan_tensor *, size_t *) = tscan_scan_workspace_size;
    tscan_status (*p_scan)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *,
                           void *, size_t, cudaStream_t) = tscan_scan;
    tscan_status (*p_reference)(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *) = tscan_scan_reference;
    tscan_status (*p_supported)(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *) = tscan_scan_supported;
    tscan_status (*p_auto_algo)(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *, tscan_algo *) = tscan_scan_auto_algo;
    const char *(*p_status_string)(tscan_status) = tscan_status_string;
    const char *(*p_last_error)(void) = tscan_last_error;
    const char *(*p_dtype_name)(tscan_dtype) = tscan_dtype_name;
    size_t (*p_dtype_size)(tscan_dtype) = tscan_dtype_size;
    const char *(*p_algo_name)(tscan_algo) = tscan_algo_name;
    const char *(*p_op_name)(tscan_op) = tscan_op_name;
    int (*p_version)(void) = tscan_version;
    const char *(*p_version_string)(void) = tscan_version_string;
    int (*p_output_dtype_allowed)(tscan_dtype, tscan_dtype) = tscan_output_dtype_allowed;

    cr_assert(p_tensor_init && p_workspace_size && p_scan && p_reference && p_supported &&
              p_auto_algo && p_status_string && p_last_error && p_dtype_name && p_dtype_size &&
              p_algo_name && p_op_name && p_version && p_version_string && p_output_dtype_allowed);
    /* and they are callable through those pointers */
    cr_assert_str_eq(p_dtype_name(TSCAN_FLOAT32), "float32");
    cr_assert_str_eq(p_algo_name(TSCAN_ALGO_AUTO), "auto");
    cr_assert_eq(p_version(), TSCAN_VERSION);
    cr_assert(p_output_dtype_allowed(TSCAN_UINT8, TSCAN_INT32) && !p_output_dtype_allowed(TSCAN_INT32, TSCAN_UINT8));
}

Test(contract, names) {
    static const char *const dtype_names[TSCAN_DTYPE_COUNT] = {
        "float32", "float16", "bfloat16", "float64", "int8",   "uint8",
        "int16",   "uint16",  "int32",    "uint32",  "int64", "uint64"};
    static const size_t dtype_sizes[TSCAN_DTYPE_COUNT] = {4, 2, 2, 8, 1, 1, 2, 2, 4, 4, 8, 8};
    int i;
    for (i = 0; i < TSCAN_DTYPE_COUNT; i++) {
        const char *name = tscan_dtype_name((tscan_dtype)i);
        cr_assert(name != NULL, "tscan_dtype_name(%d) is NULL", i);
        cr_assert_str_eq(name, dtype_names[i], "tscan_dtype_name(%d)", i);
        cr_assert_eq(tscan_dtype_size((tscan_dtype)i), dtype_sizes[i], "tscan_dtype_size(%d)", i);
    }
    cr_assert_str_eq(tscan_algo_name(TSCAN_ALGO_AUTO), "auto");
    for (i = 0; i < TSCAN_ALGO_COUNT; i++)
        cr_assert(tscan_algo_name((tscan_algo)i) != NULL && tscan_algo_name((tscan_algo)i)[0],
                  "tscan_algo_name(%d) is empty", i);
    cr_assert_str_eq(tscan_op_name(TSCAN_OP_SUM), "sum");
    cr_assert_str_eq(tscan_op_name(TSCAN_OP_PROD), "prod");
    cr_assert_str_eq(tscan_status_string(TSCAN_SUCCESS), "TSCAN_SUCCESS");
    cr_assert_str_eq(tscan_status_string(TSCAN_ERROR_OVERLAP), "TSCAN_ERROR_OVERLAP");
    cr_assert(tscan_last_error() != NULL);
}

/* ---- semantics through the reference (CONTRACT §1) --------------------------------------- */

/* The operator documentation's input, sizes {1,1,3,4}. */
static const float example_input[12] = {2, 1, 3, 5, 3, 8, 7, 3, 9, 6, 2, 4};

typedef struct example {
    tscan_op op;
    uint32_t axis;
    tscan_direction direction;
    int exclusive;
    float expect[12];
} example;

/* CONTRACT §1's table, then more cases worked by hand on the same input. */
static const example examples[] = {
    {TSCAN_OP_SUM, 3, TSCAN_INCREASING, 0, {2, 3, 6, 11, 3, 11, 18, 21, 9, 15, 17, 21}},
    {TSCAN_OP_SUM, 3, TSCAN_INCREASING, 1, {0, 2, 3, 6, 0, 3, 11, 18, 0, 9, 15, 17}},
    {TSCAN_OP_SUM, 3, TSCAN_DECREASING, 0, {11, 9, 8, 5, 21, 18, 10, 3, 21, 12, 6, 4}},
    {TSCAN_OP_SUM, 2, TSCAN_INCREASING, 0, {2, 1, 3, 5, 5, 9, 10, 8, 14, 15, 12, 12}},
    {TSCAN_OP_PROD, 3, TSCAN_INCREASING, 0, {2, 2, 6, 30, 3, 24, 168, 504, 9, 54, 108, 432}},
    {TSCAN_OP_PROD, 3, TSCAN_INCREASING, 1, {1, 2, 2, 6, 1, 3, 24, 168, 1, 9, 54, 108}},
    {TSCAN_OP_PROD, 3, TSCAN_DECREASING, 0, {30, 15, 15, 5, 504, 168, 21, 3, 432, 48, 8, 4}},
    {TSCAN_OP_PROD, 2, TSCAN_INCREASING, 0, {2, 1, 3, 5, 6, 8, 21, 15, 54, 48, 42, 60}},
    /* exclusive + decreasing: out[k] = x[k+1] ⊕ ... ⊕ x[n-1] ⊕ e, out[n-1] = e */
    {TSCAN_OP_SUM, 3, TSCAN_DECREASING, 1, {9, 8, 5, 0, 18, 10, 3, 0, 12, 6, 4, 0}},
    {TSCAN_OP_PROD, 3, TSCAN_DECREASING, 1, {15, 15, 5, 1, 168, 21, 3, 1, 48, 8, 4, 1}},
    {TSCAN_OP_SUM, 2, TSCAN_DECREASING, 1, {12, 14, 9, 7, 9, 6, 2, 4, 0, 0, 0, 0}},
    {TSCAN_OP_PROD, 2, TSCAN_DECREASING, 1, {27, 48, 14, 12, 9, 6, 2, 4, 1, 1, 1, 1}},
    /* the other combinations along axis 2 */
    {TSCAN_OP_SUM, 2, TSCAN_DECREASING, 0, {14, 15, 12, 12, 12, 14, 9, 7, 9, 6, 2, 4}},
    {TSCAN_OP_SUM, 2, TSCAN_INCREASING, 1, {0, 0, 0, 0, 2, 1, 3, 5, 5, 9, 10, 8}},
    {TSCAN_OP_PROD, 2, TSCAN_DECREASING, 0, {54, 48, 42, 60, 27, 48, 14, 12, 9, 6, 2, 4}},
    {TSCAN_OP_PROD, 2, TSCAN_INCREASING, 1, {1, 1, 1, 1, 2, 1, 3, 5, 6, 8, 21, 15}},
    /* along the size-1 axes every line has one element: inclusive copies, exclusive gives e */
    {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, {2, 1, 3, 5, 3, 8, 7, 3, 9, 6, 2, 4}},
    {TSCAN_OP_PROD, 1, TSCAN_DECREASING, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
};

static const int64_t example_sizes[4] = {1, 1, 3, 4};

static void expect_floats(const float *got, const float *want, int n, const char *what, int idx) {
    int k;
    for (k = 0; k < n; k++)
        cr_assert_eq(got[k], want[k], "%s %d: element %d is %g, expected %g", what, idx, k,
                     (double)got[k], (double)want[k]);
}

static tscan_scan_desc make_desc(tscan_op op, uint32_t axis, tscan_direction direction,
                                 int exclusive) {
    tscan_scan_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.axis = axis;
    d.direction = direction;
    d.exclusive = exclusive;
    d.algo = TSCAN_ALGO_AUTO;
    return d;
}

Test(contract, worked_examples) {
    size_t i;
    for (i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        const example *e = &examples[i];
        float in[12], out[12];
        tscan_tensor tin, tout;
        tscan_scan_desc d = make_desc(e->op, e->axis, e->direction, e->exclusive);
        memcpy(in, example_input, sizeof in);
        memset(out, 0xA5, sizeof out);
        cr_assert_eq(tscan_tensor_init(&tin, in, TSCAN_FLOAT32, 4, example_sizes, NULL),
                     TSCAN_SUCCESS, "%s", tscan_last_error());
        cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_FLOAT32, 4, example_sizes, NULL),
                     TSCAN_SUCCESS, "%s", tscan_last_error());
        cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "example %d: %s",
                     (int)i, tscan_last_error());
        expect_floats(out, e->expect, 12, "example", (int)i);
        cr_assert_eq(memcmp(in, example_input, sizeof in), 0, "example %d changed its input",
                     (int)i);
    }
}

Test(contract, worked_examples_in_place) {
    size_t i;
    for (i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        const example *e = &examples[i];
        float buf[12];
        tscan_tensor t;
        tscan_scan_desc d = make_desc(e->op, e->axis, e->direction, e->exclusive);
        memcpy(buf, example_input, sizeof buf);
        cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT32, 4, example_sizes, NULL),
                     TSCAN_SUCCESS, "%s", tscan_last_error());
        cr_assert_eq(tscan_scan_reference(&d, &t, &t), TSCAN_SUCCESS, "example %d: %s", (int)i,
                     tscan_last_error());
        expect_floats(buf, e->expect, 12, "in-place example", (int)i);
    }
}

/* tscan_tensor_init with strides == NULL is packed row-major. */
Test(contract, tensor_init_packed_strides) {
    static const int64_t sizes[4] = {2, 3, 4, 5};
    int32_t buf[1];
    tscan_tensor t;
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_INT32, 4, sizes, NULL), TSCAN_SUCCESS, "%s",
                 tscan_last_error());
    cr_assert_eq(t.data, (void *)buf);
    cr_assert_eq(t.dtype, TSCAN_INT32);
    cr_assert_eq(t.ndim, 4u);
    cr_assert_eq(t.sizes[0], 2);
    cr_assert_eq(t.sizes[3], 5);
    cr_assert_eq(t.strides[0], 60);
    cr_assert_eq(t.strides[1], 20);
    cr_assert_eq(t.strides[2], 5);
    cr_assert_eq(t.strides[3], 1);
}

/* Zero strides on the input (broadcast): sizes {3,4}, input strides {0,1} over one row, and
 * a 1-D line that reads one element four times. */
Test(contract, zero_input_stride) {
    static const int64_t sizes[2] = {3, 4};
    static const int64_t in_strides[2] = {0, 1};
    int32_t row[4] = {2, 1, 3, 5}, out[12];
    static const int32_t want_rows[12] = {2, 3, 6, 11, 2, 3, 6, 11, 2, 3, 6, 11};
    static const int32_t want_cols[12] = {2, 1, 3, 5, 4, 2, 6, 10, 6, 3, 9, 15};
    static const int64_t line_size[1] = {4}, zero_stride[1] = {0};
    int32_t three[1] = {3}, line[4];
    static const int32_t want_line[4] = {3, 9, 27, 81};
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 1, TSCAN_INCREASING, 0);
    int k;

    cr_assert_eq(tscan_tensor_init(&tin, row, TSCAN_INT32, 2, sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_INT32, 2, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (k = 0; k < 12; k++) cr_assert_eq(out[k], want_rows[k], "axis 1, element %d", k);

    d.axis = 0; /* along the broadcast axis itself */
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (k = 0; k < 12; k++) cr_assert_eq(out[k], want_cols[k], "axis 0, element %d", k);

    d = make_desc(TSCAN_OP_PROD, 0, TSCAN_INCREASING, 0);
    cr_assert_eq(tscan_tensor_init(&tin, three, TSCAN_INT32, 1, line_size, zero_stride),
                 TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, line, TSCAN_INT32, 1, line_size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (k = 0; k < 4; k++) cr_assert_eq(line[k], want_line[k], "element %d", k);
    cr_assert_eq(three[0], 3);
}

/* Negative strides: data points at element (0,...,0), which is the end of the buffer. */
Test(contract, negative_strides) {
    int64_t buf[4] = {2, 1, 3, 5}, out[4];
    static const int64_t size[1] = {4}, back[1] = {-1}, fwd[1] = {1};
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0);
    int k;

    /* the line reads x = 5, 3, 1, 2; increasing sums are 5, 8, 9, 11 */
    cr_assert_eq(tscan_tensor_init(&tin, buf + 3, TSCAN_INT64, 1, size, back), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_INT64, 1, size, fwd), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    {
        static const int64_t want[4] = {5, 8, 9, 11};
        for (k = 0; k < 4; k++) cr_assert_eq(out[k], want[k], "neg in, element %d", k);
    }
    /* both backwards: logical x = 5,3,1,2 written backwards, so memory reads 11, 9, 8, 5 */
    memset(out, 0, sizeof out);
    cr_assert_eq(tscan_tensor_init(&tout, out + 3, TSCAN_INT64, 1, size, back), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    {
        static const int64_t want[4] = {11, 9, 8, 5};
        for (k = 0; k < 4; k++) cr_assert_eq(out[k], want[k], "both neg, element %d", k);
    }
    /* in place, backwards, exclusive decreasing product: x = 5,3,1,2 -> 6, 2, 2, 1 */
    d = make_desc(TSCAN_OP_PROD, 0, TSCAN_DECREASING, 1);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tin), TSCAN_SUCCESS, "%s", tscan_last_error());
    {
        static const int64_t want[4] = {1, 2, 2, 6}; /* memory order */
        for (k = 0; k < 4; k++) cr_assert_eq(buf[k], want[k], "in place neg, element %d", k);
    }
}

/* Negative stride on an outer axis of the worked example: rows read bottom-up. */
Test(contract, negative_row_stride_2d) {
    float in[12], out[12];
    static const int64_t sizes[2] = {3, 4}, in_strides[2] = {-4, 1};
    /* rows (9,6,2,4), (3,8,7,3), (2,1,3,5) scanned down axis 0 */
    static const float want[12] = {9, 6, 2, 4, 12, 14, 9, 7, 14, 15, 12, 12};
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0);
    memcpy(in, example_input, sizeof in);
    cr_assert_eq(tscan_tensor_init(&tin, in + 8, TSCAN_FLOAT32, 2, sizes, in_strides),
                 TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_FLOAT32, 2, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    expect_floats(out, want, 12, "negative row stride", 0);
}

/* Integers wrap modulo 2^bits, signed ones too. */
Test(contract, integer_wraparound) {
    static const int64_t size[1] = {3};
    int8_t i8[3] = {100, 100, 100}, o8[3];
    uint8_t u8[3] = {16, 16, 2}, ou8[3];
    int32_t i32[3] = {INT32_MAX, 1, -1}, o32[3];
    tscan_tensor tin, tout;
    tscan_scan_desc sum = make_desc(TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0);
    tscan_scan_desc prod = make_desc(TSCAN_OP_PROD, 0, TSCAN_INCREASING, 0);

    cr_assert_eq(tscan_tensor_init(&tin, i8, TSCAN_INT8, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, o8, TSCAN_INT8, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&sum, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert(o8[0] == 100 && o8[1] == -56 && o8[2] == 44, "int8 sums %d %d %d", o8[0], o8[1],
              o8[2]);

    cr_assert_eq(tscan_tensor_init(&tin, u8, TSCAN_UINT8, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, ou8, TSCAN_UINT8, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&prod, &tin, &tout), TSCAN_SUCCESS, "%s",
                 tscan_last_error());
    cr_assert(ou8[0] == 16 && ou8[1] == 0 && ou8[2] == 0, "uint8 products %u %u %u", ou8[0],
              ou8[1], ou8[2]);

    cr_assert_eq(tscan_tensor_init(&tin, i32, TSCAN_INT32, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, o32, TSCAN_INT32, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&sum, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert(o32[0] == INT32_MAX && o32[1] == INT32_MIN && o32[2] == INT32_MAX,
              "int32 sums %d %d %d", (int)o32[0], (int)o32[1], (int)o32[2]);
}

/* Half types are 16-bit patterns; float16 keeps the running value in float32, so 2048 + 1 + 1
 * gives 2050 (a float16 accumulator would stay at 2048). */
Test(contract, float16_accumulates_in_float32) {
    static const int64_t size[1] = {3};
    /* float16 bits: 2048 = 0x6800, 1 = 0x3C00, 2050 = 0x6801 */
    uint16_t in[3] = {0x6800, 0x3C00, 0x3C00}, out[3];
    /* bfloat16 bits: 256 = 0x4380, 1 = 0x3F80, 258 = 0x4381 */
    uint16_t bin[3] = {0x4380, 0x3F80, 0x3F80};
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0);
    cr_assert_eq(tscan_tensor_init(&tin, in, TSCAN_FLOAT16, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_FLOAT16, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    /* 2049 rounds to even (2048), 2050 is exact */
    cr_assert(out[0] == 0x6800 && out[1] == 0x6800 && out[2] == 0x6801,
              "float16 sums 0x%04x 0x%04x 0x%04x", out[0], out[1], out[2]);

    cr_assert_eq(tscan_tensor_init(&tin, bin, TSCAN_BFLOAT16, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_BFLOAT16, 1, size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert(out[0] == 0x4380 && out[1] == 0x4380 && out[2] == 0x4381,
              "bfloat16 sums 0x%04x 0x%04x 0x%04x", out[0], out[1], out[2]);
}

/* A size of 0 is a valid empty tensor: success, nothing written. */
Test(contract, empty_tensor) {
    static const int64_t sizes[2] = {0, 4};
    float out[4] = {7, 7, 7, 7};
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 1, TSCAN_INCREASING, 0);
    int k;
    cr_assert_eq(tscan_tensor_init(&tin, out, TSCAN_FLOAT32, 2, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_FLOAT32, 2, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (k = 0; k < 4; k++) cr_assert_eq(out[k], 7.0f);
}

/* An error is a status and a message, and writes nothing. */
Test(contract, error_status_and_message) {
    static const int64_t sizes[3] = {1, 3, 4};
    float in[12], out[12];
    tscan_tensor tin, tout;
    tscan_scan_desc d = make_desc(TSCAN_OP_SUM, 4, TSCAN_INCREASING, 0);
    int k;
    memcpy(in, example_input, sizeof in);
    memset(out, 0, sizeof out);
    cr_assert_eq(tscan_tensor_init(&tin, in, TSCAN_FLOAT32, 3, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, TSCAN_FLOAT32, 3, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(tscan_last_error(), "axis") != NULL && strstr(tscan_last_error(), "4"),
              "message \"%s\" names neither axis nor 4", tscan_last_error());
    for (k = 0; k < 12; k++) cr_assert_eq(out[k], 0.0f);

    d.axis = 1;
    tout.data = in + 1; /* overlaps the input, not the same view */
    cr_assert_eq(tscan_scan_reference(&d, &tin, &tout), TSCAN_ERROR_OVERLAP);
    cr_assert(tscan_last_error()[0] != '\0');
    cr_assert_eq(memcmp(in, example_input, sizeof in), 0);
}
