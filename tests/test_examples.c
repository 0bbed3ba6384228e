/*
 * test_examples.c - DirectML's worked examples (CONTRACT §1) through tscan_scan_reference:
 * the contract's eight exactly in float32, the eight remaining combinations of op × axis ×
 * direction × exclusive derived by hand, and all sixteen in every dtype (the values are
 * small integers; int8/uint8 products wrap modulo 256), out of place and in place.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "testutil.h"

/* The input, sizes {1,1,3,4}, row-major. */
static const int64_t example_sizes[4] = {1, 1, 3, 4};
static const double example_input[12] = {
    2, 1, 3, 5,
    3, 8, 7, 3,
    9, 6, 2, 4,
};

typedef struct example {
    const char *source;
    tscan_op op;
    uint32_t axis;
    tscan_direction direction;
    int exclusive;
    double output[12];
} example;

static const example examples[] = {
    /* The spec's (DirectML's) eight. */
    {"spec", TSCAN_OP_SUM, 3, TSCAN_INCREASING, 0, {2, 3, 6, 11, 3, 11, 18, 21, 9, 15, 17, 21}},
    {"spec", TSCAN_OP_SUM, 3, TSCAN_INCREASING, 1, {0, 2, 3, 6, 0, 3, 11, 18, 0, 9, 15, 17}},
    {"spec", TSCAN_OP_SUM, 3, TSCAN_DECREASING, 0, {11, 9, 8, 5, 21, 18, 10, 3, 21, 12, 6, 4}},
    {"spec", TSCAN_OP_SUM, 2, TSCAN_INCREASING, 0, {2, 1, 3, 5, 5, 9, 10, 8, 14, 15, 12, 12}},
    {"spec", TSCAN_OP_PROD, 3, TSCAN_INCREASING, 0, {2, 2, 6, 30, 3, 24, 168, 504, 9, 54, 108, 432}},
    {"spec", TSCAN_OP_PROD, 3, TSCAN_INCREASING, 1, {1, 2, 2, 6, 1, 3, 24, 168, 1, 9, 54, 108}},
    {"spec", TSCAN_OP_PROD, 3, TSCAN_DECREASING, 0, {30, 15, 15, 5, 504, 168, 21, 3, 432, 48, 8, 4}},
    {"spec", TSCAN_OP_PROD, 2, TSCAN_INCREASING, 0, {2, 1, 3, 5, 6, 8, 21, 15, 54, 48, 42, 60}},
    /* Derived by hand. Axis 3, decreasing, exclusive: out[k] = x[k+1] ⊕ … ⊕ x[3] ⊕ e.
     *   sum:  [1+3+5, 3+5, 5, 0]  [8+7+3, 7+3, 3, 0]  [6+2+4, 2+4, 4, 0]
     *   prod: [1·3·5, 3·5, 5, 1]  [8·7·3, 7·3, 3, 1]  [6·2·4, 2·4, 4, 1] */
    {"hand", TSCAN_OP_SUM, 3, TSCAN_DECREASING, 1, {9, 8, 5, 0, 18, 10, 3, 0, 12, 6, 4, 0}},
    {"hand", TSCAN_OP_PROD, 3, TSCAN_DECREASING, 1, {15, 15, 5, 1, 168, 21, 3, 1, 48, 8, 4, 1}},
    /* Axis 2 (down the columns), increasing, exclusive: row 0 is e, row 1 is input row 0,
     * row 2 is row0 ⊕ row1 = [2+3, 1+8, 3+7, 5+3] or [2·3, 1·8, 3·7, 5·3]. */
    {"hand", TSCAN_OP_SUM, 2, TSCAN_INCREASING, 1, {0, 0, 0, 0, 2, 1, 3, 5, 5, 9, 10, 8}},
    {"hand", TSCAN_OP_PROD, 2, TSCAN_INCREASING, 1, {1, 1, 1, 1, 2, 1, 3, 5, 6, 8, 21, 15}},
    /* Axis 2, decreasing, inclusive: row 2 is input row 2; row 1 = row1 ⊕ row2 =
     * [3+9, 8+6, 7+2, 3+4] = [12,14,9,7] or [3·9, 8·6, 7·2, 3·4] = [27,48,14,12]; row 0 =
     * row0 ⊕ that = [14,15,12,12] or [54,48,42,60] (the spec's axis-2 totals, as they must be). */
    {"hand", TSCAN_OP_SUM, 2, TSCAN_DECREASING, 0, {14, 15, 12, 12, 12, 14, 9, 7, 9, 6, 2, 4}},
    {"hand", TSCAN_OP_PROD, 2, TSCAN_DECREASING, 0, {54, 48, 42, 60, 27, 48, 14, 12, 9, 6, 2, 4}},
    /* Axis 2, decreasing, exclusive: the inclusive rows moved up one, e in the last row. */
    {"hand", TSCAN_OP_SUM, 2, TSCAN_DECREASING, 1, {12, 14, 9, 7, 9, 6, 2, 4, 0, 0, 0, 0}},
    {"hand", TSCAN_OP_PROD, 2, TSCAN_DECREASING, 1, {27, 48, 14, 12, 9, 6, 2, 4, 1, 1, 1, 1}},
};
enum { EXAMPLE_COUNT = sizeof examples / sizeof examples[0] };

