// cub_device.cu - TSCAN_ALGO_CUB_DEVICE: cub::DeviceScan (single pass, decoupled look-back)
// over one line at a time, for one or a few long lines. Every line is one CUB call on the
// caller's stream; the calls run in stream order and so share one temporary storage.
#include <cub/device/device_scan.cuh>

#include <cuda/std/functional>

#include <type_traits>

#include "common.cuh"

namespace tscan {
namespace {

// Each line costs a CUB dispatch (two kernel launches): past this many lines a strategy
// that scans many lines per launch is the right tool, and this one declines.
constexpr int64_t cub_device_max_lines = kernel_policy::cub_device_max_lines;

// Element k of a line, k * step bytes from its first element, widened to the accumulator
// type: an element of D, or of the narrower a.in_dtype when a.widens (converted on load, a
// run-time choice rather than another CUB instantiation). A negative step walks memory
// backwards: that is how a decreasing scan reaches CUB, which only scans forwards.
template <tscan_dtype D> class line_reader {
    using traits = dtype_traits<D>;
    using T = typename traits::T;
    using A = typename traits::A;

public:
    using value_type = A;
    using difference_type = int64_t;
    using pointer = const A *;
    using reference = A;
    using iterator_category = ::cuda::std::random_access_iterator_tag;

    __host__ __device__ line_reader(const char *first, int64_t step, tscan_dtype in_dtype, bool widens)
        : first_(first), step_(step), in_dtype_(in_dtype), widens_(widens) {}
    __device__ A operator*() const { return (*this)[0]; }
    __device__ A operator[](difference_type k) const {
        const char *at = first_ + k * step_;
        if constexpr (takes_narrower_input(D))
            if (widens_) return traits::load(read_widened<D>(at, in_dtype_));
        return traits::load(*reinterpret_cast<const T *>(at));
    }
    __host__ __device__ line_reader operator+(difference_type k) const {
        return line_reader(first_ + k * step_, step_, in_dtype_, widens_);
    }

private:
    const char *first_;
    int64_t step_;
    tscan_dtype in_dtype_;
    bool widens_;
};

// The output side of line_reader: assigning an accumulator value to element k narrows it to
// the storage type (round to nearest even for the half types) and stores it.
template <tscan_dtype D> class line_writer {
    using traits = dtype_traits<D>;
    using T = typename traits::T;
    using A = typename traits::A;

    class element {
    public:
        __device__ explicit element(T *at) : at_(at) {}
        __device__ const element &operator=(A value) const {
            *at_ = traits::store(value);
            return *this;
        }

    private:
        T *at_;
    };

public:
    using value_type = A;
    using difference_type = int64_t;
    using pointer = void;
    using reference = element;
    using iterator_category = ::cuda::std::random_access_iterator_tag;

    __host__ __device__ line_writer(T *first, int64_t step) : first_(first), step_(step) {}
    __device__ element operator*() const { return element(first_); }
    __device__ element operator[](difference_type k) const { return element(first_ + k * step_); }
    __host__ __device__ line_writer operator+(difference_type k) const {
        return line_writer(first_ + k * step_, step_);
    }

private:
    T *first_;
    int64_t step_;
};

// One CUB scan of n items; temp == nullptr only sizes it. The int64_t count makes CUB use
// 64-bit offsets, so a line may exceed 2^31 elements.
template <class In, class Out, class Op, class A>
cudaError_t device_scan(void *temp, size_t &temp_bytes, In in, Out out, Op op, A identity, bool exclusive,
                        int64_t n, cudaStream_t stream) {
    if (exclusive)
        return cub::DeviceScan::ExclusiveScan(temp, temp_bytes, in, out, op, identity, n, stream);
    return cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, op, n, stream);
}

// Sizes (workspace == nullptr: *bytes receives CUB's temp_storage_bytes) or runs the scan of
// every line of p. Both go through scan_line, so the size is that of the instantiation that
// runs: exactly what the launch needs.
template <tscan_dtype D> struct cub_lines {
    using T = typename dtype_traits<D>::T;
    using A = typename dtype_traits<D>::A;

    // in: the line's first input element (of a.in_dtype).
    static cudaError_t scan_line(void *temp, size_t &temp_bytes, const char *in, T *out, const scan_args &a,
                                 cudaStream_t stream) {
        const scan_op<A> op{a.prod};
        // Lines stored as their own accumulator type and contiguous in increasing order go to
        // CUB as raw pointers: cache-modified loads, no per-element multiply. Sums there take
        // cuda::std::plus, for which CUB has tuned Hopper policies; a run-time operator gets
        // its generic policy, which runs well behind it (bench/NOTES.md §3.10).
        if constexpr (std::is_same_v<T, A>) {
            if (!a.widens && a.in_step == 1 && a.out_step == 1) {
                const T *raw = reinterpret_cast<const T *>(in);
                if (!a.prod)
                    return device_scan(temp, temp_bytes, raw, out, ::cuda::std::plus<A>{}, A(0), a.exclusive, a.n,
                                       stream);
                return device_scan(temp, temp_bytes, raw, out, op, op.identity(), a.exclusive, a.n, stream);
            }
        }
        const line_reader<D> reader(in, a.in_step * a.in_bytes, a.in_dtype, a.widens);
        return device_scan(temp, temp_bytes, reader, line_writer<D>(out, a.out_step), op, op.identity(), a.exclusive,
                           a.n, stream);
    }

    static tscan_status run(const tscan_problem *p, void *workspace, size_t *bytes, cudaStream_t stream) {
        const scan_args a = make_scan_args(p);
        if (!workspace) {  // the size depends on n, the types and the path, not on the line
            *bytes = 0;
            TSCAN_CUDA_CHECK(scan_line(nullptr, *bytes, a.in, (T *)a.out, a, stream));
            return TSCAN_SUCCESS;
        }
        for (int64_t b = 0; b < a.lines; ++b) {
            int64_t in_off = 0, out_off = 0;
            tscan_problem_line_offsets(p, b, &in_off, &out_off);
            size_t temp_bytes = *bytes;
            TSCAN_CUDA_CHECK(scan_line(workspace, temp_bytes, a.in + in_off * a.in_bytes,
                                       (T *)(a.out + out_off * (int64_t)p->out_elem_size), a, stream));
        }
        return TSCAN_SUCCESS;
    }
};

// Signed integers run the unsigned instantiation (see kernel_dtype).
template <tscan_dtype D> struct cub_launch {
    static tscan_status run(const problem_call &call, void *workspace, cudaStream_t stream) {
        // A null temp storage would turn CUB's call into a size query that scans nothing.
        if (!workspace)
            return tscan_fail(TSCAN_ERROR_WORKSPACE, "cub_device needs a workspace and got NULL (%zu bytes needed)",
                              call.cub_temp_bytes);
        size_t bytes = call.cub_temp_bytes;
        return cub_lines<kernel_dtype(D)>::run(&call.p, workspace, &bytes, stream);
    }
};
template <tscan_dtype D> struct cub_temp_size {
    static tscan_status run(const tscan_problem *p, size_t *bytes) {
        return cub_lines<kernel_dtype(D)>::run(p, nullptr, bytes, cudaStream_t{});
    }
};

tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    if (p->lines > cub_device_max_lines)
        return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                          "cub_device scans one line per CUB launch and takes at most %lld lines; this "
                          "problem has %lld lines of %lld elements (use rows, columns or lookback)",
                          (long long)cub_device_max_lines, (long long)p->lines, (long long)p->n);
    tscan_status s = plan_problem_call<cub_launch>(p, plan);
    plan->workspace_bytes = 0;
    // CUB sizes its temp storage from the device: a host-only query (nothing will launch)
    // plans without it.
    if (s != TSCAN_SUCCESS || !tscan_device_present()) return s;
    problem_call *const call = plan_state<problem_call>(plan);
    s = dispatch_dtype<cub_temp_size>(p->out_dtype, p, &call->cub_temp_bytes);
    plan->workspace_bytes = call->cub_temp_bytes;
    return s;
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_cub_device = {TSCAN_ALGO_CUB_DEVICE, tscan::plan,
                                                             tscan::run_plan<tscan::problem_call>, nullptr};
