/*
 * test_reference.c - properties of tscan_scan_reference, the oracle.
 *
 * Over the whole case matrix (every dtype × op × direction × exclusive × ndim 1..8 ×
 * layout): agreement with an independent from-scratch recomputation of every element,
 * exclusive = inclusive shifted by one behind the identity, decreasing = increasing on the
 * reversed view, a packed copy of the input gives the same result, and nothing outside the
 * output view is written. Then hand-computed cases: integer wrap-around, float32
 * accumulation of half types, float32/float64 accumulators, NaN and infinities, empty
 * tensors, errors passed through, 64-bit offsets, and the 2^26-element time bound.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static void run_reference(const tu_case *c, const tscan_scan_desc *desc, const tscan_tensor *in,
                          const tscan_tensor *out) {
    tscan_status s = tscan_scan_reference(desc, in, out);
    if (s != TSCAN_SUCCESS) {
        char what[256];
        tu_case_describe(c, what, sizeof what);
        cr_assert_fail("%s: reference returned %s: %s", what, tscan_status_string(s), tscan_last_error());
    }
}

/* Scans matrix case `index` through its own layout, checks the status and that only the
 * output view was written, and leaves the result in l (free it). */
static void scan_matrix_case(size_t index, tu_layout *l) {
    tu_case c;
    tu_matrix_case(index, &c);
    tu_layout_make(l, &c);
    run_reference(&c, &c.desc, &l->input, &l->output);
    char why[256], what[256];
    tu_case_describe(&c, what, sizeof what);
    if (!tu_outside_view_unchanged(&l->output, l->out_buf, l->out_init, l->out_bytes, why, sizeof why))
        cr_assert_fail("%s: %s", what, why);
    if (l->in_buf != l->out_buf)
        cr_assert(memcmp(l->in_buf, l->in_init, l->in_bytes) == 0, "%s: the input was written", what);
}

/* ---- the independent recomputation ------------------------------------------------------ */

/*
 * Every output element from scratch, straight from the table of CONTRACT §1: its terms
 * are x[0..k] (increasing) or x[k..n-1] (decreasing), less x[k] when exclusive, folded in
 * index order from the identity. Integers in uint64 (each term sign- or zero-extended, wrap
 * modulo 2^64, then truncated to the output dtype: the same residue as converting each term
 * to the output type first), floats in double; the result is stored in out_dtype (the
 * input's, or a wider one), packed in a new buffer *buf. For floats this is a different
 * precision and (decreasing) a different order than the reference's, so it compares within
 * the documented tolerance unless the data is exact.
 */
static tscan_tensor recompute(const tscan_scan_desc *desc, const tscan_tensor *input, tscan_dtype out_dtype,
                              void **buf) {
    tscan_tensor out;
    *buf = malloc((size_t)tscan_numel(input) * tscan_dtype_size(out_dtype) + 1);
    cr_assert(*buf != NULL, "out of memory");
    cr_assert_eq(tscan_tensor_init(&out, *buf, out_dtype, input->ndim, input->sizes, NULL), TSCAN_SUCCESS);
    const tscan_dtype t = input->dtype;
    const uint32_t axis = desc->axis;
    const int64_t n = input->sizes[axis];
    const int sum = desc->op == TSCAN_OP_SUM;
    int64_t idx[TSCAN_MAX_DIMS] = {0}, at[TSCAN_MAX_DIMS];
    if (tscan_numel(input) == 0)
        return out;
    do {
        int64_t k = idx[axis];
        int64_t first = desc->direction == TSCAN_INCREASING ? 0 : k;
        int64_t last = desc->direction == TSCAN_INCREASING ? k : n - 1;
        if (desc->exclusive) {
            if (desc->direction == TSCAN_INCREASING)
                --last;
            else
                ++first;
        }
        memcpy(at, idx, sizeof at);
        uint64_t int_acc = sum ? 0 : 1;
        double float_acc = sum ? 0.0 : 1.0;
        for (int64_t j = first; j <= last; ++j) {
            at[axis] = j;
            const void *x = tu_elem(input, at);
            if (tu_dtype_is_float(t))
                float_acc = sum ? float_acc + tu_get(t, x) : float_acc * tu_get(t, x);
            else
                int_acc = sum ? int_acc + tu_get_u64(t, x) : int_acc * tu_get_u64(t, x);
        }
        if (tu_dtype_is_float(t))
            tu_set(out_dtype, tu_elem(&out, idx), float_acc);
        else
            tu_set_u64(out_dtype, tu_elem(&out, idx), int_acc);
    } while (tu_next_index(input, idx));
    return out;
}

/* The reference's output in l against recompute's. */
static void expect_recomputed(const tu_layout *l) {
    tscan_tensor input = tu_layout_input_init(l);
    void *buf;
    tscan_tensor naive = recompute(&l->c.desc, &input, l->output.dtype, &buf);
    char why[256], what[256];
    if (!tu_compare_views(&l->c.desc, &input, &naive, &l->output, tu_case_tolerance_k(&l->c), why, sizeof why)) {
        tu_case_describe(&l->c, what, sizeof what);
        cr_assert_fail("%s: %s", what, why);
    }
    free(buf);
}

Test(reference, matrix_matches_independent_recomputation, .timeout = 60) {
    for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
        tu_layout l;
        scan_matrix_case(i, &l);
        expect_recomputed(&l);
        tu_layout_free(&l);
    }
}

