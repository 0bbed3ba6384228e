// columns/kernel.cuh - the columns kernels: a thread walks the axis over one line, or over W
// neighbouring lines moved as a 16-byte vector a step (aligned, realigned in registers, or a
// narrower input's vector widened), and the host's choice between them.
// Included by cuda/columns.cu and by the emulated tests (tests/emulated/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include <algorithm>
#include "common.cuh"

namespace tscan {
namespace {

constexpr int kColumnsThreads = kernel_policy::columns_threads;
// Rows loaded into registers before any is scanned: enough independent loads in flight per
// thread to cover memory latency when there are only tens of thousands of columns. An axis
// of a few elements takes a kernel with room for four rows: holding registers for sixteen
// that it never fills would cut the threads resident per SM, and so the loads in flight.
constexpr int kLongUnroll = kernel_policy::columns_long_unroll;
constexpr int kShortUnroll = kernel_policy::columns_short_unroll;
// Resident waves of blocks that the grid is capped at; more lines loop (grid-stride), which
// spares the block launches of a grid of millions of threads that each move a few bytes.
constexpr int64_t kMaxBlocksPerSM = kernel_policy::columns_max_blocks_per_sm;
// Lines go 16 bytes' worth to a thread only while that leaves this many threads: fewer keep
// too few bytes in flight, and lose to one line a thread (bench/NOTES.md §3.10).
constexpr int64_t kMinVectorThreads = kernel_policy::columns_min_vector_threads;

// One step of a thread's walk over W neighbouring lines: W consecutive elements, moved as
// one 16-byte vector.
template <class T, int W> struct step_items {
    item_pack<T, W> pack;
    __device__ __forceinline__ void load(const T *p) {
        pack.set_vector(0, *reinterpret_cast<const uint4 *>(p), false);
    }
    __device__ __forceinline__ void store(T *p) const { *reinterpret_cast<uint4 *>(p) = pack.vector(0, false); }
    __device__ __forceinline__ T get(int w) const { return pack.get(w); }
    __device__ __forceinline__ void set(int w, T v) { pack.set(w, v); }
};
template <class T> struct step_items<T, 1> {
    T x;
    __device__ __forceinline__ void load(const T *p) { x = *p; }
    __device__ __forceinline__ void store(T *p) const { *p = x; }
    __device__ __forceinline__ T get(int) const { return x; }
    __device__ __forceinline__ void set(int, T v) { x = v; }
};

// What a walk reads its input through: T elements, or the bytes of a narrower input (Widen:
// single lines only, each element converted to T on load).
template <class T, bool Widen> using input_ptr = std::conditional_t<Widen, const char *, const T *>;
// The walk's step in input_ptr's units.
template <bool Widen> __device__ __forceinline__ int64_t input_step(const scan_args &a) {
    return Widen ? a.in_step * a.in_bytes : a.in_step;
}

// Scans `rows` (at most kUnroll) consecutive steps of the walk from in and out. All loads come before the stores: in place, each element is read
// before it is overwritten, and the loads overlap in flight.
template <tscan_dtype D, int W, int kUnroll, bool Widen>
__device__ __forceinline__ void scan_rows(const scan_args &a, const scan_op<typename dtype_traits<D>::A> &op,
                                          input_ptr<typename dtype_traits<D>::T, Widen> in,
                                          typename dtype_traits<D>::T *out, int rows,
                                          typename dtype_traits<D>::A (&running)[W]) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    step_items<T, W> x[kUnroll];
    if constexpr (Widen) {
        T wide[kUnroll];
        read_widened_rows<D>(wide, in, input_step<Widen>(a), 0, rows, a.in_dtype);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) x[u].set(0, wide[u]);
    } else {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (u < rows) x[u].load(in + u * input_step<Widen>(a));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        if (u < rows) {
#pragma unroll
            for (int w = 0; w < W; ++w) {
                const A next = op(running[w], Traits::load(x[u].get(w)));
                x[u].set(w, Traits::store(a.exclusive ? running[w] : next));
                running[w] = next;
            }
            x[u].store(out + u * a.out_step);
        }
    }
}

