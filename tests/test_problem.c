/*
 * test_problem.c - the canonical problem (src/tensor.c) and AUTO's choices (src/dispatch.c),
 * both host-only: dimensions dropped, ordered, merged and flipped as documented, every
 * element reachable exactly once through the batch offsets, and AUTO taking, for each shape
 * class of the default sweep, the strategy the committed H100 sweep found fastest, and which
 * layouts lookback moves in 32-bit words.
 * Tensor data pointers here are never dereferenced: validation and planning only read them
 * as addresses.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tscan_internal.h"

/* Two far-apart, aligned, never-dereferenced addresses for input and output views. */
#define FAKE_IN ((void *)(uintptr_t)0x100000000000ull)
#define FAKE_OUT ((void *)(uintptr_t)0x200000000000ull)

static tscan_tensor view(void *data, uint32_t ndim, const int64_t *sizes, const int64_t *strides) {
    tscan_tensor t;
    cr_assert_eq(tscan_tensor_init(&t, data, TSCAN_FLOAT32, ndim, sizes, strides), TSCAN_SUCCESS, "%s",
                 tscan_last_error());
    return t;
}

static tscan_problem problem(const tscan_tensor *in, const tscan_tensor *out, uint32_t axis,
                             tscan_direction direction) {
    tscan_scan_desc desc = {TSCAN_OP_SUM, axis, direction, 0, TSCAN_ALGO_AUTO};
    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, in, out), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem_init(&p, &desc, in, out);
    return p;
}

/* AUTO's choice for a request it must accept. */
static tscan_algo auto_choice(const tscan_scan_desc *desc, const tscan_tensor *in, const tscan_tensor *out) {
    tscan_algo chosen = TSCAN_ALGO_AUTO;
    cr_assert_eq(tscan_scan_auto_algo(desc, in, out, &chosen), TSCAN_SUCCESS, "%s", tscan_last_error());
    return chosen;
}

/* An input of in_strides (NULL: packed) into a packed output, at the fake addresses. */
static void strided_into_packed(tscan_tensor *in, tscan_tensor *out, tscan_dtype in_dtype, tscan_dtype out_dtype,
                                uint32_t ndim, const int64_t *sizes, const int64_t *in_strides) {
    cr_assert_eq(tscan_tensor_init(in, FAKE_IN, in_dtype, ndim, sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(out, FAKE_OUT, out_dtype, ndim, sizes, NULL), TSCAN_SUCCESS);
}

/* A strided input of one dtype into a packed output, and whether a rule should take it. */
typedef struct strided_case {
    tscan_dtype dtype;
    uint32_t ndim, axis;
    int64_t sizes[3], in_strides[3];
    int taken;
} strided_case;

Test(problem, packed_middle_axis_keeps_the_dimensions_around_it) {
    int64_t sizes[3] = {64, 4096, 1024};
    tscan_tensor in = view(FAKE_IN, 3, sizes, NULL), out = view(FAKE_OUT, 3, sizes, NULL);
    tscan_problem p = problem(&in, &out, 1, TSCAN_INCREASING);
    cr_assert_eq(p.n, 4096);
    cr_assert_eq(p.in_step, 1024);
    cr_assert_eq(p.out_step, 1024);
    cr_assert_eq(p.batch_ndim, 2, "the axis separates the two batch dimensions: no merge");
    cr_assert_eq(p.batch_sizes[0], 64);
    cr_assert_eq(p.batch_sizes[1], 1024);
    cr_assert_eq(p.out_batch_strides[0], 4096 * 1024);
    cr_assert_eq(p.out_batch_strides[1], 1);
    cr_assert_eq(p.lines, 64 * 1024);
    cr_assert_eq(p.reverse, 0);
}

Test(problem, neighbouring_batch_dimensions_merge_and_size_one_dimensions_drop) {
    int64_t sizes[5] = {2, 3, 1, 5, 7};
    tscan_tensor in = view(FAKE_IN, 5, sizes, NULL), out = view(FAKE_OUT, 5, sizes, NULL);
    tscan_problem p = problem(&in, &out, 4, TSCAN_INCREASING);
    cr_assert_eq(p.batch_ndim, 1);
    cr_assert_eq(p.batch_sizes[0], 30);
    cr_assert_eq(p.in_batch_strides[0], 7);
    cr_assert_eq(p.lines, 30);
}

Test(problem, batch_dimensions_order_by_decreasing_output_stride) {
    /* A column-major output: dimension 0 is the contiguous one. */
    int64_t sizes[3] = {4, 5, 6}, out_strides[3] = {1, 4, 20};
    tscan_tensor in = view(FAKE_IN, 3, sizes, NULL), out = view(FAKE_OUT, 3, sizes, out_strides);
    tscan_problem p = problem(&in, &out, 1, TSCAN_INCREASING);
    cr_assert_eq(p.batch_ndim, 2);
    cr_assert_eq(p.out_batch_strides[0], 20);
    cr_assert_eq(p.out_batch_strides[1], 1, "the most nearly contiguous output dimension comes last");
    cr_assert_eq(p.in_batch_strides[1], 30);
}

Test(problem, a_view_running_backwards_is_flipped_and_the_direction_toggles) {
    int64_t sizes[2] = {3, 10}, strides[2] = {-10, -1};
    /* Element (0,0) sits at the end of a 30-element block whose first element is FAKE_*. */
    char *in_base = (char *)FAKE_IN + 29 * 4, *out_base = (char *)FAKE_OUT + 29 * 4;
    tscan_tensor in = view(in_base, 2, sizes, strides), out = view(out_base, 2, sizes, strides);
    tscan_problem p = problem(&in, &out, 1, TSCAN_INCREASING);
    cr_assert_eq(p.in_step, 1);
    cr_assert_eq(p.out_step, 1);
    cr_assert_eq(p.reverse, 1, "increasing over a backwards view is decreasing over the forward one");
    cr_assert_eq(p.in_batch_strides[0], 10);
    cr_assert_eq((void *)p.in, FAKE_IN, "the base moves to the lowest address");
    cr_assert_eq((void *)p.out, FAKE_OUT);
}

Test(problem, every_element_is_reached_once_through_the_line_offsets) {
    /* Permuted, padded, partly negative: the offsets of all lines and steps must cover the
     * output view's elements exactly once. */
    int64_t sizes[4] = {3, 4, 5, 2}, out_strides[4] = {-2, 60, 12, 1};
    tscan_tensor in = view(FAKE_IN, 4, sizes, NULL);
    tscan_tensor out = view((char *)FAKE_OUT + 4 * 4, 4, sizes, out_strides);
    for (uint32_t axis = 0; axis < 4; ++axis) {
        tscan_problem p = problem(&in, &out, axis, TSCAN_DECREASING);
        int64_t span = 300, *seen = calloc((size_t)span, sizeof *seen), count = 0;
        for (int64_t b = 0; b < p.lines; ++b) {
            int64_t in_off, out_off;
            tscan_problem_line_offsets(&p, b, &in_off, &out_off);
            for (int64_t k = 0; k < p.n; ++k) {
                int64_t at = ((p.out - (char *)FAKE_OUT) / 4) + out_off + k * p.out_step;
                cr_assert(at >= 0 && at < span, "axis %u: offset %lld outside the view", axis, (long long)at);
                seen[at]++;
                count++;
            }
        }
        cr_assert_eq(count, 120, "axis %u: %lld elements reached", axis, (long long)count);
        for (int64_t i = 0; i < span; ++i) cr_assert(seen[i] <= 1, "axis %u: address %lld twice", axis, (long long)i);
        free(seen);
    }
}

Test(problem, in_place_is_recognised) {
    int64_t sizes[2] = {8, 9}, other_strides[2] = {9, 1};
    tscan_tensor t = view(FAKE_IN, 2, sizes, NULL), same = view(FAKE_IN, 2, sizes, other_strides);
    problem(&t, &t, 0, TSCAN_INCREASING); /* validation accepts the very same view */
    cr_assert(tscan_same_view(&t, &same), "equal data and strides are the same view");
    same.strides[0] = 10;
    cr_assert(!tscan_same_view(&t, &same), "a different stride on a dimension longer than 1 is another view");
}

/* ---- AUTO on the default sweep's shape classes --------------------------------------------- */

typedef struct auto_case {
    const char *name;
    uint32_t ndim;
    int64_t sizes[8];
    uint32_t axis;
    int transposed_input; /* input is the transpose of packed memory over the last two dims */
    tscan_algo expected;  /* the fastest strategy for float32 sum in results/tscan-h100.json; the row
                             classes' in results/stream/rowclasses-h100.json (stream's halos) */
} auto_case;

static const auto_case sweep_classes[] = {
    {"1d", 1, {268435456}, 0, 0, TSCAN_ALGO_LOOKBACK},
    {"square_rows", 2, {16384, 16384}, 1, 0, TSCAN_ALGO_LOOKBACK},
    {"square_cols", 2, {16384, 16384}, 0, 0, TSCAN_ALGO_LOOKBACK},
    {"narrow_rows", 2, {4194304, 64}, 1, 0, TSCAN_ALGO_STREAM},
    {"medium_rows", 2, {1048576, 256}, 1, 0, TSCAN_ALGO_STREAM},
    {"medium_cols", 2, {1048576, 256}, 0, 0, TSCAN_ALGO_LOOKBACK},
    {"wide_rows", 2, {256, 1048576}, 1, 0, TSCAN_ALGO_LOOKBACK},
    {"wide_cols", 2, {256, 1048576}, 0, 0, TSCAN_ALGO_COLUMNS},
    {"middle_axis", 3, {64, 4096, 1024}, 1, 0, TSCAN_ALGO_LOOKBACK},
    {"8d", 8, {2, 2, 2, 2, 2, 2, 2, 2097152}, 4, 0, TSCAN_ALGO_COLUMNS},
    {"transposed", 2, {16384, 16384}, 1, 1, TSCAN_ALGO_LOOKBACK},
    {"short_line", 1, {8192}, 0, 0, TSCAN_ALGO_LOOKBACK},
};

/* Every compute capability CUDA 13 builds for finds its row of the policy table, the row serves
 * it (min_cc at or below it), and a row that reuses Hopper's figures says so. */
Test(auto_dispatch, every_architecture_has_a_policy_row) {
    static const int ccs[] = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; ++i) {
        const tscan_auto_policy *row = tscan_auto_policy_for(ccs[i]);
        cr_assert_not_null(row, "sm_%d has no row", ccs[i]);
        cr_assert_leq(row->min_cc, ccs[i], "sm_%d took the row from sm_%d", ccs[i], row->min_cc);
        cr_assert(row->measured_on && row->rows_max_units > 0 && row->few_lines > 0, "sm_%d's row is empty", ccs[i]);
        if (ccs[i] / 10 != 9)
            cr_assert(strstr(row->measured_on, "not measured") != NULL, "sm_%d's row claims a measurement: %s",
                      ccs[i], row->measured_on);
    }
    cr_assert_str_eq(tscan_auto_policy_for(90)->measured_on, "sm_90 (H100)");
}