/* ---- wider outputs ------------------------------------------------------------------------ */

/* The allowed pairs with two types, written out from CONTRACT §1.2 rather than derived
 * from the library's list: the tests below check both against each other. */
static int spec_allows_wider(tscan_dtype in, tscan_dtype out) {
    if (tu_dtype_is_float(in) != tu_dtype_is_float(out) || in == out)
        return 0;
    if (tu_dtype_is_float(in))
        return (in == TSCAN_FLOAT16 || in == TSCAN_BFLOAT16) ? out == TSCAN_FLOAT32 || out == TSCAN_FLOAT64
                                                             : in == TSCAN_FLOAT32 && out == TSCAN_FLOAT64;
    return tscan_dtype_size(out) >= tscan_dtype_size(in);
}

Test(reference, the_allowed_pairs_are_the_spec_s) {
    int pairs = 0;
    for (int in = 0; in < TSCAN_DTYPE_COUNT; ++in)
        for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out) {
            const int want = in == out || spec_allows_wider((tscan_dtype)in, (tscan_dtype)out);
            pairs += want;
            cr_assert_eq(tscan_output_dtype_allowed((tscan_dtype)in, (tscan_dtype)out), want, "%s into %s",
                         tscan_dtype_name((tscan_dtype)in), tscan_dtype_name((tscan_dtype)out));
        }
    cr_assert_eq(pairs, 12 + 32 + 5, "12 same-type pairs, 32 widening integer ones, 5 float ones");
    cr_assert(!tscan_output_dtype_allowed(TSCAN_DTYPE_COUNT, TSCAN_FLOAT32));
    cr_assert(!tscan_output_dtype_allowed(TSCAN_INT8, (tscan_dtype)-1));
}

/* Every widening pair over the matrix cases of its input dtype (every op, direction, exclusive,
 * ndim and layout but in place), against the recomputation in the output type. */
Test(reference, wider_outputs_match_independent_recomputation, .timeout = 120) {
    long runs = 0;
    for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out)
        for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
            tu_case c;
            tu_matrix_case(i, &c);
            if (!spec_allows_wider(c.dtype, (tscan_dtype)out) || c.layout == TU_LAYOUT_IN_PLACE)
                continue;
            c.wider = 1;
            c.wider_dtype = (tscan_dtype)out;
            tu_layout l;
            tu_layout_make(&l, &c);
            run_reference(&c, &c.desc, &l.input, &l.output);
            char why[256], what[256];
            tu_case_describe(&c, what, sizeof what);
            if (!tu_outside_view_unchanged(&l.output, l.out_buf, l.out_init, l.out_bytes, why, sizeof why))
                cr_assert_fail("%s: %s", what, why);
            cr_assert(memcmp(l.in_buf, l.in_init, l.in_bytes) == 0, "%s: the input was written", what);
            expect_recomputed(&l);
            tu_layout_free(&l);
            ++runs;
        }
    cr_assert_gt(runs, 37 * 300, "every pair ran its cases (%ld runs)", runs);
}

/* One 1-D line of `in` scanned into `out` (sum, inclusive, increasing); the outputs as
 * integers modulo 2^64 (widened from out as tu_get_u64 does) or doubles. */
static void scan_wider_line(tscan_dtype in, tscan_dtype out, int64_t n, const double *values, void *result) {
    unsigned char in_buf[64];
    tscan_tensor input, output;
    cr_assert_eq(tscan_tensor_init(&input, in_buf, in, 1, &n, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&output, result, out, 1, &n, NULL), TSCAN_SUCCESS);
    for (int64_t k = 0; k < n; ++k)
        tu_set(in, in_buf + k * (int64_t)tscan_dtype_size(in), values[k]);
    const tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS, "%s into %s: %s",
                 tscan_dtype_name(in), tscan_dtype_name(out), tscan_last_error());
}

Test(reference, wider_outputs_convert_as_c_converts) {
    /* uint8 into int16: 200 + 200 is 400, not 144 as in uint8 */
    const double bytes[] = {200, 200, 255};
    int16_t s16[3];
    scan_wider_line(TSCAN_UINT8, TSCAN_INT16, 3, bytes, s16);
    cr_assert(s16[0] == 200 && s16[1] == 400 && s16[2] == 655, "uint8 into int16: %d %d %d", s16[0], s16[1], s16[2]);
    /* int8 into uint16: -1 becomes 65535, -128 65408, then the sum wraps modulo 2^16 */
    const double signed_bytes[] = {-1, -128, 127};
    uint16_t u16[3];
    scan_wider_line(TSCAN_INT8, TSCAN_UINT16, 3, signed_bytes, u16);
    cr_assert(u16[0] == 65535 && u16[1] == 65407 && u16[2] == 65534, "int8 into uint16: %u %u %u", u16[0], u16[1],
              u16[2]);
    /* int32 into int64: past INT32_MAX without wrapping; int8 into uint64 sign-extends */
    const double big[] = {2147483647.0, 1, 2147483647.0};
    int64_t s64[3];
    scan_wider_line(TSCAN_INT32, TSCAN_INT64, 3, big, s64);
    cr_assert(s64[1] == INT64_C(2147483648) && s64[2] == INT64_C(4294967295), "int32 into int64: %lld %lld",
              (long long)s64[1], (long long)s64[2]);
    const double minus_one[] = {-1, 2};
    uint64_t u64[2];
    scan_wider_line(TSCAN_INT8, TSCAN_UINT64, 2, minus_one, u64);
    cr_assert(u64[0] == UINT64_MAX && u64[1] == 1, "int8 into uint64: %llu %llu", (unsigned long long)u64[0],
              (unsigned long long)u64[1]);
    /* float16 into float32: 2048 + 1 is 2049 (a float16 output rounds it back to 2048) */
    const double halves[] = {2048, 1, 0.5};
    float f32[3];
    scan_wider_line(TSCAN_FLOAT16, TSCAN_FLOAT32, 3, halves, f32);
    cr_assert(f32[1] == 2049.0f && f32[2] == 2049.5f, "float16 into float32: %g %g", f32[1], f32[2]);
    /* float32 into float64: 2^24 + 1 is exact in the output */
    const double wide[] = {16777216.0, 1};
    double f64[2];
    scan_wider_line(TSCAN_FLOAT32, TSCAN_FLOAT64, 2, wide, f64);
    cr_assert(f64[1] == 16777217.0, "float32 into float64: %.17g", f64[1]);
}

