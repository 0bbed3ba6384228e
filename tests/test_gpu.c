/*
 * test_gpu.c - every strategy (AUTO and each tscan_algo after it) against tscan_scan_reference
 * on the device: the whole case matrix of testutil (dtype × op × direction × exclusive ×
 * ndim 1..8 × layout), shapes that reach each strategy's internal paths (short and long
 * lines, many and few lines, long strided axes with few and many columns, sizes that are no
 * multiple of any tile), the worked examples, NaN and infinities, and the workspace contract.
 *
 * Each run (gpuutil's gu_run) poisons the output buffer and the workspace, allocates exactly
 * the workspace the query gives, checks that one byte less and none are refused, compares
 * the output with the reference (exactly for integers and exact float data, else with
 * testutil's documented tolerance), and checks every byte outside the output view, the input
 * buffer and a guard after the workspace. NOT_SUPPORTED is accepted from a strategy only with
 * a message, and agreeing with tscan_scan_supported; never from AUTO.
 *
 * Wider outputs (every allowed pair of two types) run on shapes of their own (gpu_wider).
 *
 * Skips, saying why, when there is no CUDA device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuutil.h"
#include "testutil.h"
#include "tscan_internal.h"

/* ---- the matrix: one test per dtype ------------------------------------------------------- */

static void matrix_for_dtype(tscan_dtype dtype) {
    GU_REQUIRE_DEVICE();
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < TU_MATRIX_COUNT; ++i) {
        tu_case c;
        tu_matrix_case(i, &c);
        if (c.dtype == dtype)
            gu_run_all_algos(&a, &c, NULL, (cudaStream_t)0, &t);
    }
    gu_arena_free(&a);
    char what[64];
    snprintf(what, sizeof what, "matrix, %s", tscan_dtype_name(dtype));
    gu_tally_assert(&t, what);
}

#define MATRIX_TEST(D, name) \
    Test(gpu_matrix, name) { matrix_for_dtype(D); }
MATRIX_TEST(TSCAN_FLOAT32, float32)
MATRIX_TEST(TSCAN_FLOAT16, float16)
MATRIX_TEST(TSCAN_BFLOAT16, bfloat16)
MATRIX_TEST(TSCAN_FLOAT64, float64)
MATRIX_TEST(TSCAN_INT8, int8)
MATRIX_TEST(TSCAN_UINT8, uint8)
MATRIX_TEST(TSCAN_INT16, int16)
MATRIX_TEST(TSCAN_UINT16, uint16)
MATRIX_TEST(TSCAN_INT32, int32)
MATRIX_TEST(TSCAN_UINT32, uint32)
MATRIX_TEST(TSCAN_INT64, int64)
MATRIX_TEST(TSCAN_UINT64, uint64)

/* ---- shapes for the strategies' internal paths ------------------------------------------------ */

/* One contiguous line: warp, block and multi-tile paths, every tile boundary missed by some. */
static const gu_shape lines[] = {
    {1, {1}, 0},    {1, {2}, 0},    {1, {31}, 0},   {1, {32}, 0},    {1, {33}, 0},
    {1, {64}, 0},   {1, {255}, 0},  {1, {256}, 0},  {1, {257}, 0},   {1, {1000}, 0},
    {1, {1023}, 0}, {1, {1025}, 0}, {1, {4097}, 0}, {1, {65537}, 0}, {1, {100000}, 0},
};

/* Contiguous axis, many lines and few: several lines per warp, a warp or a block per line;
 * lines of 1-byte elements that end inside a thread, of whole 16-byte vectors (16, 48, 80) or
 * not (100). */
static const gu_shape rows[] = {
    {2, {4096, 1}, 1},   {2, {4096, 2}, 1},   {2, {2048, 31}, 1}, {2, {2048, 33}, 1},
    {2, {1000, 64}, 1},  {2, {300, 256}, 1},  {2, {97, 1000}, 1}, {2, {16, 4097}, 1},
    {2, {3, 100000}, 1}, {3, {2, 3, 4097}, 2}, {3, {5, 7, 513}, 2}, {2, {2000, 16}, 1},
    {2, {1500, 48}, 1},  {2, {999, 80}, 1},  {2, {500, 100}, 1},
};

/* Strided axis: one thread per column (many columns), split across blocks (long axis, few
 * columns), and the middle axis of a 3-d tensor. */
static const gu_shape columns[] = {
    {2, {100000, 3}, 0}, {2, {5000, 300}, 0}, {2, {70000, 2}, 0},   {2, {33, 1000}, 0},
    {2, {4097, 31}, 0},  {2, {7, 4097}, 0},   {2, {2, 5000}, 0},    {2, {1000, 1}, 0},
    {2, {257, 129}, 0},  {3, {3, 5000, 17}, 1}, {3, {64, 300, 33}, 1}, {3, {2, 100000, 2}, 1},
};

