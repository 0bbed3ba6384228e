// stream/kernel.cuh - the stream kernel and its arguments (stream_layout builds them from a
// problem; cuda/stream.cu has the strategy): one block a tile of the flat stream, claimed in
// scan order, chained by decoupled look-back with segment starts.
// Also compiled for the host by tests/emulated/, which runs it block by block on CPU threads.
#pragma once

#include "lookback/launch.cuh"  // wait_for_clear
#include "lookback/status.cuh"

namespace tscan {
namespace {

// Policy (bench/NOTES.md, "Stream"): 256 threads, four 16-byte input vectors each, so that a
// tile is 16 KB of input whatever the element size.
constexpr int kStreamThreads = kernel_policy::stream_threads;
constexpr int kStreamWarps = kStreamThreads / 32;
constexpr int kStreamVectors = kernel_policy::stream_vectors;
// Blocks an SM holds at least (40 registers a thread): each holds its tile from its claim to its
// last store, so the SM's bytes of DRAM reads in flight grow with the blocks it holds.
constexpr int kStreamBlocksPerSm = kernel_policy::stream_blocks_per_sm;
constexpr int64_t kStreamTileVectors = (int64_t)kStreamThreads * kStreamVectors;
// Elements a tile: 16 KB of input.
constexpr int64_t stream_tile_elements(size_t in_elem_size) { return kStreamTileVectors * (16 / (int64_t)in_elem_size); }
// Input vectors a thread reads of its tile's halo (stream_args::halo), and the longest line
// whose halo they cover: a halo holds fewer than n elements and ends on the 16-byte grid.
constexpr int kHaloVectors = kernel_policy::stream_halo_vectors;
constexpr int64_t stream_halo_max_n(size_t in_elem_size) {
    return (int64_t)kStreamThreads * kHaloVectors * (16 / (int64_t)in_elem_size);
}

// The request as the stream kernel sees it: `total` elements from `in` and `out` (their lowest
// addresses), lines of n elements end to end, scanned backwards when `reverse`. Tiles and
// vectors are laid on the output's 16-byte grid: memory position v is element v - head, the
// first `head` positions (the output's misalignment, in elements) being empty.
struct stream_args {
    const char *in;
    char *out;
    int64_t total;
    int64_t head;
    int64_t n;
    int64_t tiles;
    bool reverse;
    bool exclusive;
    // An input whose lines do not lie end to end as the output's do (a padded pitch, a slice, a
    // broadcast) or is not aligned as the output is: each line read from its own offset
    // (lines.in_strides), one element at a time, into the same registers. The output stays
    // one stream of aligned vectors.
    bool gather;
    // Lines of at most stream_halo_max_n elements, not in place: a tile's block reads the
    // elements of its first line that lie before it (its halo, fewer than n: from L2, where the
    // tile before was just read) rather than look back; no claims, statuses nor workspace.
    bool halo;
    batch_map lines;
    // A gathered input of fewer than 2^32 elements (`decodes`) finds a chunk's first line by
    // 32-bit multiplicative division: n and the batch sizes, innermost first. The chunk's next
    // lines follow by adds: line_pitch elements on, or run_step where a run of line_run lines
    // (the innermost batch dimension) ends; a chunk that would end a run of the two innermost
    // (line_run2 lines) finds each line afresh. A run of 0 lines never ends.
    bool decodes;
    fast_divisor n_div;  // n (capped at 2^32 - 1); also a tile's place in its line, where that fits 32 bits
    // Bit k set where k is a multiple of n, k < 64: a chunk's line starts after its first.
    uint64_t start_pattern;
    fast_divisor line_sizes[TSCAN_MAX_DIMS - 1];
    int64_t line_pitch, run_step;
    uint32_t line_run, line_run2;
};

// A 16-byte store as one instruction: a uint4 assigned from registers can leave the compiler
// as four 4-byte stores (the stream kernel's did), each a partial sector for the L2.
template <class T> __device__ __forceinline__ void store_vector(T *p, uint4 v) {
#ifdef __CUDA_ARCH__
    __stwb(reinterpret_cast<uint4 *>(p), v);
#else
    *reinterpret_cast<uint4 *>(p) = v;
#endif
}
// Slot of vector x of a warp's staged 128 (stream_kernel): bits 3-4 of x turn its place in
// its 128-byte row, so that eight lanes reading vectors 4 l + i, or writing 32 i + l, meet
// eight distinct groups of banks.
__device__ __forceinline__ int staged_slot(int x) { return x ^ ((x >> 3) & 3); }

// Element offset of line b of a gathered input, in 64 bits: a chunk's first line where the
// input does not decode, and each next line where a chunk ends a run of two dimensions. Out of
// line: inlined in every unrolled element it would swell the kernel.
// (__noinline__ is nvcc's word; a host compiler running tests/emulated takes GNU's.)
#ifdef __CUDACC__
#define TSCAN_OUT_OF_LINE __noinline__
#else
#define TSCAN_OUT_OF_LINE __attribute__((noinline))
#endif
__device__ TSCAN_OUT_OF_LINE int64_t gathered_line_offset(const batch_map &lines, int64_t b) {
    int64_t in_off = 0, out_off = 0;
    lines.offsets(b, in_off, out_off);
    return in_off;
}
// Line b of a gathered input that decodes: its element offset, and its places in the runs of
// the innermost batch dimension and of the two innermost. Inline: once a chunk, before its loads.
struct line_place {
    int64_t at;
    uint32_t in_run, in_run2;
};
__device__ __forceinline__ line_place decode_line(const stream_args &a, uint32_t b) {
    line_place p{0, 0, 0};
    const int ndim = a.lines.ndim;
#pragma unroll
    for (int j = 0; j < TSCAN_MAX_DIMS - 2; ++j)  // innermost first; the outermost takes what is left
        if (j + 1 < ndim) {
            const uint32_t q = a.line_sizes[j].div(b), digit = b - q * a.line_sizes[j].d;
            p.at += (int64_t)digit * a.lines.in_strides[ndim - 1 - j];
            if (j == 0) p.in_run = p.in_run2 = digit;
            if (j == 1) p.in_run2 += digit * a.line_sizes[0].d;
            b = q;
        }
    p.at += (int64_t)b * a.lines.in_strides[0];
    return p;
}

// The layout the stream takes: an output whose lines lie end to end (its batch dimensions
// packed row-major, lines n apart), read and written forward with unit steps. An input laid
// out the same way, as far off the 16-byte grid as the output, is read as one stream too; any
// other input with a unit step along the axis is gathered line by line (stream_args::gather).
bool stream_layout(const tscan_problem *p, stream_args *a) {
    // (Lines of one element take no step: any step is unit.)
    if (p->n > 1 && (p->in_step != 1 || p->out_step != 1)) return false;
    int64_t packed = p->n;
    for (int d = (int)p->batch_ndim - 1; d >= 0; --d) {
        if (p->out_batch_strides[d] != packed) return false;
        packed *= p->batch_sizes[d];
    }
    a->in = p->in;
    a->out = p->out;
    a->total = p->n * p->lines;
    a->head = (int64_t)((uintptr_t)p->out % 16 / p->out_elem_size);  // validation: element-aligned
    a->n = p->n;
    a->halo = p->n <= stream_halo_max_n(p->elem_size) && p->in != p->out;  // in place, the tile before may have stored over it
    a->reverse = p->reverse != 0;
    a->exclusive = p->exclusive != 0;
    const int64_t tile = stream_tile_elements(p->elem_size);
    a->tiles = (a->head + a->total + tile - 1) / tile;
    a->gather = ((uintptr_t)p->in - (uintptr_t)a->head * p->elem_size) % 16 != 0;
    a->lines.ndim = (int)p->batch_ndim;
    const int nb = (int)p->batch_ndim;
    a->decodes = a->total < (int64_t)UINT32_MAX;
    // (Capped: the kernel divides by n_div only where n fits 32 bits, that is below a tile's
    // length, where the input decodes, or for a tile's place in its line where it checks n.)
    a->n_div = make_divisor((uint32_t)std::min<int64_t>(p->n, UINT32_MAX));
    a->start_pattern = 0;
    for (int64_t k = 0; k < 64; k += p->n) a->start_pattern |= 1ull << k;
    if (a->decodes) {
        for (int j = 0; j < nb; ++j) a->line_sizes[j] = make_divisor((uint32_t)p->batch_sizes[nb - 1 - j]);
    }
    a->line_pitch = nb > 0 ? p->in_batch_strides[nb - 1] : 0;
    a->run_step = nb > 1 ? p->in_batch_strides[nb - 2] - (p->batch_sizes[nb - 1] - 1) * a->line_pitch : 0;
    a->line_run = nb > 1 ? (uint32_t)p->batch_sizes[nb - 1] : 0;
    a->line_run2 = nb > 2 ? (uint32_t)(p->batch_sizes[nb - 1] * p->batch_sizes[nb - 2]) : 0;
    for (int d = 0; d < TSCAN_MAX_DIMS - 1; ++d) {
        const bool used = d < (int)p->batch_ndim;
        a->lines.sizes[d] = used ? p->batch_sizes[d] : 1;
        a->lines.in_strides[d] = used ? p->in_batch_strides[d] : 0;
        a->lines.out_strides[d] = used ? p->out_batch_strides[d] : 0;
        a->gather = a->gather || (used && p->in_batch_strides[d] != p->out_batch_strides[d]);
    }
    return true;
}

// An input element as the output's accumulator: integers as C converts them to the output type,
// floats exactly.
template <tscan_dtype In, tscan_dtype Out>
__device__ __forceinline__ typename dtype_traits<Out>::A stream_load(typename dtype_traits<In>::T x) {
    using A = typename dtype_traits<Out>::A;
    if constexpr (In == Out) return dtype_traits<Out>::load(x);
    else if constexpr (tscan_kind_of(In) == TSCAN_KIND_float) return (A)dtype_traits<In>::load(x);
    else return (A)(typename dtype_traits<Out>::T)x;
}

// A piece of the stream's scan: whether it holds a segment start, and the value since its last
// start (seeded with the scan's start value there), or its whole reduction if it holds none.
template <class A> struct segment {
    bool starts;
    A value;
};
// a then b, b later in the stream.
template <class A, class Op>
__device__ __forceinline__ segment<A> then(const Op &op, segment<A> a, segment<A> b) {
    return {a.starts || b.starts, b.starts ? b.value : op(a.value, b.value)};
}

// An inclusive scan of the first Width lanes' values, each segment restarting where `starts`
// has the lane's bit: a lane takes in the lanes from the last start up to it, so that the
// starts need no shuffles (lanes past Width are left out of every other lane's scan).
template <int Width, class A, class Op>
__device__ __forceinline__ A segmented_lane_scan(const Op &op, A value, unsigned starts, int lane) {
    const unsigned starts_to_lane = starts & (kFullMask >> (31 - lane));
    const int scan_from = starts_to_lane ? 31 - __clz(starts_to_lane) : 0;
#pragma unroll
    for (int d = 1; d < Width; d *= 2) {
        const A up = __shfl_up_sync(kFullMask, value, d);
        if (lane - d >= scan_from) value = op(up, value);
    }
    return value;
}

// A status of word_parts<A> words (lookback/status.cuh's protocol): publish one state of it,
// or wait until every part says the same state and take its words.
template <class A> __device__ __forceinline__ void publish_words(unsigned long long *words, A value, tile_flag state) {
#pragma unroll
    for (int q = 0; q < word_parts<A>(); ++q)
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[q])
            .store(status_word(value, q, state), cuda::memory_order_relaxed);
}
// A waiting thread pauses between reads of a status, so that its spin leaves the issue slots
// to the SM's other blocks (a stream tile's scan is issue-bound).
__device__ __forceinline__ void backoff() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(kernel_policy::stream_backoff_ns);
#endif
}
template <int Parts> __device__ __forceinline__ void wait_for_words(unsigned long long *words, unsigned long long (&w)[Parts]) {
    for (;;) {
        bool settled = true;
#pragma unroll
        for (int q = 0; q < Parts; ++q) w[q] = load_relaxed(words[q]);
#pragma unroll
        for (int q = 0; q < Parts; ++q) settled = settled && (uint32_t)w[q] != kEmpty && (uint32_t)w[q] == (uint32_t)w[0];
        if (settled) return;
        backoff();
    }
}