Test(auto_dispatch, each_sweep_class_gets_its_measured_strategy) {
    for (size_t i = 0; i < sizeof sweep_classes / sizeof sweep_classes[0]; ++i) {
        const auto_case *c = &sweep_classes[i];
        int64_t in_strides[8];
        tscan_tensor in = view(FAKE_IN, c->ndim, c->sizes, NULL), out = view(FAKE_OUT, c->ndim, c->sizes, NULL);
        if (c->transposed_input) {
            memcpy(in_strides, in.strides, sizeof in_strides);
            in_strides[c->ndim - 1] = c->sizes[c->ndim - 2];
            in_strides[c->ndim - 2] = 1;
            in = view(FAKE_IN, c->ndim, c->sizes, in_strides);
        }
        tscan_scan_desc desc = {TSCAN_OP_SUM, c->axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        tscan_algo chosen = TSCAN_ALGO_AUTO;
        cr_assert_eq(tscan_scan_auto_algo(&desc, &in, &out, &chosen), TSCAN_SUCCESS, "%s: %s", c->name,
                     tscan_last_error());
        cr_expect_eq(chosen, c->expected, "%s: AUTO chose %s, the sweep measured %s fastest", c->name,
                     tscan_algo_name(chosen), tscan_algo_name(c->expected));
    }
}

/* Long contiguous lines and the middle axis of 1- and 2-byte elements go to lookback where it
 * moves them as 32-bit words (256x1048576 on axis 1, float16: lookback 77% vs rows 66%;
 * 64x4096x1024 on axis 1: lookback 84% vs columns 79%), and stay with rows and columns where
 * their layout does not pack: here an odd row pitch, or an odd element offset. */
typedef struct layout_case {
    tscan_dtype dtype;
    uint32_t ndim;
    int64_t sizes[3];
    uint32_t axis;
    int unpacked; /* 1: an odd row pitch on a 2-d shape, or the base one element off */
    tscan_algo expected;
} layout_case;

static void expect_auto_choices_of(tscan_op op, const layout_case *cases, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        const layout_case *c = &cases[i];
        const size_t elem = tscan_dtype_size(c->dtype);
        int64_t pitch[2] = {c->sizes[1] + 1, 1};
        const int padded = c->unpacked && c->ndim == 2;
        char *base = (char *)FAKE_IN + (c->unpacked && !padded ? elem : 0);
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, base, c->dtype, c->ndim, c->sizes, padded ? pitch : NULL), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, c->dtype, c->ndim, c->sizes, NULL), TSCAN_SUCCESS);
        tscan_scan_desc desc = {op, c->axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, c->expected, "case %zu (%s): AUTO chose %s, expected %s", i, tscan_dtype_name(c->dtype),
                     tscan_algo_name(chosen), tscan_algo_name(c->expected));
    }
}

static void expect_auto_choices(const layout_case *cases, size_t count) {
    expect_auto_choices_of(TSCAN_OP_SUM, cases, count);
}