/* The data for a case: integers any bits; float sums exact (small integers) or random with
 * the tolerance; float products exact powers of two, or random near one on lines short
 * enough that no prefix product comes near overflow or the subnormals of the output type
 * (where two associations could round to a finite value and to infinity): the log2 of a
 * product of n such factors spreads as 0.58·sqrt(n), against 16 for float16 and 126 for
 * the others. */
static void choose_data(tu_case *c, unsigned variant) {
    const int64_t n = c->sizes[c->desc.axis];
    const int64_t near_one_max = c->dtype == TSCAN_FLOAT16 ? 64 : 1000;
    if (!tu_dtype_is_float(c->dtype))
        c->data = TU_DATA_RANDOM;
    else if (c->desc.op == TSCAN_OP_SUM)
        c->data = variant % 2 ? TU_DATA_RANDOM : TU_DATA_SMALL_INT;
    else
        c->data = variant % 2 && n <= near_one_max ? TU_DATA_NEAR_ONE : TU_DATA_POW2;
}

/*
 * Two adjustments of the data once the layout is known:
 *  - long product lines get units (gu_make_units): otherwise they are 0 or infinite after a
 *    few dozen terms and the long-range combination goes untested;
 *  - random float sums along a broadcast axis (input stride 0: every term the same) become
 *    small integers, compared exactly. testutil's tolerance counts on random signs making
 *    rounding errors cancel; n equal terms make the sequential reference itself drift by up
 *    to about n/4 · u · S (measured: 240 u·S at n = 1000 in float64), far beyond 16 u·S,
 *    while a tree sum stays close to exact. The first GPU run flagged exactly these cases
 *    (float64, axis broadcast, lines of 256 to 4097), every strategy but the sequential one.
 *    Random products along a broadcast axis get units for the same reason: n equal factors
 *    drift to the subnormals at n·log2|x|, not the random walk choose_data allows for
 *    (flagged: float32 near_one on 5x7x513, 2.8e-45 against 0 at element 383).
 */
static void prepare_shape_case(tu_layout *l) {
    const uint32_t axis = l->c.desc.axis;
    const int broadcast_axis = l->input.strides[axis] == 0 && l->c.sizes[axis] > 1;
    if (l->c.desc.op == TSCAN_OP_PROD && l->c.sizes[axis] > 64 && (l->c.data != TU_DATA_NEAR_ONE || broadcast_axis))
        gu_make_units(l);
    if (l->c.desc.op == TSCAN_OP_SUM && tu_case_tolerance_k(&l->c) != 0.0 && broadcast_axis) {
        tu_rng r = tu_rng_make(l->c.seed ^ 0x5a11);
        l->c.data = TU_DATA_SMALL_INT;
        tu_fill(&r, &l->input, l->c.data);
        gu_layout_commit_input(l);
    }
}

/*
 * Every dtype on every shape. Shapes up to 50000 elements take all eight op × direction ×
 * exclusive combinations, larger ones two (rotating, so that each combination comes up);
 * layouts rotate through testutil's kinds (layout < 0), so each shape meets packed,
 * permuted, padded, negative, broadcast, in place and transposed across the dtypes; or
 * every case takes `layout`.
 */
static void run_prepared_shapes(const gu_shape *list, size_t count, const char *what, uint64_t salt, int layout,
                                void (*prepare)(tu_layout *l)) {
    GU_REQUIRE_DEVICE();
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (size_t s = 0; s < count; ++s) {
        int64_t numel = 1;
        for (uint32_t d = 0; d < list[s].ndim; ++d)
            numel *= list[s].sizes[d];
        for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt) {
            for (unsigned combo = 0; combo < 8; ++combo) {
                if (numel > 50000 && (combo + (unsigned)dt + (unsigned)s) % 4 != 0)
                    continue;
                tu_case c = gu_case((tscan_dtype)dt, &list[s], combo,
                                    layout >= 0 ? (tu_layout_kind)layout
                                                : (tu_layout_kind)((combo + (unsigned)dt + (unsigned)s) % TU_LAYOUT_COUNT),
                                    TU_DATA_RANDOM, tu_seed(what, salt + s * 1000 + (uint64_t)dt * 10 + combo));
                /* Half the cases start their views aligned, so that vectors and words run too. */
                c.aligned = (combo + (unsigned)dt + (unsigned)s) / 4 % 2 == 0;
                choose_data(&c, combo + (unsigned)dt);
                gu_run_all_algos(&a, &c, prepare, (cudaStream_t)0, &t);
            }
        }
    }
    gu_arena_free(&a);
    gu_tally_assert(&t, what);
}
static void run_shapes(const gu_shape *list, size_t count, const char *what, uint64_t salt, int layout) {
    run_prepared_shapes(list, count, what, salt, layout, prepare_shape_case);
}

Test(gpu_shapes, single_lines) { run_shapes(lines, sizeof lines / sizeof lines[0], "single lines", 1, -1); }
Test(gpu_shapes, contiguous_rows) { run_shapes(rows, sizeof rows / sizeof rows[0], "contiguous rows", 2, -1); }
Test(gpu_shapes, strided_axis) {
    run_shapes(columns, sizeof columns / sizeof columns[0], "strided axis", 3, -1);
}

