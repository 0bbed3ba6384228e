// Kernels' own source compiled for the host and run on CPU threads (simt.h), against
// tscan_scan_reference: lookback's tile kernel (cuda/lookback/tile_kernel.cuh: line chunks and
// column blocks, packed or not, off the grid, widened, transposed stores), bulk line-chunk
// kernel (cuda/lookback/bulk_kernel.cuh: its mbarriers, named barriers and bulk copies as
// simt.h's) and one-wave kernel (cuda/lookback/one_wave.cuh), the stream
// kernels (cuda/stream/), columns' realigned and widening kernels (cuda/columns/kernel.cuh) and
// its staged form (cuda/columns/staged.cuh), the copies of broadcast lines
// (cuda/replicate/kernel.cuh), the gather of permuted inputs (cuda/gather/kernel.cuh);
// and two word-level helpers of rows and lookback's tile kernel against element-by-element
// arithmetic (1-byte products four to a word, slot transposes). For the stream: every allowed
// dtype pair, both operators, both directions, inclusive and exclusive, line lengths from 1 to
// several tiles, partial last tiles.
// Runs without a GPU, so CI checks the kernel's indexing, segment and look-back logic; the GPU
// suites check it on the device. Data keeps float arithmetic exact (small integers for sums,
// +-1 with a few 2 and 0.5 for products), so every answer must match the reference bit for bit
// whatever the order of association.
#include "simt.h"

#include "columns/kernel.cuh"
#include "columns/staged.cuh"
#include "gather/kernel.cuh"
#include "lookback/bulk_kernel.cuh"
#include "lookback/one_wave.cuh"
#include "lookback/tile_kernel.cuh"
#include "replicate/kernel.cuh"
#include "stream/kernel.cuh"
#include "stream/lanes.cuh"

#include <criterion/criterion.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace tscan;

// Runs the lanes kernel that with_lanes_kernel picks for a plan, as the library launches it.
struct emulated_lanes_launch {
    template <lanes_kernel_t K> static tscan_status with(const lanes_args &a, unsigned long long *words) {
        tscan_emu::launch((unsigned)a.tiles, kStreamThreads, K, a, words);
        return TSCAN_SUCCESS;
    }
};

template <tscan_dtype In, tscan_dtype Out> struct emulated_launch {
    static tscan_status run(const stream_args &a, bool prod, unsigned long long *words) {
        if (prod) tscan_emu::launch((unsigned)a.tiles, kStreamThreads, stream_kernel<In, Out, true>, a, words);
        else tscan_emu::launch((unsigned)a.tiles, kStreamThreads, stream_kernel<In, Out, false>, a, words);
        return TSCAN_SUCCESS;
    }
    static tscan_status run(const lanes_args &a, bool prod, unsigned long long *words) {
        return prod ? with_lanes_kernel<In, Out, true, emulated_lanes_launch>(a, a, words)
                    : with_lanes_kernel<In, Out, false, emulated_lanes_launch>(a, a, words);
    }
};

template <tscan_dtype D> struct emulated_one_wave_launch {
    static constexpr tscan_dtype K = kernel_dtype(D);
    static tscan_status run(const one_wave_plan &wave, bool prod) {
        std::vector<unsigned long long> words((size_t)one_wave_words<typename dtype_traits<K>::A>(wave), 0);
        if (prod) tscan_emu::launch((unsigned)wave.tiles, kWaveThreads, one_wave_kernel<K, true>, wave.a, wave.chunks, words.data());
        else tscan_emu::launch((unsigned)wave.tiles, kWaveThreads, one_wave_kernel<K, false>, wave.a, wave.chunks, words.data());
        return TSCAN_SUCCESS;
    }
};

struct aligned_bytes {
    explicit aligned_bytes(size_t n) : size(n), p(static_cast<unsigned char *>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {}
    ~aligned_bytes() { std::free(p); }
    aligned_bytes(const aligned_bytes &) = delete;
    aligned_bytes &operator=(const aligned_bytes &) = delete;
    size_t size;
    unsigned char *p;
};

// Random elements of dtype d whose float arithmetic stays exact (see the header).
// Products: the running power of two of the whole buffer stays within 2^-20..2^20, so that every
// product of a contiguous run (any scan's partial, in any association) stays within 2^-40..2^40
// and never overflows the accumulator (a long random walk would, and then the order of
// association decides between infinity and a number).
void fill(tscan_dtype d, tscan_op op, unsigned char *p, int64_t count, std::mt19937_64 &rng) {
    const size_t size = tscan_dtype_size(d);
    int exponent = 0;
    for (int64_t i = 0; i < count; ++i) {
        const uint64_t r = rng();
        float f;
        if (op == TSCAN_OP_SUM) {
            f = r % 29 == 0 ? -0.0f : (float)((int)(r % 9) - 4);
        } else {
            const bool up = r % 16 == 0 && exponent < 20, down = r % 16 == 1 && exponent > -20;
            exponent += up - down;
            f = up ? 2.0f : down ? 0.5f : (r >> 8) % 2 ? 1.0f : -1.0f;
        }
        switch (d) {
        case TSCAN_FLOAT32: std::memcpy(p + i * 4, &f, 4); break;
        case TSCAN_FLOAT64: {
            const double x = f;
            std::memcpy(p + i * 8, &x, 8);
            break;
        }
        case TSCAN_FLOAT16: {
            const uint16_t h = tscan_float_to_half(f);
            std::memcpy(p + i * 2, &h, 2);
            break;
        }
        case TSCAN_BFLOAT16: {
            const uint16_t b = tscan_float_to_bfloat16(f);
            std::memcpy(p + i * 2, &b, 2);
            break;
        }
        default: std::memcpy(p + i * size, &r, size); break;  // integers: any bits
        }
    }
}

// The input is a view of `lines` lines of n elements, line b at b * pitch + offset elements
// (pitch n: packed; larger: padded or sliced; 0: broadcast; an offset misaligns it); the
// output is packed, out_offset elements past a 16-byte boundary.
struct emulated_case {
    tscan_dtype in, out;
    tscan_op op;
    int64_t lines, n;
    tscan_direction direction;
    int exclusive;
    int64_t pitch = -1;  // -1: n
    int64_t offset = 0;
    int64_t lanes = 1;   // > 1: a packed (lines, n, lanes) block scanned along n (the lanes form)
    // With lanes: the input runs along its lines, (lines, lanes, n) with lanes `pitch` elements
    // apart (-1: n), and the lanes form reads it lane-major.
    bool lane_major = false;
    int64_t out_offset = 0;
    // > 0 (lanes 1): the lines come in runs of `run` (lines a multiple of it), each run
    // run * pitch + run_gap elements after the one before: a third dimension of the input; and
    // with `runs` > 0 the runs in groups of that many (lines a multiple of run * runs), each
    // group runs * (run * pitch + run_gap) + 3 elements after the one before: a fourth.
    int64_t run = 0, run_gap = 0, runs = 0;
    bool in_place = false;  // the output's view is the input's (one dtype, lanes 1, offsets 0)
};

std::string describe(const emulated_case &c) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "%s %s into %s, %lld x %lld x %lld lanes%s (input pitch %lld, offset %lld, runs of %lld lines %lld apart; "
                  "output offset %lld)%s, %s, %s",
                  tscan_op_name(c.op), tscan_dtype_name(c.in), tscan_dtype_name(c.out), (long long)c.lines,
                  (long long)c.n, (long long)c.lanes, c.lane_major ? " read along lines" : "",
                  (long long)(c.pitch < 0 ? c.n : c.pitch), (long long)c.offset, (long long)c.run,
                  (long long)(c.run * (c.pitch < 0 ? c.n : c.pitch) + c.run_gap), (long long)c.out_offset,
                  c.in_place ? " in place" : "", c.direction == TSCAN_DECREASING ? "decreasing" : "increasing", c.exclusive ? "exclusive" : "inclusive");
    return text;
}

