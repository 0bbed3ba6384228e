// columns.cu - TSCAN_ALGO_COLUMNS: one thread per line, walking the axis. Thread b takes line
// b, so when the last batch dimension has unit stride (a strided axis: the columns of a
// matrix), the threads of a warp touch neighbouring addresses at every step of the walk and
// each load is coalesced. The general fallback: any layout, including in place, 0 and
// negative strides and 64-bit offsets.
#include <climits>

#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = 256;
// Rows loaded into registers before any is scanned: enough independent loads in flight per
// thread to cover memory latency when there are only tens of thousands of columns.
constexpr int kUnroll = 16;

template <tscan_dtype D>
__global__ void __launch_bounds__(kThreads) columns_kernel(scan_args a) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    const scan_op<A> op{a.prod};
    const int64_t stride = (int64_t)gridDim.x * kThreads;
    for (int64_t line = (int64_t)blockIdx.x * kThreads + threadIdx.x; line < a.lines; line += stride) {
        int64_t in_offset, out_offset;
        a.batch.offsets(line, in_offset, out_offset);
        const T *in = reinterpret_cast<const T *>(a.in) + in_offset;
        T *out = reinterpret_cast<T *>(a.out) + out_offset;
        A running = op.identity();
        int64_t k = 0;
        // All loads of a block of rows come before its stores: in place, each element is read
        // before it is overwritten, and the loads overlap in flight.
        for (; k + kUnroll <= a.n; k += kUnroll) {
            T x[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                x[u] = *in;
                in += a.in_step;
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const A next = op(running, Traits::load(x[u]));
                *out = Traits::store(a.exclusive ? running : next);
                out += a.out_step;
                running = next;
            }
        }
        for (; k < a.n; ++k) {
            const A next = op(running, Traits::load(*in));
            *out = Traits::store(a.exclusive ? running : next);
            in += a.in_step;
            out += a.out_step;
            running = next;
        }
    }
}

// Signed integers run the kernels of their unsigned twins (kernel_dtype): 8 kernels, not 12.
template <tscan_dtype D> struct columns_launch {
    static tscan_status run(const scan_args &a, cudaStream_t stream) {
        const int64_t blocks = (a.lines + kThreads - 1) / kThreads;  // more lines: grid-stride loop
        const unsigned grid = (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
        columns_kernel<kernel_dtype(D)><<<grid, kThreads, 0, stream>>>(a);
        TSCAN_LAUNCH_CHECK("columns_kernel");
        return TSCAN_SUCCESS;
    }
};

tscan_status check(const tscan_problem *) { return TSCAN_SUCCESS; }

tscan_status workspace_size(const tscan_problem *, size_t *bytes) {
    *bytes = 0;
    return TSCAN_SUCCESS;
}

tscan_status launch(const tscan_problem *p, void *, size_t, cudaStream_t stream) {
    return dispatch_dtype<columns_launch>(p->dtype, make_scan_args(p), stream);
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_columns = {TSCAN_ALGO_COLUMNS, tscan::check,
                                                          tscan::workspace_size, tscan::launch};