/* Lookback moves 1- and 2-byte elements as 32-bit words where lines (a strided axis) pack,
 * and consecutive elements of a contiguous axis in 16-byte slots (2- to 8-byte elements),
 * 8- or 4-byte ones where the layout packs fewer, or 32-bit ones (1-byte elements): several
 * tiles of each, forward and reversed, packed, with negated strides (a word's elements then
 * lie in reverse order) and in place. Rows of 20004 pack 2-byte elements by 4 (8 bytes), rows
 * of 20002 2- and 4-byte ones by 2. A single line packs whatever its length and start, its
 * first and last slots in part: 40001, 40006 and 49999 end 1 to 7 elements into a slot of every
 * width, and the views that start off alignment (half the cases) start inside one. The rotating
 * layouts above cover the unpacked fallbacks (odd strides, input and output off each other). */
static const gu_shape packed_words[] = {{1, {40000}, 0}, {2, {2, 20000}, 1}, {2, {3, 20004}, 1}, {2, {3, 20002}, 1},
                                        {2, {600, 64}, 0}, {1, {40001}, 0}, {1, {40006}, 0}, {1, {49999}, 0}};
Test(gpu_shapes, packed_words) {
    static const tu_layout_kind kinds[] = {TU_LAYOUT_PACKED, TU_LAYOUT_NEGATIVE, TU_LAYOUT_IN_PLACE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        run_shapes(packed_words, sizeof packed_words / sizeof packed_words[0], "packed words", 5 + k, kinds[k]);
}

/* Lookback's one-wave path (a contiguous axis in 16-byte vectors, every 16 KB tile on the device
 * at once: these take at most 256 tiles, so on any GPU of 64 SMs or more): one line of many
 * tiles, lines whose last tile is partly empty, and several batch dimensions; forward and
 * reversed (a vector's elements then lie in reverse order), packed, negated and in place. The
 * lengths are multiples of 8, so that every dtype's views pack when aligned (half the cases);
 * the others run the line chunk kernel. */
static const gu_shape one_wave[] = {{1, {INT64_C(1) << 19}, 0}, {1, {262152}, 0}, {2, {3, 65544}, 1},
                                    {2, {5, 40000}, 1}, {3, {2, 3, 16392}, 2}};
Test(gpu_shapes, one_wave) {
    static const tu_layout_kind kinds[] = {TU_LAYOUT_PACKED, TU_LAYOUT_NEGATIVE, TU_LAYOUT_IN_PLACE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        run_shapes(one_wave, sizeof one_wave / sizeof one_wave[0], "one wave", 8 + k, kinds[k]);
}

/* A transposed input under a packed output: lines neighbour in the input, elements in the
 * output (lookback's column blocks store line by line), and the reverse for axis 0 (stream's
 * lanes form reads up to 64 lanes along their lines, the longest over many tiles). Lines
 * and lengths in multiples of 4 let 1- and 2-byte elements load words of lines and store
 * words along the axis (aligned cases); odd ones keep single elements. */
static const gu_shape transposed[] = {
    {2, {97, 1000}, 1}, {2, {16, 4097}, 1}, {2, {40, 256}, 1}, {2, {1000, 33}, 0}, {3, {3, 33, 700}, 2},
    {2, {32, 1000}, 1}, {2, {64, 520}, 1}, {2, {100003, 10}, 0}, {2, {4099, 64}, 0}, {2, {70001, 2}, 0},
};
Test(gpu_shapes, transposed_input) {
    run_shapes(transposed, sizeof transposed / sizeof transposed[0], "transposed input", 4, TU_LAYOUT_TRANSPOSED);
}

/* Short lines of a permuted input under a packed output (the input's unit stride on its first
 * dimension, the output's lines end to end along the second, a sector or more apart in the
 * input for wide enough elements): columns' staged form moves tiles of them through shared
 * memory, cut off by the tensor along u and v, u narrower than a warp, a rest dimension, up to
 * the longest lines a tile takes (31 elements of 4-byte accumulators, 15 of 8-byte ones: longer
 * ones, and lines nearer in the input, take columns' other forms). */
static const gu_shape staged[] = {
    {3, {37, 200, 6}, 2}, {3, {5, 600, 15}, 2}, {3, {40, 40, 31}, 2}, {4, {3, 40, 70, 5}, 3}, {3, {33, 700, 2}, 2}, {3, {64, 100, 7}, 2},
};
Test(gpu_shapes, staged_permuted_input) {
    run_shapes(staged, sizeof staged / sizeof staged[0], "staged permuted input", 12, TU_LAYOUT_TRANSPOSED);
}

/* Broadcast inputs (random dimensions of stride 0) under packed outputs of 4 MiB or more, where
 * AUTO scans the distinct lines and copies them (src/replication.c, cuda/replicate.cu) when
 * three or more lines share each: the output's fastest dimension repeated, inner and outer runs
 * of kept dimensions repeated, several replicated groups. prepare counts the cases AUTO
 * replicates, by element size: each size must have some (tests/emulated runs every layout of
 * the copies on CPU threads). */
static const gu_shape broadcast[] = {
    {3, {5, 1000, 900}, 2}, {3, {1200, 4, 900}, 0}, {2, {4500, 1000}, 0}, {4, {3, 30, 50, 1000}, 1},
};
static long replicated_by_size[9];
static void prepare_broadcast_case(tu_layout *l) {
    prepare_shape_case(l);
    tscan_problem p;
    tscan_replication r;
    tscan_problem_init(&p, &l->c.desc, &l->input, &l->output);
    const tscan_planning planning = tscan_planning_for_current_device();
    if (tscan_plan_replication(&p, planning.policy, &r)) ++replicated_by_size[r.elem_size];
}
Test(gpu_shapes, broadcast_lines_copied) {
    memset(replicated_by_size, 0, sizeof replicated_by_size);
    run_prepared_shapes(broadcast, sizeof broadcast / sizeof broadcast[0], "broadcast lines", 13, TU_LAYOUT_BROADCAST,
                        prepare_broadcast_case);
    for (size_t size = 1; size <= 8; size *= 2)
        cr_expect(replicated_by_size[size] > 0, "no case of %zu-byte elements was replicated", size);
}

/* Permuted inputs under packed outputs of 4 MiB or more whose short strided axis columns would
 * read a sector an element (the input's dimensions reversed: the unit stride on the outermost,
 * the lanes on the innermost), which AUTO gathers into the output and scans in place
 * (src/gather.c, cuda/gather.cu). prepare counts the cases AUTO gathers, by element size: each
 * size must have some (tests/emulated runs every layout of the gather on CPU threads). */
static const gu_shape permuted[] = {{4, {5, 3, 40, 7000}, 1}, {3, {300, 4, 3600}, 1}};
static long gathered_by_size[9];
static void prepare_permuted_case(tu_layout *l) {
    prepare_shape_case(l);
    tscan_tensor scanned_in, scanned_out;
    tscan_auto_scanned_views(&l->c.desc, &l->input, &l->output, &scanned_in, &scanned_out);
    if (scanned_in.data == l->output.data && l->input.data != l->output.data)
        ++gathered_by_size[tscan_dtype_size(l->output.dtype)];
}
Test(gpu_shapes, permuted_inputs_gathered) {
    memset(gathered_by_size, 0, sizeof gathered_by_size);
    run_prepared_shapes(permuted, sizeof permuted / sizeof permuted[0], "permuted inputs", 20, TU_LAYOUT_TRANSPOSED,
                        prepare_permuted_case);
    for (size_t size = 1; size <= 8; size *= 2)
        cr_expect(gathered_by_size[size] > 0, "no case of %zu-byte elements was gathered", size);
}

/* Rows of a pitched input start at every alignment in turn while the packed output's stay put:
 * rows loads 16-byte vectors at the input's own alignment and shifts the items out. Lines of one
 * chunk (sub-warps), of several (a warp each: over 32 lines per SM), and few long ones (a block
 * each); the views at the buffers' ends take the element path. */
static const gu_shape pitched[] = {
    {2, {4096, 64}, 1}, {2, {2048, 33}, 1}, {2, {300, 256}, 1}, {3, {5, 7, 513}, 2}, {2, {4500, 600}, 1},
    {2, {16, 4097}, 1}, {2, {3, 100000}, 1},
};
Test(gpu_shapes, pitched_rows) {
    run_shapes(pitched, sizeof pitched / sizeof pitched[0], "pitched rows", 6, TU_LAYOUT_PITCHED);
}

/* Padded inputs of short contiguous lines in runs (the padding stops batch dimensions from
 * merging): stream reads a vector's lines by adds across a run's end and afresh across the end
 * of a run of two dimensions; every strategy runs them. */
static const gu_shape padded_runs[] = {{3, {3000, 7, 17}, 2}, {4, {40, 5, 7, 37}, 3}, {5, {6, 30, 5, 3, 6}, 4}};
Test(gpu_shapes, padded_runs_of_lines) {
    run_shapes(padded_runs, sizeof padded_runs / sizeof padded_runs[0], "padded runs of lines", 7, TU_LAYOUT_PADDED);
}

/* Columns' realigned vectors: axes of four rows or fewer over lines enough for 16 bytes of them a
 * thread (16384 threads: 262144 lines of 1-byte elements), odd in number, so that rows lie off
 * the 16-byte grid and each run of lines ends in a part group, and two such blocks side by side.
 * Packed (the rows' pitch moves them), pitched (the input's too) and rotating layouts (in place
 * and overlapping views go single lines); half the views start off alignment. */
static const gu_shape realigned[] = {{2, {3, 262147}, 0}, {2, {2, 262147}, 0}, {3, {2, 4, 131075}, 1}, {2, {4, 300007}, 0}};
Test(gpu_shapes, realigned_columns) {
    static const int kinds[] = {TU_LAYOUT_PACKED, TU_LAYOUT_PITCHED, -1};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        run_shapes(realigned, sizeof realigned / sizeof realigned[0], "realigned columns", 11 + k, kinds[k]);
}

/* Lookback's column blocks off the grid: words of 2 or 4 neighbouring lines whose rows alternate
 * on and off the grid (an odd pitch) or whose run ends in a part word (an odd number of lines),
 * over axes of several tiles. Packed, pitched (the input's rows one longer), in place and
 * negated (a last stride of -1 keeps single lines); half the views start off alignment. */
static const gu_shape off_grid[] = {{2, {1000, 3321}, 0}, {2, {3000, 101}, 0}, {3, {4, 700, 65}, 1}, {2, {600, 2203}, 0}};
Test(gpu_shapes, off_grid_words) {
    static const tu_layout_kind kinds[] = {TU_LAYOUT_PACKED, TU_LAYOUT_PITCHED, TU_LAYOUT_IN_PLACE, TU_LAYOUT_NEGATIVE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        run_shapes(off_grid, sizeof off_grid / sizeof off_grid[0], "off-grid words", 14 + k, kinds[k]);
}

/* Chains hundreds of look-back tiles long: one line of 2^22 elements (512 float32 line chunks),
 * 64 lines of 2^16 along a strided axis (two chains of 256 column blocks; for the stream's lanes
 * form one chain of 64 to 512 wide tiles) and 3 lines of 2^20 (the lanes form: 96 to 768 plain
 * tiles, windows of 85 a round). With every block of the grid in flight, a tile's nearest
 * inclusive predecessor is then often beyond one look-back window, so look-backs cross windows
 * and read statuses that turn inclusive while they read them (the shapes above are at most 20
 * tiles deep). Not under memcheck (gpu_s*): a few seconds a run there. */
static const gu_shape long_chains[] = {
    {1, {INT64_C(1) << 22}, 0}, {2, {INT64_C(1) << 16, 64}, 0}, {2, {INT64_C(1) << 20, 3}, 0}};
Test(gpu_chains, long_chains) {
    run_shapes(long_chains, sizeof long_chains / sizeof long_chains[0], "long chains", 7, -1);
}

/* Many short chains: 40000 lines of 300 along a strided axis are 625 column-block chains of 3
 * tiles (1250 of 8-byte elements), which lookback claims in bands of chains, the last band
 * narrower than the others (claim_band: bands from 512 chains on an H100; on a GPU that holds
 * fewer blocks at once, from fewer). Not under memcheck: 12M elements a case. */
static const gu_shape banded_chains[] = {{2, {300, 40000}, 0}};
Test(gpu_chains, banded_chains) {
    run_shapes(banded_chains, sizeof banded_chains / sizeof banded_chains[0], "banded chains", 11, -1);
}

/* Lookback's bulk line chunks (sm_90 and later: cuda/lookback/bulk_kernel.cuh) take a problem only
 * where its tiles of 32 KB are at least 8 a resident block (2112 on a 132-SM GPU, 66 MiB), which
 * the shapes above never reach: one line (its last vector in part) and 280 lines whose starts
 * fall everywhere in their 16-byte vectors (a line's first and last vectors in part, its last
 * tile nearly empty), packed and aligned, the same bytes for 1-byte dtypes as for 4- and 8-byte
 * ones (it takes neither 64-bit integer products nor 1-byte ones), two of the eight op x
 * direction x exclusive combinations a case, rotating (int8 and uint8 sum on one shape each);
 * lookback and AUTO only (the shapes are large for the host's reference). Not under memcheck. */
static const gu_shape bulk_shapes[2][2] = {  /* 1-byte elements, then 4- and 8-byte ones */
    {{1, {(INT64_C(1) << 26) + (INT64_C(1) << 25) + 3}, 0}, {2, {280, 262147}, 1}},
    {{1, {(INT64_C(1) << 24) + (INT64_C(1) << 23) + 3}, 0}, {2, {280, 65537}, 1}}};
Test(gpu_chains, bulk_line_chunks) {
    static const tscan_dtype dtypes[] = {TSCAN_FLOAT32, TSCAN_INT32, TSCAN_FLOAT64, TSCAN_INT64, TSCAN_INT8, TSCAN_UINT8};
    static const tscan_algo algos[] = {TSCAN_ALGO_LOOKBACK, TSCAN_ALGO_AUTO};
    GU_REQUIRE_DEVICE();
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (size_t s = 0; s < 2; ++s)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d)
            for (unsigned combo = 0; combo < 8; ++combo) {
                if ((combo + (unsigned)d + (unsigned)s) % 4 != 0) continue;
                const gu_shape *shape = &bulk_shapes[tscan_dtype_size(dtypes[d]) == 1 ? 0 : 1][s];
                tu_case c = gu_case(dtypes[d], shape, combo, TU_LAYOUT_PACKED, TU_DATA_RANDOM,
                                    tu_seed("bulk line chunks", s * 1000 + d * 10 + combo));
                c.aligned = 1;
                choose_data(&c, combo + (unsigned)d);
                tu_layout l;
                tu_layout_make(&l, &c);
                prepare_shape_case(&l);
                unsigned char *expected = tu_layout_expected(&l);
                for (size_t i = 0; i < sizeof algos / sizeof algos[0]; ++i) {
                    char msg[1024];
                    gu_tally_add(&t, algos[i], gu_run(&a, &l, expected, algos[i], (cudaStream_t)0, msg, sizeof msg), msg);
                }
                free(expected);
                tu_layout_free(&l);
            }
    gu_arena_free(&a);
    gu_tally_assert(&t, "bulk line chunks");
}

/* ---- wider outputs: every allowed pair of two types ------------------------------------------------ */

/* One wider-output case (input `in` into `out`) of a shape, AUTO and every strategy against the
 * reference. */
static void run_wider_case(gu_arena *a, gu_tally *t, int in, int out, const gu_shape *shape, unsigned combo,
                           tu_layout_kind kind, int aligned, uint64_t seed, unsigned variant) {
    tu_case c = gu_case((tscan_dtype)in, shape, combo, kind, TU_DATA_RANDOM, seed);
    c.wider = 1;
    c.wider_dtype = (tscan_dtype)out;
    c.aligned = aligned;
    choose_data(&c, variant);
    gu_run_all_algos(a, &c, prepare_shape_case, (cudaStream_t)0, t);
}

/* Shapes that reach each widening strategy as AUTO routes them: one long line (CUB), rows short
 * and long (rows), a strided axis with many columns and with few (columns), a middle axis, short
 * lines (columns' staged form where the layout transposes the input: 990 lines 33 bytes apart
 * in a 1-byte input). */
static const gu_shape wider_shapes[] = {
    {1, {100003}, 0}, {2, {300, 1000}, 1}, {2, {3, 70000}, 1}, {2, {5000, 300}, 0}, {2, {70000, 3}, 0}, {3, {3, 500, 17}, 1},
    {3, {33, 30, 7}, 2},
};
/* And columns' vectors of a narrower input (16 bytes of it a thread, widened in registers), for
 * every narrower pair, packed and aligned, over lines enough for them (a block an SM: 33792
 * threads on 132 SMs, 540672 lines of 1-byte inputs), along a strided axis of 3 (the short
 * kernel) and of 12 (the long one), in one run of lines (each warp's row staged and stored as
 * whole runs) and in runs of 6560 (410 vectors of 1-byte inputs: warps across a run's end store
 * lane by lane); two of the eight op x direction x exclusive combinations each, rotating. */
static const gu_shape wider_vector_shapes[] = {{2, {3, 1048576}, 0}, {2, {12, 600000}, 0}, {3, {84, 3, 6560}, 1}};

/*
 * Every pair of an input and a wider output, every op × direction × exclusive on the small
 * shapes (two of the eight, rotating, above 50000 elements), the layouts rotating through
 * every kind but in place (which keeps one type); AUTO and every strategy against the
 * reference. Rows, columns, cub_device and lookback take every pair of the small shapes (at
 * most 300 lines); AUTO and columns every pair of the vector shapes.
 */
Test(gpu_wider, every_pair_every_strategy) {
    GU_REQUIRE_DEVICE();
    static const tu_layout_kind kinds[] = {TU_LAYOUT_PACKED,    TU_LAYOUT_PERMUTED,   TU_LAYOUT_PADDED,
                                           TU_LAYOUT_NEGATIVE,  TU_LAYOUT_BROADCAST,  TU_LAYOUT_TRANSPOSED,
                                           TU_LAYOUT_PITCHED};
    const size_t shape_count = sizeof wider_shapes / sizeof wider_shapes[0], kind_count = sizeof kinds / sizeof kinds[0];
    gu_arena a = {0};
    gu_tally t, tv;  /* the small shapes; the vector shapes (too many lines for cub_device) */
    memset(&t, 0, sizeof t);
    memset(&tv, 0, sizeof tv);
    unsigned turn = 0;
    for (int in = 0; in < TSCAN_DTYPE_COUNT; ++in)
        for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out) {
            if (in == out || !tscan_output_dtype_allowed((tscan_dtype)in, (tscan_dtype)out))
                continue;
            for (size_t s = 0; s < shape_count; ++s) {
                int64_t numel = 1;
                for (uint32_t d = 0; d < wider_shapes[s].ndim; ++d)
                    numel *= wider_shapes[s].sizes[d];
                for (unsigned combo = 0; combo < 8; ++combo, ++turn) {
                    if (numel > 50000 && (combo + turn / 8) % 4 != 0)
                        continue;
                    run_wider_case(&a, &t, in, out, &wider_shapes[s], combo, kinds[turn % kind_count],
                                   turn / kind_count % 2 == 0, tu_seed("gpu_wider", turn), combo + turn);
                }
            }
            if (tscan_dtype_size((tscan_dtype)in) < tscan_dtype_size((tscan_dtype)out))
                for (size_t s = 0; s < sizeof wider_vector_shapes / sizeof wider_vector_shapes[0]; ++s)
                    for (unsigned combo = turn % 4; combo < 8; combo += 4, ++turn)
                        run_wider_case(&a, &tv, in, out, &wider_vector_shapes[s], combo, TU_LAYOUT_PACKED, 1,
                                       tu_seed("gpu_wider_vectors", turn), combo + turn);
        }
    gu_arena_free(&a);
    gu_tally_assert(&t, "wider outputs");
    cr_assert(t.passed[TSCAN_ALGO_AUTO] > 0 && t.unsupported[TSCAN_ALGO_AUTO] == 0, "AUTO ran every case");
    cr_assert_eq(t.unsupported[TSCAN_ALGO_ROWS], 0, "rows declined a wider output");
    cr_assert_eq(t.unsupported[TSCAN_ALGO_COLUMNS], 0, "columns declined a wider output");
    cr_assert_eq(t.unsupported[TSCAN_ALGO_CUB_DEVICE], 0, "cub_device declined a wider output");
    cr_assert_eq(t.unsupported[TSCAN_ALGO_LOOKBACK], 0, "lookback declined a wider output");
    gu_tally_assert(&tv, "wider outputs in columns' vectors");
    cr_assert(tv.passed[TSCAN_ALGO_AUTO] > 0 && tv.unsupported[TSCAN_ALGO_AUTO] == 0, "AUTO ran every vector case");
    cr_assert_eq(tv.unsupported[TSCAN_ALGO_COLUMNS], 0, "columns declined a wider output in vectors");
}


/* ---- the worked examples through every strategy --------------------------------------------------- */

static void set_example_input(tu_layout *l) {
    static const double x[12] = {2, 1, 3, 5, 3, 8, 7, 3, 9, 6, 2, 4};
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    int k = 0;
    do
        tu_set(l->input.dtype, tu_elem(&l->input, idx), x[k++]);
    while (tu_next_index(&l->input, idx));
    gu_layout_commit_input(l);
}

/* CONTRACT §1's table (and the other op × direction × exclusive combinations, and both
 * axes), in every dtype, packed and in place. The reference's own answers are pinned by the
 * contract suite; here every strategy must equal the reference exactly. */
Test(gpu_examples, worked_examples_every_strategy) {
    GU_REQUIRE_DEVICE();
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt)
        for (unsigned combo = 0; combo < 16; ++combo)
            for (int in_place = 0; in_place < 2; ++in_place) {
                const gu_shape example = {4, {1, 1, 3, 4}, combo & 8 ? 2 : 3};
                tu_case c = gu_case((tscan_dtype)dt, &example, combo,
                                    in_place ? TU_LAYOUT_IN_PLACE : TU_LAYOUT_PACKED,
                                    TU_DATA_SMALL_INT, /* exact comparison */
                                    tu_seed("worked examples", (uint64_t)(dt * 100 + (int)combo * 2 + in_place)));
                gu_run_all_algos(&a, &c, set_example_input, (cudaStream_t)0, &t);
            }
    gu_arena_free(&a);
    gu_tally_assert(&t, "worked examples");
}

