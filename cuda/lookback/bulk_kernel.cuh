// lookback/bulk_kernel.cuh - lookback's line chunks on sm_90 and later: tiles brought
// into a ring of shared-memory buffers by bulk copies, and a warp for each job (bulk_lookback_kernel);
// which problems take it (make_bulk_plan) and their chains (make_bulk_layout).
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include "lookback/async_copy.cuh"
#include "lookback/launch.cuh"
#include "lookback/plan.cuh"
#include "lookback/walk.cuh"

namespace tscan {
namespace {

// A tile is 32 KB of a line: kBulkTileVectors aligned 16-byte vectors of the line, copied into one
// of kBulkStages buffers in kBulkPieces bulk copies. Data warp w scans the tile's w-th eighth in
// scan order, kBulkRows rows of a vector a lane.
constexpr int kBulkTileVectors = kernel_policy::bulk_tile_bytes / 16;
constexpr int kBulkStages = kernel_policy::bulk_stages;
constexpr int kBulkPieces = kernel_policy::bulk_pieces;
constexpr int kBulkPieceVectors = kBulkTileVectors / kBulkPieces;
constexpr int kBulkWarpVectors = kBulkTileVectors / kWarps;
constexpr int kBulkRows = kBulkWarpVectors / 32;
constexpr int kBulkThreads = kThreads + 64;  // the data warps, then the reducing warp and the look-back warp
constexpr int kReducingWarp = kWarps, kLookBackWarp = kWarps + 1;
constexpr size_t kBulkSmemBytes = (size_t)kBulkStages * kBulkTileVectors * 16;
static_assert(kBulkPieceVectors % kBulkWarpVectors == 0 && kBulkWarpVectors % 32 == 0,
              "a piece holds whole data warps' parts, a part whole rows of 32 vectors");
// Named barriers a stage: the data threads arrive once they have read a tile out of it; the
// look-back warp waits on the first before it copies the stage's next tile in, the reducing warp
// on the second before it writes the stage's slots again.
constexpr int kFreedForLookBack = 1, kFreedForReducer = 1 + kBulkStages, kFreedThreads = kThreads + 32;

// Lines along a contiguous axis, both tensors stepping the same way, whose lines start at the
// same place in their 16-byte vectors in both (the input and output bases 16 bytes apart, and
// every batch stride the same modulo a vector): each line is then a run of aligned vectors,
// the same ones in both tensors, whole but maybe for its first and last. One width (a narrower
// input converts element by element: the tile kernel's).
// The reducing warp, one a block, reduces each tile while eight warps scan it: it keeps up where
// a 16-byte vector costs it about four instructions or fewer (H200, against the tile kernel,
// bench/NOTES.md §2): 4-byte elements, 8-byte floats and integer sums, 1-byte sums (four dp4a,
// 14-42 % faster). Not 64-bit integer products (a multiply is several instructions: 3-5 %
// slower), 2-byte elements (each unpacked, or converted: up to 38 % slower) or 1-byte products
// (four multiplies a word: up to 34 % slower).
template <class T> constexpr bool bulk_takes(bool prod) {
    if constexpr (sizeof(T) == 1) return !prod;
    else if constexpr (sizeof(T) == 2) return false;
    else return !(prod && std::is_integral_v<T> && sizeof(T) == 8);
}
struct bulk_plan {
    scan_args a;
};
template <class T> bool make_bulk_plan(const tscan_problem *p, bulk_plan *plan) {
    constexpr int64_t kVector = 16 / sizeof(T);
    if (!bulk_takes<T>(p->op == TSCAN_OP_PROD)) return false;
    const scan_args a = make_scan_args(p);
    if (a.widens || (a.in_step != 1 && a.in_step != -1) || a.out_step != a.in_step) return false;
    if ((uintptr_t)a.in % sizeof(T) != 0 || ((uintptr_t)a.in - (uintptr_t)a.out) % 16 != 0) return false;
    for (int d = 0; d < a.batch.ndim; ++d)
        if ((a.batch.in_strides[d] - a.batch.out_strides[d]) % kVector != 0) return false;
    plan->a = a;
    return true;
}

// Every line's chunks: as many as its vectors need, where every line starts at the same place in
// its first vector; else as many as the longest head (a vector but one element) needs, so that
// a line that starts elsewhere may end with an empty tile.
template <class T, class A> tile_layout make_bulk_layout(const bulk_plan &plan) {
    constexpr int64_t kVector = 16 / sizeof(T);
    const int head = side_axis_head(plan.a, input_side(plan.a), kVector, sizeof(T));  // -1: not the same
    tile_layout L{};
    L.rows = kBulkTileVectors;
    L.groups = plan.a.lines;
    L.chunks = ((plan.a.n + (head >= 0 ? head + kVector - 1 : 2 * (kVector - 1))) / kVector + L.rows - 1) / L.rows;
    L.tiles = L.groups * L.chunks;
    L.chunk_words = (L.groups * word_parts<A>() + kSectorWords - 1) / kSectorWords * kSectorWords;
    L.band = L.groups;  // the launch sets it from the blocks resident
    return L;
}

// A claimed tile, as the look-back warp hands it to the others.
struct bulk_tile {
    tile_at at;                // chunk L.chunks: past the last tile (the block is done)
    int64_t in_line, out_line;  // the line's first scan element, in elements from a.in and a.out
    int head;                   // elements of the line's first vector before the line, in scan order
    int count;                  // the tile's vectors
};

// Where a line lies on the grid of 16-byte vectors (kVector elements of T each): vector k of the
// line, in scan order, and which of its elements the line holds.
template <class T> struct bulk_line {
    static constexpr int kVector = 16 / (int)sizeof(T);
    const char *first_vector;  // vector 0's lowest byte
    bool increasing;
    int head;
    int64_t vectors;  // the line's vectors
    int last_end;     // the last vector's elements that the line holds, in scan order
    __device__ __forceinline__ bulk_line(const char *first_element, bool inc, int64_t n) : increasing(inc) {
        const int within = (int)((uintptr_t)first_element % 16 / sizeof(T));  // memory order
        first_vector = first_element - within * (int64_t)sizeof(T);
        head = increasing ? within : kVector - 1 - within;
        vectors = (head + n + kVector - 1) / kVector;
        last_end = (int)((head + n - 1) % kVector) + 1;
    }
    __device__ __forceinline__ const char *vector(int64_t k) const {
        return first_vector + (increasing ? k : -k) * 16;
    }
    // Vector k's elements of the line, in memory order: [first, end).
    __device__ __forceinline__ void held(int64_t k, int &first, int &end) const {
        const int lo = k == 0 ? head : 0, hi = k == vectors - 1 ? last_end : kVector;  // scan order
        first = increasing ? lo : kVector - hi;
        end = increasing ? hi : kVector - lo;
    }
    __device__ __forceinline__ bool whole(int64_t k) const {
        return (k != 0 || head == 0) && (k != vectors - 1 || last_end == kVector);
    }
};

template <class V> __device__ __forceinline__ V broadcast(V v) {
    if constexpr (sizeof(V) == 8) {
        return ::cuda::std::bit_cast<V>(__shfl_sync(kFullMask, ::cuda::std::bit_cast<unsigned long long>(v), 0));
    } else {
        static_assert(sizeof(V) == 4, "4- or 8-byte values");
        return ::cuda::std::bit_cast<V>(__shfl_sync(kFullMask, ::cuda::std::bit_cast<unsigned>(v), 0));
    }
}

// A 16-byte vector's reduction, and its running values from `running` (the vector in scan order,
// and its outputs), which moves past it. 1-byte elements go a 32-bit word at a time
// (byte_word_reduce and byte_word_rescan: a dp4a a word to reduce, about two instructions an
// element to scan, where taking them apart costs five and the block's one reducing warp fell
// behind: bench/NOTES.md §2).
template <class Traits, class V, class A> __device__ __forceinline__ A vector_reduction(const V &x, scan_op<A> op) {
    if constexpr (sizeof(typename Traits::T) == 1) {
        A total = op.neutral();
#pragma unroll
        for (int w = 0; w < 4; ++w) total = byte_word_reduce(x.words[w], total, op.prod);
        return total;
    } else {
        A total = Traits::load(x.get(0));
#pragma unroll
        for (int e = 1; e < (int)(16 / sizeof(typename Traits::T)); ++e) total = op(total, Traits::load(x.get(e)));
        return total;
    }
}
template <class Traits, class V, class A>
__device__ __forceinline__ V vector_scan(const V &x, A &running, bool exclusive, scan_op<A> op) {
    V y{};
    if constexpr (sizeof(typename Traits::T) == 1) {
#pragma unroll
        for (int w = 0; w < 4; ++w) y.words[w] = byte_word_rescan(x.words[w], running, exclusive, op.prod);
    } else {
#pragma unroll
        for (int e = 0; e < (int)(16 / sizeof(typename Traits::T)); ++e) {
            const A next = op(running, Traits::load(x.get(e)));
            y.set(e, Traits::store(exclusive ? running : next));
            running = next;
        }
    }
    return y;
}

// A block is 8 data warps, a reducing warp and a look-back warp, around kBulkStages tile buffers
// that its tiles go through in turn (the block's j-th tile in buffer j % kBulkStages):
//   - the look-back warp claims a tile, and its lanes start the tile's bulk copies, a piece
//     each, into the buffer that the data warps have freed; then it finds the prefix of the
//     oldest tile the reducing warp has reduced (look_back) and hands it to the data warps;
//   - the reducing warp reduces each piece as it lands (a sum per data warp's part), publishes
//     the tile's aggregate, and hands the parts' prefixes to the data warps and the aggregate
//     to the look-back warp;
//   - each data warp scans its part from those prefixes and stores it.
// So a tile's bytes are in flight a buffer ahead, no aggregate waits on a look-back or a scan,
// and no look-back on a scan (bench/NOTES.md §2, "Bulk copies into a ring of buffers").
// A line's first and last vectors may hold it in part: the reducing warp loads those element by
// element (the rest the operator's neutral value) into the buffer, and the data warps store
// them element by element; every other vector moves whole.
// Hand-overs go through mbarriers: s_landed (a piece's copy; the look-back lane that started
// it arrives), s_reduced (all the reducing warp's lanes), s_prefixed (look-back lane 0). Each
// role reads a buffer's slots only after waiting on the barrier of the role that wrote them,
// and a stage is written again only after a named barrier with the data threads that read it
// (racecheck sees an order only between threads that meet at one barrier).
// Forward progress: a tile waits only on tiles claimed before it (its chain's predecessors and
// its block's earlier tiles); its copies start once the block frees a buffer, which takes only
// the block's earlier tiles.
template <tscan_dtype K, bool Prod>
__global__ void __launch_bounds__(kBulkThreads, kernel_policy::bulk_blocks_per_sm)
    bulk_lookback_kernel(scan_args a, tile_layout L, tile_status<typename dtype_traits<K>::A> st) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    __trap();  // never planned below sm_90
#else
    using Traits = dtype_traits<K>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr int kVector = 16 / (int)sizeof(T);
    using vec = item_pack<T, kVector>;  // a 16-byte vector, its elements in memory order, in 32-bit words
    constexpr int TV = kBulkTileVectors;
    const scan_op<A> op{Prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const bool increasing = a.in_step > 0;
    // A tile's vector i (scan order) lies in slot i of its buffer, or, decreasing, in slot
    // TV - 1 - i, so that a buffer holds its tile in memory order and each copy is one run.
    const auto slot_of = [&](int i) { return increasing ? i : TV - 1 - i; };

#ifdef __CUDACC__
    extern __shared__ __align__(128) unsigned char s_dynamic[];  // kBulkSmemBytes
#else  // tests/emulated: blocks run one after another, and __shared__ is static
    alignas(128) static unsigned char s_dynamic[kBulkSmemBytes];
#endif
    uint4 *const s_vectors = reinterpret_cast<uint4 *>(s_dynamic);  // [kBulkStages][TV]
    __shared__ uint64_t s_landed[kBulkStages][kBulkPieces];
    __shared__ uint64_t s_reduced[kBulkStages];
    __shared__ uint64_t s_prefixed[kBulkStages];
    __shared__ bulk_tile s_tile[kBulkStages];
    __shared__ A s_aggregate[kBulkStages];
    __shared__ A s_prefix[kBulkStages];
    __shared__ A s_part_prefix[kBulkStages][kWarps];  // each data warp's part: the tile's reduction before it

    if (t == 0) {
        for (int s = 0; s < kBulkStages; ++s) {
            for (int q = 0; q < kBulkPieces; ++q) mbarrier_init(&s_landed[s][q], 1);
            mbarrier_init(&s_reduced[s], 32);
            mbarrier_init(&s_prefixed[s], 1);
        }
    }
    __syncthreads();
    wait_for_clear();
    const T neutral_element = Traits::store(op.neutral());
    vec neutral_vector{};
#pragma unroll
    for (int e = 0; e < kVector; ++e) neutral_vector.set(e, neutral_element);

    if (warp == kLookBackWarp) {
        // Claims a tile into stage s and starts its copies; false once claims are past the last
        // tile (the other warps then find that in s_tile and stop). Each claim's index is fetched
        // at the claim before (lane 0's next_index), so that the atomic's round trip overlaps a
        // look-back rather than adding to each tile's turn; the tile it takes waits for nothing
        // but this block's earlier tiles, all claimed before it.
        int64_t next_index = 0;
        if (lane == 0) next_index = (int64_t)atomicAdd(st.counter, 1ull);
        const auto claim_into = [&](int s) {
            const tile_at at = tile_of_claim(L, broadcast(next_index));
            uint64_t *const landed = s_landed[s];
            if (at.chunk == L.chunks) {
                if (lane == 0) {
                    s_tile[s].at = at;
                    for (int q = 0; q < kBulkPieces; ++q) mbarrier_arrive(&landed[q]);
                    mbarrier_arrive(&s_prefixed[s]);
                }
                return false;
            }
            if (lane == 0) next_index = (int64_t)atomicAdd(st.counter, 1ull);
            int64_t in_line, out_line;
            a.batch.offsets(at.group, in_line, out_line);
            const bulk_line<T> line(a.in + in_line * (int64_t)sizeof(T), increasing, a.n);
            const int64_t k0 = at.chunk * TV;
            const int count = (int)max(min(line.vectors - k0, (int64_t)TV), (int64_t)0);
            if (lane == 0) s_tile[s] = {at, in_line, out_line, line.head, count};
            // The whole vectors [lo, hi) of the tile, and their slots [b0, b1).
            const int lo = count > 0 && !line.whole(k0) ? 1 : 0;
            const int hi = max(lo, count > 0 && !line.whole(k0 + count - 1) ? count - 1 : count);
            const int b0 = increasing ? lo : TV - hi, b1 = increasing ? hi : TV - lo;
            if (lane < kBulkPieces) {
                const int p0 = max(b0, lane * kBulkPieceVectors), p1 = min(b1, (lane + 1) * kBulkPieceVectors);
                if (p0 < p1)  // p0 holds the piece's lowest address
                    bulk_copy_to_shared(s_vectors + s * TV + p0, line.vector(k0 + slot_of(p0)),
                                        (uint32_t)(p1 - p0) * 16, &landed[lane]);
                else
                    mbarrier_arrive(&landed[lane]);
            }
            return true;
        };
        bool claiming = true;
        for (int s = 0; s < kBulkStages && claiming; ++s) claiming = claim_into(s);
        int64_t j = 0, freed = 0;  // freed: the block's tiles whose release this warp has taken
        for (;; ++j) {
            const int s = (int)(j % kBulkStages);
            // The block's tile j + 2 goes where tile j - 1 was, as soon as the data warps have that
            // out of its buffer (they had its prefix at the end of the last turn): before tile j's
            // look-back, so that no look-back delays a copy.
            if (claiming && j >= 1) {
                named_barrier_of<kFreedForLookBack, kBulkStages, kFreedThreads, true>((int)((j - 1) % kBulkStages));
                freed = j;
                claiming = claim_into((int)((j + 2) % kBulkStages));
            }
            tile_at at{};
            if (lane == 0) at = s_tile[s].at;
            at.chunk = broadcast(at.chunk);
            at.group = broadcast(at.group);
            if (at.chunk == L.chunks) break;
            mbarrier_wait(&s_reduced[s], (unsigned)(j / kBulkStages) & 1);
            A aggregate[1] = {};
            if (lane == 0) aggregate[0] = s_aggregate[s];
            aggregate[0] = broadcast(aggregate[0]);
            look_back<kLineChunk, 1, 0>(L, st, op, at, op.start(a.exclusive), aggregate, &s_prefix[s]);
            if (lane == 0) mbarrier_arrive(&s_prefixed[s]);
        }
        for (; freed < j; ++freed) named_barrier_of<kFreedForLookBack, kBulkStages, kFreedThreads, true>((int)(freed % kBulkStages));
    } else if (warp == kReducingWarp) {
        int64_t j = 0;
        for (;; ++j) {
            const int s = (int)(j % kBulkStages);
            const unsigned parity = (unsigned)(j / kBulkStages) & 1;
            // The data warps are done with the stage's previous tile (its slots are written below).
            if (j >= kBulkStages) named_barrier_of<kFreedForReducer, kBulkStages, kFreedThreads, true>(s);
            uint64_t *const landed = s_landed[s];
            mbarrier_wait(&landed[0], parity);
            bulk_tile tile{};
            if (lane == 0) tile = s_tile[s];
            tile.at.chunk = broadcast(tile.at.chunk);
            if (tile.at.chunk == L.chunks) break;
            tile.at.group = broadcast(tile.at.group);
            tile.in_line = broadcast(tile.in_line);
            tile.count = broadcast(tile.count);
            const bulk_line<T> line(a.in + tile.in_line * (int64_t)sizeof(T), increasing, a.n);
            const int64_t k0 = tile.at.chunk * TV;
            const int v0 = increasing ? 0 : TV - tile.count, v1 = increasing ? tile.count : TV;  // slots in use
            // The slots of vectors that hold the line in part (-1: none).
            const int head_slot = tile.count > 0 && !line.whole(k0) ? slot_of(0) : -1;
            const int tail_slot = tile.count > 0 && !line.whole(k0 + tile.count - 1) ? slot_of(tile.count - 1) : -1;
            uint4 *const buffer = s_vectors + s * TV;
            // The vectors that hold the line in part, which the copies leave out: the lane that
            // reduces the slot loads its elements (the rest neutral) and writes it for the data warps.
            if (head_slot >= 0 || tail_slot >= 0) {
#pragma unroll
                for (int end = 0; end < 2; ++end) {
                    const int b = end == 0 ? head_slot : tail_slot;
                    if (b < 0 || b % 32 != lane) continue;
                    const int64_t k = k0 + slot_of(b);
                    const T *const p = reinterpret_cast<const T *>(line.vector(k));
                    int first, stop;
                    line.held(k, first, stop);
                    vec x{};
#pragma unroll
                    for (int e = 0; e < kVector; ++e) x.set(e, e >= first && e < stop ? p[e] : neutral_element);
                    buffer[b] = ::cuda::std::bit_cast<uint4>(x);
                }
                fence_proxy_async_shared();  // a later tile's copy may land in those slots
            }
            // Each piece as it lands, a sum per data warp's part (in slot order): each slot's
            // vector reduced, then added to its part's sum where it is in use (in a tile short of
            // TV vectors, the others hold whatever an earlier tile left). Loads first, then the
            // sums, with nothing between a load and its slot.
            constexpr int kParts = kBulkPieceVectors / kBulkWarpVectors;
            A part_total[kWarps];
            const auto reduce_tile = [&](bool whole) {
#pragma unroll
                for (int q = 0; q < kBulkPieces; ++q) {
                    if (q > 0) mbarrier_wait(&landed[q], parity);
                    A sum[kParts];
#pragma unroll
                    for (int g = 0; g < kParts; ++g) sum[g] = op.neutral();
#pragma unroll
                    for (int r = 0; r < kBulkPieceVectors / 32; ++r) {
                        const int b = q * kBulkPieceVectors + r * 32 + lane;
                        const vec x = ::cuda::std::bit_cast<vec>(buffer[b]);
                        const A vector_total = vector_reduction<Traits>(x, op);
                        A &acc = sum[r * 32 / kBulkWarpVectors];
                        if (whole || (b >= v0 && b < v1)) acc = op(acc, vector_total);
                    }
#pragma unroll
                    for (int g = 0; g < kParts; ++g) {
                        A total = sum[g];
#pragma unroll
                        for (int d = 1; d < 32; d *= 2) total = op(total, __shfl_xor_sync(kFullMask, total, d));
                        part_total[q * kParts + g] = total;
                    }
                }
            };
            if (tile.count == TV) reduce_tile(true);
            else reduce_tile(false);
            // Data warp w's part is slot part w, or kWarps - 1 - w decreasing (scan order).
            A prefix = op.neutral();
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                if (lane == 0) s_part_prefix[s][w] = prefix;
                prefix = op(prefix, increasing ? part_total[w] : part_total[kWarps - 1 - w]);  // constant indices
            }
            const A aggregate[1] = {prefix};
            if (lane == 0) s_aggregate[s] = prefix;
            publish_aggregate<kLineChunk, 0>(L, st, op, tile.at, op.start(a.exclusive), aggregate);
            mbarrier_arrive(&s_reduced[s]);
        }
        // Releases taken: those of tiles before j - 2 (the last at the top of the final turn).
        for (int64_t freed = max(j - (kBulkStages - 1), (int64_t)0); freed < j; ++freed)
            named_barrier_of<kFreedForReducer, kBulkStages, kFreedThreads, true>((int)(freed % kBulkStages));
    } else {
        for (int64_t j = 0;; ++j) {
            const int s = (int)(j % kBulkStages);
            const unsigned parity = (unsigned)(j / kBulkStages) & 1;
            mbarrier_wait(&s_prefixed[s], parity);
            const bulk_tile tile = s_tile[s];
            if (tile.at.chunk == L.chunks) break;
            // Already complete (the prefix needed them): waited on so that every write this warp
            // reads is ordered before it by a barrier it took part in.
            mbarrier_wait(&s_reduced[s], parity);
#pragma unroll
            for (int q = 0; q < kBulkPieces; ++q) mbarrier_wait(&s_landed[s][q], parity);
            A carry = op(s_prefix[s], s_part_prefix[s][warp]);
            const uint4 *const buffer = s_vectors + s * TV;
            vec x[kBulkRows];
#pragma unroll
            for (int r = 0; r < kBulkRows; ++r) {
                const int i = warp * kBulkWarpVectors + r * 32 + lane;
                if (i < tile.count) {
                    x[r] = ::cuda::std::bit_cast<vec>(buffer[slot_of(i)]);
                } else {
                    x[r] = neutral_vector;
                }
            }
            // The stage is free: the look-back warp may copy its next tile in, the reducing warp
            // write its slots.
            named_barrier_of<kFreedForLookBack, kBulkStages, kFreedThreads, false>(s);
            named_barrier_of<kFreedForReducer, kBulkStages, kFreedThreads, false>(s);
            // Each row: the lane's vector reduced, the reductions scanned across the warp
            // (warp_rows_exclusive), then the vector scanned from its base (vector_scan) as it is
            // stored.
            A running[kBulkRows];
#pragma unroll
            for (int r = 0; r < kBulkRows; ++r) running[r] = vector_reduction<Traits>(x[r], op);
            warp_rows_exclusive(running, carry, op, lane);
            const bulk_line<T> line(a.out + tile.out_line * (int64_t)sizeof(T), increasing, a.n);
            const int64_t k0 = tile.at.chunk * TV;
#pragma unroll
            for (int r = 0; r < kBulkRows; ++r) {
                // The row in scan order, and its outputs: whole vectors reversed where the line
                // decreases (an element chosen by direction would be indexed at run time, and the
                // rows kept in local memory).
                vec row;
                row.set_vector(0, ::cuda::std::bit_cast<uint4>(x[r]), !increasing);
                vec y = vector_scan<Traits>(row, running[r], a.exclusive, op);
                y.set_vector(0, y.vector(0, !increasing), false);  // memory order
                const int i = warp * kBulkWarpVectors + r * 32 + lane;
                if (i < tile.count) {
                    const int64_t k = k0 + i;
                    T *const p = reinterpret_cast<T *>(const_cast<char *>(line.vector(k)));
                    if (line.whole(k)) {
                        *reinterpret_cast<uint4 *>(p) = ::cuda::std::bit_cast<uint4>(y);
                    } else {
                        int first, end;
                        line.held(k, first, end);
#pragma unroll
                        for (int e = 0; e < kVector; ++e)
                            if (e >= first && e < end) p[e] = y.get(e);
                    }
                }
            }
        }
    }
#endif
}

}  // namespace
}  // namespace tscan
