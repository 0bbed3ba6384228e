/* dispatch.c - the GPU entry points: validate, reduce to the canonical problem, pick a
 * strategy (AUTO or the caller's), check the workspace, launch. */
#include <stdlib.h>

#include "tscan_internal.h"

static const tscan_strategy *strategy_of(tscan_algo algo) {
    switch (algo) {
    case TSCAN_ALGO_CUB_DEVICE: return &tscan_strategy_cub_device;
    case TSCAN_ALGO_ROWS: return &tscan_strategy_rows;
    case TSCAN_ALGO_COLUMNS: return &tscan_strategy_columns;
    case TSCAN_ALGO_LOOKBACK: return &tscan_strategy_lookback;
    case TSCAN_ALGO_STREAM: return &tscan_strategy_stream;
    default: return NULL;
    }
}

/* A line of `units` split into look-back tiles of tile_units fills them on average to
 * lookback_min_fill_pct at least. */
static int lookback_tiles_filled(const tscan_auto_policy *t, int64_t units, int64_t tile_units) {
    const int64_t line_tiles = (units + tile_units - 1) / tile_units;
    return 100 * units >= t->lookback_min_fill_pct * line_tiles * tile_units;
}

/* Shape-and-stride rules, their thresholds from the device's row of the policy table
 * (src/policy.c); the figures behind every rule are in bench/NOTES.md §3.1, which a change of
 * rule must beat. What they know of lookback and columns comes from their outlines
 * (tscan_strategy::outline, found once a choice by choose_algo): 1- and 2-byte elements count
 * in the 32-bit words that lookback moves them in where their layout packs; where it does not,
 * lookback loads them one at a time. */