// Thread b scans line b of a; with W > 1 each of its elements stands for W neighbouring
// lines (see columns_launch). Widen: the input is narrower than the output (a.widens), a
// kernel of its own so that same-type scans compile as they did before wider outputs.
template <tscan_dtype D, int W, int kUnroll, bool Widen>
__global__ void __launch_bounds__(kColumnsThreads) columns_kernel(scan_args a) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    static_assert(!Widen || W == 1, "a narrower input walks single lines");
    const scan_op<A> op{a.prod};
    const int64_t stride = (int64_t)gridDim.x * kColumnsThreads;
    for (int64_t line = (int64_t)blockIdx.x * kColumnsThreads + threadIdx.x; line < a.lines; line += stride) {
        int64_t in_offset, out_offset;
        a.batch.offsets(line, in_offset, out_offset);
        input_ptr<T, Widen> in;
        if constexpr (Widen) in = a.in + in_offset * a.in_bytes;
        else in = reinterpret_cast<const T *>(a.in) + in_offset;
        T *out = reinterpret_cast<T *>(a.out) + out_offset;
        A running[W];
#pragma unroll
        for (int w = 0; w < W; ++w) running[w] = op.start(a.exclusive);
        // The last block's loads are all in flight at once too (the whole walk when the axis
        // is short). Vectors take one predicated loop, single lines whole blocks without
        // predicates and then the rest: each form measured faster for its width (bench/NOTES.md
        // §3.10).
        int64_t k = 0;
        if constexpr (W == 1) {
            for (; k + kUnroll <= a.n; k += kUnroll) {
                scan_rows<D, W, kUnroll, Widen>(a, op, in, out, kUnroll, running);
                in += kUnroll * input_step<Widen>(a);
                out += kUnroll * a.out_step;
            }
        }
        for (; k < a.n; k += kUnroll) {
            scan_rows<D, W, kUnroll, Widen>(a, op, in, out, (int)min((int64_t)kUnroll, a.n - k), running);
            in += kUnroll * input_step<Widen>(a);
            out += kUnroll * a.out_step;
        }
    }
}

// ---- a narrower input in vectors: W = 16 / its size neighbouring lines a thread -----------
// The input's 16 bytes of a step load as one vector and widen in registers (In, a compile-time
// pair with D, rather than the single lines' run-time conversion); the W outputs are R = W * the
// output size / 16 vectors. Where a warp's groups lie end to end in the output (no run of lines
// ends inside it), the warp's row of outputs goes through shared memory and out as R runs of
// 512 bytes, one a store instruction: stored from registers, a lane's R vectors lie 16 * R bytes
// apart and each store writes a 1/R part of every sector it touches (that lost: bench/NOTES.md
// §2). Both tensors' lines lie on their grids (packed).
template <tscan_dtype In, tscan_dtype D, int kUnroll>
__global__ void __launch_bounds__(kColumnsThreads) columns_widen_kernel(scan_args a) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    using TIn = typename dtype_traits<In>::T;
    constexpr int W = 16 / (int)sizeof(TIn);
    constexpr int R = W * (int)sizeof(T) / 16;
    static_assert(sizeof(TIn) < sizeof(T), "a narrower input");
    __shared__ uint4 s_row[kColumnsThreads / 32][32 * R];  // each warp's row of outputs
    const scan_op<A> op{a.prod};
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t stride = (int64_t)gridDim.x * kColumnsThreads;
    // Whole warps step together (the staged stores): a lane past the last group holds none.
    for (int64_t line = (int64_t)blockIdx.x * kColumnsThreads + threadIdx.x; line - lane < a.lines; line += stride) {
        const bool valid = line < a.lines;
        int64_t in_offset = 0, out_offset = 0;
        if (valid) a.batch.offsets(line, in_offset, out_offset);
        const TIn *in = reinterpret_cast<const TIn *>(a.in) + in_offset;
        T *out = reinterpret_cast<T *>(a.out) + out_offset;
        T *const out0 = reinterpret_cast<T *>(__shfl_sync(kFullMask, (unsigned long long)(uintptr_t)out, 0));
        const bool end_to_end = __all_sync(kFullMask, valid && out == out0 + lane * W);
        A running[W];
#pragma unroll
        for (int w = 0; w < W; ++w) running[w] = op.start(a.exclusive);
        for (int64_t k = 0; k < a.n; k += kUnroll) {
            const int rows = (int)min((int64_t)kUnroll, a.n - k);
            uint4 raw[kUnroll];  // every load before any store: in flight together
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
                if (u < rows && valid) raw[u] = *reinterpret_cast<const uint4 *>(in + (k + u) * a.in_step);
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (u >= rows) continue;  // the same for the whole warp
                item_pack<TIn, W> x;
                x.set_vector(0, raw[u], false);
                item_pack<T, W> y{};
#pragma unroll
                for (int w = 0; w < W; ++w) {
                    const A next = op(running[w], Traits::load(widened<In, T>(x.get(w))));
                    y.set(w, Traits::store(a.exclusive ? running[w] : next));
                    running[w] = next;
                }
                if (end_to_end) {
#pragma unroll
                    for (int v = 0; v < R; ++v) s_row[warp][lane * R + v] = y.vector(v, false);
                    __syncwarp();
                    uint4 *const q = reinterpret_cast<uint4 *>(out0 + (k + u) * a.out_step);
#pragma unroll
                    for (int j = 0; j < R; ++j) q[j * 32 + lane] = s_row[warp][j * 32 + lane];
                    __syncwarp();  // read before the next row overwrites
                } else if (valid) {
                    uint4 *const q = reinterpret_cast<uint4 *>(out + (k + u) * a.out_step);
#pragma unroll
                    for (int v = 0; v < R; ++v) q[v] = y.vector(v, false);
                }
            }
        }
    }
}