/* ---- NaN and infinities propagate ------------------------------------------------------------------- */

/* Puts NaN, +inf and -inf (and, for products, 0) at random places, about one element in 50
 * each, into data whose every association gives the same special values: small integers for
 * sums; units (±1) for products, which never overflow, so inf·0 = NaN whatever the order. */
static void add_specials(tu_layout *l) {
    tu_rng r = tu_rng_make(l->c.seed ^ 0xbad);
    const double specials[4] = {NAN, INFINITY, -INFINITY, 0.0};
    const uint64_t kinds = l->c.desc.op == TSCAN_OP_PROD ? 4 : 3;
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (tscan_numel(&l->input) == 0)
        return;
    if (l->c.desc.op == TSCAN_OP_PROD)
        gu_make_units(l);
    do {
        uint64_t pick = tu_rng_below(&r, 50 * kinds);
        if (pick < kinds)
            tu_set(l->input.dtype, tu_elem(&l->input, idx), specials[pick]);
    } while (tu_next_index(&l->input, idx));
    gu_layout_commit_input(l);
}

Test(gpu_examples, nan_and_infinities_propagate) {
    GU_REQUIRE_DEVICE();
    static const gu_shape specials_shapes[] = {
        {1, {5000}, 0}, {2, {3000, 7}, 0}, {2, {7, 3000}, 1}, {2, {100000, 3}, 0}, {3, {4, 300, 5}, 1}};
    static const tscan_dtype floats[] = {TSCAN_FLOAT32, TSCAN_FLOAT16, TSCAN_BFLOAT16, TSCAN_FLOAT64};
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (size_t s = 0; s < sizeof specials_shapes / sizeof specials_shapes[0]; ++s)
        for (size_t f = 0; f < sizeof floats / sizeof floats[0]; ++f)
            for (unsigned combo = 0; combo < 8; ++combo) {
                /* exact data: small integers for sums, units (add_specials) for products */
                tu_case c = gu_case(floats[f], &specials_shapes[s], combo,
                                    (tu_layout_kind)((s + f + combo) % TU_LAYOUT_COUNT),
                                    combo & 1 ? TU_DATA_POW2 : TU_DATA_SMALL_INT,
                                    tu_seed("specials", s * 100 + f * 10 + combo));
                gu_run_all_algos(&a, &c, add_specials, (cudaStream_t)0, &t);
            }
    gu_arena_free(&a);
    gu_tally_assert(&t, "NaN and infinities");
}