static tscan_algo same_width_algo(const tscan_problem *p, const tscan_planning *plan,
                                  const tscan_strategy_outline *lookback, const tscan_strategy_outline *columns,
                                  const tscan_strategy_outline *stream) {
    const tscan_auto_policy *const t = plan->policy;
    const int sms = plan->sm_count;
    const int small = p->elem_size <= 2;
    tscan_strategy_outline rows = {0};
    tscan_strategy_rows.outline(p, &rows);
    const int words = small && lookback->packs_small_elements;
    /* Axis length in lookback's units: 4-byte words for packed small types, else elements. */
    const int64_t n_units = words ? p->n * (int64_t)p->elem_size / 4 : p->n;
    /* Short lines of a permuted input (across memory, the input's unit stride on another batch
     * dimension than the output's lines, which lie far apart in the input): columns' staged form
     * loads tiles of them along the input's unit stride into shared memory, where every
     * thread-a-line kernel reads each element from a sector of its own (bench/NOTES.md §3.1,
     * "Permuted input"). */
    if (columns->stages_lines) return TSCAN_ALGO_COLUMNS;
    /* Output rows read down input columns (a transposed input): lookback's column blocks read
     * 32 neighbouring lines coalesced and store whole runs of each output row; rows would
     * gather the input element by element. Needs lines and rows enough to fill a tile, and
     * neighbouring lines nearer in the input than an axis step (a sliced axis is no transpose:
     * its lines are far apart, and the column blocks' loads would not coalesce). */
    const int transposed = llabs(p->out_step) == 1 && llabs(p->in_step) > 1 && p->batch_ndim > 0 &&
                           llabs(p->in_batch_strides[p->batch_ndim - 1]) < llabs(p->in_step);
    /* Short lines of it into 1-2-byte outputs: columns' thread a line, whose warp loads 32
     * neighbouring lines' elements together, where rows gathers each element from a sector of
     * its own; rows lead once a line fills one of their 16-byte vectors. H200, 3d7a970 and
     * 9b6d528 (bench/NOTES.md §3.1, "Transposed input"), columns / rows: int8 33554432x2 23.3 /
     * 2.5, 11184810x6 27.1 / 7.9, 19x2540312x8 19.1 / 7.7, 4194304x16 13.2 / 41.5; float16
     * 33554432x2 43.3 / 8.8, 11184810x6 28.3 / 19.1, 19x2540312x8 19.5 / 48.6, 4194304x16 11.0 /
     * 46.0; into 4-byte outputs rows lead (uint8 into int32 19x2540312x8 12.7 / 60.3). Not
     * measured on an H100. */
    if (transposed && p->out_elem_size <= 2 && p->n * (int64_t)p->out_elem_size < t->transposed_columns_below_bytes)
        return TSCAN_ALGO_COLUMNS;
    if (transposed && p->lines >= t->transposed_min_lines && p->n >= t->transposed_min_n) return TSCAN_ALGO_LOOKBACK;
    /* Output lines along memory: the line kernels' family. (An input read along memory into
     * an output written across it is the strided axis's problem: a line kernel would store
     * every element to its own sector; bench/NOTES.md §3.1.) */
    if (llabs(p->out_step) == 1) {
        /* One to four long lines. CUB's tuned sum (forward, unit strides, 4- and 8-byte types)
         * leads up to 2^20 elements of 4-byte types and 2^21 of 8-byte ones; lookback's line
         * chunks lead beyond, and always lead CUB's generic policy (products, decreasing,
         * strided) and its converting iterator for packed half types. Small elements that
         * lookback cannot pack take stream's flat vectors once the line is long enough to be
         * bandwidth-bound (from 2^24 elements; shorter ones were not measured), as many lines do
         * below, but where lookback's bulk kernel runs them (1-byte sums past its floor): its
         * aligned vectors do not care how the lines lie (H200, uint8 3x100000007: stream 62.7,
         * bulk 85.1; bench/NOTES.md §3.1, "Unpacked small lines"). Lines that pack in 16-byte
         * vectors into 2 tiles of 16 KB or more, all resident at once, take lookback's one-wave
         * path, a single round trip of look-back. */
        const int64_t wave_tiles = p->lines <= t->few_lines ? lookback->one_wave_tiles : 0;
        const int one_wave = wave_tiles >= 2 * p->lines && wave_tiles <= t->one_wave_tiles_per_sm * (int64_t)sms;
        if (one_wave || (p->lines <= t->few_lines && p->n >= t->long_line_min)) {
            const int64_t cub_below = p->elem_size == 8 ? t->cub_sum_below_8byte : t->cub_sum_below_4byte;
            const int cub_tuned = p->elem_size >= 4 && p->n < cub_below && p->op == TSCAN_OP_SUM && !p->reverse &&
                                  p->in_step == 1 && p->out_step == 1;
            const int unpacked = small && !words;
            if ((cub_tuned && !one_wave) || (unpacked && p->n < t->unpacked_cub_below)) return TSCAN_ALGO_CUB_DEVICE;
            return unpacked && stream->reads_flat && !lookback->runs_bulk ? TSCAN_ALGO_STREAM : TSCAN_ALGO_LOOKBACK;
        }
        /* Many short lines. rows gives each line a power-of-two group of threads, each holding
         * rows.thread_items consecutive elements: a line of another length idles part of its
         * group, which the smallest lines and elements feel most. Lines of a few elements take
         * columns' thread a line (from 4 bytes: below, a thread's byte loads cost more than the
         * stream); lines of 1-2-byte elements that fill no power of two of threads take stream,
         * whose rate does not depend on the line (bench/NOTES.md §3.1). Where rows' threads move
         * the whole vectors of a line's ends whole (rows.whole_vector_ends: 1-byte elements), any
         * line of whole vectors fills them: int8 lines of 16-112 bytes 69-96 % of the copy on
         * rows against 44-47 on stream (bench/NOTES.md §3.6). */
        const int64_t line_bytes = p->n * (int64_t)p->elem_size, threads = p->n / rows.thread_items;
        /* A line fills rows' groups of threads: whole 16-byte vectors of 1-byte elements (rows'
         * threads at a line's end move them whole), whole power-of-two groups of others. */
        const int fills_threads = rows.whole_vector_ends ? line_bytes % 16 == 0
                                                         : p->n % rows.thread_items == 0 && (threads & (threads - 1)) == 0;
        /* Packed lines of up to 8 KB: stream's segment form reads them as one flat run of 16 KB
         * tiles, each reading the head of its first line itself, so that no tile waits on
         * another and nothing depends on the line's length or alignment. It leads rows, which
         * idle part of each line's threads off their groups, and columns' thread a line, but
         * where 1- and 2-byte lines fill rows' groups (2-byte ones into 2-byte outputs): rows'
         * vectors reach the copy there, and stream's small elements are issue-bound (bytes 70 %
         * on the H100) or fall short on the H200 (float16 and bfloat16 lines of 64 and 256:
         * rows 84.8-86.5, stream 73.9-76.8; on the H100 96.1-96.4 against 98.6-99.6). And 1-byte
         * lines into 1-byte outputs past stream_byte_halo_max_bytes, where rows run 83-87 and
         * stream 70 (bench/NOTES.md §3.1, "Packed lines of up to 8 KB of input"). Not for a few lines, which are a launch's
         * fixed cost whatever the path: a float32 line of 1024 took rows 4.5 us and stream 5.7
         * on the H200. */
        const int rows_take_small = (small && fills_threads && (p->elem_size == 1 || p->out_elem_size == 2)) ||
                                    (rows.whole_vector_ends && p->out_elem_size == 1 && line_bytes > t->stream_byte_halo_max_bytes);
        if (stream->reads_halos && !rows_take_small && p->lines > t->few_lines) return TSCAN_ALGO_STREAM;
        if (p->n <= t->columns_short_line_n && line_bytes <= t->columns_short_line_bytes &&
            line_bytes >= t->columns_short_line_min_bytes)
            return TSCAN_ALGO_COLUMNS;
        /* Lines end to end whose starts move on the 16-byte grid from line to line cost rows
         * partial vectors at both ends (2-byte and wider ones element by element); stream reads
         * them as one flat run (an input with gaps between its lines it gathers, and there rows
         * lead). */
        const int64_t last = p->batch_ndim > 0 ? p->batch_ndim - 1 : 0;
        const int off_grid = p->batch_ndim > 0 && p->in_step == 1 && p->in_batch_strides[last] == p->n &&
                             line_bytes % 16 != 0;
        const int64_t stream_below = off_grid ? t->stream_unaligned_line_bytes : t->stream_short_line_bytes;
        if (small && stream->takes_layout && line_bytes < stream_below && !fills_threads) return TSCAN_ALGO_STREAM;
        /* A warp or block per line for lines up to a look-back tile (8192 words), up to two
         * tiles when there are many lines, and for small elements that lookback would
         * load one at a time. Longer lines are split into pipelined look-back tiles, and so are
         * many lines of 2- to 8-byte elements whose tiles are on average at least
         * lookback_min_fill_pct full: a tile costs its block a fixed chain of latencies
         * whatever it holds, while rows (a block a line) fall past lines of 32 KB (91 % of the
         * copy at 32 KB, 74 at 64 on the H100; 91 and 60 on an H200), so that lines of two
         * tiles 3/4 full and of three 2/3 full ran faster on lookback on both GPUs, two 5/8 full
         * on rows (bench/NOTES.md §3.1, "Many contiguous lines"). Lookback's 1-byte tiles
         * (words of bytes) take longer: 1-byte lines keep the rule below. */
        const int many_lines = p->lines >= t->many_lines;
        /* Rows run a line on a block at most: fewer long lines than SMs leave most of the device
         * idle. Stream splits them across its flat tiles, reading the lines end to end as
         * 16-byte vectors whatever their alignment, where lookback would load each element
         * alone (unpacked lines, bench/NOTES.md §3.1, "Unpacked small lines"), and lookback's
         * bulk kernel leads both where it runs them, as above. */
        if (small && !words) {
            if (p->lines >= sms || n_units <= t->rows_max_units) return TSCAN_ALGO_ROWS;
            return stream->reads_flat && !lookback->runs_bulk ? TSCAN_ALGO_STREAM : TSCAN_ALGO_LOOKBACK;
        }
        const int tiles_filled = lookback_tiles_filled(t, n_units, lookback->tile_bytes / (words ? 4 : p->elem_size));
        if (many_lines && p->elem_size >= 2 && llabs(p->in_step) == 1 && llabs(p->out_step) == 1 && tiles_filled)
            return TSCAN_ALGO_LOOKBACK;
        if (n_units <= t->rows_max_units || (many_lines && n_units < t->rows_max_units_many_lines))
            return TSCAN_ALGO_ROWS;
        return TSCAN_ALGO_LOOKBACK;
    }
    /* Strided axis: the axis is split into look-back tiles, whose chains lookback claims in
     * bands. A thread per column where the axis is too short to split, and from many columns
     * for 4- and 8-byte elements unless the axis is long with rows aligned apart (rows that are
     * not cost the column blocks more than columns lose). Packed small elements go to
     * lookback's words up to a bound on the columns, single ones to columns. */
    const int rows_aligned = llabs(p->in_step) * (int64_t)p->elem_size % t->row_alignment_bytes == 0 &&
                             llabs(p->out_step) * (int64_t)p->elem_size % t->row_alignment_bytes == 0;
    /* 4-byte lines that lookback's column blocks move in pairs (on the 8-byte grid or off it), in
     * runs of at least a block's 64 lines, over an axis that fills three quarters of a block's
     * tile (32 lanes of pairs: 128 rows), lead columns where it moves them one a thread (no
     * 16-byte vectors of them): H100 / H200, 32x128x12295 float32 axis 1 78.1 / 67.6 against
     * 67.3 / 64.0, 600x2x322x158 75.3 / 65.6 against 58.7 / 54.3; an axis of 64 (half a tile)
     * lost on the H200, 52.4 against 62.4 (bench/NOTES.md §2, "pairs off the grid"). */
    const int64_t last = p->batch_ndim > 0 ? p->batch_ndim - 1 : 0;
    const int64_t run = p->batch_ndim > 0 && p->in_batch_strides[last] == 1 && p->out_batch_strides[last] == 1
                            ? p->batch_sizes[last]
                            : 0;
    const int64_t pair_tile_rows = lookback->tile_bytes / (32 * 2 * (int64_t)p->elem_size);
    const int pairs_lead = p->elem_size == 4 && lookback->packs_lines && !columns->vector_lines &&
                           run >= t->pairs_lookback_min_run && 4 * p->n >= 3 * pair_tile_rows;
    const int lookback_many = words ? p->lines < t->packed_lookback_below_lines
                                    : !small && ((p->n >= t->wide_lookback_min_n && rows_aligned) || pairs_lead);
    /* A packed block of inner extent 2 to 64 (the axis step), taken by stream's lanes form,
     * which moves 32 or 64 KB tiles of whole rows as 16-byte vectors and scans them in shared
     * memory, a group of threads down each lane's run of rows: 256 / I groups, so the fewer
     * lanes the shorter each run. Up to 32 lanes it leads columns on any axis, whose loads and
     * stores take partial sectors of rows that are no whole number of sectors (the lanes
     * sweep, H100: 1065220x3x21 float32 91.5 against 70.9, 958698x10x7 float64 85.8 against
     * 66.3, 319566x10x21 int8 53.3 against 40.9; lost: 5592405x3x4 float64, rows of a sector,
     * 90.6 against 96.4). From 64 lanes columns leads on short axes; a long axis over a block
     * of 4- and 8-byte elements goes to the lanes form too, unless its rows lie on the 128-byte
     * grid, where lookback's column blocks lead (1048576x64 float64 89.4 against 82.8; rows of
     * 33 float32 lanes, 8192x1024x33, 58 against 75) (bench/NOTES.md §3.1). */
    if (p->n > 1 && stream->takes_layout && !stream->reads_along_lines &&
        (llabs(p->in_step) <= t->lanes_max_inner || (!small && p->n >= t->lanes_min_n && !rows_aligned)))
        return TSCAN_ALGO_STREAM;
    if (p->n <= t->columns_max_n) return TSCAN_ALGO_COLUMNS;
    if (p->lines >= t->columns_from_lines && !lookback_many) return TSCAN_ALGO_COLUMNS;
    /* The same block from an input that runs along its lines (a transposed block), over too few
     * lines for columns: the lanes form reads each lane's run of a tile as 16-byte vectors and
     * stores whole rows, where lookback's line chunks store each element to a sector shared
     * with other lines. From 4 lanes: under that, the lanes form's join of 128 or more groups
     * costs more than lookback's stores, which then share a sector with one other line or none
     * (bench/NOTES.md §2, "along their lines"). Broadcast lanes (every lane the same line) the
     * lanes form loads and scans once a lane, so lookback leads them where its column blocks
     * hold the lines with lookback_min_fill_pct of their 32 lanes or more; over its line chunks
     * (fewer than 16 lines) and half-empty column blocks the lanes form leads (H200, float32
     * lines broadcast to 8 lanes, 8388609x8: stream 45.6, lookback 21.0; to 16, 4194305x16:
     * 59.9 and 54.1; to 32: 58.9 and 101.4; 24 lines of 8 lanes, 3x2796203x8: 45.5 and 72.1;
     * bench/NOTES.md §3.1, "Broadcast lanes"). */
    const int broadcast_lanes = p->batch_ndim > 0 && p->in_batch_strides[p->batch_ndim - 1] == 0;
    if (stream->reads_along_lines && llabs(p->out_step) >= t->lanes_along_lines_min &&
        (!broadcast_lanes || !lookback->column_blocks || !lookback_tiles_filled(t, p->lines, 32)))
        return TSCAN_ALGO_STREAM;
    return TSCAN_ALGO_LOOKBACK;
}