/* Runs one example in dtype t (in place: the output is the input's own view) and checks
 * all twelve outputs exactly: the same bytes as the expected value stored in t, so integer
 * results compare modulo 2^bits. */
static void check_example(const example *ex, tscan_dtype t, int in_place) {
    const size_t elem = tscan_dtype_size(t);
    /* uint64_t storage: aligned for every dtype. */
    uint64_t in_words[12], out_words[12], want_word;
    unsigned char *in_buf = (unsigned char *)in_words, *out_buf = (unsigned char *)out_words;
    unsigned char *want = (unsigned char *)&want_word;
    for (int i = 0; i < 12; ++i)
        tu_set(t, in_buf + i * elem, example_input[i]);
    memset(out_buf, TU_POISON, sizeof out_words);

    tscan_tensor input, output;
    cr_assert_eq(tscan_tensor_init(&input, in_buf, t, 4, example_sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&output, in_place ? in_buf : out_buf, t, 4, example_sizes, NULL),
                 TSCAN_SUCCESS);
    tscan_scan_desc desc = {ex->op, ex->axis, ex->direction, ex->exclusive, TSCAN_ALGO_AUTO};
    tscan_status s = tscan_scan_reference(&desc, &input, &output);
    const char *what = ex->exclusive ? "exclusive" : "inclusive";
    const char *dir = ex->direction == TSCAN_DECREASING ? "decreasing" : "increasing";
    cr_assert_eq(s, TSCAN_SUCCESS, "%s %s axis %u %s %s (%s): %s", tscan_dtype_name(t),
                 tscan_op_name(ex->op), ex->axis, dir, what, ex->source, tscan_last_error());

    const unsigned char *got = in_place ? in_buf : out_buf;
    for (int i = 0; i < 12; ++i) {
        tu_set(t, want, ex->output[i]);
        cr_assert(memcmp(got + i * elem, want, elem) == 0,
                  "%s %s axis %u %s %s (%s, %s): element %d is %.17g, expected %.17g",
                  tscan_dtype_name(t), tscan_op_name(ex->op), ex->axis, dir, what, ex->source,
                  in_place ? "in place" : "out of place", i, tu_get(t, got + i * elem),
                  tu_get(t, want));
    }
    if (!in_place)
        for (size_t b = 12 * elem; b < sizeof out_words; ++b)
            cr_assert_eq(out_buf[b], TU_POISON, "byte %zu past the output was written", b);
}

Test(examples, spec_examples_float32) {
    for (int e = 0; e < EXAMPLE_COUNT; ++e)
        if (strcmp(examples[e].source, "spec") == 0)
            check_example(&examples[e], TSCAN_FLOAT32, 0);
}

Test(examples, hand_derived_examples_float32) {
    for (int e = 0; e < EXAMPLE_COUNT; ++e)
        if (strcmp(examples[e].source, "hand") == 0)
            check_example(&examples[e], TSCAN_FLOAT32, 0);
}

Test(examples, every_dtype) {
    for (int t = 0; t < TSCAN_DTYPE_COUNT; ++t)
        for (int e = 0; e < EXAMPLE_COUNT; ++e)
            check_example(&examples[e], (tscan_dtype)t, 0);
}

Test(examples, every_dtype_in_place) {
    for (int t = 0; t < TSCAN_DTYPE_COUNT; ++t)
        for (int e = 0; e < EXAMPLE_COUNT; ++e)
            check_example(&examples[e], (tscan_dtype)t, 1);
}

/* The wrap-around the generic check relies on, spelled out: 504 and 432 in 8 bits. */
Test(examples, int8_products_wrap) {
    int8_t in[12], out[12];
    for (int i = 0; i < 12; ++i)
        in[i] = (int8_t)example_input[i];
    tscan_tensor input, output;
    tscan_tensor_init(&input, in, TSCAN_INT8, 4, example_sizes, NULL);
    tscan_tensor_init(&output, out, TSCAN_INT8, 4, example_sizes, NULL);
    tscan_scan_desc desc = {TSCAN_OP_PROD, 3, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS);
    static const int8_t want[12] = {2, 2, 6, 30, 3, 24, -88 /* 168 */, -8 /* 504 */,
                                    9, 54, 108, -80 /* 432 */};
    cr_assert_arr_eq(out, want, sizeof want);
}

/* README's wider-output example: a uint8 mask of 300 ones (any uint8 sum of them wraps) scanned
 * exclusively into int32 offsets, every third element left out. */
Test(examples, readme_mask_into_int32_offsets) {
    enum { N = 300 };
    uint8_t mask[N];
    int32_t offsets[N];
    const int64_t n = N;
    int32_t kept = 0;
    for (int k = 0; k < N; ++k)
        mask[k] = k % 3 != 2;
    tscan_tensor in, out;
    tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, /*exclusive*/ 1, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_tensor_init(&in, mask, TSCAN_UINT8, 1, &n, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, offsets, TSCAN_INT32, 1, &n, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &in, &out), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (int k = 0; k < N; ++k) {
        cr_assert_eq(offsets[k], kept, "offset %d: %d, expected %d", k, offsets[k], kept);
        kept += mask[k];
    }
    cr_assert_eq(kept, 200, "more kept elements than a uint8 holds");
}