Test(auto_dispatch, small_elements_go_to_lookback_where_it_packs_words) {
    static const layout_case cases[] = {
        {TSCAN_INT8, 2, {256, 1048576}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, 2, {256, 1048576}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_BFLOAT16, 2, {256, 1048576}, 1, 1, TSCAN_ALGO_ROWS},
        {TSCAN_FLOAT32, 2, {256, 1048576}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, 3, {64, 4096, 1024}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, 3, {64, 4096, 1024}, 1, 1, TSCAN_ALGO_COLUMNS},
        {TSCAN_FLOAT16, 2, {256, 1048576}, 0, 0, TSCAN_ALGO_COLUMNS}, /* 2^20 columns */
        {TSCAN_FLOAT32, 3, {64, 4096, 1024}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, 3, {4096, 64, 1024}, 1, 1, TSCAN_ALGO_COLUMNS},
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
}

/* Rows give a line one block at most: fewer long lines of unpackable small elements than the
 * device has SMs, packed end to end, go to stream's flat tiles, which split each line across
 * blocks and load 16-byte vectors where lookback's tile kernel would load single elements
 * (H200, bfloat16 15x16237291: stream 67, lookback 42); as many lines as SMs, or short ones,
 * stay with rows. Where lookback's bulk kernel runs them (sm_90 on: 1-byte sums, aligned
 * vectors whatever the lines' starts, past its floor of tiles, here 31 a line) it leads stream
 * (H200, int8 100x1000001: 68 us against 86); byte products it does not take. Padded lines,
 * which stream would gather element by element, keep lookback; three lines long enough to be
 * bandwidth-bound take stream, shorter ones CUB. The odd lengths keep the axis from packing. */
Test(auto_dispatch, few_long_unpacked_lines_split_across_blocks) {
    const int64_t sms = tscan_planning_for_current_device().sm_count;
    const tscan_device_info *info = NULL;
    const int bulk = tscan_device_present() && tscan_current_device_info(&info) == TSCAN_SUCCESS && info->cc >= 90;
    const layout_case cases[] = {
        {TSCAN_BFLOAT16, 2, {15, 16237291}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 2, {sms - 1, 1000003}, 1, 0, bulk ? TSCAN_ALGO_LOOKBACK : TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 2, {sms - 1, 1000003}, 1, 1, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT8, 2, {sms, 1000003}, 1, 0, TSCAN_ALGO_ROWS},
        {TSCAN_FLOAT16, 2, {15, 8191}, 1, 0, TSCAN_ALGO_ROWS},
        {TSCAN_INT16, 2, {3, 20000001}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT16, 2, {3, 1000001}, 1, 0, TSCAN_ALGO_CUB_DEVICE},
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
    const layout_case byte_products[] = {{TSCAN_UINT8, 2, {sms - 1, 1000003}, 1, 0, TSCAN_ALGO_STREAM}};
    expect_auto_choices_of(TSCAN_OP_PROD, byte_products, 1);
}

/* 4- and 8-byte elements along a strided axis of many columns go to lookback's banded chains
 * from an axis of 1024, where rows are a multiple of 128 bytes apart; a shorter axis, or rows
 * that are not, keep columns (measured: bench/NOTES.md, "bands of chains"). */
Test(auto_dispatch, wide_strided_axes_split_from_1024_where_rows_align) {
    static const layout_case cases[] = {
        {TSCAN_FLOAT32, 3, {256, 1024, 1024}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, 3, {64, 4096, 1040}, 1, 0, TSCAN_ALGO_COLUMNS}, /* rows 2080 bytes apart */
        {TSCAN_FLOAT32, 3, {4096, 64, 1024}, 1, 0, TSCAN_ALGO_COLUMNS}, /* an axis of 64 */
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
}

/* 4-byte lines that lookback's column blocks move in pairs, on the 8-byte grid or off it, in runs
 * of 64 lines or more over an axis of 96 or more (three quarters of a tile), go to lookback where
 * columns would move them one a thread (no 16-byte vectors of them): an odd run (off the grid)
 * and an even one that is no whole number of vectors; an axis of 64 and runs of whole vectors
 * keep columns, and runs of 9 (a packed block of 9 lanes) go to stream's lanes form (bench/NOTES.md
 * §2, "pairs off the grid"). */
Test(auto_dispatch, pairs_of_4_byte_lines_go_to_lookback_where_columns_has_no_vectors) {
    static const layout_case cases[] = {
        {TSCAN_FLOAT32, 3, {32, 128, 12295}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT32, 3, {3276, 322, 158}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, 3, {100000, 20, 9}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 3, {4096, 64, 257}, 1, 0, TSCAN_ALGO_COLUMNS},
        {TSCAN_UINT32, 2, {122, 416714}, 0, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, 3, {4096, 64, 1024}, 1, 0, TSCAN_ALGO_COLUMNS},
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
}

/* Many contiguous lines of 2- to 8-byte elements (packed, for 2-byte ones) whose look-back tiles
 * (32 KB) are on average at least 2/3 full go to lookback; lines of half a tile, lines whose
 * second tile is nearly or partly empty (5/8 full), one line of one 16 KB tile, 1-byte elements
 * below 16384 words and single 2-byte elements stay with rows (measured on an H100 and an H200:
 * bench/NOTES.md §3.1, "Many contiguous lines"). */
Test(auto_dispatch, many_lines_of_filled_tiles_go_to_lookback) {
    static const layout_case cases[] = {
        {TSCAN_FLOAT16, 2, {16384, 16384}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, 2, {32768, 8192}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT64, 2, {32768, 8192}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT64, 2, {65536, 4096}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, 2, {10922, 6144}, 1, 0, TSCAN_ALGO_LOOKBACK},  /* a tile 3/4 full */
        {TSCAN_FLOAT32, 2, {5461, 12288}, 1, 0, TSCAN_ALGO_LOOKBACK},  /* two, 3/4 full */
        {TSCAN_FLOAT32, 2, {4680, 14339}, 1, 0, TSCAN_ALGO_LOOKBACK},  /* no whole vectors */
        {TSCAN_FLOAT64, 2, {3276, 10240}, 1, 0, TSCAN_ALGO_LOOKBACK},  /* three, 5/6 full */
        {TSCAN_FLOAT64, 2, {4094, 8195}, 1, 0, TSCAN_ALGO_LOOKBACK},   /* three, 2/3 full */
        {TSCAN_FLOAT16, 2, {32768, 8192}, 1, 0, TSCAN_ALGO_ROWS},  /* half a tile a line */
        {TSCAN_FLOAT32, 2, {65536, 4096}, 1, 0, TSCAN_ALGO_ROWS},
        {TSCAN_FLOAT32, 2, {65536, 8200}, 1, 0, TSCAN_ALGO_ROWS},  /* a second tile nearly empty */
        {TSCAN_FLOAT32, 2, {6553, 10240}, 1, 0, TSCAN_ALGO_ROWS},  /* two, 5/8 full */
        {TSCAN_FLOAT32, 1, {4096}, 0, 0, TSCAN_ALGO_ROWS},         /* one line */
        {TSCAN_INT8, 2, {16384, 32768}, 1, 0, TSCAN_ALGO_ROWS},
        {TSCAN_INT8, 2, {5461, 49152}, 1, 0, TSCAN_ALGO_ROWS},     /* two, 3/4 full */
        {TSCAN_INT8, 2, {4681, 57344}, 1, 0, TSCAN_ALGO_ROWS},     /* two, 7/8 full */
        {TSCAN_FLOAT16, 2, {16384, 16384}, 1, 1, TSCAN_ALGO_ROWS}, /* single elements */
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
}

/* One long line goes to CUB where CUB runs its tuned sum (forward) of 8-byte types below
 * 2^21 elements, or of 4-byte types below 2^20, unless the line packs in 16-byte vectors into
 * 2 to 528 one-wave tiles (16 KB each: lookback, from 32 KB, where rows took lines below 16384
 * elements); longer lines, products and decreasing scans, and 1- and
 * 2-byte types whose line packs into words, go to lookback, whose tiles with word statuses
 * beat CUB's tuned sum there, its generic policy and its converting iterator (bench/NOTES.md).
 * A line along memory packs whatever its length and start (its first and last slots in part).
 * One of small elements that does not pack (read with a step of 2) goes to lookback's single
 * elements from 2^24 elements (measured ahead of CUB's iterator there: results/random-*.json)
 * and stays with CUB below. */
Test(auto_dispatch, one_long_line_goes_to_cub_only_where_cub_leads) {
    static const struct {
        tscan_dtype dtype;
        tscan_op op;
        tscan_direction direction;
        int64_t n;
        tscan_algo expected;
    } by_form[] = {
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT32, TSCAN_OP_SUM, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 1048576, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 1048575, TSCAN_ALGO_CUB_DEVICE},
        {TSCAN_INT32, TSCAN_OP_SUM, TSCAN_INCREASING, 524288, TSCAN_ALGO_LOOKBACK},    /* one wave */
        {TSCAN_INT32, TSCAN_OP_SUM, TSCAN_INCREASING, 524290, TSCAN_ALGO_CUB_DEVICE},  /* no 16-byte vectors */
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 8192, TSCAN_ALGO_LOOKBACK},   /* two tiles */
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 4096, TSCAN_ALGO_ROWS},       /* one */
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 4096, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_INCREASING, 8190, TSCAN_ALGO_ROWS},       /* no vectors */
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 1048576, TSCAN_ALGO_LOOKBACK}, /* 512 tiles */
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 1081344, TSCAN_ALGO_LOOKBACK},   /* 528 tiles */
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 1081346, TSCAN_ALGO_CUB_DEVICE}, /* 529 */
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 2097152, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT64, TSCAN_OP_SUM, TSCAN_INCREASING, 2097151, TSCAN_ALGO_CUB_DEVICE},
        {TSCAN_FLOAT32, TSCAN_OP_SUM, TSCAN_DECREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT32, TSCAN_OP_PROD, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT64, TSCAN_OP_SUM, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT64, TSCAN_OP_SUM, TSCAN_INCREASING, 2097152, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT64, TSCAN_OP_SUM, TSCAN_INCREASING, 2097151, TSCAN_ALGO_CUB_DEVICE},
        {TSCAN_INT64, TSCAN_OP_PROD, TSCAN_DECREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, TSCAN_OP_SUM, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, TSCAN_OP_SUM, TSCAN_DECREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT8, TSCAN_OP_PROD, TSCAN_INCREASING, 268435456, TSCAN_ALGO_LOOKBACK},
        {TSCAN_FLOAT16, TSCAN_OP_SUM, TSCAN_INCREASING, 268435455, TSCAN_ALGO_LOOKBACK},
        {TSCAN_INT8, TSCAN_OP_SUM, TSCAN_INCREASING, 268435454, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT8, TSCAN_OP_SUM, TSCAN_INCREASING, (INT64_C(1) << 24) + 1, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT8, TSCAN_OP_SUM, TSCAN_INCREASING, (INT64_C(1) << 24) - 1, TSCAN_ALGO_LOOKBACK},
        {TSCAN_BFLOAT16, TSCAN_OP_PROD, TSCAN_INCREASING, 1000001, TSCAN_ALGO_LOOKBACK},
    };
    /* The same lines, their input read with a step of 2 elements: they do not pack. */
    static const struct {
        tscan_dtype dtype;
        tscan_op op;
        int64_t n;
        tscan_algo expected;
    } sliced[] = {
        {TSCAN_UINT8, TSCAN_OP_SUM, (INT64_C(1) << 24) + 1, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT8, TSCAN_OP_SUM, (INT64_C(1) << 24) - 1, TSCAN_ALGO_CUB_DEVICE},
        {TSCAN_BFLOAT16, TSCAN_OP_PROD, 1000001, TSCAN_ALGO_CUB_DEVICE},
    };
    for (size_t i = 0; i < sizeof by_form / sizeof by_form[0]; ++i) {
        const int64_t sizes[1] = {by_form[i].n};
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, by_form[i].dtype, 1, sizes, NULL), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, by_form[i].dtype, 1, sizes, NULL), TSCAN_SUCCESS);
        tscan_scan_desc desc = {by_form[i].op, 0, by_form[i].direction, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, by_form[i].expected, "case %zu (%s): AUTO chose %s, expected %s", i,
                     tscan_dtype_name(by_form[i].dtype), tscan_algo_name(chosen), tscan_algo_name(by_form[i].expected));
    }
    for (size_t i = 0; i < sizeof sliced / sizeof sliced[0]; ++i) {
        const int64_t sizes[1] = {sliced[i].n}, every_other[1] = {2};
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, sliced[i].dtype, 1, sizes, every_other), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, sliced[i].dtype, 1, sizes, NULL), TSCAN_SUCCESS);
        tscan_scan_desc desc = {sliced[i].op, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, sliced[i].expected, "sliced case %zu (%s): AUTO chose %s, expected %s", i,
                     tscan_dtype_name(sliced[i].dtype), tscan_algo_name(chosen), tscan_algo_name(sliced[i].expected));
    }
}