/* The strategy that AUTO's rules pick for p with the device's planning, never TSCAN_ALGO_AUTO;
 * *columns receives columns' outline of p.
 * A wider output: lookback converts the narrower input as it loads it, a word of it a slot
 * where the lines pack (line chunks on the grid of 16-byte output slots, column blocks in pairs
 * of lines), else an element at a time (column blocks of single lines then 2 to an SM:
 * bench/NOTES.md §3.1, "Wider outputs"). Along memory, many lines whose packed tiles (32 KB of
 * output) are on average lookback_min_fill_pct full go to lookback, as in the one-width rule:
 * rows fall past lines of 32 KB of output (H100, lines of 7168 and 8192: float16 into float32
 * rows 78-84, lookback 93; float32 into float64 rows 59-67, lookback 92; 62.5 % full tiles kept
 * rows, bench/NOTES.md §3.1, "Wider outputs"). Other lines: lookback past rows_max_units
 * elements, whatever their number. It leads CUB's converting iterator on one to four long
 * lines, strided too; shorter strided ones go to CUB, not to a thread each. Across memory,
 * columns leads its column blocks from columns_from_lines lines, 4- and 8-byte inputs
 * included. */
static tscan_algo choose_algo(const tscan_problem *p, const tscan_planning *plan, tscan_strategy_outline *columns) {
    const tscan_auto_policy *const t = plan->policy;
    /* Lookback's, stream's and columns' outlines, once: both rules read them, and auto_problem columns'. */
    tscan_strategy_outline lookback = {0}, stream = {0};
    tscan_strategy_lookback.outline(p, &lookback);
    tscan_strategy_stream.outline(p, &stream);
    *columns = (tscan_strategy_outline){0};
    tscan_strategy_columns.outline(p, columns);
    const tscan_algo same_width = same_width_algo(p, plan, &lookback, columns, &stream);
    if (p->elem_size == p->out_elem_size) return same_width;
    const int along_memory = llabs(p->out_step) == 1 && llabs(p->in_step) <= 1;
    if (p->lines <= t->few_lines)
        return p->n >= t->long_line_min ? TSCAN_ALGO_LOOKBACK : along_memory ? same_width : TSCAN_ALGO_CUB_DEVICE;
    if (!along_memory)
        return same_width == TSCAN_ALGO_LOOKBACK && llabs(p->out_step) != 1 && p->lines >= t->columns_from_lines
                   ? TSCAN_ALGO_COLUMNS
                   : same_width;
    /* Short lines: columns' thread a line as in the one-width rule; stream into 1-2-byte
     * outputs, whose rows stores are the small ones that rule weighed, and into any where its
     * tiles read their halos (packed lines of up to 8 KB of input: H100, uint8 into int32 and
     * float16 into float32 85-96 % of the copy on lines of 3 to 4000, rows 38-87 off the 16-byte
     * grid; bench/NOTES.md §3.1, "Packed lines of up to 8 KB of input"). Into 4- and 8-byte outputs rows lead the stream's
     * gathered or looked-back runs (lines of 255 before halos: uint8 into int32 51 against 28). */
    if (same_width == TSCAN_ALGO_COLUMNS ||
        (same_width == TSCAN_ALGO_STREAM && (p->out_elem_size <= 2 || stream.reads_halos)))
        return same_width;
    if (lookback.packs_axis && p->lines >= t->many_lines && llabs(p->in_step) == 1 &&
        lookback_tiles_filled(t, p->n, lookback.tile_bytes / (int64_t)p->out_elem_size))
        return TSCAN_ALGO_LOOKBACK;
    return p->n > t->rows_max_units ? TSCAN_ALGO_LOOKBACK : TSCAN_ALGO_ROWS;
}