// Neighbouring lines of a narrower input lie in groups of w on both tensors' 16-byte grids: 16
// bytes of input, and w outputs in whole vectors.
inline bool widened_lines_packed(const scan_args &a, int w, size_t in_size, size_t out_size) {
    return a.widens && whole_line_vectors(a, w) && side_lines_packed_by(a, input_side(a), w, in_size) &&
           side_lines_packed_by(a, output_side(a), 16 / (int64_t)out_size, out_size);
}

// W neighbouring lines of a narrower input a thread (a packed: the last batch dimension counts
// vectors), where widened_lines_packed and that leaves a block an SM at least (its threads hold
// 64-146 registers; middle_axis int32 into int64, 16384 threads on 132 SMs, lost 88.9 -> 77.3
// against single lines: bench/NOTES.md §2). False, a unchanged, otherwise.
inline bool widen_vectors(scan_args &a, int w, size_t in_size, size_t out_size, int sms) {
    if (a.lines / w < std::max<int64_t>(kMinVectorThreads, (int64_t)sms * kColumnsThreads) ||
        !widened_lines_packed(a, w, in_size, out_size))
        return false;
    pack_lines(a, w);
    return true;
}

// ---- realigned vectors: W neighbouring lines a thread, wherever they lie on the 16-byte grid
// The lines of the last batch dimension (unit stride in both tensors) go W to a thread, in
// groups: the last group of each run of `inner` lines may hold fewer (those move element by
// element). A group's W elements of a step lie anywhere on the grid: a row whose pitch is no
// whole number of vectors moves each step's elements to another place in the vector.
//  - Loads: the two aligned vectors that hold the group's elements, shifted in registers. They
//    may read bytes of other lines anywhere in the input's byte range [in_lo, in_end), where no
//    output byte lies; outside it (near the input's ends) the group loads element by element.
//  - Stores: lane l stores the aligned vector that starts inside the group of lane l - 1, whose
//    elements it takes by a shuffle, when that group ends where l's begins; a lane without such
//    a neighbour stores its group's first part in pieces, and one whose next lane does not take
//    its last part stores that too. So every output byte is written once, by a lane that holds
//    it, and no store reaches outside the output's groups.
struct realign_args {
    int64_t inner;   // lines of the last batch dimension: a run
    int64_t groups;  // groups of W a run (a.batch's last size)
    uintptr_t in_lo, in_end;
};