/* ---- exclusive = inclusive shifted ---------------------------------------------------- */

/* The elements at positions start .. start+count-1 along axis. */
static tscan_tensor axis_slice(const tscan_tensor *t, uint32_t axis, int64_t start, int64_t count) {
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    idx[axis] = start;
    tscan_tensor s = *t;
    s.data = tu_elem(t, idx);
    s.sizes[axis] = count;
    return s;
}

Test(reference, matrix_exclusive_is_inclusive_shifted, .timeout = 60) {
    for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
        tu_case c;
        tu_matrix_case(i, &c);
        int64_t count = 1;
        for (uint32_t d = 0; d < c.ndim; ++d)
            count *= c.sizes[d];
        if (!c.desc.exclusive || count == 0)
            continue;
        tu_layout l;
        scan_matrix_case(i, &l);
        tscan_tensor input = tu_layout_input_init(&l);
        void *buf;
        tscan_tensor inclusive = tu_packed_copy(&input, &buf);
        tscan_scan_desc inclusive_desc = c.desc;
        inclusive_desc.exclusive = 0;
        run_reference(&c, &inclusive_desc, &input, &inclusive);

        /* Scan order k = 0, 1, ...: exclusive[k] = inclusive[k-1] and exclusive[0] = e. */
        const uint32_t axis = c.desc.axis;
        const int64_t n = c.sizes[axis];
        const int increasing = c.desc.direction == TSCAN_INCREASING;
        tscan_tensor shifted_excl = axis_slice(&l.output, axis, increasing ? 1 : 0, n - 1);
        tscan_tensor shifted_incl = axis_slice(&inclusive, axis, increasing ? 0 : 1, n - 1);
        char why[256], what[256];
        tu_case_describe(&c, what, sizeof what);
        if (!tu_compare_views(&c.desc, &input, &shifted_incl, &shifted_excl, 0.0, why, sizeof why))
            cr_assert_fail("%s: exclusive vs inclusive shifted: %s", what, why);

        tscan_tensor first = axis_slice(&l.output, axis, increasing ? 0 : n - 1, 1);
        uint64_t identity; /* storage aligned for any dtype */
        tu_set(c.dtype, &identity, c.desc.op == TSCAN_OP_SUM ? 0.0 : 1.0);
        int64_t idx[TSCAN_MAX_DIMS] = {0};
        do
            cr_assert(tu_values_equal(c.dtype, tu_elem(&first, idx), &identity),
                      "%s: first exclusive output is %g, not the identity", what,
                      tu_get(c.dtype, tu_elem(&first, idx)));
        while (tu_next_index(&first, idx));
        free(buf);
        tu_layout_free(&l);
    }
}

/* ---- decreasing = increasing on the reversed view ------------------------------------- */

Test(reference, matrix_direction_is_the_reversed_view, .timeout = 60) {
    for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
        tu_layout l;
        scan_matrix_case(i, &l);
        /* The other direction over views reversed along the axis, on fresh copies of the
         * buffers: the very same elements meet the very same operations, so the output
         * buffers must end up identical byte for byte. */
        unsigned char *in_copy = malloc(l.in_bytes), *out_copy = malloc(l.out_bytes);
        cr_assert(in_copy && out_copy);
        memcpy(in_copy, l.in_init, l.in_bytes);
        memcpy(out_copy, l.out_init, l.out_bytes);
        const int in_place = l.in_buf == l.out_buf;
        tscan_tensor in = tu_view_rebase(&l.input, l.in_buf, in_place ? out_copy : in_copy);
        tscan_tensor out = tu_view_rebase(&l.output, l.out_buf, out_copy);
        const uint32_t axis = l.c.desc.axis;
        tscan_tensor in_reversed = tu_view_reversed(&in, axis), out_reversed = tu_view_reversed(&out, axis);
        tscan_scan_desc flipped = l.c.desc;
        flipped.direction = flipped.direction == TSCAN_INCREASING ? TSCAN_DECREASING : TSCAN_INCREASING;
        run_reference(&l.c, &flipped, &in_reversed, &out_reversed);
        char what[256];
        tu_case_describe(&l.c, what, sizeof what);
        cr_assert(memcmp(out_copy, l.out_buf, l.out_bytes) == 0,
                  "%s: the other direction on the reversed view differs", what);
        free(in_copy);
        free(out_copy);
        tu_layout_free(&l);
    }
}