/* The caller's choice; a NULL desc is refused by validation before it matters. */
static tscan_algo requested_algo(const tscan_scan_desc *desc) { return desc ? desc->algo : TSCAN_ALGO_AUTO; }

/* AUTO's plan of a valid, non-empty request: the problem its strategy scans (*p), what follows
 * the scan (*replication; copies 0: nothing) or precedes it (*gather; elem_size 0: nothing), and
 * the strategy its rules pick.
 * Broadcast lines (the input repeating along dimensions other than the axis): the scan of the
 * distinct ones and copies of them (src/replication.c), where every strategy would otherwise
 * read and scan each repeat, mostly from a layout it moves poorly (H100, fresh draws: 6482x10497
 * int8 broadcast along 10497 lines 31 % of the copy, 3x35950x200x8x6 int8 along 3 outer copies
 * 26.5; bench/NOTES.md §2, "Broadcast inputs"). A permuted input that columns' thread a line,
 * the rules' choice, would read a sector an element: the input gathered into the output in the
 * output's order (src/gather.c), then the output scanned in place. */
static tscan_algo auto_problem(const tscan_scan_desc *desc, const tscan_tensor *input, const tscan_tensor *output,
                               const tscan_planning *planning, tscan_problem *p, tscan_replication *replication,
                               tscan_gather *gather) {
    tscan_strategy_outline columns;
    gather->elem_size = 0;
    tscan_problem_init(p, desc, input, output);
    if (tscan_plan_replication(p, planning->policy, replication)) {
        tscan_tensor distinct_input, distinct_output;
        tscan_distinct_view(input, output, desc->axis, &distinct_input, &distinct_output);
        tscan_problem_init(p, desc, &distinct_input, &distinct_output);
        return choose_algo(p, planning, &columns);
    }
    const tscan_algo chosen = choose_algo(p, planning, &columns);
    if (chosen != TSCAN_ALGO_COLUMNS) return chosen;
    if (columns.stages_lines || columns.vector_lines || !tscan_plan_gather(p, planning->policy, gather)) return chosen;
    tscan_problem_init(p, desc, output, output);
    return choose_algo(p, planning, &columns);
}