Test(auto_dispatch, direction_and_exclusive_do_not_change_the_choice) {
    int64_t sizes[2] = {16384, 16384};
    tscan_tensor in = view(FAKE_IN, 2, sizes, NULL), out = view(FAKE_OUT, 2, sizes, NULL);
    for (uint32_t axis = 0; axis < 2; ++axis) {
        tscan_algo first = TSCAN_ALGO_AUTO;
        for (int form = 0; form < 4; ++form) {
            tscan_scan_desc desc = {TSCAN_OP_SUM, axis, (tscan_direction)(form & 1), form >> 1, TSCAN_ALGO_AUTO};
            const tscan_algo chosen = auto_choice(&desc, &in, &out);
            if (form == 0) first = chosen;
            cr_expect_eq(chosen, first, "axis %u form %d: %s vs %s", axis, form, tscan_algo_name(chosen),
                         tscan_algo_name(first));
        }
    }
}

/* A transposed input (lines neighbour in the input, elements in the output): lookback loads
 * words of 4 / size lines and stores words of as many elements of each line, where the lines
 * come in whole words in the input and the lengths in whole words in the output, in either
 * direction. An odd line count, an odd length, a base off a word boundary or a 4-byte element
 * keeps single elements. */
Test(lookback_words, a_transposed_input_packs_where_lines_and_lengths_allow) {
    static const struct {
        tscan_dtype dtype;
        int64_t lines, n;
        tscan_direction direction;
        size_t offset; /* bytes added to the input's base */
        int packs;
    } cases[] = {
        {TSCAN_FLOAT16, 16384, 16384, TSCAN_INCREASING, 0, 1}, {TSCAN_INT8, 64, 1000, TSCAN_DECREASING, 0, 1},
        {TSCAN_BFLOAT16, 64, 1000, TSCAN_DECREASING, 0, 1},    {TSCAN_INT8, 64, 1002, TSCAN_INCREASING, 0, 0},
        {TSCAN_FLOAT16, 63, 1000, TSCAN_INCREASING, 0, 0},     {TSCAN_FLOAT16, 64, 1001, TSCAN_DECREASING, 0, 0},
        {TSCAN_FLOAT16, 64, 1000, TSCAN_INCREASING, 2, 0},     {TSCAN_FLOAT32, 64, 1000, TSCAN_INCREASING, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const int64_t sizes[2] = {cases[i].lines, cases[i].n};
        const int64_t transposed[2] = {1, cases[i].lines};
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, (char *)FAKE_IN + cases[i].offset, cases[i].dtype, 2, sizes, transposed),
                     TSCAN_SUCCESS, "%s", tscan_last_error());
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, cases[i].dtype, 2, sizes, NULL), TSCAN_SUCCESS, "%s",
                     tscan_last_error());
        tscan_scan_desc desc = {TSCAN_OP_SUM, 1, cases[i].direction, 0, TSCAN_ALGO_LOOKBACK};
        tscan_problem p;
        cr_assert_eq(tscan_validate(&desc, &in, &out), TSCAN_SUCCESS, "%s", tscan_last_error());
        tscan_problem_init(&p, &desc, &in, &out);
        tscan_strategy_outline outline = {0};
        tscan_strategy_lookback.outline(&p, &outline);
        cr_expect_eq(outline.packs_small_elements, cases[i].packs, "case %zu (%s, %lld lines of %lld)", i,
                     tscan_dtype_name(cases[i].dtype), (long long)cases[i].lines, (long long)cases[i].n);
    }
}

/* ---- wider outputs ------------------------------------------------------------------------ */

Test(problem, a_wider_output_moves_each_base_by_its_own_element_size) {
    int64_t sizes[2] = {3, 10}, strides[2] = {-10, -1};
    tscan_tensor in, out;
    cr_assert_eq(tscan_tensor_init(&in, (char *)FAKE_IN + 29, TSCAN_UINT8, 2, sizes, strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, (char *)FAKE_OUT + 29 * 8, TSCAN_INT64, 2, sizes, strides), TSCAN_SUCCESS);
    tscan_problem p = problem(&in, &out, 1, TSCAN_INCREASING);
    cr_assert_eq(p.dtype, TSCAN_UINT8);
    cr_assert_eq(p.elem_size, 1);
    cr_assert_eq(p.out_dtype, TSCAN_INT64);
    cr_assert_eq(p.out_elem_size, 8);
    cr_assert_eq(p.reverse, 1);
    cr_assert_eq((void *)p.in, FAKE_IN, "the input's base moves back 29 one-byte elements");
    cr_assert_eq((void *)p.out, FAKE_OUT, "the output's 29 eight-byte ones");
}

/* Wider outputs (bench/NOTES.md §3.1): lines along memory longer than rows runs well, many
 * lines whose packed tiles (32 KB of output) are at least two thirds full, a few long strided
 * lines, and strided axes of fewer lines than columns takes, go to lookback; shorter lines and
 * emptier tiles to rows; more strided lines, and a short axis, to columns; a few short strided
 * lines to CUB; packed lines of up to 8 KB of input to stream (halos), other short lines off the
 * 16-byte grid to stream only into 1-2-byte outputs. Rows, columns
 * and lookback take every pair. */
