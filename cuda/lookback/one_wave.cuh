// lookback/one_wave.cuh - the one-wave kernel: small problems whose tiles all fit on the device at once.
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include "lookback/launch.cuh"
#include "lookback/status.cuh"

namespace tscan {
namespace {

// ---- One wave: small problems, every tile on the device at once ---------------------------
// A line chunk tile costs microseconds beyond an empty launch (seven barriers, a shared-memory
// transpose, the pipelined walk; bench/NOTES.md §3.5, §3.10), and at 2^20 float32 every
// SM runs one. Where the axis packs into 16-byte vectors and the problem's tiles all fit on
// the device at once, a shorter path runs instead: tiles of 16 KB, four coalesced vectors a
// thread (warp w's 128 vectors in rows of 32, scanned by shuffles: no transpose), two block
// barriers; each block publishes its aggregate and then reads the aggregates of all of its
// line's earlier tiles at once, a thread each (up to kWaveReads), instead of walking back
// window by window: one round trip, whatever the tile's place in its line.
constexpr int kWaveThreads = kernel_policy::one_wave_threads;
constexpr int kWaveWarps = kWaveThreads / 32;
constexpr int kWaveVectors = kernel_policy::one_wave_vectors;  // 16-byte vectors a thread
constexpr int64_t kWaveTileVectors = (int64_t)kWaveThreads * kWaveVectors;
constexpr int kWaveReads = kernel_policy::one_wave_reads;  // predecessor statuses a thread reads, at most
constexpr int64_t kWaveMaxChunks = (int64_t)kWaveThreads * kWaveReads;

// The problem as the one-wave kernel sees it: the axis packed into 16-byte vectors (n and the
// steps count vectors' elements as pack_axis leaves them), chunks of kWaveTileVectors.
struct one_wave_plan {
    scan_args a;
    int64_t chunks;  // tiles a line
    int64_t tiles;   // lines * chunks: the grid
};

// Whether p's layout takes the one-wave path (one width in and out, the axis packed by 16
// bytes in both tensors, a line in at most kWaveMaxChunks tiles), and how. Whether its tiles fit on the device at once
// is the launch's question.
template <class T> bool make_one_wave_plan(const tscan_problem *p, one_wave_plan *w) {
    constexpr int kPer = 16 / (int)sizeof(T);
    w->a = make_scan_args(p);
    if (w->a.widens || !axis_packed_by(w->a, kPer, sizeof(T))) return false;
    pack_axis(w->a, kPer, sizeof(T), 0);  // whole vectors (axis_packed_by): no tail
    w->chunks = (w->a.n + kWaveTileVectors - 1) / kWaveTileVectors;
    w->tiles = w->a.lines * w->chunks;
    return w->chunks <= kWaveMaxChunks;
}

// The one-wave workspace: the claim counter, alone in its 32-byte sector, then each tile's
// status, its aggregate in word_parts 64-bit words.
template <class A> int64_t one_wave_words(const one_wave_plan &w) { return kSectorWords + w.tiles * word_parts<A>(); }

// A block scans the tile it claims from the counter: chunk c % chunks of line c / chunks for
// claim c. Warp w holds the tile's vectors
// 128 w .. 128 w + 127, vector i of lane l being 128 w + 32 i + l, so that each load is
// coalesced. A tile's status is its aggregate in word_parts 64-bit words (flag low, a 32-bit
// part of the value high, as the line chunks' words), stored whole without a fence. A tile's
// predecessors have lower claims, so they belong to blocks that are running or done: every
// wait ends, however few of the grid's blocks are resident. Four blocks an SM at least (64
// registers a thread; 64-bit products spill 24 bytes): the 528 tiles that AUTO counts on an
// H100 (src/dispatch.c).
template <tscan_dtype D, bool Prod>
__global__ void __launch_bounds__(kWaveThreads, 4) one_wave_kernel(scan_args a, int64_t chunks, unsigned long long *words) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr int kPer = 16 / (int)sizeof(T);
    constexpr int kParts = word_parts<A>();
    const scan_op<A> op{Prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    // Tile c: its line, its chunk, and this thread's first vector k0 (vector i is k0 + 32 i). In
    // 32 bits: the grid is at most one block a tile, so tiles, chunks and lines fit (a 64-bit
    // division is a call).
    const auto tile_at = [&](unsigned c, unsigned &line, unsigned &chunk, int64_t &in_offset, int64_t &out_offset) {
        line = c / (unsigned)chunks;
        chunk = c - line * (unsigned)chunks;
        a.batch.offsets(line, in_offset, out_offset);
        return (int64_t)chunk * kWaveTileVectors + warp * (32 * kWaveVectors) + lane;
    };
    unsigned line, chunk;
    int64_t in_offset, out_offset;
    // No tile can be claimed before the clear is done. Meanwhile the thread fetches into L2 its
    // vectors of tile blockIdx.x, which the claim most often hands out (blocks start, and so
    // claim, in about index order): the loads after the claim then find them there.
    {
        const int64_t k0 = tile_at(blockIdx.x, line, chunk, in_offset, out_offset);
#pragma unroll
        for (int i = 0; i < kWaveVectors; ++i)
            if (k0 + 32 * i < a.n) prefetch_l2(reinterpret_cast<const T *>(a.in) + in_offset + (k0 + 32 * i) * a.in_step);
    }
    wait_for_clear();
    __shared__ unsigned s_claim;
    if (t == 0) s_claim = (unsigned)atomicAdd(words, 1ull);
    __syncthreads();
    unsigned long long *const statuses = words + kSectorWords;
    const int64_t k0 = tile_at(s_claim, line, chunk, in_offset, out_offset);
    const T *const in = reinterpret_cast<const T *>(a.in) + in_offset;
    T *const out = reinterpret_cast<T *>(a.out) + out_offset;

    // Vectors past the end of the line load as zeros: they come after every real one, so
    // only totals that nothing reads depend on them.
    item_pack<T, kWaveVectors * kPer> items;
#pragma unroll
    for (int i = 0; i < kWaveVectors; ++i) {
        const int64_t k = k0 + 32 * i;
        const uint4 v = k < a.n ? *reinterpret_cast<const uint4 *>(in + k * a.in_step) : make_uint4(0, 0, 0, 0);
        items.set_vector(i, v, a.in_step < 0);
    }
    // Every load issued before the scan starts: without this ordering point ptxas interleaved
    // the 64-bit integer sum's loads with its scan, each load waiting on the one before, and
    // int64 ran far behind float64 (bench/NOTES.md §3.10).
    __syncwarp();

    // The warp's scan of its rows: before[i] is the reduction of the warp's vectors before
    // this lane's vector i, warp_total of all 128.
    A before[kWaveVectors], warp_total = op.neutral();
#pragma unroll
    for (int i = 0; i < kWaveVectors; ++i) {
        before[i] = op.neutral();
#pragma unroll
        for (int e = 0; e < kPer; ++e) before[i] = op(before[i], Traits::load(items.get(i * kPer + e)));
    }
    warp_rows_exclusive(before, warp_total, op, lane);

    __shared__ A s_warp_total[kWaveWarps];
    __shared__ A s_read_total[kWaveWarps];
    if (lane == 0) s_warp_total[warp] = warp_total;
    __syncthreads();
    A warp_prefix = op.neutral(), aggregate = op.neutral();
#pragma unroll
    for (int w = 0; w < kWaveWarps; ++w) {
        if (w == warp) warp_prefix = aggregate;
        aggregate = op(aggregate, s_warp_total[w]);
    }
    unsigned long long *const line_words = statuses + (int64_t)line * chunks * kParts;
    if (t == 0 && chunk + 1 < chunks) {
#pragma unroll
        for (int q = 0; q < kParts; ++q)
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(line_words[chunk * kParts + q])
                .store(status_word(aggregate, q, kAggregate), cuda::memory_order_relaxed);
    }

    // The reduction of every earlier tile of the line: thread t reads tiles t, t + 256, ...,
    // all loads issued before any is waited on, then the block reduces what its threads read.
    A prefix = op.start(a.exclusive);
    if (chunk > 0) {
        unsigned long long word[kWaveReads][kParts];
#pragma unroll
        for (int r = 0; r < kWaveReads; ++r) {
            const int64_t j = t + r * kWaveThreads;
#pragma unroll
            for (int q = 0; q < kParts; ++q) word[r][q] = j < chunk ? load_relaxed(line_words[j * kParts + q]) : 0;
        }
        A read_total = op.neutral();
#pragma unroll
        for (int r = 0; r < kWaveReads; ++r) {
            const int64_t j = t + r * kWaveThreads;
            if (j >= chunk) break;
#pragma unroll
            for (int q = 0; q < kParts; ++q)
                while ((uint32_t)word[r][q] == kEmpty) word[r][q] = load_relaxed(line_words[j * kParts + q]);
            read_total = op(read_total, announced_value<A>(word[r]));
        }
#pragma unroll
        for (int d = 1; d < 32; d *= 2) read_total = op(read_total, __shfl_xor_sync(kFullMask, read_total, d));
        if (lane == 0) s_read_total[warp] = read_total;
        __syncthreads();
        A earlier = op.neutral();
#pragma unroll
        for (int w = 0; w < kWaveWarps; ++w) earlier = op(earlier, s_read_total[w]);
        prefix = op(prefix, earlier);
    }

    const A base = op(prefix, warp_prefix);
#pragma unroll
    for (int i = 0; i < kWaveVectors; ++i) {
        A running = op(base, before[i]);
#pragma unroll
        for (int e = 0; e < kPer; ++e) {
            const A next = op(running, Traits::load(items.get(i * kPer + e)));
            items.set(i * kPer + e, Traits::store(a.exclusive ? running : next));
            running = next;
        }
        const int64_t k = k0 + 32 * i;
        if (k < a.n) *reinterpret_cast<uint4 *>(out + k * a.out_step) = items.vector(i, a.out_step < 0);
    }
}

}  // namespace
}  // namespace tscan