// Scans c with the emulated kernel and with the reference; the first differing element, or -1,
// with the two values' bits.
int64_t first_difference(const emulated_case &c, std::mt19937_64 &rng, uint64_t *got, uint64_t *expected) {
    const int64_t total = c.lines * c.n * c.lanes, pitch = c.pitch < 0 ? c.n : c.pitch;
    const int64_t run_pitch = c.run * pitch + c.run_gap, group_pitch = c.runs * run_pitch + 3;
    const int64_t groups = c.runs > 0 ? c.lines / c.run / c.runs : 1, runs = c.runs > 0 ? c.runs : c.lines / std::max<int64_t>(c.run, 1);
    const int64_t in_count = c.lane_major  ? c.offset + c.lines * c.lanes * pitch
                             : c.lanes > 1 ? c.offset + total
                             : c.run > 0   ? c.offset + (groups - 1) * group_pitch + (runs - 1) * run_pitch + (c.run - 1) * pitch + c.n
                                           : c.offset + (c.lines - 1) * pitch + c.n;
    const size_t in_size = tscan_dtype_size(c.in), out_size = tscan_dtype_size(c.out);
    aligned_bytes in(in_count * in_size), out_buffer((c.out_offset + total) * out_size), want(total * out_size);
    fill(c.in, c.op, in.p, in_count, rng);
    std::memset(out_buffer.p, 0xa5, out_buffer.size);  // poison: every element must be written, none before
    unsigned char *const out = c.in_place ? in.p + c.offset * in_size : out_buffer.p + c.out_offset * out_size;

    const int64_t grouped_sizes[4] = {groups, runs, c.run, c.n}, grouped_strides[4] = {group_pitch, run_pitch, pitch, 1};
    const int64_t *const sizes_of_runs = grouped_sizes + (c.runs > 0 ? 0 : 1), *strides_of_runs = grouped_strides + (c.runs > 0 ? 0 : 1);
    const int64_t plain_sizes[3] = {c.lines, c.n, c.lanes};
    const int64_t plain_strides[3] = {c.lane_major ? c.lanes * pitch : pitch, 1, c.lane_major ? pitch : 0};
    const int64_t *const sizes = c.run > 0 ? sizes_of_runs : plain_sizes, *const in_strides = c.run > 0 ? strides_of_runs : plain_strides;
    const uint32_t ndim = c.runs > 0 ? 4 : c.lanes > 1 || c.run > 0 ? 3 : 2;
    tscan_tensor tin, tout, twant;
    const tscan_scan_desc desc = {c.op, c.run > 0 ? ndim - 1 : 1u, c.direction, c.exclusive, TSCAN_ALGO_STREAM};
    const int64_t *const tin_strides = c.lanes > 1 && !c.lane_major ? nullptr : in_strides;
    cr_assert_eq(tscan_tensor_init(&tin, in.p + c.offset * in_size, c.in, ndim, sizes, tin_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, c.out, ndim, sizes, c.in_place ? tin_strides : nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p, c.out, ndim, sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s: %s", describe(c).c_str(), tscan_last_error());

    // The problem as the strategy builds it.
    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s: %s", describe(c).c_str(), tscan_last_error());
    tscan_problem_init(&p, &desc, &tin, &tout);
    if (c.lanes > 1) {
        lanes_args a;
        stream_args segments;
        cr_assert(!stream_layout(&p, &segments), "%s: the segment form takes a strided axis", describe(c).c_str());
        cr_assert(lanes_layout(&p, &a), "%s: the lanes form declines its layout", describe(c).c_str());
        cr_assert_eq(a.lane_major, c.lane_major, "%s: lane_major %d", describe(c).c_str(), (int)a.lane_major);
        // Words are loaded as words: a GPU faults on a misaligned one, which CPU threads do not.
        cr_assert(!a.packed_size || ((uintptr_t)p.in % 4 == 0 && (uintptr_t)p.out % 4 == 0),
                  "%s: words of lanes off the 4-byte grid", describe(c).c_str());
        std::vector<unsigned long long> words((size_t)(kSectorWords + a.tiles * a.status_words), 0);
        cr_assert_eq(dispatch_pair<emulated_launch>(c.in, c.out, a, c.op == TSCAN_OP_PROD, words.data()), TSCAN_SUCCESS);
    } else {
        stream_args a;
        cr_assert(stream_layout(&p, &a), "%s: stream declines its layout", describe(c).c_str());
        const int64_t head = c.out_offset * (int64_t)out_size % 16 / (int64_t)out_size;  // the output's misalignment
        const bool off_grid = ((c.offset - head) * (int64_t)in_size % 16 + 16) % 16 != 0;
        cr_assert_eq(a.gather, off_grid || (c.lines > 1 && pitch != c.n) || (c.lines > c.run && c.run_gap != 0) || c.runs > 0,
                     "%s: gather %d", describe(c).c_str(),
                     (int)a.gather);
        std::vector<unsigned long long> words((size_t)(kSectorWords * (1 + a.tiles)), 0);
        cr_assert_eq(dispatch_pair<emulated_launch>(c.in, c.out, a, c.op == TSCAN_OP_PROD, words.data()), TSCAN_SUCCESS);
    }
    for (int64_t i = 0; i < c.out_offset * (int64_t)out_size; ++i)
        cr_assert_eq(out_buffer.p[i], 0xa5, "%s: byte %lld before the output was written", describe(c).c_str(),
                     (long long)(i - c.out_offset * (int64_t)out_size));
    for (int64_t i = 0; i < total; ++i)
        if (std::memcmp(out + i * out_size, want.p + i * out_size, out_size) != 0) {
            *got = *expected = 0;
            std::memcpy(got, out + i * out_size, out_size);
            std::memcpy(expected, want.p + i * out_size, out_size);
            return i;
        }
    return -1;
}

void check(const emulated_case &c, std::mt19937_64 &rng) {
    uint64_t got = 0, expected = 0;
    const int64_t at = first_difference(c, rng, &got, &expected);
    cr_assert_eq(at, -1, "%s: element %lld (block %lld, index %lld, lane %lld) is 0x%llx, the reference 0x%llx",
                 describe(c).c_str(), (long long)at, (long long)(at / (c.n * c.lanes)), (long long)(at / c.lanes % c.n),
                 (long long)(at % c.lanes), (unsigned long long)got, (unsigned long long)expected);
}

// The line lengths that matter to the stream's segments: a line a vector or less, lines that
// straddle vectors, lanes, warps and tiles, and lines longer than a tile.
int64_t line_length(int pick, size_t in_elem_size) {
    const int64_t tile = stream_tile_elements(in_elem_size);
    // (The longest line whose tiles read their halos, and the next.)
    const int64_t halo = stream_halo_max_n(in_elem_size);
    const int64_t lengths[] = {1, 2, 3, 5, 16, 17, 31, 100, 1000, halo, halo + 1, tile - 1, tile, tile + 1, 2 * tile + 7};
    return lengths[pick % (int)(sizeof lengths / sizeof lengths[0])];
}

// Every variant (operator, direction, exclusive) of one pair, each on a problem of two to
// three tiles, the last one partial, with a line length drawn from line_length.
void every_variant(tscan_dtype in, tscan_dtype out, int salt, std::mt19937_64 &rng) {
    const int64_t tile = stream_tile_elements(tscan_dtype_size(in));
    for (int v = 0; v < 8; ++v) {
        emulated_case c;
        c.in = in;
        c.out = out;
        c.op = v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
        c.direction = v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING;
        c.exclusive = (v & 4) != 0;
        c.n = line_length(salt * 8 + v, tscan_dtype_size(in));
        c.lines = std::max<int64_t>(1, (tile * 2 + tile / 3) / c.n);
        check(c, rng);
    }
}

}  // namespace

Test(emulated_stream, every_dtype_into_itself) {
    std::mt19937_64 rng(1);
    for (int d = 0; d < TSCAN_DTYPE_COUNT; ++d) every_variant((tscan_dtype)d, (tscan_dtype)d, d, rng);
}

Test(emulated_stream, every_wider_pair) {
    std::mt19937_64 rng(2);
    int pairs = 0;
    for (int in = 0; in < TSCAN_DTYPE_COUNT; ++in)
        for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out)
            if (in != out && tscan_output_dtype_allowed((tscan_dtype)in, (tscan_dtype)out))
                every_variant((tscan_dtype)in, (tscan_dtype)out, 3 + pairs++, rng);
    cr_assert_gt(pairs, 30, "only %d wider pairs", pairs);
}

Test(emulated_stream, every_line_length_one_and_several_tiles) {
    std::mt19937_64 rng(3);
    const tscan_dtype types[] = {TSCAN_UINT8, TSCAN_FLOAT32};
    for (tscan_dtype d : types) {
        const int64_t tile = stream_tile_elements(tscan_dtype_size(d));
        for (int pick = 0; pick < 15; ++pick) {
            const int64_t n = line_length(pick, tscan_dtype_size(d));
            // One line, a tile of lines, and five tiles' worth with a partial last one.
            const int64_t line_counts[] = {1, std::max<int64_t>(1, tile / n), std::max<int64_t>(2, (5 * tile + 11) / n)};
            for (int64_t lines : line_counts)
                for (int v = 0; v < 4; ++v)
                    check({d, d, TSCAN_OP_SUM, lines, n, v & 1 ? TSCAN_DECREASING : TSCAN_INCREASING, v >> 1}, rng);
        }
    }
}

// Inputs whose lines do not lie end to end as the output's: padded and sliced pitches, a
// broadcast line, a base off the 16-byte grid (gathered), and an aligned offset (not).
Test(emulated_stream, every_input_layout_gathered_or_not) {
    std::mt19937_64 rng(4);
    const tscan_dtype pairs[][2] = {{TSCAN_UINT8, TSCAN_UINT8}, {TSCAN_FLOAT16, TSCAN_FLOAT16},
                                    {TSCAN_FLOAT32, TSCAN_FLOAT32}, {TSCAN_INT64, TSCAN_INT64},
                                    {TSCAN_INT8, TSCAN_INT32}, {TSCAN_BFLOAT16, TSCAN_FLOAT32}};
    for (const auto &pair : pairs) {
        const int64_t tile = stream_tile_elements(tscan_dtype_size(pair[0]));
        const int64_t ns[] = {1, 17, 1000, tile + 5};
        for (int64_t n : ns) {
            const int64_t lines = std::max<int64_t>(2, (2 * tile + 3) / n);
            const int64_t pitches[] = {n + 3, 2 * n, 0, n, n};
            const int64_t offsets[] = {0, 0, 0, 1, 16 / (int64_t)tscan_dtype_size(pair[0])};
            // Each operator, direction and exclusive form twice: (sum, increasing, inclusive),
            // (prod, decreasing, inclusive), (sum, decreasing, exclusive), (prod, increasing, exclusive).
            for (int l = 0; l < 5; ++l)
                for (int v : {0, 3, 6, 5})
                    check({pair[0], pair[1], v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, lines, n,
                           v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0, pitches[l], offsets[l]},
                          rng);
        }
    }
}

// Padded inputs whose lines come in runs (a padded pitch within each run, a gap between runs),
// and runs in groups: a vector's lines follow one another by adds across a run's end and are
// found afresh across a group's; short runs (every vector crossing one) and long ones, lines of
// 2 to 17.
Test(emulated_stream, padded_runs_of_lines) {
    std::mt19937_64 rng(9);
    const tscan_dtype pairs[][2] = {{TSCAN_UINT8, TSCAN_UINT8}, {TSCAN_FLOAT16, TSCAN_FLOAT16},
                                    {TSCAN_FLOAT32, TSCAN_FLOAT32}, {TSCAN_FLOAT64, TSCAN_FLOAT64},
                                    {TSCAN_UINT8, TSCAN_INT32}};
    int pick = 0;
    for (const auto &pair : pairs) {
        const int64_t tile = stream_tile_elements(tscan_dtype_size(pair[0]));
        for (int64_t n : {2, 3, 6, 17})
            for (int64_t run : {1, 2, 5, 64}) {
                const int64_t lines = std::max<int64_t>(1, (2 * tile + tile / 3) / n / run) * run;
                const int v = (int)(pick++ % 8);  // operator, direction and form in turn
                emulated_case c = {pair[0], pair[1], v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, lines, n,
                                   v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0, n + (run % 2)};
                c.run = run;
                c.run_gap = 1 + pick % 5;
                check(c, rng);
                // Runs in groups of 3: a vector's lines end a run of two dimensions now and then.
                c.runs = 3;
                c.lines = std::max<int64_t>(1, (2 * tile + tile / 3) / n / run / 3) * run * 3;
                check(c, rng);
            }
    }
}