void tscan_auto_scanned_views(const tscan_scan_desc *desc, const tscan_tensor *input, const tscan_tensor *output,
                              tscan_tensor *scanned_input, tscan_tensor *scanned_output) {
    const tscan_planning planning = tscan_planning_for_current_device();
    tscan_problem p;
    tscan_replication replication;
    tscan_gather gather;
    *scanned_input = *input;
    *scanned_output = *output;
    auto_problem(desc, input, output, &planning, &p, &replication, &gather);
    if (replication.copies) tscan_distinct_view(input, output, desc->axis, scanned_input, scanned_output);
    else if (gather.elem_size) *scanned_input = *output;
}

/* A request as planned: the problem as its strategy sees it, the strategy (NULL for an empty
 * tensor) and its launch, and what AUTO adds around it (auto_problem). */
typedef struct {
    tscan_problem problem;
    const tscan_strategy *strategy;
    tscan_launch_plan launch;
    tscan_replication replication;
    tscan_gather gather;
} call_plan;

/* Validates, and for a non-empty request builds the problem and plans it, once, with the
 * strategy that will run it under `algo` (the caller's, or AUTO for the query). AUTO never ends
 * in NOT_SUPPORTED: if its first choice declines, the columns kernel, which takes every layout,
 * runs instead. Forced strategies scan the request as given. */