Test(auto_dispatch, wider_outputs) {
    static const struct {
        tscan_dtype in, out;
        uint32_t ndim, axis;
        int64_t sizes[3];
        tscan_algo expected;
    } cases[] = {
        {TSCAN_UINT8, TSCAN_INT32, 1, 0, {268435456}, TSCAN_ALGO_LOOKBACK},      /* one long line */
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {32768, 8192}, TSCAN_ALGO_LOOKBACK}, /* many rows of a tile */
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {32768, 4096}, TSCAN_ALGO_STREAM},  /* ... of half a tile: halos */
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {32768, 4100}, TSCAN_ALGO_ROWS},    /* past them */
        {TSCAN_UINT8, TSCAN_INT32, 2, 1, {16384, 6144}, TSCAN_ALGO_LOOKBACK},    /* 3/4 of a tile */
        {TSCAN_FLOAT32, TSCAN_FLOAT64, 2, 1, {32768, 3072}, TSCAN_ALGO_LOOKBACK}, /* 3/4 of a 4096-element tile */
        {TSCAN_FLOAT32, TSCAN_FLOAT64, 2, 1, {32768, 5120}, TSCAN_ALGO_ROWS},    /* 5/8 of two */
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {16384, 16384}, TSCAN_ALGO_LOOKBACK}, /* many longer rows */
        {TSCAN_INT32, TSCAN_INT64, 3, 1, {64, 4096, 1024}, TSCAN_ALGO_COLUMNS},    /* many strided lines */
        {TSCAN_INT32, TSCAN_INT64, 2, 1, {256, 1048576}, TSCAN_ALGO_LOOKBACK},   /* long rows, not many */
        {TSCAN_INT32, TSCAN_INT64, 2, 0, {65536, 1024}, TSCAN_ALGO_LOOKBACK},    /* long strided axis */
        {TSCAN_BFLOAT16, TSCAN_FLOAT64, 2, 0, {1048576, 3}, TSCAN_ALGO_LOOKBACK},  /* few long columns */
        {TSCAN_BFLOAT16, TSCAN_FLOAT64, 2, 0, {4096, 3}, TSCAN_ALGO_CUB_DEVICE},     /* few short ones: not a thread each */
        {TSCAN_INT8, TSCAN_UINT16, 2, 0, {8, 1048576}, TSCAN_ALGO_COLUMNS},      /* short axis: columns anyway */
        {TSCAN_UINT8, TSCAN_INT32, 2, 1, {1048576, 255}, TSCAN_ALGO_STREAM},    /* short lines: halos ... */
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {1048576, 255}, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, TSCAN_INT16, 2, 1, {1048576, 255}, TSCAN_ALGO_STREAM},
        {TSCAN_UINT8, TSCAN_INT32, 2, 1, {1048576, 64}, TSCAN_ALGO_ROWS},       /* ... but bytes in whole vectors */
        {TSCAN_UINT8, TSCAN_INT32, 2, 1, {262144, 300}, TSCAN_ALGO_STREAM},     /* halos to 8 KB */
        {TSCAN_UINT8, TSCAN_INT32, 2, 1, {16384, 3000}, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 2, 1, {16384, 4000}, TSCAN_ALGO_STREAM},
        {TSCAN_INT32, TSCAN_INT64, 2, 1, {16384, 3000}, TSCAN_ALGO_LOOKBACK},   /* past them */
        {TSCAN_INT8, TSCAN_INT16, 2, 1, {262144, 300}, TSCAN_ALGO_STREAM},      /* ... stream into 2 bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, cases[i].in, cases[i].ndim, cases[i].sizes, NULL), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, cases[i].out, cases[i].ndim, cases[i].sizes, NULL),
                     TSCAN_SUCCESS);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, cases[i].expected, "case %zu (%s into %s): AUTO chose %s, expected %s", i,
                     tscan_dtype_name(cases[i].in), tscan_dtype_name(cases[i].out), tscan_algo_name(chosen),
                     tscan_algo_name(cases[i].expected));
        for (tscan_algo algo = TSCAN_ALGO_ROWS; algo <= TSCAN_ALGO_LOOKBACK; ++algo) {
            desc.algo = algo;
            cr_expect_eq(tscan_scan_supported(&desc, &in, &out), TSCAN_SUCCESS, "case %zu, %s: %s", i,
                         tscan_algo_name(algo), tscan_last_error());
        }
    }
    const int64_t n = 268435456, every_third = 3;
    tscan_tensor in, out;
    /* One long strided line: lookback (H100: 54.5 % of the copy, CUB 42.3; columns' single
     * thread took seconds on an H200). */
    cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, TSCAN_FLOAT32, 1, &n, &every_third), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, TSCAN_FLOAT64, 1, &n, NULL), TSCAN_SUCCESS);
    tscan_scan_desc strided = {TSCAN_OP_PROD, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    const tscan_algo strided_choice = auto_choice(&strided, &in, &out);
    cr_expect_eq(strided_choice, TSCAN_ALGO_LOOKBACK, "one strided line into float64: AUTO chose %s",
                 tscan_algo_name(strided_choice));
    cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, TSCAN_INT32, 1, &n, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, TSCAN_UINT32, 1, &n, NULL), TSCAN_SUCCESS);
    tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    const tscan_algo chosen = auto_choice(&desc, &in, &out);
    cr_expect_eq(chosen, TSCAN_ALGO_LOOKBACK, "int32 into uint32: AUTO chose %s", tscan_algo_name(chosen));
    desc.algo = TSCAN_ALGO_LOOKBACK;
    cr_expect_eq(tscan_scan_supported(&desc, &in, &out), TSCAN_SUCCESS, "%s", tscan_last_error());
}

/* Many short contiguous lines (bench/sweeps/crossover.json, halos.json; NOTES §2, §3.1, §3.6):
 * packed lines of up to 8 KB go to stream, whose tiles read their halos, but 1- and 2-byte lines
 * that fill rows' groups of threads (1-byte: whole 16-byte vectors, which rows' threads at a
 * line's end move whole; 2-byte: power-of-two groups of 16 elements) and 1-byte lines past 2 KB; in place (no halos), 1-byte lines that are no whole number
 * of vectors go to stream under 512 bytes where they lie end to end off the 16-byte grid; the
 * rest stay with rows. A packed
 * block of up to 32 lanes goes to stream's lanes along any axis, a long axis over a block of
 * 4- and 8-byte elements of more lanes too unless its rows lie on the 128-byte grid (lookback);
 * a short one over 64 lanes goes to columns, small elements on a long one to lookback
 * (bench/sweeps/lanes.json, lanes_chains.json). */