// In place (the input's view is the output's): a tile's halo lies in the tile before, whose
// block (here, the block before) has stored over it by then, so short lines look back instead.
Test(emulated_stream, in_place) {
    std::mt19937_64 rng(12);
    const tscan_dtype types[] = {TSCAN_UINT8, TSCAN_FLOAT32, TSCAN_INT64};
    int v = 0;
    for (tscan_dtype d : types)
        for (int64_t n : {3, 100, 256, 1000}) {
            const int64_t tile = stream_tile_elements(tscan_dtype_size(d));
            emulated_case c = {d, d, v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, (2 * tile + tile / 3) / n + 1, n,
                               v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0};
            c.in_place = true;
            ++v;
            check(c, rng);
        }
}

// Outputs off the 16-byte grid (by every whole element a vector holds): the tiles and vectors
// shift with the output, the first `head` places empty; an input as far off the grid reads as
// vectors, one aligned or otherwise off is gathered; a padded input is gathered either way.
Test(emulated_stream, every_output_offset) {
    std::mt19937_64 rng(8);
    const tscan_dtype pairs[][2] = {{TSCAN_UINT8, TSCAN_UINT8}, {TSCAN_FLOAT16, TSCAN_FLOAT16},
                                    {TSCAN_FLOAT32, TSCAN_FLOAT32}, {TSCAN_FLOAT64, TSCAN_FLOAT64},
                                    {TSCAN_UINT8, TSCAN_INT32}, {TSCAN_FLOAT16, TSCAN_FLOAT32}};
    for (const auto &pair : pairs) {
        const int64_t out_per_vector = 16 / (int64_t)tscan_dtype_size(pair[1]);
        const int64_t tile = stream_tile_elements(tscan_dtype_size(pair[0]));
        int pick = 0;
        for (int64_t out_offset = 1; out_offset < std::max<int64_t>(out_per_vector, 2); ++out_offset) {
            const int64_t n = line_length(pick++, tscan_dtype_size(pair[0]));
            const int64_t lines = std::max<int64_t>(1, (2 * tile + tile / 2) / n);
            const int64_t in_offsets[] = {out_offset, 0, out_offset};
            const int64_t pitches[] = {n, n, n + 1};
            for (int l = 0; l < 3; ++l)
                for (int v : {0, 3, 6, 5}) {
                    emulated_case c = {pair[0], pair[1], v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, lines, n,
                                       v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0, pitches[l],
                                       in_offsets[l]};
                    c.out_offset = out_offset;
                    check(c, rng);
                }
        }
    }
}

// Lanes-form cases for each pair and inner extent: lines that tiles hold whole (one row short of
// a tile's rows among them), lines whose end falls inside a tile, and lines longer than one, two
// or four tiles, which look back (past four, lanes whose statuses are wide take wide tiles);
// every operator, direction and form in turn, the input or the output an element off the grid.
// Lane-major: the input is (lines, lanes, n), lanes a line apart or further.
void lanes_cases(const std::vector<std::array<tscan_dtype, 2>> &pairs, const std::vector<int64_t> &inner,
                 bool lane_major, std::mt19937_64 &rng) {
    int pick = 0;
    for (const auto &pair : pairs)
        for (int64_t lanes : inner) {
            const int64_t tile_rows =
                lanes_tile_elements(tscan_dtype_size(pair[0]), tscan_dtype_size(pair[1]), lane_major, kLanesTileBytes) /
                lanes;
            // (Lines of 1 are the segment form's.)
            const int64_t ns[] = {2, 5, 100, tile_rows - 1, tile_rows + 3, 2 * tile_rows + 5,
                                  kLanesWideMinTiles * tile_rows + 9};
            for (int64_t n : ns) {
                const int64_t lines = std::max<int64_t>(1, (2 * tile_rows + 7) / n);
                const int v = pick++ % 8;
                emulated_case c = {pair[0], pair[1], v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, lines, n,
                                   v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0};
                c.lanes = lanes;
                c.lane_major = lane_major;
                if (lane_major) c.pitch = pick % 4 == 3 ? n + 5 : n;
                c.offset = pick % 3 == 1;      // an input,
                c.out_offset = pick % 3 == 2;  // or an output, an element off the grid
                check(c, rng);
            }
        }
}

// The lanes form: packed (lines, n, I) blocks along n, inner extents from 2 to kMaxLanes (odd,
// even, a warp's and more); 1-byte sums in words from 4 lanes, 2-byte ones from 2.
Test(emulated_stream, lanes_every_inner_extent) {
    std::mt19937_64 rng(5);
    lanes_cases({{TSCAN_UINT8, TSCAN_UINT8},
                 {TSCAN_FLOAT32, TSCAN_FLOAT32},
                 {TSCAN_FLOAT64, TSCAN_FLOAT64},
                 {TSCAN_UINT8, TSCAN_INT32},
                 {TSCAN_FLOAT16, TSCAN_FLOAT32},
                 {TSCAN_INT16, TSCAN_INT64},
                 {TSCAN_INT16, TSCAN_INT16},
                 {TSCAN_INT8, TSCAN_UINT8}},
                {2, 3, 4, 7, 12, 33, 64}, false, rng);
}

// The lanes form reading an input that runs along its lines into a packed (lines, n, lanes)
// output: whole 16-byte vectors of each lane's run from any place in a vector, element by
// element where a tile holds a line's end.
Test(emulated_stream, lanes_read_along_lines) {
    std::mt19937_64 rng(11);
    lanes_cases({{TSCAN_INT32, TSCAN_INT32},
                 {TSCAN_FLOAT64, TSCAN_FLOAT64},
                 {TSCAN_UINT8, TSCAN_UINT8},
                 {TSCAN_FLOAT16, TSCAN_FLOAT16},
                 {TSCAN_UINT8, TSCAN_INT32},
                 {TSCAN_BFLOAT16, TSCAN_FLOAT32},
                 {TSCAN_INT16, TSCAN_INT64},
                 {TSCAN_FLOAT32, TSCAN_FLOAT64}},
                {2, 3, 8, 10, 33, 64}, true, rng);
}

// The look-back itself: blocks that run one after another only ever find their predecessor
// done, so here one block scans tile C of a uint32 sum whose earlier tiles have published only
// their aggregates, but for tile 0 and one tile `far` tiles back (inclusive prefixes), as
// blocks still running would leave them. The walk must cross its windows (256 tiles for the
// segment form, 256 / I for the lanes form), stop at that inclusive prefix, get tile C right
// and publish tile C's own inclusive prefix.
namespace {

constexpr int64_t kWalkTile = stream_tile_elements(4);  // uint32 elements a segment-form tile

unsigned long long published(uint32_t value, tile_flag state) { return (unsigned long long)value << 32 | state; }

// Data of `rows` rows of `lanes` uint32, and each lane's prefix sums down the rows.
void walk_data(int64_t rows, int64_t lanes, std::vector<uint32_t> &x, std::vector<uint32_t> &sums, uint64_t seed) {
    std::mt19937_64 rng(seed);
    x.resize(rows * lanes);
    sums.resize(rows * lanes);
    for (auto &v : x) v = (uint32_t)rng();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t l = 0; l < lanes; ++l)
            sums[r * lanes + l] = x[r * lanes + l] + (r ? sums[(r - 1) * lanes + l] : 0u);
}

}  // namespace

Test(emulated_stream, segment_walk_across_windows_to_an_inclusive_prefix) {
    const int64_t C = 700, far = 400, tiles = C + 2, total = tiles * kWalkTile;
    std::vector<uint32_t> x, sums;
    walk_data(total, 1, x, sums, 6);
    aligned_bytes in(total * 4), out(total * 4);
    std::memcpy(in.p, x.data(), total * 4);
    std::memset(out.p, 0xa5, out.size);
    stream_args a = {};
    a.in = reinterpret_cast<const char *>(in.p);
    a.out = reinterpret_cast<char *>(out.p);
    a.total = a.n = total;
    a.n_div = make_divisor((uint32_t)total);
    a.start_pattern = 1;
    a.tiles = tiles;
    std::vector<unsigned long long> words((size_t)(kSectorWords * (1 + tiles)), 0);
    words[0] = (unsigned long long)C;  // the next claim takes tile C
    for (int64_t k = 0; k < C; ++k) {
        const uint32_t aggregate = sums[(k + 1) * kWalkTile - 1] - (k ? sums[k * kWalkTile - 1] : 0u);
        const bool inclusive = k == 0 || k == C - far;
        words[kSectorWords * (1 + k)] =
            inclusive ? published(sums[(k + 1) * kWalkTile - 1], kInclusive) : published(aggregate, kAggregate);
    }
    tscan_emu::launch(1, kStreamThreads, stream_kernel<TSCAN_UINT32, TSCAN_UINT32, false>, a, words.data());
    const uint32_t *got = reinterpret_cast<const uint32_t *>(out.p);
    for (int64_t i = C * kWalkTile; i < (C + 1) * kWalkTile; ++i)
        cr_assert_eq(got[i], sums[i], "element %lld of tile %lld: %u, not %u", (long long)i, (long long)C, got[i], sums[i]);
    cr_assert_eq(words[kSectorWords * (1 + C)], published(sums[(C + 1) * kWalkTile - 1], kInclusive),
                 "tile %lld published 0x%llx", (long long)C, words[kSectorWords * (1 + C)]);
}