// The 16 bytes of v shifted down by 8 * Bytes bits (Bytes a power of two up to 8).
template <int Bytes> __device__ __forceinline__ uint4 shifted_down(uint4 v) {
    if constexpr (Bytes == 8) return make_uint4(v.z, v.w, 0, 0);
    else if constexpr (Bytes == 4) return make_uint4(v.y, v.z, v.w, 0);
    else
        return make_uint4(__funnelshift_r(v.x, v.y, 8 * Bytes), __funnelshift_r(v.y, v.z, 8 * Bytes),
                          __funnelshift_r(v.z, v.w, 8 * Bytes), v.w >> (8 * Bytes));
}
// Stores the low `Bytes` bytes of v at p (aligned to Bytes), then drops them from v.
template <int Bytes> __device__ __forceinline__ void store_piece(char *p, uint4 &v) {
    if constexpr (Bytes == 8) *reinterpret_cast<uint2 *>(p) = make_uint2(v.x, v.y);
    else if constexpr (Bytes == 4) *reinterpret_cast<uint32_t *>(p) = v.x;
    else if constexpr (Bytes == 2) *reinterpret_cast<uint16_t *>(p) = (uint16_t)v.x;
    else *reinterpret_cast<uint8_t *>(p) = (uint8_t)v.x;
    v = shifted_down<Bytes>(v);
}
// The bytes of v from p up to the next 16-byte boundary (p off the grid), in aligned pieces
// from the lowest address: each piece aligns the next one to twice its size.
template <size_t Size> __device__ __forceinline__ void store_to_boundary(char *p, uint4 v) {
    if (Size == 1 && (uintptr_t)p & 1) store_piece<1>(p, v), p += 1;
    if (Size <= 2 && (uintptr_t)p & 2) store_piece<2>(p, v), p += 2;
    if (Size <= 4 && (uintptr_t)p & 4) store_piece<4>(p, v), p += 4;
    if ((uintptr_t)p & 8) store_piece<8>(p, v);
}
// The first `bytes` bytes of v (bytes < 16) at p on the 16-byte grid, in aligned pieces from
// the largest.
template <size_t Size> __device__ __forceinline__ void store_from_boundary(char *p, uint4 v, unsigned bytes) {
    if (bytes & 8) store_piece<8>(p, v), p += 8;
    if (Size <= 4 && bytes & 4) store_piece<4>(p, v), p += 4;
    if (Size <= 2 && bytes & 2) store_piece<2>(p, v), p += 2;
    if (Size == 1 && bytes & 1) store_piece<1>(p, v);
}

// An axis of at most kShortUnroll rows: every row is loaded before any is scanned.
template <tscan_dtype D, int W>
__global__ void __launch_bounds__(kColumnsThreads) columns_realigned_kernel(scan_args a, realign_args r) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr size_t kSize = sizeof(T);
    constexpr int kRows = kShortUnroll;
    static_assert(W * kSize == 16, "a group is one vector");
    const scan_op<A> op{a.prod};
    const int lane = threadIdx.x % 32;
    const int rows = (int)a.n;
    const int64_t stride = (int64_t)gridDim.x * kColumnsThreads;
    // Whole warps step together (the stores shuffle): a lane past the last group holds none.
    for (int64_t group = (int64_t)blockIdx.x * kColumnsThreads + threadIdx.x; group - lane < a.lines;
         group += stride) {
        int64_t in_offset = 0, out_offset = 0;
        if (group < a.lines) a.batch.offsets(group, in_offset, out_offset);
        // 0 past the last group: a mask, not a branch around the division (the branch compiles
        // to other code than the kernel measured).
        const int count = lines_in_group(a, group, r.inner, r.groups, W) * (group < a.lines);
        const bool whole = count == W;
        const T *in = reinterpret_cast<const T *>(a.in) + in_offset;
        T *out = reinterpret_cast<T *>(a.out) + out_offset;
        // The groups stay neighbours (or not) at every row: both move by the same step.
        const unsigned long long at = (unsigned long long)(uintptr_t)out;
        const unsigned long long before = __shfl_up_sync(kFullMask, at, 1);
        const int before_whole = __shfl_up_sync(kFullMask, (int)whole, 1);
        const bool joins_before = lane > 0 && whole && before_whole && before + 16 == at;
        const bool joins_after = __shfl_down_sync(kFullMask, (int)joins_before, 1) && lane < 31;
        A running[W];
#pragma unroll
        for (int w = 0; w < W; ++w) running[w] = op.start(a.exclusive);
        // Every load before any shift or scan, so that they overlap in flight.
        uint4 lo[kRows], hi[kRows];
        unsigned shift[kRows];
#pragma unroll
        for (int u = 0; u < kRows; ++u) {
            lo[u] = hi[u] = make_uint4(0, 0, 0, 0);
            shift[u] = 0;
            if (u >= rows || count == 0) continue;
            const T *p = in + u * a.in_step;
            const uintptr_t first = (uintptr_t)p & ~(uintptr_t)15;
            const unsigned s = (unsigned)((uintptr_t)p - first);
            if (whole && (s == 0 || (first >= r.in_lo && first + 32 <= r.in_end))) {
                lo[u] = *reinterpret_cast<const uint4 *>(first);
                if (s != 0) hi[u] = reinterpret_cast<const uint4 *>(first)[1];
                shift[u] = s;
            } else {
                item_pack<T, W> x{};
#pragma unroll
                for (int w = 0; w < W; ++w)
                    if (w < count) x.set(w, p[w]);
                lo[u] = x.vector(0, false);
            }
        }
#pragma unroll
        for (int u = 0; u < kRows; ++u) {
            if (u >= rows) continue;  // the same for the whole warp
            item_pack<T, W> x;
            x.set_vector(0, realigned<kSize>(lo[u], hi[u], shift[u]), false);
#pragma unroll
            for (int w = 0; w < W; ++w) {
                const A next = op(running[w], Traits::load(x.get(w)));
                x.set(w, Traits::store(a.exclusive ? running[w] : next));
                running[w] = next;
            }
            const uint4 v = x.vector(0, false);
            uint4 v_before;
            v_before.x = __shfl_up_sync(kFullMask, v.x, 1);
            v_before.y = __shfl_up_sync(kFullMask, v.y, 1);
            v_before.z = __shfl_up_sync(kFullMask, v.z, 1);
            v_before.w = __shfl_up_sync(kFullMask, v.w, 1);
            T *const q = out + u * a.out_step;
            const unsigned s = (unsigned)((uintptr_t)q & 15);
            char *const vector_start = reinterpret_cast<char *>(q) - s;
            if (whole) {
                if (s == 0) *reinterpret_cast<uint4 *>(q) = v;
                else if (joins_before) *reinterpret_cast<uint4 *>(vector_start) = realigned<kSize>(v_before, v, 16 - s);
                else store_to_boundary<kSize>(reinterpret_cast<char *>(q), v);
                if (s != 0 && !joins_after)
                    store_from_boundary<kSize>(vector_start + 16, realigned<kSize>(v, make_uint4(0, 0, 0, 0), 16 - s), s);
            } else {
#pragma unroll
                for (int w = 0; w < W; ++w)
                    if (w < count) q[w] = x.get(w);
            }
        }
    }
}