Test(auto_dispatch, short_lines_and_narrow_blocks) {
    static const layout_case cases[] = {
        {TSCAN_INT8, 2, {33554432, 2}, 1, 0, TSCAN_ALGO_STREAM},    /* under 4 bytes */
        {TSCAN_INT8, 2, {16777216, 4}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {33554432, 2}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {16777216, 4}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 2, {16777216, 4}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT64, 2, {33554432, 2}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT64, 2, {22369621, 3}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {11184810, 6}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 2, {5592405, 12}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {2796202, 24}, 1, 0, TSCAN_ALGO_STREAM},  /* a thread and a half of rows */
        {TSCAN_FLOAT16, 2, {8388608, 8}, 1, 0, TSCAN_ALGO_STREAM},   /* half a thread */
        {TSCAN_FLOAT16, 2, {4194304, 16}, 1, 0, TSCAN_ALGO_ROWS},    /* a thread: rows' group filled */
        {TSCAN_INT8, 2, {4194304, 16}, 1, 0, TSCAN_ALGO_ROWS},       /* a thread */
        {TSCAN_INT8, 2, {1398101, 48}, 1, 0, TSCAN_ALGO_ROWS},       /* three vectors, whole at the end */
        {TSCAN_INT8, 2, {5592405, 40}, 1, 0, TSCAN_ALGO_STREAM},     /* two and a half */
        {TSCAN_FLOAT16, 2, {1048576, 64}, 1, 0, TSCAN_ALGO_ROWS},
        {TSCAN_INT8, 2, {1048576, 250}, 1, 0, TSCAN_ALGO_STREAM},    /* off the grid */
        {TSCAN_FLOAT16, 2, {4194304, 61}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {1048576, 250}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 2, {262144, 1001}, 1, 0, TSCAN_ALGO_STREAM},    /* halos */
        {TSCAN_INT8, 2, {22369, 3000}, 1, 0, TSCAN_ALGO_ROWS},       /* past 2 KB: rows */
        {TSCAN_UINT8, 2, {1048576, 164}, 1, 1, TSCAN_ALGO_ROWS},     /* input lines apart: gathered */
        {TSCAN_FLOAT16, 2, {262144, 256}, 1, 0, TSCAN_ALGO_ROWS},    /* ... and of 16 threads */
        {TSCAN_FLOAT16, 2, {262144, 257}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 2, {16384, 4000}, 1, 0, TSCAN_ALGO_STREAM},  /* a group not filled */
        {TSCAN_FLOAT16, 2, {16384, 4097}, 1, 0, TSCAN_ALGO_ROWS},    /* past the halos */
        {TSCAN_FLOAT32, 2, {11184810, 6}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 2, {65536, 1000}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 1, {1024}, 0, 0, TSCAN_ALGO_ROWS},           /* one line: no halos */
        {TSCAN_FLOAT32, 2, {16777, 4000}, 1, 0, TSCAN_ALGO_ROWS},    /* past the halos */
        {TSCAN_FLOAT32, 2, {10027606, 12}, 0, 0, TSCAN_ALGO_STREAM}, /* lanes */
        {TSCAN_INT64, 2, {10027606, 12}, 0, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 3, {8192, 1024, 33}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 3, {65536, 64, 16}, 1, 0, TSCAN_ALGO_STREAM},  /* a short axis: 16 lanes */
        {TSCAN_FLOAT16, 2, {10027606, 12}, 0, 0, TSCAN_ALGO_STREAM},   /* rows of 24 bytes */
        {TSCAN_INT8, 2, {10027606, 64}, 0, 0, TSCAN_ALGO_LOOKBACK},    /* of 64: small elements */
        {TSCAN_FLOAT64, 2, {1048576, 64}, 0, 0, TSCAN_ALGO_LOOKBACK},  /* rows on the 128-byte grid */
        {TSCAN_FLOAT32, 3, {524, 2000, 64}, 1, 0, TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT8, 3, {4699981, 10, 4}, 1, 0, TSCAN_ALGO_STREAM},   /* rows under a sector */
        {TSCAN_FLOAT32, 3, {3355443, 10, 2}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, 3, {11184811, 3, 2}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT64, 3, {5592405, 3, 4}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 3, {1065220, 3, 21}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 3, {319566, 10, 21}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT32, 3, {10486, 100, 64}, 1, 0, TSCAN_ALGO_COLUMNS}, /* 64 lanes, a short axis */
        {TSCAN_FLOAT16, 3, {104858, 10, 64}, 1, 0, TSCAN_ALGO_COLUMNS},
        {TSCAN_INT8, 3, {958698, 10, 7}, 1, 0, TSCAN_ALGO_STREAM},
        {TSCAN_INT8, 3, {335544, 10, 20}, 1, 0, TSCAN_ALGO_STREAM},     /* ... unless a sum's rows fill words */
    };
    expect_auto_choices(cases, sizeof cases / sizeof cases[0]);
}

/* A packed output block of 4 to 64 lanes from an input that runs along its lines (the random
 * sweep's transposed worst cases: lookback's line chunks stored each element to a sector shared
 * with other lines) goes to stream's lanes form over too few lines for columns; not 2 lanes,
 * not many lines (bench/sweeps/along_lines.json). Broadcast lanes, which the lanes form reads
 * once a lane, go to it only where lookback's column blocks would be under 2/3 full or it would
 * run line chunks (bench/sweeps/broadcast_lanes.json). */
Test(auto_dispatch, blocks_read_along_their_lines) {
    static const strided_case cases[] = {
        {TSCAN_INT32, 3, 1, {142, 24800, 10}, {248000, 1, 24800}, 1},
        {TSCAN_FLOAT64, 2, 0, {4068424, 8}, {1, 4068424}, 1},
        {TSCAN_FLOAT32, 2, 0, {16777216, 4}, {1, 16777216}, 1},
        {TSCAN_INT8, 2, 0, {2097152, 33}, {1, 2097152}, 1},
        {TSCAN_FLOAT64, 2, 0, {33554432, 2}, {1, 33554432}, 0},  /* 2 lanes */
        {TSCAN_FLOAT64, 3, 1, {65536, 100, 10}, {1000, 1, 100}, 0}, /* lines enough for columns */
        {TSCAN_FLOAT32, 3, 1, {1, 3774321, 16}, {3774321, 1, 0}, 1}, /* broadcast: column blocks half full */
        {TSCAN_FLOAT32, 2, 0, {8388609, 8}, {1, 0}, 1},               /* broadcast: line chunks */
        {TSCAN_FLOAT64, 3, 1, {3, 1398101, 8}, {1398101, 1, 0}, 0},    /* broadcast: 24 lines, 3/4 full */
        {TSCAN_FLOAT32, 2, 0, {2097153, 32}, {1, 0}, 0},              /* broadcast: column blocks full */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tscan_tensor in, out;
        strided_into_packed(&in, &out, cases[i].dtype, cases[i].dtype, cases[i].ndim, cases[i].sizes, cases[i].in_strides);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen == TSCAN_ALGO_STREAM, cases[i].taken, "case %zu (%s): AUTO chose %s", i,
                     tscan_dtype_name(cases[i].dtype), tscan_algo_name(chosen));
        desc.algo = TSCAN_ALGO_STREAM;
        cr_expect_eq(tscan_scan_supported(&desc, &in, &out), TSCAN_SUCCESS, "case %zu: %s", i, tscan_last_error());
    }
}

/* Short lines from a transposed input (neighbouring lines nearer in the input than an axis step)
 * into 1-2-byte outputs go to columns' thread a line while a line is shorter than rows' 16-byte
 * vector (transposed_columns_below_bytes); longer lines and 4-byte outputs keep rows (H200:
 * bench/NOTES.md §3.1, "Transposed input"). */
Test(auto_dispatch, transposed_short_lines_of_small_outputs_go_to_columns) {
    static const struct {
        tscan_dtype in, out;
        uint32_t ndim, axis;
        int64_t sizes[3], in_strides[3];
        tscan_algo expected;
    } cases[] = {
        {TSCAN_INT8, TSCAN_INT8, 2, 1, {33554432, 2}, {1, 33554432}, TSCAN_ALGO_COLUMNS},
        {TSCAN_INT8, TSCAN_INT8, 2, 1, {11184810, 6}, {1, 11184810}, TSCAN_ALGO_COLUMNS},
        {TSCAN_FLOAT16, TSCAN_FLOAT16, 3, 2, {196, 211426, 6}, {1, 196, 41439496}, TSCAN_ALGO_COLUMNS},
        {TSCAN_INT16, TSCAN_INT16, 3, 2, {19, 2540312, 8}, {1, 19, 48265928}, TSCAN_ALGO_COLUMNS},
        {TSCAN_INT8, TSCAN_INT8, 2, 1, {4194304, 15}, {1, 4194304}, TSCAN_ALGO_COLUMNS},
        {TSCAN_INT8, TSCAN_INT8, 2, 1, {4194304, 16}, {1, 4194304}, TSCAN_ALGO_ROWS},         /* a vector's line */
        {TSCAN_FLOAT16, TSCAN_FLOAT16, 2, 1, {8388608, 8}, {1, 8388608}, TSCAN_ALGO_ROWS},
        {TSCAN_FLOAT16, TSCAN_FLOAT16, 2, 1, {4194304, 16}, {1, 4194304}, TSCAN_ALGO_ROWS},   /* longer lines */
        {TSCAN_UINT8, TSCAN_INT32, 3, 2, {19, 2540312, 8}, {1, 19, 48265928}, TSCAN_ALGO_ROWS}, /* 4-byte outputs */
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 1, {11184810, 6}, {1, 11184810}, TSCAN_ALGO_ROWS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tscan_tensor in, out;
        strided_into_packed(&in, &out, cases[i].in, cases[i].out, cases[i].ndim, cases[i].sizes, cases[i].in_strides);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_DECREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, cases[i].expected, "case %zu (%s into %s): AUTO chose %s, expected %s", i,
                     tscan_dtype_name(cases[i].in), tscan_dtype_name(cases[i].out), tscan_algo_name(chosen),
                     tscan_algo_name(cases[i].expected));
    }
}