Test(emulated_stream, lanes_walk_across_windows_to_an_inclusive_prefix) {
    const int64_t lanes = 4, C = 150, far = 100;  // windows of 256 / 4 = 64 tiles
    const int64_t tile_rows = kWalkTile / lanes, tiles = C + 2, rows = tiles * tile_rows;
    std::vector<uint32_t> x, sums;
    walk_data(rows, lanes, x, sums, 7);
    aligned_bytes in(rows * lanes * 4), out(rows * lanes * 4);
    std::memcpy(in.p, x.data(), in.size);
    std::memset(out.p, 0xa5, out.size);
    lanes_args a = {};
    a.in = reinterpret_cast<const char *>(in.p);
    a.out = reinterpret_cast<char *>(out.p);
    a.rows = a.n = rows;
    a.lanes = (int)lanes;
    a.tile_rows = tile_rows;
    a.tiles = tiles;
    a.group_rows = lanes_group_rows(tile_rows, (int)lanes, 4, 4);
    a.tile_elements = (int)kWalkTile;
    a.status_words = (int)kSectorWords;  // 4 lanes of one 32-bit part: a sector a tile
    a.in_aligned = a.out_aligned = true;
    std::vector<unsigned long long> words((size_t)(kSectorWords + tiles * a.status_words), 0);
    words[0] = (unsigned long long)C;
    const auto row_sum = [&](int64_t r, int64_t l) { return r < 0 ? 0u : sums[r * lanes + l]; };
    for (int64_t k = 0; k < C; ++k)
        for (int64_t l = 0; l < lanes; ++l) {
            const int64_t last = (k + 1) * tile_rows - 1;
            const bool inclusive = k == 0 || k == C - far;
            words[kSectorWords + k * a.status_words + l] =
                inclusive ? published(row_sum(last, l), kInclusive)
                          : published(row_sum(last, l) - row_sum(k * tile_rows - 1, l), kAggregate);
        }
    tscan_emu::launch(1, kStreamThreads, lanes_kernel<TSCAN_UINT32, TSCAN_UINT32, false>, a, words.data());
    const uint32_t *got = reinterpret_cast<const uint32_t *>(out.p);
    for (int64_t i = C * tile_rows * lanes; i < (C + 1) * tile_rows * lanes; ++i)
        cr_assert_eq(got[i], sums[i], "element %lld of tile %lld: %u, not %u", (long long)i, (long long)C, got[i], sums[i]);
    for (int64_t l = 0; l < lanes; ++l)
        cr_assert_eq(words[kSectorWords + C * a.status_words + l],
                     published(row_sum((C + 1) * tile_rows - 1, l), kInclusive), "tile %lld, lane %lld published 0x%llx",
                     (long long)C, (long long)l, words[kSectorWords + C * a.status_words + l]);
}

// Lookback's one-wave kernel (AUTO's path for one to four short packed lines): every dtype, every
// variant, one and three lines of two to five 16 KB tiles, the last one partial.
Test(emulated_one_wave, every_dtype_and_variant) {
    std::mt19937_64 rng(8);
    for (int d = 0; d < TSCAN_DTYPE_COUNT; ++d) {
        const tscan_dtype dtype = (tscan_dtype)d;
        const size_t size = tscan_dtype_size(dtype);
        const int64_t per_vector = 16 / (int64_t)size, tile = kWaveTileVectors * per_vector;
        for (int v = 0; v < 8; ++v) {
            const int64_t lines = v % 3 == 0 ? 3 : 1, n = tile * (1 + v % 4) + per_vector * (3 + v);
            const int64_t total = lines * n, sizes[2] = {lines, n};
            aligned_bytes in(total * size), out(total * size), want(total * size);
            fill(dtype, v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, in.p, total, rng);
            std::memset(out.p, 0xa5, out.size);
            const tscan_scan_desc desc = {v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM, 1,
                                          v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0, TSCAN_ALGO_LOOKBACK};
            tscan_tensor tin, tout, twant;
            cr_assert_eq(tscan_tensor_init(&tin, in.p, dtype, 2, sizes, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_tensor_init(&tout, out.p, dtype, 2, sizes, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_tensor_init(&twant, want.p, dtype, 2, sizes, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS);
            tscan_problem p;
            cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
            tscan_problem_init(&p, &desc, &tin, &tout);
            one_wave_plan wave;
            bool takes = false;
            switch (size) {
            case 1: takes = make_one_wave_plan<uint8_t>(&p, &wave); break;
            case 2: takes = make_one_wave_plan<uint16_t>(&p, &wave); break;
            case 4: takes = make_one_wave_plan<uint32_t>(&p, &wave); break;
            default: takes = make_one_wave_plan<uint64_t>(&p, &wave); break;
            }
            cr_assert(takes, "%s, %lld x %lld: no one-wave plan", tscan_dtype_name(dtype), (long long)lines, (long long)n);
            dispatch_dtype<emulated_one_wave_launch>(dtype, wave, (v & 1) != 0);
            for (int64_t i = 0; i < total; ++i)
                cr_assert(std::memcmp(out.p + i * size, want.p + i * size, size) == 0,
                          "%s %s, %lld x %lld, variant %d: element %lld differs from the reference", tscan_op_name(desc.op),
                          tscan_dtype_name(dtype), (long long)lines, (long long)n, v, (long long)i);
        }
    }
}

// Lookback's tile kernel that with_tile_kernel picks for a plan, as launch_tiles runs it: two
// blocks, the first of which claims every tile (blocks run one after another here), the second
// finding none left. Claims go in the bands of an H100's 396 resident blocks.
template <tscan_dtype K> struct emulated_tile_launch {
    const lookback_plan &plan;
    const tile_layout &L;
    unsigned long long *words;  // tile_workspace_words, zeroed: the counter's sector, then statuses
    template <int Cols, int V, bool Widen, bool OffGrid> tscan_status with() const {
        using Traits = dtype_traits<K>;
        const tile_status<typename Traits::A> st{words, words + kSectorWords};
        tscan_emu::launch(2, block_threads<typename Traits::T, V>(), lookback_kernel<K, Cols, V, Widen, OffGrid>, plan.a,
                          plan.out_word_line_step, L, st);
        return TSCAN_SUCCESS;
    }
};
template <tscan_dtype D> tscan_status run_emulated_tiles(const tscan_problem *p, int *v) {
    constexpr tscan_dtype K = kernel_dtype(D);
    using Traits = dtype_traits<K>;
    const lookback_plan plan = make_plan<typename Traits::T>(p);
    *v = plan.v;
    tile_layout L = make_layout<typename Traits::T, typename Traits::A>(plan);
    L.band = claim_band(L.groups, 396);
    std::vector<unsigned long long> words((size_t)tile_workspace_words(L), 0);
    return with_tile_kernel<K>(plan, emulated_tile_launch<K>{plan, L, words.data()});
}

// Lookback's bulk line-chunk kernel as launch_bulk runs it: two blocks, the first of which claims
// every tile, in the bands of an H200's 264 resident blocks.
template <tscan_dtype D> tscan_status run_emulated_bulk(const tscan_problem *p) {
    constexpr tscan_dtype K = kernel_dtype(D);
    using T = typename dtype_traits<K>::T;
    using A = typename dtype_traits<K>::A;
    const bool prod = p->op == TSCAN_OP_PROD;
    if (!bulk_takes<T>(prod)) return TSCAN_ERROR_NOT_SUPPORTED;  // the tile kernel's
    bulk_plan bulk;
    if (!make_bulk_plan<T>(p, &bulk)) return TSCAN_ERROR_INTERNAL;  // the case's layout was meant for it
    tile_layout L = make_bulk_layout<T, A>(bulk);
    L.band = claim_band(L.groups, 264);
    std::vector<unsigned long long> words((size_t)tile_workspace_words(L), 0);
    const tile_status<A> st{words.data(), words.data() + kSectorWords};
    if constexpr (bulk_takes<T>(true))
        if (prod) tscan_emu::launch(2, kBulkThreads, bulk_lookback_kernel<K, true>, bulk.a, L, st);
    if constexpr (bulk_takes<T>(false))
        if (!prod) tscan_emu::launch(2, kBulkThreads, bulk_lookback_kernel<K, false>, bulk.a, L, st);
    return TSCAN_SUCCESS;
}

// A (d0, d1) tensor scanned along `axis` by the tile kernel: input rows `pitch` elements apart
// (-1: d1), `offset` elements in, or stored transposed (input strides (1, d0)); output packed.
struct tile_case {
    tscan_dtype in, out;
    int64_t d0, d1;
    uint32_t axis;
    int64_t pitch = -1;
    int64_t offset = 0;
    bool transposed = false;
    int v = 0;  // the plan's elements a slot (lookback_plan::v) that the case is there to reach; 0: any
    bool bulk = false;  // run the bulk line-chunk kernel (bulk_lookback_kernel) instead
    // The form, which check_every_form sets.
    tscan_op op = TSCAN_OP_SUM;
    tscan_direction direction = TSCAN_INCREASING;
    int exclusive = 0;
};

void check_tiles(const tile_case &c, std::mt19937_64 &rng) {
    const int64_t pitch = c.pitch < 0 ? c.d1 : c.pitch, total = c.d0 * c.d1;
    const int64_t in_count = c.offset + (c.transposed ? total : (c.d0 - 1) * pitch + c.d1);
    const size_t in_size = tscan_dtype_size(c.in), out_size = tscan_dtype_size(c.out);
    aligned_bytes in(in_count * in_size), out(total * out_size), want(total * out_size);
    fill(c.in, c.op, in.p, in_count, rng);
    std::memset(out.p, 0xa5, out.size);  // poison: every element must be written
    const int64_t sizes[2] = {c.d0, c.d1};
    const int64_t in_strides[2] = {c.transposed ? 1 : pitch, c.transposed ? c.d0 : 1};
    const tscan_scan_desc desc = {c.op, c.axis, c.direction, c.exclusive, TSCAN_ALGO_LOOKBACK};
    tscan_tensor tin, tout, twant;
    cr_assert_eq(tscan_tensor_init(&tin, in.p + c.offset * in_size, c.in, 2, sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out.p, c.out, 2, sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p, c.out, 2, sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem_init(&p, &desc, &tin, &tout);
    tscan_status s = TSCAN_ERROR_INTERNAL;
    int v = 0;
    if (c.bulk) {
        switch (c.out) {  // the bulk kernels this suite compiles
        case TSCAN_FLOAT32: s = run_emulated_bulk<TSCAN_FLOAT32>(&p); break;
        case TSCAN_INT32: s = run_emulated_bulk<TSCAN_INT32>(&p); break;
        case TSCAN_FLOAT64: s = run_emulated_bulk<TSCAN_FLOAT64>(&p); break;
        case TSCAN_UINT8: s = run_emulated_bulk<TSCAN_UINT8>(&p); break;
        default: cr_assert_fail("no emulated bulk kernel for %s", tscan_dtype_name(c.out));
        }
        if (s == TSCAN_ERROR_NOT_SUPPORTED) return;  // a form the bulk kernel leaves to the tile kernel (1-byte products)
    } else switch (c.out) {  // the kernels this suite compiles: 4-byte floats and integers, bytes, 2-byte integers, 8-byte floats
    case TSCAN_FLOAT32: s = run_emulated_tiles<TSCAN_FLOAT32>(&p, &v); break;
    case TSCAN_INT32: s = run_emulated_tiles<TSCAN_INT32>(&p, &v); break;
    case TSCAN_UINT8: s = run_emulated_tiles<TSCAN_UINT8>(&p, &v); break;
    case TSCAN_INT16: s = run_emulated_tiles<TSCAN_INT16>(&p, &v); break;
    case TSCAN_FLOAT64: s = run_emulated_tiles<TSCAN_FLOAT64>(&p, &v); break;
    default: cr_assert_fail("no emulated tile kernel for %s", tscan_dtype_name(c.out));
    }
    cr_assert_eq(s, TSCAN_SUCCESS);
    cr_assert(c.v == 0 || v == c.v, "%s into %s, %lld x %lld along %d: planned %d elements a slot, not %d",
              tscan_dtype_name(c.in), tscan_dtype_name(c.out), (long long)c.d0, (long long)c.d1, (int)c.axis, v, c.v);
    for (int64_t i = 0; i < total; ++i)
        cr_assert(std::memcmp(out.p + i * out_size, want.p + i * out_size, out_size) == 0,
                  "%s %s into %s, %lld x %lld along %d (pitch %lld, offset %lld%s), %s, %s: element %lld differs from "
                  "the reference",
                  tscan_op_name(c.op), tscan_dtype_name(c.in), tscan_dtype_name(c.out), (long long)c.d0, (long long)c.d1,
                  (int)c.axis, (long long)pitch, (long long)c.offset, c.transposed ? ", transposed" : "",
                  c.direction == TSCAN_DECREASING ? "decreasing" : "increasing", c.exclusive ? "exclusive" : "inclusive",
                  (long long)i);
}

// Each case in the four forms (direction x exclusive), sums and products.
template <size_t N> void check_every_form(const tile_case (&cases)[N], std::mt19937_64 &rng) {
    for (tile_case c : cases)
        for (int form = 0; form < 8; ++form) {
            c.op = form & 4 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
            c.direction = form & 1 ? TSCAN_DECREASING : TSCAN_INCREASING;
            c.exclusive = (form & 2) != 0;
            check_tiles(c, rng);
        }
}

// Tiles are 32 KB of slots: the long axes below run over three tiles and part of a fourth.
Test(emulated_lookback, line_chunks) {
    std::mt19937_64 rng(41);
    const tile_case cases[] = {
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 2, 3 * 8192 + 1000, 1},  // pairs a slot
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 1, 3 * 8192 + 7, 1, -1, 1},  // single elements
        {TSCAN_UINT8, TSCAN_UINT8, 1, 3 * 32768 + 4097, 1},  // bytes in words, a tail
        {TSCAN_UINT8, TSCAN_UINT8, 1, 3 * 8192 + 5, 1, -1, 3},  // serial blocks
        {TSCAN_INT16, TSCAN_INT16, 1, 3 * 16384 + 77, 1},  // 16-byte slots, a tail
        {TSCAN_INT16, TSCAN_INT16, 3, 3 * 8192 + 77, 1, 3 * 8192 + 78, 1},  // padded rows, serial blocks
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 1, 3 * 4096 + 5, 1},
        {TSCAN_UINT8, TSCAN_INT32, 1, 3 * 8192 + 9, 1, -1, 0, false, 4},  // widened: words of 4 bytes, a line in part at its end
        {TSCAN_UINT8, TSCAN_INT32, 1, 3 * 8192 + 9, 1, -1, 2, false, 1},  // off the output's grid: one element a slot
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 1, 3 * 8192 + 6, 1},
        {TSCAN_FLOAT32, TSCAN_FLOAT64, 1, 3 * 4096 + 3, 1},
        {TSCAN_INT16, TSCAN_INT32, 2, 3 * 8192 + 76, 1, 3 * 8192 + 80},  // lines of whole words
    };
    check_every_form(cases, rng);
}
// Bulk tiles are 2048 vectors of 16 bytes: 32768 1-byte elements, 8192 4-byte ones, 4096 8-byte
// ones. Odd line lengths start each line elsewhere in its vectors (its first and last may hold it
// in part, and a line may end on an empty tile); padded rows keep both tensors' lines on one grid.
Test(emulated_lookback, bulk_line_chunks) {
    std::mt19937_64 rng(43);
    tile_case cases[] = {
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 1, 3 * 8192 + 1001, 1},
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 3, 2 * 8192 + 5, 1},  // heads 0, 1 and 2 (3 decreasing)
        {TSCAN_INT32, TSCAN_INT32, 2, 2 * 8192 + 3, 1, 2 * 8192 + 7},  // padded: the same head in both tensors
        {TSCAN_INT32, TSCAN_INT32, 7, 6, 1},  // lines within a vector or two
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 2, 3 * 4096 + 3, 1},
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 1, 2 * 4096, 1},  // a third tile for a head of 1: empty
        {TSCAN_UINT8, TSCAN_UINT8, 3, 2 * 32768 + 13, 1},  // sums a word at a time; heads 0, 13 and 10
    };
    for (tile_case &c : cases) c.bulk = true;
    check_every_form(cases, rng);
}
Test(emulated_lookback, column_blocks) {
    std::mt19937_64 rng(42);
    const tile_case cases[] = {
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 3 * 128 + 11, 128, 0},  // pairs of lines
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 3 * 128 + 11, 67, 0, 69},  // pairs off the grid
        {TSCAN_UINT8, TSCAN_UINT8, 3 * 256 + 5, 128, 0},  // packed statuses
        {TSCAN_INT16, TSCAN_INT16, 3 * 256 + 5, 33, 0, 33},  // serial blocks
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 3 * 128 + 9, 48, 0},
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 64, 3 * 256 + 17, 1, -1, 0, true},  // single lines, stored along them
        {TSCAN_UINT8, TSCAN_UINT8, 128, 3 * 256 + 17, 1, -1, 0, true},
        {TSCAN_INT16, TSCAN_INT32, 3 * 256 + 1, 40, 0, -1, 0, false, 2},  // widened: pairs of lines, a word of the input
        {TSCAN_UINT8, TSCAN_INT16, 3 * 256 + 1, 40, 0, 42, 0, false, 2},  // widened pairs of 2-byte outputs, padded
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 3 * 128 + 5, 64, 0, -1, 0, false, 2},
        {TSCAN_INT16, TSCAN_INT32, 3 * 256 + 1, 41, 0, -1, 0, false, 1},  // widened single lines: an odd number
        {TSCAN_UINT8, TSCAN_INT32, 3 * 256 + 1, 40, 0, -1, 1, false, 1},  // and an input off its words' grid
        {TSCAN_INT8, TSCAN_INT32, 64, 3 * 128 + 18, 1, -1, 0, true, 2},  // widened pairs stored along their lines
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 64, 3 * 128 + 17, 1, -1, 0, true, 1},  // single lines (an odd axis)
    };
    check_every_form(cases, rng);
}