static tscan_status plan(const tscan_scan_desc *desc, tscan_algo algo, const tscan_tensor *input,
                         const tscan_tensor *output, call_plan *c) {
    tscan_status s = tscan_validate(desc, input, output);
    c->strategy = NULL;
    c->replication.copies = 0;
    c->gather.elem_size = 0;
    if (s != TSCAN_SUCCESS || tscan_numel(input) == 0) return s;
    if (algo != TSCAN_ALGO_AUTO) {
        tscan_problem_init(&c->problem, desc, input, output);
        c->strategy = strategy_of(algo);
        return c->strategy->plan(&c->problem, &c->launch);
    }
    const tscan_planning planning = tscan_planning_for_current_device();
    c->strategy = strategy_of(auto_problem(desc, input, output, &planning, &c->problem, &c->replication, &c->gather));
    if (c->strategy->plan(&c->problem, &c->launch) == TSCAN_SUCCESS) return TSCAN_SUCCESS;
    c->strategy = &tscan_strategy_columns;
    s = c->strategy->plan(&c->problem, &c->launch);
    return s == TSCAN_ERROR_NOT_SUPPORTED ? tscan_fail(TSCAN_ERROR_INTERNAL, "AUTO found no strategy for this layout")
                                          : s;
}

tscan_status tscan_scan_supported(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output) {
    call_plan c;
    return plan(desc, requested_algo(desc), input, output, &c);
}