/* ---- the sign of zero ------------------------------------------------------------------------------- */

/* Lines of -0 with a rare +0: an inclusive sum keeps -0 until the first +0, an exclusive one
 * starts at +0 (CONTRACT §1.3; the reference's answer). The comparison is exact and tells
 * -0 from +0 (tu_values_equal). Shapes long enough that look-back tiles chain. */
static void set_negative_zeros(tu_layout *l) {
    tu_rng r = tu_rng_make(l->c.seed ^ 0x5167);
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (tscan_numel(&l->input) == 0)
        return;
    do
        tu_set(l->input.dtype, tu_elem(&l->input, idx), tu_rng_below(&r, 20000) == 0 ? 0.0 : -0.0);
    while (tu_next_index(&l->input, idx));
    gu_layout_commit_input(l);
}

Test(gpu_examples, sign_of_zero_follows_the_reference) {
    GU_REQUIRE_DEVICE();
    static const gu_shape zero_shapes[] = {
        {1, {70000}, 0}, {2, {20000, 40}, 0}, {2, {40, 20000}, 1}, {2, {3000, 300}, 1}, {3, {3, 9000, 5}, 1}};
    static const tscan_dtype floats[] = {TSCAN_FLOAT32, TSCAN_FLOAT16, TSCAN_BFLOAT16, TSCAN_FLOAT64};
    gu_arena a = {0};
    gu_tally t;
    memset(&t, 0, sizeof t);
    for (size_t s = 0; s < sizeof zero_shapes / sizeof zero_shapes[0]; ++s)
        for (size_t f = 0; f < sizeof floats / sizeof floats[0]; ++f)
            for (unsigned combo = 0; combo < 8; combo += 2) { /* sums: both directions, both kinds */
                tu_case c = gu_case(floats[f], &zero_shapes[s], combo,
                                    (tu_layout_kind)((s + f + combo / 2) % TU_LAYOUT_COUNT), TU_DATA_SMALL_INT,
                                    tu_seed("sign of zero", s * 100 + f * 10 + combo));
                gu_run_all_algos(&a, &c, set_negative_zeros, (cudaStream_t)0, &t);
            }
    gu_arena_free(&a);
    gu_tally_assert(&t, "sign of zero");
}