// Columns' realigned kernel: (outer, n, inner) blocks scanned along n (of at most four rows)
// whose rows lie off the 16-byte grid by their pitch or base, in either tensor or both, padded
// or not; runs of exactly a warp's groups and of more with a partial last group; every kernel
// dtype it takes (1 to 4 bytes), operator, direction and form. Both buffers are poisoned whole:
// the padding between rows must come out untouched. Two blocks, so that lanes step through the
// grid-stride loop and warps end inside a run of groups.
namespace {

template <tscan_dtype D> struct emulated_realigned_launch {
    static tscan_status run(const scan_args &a, const realign_args &r) {
        constexpr tscan_dtype K = kernel_dtype(D);
        constexpr int W = 16 / (int)sizeof(typename dtype_traits<K>::T);
        if constexpr (W == 2) cr_assert_fail("8-byte elements are not realigned");
        else tscan_emu::launch(2, kColumnsThreads, columns_realigned_kernel<K, W>, a, r);
        return TSCAN_SUCCESS;
    }
};

struct realigned_case {
    tscan_dtype dtype;
    int variant;  // bit 0 product, 1 decreasing, 2 exclusive
    int64_t outer, n, inner;
    int64_t in_pad, out_pad;        // elements after each row
    int64_t in_offset, out_offset;  // elements past a 16-byte boundary
};

void check_realigned(const realigned_case &c, std::mt19937_64 &rng) {
    const size_t size = tscan_dtype_size(c.dtype);
    const tscan_op op = c.variant & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
    const int64_t in_row = c.inner + c.in_pad, out_row = c.inner + c.out_pad;
    const int64_t in_count = c.in_offset + c.outer * c.n * in_row, out_count = c.out_offset + c.outer * c.n * out_row;
    aligned_bytes in(in_count * size), out(out_count * size), want(out_count * size);
    fill(c.dtype, op, in.p, in_count, rng);
    std::memset(out.p, 0xa5, out.size);
    std::memset(want.p, 0xa5, want.size);
    const int64_t sizes[3] = {c.outer, c.n, c.inner};
    const int64_t in_strides[3] = {c.n * in_row, in_row, 1}, out_strides[3] = {c.n * out_row, out_row, 1};
    tscan_tensor tin, tout, twant;
    const tscan_scan_desc desc = {op, 1, c.variant & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (c.variant & 4) != 0,
                                  TSCAN_ALGO_COLUMNS};
    cr_assert_eq(tscan_tensor_init(&tin, in.p + c.in_offset * size, c.dtype, 3, sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out.p + c.out_offset * size, c.dtype, 3, sizes, out_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p + c.out_offset * size, c.dtype, 3, sizes, out_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem_init(&p, &desc, &tin, &tout);
    scan_args a = make_scan_args(&p);
    realign_args r;
    char text[200];
    std::snprintf(text, sizeof text, "%s %s, %lld x %lld x %lld, pads %lld / %lld, offsets %lld / %lld, variant %d",
                  tscan_op_name(op), tscan_dtype_name(c.dtype), (long long)c.outer, (long long)c.n, (long long)c.inner,
                  (long long)c.in_pad, (long long)c.out_pad, (long long)c.in_offset, (long long)c.out_offset, c.variant);
    cr_assert(realign_lines(a, r, 16 / (int)size, size), "%s: not realigned", text);
    dispatch_dtype<emulated_realigned_launch>(c.dtype, a, r);
    for (int64_t i = 0; i < (int64_t)out.size; ++i)
        cr_assert_eq(out.p[i], want.p[i], "%s: byte %lld (element %lld) is 0x%02x, the reference's 0x%02x", text,
                     (long long)i, (long long)(i / (int64_t)size - c.out_offset), out.p[i], want.p[i]);
}

}  // namespace

Test(emulated_columns, realigned_rows_every_kernel_dtype) {
    std::mt19937_64 rng(12);
    const tscan_dtype types[] = {TSCAN_UINT8, TSCAN_INT16, TSCAN_FLOAT16, TSCAN_BFLOAT16, TSCAN_FLOAT32, TSCAN_UINT32};
    int pick = 0;
    for (tscan_dtype d : types) {
        const int64_t w = 16 / (int64_t)tscan_dtype_size(d);
        const int64_t inners[] = {32 * w, 32 * w + 1, 40 * w - 1, 70 * w + 3};
        const int64_t ns[] = {2, 3, 4};
        for (int64_t inner : inners)
            for (int64_t n : ns) {
                const int k = pick++;
                realigned_case c = {d, k % 8, 1 + k % 3, n, inner, 0, 0, 0, 0};
                c.in_pad = k % 4 == 1 ? 0 : k % 3;  // rows off the grid by their pitch,
                c.out_pad = k % 4 == 2 ? 0 : (k / 3) % 2 + 2 * (k % 2);
                c.in_offset = k % 5 % w;  // or by their base
                c.out_offset = (k / 2) % 7 % w;
                if (inner % w == 0 && c.in_pad % w == 0 && c.out_pad % w == 0 && c.in_offset == 0 && c.out_offset == 0)
                    c.out_offset = w / 2;  // some row off the grid: else the lines pack
                check_realigned(c, rng);
            }
    }
}

// Columns' staged form: short lines stored along the axis of an input whose unit stride is on
// another batch dimension (u) than the output's lines (v), up to four dimensions: tiles cut off
// by the tensor along u and v, u narrower than a warp (lanes over several v), a rest dimension,
// a wider output, the longest lines a tile of 4- and 8-byte accumulators takes; every variant;
// 1- and 2-byte elements loaded and stored in words where their runs allow, else one by one.
// The output is poisoned whole. Two blocks, so that each loops over several tiles.
namespace {

template <tscan_dtype D> struct emulated_staged_launch {
    static tscan_status run(const scan_args &a, const staged_args &s) {
        constexpr tscan_dtype K = kernel_dtype(D);
        if constexpr (takes_narrower_input(K)) {
            if (a.widens) {
                tscan_emu::launch(2, kStagedThreads, columns_staged_kernel<K, true>, a, s);
                return TSCAN_SUCCESS;
            }
        }
        if constexpr (sizeof(typename dtype_traits<K>::T) < 4) {
            if (s.load_words) {
                tscan_emu::launch(2, kStagedThreads, columns_staged_kernel<K, false, true>, a, s);
                return TSCAN_SUCCESS;
            }
        }
        tscan_emu::launch(2, kStagedThreads, columns_staged_kernel<K, false>, a, s);
        return TSCAN_SUCCESS;
    }
};

struct staged_case {
    tscan_dtype in, out;
    int variant;  // bit 0 product, 1 decreasing, 2 exclusive
    uint32_t ndim;
    int64_t sizes[4];
    int order[4];  // the input's dimensions from its unit stride outwards; the axis is the last
};

void check_staged(const staged_case &c, std::mt19937_64 &rng) {
    const size_t in_size = tscan_dtype_size(c.in), out_size = tscan_dtype_size(c.out);
    const tscan_op op = c.variant & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
    const int axis = (int)c.ndim - 1;
    int64_t in_strides[4], count = 1;
    for (uint32_t i = 0; i < c.ndim; ++i) {
        in_strides[c.order[i]] = count;
        count *= c.sizes[c.order[i]];
    }
    aligned_bytes in(count * in_size), out(count * out_size), want(count * out_size);
    fill(c.in, op, in.p, count, rng);
    std::memset(out.p, 0xa5, out.size);
    std::memset(want.p, 0xa5, want.size);
    tscan_tensor tin, tout, twant;
    const tscan_scan_desc desc = {op, (uint32_t)axis, c.variant & 2 ? TSCAN_DECREASING : TSCAN_INCREASING,
                                  (c.variant & 4) != 0, TSCAN_ALGO_COLUMNS};
    cr_assert_eq(tscan_tensor_init(&tin, in.p, c.in, c.ndim, c.sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out.p, c.out, c.ndim, c.sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p, c.out, c.ndim, c.sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem p;
    tscan_problem_init(&p, &desc, &tin, &tout);
    const scan_args a = make_scan_args(&p);
    staged_args s;
    char text[200];
    std::snprintf(text, sizeof text, "%s %s into %s, %lld x %lld x %lld x %lld (%u dims), order %d%d%d%d, variant %d",
                  tscan_op_name(op), tscan_dtype_name(c.in), tscan_dtype_name(c.out), (long long)c.sizes[0],
                  (long long)c.sizes[1], (long long)c.sizes[2], (long long)c.sizes[3], c.ndim, c.order[0], c.order[1],
                  c.order[2], c.order[3], c.variant);
    cr_assert(plan_staged(a, s, (int64_t)out_size), "%s: not staged", text);
    const bool words = c.in == c.out && in_size < 4 && c.sizes[0] % (4 / (int64_t)in_size) == 0 &&
                       in_strides[1] % (4 / (int64_t)in_size) == 0 && in_strides[c.ndim - 1] % (4 / (int64_t)in_size) == 0;
    cr_assert_eq(s.load_words, words, "%s: words %d", text, (int)s.load_words);
    dispatch_dtype<emulated_staged_launch>(c.out, a, s);
    for (int64_t i = 0; i < (int64_t)out.size; ++i)
        cr_assert_eq(out.p[i], want.p[i], "%s: byte %lld (element %lld) is 0x%02x, the reference's 0x%02x", text,
                     (long long)i, (long long)(i / (int64_t)out_size), out.p[i], want.p[i]);
}

}  // namespace

Test(emulated_columns, staged_permuted_inputs) {
    std::mt19937_64 rng(14);
    const staged_case cases[] = {
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 0, 3, {37, 45, 6}, {0, 1, 2}},       // tiles cut along u and v
        {TSCAN_FLOAT16, TSCAN_FLOAT16, 2, 3, {70, 9, 5}, {0, 2, 1}},        // the axis between u and v
        {TSCAN_UINT8, TSCAN_UINT8, 1, 3, {40, 300, 7}, {0, 1, 2}},          // several v tiles
        {TSCAN_INT16, TSCAN_INT16, 4, 3, {20, 300, 8}, {0, 1, 2}},
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 7, 3, {33, 20, 15}, {0, 1, 2}},      // the longest 8-byte line
        {TSCAN_UINT32, TSCAN_UINT32, 6, 3, {40, 7, 31}, {0, 1, 2}},         // the longest 4-byte line
        {TSCAN_FLOAT32, TSCAN_FLOAT32, 3, 3, {4, 300, 6}, {0, 2, 1}},       // u of 4: 8 v's a warp row
        {TSCAN_FLOAT64, TSCAN_FLOAT64, 5, 3, {2, 1000, 3}, {0, 2, 1}},      // u of 2
        {TSCAN_INT8, TSCAN_INT32, 0, 4, {3, 50, 11, 7}, {1, 3, 2, 0}},      // widened, a rest dimension
        {TSCAN_FLOAT16, TSCAN_FLOAT32, 5, 4, {20, 3, 70, 2}, {0, 2, 1, 3}},
        {TSCAN_UINT16, TSCAN_UINT64, 3, 3, {64, 9, 3}, {0, 2, 1}},
        {TSCAN_INT8, TSCAN_INT8, 6, 3, {300, 40, 5}, {0, 2, 1}},         // ten tiles along u
        // 1- and 2-byte inputs load words of u where u runs lie on the 4-byte grid (the cases
        // above of one width, and these: u of 8 in two lanes of words, cut tiles), else elements
        {TSCAN_UINT8, TSCAN_UINT8, 2, 3, {8, 300, 9}, {0, 2, 1}},
        {TSCAN_BFLOAT16, TSCAN_BFLOAT16, 7, 3, {36, 130, 10}, {0, 1, 2}},
        {TSCAN_UINT16, TSCAN_UINT16, 1, 3, {37, 45, 6}, {0, 1, 2}},      // u odd: elements
        {TSCAN_INT8, TSCAN_INT8, 5, 3, {34, 200, 9}, {0, 1, 2}},        // u of 34: elements
        {TSCAN_INT8, TSCAN_INT16, 3, 3, {40, 300, 6}, {0, 1, 2}},       // widened, stored in words
    };
    for (const staged_case &c : cases) check_staged(c, rng);
}

// Long runs: groups across warps and blocks, so that vectors are stored by the lane that
// follows their first group, shuffled across every lane of a warp.
Test(emulated_columns, realigned_long_runs) {
    std::mt19937_64 rng(13);
    const tscan_dtype types[] = {TSCAN_UINT8, TSCAN_FLOAT16, TSCAN_FLOAT32};
    int k = 0;
    for (tscan_dtype d : types) {
        const int64_t w = 16 / (int64_t)tscan_dtype_size(d);
        const int64_t inners[] = {600 * w + 3, 1000 * w};
        for (int64_t inner : inners) {
            realigned_case c = {d, k % 8, 2, 2 + k % 3, inner, 1 + k % 2, k % 3, k % w, (k + 1) % w};
            check_realigned(c, rng);
            ++k;
        }
    }
}

// Columns' vectors of a narrower input: packed (outer, n, inner) blocks along n, aligned, in one
// run of lines (every warp's row staged through shared memory) and in runs of 40 vectors (warps
// across a run's end store lane by lane; the last warp in part), over axes of the short and the
// long kernel (a last chunk in part); integers sign- or zero-extended, floats widened; every
// operator, direction and form in turn. Two blocks: lanes step through the grid-stride loop.
namespace {

template <tscan_dtype In, tscan_dtype Out> struct emulated_widen_launch {
    static tscan_status run(const scan_args &a) {
        if constexpr (tscan_bytes_of(In) < tscan_bytes_of(Out)) {
            if (a.n <= kShortUnroll) tscan_emu::launch(2, kColumnsThreads, columns_widen_kernel<In, Out, kShortUnroll>, a);
            else tscan_emu::launch(2, kColumnsThreads, columns_widen_kernel<In, Out, kLongUnroll / 2>, a);
        } else {
            cr_assert_fail("%s into %s does not widen", tscan_dtype_name(In), tscan_dtype_name(Out));
        }
        return TSCAN_SUCCESS;
    }
};

}  // namespace

Test(emulated_columns, widened_vectors_every_kind_of_pair) {
    std::mt19937_64 rng(14);
    const tscan_dtype pairs[][2] = {{TSCAN_UINT8, TSCAN_INT32},   {TSCAN_INT8, TSCAN_INT64},   {TSCAN_INT16, TSCAN_INT32},
                                    {TSCAN_FLOAT16, TSCAN_FLOAT32}, {TSCAN_BFLOAT16, TSCAN_FLOAT64}, {TSCAN_INT32, TSCAN_INT64},
                                    {TSCAN_FLOAT32, TSCAN_FLOAT64}, {TSCAN_UINT16, TSCAN_UINT64}};
    int k = 0;
    for (const auto &pair : pairs) {
        const size_t in_size = tscan_dtype_size(pair[0]), out_size = tscan_dtype_size(pair[1]);
        const int64_t w = 16 / (int64_t)in_size;
        const int64_t shapes[][3] = {{1, 3, 64 * w}, {15, 6, 40 * w}, {3, 11, 40 * w}};
        for (const auto &shape : shapes) {
            const int v = k++ % 8;
            const tscan_op op = v & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
            const int64_t total = shape[0] * shape[1] * shape[2];
            aligned_bytes in(total * in_size), out(total * out_size), want(total * out_size);
            fill(pair[0], op, in.p, total, rng);
            std::memset(out.p, 0xa5, out.size);
            tscan_tensor tin, tout, twant;
            const tscan_scan_desc desc = {op, 1, v & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (v & 4) != 0,
                                          TSCAN_ALGO_COLUMNS};
            cr_assert_eq(tscan_tensor_init(&tin, in.p, pair[0], 3, shape, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_tensor_init(&tout, out.p, pair[1], 3, shape, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_tensor_init(&twant, want.p, pair[1], 3, shape, nullptr), TSCAN_SUCCESS);
            cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());
            tscan_problem p;
            cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
            tscan_problem_init(&p, &desc, &tin, &tout);
            scan_args a = make_scan_args(&p);
            char text[160];
            std::snprintf(text, sizeof text, "%s %s into %s, %lld x %lld x %lld, variant %d", tscan_op_name(op),
                          tscan_dtype_name(pair[0]), tscan_dtype_name(pair[1]), (long long)shape[0], (long long)shape[1],
                          (long long)shape[2], v);
            cr_assert(widened_lines_packed(a, (int)w, in_size, out_size), "%s: not in vectors", text);
            pack_lines(a, w);
            dispatch_pair<emulated_widen_launch>(pair[0], pair[1], a);
            for (int64_t i = 0; i < total; ++i)
                cr_assert(std::memcmp(out.p + i * out_size, want.p + i * out_size, out_size) == 0,
                          "%s: element %lld differs from the reference", text, (long long)i);
        }
    }
}

// ---- the copies of broadcast lines -------------------------------------------------------

// n / d by fast_divisor against the division, at the ends of the 32-bit range and at random.
Test(emulated_replicate, fast_division_is_exact) {
    std::mt19937_64 rng(27);
    const uint32_t edges[] = {0u, 1u, 2u, 3u, 7u, 10u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu};
    for (int i = 0; i < 4000; ++i) {
        const uint32_t d = i < 11 ? std::max(edges[i], 1u) : i % 3 == 0 ? (uint32_t)(rng() % 300) + 1 : (uint32_t)rng() | 1u;
        const fast_divisor f = make_divisor(d);
        for (int j = 0; j < 200; ++j) {
            const uint32_t n = j < 11 ? edges[j] : j % 2 ? (uint32_t)rng() : (uint32_t)(rng() % 4096) * d - (j % 4 == 0);
            cr_assert_eq(f.div(n), n / d, "%u / %u: %u", n, d, f.div(n));
        }
    }
}

namespace {

// The output, out_offset elements into buffer (poisoned with 0xa5 before the kernel), against
// want, bit for bit, and every byte of buffer around it still poison.
void check_within_poison(const aligned_bytes &buffer, int64_t out_offset, const aligned_bytes &want, int64_t total,
                         size_t size, const char *text) {
    const unsigned char *const out = buffer.p + out_offset * (int64_t)size;
    for (int64_t i = 0; i < out_offset * (int64_t)size; ++i)
        cr_assert_eq(buffer.p[i], 0xa5, "%s: byte %lld before the output written", text, (long long)i);
    for (int64_t i = (out_offset + total) * (int64_t)size; i < (int64_t)buffer.size; ++i)
        cr_assert_eq(buffer.p[i], 0xa5, "%s: byte %lld after the output written", text, (long long)i);
    for (int64_t i = 0; i < total; ++i)
        cr_assert(std::memcmp(out + i * size, want.p + i * size, size) == 0, "%s: element %lld differs from the reference",
                  text, (long long)i);
}

template <int Size> struct emulated_replicate_launch {
    static void run(const replicate_args &a) { tscan_emu::launch(3, kReplicateThreads, replicate_kernel<Size>, a); }
};

struct replicate_case {
    tscan_dtype dtype;
    uint32_t ndim, axis;
    int64_t sizes[5], in_strides[5];  // 0: broadcast
    uint32_t groups;                  // expected, memory order
    int first_replicated;
    int64_t out_offset;               // elements past a 16-byte boundary
};

// The distinct lines scanned into the poisoned output by the reference (as AUTO's scan of the
// distinct view writes them), then the emulated copies: the whole output against the
// reference's scan of every line, bit for bit, and nothing written outside it.
void check_replicated(const replicate_case &c, int variant, std::mt19937_64 &rng) {
    const size_t size = tscan_dtype_size(c.dtype);
    const tscan_op op = variant & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
    int64_t total = 1, in_count = 1;
    for (uint32_t d = 0; d < c.ndim; ++d) {
        total *= c.sizes[d];
        in_count += c.in_strides[d] * (c.sizes[d] - 1);
    }
    aligned_bytes in(in_count * size), buffer((total + c.out_offset + 16) * size), want(total * size);
    fill(c.dtype, op, in.p, in_count, rng);
    std::memset(buffer.p, 0xa5, buffer.size);
    unsigned char *const out = buffer.p + c.out_offset * size;
    const tscan_scan_desc desc = {op, c.axis, variant & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (variant & 4) != 0,
                                  TSCAN_ALGO_AUTO};
    tscan_tensor tin, tout, twant, distinct_in, distinct_out;
    cr_assert_eq(tscan_tensor_init(&tin, in.p, c.dtype, c.ndim, c.sizes, c.in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, c.dtype, c.ndim, c.sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p, c.dtype, c.ndim, c.sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_distinct_view(&tin, &tout, c.axis, &distinct_in, &distinct_out);
    cr_assert_eq(tscan_scan_reference(&desc, &distinct_in, &distinct_out), TSCAN_SUCCESS, "%s", tscan_last_error());

    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem_init(&p, &desc, &tin, &tout);
    tscan_auto_policy policy = *tscan_auto_policy_for(90);
    policy.replicate_min_output_bytes = 0;  // every layout of the copies, whatever AUTO would take
    policy.replicate_min_row_bytes = 0;
    policy.replicate_repeated_max_elem_bytes = 8;
    policy.replicate_repeated_max_distinct_bytes = INT64_MAX;
    tscan_replication r;
    char text[200];
    std::snprintf(text, sizeof text, "%s %s, %lld x %lld x %lld x %lld x %lld axis %u, output offset %lld, variant %d",
                  tscan_op_name(op), tscan_dtype_name(c.dtype), (long long)c.sizes[0], (long long)c.sizes[1],
                  (long long)c.sizes[2], (long long)c.sizes[3], (long long)c.sizes[4], c.axis, (long long)c.out_offset,
                  variant);
    cr_assert(tscan_plan_replication(&p, &policy, &r), "%s: not replicated", text);
    cr_assert_eq(r.groups, c.groups, "%s: %u groups", text, r.groups);
    cr_assert_eq(r.first_replicated, c.first_replicated, "%s: first group replicated %d", text, r.first_replicated);
    const replicate_args a = replicate_args_of(r);
    switch (size) {
    case 1: emulated_replicate_launch<1>::run(a); break;
    case 2: emulated_replicate_launch<2>::run(a); break;
    case 4: emulated_replicate_launch<4>::run(a); break;
    default: emulated_replicate_launch<8>::run(a); break;
    }
    check_within_poison(buffer, c.out_offset, want, total, size, text);
}

}  // namespace

// Each layout of broadcast lines the random sweep draws: the output's fastest dimension repeated
// (whole vectors of one element, rows shorter than a vector), an inner or outer run of kept
// dimensions repeated (rows on the grid and off it, realigned), two replicated groups; every
// element size, outputs off the 16-byte grid.
Test(emulated_replicate, broadcast_lines_copied_from_the_distinct_ones) {
    std::mt19937_64 rng(28);
    const replicate_case cases[] = {
        {TSCAN_INT8, 2, 0, {300, 1049}, {1, 0}, 2, 1, 0},                        // fastest repeated
        {TSCAN_UINT16, 2, 0, {700, 5}, {1, 0}, 2, 1, 3},                         // rows under a vector
        {TSCAN_FLOAT64, 2, 0, {900, 5}, {1, 0}, 2, 1, 1},
        {TSCAN_INT8, 3, 0, {3, 34, 1299}, {34, 1, 0}, 2, 1, 5},                  // an axis of 3 over repeated lines
        {TSCAN_INT8, 4, 2, {3, 95, 8, 6}, {0, 48, 6, 1}, 2, 0, 0},               // outer copies of a lanes block
        {TSCAN_FLOAT16, 4, 3, {6, 3, 5, 689}, {2067, 689, 0, 1}, 3, 0, 7},       // inner copies, rows off the grid
        {TSCAN_FLOAT32, 4, 1, {4, 37, 3, 41}, {0, 41, 0, 1}, 4, 0, 1},           // two replicated groups
        {TSCAN_UINT32, 3, 1, {5, 333, 4}, {0, 1, 0}, 3, 1, 2},                   // repeated fastest and outer
        {TSCAN_INT64, 3, 2, {3, 4, 517}, {517, 0, 1}, 3, 0, 0},
        {TSCAN_BFLOAT16, 3, 0, {77, 3, 40}, {40, 0, 1}, 3, 0, 5},                // kept rows of 5 vectors
    };
    int variant = 0;
    for (const replicate_case &c : cases)
        for (int v = 0; v < 2; ++v) check_replicated(c, variant++ % 8, rng);
}

// ---- the gather of permuted inputs -----------------------------------------------------

namespace {

template <int Size> struct emulated_gather_launch {
    static void run(const gather_args &a) { tscan_emu::launch(3, kGatherThreads, gather_kernel<Size>, a); }
};

struct gather_case {
    tscan_dtype dtype;
    uint32_t ndim, axis;
    int64_t sizes[5];
    uint32_t order[5];     // the input's dimensions, fastest first
    int negate;            // a dimension (not the input's fastest) whose input stride is negated; -1: none
    int64_t out_offset;    // elements past a 16-byte boundary
};

// The input in c's order, the output packed and poisoned around; the emulated gather, then the
// reference's scan of the output in place (as AUTO's scan in place follows the gather), against
// the reference's scan of the input: bit for bit, and nothing written outside the output.
void check_gathered(const gather_case &c, int variant, std::mt19937_64 &rng) {
    const size_t size = tscan_dtype_size(c.dtype);
    const tscan_op op = variant & 1 ? TSCAN_OP_PROD : TSCAN_OP_SUM;
    int64_t total = 1, in_strides[5], step = 1, in_base = 0;
    for (uint32_t d = 0; d < c.ndim; ++d) total *= c.sizes[c.order[d]];
    for (uint32_t k = 0; k < c.ndim; ++k) {
        const uint32_t d = c.order[k];
        in_strides[d] = (int)d == c.negate ? -step : step;
        if ((int)d == c.negate) in_base += step * (c.sizes[d] - 1);
        step *= c.sizes[d];
    }
    aligned_bytes in(total * size), buffer((total + c.out_offset + 16) * size), want(total * size);
    fill(c.dtype, op, in.p, total, rng);
    std::memset(buffer.p, 0xa5, buffer.size);
    unsigned char *const out = buffer.p + c.out_offset * size;
    const tscan_scan_desc desc = {op, c.axis, variant & 2 ? TSCAN_DECREASING : TSCAN_INCREASING, (variant & 4) != 0,
                                  TSCAN_ALGO_AUTO};
    tscan_tensor tin, tout, twant;
    cr_assert_eq(tscan_tensor_init(&tin, in.p + in_base * size, c.dtype, c.ndim, c.sizes, in_strides), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&tout, out, c.dtype, c.ndim, c.sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&twant, want.p, c.dtype, c.ndim, c.sizes, nullptr), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&desc, &tin, &twant), TSCAN_SUCCESS, "%s", tscan_last_error());

    tscan_problem p;
    cr_assert_eq(tscan_validate(&desc, &tin, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    tscan_problem_init(&p, &desc, &tin, &tout);
    tscan_auto_policy policy = *tscan_auto_policy_for(90);
    policy.gather_min_output_bytes = 0;  // every layout of the gather, whatever AUTO would take
    policy.gather_min_lane_gap_bytes = 0;
    policy.gather_min_sharing_lines = 0;
    policy.gather_wide_min_reuse_bytes = 0;
    tscan_gather g;
    char text[200];
    std::snprintf(text, sizeof text, "%s %s, %lld x %lld x %lld x %lld x %lld axis %u, input order %u %u %u, variant %d",
                  tscan_op_name(op), tscan_dtype_name(c.dtype), (long long)c.sizes[0], (long long)c.sizes[1],
                  (long long)c.sizes[2], (long long)c.sizes[3], (long long)c.sizes[4], c.axis, c.order[0], c.order[1],
                  c.order[2], variant);
    cr_assert(tscan_plan_gather(&p, &policy, &g), "%s: not gathered", text);
    const gather_args a = gather_args_of(g);
    switch (size) {
    case 1: emulated_gather_launch<1>::run(a); break;
    case 2: emulated_gather_launch<2>::run(a); break;
    case 4: emulated_gather_launch<4>::run(a); break;
    default: emulated_gather_launch<8>::run(a); break;
    }
    cr_assert_eq(tscan_scan_reference(&desc, &tout, &tout), TSCAN_SUCCESS, "%s", tscan_last_error());
    check_within_poison(buffer, c.out_offset, want, total, size, text);
}

}  // namespace

// Permuted inputs the random sweep draws: a plain transpose, U of several dimensions (the
// input's run through a permutation), V short (tiles long along U, lanes of a warp over several
// u), tiles cut off along both, a rest of several dimensions, a negated input dimension; every
// element size, outputs off the 16-byte grid.
Test(emulated_gather, permuted_inputs_gathered_in_the_outputs_order) {
    std::mt19937_64 rng(29);
    const gather_case cases[] = {
        {TSCAN_FLOAT32, 2, 1, {300, 170, 1, 1, 1}, {0, 1}, -1, 0},                 // a transpose
        {TSCAN_INT32, 5, 1, {5, 3, 4, 2, 39}, {2, 3, 4, 1, 0}, -1, 1},            // U of 4 x 2, V of 39, a rest
        {TSCAN_INT16, 3, 2, {19, 250, 8, 1, 1}, {0, 1, 2}, -1, 3},                // V of 8: lanes over 4 u
        {TSCAN_FLOAT16, 3, 2, {196, 21, 6, 1, 1}, {0, 1, 2}, 1, 5},               // V of 6, a negated dimension
        {TSCAN_UINT8, 3, 1, {64, 30, 100, 1, 1}, {0, 1, 2}, -1, 7},               // U of 64 x 30
        {TSCAN_INT8, 4, 0, {7, 3, 130, 140, 1}, {2, 3, 0, 1}, 0, 0},              // tiles of 128 x 128 cut off
        {TSCAN_FLOAT64, 3, 0, {70, 45, 3, 1, 1}, {1, 2, 0}, -1, 1},
        {TSCAN_UINT64, 4, 3, {2, 33, 3, 65, 1}, {1, 0, 3, 2}, -1, 0},
    };
    int variant = 0;
    for (const gather_case &c : cases)
        for (int v = 0; v < 2; ++v) check_gathered(c, variant++ % 8, rng);
}

// 1-byte products four to a word (byte_word_product, byte_word_product_scan: rows and lookback's
// line chunks) against bytes multiplied one at a time, on random words and running values
// (whose bits above the low byte are whatever earlier products left).
Test(emulated_bytes, products_four_to_a_word) {
    std::mt19937 rng(27);
    for (int i = 0; i < 200000; ++i) {
        const uint32_t word = rng(), start = rng();
        uint32_t running = start & 0xffu, inclusive = 0, exclusive = 0;
        for (int j = 0; j < 4; ++j) {
            exclusive |= running << 8 * j;
            running = running * (word >> 8 * j & 0xffu) & 0xffu;
            inclusive |= running << 8 * j;
        }
        cr_assert_eq(byte_word_product(word, start) & 0xffu, running, "total of %08x from %08x", word, start);
        for (int ex = 0; ex < 2; ++ex) {
            uint32_t acc = start;
            const uint32_t out = byte_word_product_scan(word, acc, ex != 0);
            cr_assert_eq(out, ex ? exclusive : inclusive, "%s scan of %08x from %08x: %08x", ex ? "exclusive" : "inclusive",
                         word, start, out);
            cr_assert_eq(acc & 0xffu, running, "running product past %08x from %08x", word, start);
        }
    }
}

// slot_io::transpose (lookback's line-by-line stores): element j of slot e becomes element e
// of slot j, for the byte-permute forms (4 bytes, 2 halves a 32-bit slot) and the general one.
template <class T, int V> static void check_transpose(std::mt19937_64 &rng) {
    using IO = slot_io<T, V>;
    using S = typename IO::S;
    for (int i = 0; i < 20000; ++i) {
        S s[V], t[V];
        for (int j = 0; j < V; ++j) s[j] = t[j] = (S)rng();
        IO::transpose(t);
        for (int e = 0; e < V; ++e)
            for (int j = 0; j < V; ++j)
                cr_assert_eq(IO::get(t[e], j), IO::get(s[j], e), "%zu-byte elements, %d slots: slot %d element %d",
                             sizeof(T), V, e, j);
    }
}
Test(emulated_bytes, transposed_slots) {
    std::mt19937_64 rng(28);
    check_transpose<uint8_t, 4>(rng);
    check_transpose<uint16_t, 2>(rng);
    check_transpose<uint32_t, 2>(rng);
}