tscan_status tscan_scan_auto_algo(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output, tscan_algo *algo) {
    call_plan c;
    tscan_status s;
    if (!algo) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "algo is NULL");
    if ((s = plan(desc, TSCAN_ALGO_AUTO, input, output, &c))) return s;
    /* An empty tensor runs nothing; report what a non-empty one of this layout would get.
     * Broadcast lines that AUTO copies report the strategy of their distinct ones' scan, a
     * gathered input that of the scan in place. */
    *algo = c.strategy ? c.strategy->algo : TSCAN_ALGO_ROWS;
    return TSCAN_SUCCESS;
}

tscan_status tscan_scan_workspace_size(const tscan_scan_desc *desc, const tscan_tensor *input,
                                       const tscan_tensor *output, size_t *bytes) {
    call_plan c;
    tscan_status s;
    if (!bytes) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "bytes is NULL");
    if ((s = plan(desc, requested_algo(desc), input, output, &c))) return s;
    *bytes = c.strategy ? c.launch.workspace_bytes : 0;
    return TSCAN_SUCCESS;
}

/* The kernels dereference these addresses: refuse memory that the stream's device cannot
 * reach rather than fault the context. While the stream is capturing, memory the driver cannot
 * classify is taken on trust: stream-ordered allocations made inside the capture exist only
 * when the graph runs. */