// Block c (its claim) scans logical tile c. Thread t holds the 64 bytes of logical vectors
// 4 t .. 4 t + 3 (a chunk), so that a thread takes part in one warp scan a tile, not one a vector,
// and finds its line starts once (a bit mask). Two passes over the registers: the first reduces
// the chunk into a segment, which shuffles and the look-back turn into the value running into it;
// the second rescans the chunk from that value and stores it. Loads and stores stay coalesced:
// a warp's vectors pass through shared memory between lanes and chunks (staged_slot), and a
// wider output's vectors, a lane's sector in two halves, are traded between neighbouring lanes.
template <tscan_dtype In, tscan_dtype Out, bool Prod>
__global__ void __launch_bounds__(kStreamThreads, kStreamBlocksPerSm) stream_kernel(const __grid_constant__ stream_args a, unsigned long long *words) {
    using TI = typename dtype_traits<In>::T;
    using TO = typename dtype_traits<Out>::T;
    using A = typename dtype_traits<Out>::A;
    constexpr int kPer = 16 / (int)sizeof(TI);  // elements an input vector
    constexpr int kOutVectors = kPer * (int)sizeof(TO) / 16;
    constexpr int kOutPer = 16 / (int)sizeof(TO);  // elements an output vector
    constexpr int64_t kTile = stream_tile_elements(sizeof(TI));
    constexpr int kChunk = kStreamVectors * kPer;  // elements a thread: 64 bytes of input
    using chunk_bits = std::conditional_t<(kChunk > 32), uint64_t, uint32_t>;  // a bit an element
    constexpr chunk_bits kChunkMask = kChunk == 8 * sizeof(chunk_bits) ? ~chunk_bits{0} : (chunk_bits{1} << kChunk) - 1;
    constexpr int kParts = word_parts<A>();
    const scan_op<A> op{Prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;

    // A tile that reads its halo (stream_args::halo) waits on no other: its block's index is
    // its place. Others are claimed in scan order (forward progress: cuda/stream.cu).
    __shared__ int64_t s_claim;
    if (!a.halo) {
        wait_for_clear();
        if (t == 0) s_claim = (int64_t)atomicAdd(words, 1ull);
        __syncthreads();
    }
    const int64_t c = a.halo ? (int64_t)blockIdx.x : s_claim;

    // The memory tile [lo, hi) and where its logical start sits in the scan.
    const int64_t j = a.reverse ? a.tiles - 1 - c : c;
    const int64_t end = a.head + a.total;  // memory positions [head, end) hold the elements
    const int64_t lo = j * kTile, hi = min(lo + kTile, end);
    const int64_t vectors = (hi - lo + kPer - 1) / kPer;  // memory vectors, the last maybe partial
    // Logical element e of logical vector L is scan position base + L * kPer + e: a decreasing
    // scan's partial vector puts its missing elements first, at negative positions.
    const int64_t base = a.reverse ? end - hi - (vectors * kPer - (hi - lo)) : lo - a.head;
    // (Multiplicative division where base and n fit 32 bits, as they do but in streams of 2^32
    // elements or more and a decreasing scan's partial first vector.)
    const int64_t base_mod = base >= 0 && base < UINT32_MAX && a.n < UINT32_MAX ? a.n_div.mod((uint32_t)base)
                                                                                : ((base % a.n) + a.n) % a.n;

    const TI *const in = reinterpret_cast<const TI *>(a.in);
    TO *const out = reinterpret_cast<TO *>(a.out);
    // The thread's logical vectors L0 .. L0 + kStreamVectors - 1 (logical elements from L0 * kPer,
    // item q of items): kChunk consecutive elements, in memory the vectors from chunk_lo.
    const int64_t L0 = (int64_t)t * kStreamVectors;
    const int64_t chunk_lo = lo + (a.reverse ? vectors - L0 - kStreamVectors : L0) * kPer;
    // Memory element of the lowest address of logical vector L.
    const auto first = [&](int64_t L) { return lo + (a.reverse ? vectors - 1 - L : L) * kPer; };
    const int64_t present_lo = max(lo, a.head);  // memory elements [present_lo, hi) are the tile's
    // The warp's 128 vectors pass through its own 2 KB of shared memory where they are all
    // whole (all but the stream's two ends): loaded and stored coalesced, a vector a lane and
    // 512 bytes a warp an access, and read into (written from) chunks. A thread's own four
    // vectors would take half sectors an access, which the L2 does not join.
    __shared__ uint4 s_vectors[kStreamWarps][32 * kStreamVectors];
    uint4 *const staged = s_vectors[warp];
    const int64_t warp_L = (int64_t)warp * 32 * kStreamVectors;  // the warp's first logical vector
    const int64_t warp_lo = first(a.reverse ? warp_L + 32 * kStreamVectors - 1 : warp_L);
    const bool warp_whole = warp_lo >= present_lo && warp_lo + 32 * kStreamVectors * kPer <= hi;
    // The stage holds the chunks' elements in logical order: a decreasing scan reverses each
    // vector once, as it is staged, and once more as it is stored.
    const auto logical = [&](uint4 x) { return a.reverse ? item_pack<TI, kPer>::reverse_elements(x) : x; };
    // Memory vector v of the thread's chunk into its logical slot (kStreamVectors - 1 - v when reversed).
    const auto stage_memory_vector = [&](int v, uint4 x) {
        staged[staged_slot(kStreamVectors * lane + (a.reverse ? kStreamVectors - 1 - v : v))] = logical(x);
    };
    // Where the warp's vectors are whole, the lane's logical vectors warp_L + 32 i + lane lie a
    // fixed step of elements apart in memory: downwards when reversed.
    const int64_t lane_first = first(warp_L + lane) - a.head, warp_step = (a.reverse ? -32 : 32) * kPer;
    if (!a.gather && warp_whole) {
#pragma unroll
        for (int i = 0; i < kStreamVectors; ++i)
            staged[staged_slot(32 * i + lane)] = logical(*reinterpret_cast<const uint4 *>(in + lane_first + i * warp_step));
    } else if (!a.gather && chunk_lo >= present_lo && chunk_lo + kChunk <= hi) {
#pragma unroll
        for (int v = 0; v < kStreamVectors; ++v)
            stage_memory_vector(v, *reinterpret_cast<const uint4 *>(in + (chunk_lo + v * kPer - a.head)));
    } else {
        // Element by element, in memory order: a gathered input (output elements chunk_lo - head
        // .. from their lines' own places in the input), or the stream's partial ends or past them,
        // where what is missing reads as zeros. Those sit before the stream's first start or
        // after its last element, in either direction; vectors past the tile's last are left out
        // of the scan below. A vector at a time, its elements' indices constants (any other puts
        // them in local memory); 16 loads at most are unrolled together, so that an SM holds
        // kStreamBlocksPerSm blocks without spills.
        const auto present = [&](int q) { return chunk_lo + q >= present_lo && chunk_lo + q < hi; };
        int64_t line = 0, k = 0, line_at = 0;
        uint32_t in_run = 0;
        bool by_adds = !a.gather;
        if (a.gather) {  // the line and place of the chunk's first present element
            const int64_t first_present = chunk_lo < hi ? max(chunk_lo, present_lo) - a.head : 0;
            if (a.decodes) {
                line = a.n_div.div((uint32_t)first_present);
                k = first_present - line * a.n;
                const line_place at = decode_line(a, (uint32_t)line);
                line_at = at.at;
                in_run = at.in_run;
                // The lines the chunk reaches after its first (k < n, so that the sum fits).
                const uint32_t more = a.n >= kChunk ? 1 : a.n_div.div((uint32_t)k + kChunk - 1);
                by_adds = a.line_run2 == 0 || at.in_run2 + more < a.line_run2;
            } else {
                line = first_present / a.n;
                k = first_present - line * a.n;
                line_at = gathered_line_offset(a.lines, line);
            }
        }
        [[maybe_unused]] constexpr int kVectorsUnrolled = kPer > 4 ? 1 : kStreamVectors;  // (a host compiler ignores the pragma)
        if (by_adds) {
            // The next line's place is an add, chosen without a branch, so that every load of a
            // vector issues before any is used (a call between loads waits on those before it).
#pragma unroll kVectorsUnrolled
            for (int v = 0; v < kStreamVectors; ++v) {
                item_pack<TI, kPer> x{};  // set() keeps a word's other elements: start them defined
#pragma unroll
                for (int e = 0; e < kPer; ++e) {
                    const int q = v * kPer + e;
                    const bool here = present(q);
                    x.set(e, here ? in[a.gather ? line_at + k : chunk_lo + q - a.head] : TI{});
                    const bool line_ends = here && k + 1 == a.n, run_ends = line_ends && in_run + 1 == a.line_run;
                    k = line_ends ? 0 : k + here;
                    in_run = run_ends ? 0 : in_run + line_ends;
                    line_at += run_ends ? a.run_step : line_ends ? a.line_pitch : 0;
                }
                stage_memory_vector(v, x.vector(0, false));
            }
        } else {
#pragma unroll kVectorsUnrolled
            for (int v = 0; v < kStreamVectors; ++v) {
                item_pack<TI, kPer> x{};
#pragma unroll
                for (int e = 0; e < kPer; ++e) {
                    const int q = v * kPer + e;
                    const bool here = present(q);
                    x.set(e, here ? in[line_at + k] : TI{});
                    if (here && ++k == a.n && chunk_lo + q + 1 < hi) {
                        k = 0;
                        line_at = gathered_line_offset(a.lines, ++line);
                    }
                }
                stage_memory_vector(v, x.vector(0, false));
            }
        }
    }
    // The halo: scan positions [base - base_mod, base) of the line the tile begins in, memory
    // [halo_lo, halo_lo + base_mod) below the tile (above it when reversed), reduced. Read as the
    // input vectors of the memory grid that cover it, counted from the tile's edge, kHaloVectors
    // a thread (stream_layout bounds n to that); a gathered input reads the same places element
    // by element from its one line.
    A halo = op.neutral();
    if (a.halo && c > 0 && base_mod > 0) {
        const int64_t halo_lo = a.reverse ? hi : lo - base_mod;
        int64_t line_base = 0;  // a gathered input's element of output element o: line_base + o
        if (a.gather) {
            const int64_t o = halo_lo - a.head, line = a.decodes ? (int64_t)a.n_div.div((uint32_t)o) : o / a.n;
            line_base = (a.decodes ? decode_line(a, (uint32_t)line).at : gathered_line_offset(a.lines, line)) - line * a.n;
        }
#pragma unroll
        for (int h = 0; h < kHaloVectors; ++h) {
            // Halo vector k, its elements k kPer .. from the tile's edge, from memory element m;
            // `inside` of them lie in the halo, those nearest the edge: bit e of `inside_bits`
            // for its element e in memory order.
            const int k = h * kStreamThreads + t;
            const int64_t m = a.reverse ? hi + (int64_t)k * kPer : lo - (int64_t)(k + 1) * kPer;
            const int inside = (int)min(base_mod - (int64_t)k * kPer, (int64_t)kPer);
            if (inside <= 0) continue;
            constexpr unsigned kAll = (1u << kPer) - 1;
            const unsigned inside_bits = a.reverse ? kAll >> (kPer - inside) : kAll & (kAll << (kPer - inside));
            const auto in_halo = [&](int e) { return (inside_bits >> e & 1) != 0; };
            item_pack<TI, kPer> x{};
            if (!a.gather && m >= a.head && m + kPer <= end) {
                x.set_vector(0, *reinterpret_cast<const uint4 *>(in + (m - a.head)), false);
            } else {
#pragma unroll
                for (int e = 0; e < kPer; ++e)
                    if (in_halo(e)) x.set(e, in[line_base + (m + e - a.head)]);
            }
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                if (in_halo(e)) halo = op(halo, stream_load<In, Out>(x.get(e)));
        }
    }
    __syncwarp();  // every load issued before the scan (lookback/one_wave.cuh says why)

    // The chunk's segment starts, bit q for item q: the first where the thread's first logical
    // element lies `to_start` elements before a line's start, then every n (start_pattern).
    // Items of vectors past the tile's last one hold no start.
    const chunk_bits starts = [&] {
        int64_t r = base_mod + L0 * kPer;  // < n + kTile
        if (a.n >= kTile) r = r >= a.n ? r - a.n : r;
        else r = a.n_div.mod((uint32_t)r);
        const int64_t to_start = r == 0 ? 0 : a.n - r;
        const int64_t in_tile = (vectors - L0) * kPer;  // items of the chunk in the tile
        const chunk_bits present = in_tile >= kChunk ? kChunkMask : in_tile > 0 ? (chunk_bits{1} << in_tile) - 1 : 0;
        return to_start < kChunk ? (chunk_bits)(a.start_pattern << to_start) & present : chunk_bits{0};
    }();
    const A start_value = op.start(a.exclusive);
    // Logical vector i of the chunk, read from the stage in each pass rather than held in
    // registers across the look-back, so that an SM holds more blocks (kStreamBlocksPerSm).
    const auto chunk_vector = [&](int i) {
        item_pack<TI, kPer> v;
        v.set_vector(0, staged[staged_slot(kStreamVectors * lane + i)], false);
        return v;
    };

    // Sums and products of 1-byte elements into 1-byte outputs go a word of four elements at a
    // time (common.cuh: a result's low byte depends only on the terms' low bytes): pass 1
    // wherever it can, pass 2 where no lane's word holds a start (a warp vote, so that the warp
    // takes one path), an element at a time elsewhere. (Into wider outputs, four dp4a a word and
    // the word's sums set one by one ran 1 % slower: bench/NOTES.md §2, "1-byte sums in words".)
    constexpr bool kByteWords = sizeof(TI) == 1 && sizeof(TO) == 1;

    // Pass 1: the chunk as a segment, then the warp's scan of them in logical order.
    // (Vectors past the tile's last one are empty: in a decreasing scan they come after the
    // partial tile's data, which is the stream's first tile and has successors.)
    segment<A> s = {starts != 0, op.neutral()};
    if constexpr (kByteWords) {
        // An integer sum starts from 0 and a product from 1, exclusive or not (start_value is
        // neutral()): the segment is the total of the chunk's bytes from its last start on, a word
        // at a time, the bytes before the start masked to that value; a 1-byte output keeps the
        // low byte, which any byte's extension leaves alone.
        const int last = starts ? 63 - __clzll((long long)starts) : 0;
        uint32_t total = op.neutral();
#pragma unroll
        for (int i = 0; i < kStreamVectors; ++i) {
            if (L0 + i < vectors) {
                const item_pack<TI, kPer> items = chunk_vector(i);
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    const int before_start = min(max(last - (i * 16 + w * 4), 0), 4);  // its bytes before the start
                    const unsigned keep = before_start == 4 ? 0u : ~0u << 8 * before_start;
                    total = byte_word_reduce(byte_word_masked(items.words[w], keep, Prod), total, Prod);
                }
            }
        }
        s.value = total;
    } else {
#pragma unroll
        for (int i = 0; i < kStreamVectors; ++i) {
            if (L0 + i < vectors) {
                const item_pack<TI, kPer> items = chunk_vector(i);
#pragma unroll
                for (int e = 0; e < kPer; ++e) {
                    const int q = i * kPer + e;
                    s.value = op(starts >> q & 1 ? start_value : s.value, stream_load<In, Out>(items.get(e)));
                }
            }
        }
    }
    const unsigned chunk_starts = __ballot_sync(kFullMask, s.starts);
    const A scanned = segmented_lane_scan<32>(op, s.value, chunk_starts, lane);
    // The warp's stream before this lane's chunk, and all of it.
    const segment<A> before = {(chunk_starts & ~(kFullMask << lane)) != 0, __shfl_up_sync(kFullMask, scanned, 1)};
    const segment<A> warp_total = {chunk_starts != 0, __shfl_sync(kFullMask, scanned, 31)};

    // The block: each warp's place, and the tile's segment.
    __shared__ A s_value[kStreamWarps];
    __shared__ int s_starts[kStreamWarps];
    __shared__ A s_halo[kStreamWarps];
    if (a.halo) {
#pragma unroll
        for (int d = 16; d > 0; d /= 2) halo = op(halo, __shfl_down_sync(kFullMask, halo, d));
    }
    if (lane == 0) {
        s_value[warp] = warp_total.value;
        s_starts[warp] = warp_total.starts;
        s_halo[warp] = halo;
    }
    __syncthreads();
    // Every warp scans the warps' segments in its first kStreamWarps lanes.
    const unsigned warp_starts = __ballot_sync(kFullMask, lane < kStreamWarps && s_starts[lane] != 0);
    const A warps_scanned = segmented_lane_scan<kStreamWarps>(op, lane < kStreamWarps ? s_value[lane] : op.neutral(), warp_starts, lane);
    const A scanned_before = __shfl_sync(kFullMask, warps_scanned, max(warp - 1, 0));
    const segment<A> warp_before = {(warp_starts & ~(kFullMask << warp)) != 0, warp > 0 ? scanned_before : op.neutral()};
    const segment<A> tile = {warp_starts != 0, __shfl_sync(kFullMask, warps_scanned, kStreamWarps - 1)};

    // Publish, then look back. A tile holding a start (the first one always does) knows its
    // inclusive prefix at once. The last tile publishes nothing: no one reads it; nor does any
    // where tiles read their halos (there is no workspace). Tile k's status is the sector
    // after the claim counter's and k others.
    const auto status_of = [&](int64_t k) { return words + kSectorWords * (1 + k); };
    const bool has_successor = c + 1 < a.tiles;
    if (t == 0 && has_successor && !a.halo) publish_words(status_of(c), tile.value, tile.starts ? kInclusive : kAggregate);
    // The tile's first element starts a line: nothing before it is needed. Else the whole block
    // looks back, thread t reading tile next - t: windows of kStreamThreads tiles until an
    // inclusive prefix, nearest first. (Each round is a round trip to L2; at one warp's 32
    // tiles, 512 KB of input a round, a long line's chain could not keep up with DRAM.)
    const bool needs_prefix = c > 0 && base_mod != 0;
    A prefix = op.neutral();
    if (needs_prefix && a.halo) {
        prefix = start_value;  // the line's start, then its halo
#pragma unroll
        for (int w = 0; w < kStreamWarps; ++w) prefix = op(prefix, s_halo[w]);
    } else if (needs_prefix) {
        __shared__ A s_round[kStreamWarps];
        __shared__ int s_found[kStreamWarps];
        for (int64_t next = c - 1;; next -= kStreamThreads) {
            const int64_t k = next - t;
            unsigned long long w[kParts];
            bool inclusive = true;  // before the first tile: nothing more to read
            A value = op.neutral();
            if (k >= 0) {
                wait_for_words(status_of(k), w);
                inclusive = (uint32_t)w[0] == kInclusive;
                value = announced_value<A>(w);
            }
            const unsigned found = __ballot_sync(kFullMask, inclusive);
            const int stop = found ? __ffs(found) - 1 : 32;
            if (lane > stop) value = op.neutral();
            // The warp's tiles in scan order (the higher lane, the farther tile, first) into lane 0.
#pragma unroll
            for (int d = 1; d < 32; d *= 2) {
                const A farther = __shfl_down_sync(kFullMask, value, d);
                if (lane + d < 32) value = op(farther, value);
            }
            if (lane == 0) {
                s_round[warp] = value;
                s_found[warp] = found != 0;
            }
            __syncthreads();
            // The window: warps nearest first, up to the first that found an inclusive prefix.
            A window = op.neutral();
            bool done = false;
#pragma unroll
            for (int v = 0; v < kStreamWarps; ++v) {
                if (!done) {
                    window = op(s_round[v], window);
                    done = s_found[v] != 0;
                }
            }
            prefix = op(window, prefix);
            __syncthreads();  // this round's reads before the next round's writes
            if (done) break;
        }
        if (t == 0 && has_successor && !tile.starts) publish_words(status_of(c), op(prefix, tile.value), kInclusive);
    }

    // Pass 2: the chunk rescanned from the value running into it, and stored vector by vector.
    segment<A> into = then(op, segment<A>{false, prefix}, warp_before);
    if (lane > 0) into = then(op, into, before);
    A running = into.value;
    // A wider output's vectors are built and stored a pair at a time (kPackVectors), the pair that
    // shares a sector, so that no more than 32 bytes of results are held at once.
    constexpr int kPackVectors = kOutVectors == 1 ? 1 : 2;
    constexpr int kPackPer = kPackVectors * kOutPer;  // elements a pack
    constexpr int kElementsAStep = kByteWords ? 4 : 1;
    const bool odd = lane & 1;
#pragma unroll
    for (int i = 0; i < kStreamVectors; ++i) {
        const item_pack<TI, kPer> items = chunk_vector(i);
        const int64_t m = first(L0 + i);  // the input vector's lowest memory element
        TO *const to = out + (m - a.head);
        // (Used where the warp is whole, which is uniform in the warp.)
        TO *const partner_to = kOutVectors > 1 && warp_whole
                                   ? reinterpret_cast<TO *>(__shfl_xor_sync(kFullMask, reinterpret_cast<uintptr_t>(to), 1))
                                   : to;
#pragma unroll
        for (int p = 0; p < kOutVectors / kPackVectors; ++p) {
            item_pack<TO, kPackPer> result{};
#pragma unroll
            for (int j0 = 0; j0 < kPackPer; j0 += kElementsAStep) {
                // No lane's word of four holds a start: its running values a word at a time, packed.
                if constexpr (kByteWords) {
                    if (!__any_sync(kFullMask, (unsigned)(starts >> (i * kPer + p * kPackPer + j0)) & 0xfu)) {
                        result.words[j0 / 4] =
                            byte_word_rescan(items.words[(p * kPackPer + j0) / 4], running, a.exclusive, Prod);
                        continue;
                    }
                }
#pragma unroll
                for (int j = j0; j < j0 + kElementsAStep; ++j) {
                    const int q = i * kPer + p * kPackPer + j;
                    if (starts >> q & 1) running = start_value;
                    const A next = op(running, stream_load<In, Out>(items.get(p * kPackPer + j)));
                    result.set(j, dtype_traits<Out>::store(a.exclusive ? running : next));
                    running = next;
                }
            }
            // Logical output vector p * kPackVectors + v of the input vector lies at memory
            // vector o(v) of it: the same, or counted from the far end when reversed.
            const auto o = [&](int v) { return a.reverse ? kOutVectors - 1 - (p * kPackVectors + v) : p * kPackVectors + v; };
            if (kOutVectors == 1 && warp_whole) {
                staged[staged_slot(kStreamVectors * lane + i)] = result.vector(0, false);
            } else if (warp_whole) {
                // The pair is a sector in memory. Lanes l and l ^ 1 trade halves, so that each
                // store writes a whole sector: the even lane's sector first, then the odd lane's.
                const int low_o = a.reverse ? o(1) : o(0);
                const uint4 low = a.reverse ? result.vector(1, true) : result.vector(0, false);
                const uint4 high = a.reverse ? result.vector(0, true) : result.vector(1, false);
                const uint4 sent = odd ? low : high;
                const uint4 got = make_uint4(__shfl_xor_sync(kFullMask, sent.x, 1), __shfl_xor_sync(kFullMask, sent.y, 1),
                                             __shfl_xor_sync(kFullMask, sent.z, 1), __shfl_xor_sync(kFullMask, sent.w, 1));
                store_vector(odd ? partner_to + (low_o + 1) * kOutPer : to + low_o * kOutPer, odd ? got : low);
                store_vector(odd ? to + (low_o + 1) * kOutPer : partner_to + low_o * kOutPer, odd ? high : got);
            } else if (m >= lo && m >= a.head && m + kPer <= hi) {
#pragma unroll
                for (int v = 0; v < kPackVectors; ++v) store_vector(to + o(v) * kOutPer, result.vector(v, a.reverse));
            } else if (m >= lo && m < hi) {
#pragma unroll
                for (int j = 0; j < kPackPer; ++j) {
                    const int e = p * kPackPer + j;  // logical element of the input vector
                    const int64_t at = m + (a.reverse ? kPer - 1 - e : e);
                    if (at >= a.head && at < hi) out[at - a.head] = result.get(j);
                }
            }
        }
    }
    if (kOutVectors == 1 && warp_whole) {  // (uniform in the warp)
        __syncwarp();
#pragma unroll
        for (int i = 0; i < kStreamVectors; ++i) {
            uint4 v = staged[staged_slot(32 * i + lane)];
            if (a.reverse) v = item_pack<TO, kPer>::reverse_elements(v);
            store_vector(out + lane_first + i * warp_step, v);
        }
    }
}

}  // namespace
}  // namespace tscan