/* ---- a packed copy of the input -------------------------------------------------------- */

Test(reference, matrix_packed_copy_gives_the_same_result, .timeout = 60) {
    for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
        tu_case c;
        tu_matrix_case(i, &c);
        if (c.layout == TU_LAYOUT_PACKED)
            continue;
        tu_layout l;
        scan_matrix_case(i, &l);
        tscan_tensor input = tu_layout_input_init(&l);
        void *in_buf, *out_buf;
        tscan_tensor packed_in = tu_packed_copy(&input, &in_buf);
        tscan_tensor packed_out = tu_packed_copy(&input, &out_buf);
        run_reference(&c, &c.desc, &packed_in, &packed_out);
        char why[256], what[256];
        if (!tu_compare_views(&c.desc, &input, &packed_out, &l.output, 0.0, why, sizeof why)) {
            tu_case_describe(&c, what, sizeof what);
            cr_assert_fail("%s: strided vs packed: %s", what, why);
        }
        free(in_buf);
        free(out_buf);
        tu_layout_free(&l);
    }
}

/* ---- the checks themselves ---------------------------------------------------------- */

/* The matrix tests lean on tu_check_output; it must pass a right result, allow a rounding
 * step on random floats, and catch a wrong element or a stray write. */
Test(reference, checks_catch_wrong_elements_and_stray_writes) {
    tu_case c = {.dtype = TSCAN_FLOAT32, .ndim = 2, .sizes = {4, 6}, .layout = TU_LAYOUT_PADDED,
                 .data = TU_DATA_RANDOM, .seed = tu_seed("checks_catch", 0)};
    c.desc = (tscan_scan_desc){TSCAN_OP_SUM, 1, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    tu_layout l;
    tu_layout_make(&l, &c);
    unsigned char *expected = tu_layout_expected(&l);
    cr_assert_eq(tscan_scan_reference(&c.desc, &l.input, &l.output), TSCAN_SUCCESS);
    char msg[512];
    const double k = tu_case_tolerance_k(&c);
    cr_assert_eq(k, TU_TOLERANCE_K);
    cr_assert(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "%s", msg);

    const int64_t idx[2] = {2, 3};
    float *e = tu_elem(&l.output, idx), right = *e;
    *e = nextafterf(right, INFINITY);
    cr_assert(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "one ulp refused: %s", msg);
    cr_assert_not(tu_check_output(&l, l.out_buf, expected, 0.0, msg, sizeof msg), "k = 0 allowed one ulp");
    *e = right + 0.01f;
    cr_assert_not(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "0.01 off passed");
    *e = NAN;
    cr_assert_not(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "NaN passed");
    *e = right;
    l.out_buf[0] ^= 1; /* slack before the view */
    cr_assert_not(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "stray write passed");
    l.out_buf[0] ^= 1;
    cr_assert(tu_check_output(&l, l.out_buf, expected, k, msg, sizeof msg), "%s", msg);
    free(expected);
    tu_layout_free(&l);

    c.dtype = TSCAN_INT64;
    tu_layout_make(&l, &c);
    expected = tu_layout_expected(&l);
    cr_assert_eq(tscan_scan_reference(&c.desc, &l.input, &l.output), TSCAN_SUCCESS);
    cr_assert_eq(tu_case_tolerance_k(&c), 0.0);
    int64_t *i = tu_elem(&l.output, idx);
    *i = (int64_t)((uint64_t)*i + 1);
    cr_assert_not(tu_check_output(&l, l.out_buf, expected, 0.0, msg, sizeof msg), "integer off by one passed");
    free(expected);
    tu_layout_free(&l);
}

/* ---- hand-computed lines ------------------------------------------------------------ */

/* One 1-D scan of up to 8 elements; values are integers modulo 2^64 (negative ones
 * written as (uint64_t)-x), compared after sign extension for signed dtypes. */
typedef struct int_line {
    tscan_dtype dtype;
    tscan_op op;
    tscan_direction direction;
    int exclusive;
    int64_t n;
    uint64_t in[8], out[8];
} int_line;

static void check_int_line(const int_line *c) {
    uint64_t in_words[8], out_words[8]; /* aligned for any dtype */
    unsigned char *in = (unsigned char *)in_words, *out = (unsigned char *)out_words;
    const size_t elem = tscan_dtype_size(c->dtype);
    for (int64_t i = 0; i < c->n; ++i)
        tu_set_u64(c->dtype, in + i * elem, c->in[i]);
    tscan_tensor input, output;
    cr_assert_eq(tscan_tensor_init(&input, in, c->dtype, 1, &c->n, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&output, out, c->dtype, 1, &c->n, NULL), TSCAN_SUCCESS);
    tscan_scan_desc desc = {c->op, 0, c->direction, c->exclusive, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (int64_t i = 0; i < c->n; ++i) {
        uint64_t got = tu_get_u64(c->dtype, out + i * elem);
        cr_assert_eq(got, c->out[i], "%s %s: element %ld is 0x%llx, expected 0x%llx", tscan_dtype_name(c->dtype),
                     tscan_op_name(c->op), (long)i, (unsigned long long)got, (unsigned long long)c->out[i]);
    }
}

#define NEG(x) ((uint64_t)(int64_t)(x))

Test(reference, integers_wrap_around) {
    static const int_line lines[] = {
        /* int8 sums past 127 wrap to -128; exclusive and decreasing too. */
        {TSCAN_INT8, TSCAN_OP_SUM, TSCAN_INCREASING, 0, 4, {100, 27, 1, 1}, {100, 127, NEG(-128), NEG(-127)}},
        {TSCAN_INT8, TSCAN_OP_SUM, TSCAN_INCREASING, 1, 4, {100, 27, 1, 1}, {0, 100, 127, NEG(-128)}},
        {TSCAN_INT8, TSCAN_OP_SUM, TSCAN_DECREASING, 0, 3, {NEG(-100), NEG(-28), NEG(-1)}, {127, NEG(-29), NEG(-1)}},
        {TSCAN_INT8, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 3, {NEG(-128), NEG(-1), 3}, {NEG(-128), NEG(-128), NEG(-128)}},
        {TSCAN_UINT8, TSCAN_OP_SUM, TSCAN_INCREASING, 0, 3, {200, 100, 212}, {200, 44, 0}},
        {TSCAN_UINT8, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 3, {16, 16, 3}, {16, 0, 0}},
        {TSCAN_INT16, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 3, {NEG(-32768), NEG(-1), 2}, {NEG(-32768), NEG(-32768), 0}},
        {TSCAN_INT16, TSCAN_OP_SUM, TSCAN_INCREASING, 0, 2, {32767, 32767}, {32767, NEG(-2)}},
        {TSCAN_UINT16, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 3, {65535, 65535, 65535}, {65535, 1, 65535}},
        {TSCAN_INT32, TSCAN_OP_SUM, TSCAN_INCREASING, 0, 2, {INT32_MAX, 1}, {INT32_MAX, NEG(INT32_MIN)}},
        /* 46341^2 = 2147488281 = 2^31 + 4633: -2147479015 as int32. */
        {TSCAN_INT32, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 2, {46341, 46341}, {46341, NEG(-2147479015)}},
        {TSCAN_UINT32, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 2, {0xffffffffu, 0xffffffffu}, {0xffffffffu, 1}},
        {TSCAN_INT64, TSCAN_OP_SUM, TSCAN_INCREASING, 0, 2, {INT64_MAX, 1}, {INT64_MAX, NEG(INT64_MIN)}},
        {TSCAN_INT64, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 2, {NEG(-1), NEG(INT64_MIN)}, {NEG(-1), NEG(INT64_MIN)}},
        /* (2^32 + 1)(2^32 - 1) = 2^64 - 1; then · 2^32 · 2^32 = 0 modulo 2^64. */
        {TSCAN_UINT64, TSCAN_OP_PROD, TSCAN_INCREASING, 0, 4, {0x100000001u, 0xffffffffu, 0x100000000u, 0x100000000u},
         {0x100000001u, UINT64_MAX, 0xffffffff00000000u, 0}},
        {TSCAN_UINT64, TSCAN_OP_SUM, TSCAN_DECREASING, 1, 3, {5, UINT64_MAX, UINT64_MAX}, {UINT64_MAX - 1, UINT64_MAX, 0}},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i)
        check_int_line(&lines[i]);
}

Test(reference, uint64_product_of_41_threes) {
    enum { N = 41 };
    uint64_t in[N], out[N];
    for (int i = 0; i < N; ++i)
        in[i] = 3;
    int64_t n = N;
    tscan_tensor input, output;
    tscan_tensor_init(&input, in, TSCAN_UINT64, 1, &n, NULL);
    tscan_tensor_init(&output, out, TSCAN_UINT64, 1, &n, NULL);
    tscan_scan_desc desc = {TSCAN_OP_PROD, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS);
    cr_assert_eq(out[39], 12157665459056928801u); /* 3^40 < 2^64 */
    cr_assert_eq(out[40], 18026252303461234787u); /* 3^41 - 2^64 */
}

/* ---- floating point: accumulators, rounding, specials -------------------------------------- */

/* Scans `n` values (float64 constants) as a 1-D line of dtype t, inclusive or exclusive;
 * output values in out. */
static void scan_floats_form(tscan_dtype t, tscan_op op, tscan_direction direction, int exclusive, int64_t n,
                             const double *values, double *out) {
    const size_t elem = tscan_dtype_size(t);
    unsigned char *in_buf = malloc((size_t)n * elem), *out_buf = malloc((size_t)n * elem);
    cr_assert(in_buf && out_buf);
    for (int64_t i = 0; i < n; ++i)
        tu_set(t, in_buf + i * elem, values[i]);
    tscan_tensor input, output;
    tscan_tensor_init(&input, in_buf, t, 1, &n, NULL);
    tscan_tensor_init(&output, out_buf, t, 1, &n, NULL);
    tscan_scan_desc desc = {op, 0, direction, exclusive, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (int64_t i = 0; i < n; ++i)
        out[i] = tu_get(t, out_buf + i * elem);
    free(in_buf);
    free(out_buf);
}

static void scan_floats(tscan_dtype t, tscan_op op, tscan_direction direction, int64_t n, const double *values,
                        double *out) {
    scan_floats_form(t, op, direction, 0, n, values, out);
}

Test(reference, half_types_accumulate_in_float32_and_round_each_output) {
    enum { N = 4096 };
    double *ones = malloc(N * sizeof *ones), *out = malloc(N * sizeof *out);
    cr_assert(ones && out);
    for (int i = 0; i < N; ++i)
        ones[i] = 1.0;

    /* float16: a half accumulator would stick at 2048 (2048 + 1 rounds back to 2048). */
    scan_floats(TSCAN_FLOAT16, TSCAN_OP_SUM, TSCAN_INCREASING, N, ones, out);
    cr_assert_eq(out[N - 1], 4096.0);
    cr_assert_eq(out[2047], 2048.0);
    cr_assert_eq(out[2048], 2048.0); /* 2049: tie between 2048 and 2050, even is 2048 */
    cr_assert_eq(out[2049], 2050.0);
    cr_assert_eq(out[2050], 2052.0); /* 2051: tie between 2050 and 2052, even is 2052 */
    cr_assert_eq(out[3000], 3000.0); /* 3001: tie, even 3000 */
    for (int i = 0; i < N; ++i)
        cr_assert_eq(out[i], tscan_half_to_float(tscan_float_to_half((float)(i + 1))), "float16 output %d", i);

    /* bfloat16: spacing 2 from 256, 4 from 512. */
    scan_floats(TSCAN_BFLOAT16, TSCAN_OP_SUM, TSCAN_INCREASING, 1024, ones, out);
    cr_assert_eq(out[1023], 1024.0);
    cr_assert_eq(out[256], 256.0); /* 257: tie, even 256 */
    cr_assert_eq(out[258], 260.0); /* 259: tie, even 260 */
    cr_assert_eq(out[513], 512.0); /* 514: tie between 512 and 516, even 512 */
    cr_assert_eq(out[517], 520.0); /* 518: tie between 516 and 520, even 520 */
    for (int i = 0; i < 1024; ++i)
        cr_assert_eq(out[i], tscan_bfloat16_to_float(tscan_float_to_bfloat16((float)(i + 1))), "bfloat16 output %d", i);

    /* Products: 3^k exact in float32 up to 3^15, rounded per output; 3^11 = 177147 is past
     * float16's range. */
    double threes[12];
    for (int i = 0; i < 12; ++i)
        threes[i] = 3.0;
    scan_floats(TSCAN_BFLOAT16, TSCAN_OP_PROD, TSCAN_INCREASING, 12, threes, out);
    cr_assert_eq(out[5], 728.0); /* 729 = 0b1011011001 rounds to 728 at 8 bits */
    cr_assert_eq(out[11], tscan_bfloat16_to_float(tscan_float_to_bfloat16(531441.0f)));
    scan_floats(TSCAN_FLOAT16, TSCAN_OP_PROD, TSCAN_INCREASING, 12, threes, out);
    cr_assert_eq(out[8], 19680.0); /* 19683: spacing 16 there, nearest is 19680 */
    cr_assert_eq(out[9], 59040.0); /* 59049: spacing 32 there, nearest is 59040 */
    cr_assert(isinf(out[10]), "3^11 overflows float16");
    free(ones);
    free(out);
}

Test(reference, float32_and_float64_accumulate_in_their_own_precision) {
    const double f32[3] = {0x1p24, 1.0, 1.0}, f64[3] = {0x1p53, 1.0, 1.0};
    double out[3];
    scan_floats(TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 3, f32, out);
    cr_assert(out[1] == 0x1p24 && out[2] == 0x1p24, "float32 must round after every add: %g %g", out[1], out[2]);
    scan_floats(TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 3, f64, out);
    cr_assert(out[1] == 0x1p53 && out[2] == 0x1p53, "float64 must round after every add");
    /* Decreasing folds from the far end: 1 + 1 = 2 first, then 2^24 + 2 is exact. */
    scan_floats(TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_DECREASING, 3, f32, out);
    cr_assert(out[0] == 0x1p24 + 2 && out[1] == 2.0 && out[2] == 1.0);
}

Test(reference, nan_and_infinities_propagate) {
    const double inf = INFINITY;
    for (int t = 0; t < TSCAN_DTYPE_COUNT; ++t) {
        if (!tu_dtype_is_float((tscan_dtype)t))
            continue;
        const char *name = tscan_dtype_name((tscan_dtype)t);
        double out[5];
        const double sums[5] = {1, inf, 2, -inf, 3};
        scan_floats((tscan_dtype)t, TSCAN_OP_SUM, TSCAN_INCREASING, 5, sums, out);
        cr_assert(out[0] == 1 && out[1] == inf && out[2] == inf && isnan(out[3]) && isnan(out[4]),
                  "%s sum: %g %g %g %g %g", name, out[0], out[1], out[2], out[3], out[4]);
        scan_floats((tscan_dtype)t, TSCAN_OP_SUM, TSCAN_DECREASING, 5, sums, out);
        cr_assert(out[4] == 3 && out[3] == -inf && out[2] == -inf && isnan(out[1]) && isnan(out[0]),
                  "%s decreasing sum: %g %g %g %g %g", name, out[0], out[1], out[2], out[3], out[4]);
        const double prods[4] = {-2, inf, 0, 5};
        scan_floats((tscan_dtype)t, TSCAN_OP_PROD, TSCAN_INCREASING, 4, prods, out);
        cr_assert(out[0] == -2 && out[1] == -inf && isnan(out[2]) && isnan(out[3]),
                  "%s prod: %g %g %g %g", name, out[0], out[1], out[2], out[3]);
        const double with_nan[3] = {1, NAN, 2};
        scan_floats((tscan_dtype)t, TSCAN_OP_SUM, TSCAN_INCREASING, 3, with_nan, out);
        cr_assert(out[0] == 1 && isnan(out[1]) && isnan(out[2]), "%s NaN sum", name);
        scan_floats((tscan_dtype)t, TSCAN_OP_PROD, TSCAN_DECREASING, 3, with_nan, out);
        cr_assert(isnan(out[0]) && isnan(out[1]) && out[2] == 2, "%s NaN decreasing prod", name);
    }
}

Test(reference, the_sign_of_zero_follows_the_definition) {
    /* Inclusive out[k] = x[0] + ... + x[k]: a line of -0 stays -0 (starting from the identity
     * +0 would give +0). Exclusive out[k] = e + x[0] + ... + x[k-1]: +0 throughout. */
    const double zeros[3] = {-0.0, -0.0, -0.0};
    for (int t = 0; t < TSCAN_DTYPE_COUNT; ++t) {
        if (!tu_dtype_is_float((tscan_dtype)t))
            continue;
        const char *name = tscan_dtype_name((tscan_dtype)t);
        double out[3];
        for (int direction = 0; direction < 2; ++direction) {
            scan_floats_form((tscan_dtype)t, TSCAN_OP_SUM, (tscan_direction)direction, 0, 3, zeros, out);
            for (int k = 0; k < 3; ++k)
                cr_assert(out[k] == 0 && signbit(out[k]), "%s inclusive direction %d: out[%d] is %+g, not -0", name,
                          direction, k, out[k]);
            scan_floats_form((tscan_dtype)t, TSCAN_OP_SUM, (tscan_direction)direction, 1, 3, zeros, out);
            for (int k = 0; k < 3; ++k)
                cr_assert(out[k] == 0 && !signbit(out[k]), "%s exclusive direction %d: out[%d] is -0, not +0", name,
                          direction, k);
        }
    }
}

/* ---- empty tensors and errors --------------------------------------------------------- */

Test(reference, empty_tensors_succeed_and_write_nothing) {
    float in[16], out[16];
    memset(in, 1, sizeof in);
    for (uint32_t ndim = 1; ndim <= 3; ++ndim)
        for (uint32_t zero = 0; zero < ndim; ++zero)
            for (uint32_t axis = 0; axis < ndim; ++axis) {
                int64_t sizes[3] = {2, 3, 2};
                sizes[zero] = 0;
                tscan_tensor input, output;
                tscan_tensor_init(&input, in, TSCAN_FLOAT32, ndim, sizes, NULL);
                tscan_tensor_init(&output, out, TSCAN_FLOAT32, ndim, sizes, NULL);
                memset(out, TU_POISON, sizeof out);
                tscan_scan_desc desc = {TSCAN_OP_SUM, axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
                cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS,
                             "ndim %u, size 0 on dim %u, axis %u: %s", ndim, zero, axis, tscan_last_error());
                for (size_t b = 0; b < sizeof out; ++b)
                    cr_assert_eq(((unsigned char *)out)[b], TU_POISON, "an empty scan wrote byte %zu", b);
            }
}

Test(reference, invalid_requests_return_the_validation_status_and_write_nothing) {
    float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    const int64_t sizes[2] = {2, 4};
    tscan_tensor input, output, overlapping;
    tscan_tensor_init(&input, in, TSCAN_FLOAT32, 2, sizes, NULL);
    tscan_tensor_init(&output, out, TSCAN_FLOAT32, 2, sizes, NULL);
    const int64_t one[1] = {4};
    tscan_tensor_init(&overlapping, in + 1, TSCAN_FLOAT32, 1, one, NULL);
    tscan_tensor shifted = input;
    shifted.data = in + 1; /* overlaps the input without being the same view */
    shifted.sizes[0] = 1;
    tscan_tensor small_input = input;
    small_input.sizes[0] = 1;

    const tscan_scan_desc good = {TSCAN_OP_SUM, 1, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    tscan_scan_desc bad_axis = good, bad_op = good, bad_direction = good, bad_algo = good;
    bad_axis.axis = 2;
    bad_op.op = TSCAN_OP_COUNT;
    bad_direction.direction = (tscan_direction)2;
    bad_algo.algo = TSCAN_ALGO_COUNT;
    struct {
        const char *what;
        const tscan_scan_desc *desc;
        const tscan_tensor *in, *out;
        tscan_status expected;
    } cases[] = {
        {"axis out of range", &bad_axis, &input, &output, TSCAN_ERROR_INVALID_ARGUMENT},
        {"op out of range", &bad_op, &input, &output, TSCAN_ERROR_INVALID_ARGUMENT},
        {"direction out of range", &bad_direction, &input, &output, TSCAN_ERROR_INVALID_ARGUMENT},
        {"algo out of range", &bad_algo, &input, &output, TSCAN_ERROR_INVALID_ARGUMENT},
        {"null desc", NULL, &input, &output, TSCAN_ERROR_INVALID_ARGUMENT},
        {"null output", &good, &input, NULL, TSCAN_ERROR_INVALID_ARGUMENT},
        {"ndim mismatch", &good, &input, &overlapping, TSCAN_ERROR_INVALID_ARGUMENT},
        {"partial overlap", &good, &small_input, &shifted, TSCAN_ERROR_OVERLAP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        memset(out, TU_POISON, sizeof out);
        float in_before[8];
        memcpy(in_before, in, sizeof in);
        tscan_status want = tscan_validate(cases[i].desc, cases[i].in, cases[i].out);
        cr_assert_eq(want, cases[i].expected, "%s: validate says %s", cases[i].what, tscan_status_string(want));
        tscan_status got = tscan_scan_reference(cases[i].desc, cases[i].in, cases[i].out);
        cr_assert_eq(got, want, "%s: reference returned %s", cases[i].what, tscan_status_string(got));
        cr_assert_neq(tscan_last_error()[0], '\0', "%s: no message", cases[i].what);
        for (size_t b = 0; b < sizeof out; ++b)
            cr_assert_eq(((unsigned char *)out)[b], TU_POISON, "%s: output written", cases[i].what);
        cr_assert(memcmp(in, in_before, sizeof in) == 0, "%s: input written", cases[i].what);
    }
}

/* ---- 64-bit offsets and the time bound -------------------------------------------------- */

Test(reference, wider_output_offsets_beyond_2_to_the_31_input_elements) {
    /* Three uint8 elements 2^31 + 3 apart, running backwards, into a packed int32 output:
     * input offsets beyond 2^31 elements with the two element sizes kept apart. */
    const int64_t step = ((int64_t)1 << 31) + 3, n = 3;
    uint8_t *in_buf = calloc((size_t)(2 * step + 1), 1);
    int32_t out[3] = {0, 0, 0};
    if (!in_buf)
        cr_skip_test("cannot reserve 4 GiB of address space");
    in_buf[2 * step] = 250;
    in_buf[step] = 251;
    in_buf[0] = 252;
    tscan_tensor input, output;
    const int64_t in_stride = -step;
    cr_assert_eq(tscan_tensor_init(&input, in_buf + 2 * step, TSCAN_UINT8, 1, &n, &in_stride), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&output, out, TSCAN_INT32, 1, &n, NULL), TSCAN_SUCCESS);
    tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert(out[0] == 250 && out[1] == 501 && out[2] == 753, "got %d %d %d", out[0], out[1], out[2]);
    free(in_buf);
}

Test(reference, offsets_beyond_2_to_the_31_elements) {
    /* Three int8 elements 2^31 + 3 apart on each side (the input running backwards): the
     * buffers span 4 GiB of address space, of which only the touched pages get memory. */
    const int64_t step = ((int64_t)1 << 31) + 3, n = 3;
    int8_t *in_buf = calloc((size_t)(2 * step + 1), 1), *out_buf = calloc((size_t)(2 * step + 1), 1);
    if (!in_buf || !out_buf) {
        free(in_buf);
        free(out_buf);
        cr_skip_test("cannot reserve 8 GiB of address space");
    }
    in_buf[2 * step] = 10;
    in_buf[step] = 20;
    in_buf[0] = 30;
    tscan_tensor input, output;
    const int64_t in_stride = -step, out_stride = step;
    cr_assert_eq(tscan_tensor_init(&input, in_buf + 2 * step, TSCAN_INT8, 1, &n, &in_stride), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&output, out_buf, TSCAN_INT8, 1, &n, &out_stride), TSCAN_SUCCESS);
    tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_scan_reference(&desc, &input, &output), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert_eq(out_buf[0], 10);
    cr_assert_eq(out_buf[step], 30);
    cr_assert_eq(out_buf[2 * step], 60);
    cr_assert_eq(out_buf[1], 0);
    free(in_buf);
    free(out_buf);
}

static double seconds_since(const struct timespec *start) {
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* 2^26 ones scanned in place in one packed layout (`shape` names it); returns the seconds. */
static double time_ones(tscan_dtype t, uint32_t ndim, const int64_t *sizes, uint32_t axis,
                        const char *shape, void *buf) {
    const size_t elem = tscan_dtype_size(t);
    for (size_t i = 0; i < ((size_t)1 << 26); ++i)
        tu_set(t, (char *)buf + i * elem, 1.0);
    tscan_tensor view;
    tscan_tensor_init(&view, buf, t, ndim, sizes, NULL);
    tscan_scan_desc desc = {TSCAN_OP_SUM, axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    struct timespec start;
    timespec_get(&start, TIME_UTC);
    cr_assert_eq(tscan_scan_reference(&desc, &view, &view), TSCAN_SUCCESS);
    double s = seconds_since(&start);
    cr_log_info("reference: 2^26 %s, %s, in place: %.3f s", tscan_dtype_name(t), shape, s);
    return s;
}

Test(reference, scans_2_to_the_26_elements_in_seconds, .timeout = 120) {
    const int64_t n = (int64_t)1 << 26, square[2] = {8192, 8192};
    float *buf = malloc((size_t)n * sizeof *buf);
    cr_assert(buf);
    /* float32 in one line: the running value stops growing at 2^24 (2^24 + 1 rounds back). */
    double s = time_ones(TSCAN_FLOAT32, 1, &n, 0, "1-D", buf);
    cr_assert_lt(s, 10.0, "float32 1-D took %.3f s", s);
    cr_assert_eq(buf[(1 << 24) - 1], 0x1p24f);
    cr_assert_eq(buf[n - 1], 0x1p24f);
    /* float16 (a conversion per element each way) down the columns (a stride of 8192). */
    s = time_ones(TSCAN_FLOAT16, 2, square, 0, "8192 x 8192 axis 0", buf);
    cr_assert_lt(s, 10.0, "float16 8192 x 8192 axis 0 took %.3f s", s);
    const uint16_t *half = (const uint16_t *)buf;
    cr_assert_eq(tscan_half_to_float(half[(int64_t)8191 * 8192 + 5]), 8192.0f);
    free(buf);
}
