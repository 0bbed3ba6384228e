// columns.cu - TSCAN_ALGO_COLUMNS: one thread per line, walking the axis. Thread b takes line
// b, so when the last batch dimension has unit stride (a strided axis: the columns of a
// matrix), the threads of a warp touch neighbouring addresses at every step of the walk and
// each load is coalesced. The general fallback: any layout, including in place, 0 and
// negative strides and 64-bit offsets.
//
// Packed lines move as 16-byte vectors: when the last batch dimension has unit stride in
// both tensors and every other stride and both bases keep 16-byte alignment, a thread takes
// 16 / sizeof(T) neighbouring lines and each step of its walk is one 16-byte load and store.
// One or two-byte elements otherwise move 1-2 bytes per instruction, and even 4-byte ones
// leave too few bytes in flight when the axis is short (an axis of 2: two loads a thread).
#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = kernel_policy::columns_threads;
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
__global__ void __launch_bounds__(kThreads) columns_kernel(scan_args a) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    static_assert(!Widen || W == 1, "a narrower input walks single lines");
    const scan_op<A> op{a.prod};
    const int64_t stride = (int64_t)gridDim.x * kThreads;
    for (int64_t line = (int64_t)blockIdx.x * kThreads + threadIdx.x; line < a.lines; line += stride) {
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

template <tscan_dtype K, int W> tscan_status launch_kernel(const scan_args &a, int sms, cudaStream_t stream) {
    const int64_t blocks = (a.lines + kThreads - 1) / kThreads;
    const int64_t cap = kMaxBlocksPerSM * sms;
    const unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    if constexpr (W == 1 && takes_narrower_input(K)) {
        if (a.widens) {
            if (a.n <= kShortUnroll) columns_kernel<K, 1, kShortUnroll, true><<<grid, kThreads, 0, stream>>>(a);
            else columns_kernel<K, 1, kLongUnroll, true><<<grid, kThreads, 0, stream>>>(a);
            TSCAN_LAUNCH_CHECK("columns_kernel");
            return TSCAN_SUCCESS;
        }
    }
    if (a.n <= kShortUnroll)
        columns_kernel<K, W, kShortUnroll, false><<<grid, kThreads, 0, stream>>>(a);
    else
        columns_kernel<K, W, kLongUnroll, false><<<grid, kThreads, 0, stream>>>(a);
    TSCAN_LAUNCH_CHECK("columns_kernel");
    return TSCAN_SUCCESS;
}

// Signed integers run the kernels of their unsigned twins (kernel_dtype): 32 kernels, not 48.
// D is the output's dtype; a narrower input walks single lines (its elements convert one by one).
template <tscan_dtype D> struct columns_launch {
    static tscan_status run(const problem_call &call, void *, cudaStream_t stream) {
        constexpr tscan_dtype K = kernel_dtype(D);
        constexpr int W = 16 / (int)sizeof(typename dtype_traits<K>::T);
        scan_args a = make_scan_args(&call.p);
        if (a.widens || a.lines / W < kMinVectorThreads || !lines_packed_by(a, W, call.p.elem_size))
            return launch_kernel<K, 1>(a, call.sms, stream);
        pack_lines(a, W);
        return launch_kernel<K, W>(a, call.sms, stream);
    }
};

// Every layout, no workspace.
tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    plan->workspace_bytes = 0;
    return plan_problem_call<columns_launch>(p, plan);
}

}  // namespace
}  // namespace tscan

// Every layout and every allowed pair of dtypes.
extern "C" const tscan_strategy tscan_strategy_columns = {TSCAN_ALGO_COLUMNS, tscan::plan,
                                                          tscan::run_plan<tscan::problem_call>, nullptr};