/* ---- the workspace ------------------------------------------------------------------------------------- */

/* A scan refused for its workspace writes nothing, on the device either. (gu_run checks the
 * refusal itself on every case; this checks the buffers right after it.) */
Test(gpu_workspace, refused_scan_writes_nothing) {
    GU_REQUIRE_DEVICE();
    static const gu_shape ws_shapes[] = {{1, {1 << 20}, 0}, {2, {100000, 3}, 0}, {2, {5000, 300}, 0},
                                      {2, {64, 100000}, 1}};
    int checked = 0;
    for (size_t s = 0; s < sizeof ws_shapes / sizeof ws_shapes[0]; ++s) {
        tu_case c = gu_case(TSCAN_FLOAT32, &ws_shapes[s], 0, TU_LAYOUT_PACKED, TU_DATA_SMALL_INT, s);
        tu_layout l;
        tu_layout_make(&l, &c);
        for (int algo = 0; algo < TSCAN_ALGO_COUNT; ++algo) {
            gu_buffers b;
            tscan_scan_desc d = c.desc;
            d.algo = (tscan_algo)algo;
            tscan_status q = gu_buffers_make(&b, &l, &d);
            if (q == TSCAN_ERROR_NOT_SUPPORTED && algo != TSCAN_ALGO_AUTO)
                continue;
            cr_assert_eq(q, TSCAN_SUCCESS, "%s: workspace query %s (%s)",
                         tscan_algo_name((tscan_algo)algo), tscan_status_string(q), tscan_last_error());
            if (b.ws_bytes > 0) {
                tscan_status st = tscan_scan(&d, &b.input, &b.output, b.ws, b.ws_bytes - 1, (cudaStream_t)0);
                cr_assert_eq(st, TSCAN_ERROR_WORKSPACE, "%s with %zu of %zu bytes: %s",
                             tscan_algo_name((tscan_algo)algo), b.ws_bytes - 1, b.ws_bytes,
                             tscan_status_string(st));
                unsigned char *got = gu_buffers_download(&b, &l, (cudaStream_t)0);
                cr_assert(memcmp(got, l.out_init, l.out_bytes) == 0,
                          "%s wrote its output after refusing a %zu-byte workspace",
                          tscan_algo_name((tscan_algo)algo), b.ws_bytes - 1);
                free(got);
                ++checked;
            }
            gu_buffers_free(&b);
        }
        tu_layout_free(&l);
    }
    if (!checked)
        cr_skip_test("no strategy asked for a workspace on these shapes");
}