/* Short lines stored along the axis from an input whose unit stride is on another batch
 * dimension than the output's lines, which lie a sector or more apart in the input (the random
 * sweep's permuted worst cases: every thread-a-line kernel read them a sector an element), go to
 * columns' staged form, up to the longest line a tile takes (31 elements of 4-byte
 * accumulators, 15 of 8-byte ones). Not a plain transpose (lines neighbour in the input: one
 * batch dimension), nor lines nearer than a sector in the input. */
Test(auto_dispatch, permuted_short_lines_go_to_columns_staged_form) {
    static const strided_case cases[] = {
        {TSCAN_FLOAT16, 3, 2, {196, 211426, 6}, {1, 196, 41439496}, 1},
        {TSCAN_INT16, 3, 2, {19, 2540312, 8}, {1, 19, 48265928}, 1},
        {TSCAN_FLOAT32, 3, 2, {64, 100000, 31}, {1, 64, 6400000}, 1},
        {TSCAN_FLOAT64, 3, 2, {64, 100000, 15}, {1, 64, 6400000}, 1},
        {TSCAN_FLOAT32, 3, 2, {64, 100000, 32}, {1, 64, 6400000}, 0}, /* over a tile's line */
        {TSCAN_FLOAT64, 3, 2, {64, 100000, 16}, {1, 64, 6400000}, 0},
        {TSCAN_INT8, 3, 2, {16, 4000000, 6}, {1, 16, 64000000}, 0},   /* lines 16 bytes apart */
        {TSCAN_FLOAT32, 2, 1, {5000000, 6}, {1, 5000000}, 0},         /* a transpose */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tscan_tensor in, out;
        strided_into_packed(&in, &out, cases[i].dtype, cases[i].dtype, cases[i].ndim, cases[i].sizes, cases[i].in_strides);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_DECREASING, 1, TSCAN_ALGO_AUTO};
        tscan_strategy_outline columns = {0};
        tscan_problem p;
        tscan_problem_init(&p, &desc, &in, &out);
        tscan_strategy_columns.outline(&p, &columns);
        cr_expect_eq(columns.stages_lines, cases[i].taken, "case %zu (%s): staged %d", i,
                     tscan_dtype_name(cases[i].dtype), columns.stages_lines);
        if (cases[i].taken) {
            const tscan_algo chosen = auto_choice(&desc, &in, &out);
            cr_expect_eq(chosen, TSCAN_ALGO_COLUMNS, "case %zu (%s): AUTO chose %s", i, tscan_dtype_name(cases[i].dtype),
                         tscan_algo_name(chosen));
        }
    }
}

/* Broadcast lines (the input's stride 0 on dimensions other than the axis): AUTO scans the
 * distinct lines and copies them where three or more share each and the packed output holds 4
 * MiB or more, its fastest kept run 128 bytes or more, or its fastest dimension repeated over 1-2
 * byte elements of a distinct output of 1 MiB at most; the groups of the output's dimensions in
 * memory order, fastest first, alternate kept and replicated. Not two copies, a small output, a
 * padded output, nor a broadcast axis alone. */
Test(replication, broadcast_lines_are_planned_as_copies_of_the_distinct_ones) {
    static const struct {
        tscan_dtype dtype;
        uint32_t ndim, axis;
        int64_t sizes[6], in_strides[6];
        int64_t out_pad;  /* elements after each row of the output's last dimension */
        int64_t copies;   /* 0: not replicated */
        uint32_t groups;
        int first_replicated;
        int64_t extents[4];
    } cases[] = {
        {TSCAN_INT8, 2, 0, {6482, 10497}, {1, 0}, 0, 10497, 2, 1, {10497, 6482}},
        {TSCAN_INT8, 4, 2, {3, 35950, 8, 6}, {0, 48, 6, 1}, 0, 3, 2, 0, {35950 * 48, 3}},
        {TSCAN_FLOAT16, 6, 5, {128, 18, 3, 2, 5, 689}, {74412, 4134, 1378, 689, 0, 1}, 0, 5, 3, 0, {689, 5, 13824}},
        {TSCAN_UINT8, 2, 0, {4096, 42068}, {1, 0}, 0, 42068, 2, 1, {42068, 4096}},
        {TSCAN_UINT64, 2, 0, {10128653, 5}, {1, 0}, 0, 0, 0, 0, {0}},                /* repeated 8-byte elements */
        {TSCAN_FLOAT16, 3, 1, {1581519, 2, 78}, {2, 1, 0}, 0, 0, 0, 0, {0}},         /* ... of 6 MB distinct */
        {TSCAN_FLOAT32, 2, 1, {2000000, 5}, {0, 1}, 0, 0, 0, 0, {0}},                /* kept runs of 20 bytes */
        {TSCAN_FLOAT32, 4, 1, {4, 37, 3, 41000}, {0, 41000, 0, 1}, 0, 12, 4, 0, {41000, 3, 37, 4}},
        {TSCAN_INT8, 3, 1, {2, 34, 1000000}, {0, 1000000, 1}, 0, 0, 0, 0, {0}},      /* two copies */
        {TSCAN_INT8, 2, 0, {1000, 4000}, {1, 0}, 0, 0, 0, 0, {0}},                   /* 4 MB of output */
        {TSCAN_FLOAT32, 2, 0, {2000, 4000}, {1, 0}, 3, 0, 0, 0, {0}},                 /* padded output */
        {TSCAN_FLOAT32, 2, 1, {20000, 4000}, {1, 0}, 0, 0, 0, 0, {0}},                /* the axis broadcast */
    };
    const tscan_planning planning = {tscan_auto_policy_for(90), 132};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint32_t ndim = cases[i].ndim, last = ndim - 1;
        int64_t out_strides[6], step = 1;
        for (uint32_t d = ndim; d-- > 0;) {
            out_strides[d] = step;
            step *= cases[i].sizes[d] + (d == last ? cases[i].out_pad : 0);
        }
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, cases[i].dtype, ndim, cases[i].sizes, cases[i].in_strides), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, cases[i].dtype, ndim, cases[i].sizes, out_strides), TSCAN_SUCCESS);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_DECREASING, 1, TSCAN_ALGO_AUTO};
        cr_assert_eq(tscan_validate(&desc, &in, &out), TSCAN_SUCCESS, "case %zu: %s", i, tscan_last_error());
        tscan_problem p;
        tscan_problem_init(&p, &desc, &in, &out);
        tscan_replication r;
        const int planned = tscan_plan_replication(&p, planning.policy, &r);
        cr_expect_eq(planned, cases[i].copies != 0, "case %zu: replicated %d", i, planned);
        if (!planned) continue;
        cr_expect_eq(r.copies, cases[i].copies, "case %zu: %lld copies", i, (long long)r.copies);
        cr_expect_eq(r.groups, cases[i].groups, "case %zu: %u groups", i, r.groups);
        cr_expect_eq(r.first_replicated, cases[i].first_replicated, "case %zu", i);
        for (uint32_t g = 0; g < r.groups && g < 4; ++g)
            cr_expect_eq(r.extents[g], cases[i].extents[g], "case %zu: group %u of %lld", i, g, (long long)r.extents[g]);
        cr_expect_eq(r.out, (char *)FAKE_OUT, "case %zu: the output's base moved", i);
        /* The distinct view: the broadcast dimensions other than the axis of size 1 in both. */
        tscan_tensor distinct_in, distinct_out;
        tscan_distinct_view(&in, &out, cases[i].axis, &distinct_in, &distinct_out);
        int64_t distinct = 1;
        for (uint32_t d = 0; d < ndim; ++d) {
            cr_expect_eq(distinct_in.sizes[d], distinct_out.sizes[d], "case %zu, dimension %u", i, d);
            distinct *= distinct_out.sizes[d];
        }
        cr_expect_eq(distinct * r.copies, r.elements, "case %zu: %lld distinct elements", i, (long long)distinct);
    }
}