static tscan_status check_device_accessible(const void *data, const char *name, const tscan_device_info *dev,
                                            int capturing) {
    struct cudaPointerAttributes attributes;
    cudaError_t e = cudaPointerGetAttributes(&attributes, data);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (capturing) return TSCAN_SUCCESS;
        return tscan_fail(TSCAN_ERROR_CUDA, "cudaPointerGetAttributes(%s.data): %s (%s)", name,
                          cudaGetErrorString(e), cudaGetErrorName(e));
    }
    switch (attributes.type) {
    case cudaMemoryTypeDevice:
        if (attributes.device != dev->ordinal) {
            int peer = 0;
            if (cudaDeviceCanAccessPeer(&peer, dev->ordinal, attributes.device) != cudaSuccess) {
                (void)cudaGetLastError();
                peer = 0;
            }
            if (!peer)
                return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                                  "%s.data %p is memory of device %d, which device %d (the stream's) cannot access",
                                  name, data, attributes.device, dev->ordinal);
        }
        return TSCAN_SUCCESS;
    case cudaMemoryTypeUnregistered:
        if (capturing || dev->pageable_memory_access) return TSCAN_SUCCESS;
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "%s.data %p is host memory that device %d cannot access",
                          name, data, dev->ordinal);
    default: /* pinned host and managed memory: every device of the process reaches them */
        return TSCAN_SUCCESS;
    }
}

/* The stream's device, which must be the current one (kernels launch there), its cached
 * info, and whether the stream is capturing. A capturing stream cannot be asked its device
 * (CUDA refuses the query): its launches are recorded for the current device. */
static tscan_status stream_device(cudaStream_t stream, const tscan_device_info **dev, int *capturing) {
    int device = 0, current = 0;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t e;
    tscan_status s;
    if ((e = cudaGetDevice(&current)) != cudaSuccess || (e = cudaStreamIsCapturing(stream, &capture)) != cudaSuccess ||
        (capture == cudaStreamCaptureStatusNone && (e = cudaStreamGetDevice(stream, &device)) != cudaSuccess)) {
        (void)cudaGetLastError();
        return tscan_fail(TSCAN_ERROR_CUDA, "stream %p: %s (%s)", (void *)stream, cudaGetErrorString(e),
                          cudaGetErrorName(e));
    }
    if (capture != cudaStreamCaptureStatusNone) device = current;
    if (device != current)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "stream %p belongs to device %d, but the current device is %d",
                          (void *)stream, device, current);
    if ((s = tscan_device_info_of(device, dev))) return s;
    *capturing = capture != cudaStreamCaptureStatusNone;
    return TSCAN_SUCCESS;
}

tscan_status tscan_scan(const tscan_scan_desc *desc, const tscan_tensor *input, const tscan_tensor *output,
                        void *workspace, size_t workspace_bytes, cudaStream_t stream) {
    call_plan c;
    const tscan_device_info *dev;
    int capturing = 0;
    tscan_status s;
    cudaError_t pending;
    if ((s = plan(desc, requested_algo(desc), input, output, &c)) || !c.strategy) return s;
    const size_t needed = c.launch.workspace_bytes;
    if (needed > 0 && (!workspace || workspace_bytes < needed))
        return tscan_fail(TSCAN_ERROR_WORKSPACE, "workspace %p of %zu bytes is smaller than the %zu bytes required",
                          workspace, workspace_bytes, needed);
    /* The launch checks (and CUB's) read the thread's last error: one the caller left pending
     * would pass for ours. It stays the caller's to read, and nothing is launched. */
    if ((pending = cudaPeekAtLastError()) != cudaSuccess)
        return tscan_fail(TSCAN_ERROR_CUDA, "a CUDA error was pending before tscan_scan, %s (%s): left pending, "
                          "nothing launched", cudaGetErrorString(pending), cudaGetErrorName(pending));
    if ((s = stream_device(stream, &dev, &capturing)) ||
        (s = check_device_accessible(input->data, "input", dev, capturing)) ||
        (s = check_device_accessible(output->data, "output", dev, capturing)))
        return s;
    if (c.gather.elem_size && (s = tscan_gather_input(&c.gather, stream))) return s;
    if ((s = c.strategy->launch(&c.launch, workspace, stream))) return s;
    return c.replication.copies ? tscan_replicate(&c.replication, stream) : TSCAN_SUCCESS;
}