// ---- the host's choice ------------------------------------------------------------------
// How the columns kernels take a problem: one line a thread, W packed lines (every vector on
// the grid), or W realigned lines.
enum class columns_form { single, packed, realigned };

// Realigned lines for a (which then counts the last batch dimension in groups of w), with r:
// lines that neighbour in both tensors (unit last stride) but lie off the grid, in runs of at
// least a warp's groups (512 bytes: shorter runs leave most stores in pieces and most groups in
// part), of 1- to 4-byte elements (8-byte ones already fill a sector every four lanes), over an
// axis of at most kShortUnroll rows (a longer one keeps kLongUnroll rows of single lines in
// flight from W times the threads, which measured faster: bench/NOTES.md §2), and no output
// byte in the input's byte range (in place, or overlapping: reading a neighbour's bytes could
// race with its stores). False, a unchanged, otherwise.
inline bool realign_lines(scan_args &a, realign_args &r, int w, size_t elem_size) {
    if (elem_size > 4 || a.n > kShortUnroll || !lines_neighbour(a, 32 * (int64_t)w)) return false;
    uintptr_t out_lo, out_end;
    tensor_byte_range(a, input_side(a), elem_size, r.in_lo, r.in_end);
    tensor_byte_range(a, output_side(a), elem_size, out_lo, out_end);
    if (r.in_lo < out_end && out_lo < r.in_end) return false;
    const int last = a.batch.ndim - 1;
    r.inner = a.batch.sizes[last];
    pack_lines(a, w);
    r.groups = a.batch.sizes[last];
    return true;
}

// The form for a, and a (and r) as its kernel takes them: W neighbouring lines a thread only
// while that leaves kMinVectorThreads threads, packed where every vector lies on the grid.
inline columns_form plan_columns(scan_args &a, realign_args &r, int w, size_t elem_size) {
    r = realign_args{0, 0, 0, 0};
    if (a.widens || a.lines / w < kMinVectorThreads) return columns_form::single;
    if (lines_packed_by(a, w, elem_size)) {
        pack_lines(a, w);
        return columns_form::packed;
    }
    return realign_lines(a, r, w, elem_size) ? columns_form::realigned : columns_form::single;
}

// The grid: a thread a line (or group), capped at kMaxBlocksPerSM waves.
inline unsigned columns_grid(const scan_args &a, int sms) {
    const int64_t blocks = (a.lines + kColumnsThreads - 1) / kColumnsThreads;
    const int64_t cap = kMaxBlocksPerSM * sms;
    return (unsigned)(blocks < cap ? blocks : cap);
}

}  // namespace
}  // namespace tscan