/* A permuted input that columns' thread a line would read a sector an element: its lanes (the
 * output's fastest batch dimension) 32 bytes or more apart in the input, and its unit stride on
 * a batch dimension whose neighbours are 256 lines or more apart in columns' order (for 8-byte
 * elements, 8 MiB of sectors or more apart, beyond the L2's reach). AUTO then
 * gathers it into the output and scans that in place, from 4 MiB of output. The plan's three
 * sets of dimensions: U, contiguous in the input from its unit stride (never the output's
 * fastest), V, contiguous in the output up to U's first, and the rest. Not a packed input, a
 * sliced one (no unit stride), the unit stride along the axis (a thread walks its sectors),
 * neighbours within a block, 8-byte neighbours within the L2's reach, a wider output, a padded
 * output, nor a small one. */
Test(gather, permuted_inputs_are_planned_as_tiles_of_two_runs) {
    static const struct {
        tscan_dtype dtype, out_dtype;
        uint32_t ndim, axis;
        int64_t sizes[7], in_strides[7];
        int64_t out_pad; /* elements after each row of the output's last dimension */
        int gathered;
        int64_t u_extent, v_extent, rest_extent;
        uint32_t u_ndim, v_ndim;
    } cases[] = {
        /* the draws' worst: U is 4 x 2 x 5 x 521 in the input's order, V the output's last 390 */
        {TSCAN_INT32, TSCAN_INT32, 7, 1, {5, 3, 5, 4, 2, 521, 390}, {24382800, 8127600, 8, 1, 4, 40, 20840}, 0, 1,
         20840, 390, 15, 4, 1},
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 7, 1, {5, 3, 5, 4, 2, 521, 390}, {24382800, 8127600, 8, 1, 4, 40, 20840}, 0, 1,
         20840, 390, 15, 4, 1},
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 4, 0, {3, 8, 1000, 1000}, {1000000, 3000000, 1, 1000}, 0, 1, 1000, 1000, 24, 1, 1},
        {TSCAN_INT16, TSCAN_INT16, 3, 2, {19, 2540312, 8}, {1, 19, 48265928}, 0, 1, 19 * 2540312, 8, 1, 2, 1},
        {TSCAN_FLOAT16, TSCAN_FLOAT16, 3, 2, {196, 211426, 6}, {1, 196, 41439496}, 0, 1, 196 * 211426, 6, 1, 2, 1},
        {TSCAN_INT8, TSCAN_INT8, 3, 1, {64, 300, 1000}, {1, 64, 19200}, 0, 1, 64 * 300, 1000, 1, 2, 1},
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 0, {3000, 4000}, {4000, 1}, 0, 0, 0, 0, 0, 0, 0},   /* packed */
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 0, {3000, 4000}, {2, 6000}, 0, 0, 0, 0, 0, 0, 0},   /* sliced */
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 0, {3000, 4000}, {1, 3000}, 0, 0, 0, 0, 0, 0, 0},   /* along the axis */
        {TSCAN_INT64, TSCAN_INT64, 7, 0, {8, 467, 128, 4, 3, 11, 2}, {2630144, 5632, 44, 1, 42082304, 4, 21041152}, 0, 0,
         0, 0, 0, 0, 0},                                                                         /* 66 lines apart */
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 4, 0, {3, 8, 1000, 1000}, {1000000, 3000000, 1, 1000}, 0, 0, 0, 0, 0, 0, 0}, /* in L2 */
        {TSCAN_INT16, TSCAN_INT32, 2, 0, {3000, 4000}, {1, 3000}, 0, 0, 0, 0, 0, 0, 0},       /* wider */
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 0, {3000, 4000}, {1, 3000}, 5, 0, 0, 0, 0, 0, 0},   /* padded output */
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 0, {1000, 1000}, {1, 1000}, 0, 0, 0, 0, 0, 0, 0},   /* 4 MB */
    };
    const tscan_planning planning = {tscan_auto_policy_for(90), 132};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint32_t ndim = cases[i].ndim, last = ndim - 1;
        int64_t out_strides[7], step = 1;
        for (uint32_t d = ndim; d-- > 0;) {
            out_strides[d] = step;
            step *= cases[i].sizes[d] + (d == last ? cases[i].out_pad : 0);
        }
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, cases[i].dtype, ndim, cases[i].sizes, cases[i].in_strides), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, cases[i].out_dtype, ndim, cases[i].sizes, out_strides), TSCAN_SUCCESS);
        tscan_scan_desc desc = {TSCAN_OP_SUM, cases[i].axis, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        cr_assert_eq(tscan_validate(&desc, &in, &out), TSCAN_SUCCESS, "case %zu: %s", i, tscan_last_error());
        tscan_problem p;
        tscan_problem_init(&p, &desc, &in, &out);
        tscan_gather g;
        const int planned = tscan_plan_gather(&p, planning.policy, &g);
        cr_expect_eq(planned, cases[i].gathered, "case %zu: gathered %d", i, planned);
        if (!planned) continue;
        cr_expect_eq(g.u_extent, cases[i].u_extent, "case %zu: U of %lld", i, (long long)g.u_extent);
        cr_expect_eq(g.v_extent, cases[i].v_extent, "case %zu: V of %lld", i, (long long)g.v_extent);
        cr_expect_eq(g.rest_extent, cases[i].rest_extent, "case %zu: rest of %lld", i, (long long)g.rest_extent);
        cr_expect_eq(g.u_out.ndim, cases[i].u_ndim, "case %zu: U in %u dimensions", i, g.u_out.ndim);
        cr_expect_eq(g.v_in.ndim, cases[i].v_ndim, "case %zu: V in %u dimensions", i, g.v_in.ndim);
        cr_expect_eq(g.u_extent * g.v_extent * g.rest_extent, p.n * p.lines, "case %zu: not every element", i);
        cr_expect_eq(g.out, (char *)FAKE_OUT, "case %zu: the output's base moved", i);
        cr_expect_eq(g.in, (const char *)FAKE_IN, "case %zu: the input's base moved", i);
    }
}

/* A sliced axis is no transpose: every other element along the axis, lines 143988 apart in the
 * input (random sweep, seed 1: rows 1.48x ahead of lookback's column blocks on both GPUs). */
Test(auto_dispatch, a_sliced_axis_is_not_a_transposed_input) {
    const int64_t sizes[3] = {13, 411, 71670}, in_strides[3] = {59179068, 143988, 2};
    tscan_tensor in, out;
    cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, TSCAN_UINT8, 3, sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, TSCAN_UINT8, 3, sizes, NULL), TSCAN_SUCCESS);
    tscan_scan_desc desc = {TSCAN_OP_SUM, 2, TSCAN_INCREASING, 1, TSCAN_ALGO_AUTO};
    const tscan_algo chosen = auto_choice(&desc, &in, &out);
    cr_expect_eq(chosen, TSCAN_ALGO_ROWS, "AUTO chose %s", tscan_algo_name(chosen));
}

/* An input read along memory into an output written across it (the output's axis strided) is a
 * strided axis's problem: columns for many lines, lookback for a long axis over few of them. */
Test(auto_dispatch, strided_outputs_take_the_strided_axis_rules) {
    static const struct {
        int64_t lines, n;
        tscan_algo expected;
    } cases[] = {{33554432, 2, TSCAN_ALGO_COLUMNS}, {65536, 1024, TSCAN_ALGO_COLUMNS}, {4096, 16384, TSCAN_ALGO_LOOKBACK}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const int64_t sizes[2] = {cases[i].lines, cases[i].n}, across[2] = {1, cases[i].lines};
        tscan_tensor in, out;
        cr_assert_eq(tscan_tensor_init(&in, FAKE_IN, TSCAN_FLOAT32, 2, sizes, NULL), TSCAN_SUCCESS);
        cr_assert_eq(tscan_tensor_init(&out, FAKE_OUT, TSCAN_FLOAT32, 2, sizes, across), TSCAN_SUCCESS);
        tscan_scan_desc desc = {TSCAN_OP_SUM, 1, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
        const tscan_algo chosen = auto_choice(&desc, &in, &out);
        cr_expect_eq(chosen, cases[i].expected, "%lld lines of %lld: AUTO chose %s, expected %s",
                     (long long)cases[i].lines, (long long)cases[i].n, tscan_algo_name(chosen),
                     tscan_algo_name(cases[i].expected));
    }
}
