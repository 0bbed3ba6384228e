// common.cuh - what every strategy shares: the dtype traits table, the dtype dispatch
// generated from TSCAN_DTYPE_LIST, the scan operator, the CUDA-check macros, and the
// kernel-side view of a canonical problem.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "tscan_internal.h"

namespace tscan {

// ---- CUDA checks: convert to TSCAN_ERROR_CUDA with CUDA's text, and clear the error ------
#define TSCAN_CUDA_CHECK(call)                                                             \
    do {                                                                                   \
        cudaError_t tscan_err_ = (call);                                                   \
        if (tscan_err_ != cudaSuccess) {                                                   \
            (void)cudaGetLastError();                                                      \
            return tscan_fail(TSCAN_ERROR_CUDA, "%s: %s (%s)", #call,                      \
                              cudaGetErrorString(tscan_err_), cudaGetErrorName(tscan_err_)); \
        }                                                                                  \
    } while (0)

// After a <<<...>>> launch: configuration errors show up here, not at the launch itself.
#define TSCAN_LAUNCH_CHECK(kernel_name)                                                    \
    do {                                                                                   \
        cudaError_t tscan_err_ = cudaGetLastError();                                       \
        if (tscan_err_ != cudaSuccess)                                                     \
            return tscan_fail(TSCAN_ERROR_CUDA, "launch of %s: %s (%s)", kernel_name,       \
                              cudaGetErrorString(tscan_err_), cudaGetErrorName(tscan_err_)); \
    } while (0)

// ---- dtype traits: storage type T, accumulator A, and the conversions between them --------
// Integers accumulate in an unsigned type at least 32 bits wide: sums and products modulo
// 2^32 (2^64) reduce to the right result modulo 2^bits, with no signed overflow anywhere.
// Half types accumulate in float and round each output to nearest even (SPEC, Arithmetic).
template <tscan_dtype D> struct dtype_traits;

#define TSCAN_PLAIN_TRAITS(D, Storage, Acc)                                               \
    template <> struct dtype_traits<D> {                                                  \
        using T = Storage;                                                                \
        using A = Acc;                                                                    \
        static __host__ __device__ __forceinline__ A load(T x) { return (A)x; }           \
        static __host__ __device__ __forceinline__ T store(A a) { return (T)a; }          \
    };
TSCAN_PLAIN_TRAITS(TSCAN_FLOAT32, float, float)
TSCAN_PLAIN_TRAITS(TSCAN_FLOAT64, double, double)
TSCAN_PLAIN_TRAITS(TSCAN_INT8, int8_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_UINT8, uint8_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_INT16, int16_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_UINT16, uint16_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_INT32, int32_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_UINT32, uint32_t, uint32_t)
TSCAN_PLAIN_TRAITS(TSCAN_INT64, int64_t, uint64_t)
TSCAN_PLAIN_TRAITS(TSCAN_UINT64, uint64_t, uint64_t)
#undef TSCAN_PLAIN_TRAITS

template <> struct dtype_traits<TSCAN_FLOAT16> {
    using T = uint16_t;  // IEEE binary16 bits
    using A = float;
    static __device__ __forceinline__ A load(T x) { return __half2float(__ushort_as_half(x)); }
    static __device__ __forceinline__ T store(A a) { return __half_as_ushort(__float2half_rn(a)); }
};
template <> struct dtype_traits<TSCAN_BFLOAT16> {
    using T = uint16_t;  // bfloat16 bits
    using A = float;
    static __device__ __forceinline__ A load(T x) {
        return __bfloat162float(__ushort_as_bfloat16(x));
    }
    static __device__ __forceinline__ T store(A a) {
        return __bfloat16_as_ushort(__float2bfloat16_rn(a));
    }
};

// The list and the table agree on every element size, or the build stops here.
#define TSCAN_CHECK_SIZE(D, name, bytes)                                                   \
    static_assert(sizeof(typename dtype_traits<D>::T) == (bytes), "size of " #name);
TSCAN_DTYPE_LIST(TSCAN_CHECK_SIZE)
#undef TSCAN_CHECK_SIZE

// Runs Kernel<D>::run(args...) for the run-time dtype d: the one place per strategy where
// every dtype is instantiated, generated from TSCAN_DTYPE_LIST.
template <template <tscan_dtype> class Kernel, class... Args>
tscan_status dispatch_dtype(tscan_dtype d, Args &&...args) {
    switch (d) {
#define TSCAN_DTYPE_CASE(D, name, bytes) \
    case D:                              \
        return Kernel<D>::run(args...);
        TSCAN_DTYPE_LIST(TSCAN_DTYPE_CASE)
#undef TSCAN_DTYPE_CASE
    default:
        return tscan_fail(TSCAN_ERROR_INTERNAL, "dtype %d has no kernel", (int)d);
    }
}

// Signed integers scan bit for bit like the unsigned type of their width: the accumulator is
// unsigned, and the low bits of sums and products depend only on the low bits of the inputs.
// A strategy may forward Kernel<D> to Kernel<kernel_dtype(D)> and so build 8 dtypes, not 12.
constexpr tscan_dtype kernel_dtype(tscan_dtype d) {
    return d == TSCAN_INT8    ? TSCAN_UINT8
           : d == TSCAN_INT16 ? TSCAN_UINT16
           : d == TSCAN_INT32 ? TSCAN_UINT32
           : d == TSCAN_INT64 ? TSCAN_UINT64
                              : d;
}

// ---- the operator: a run-time choice, uniform across the launch --------------------------
template <class A> struct scan_op {
    bool prod;
    __host__ __device__ __forceinline__ A operator()(A a, A b) const { return prod ? a * b : a + b; }
    __host__ __device__ __forceinline__ A identity() const { return prod ? A(1) : A(0); }
};

// ---- the kernel-side view of a tscan_problem ----------------------------------------------
// Direction is folded into the steps: line b is scanned in increasing k over
// in[in_offset(b) + k * in_step], so a decreasing scan is an increasing one over a view
// that starts at the far end with negated steps. Offsets are 64-bit throughout.
struct batch_map {
    int ndim;
    int64_t sizes[TSCAN_MAX_DIMS - 1];
    int64_t in_strides[TSCAN_MAX_DIMS - 1];
    int64_t out_strides[TSCAN_MAX_DIMS - 1];

    // Fully unrolled with guards so the arrays stay in parameter space (no local memory).
    __device__ __forceinline__ void offsets(int64_t b, int64_t &in_off,
                                            int64_t &out_off) const {
        in_off = 0;
        out_off = 0;
#pragma unroll
        for (int d = TSCAN_MAX_DIMS - 2; d >= 0; --d) {
            if (d < ndim) {
                int64_t i = b % sizes[d];
                b /= sizes[d];
                in_off += i * in_strides[d];
                out_off += i * out_strides[d];
            }
        }
    }
};

struct scan_args {
    const char *in;   // element 0 of line 0, direction folded in
    char *out;
    int64_t n;        // line length
    int64_t in_step;  // signed, elements
    int64_t out_step;
    int64_t lines;
    batch_map batch;
    bool prod;
    bool exclusive;
};

inline scan_args make_scan_args(const tscan_problem *p) {
    scan_args a;
    int64_t es = (int64_t)p->elem_size;
    int64_t far = p->reverse ? p->n - 1 : 0;
    a.in = p->in + far * p->in_step * es;
    a.out = p->out + far * p->out_step * es;
    a.n = p->n;
    a.in_step = p->reverse ? -p->in_step : p->in_step;
    a.out_step = p->reverse ? -p->out_step : p->out_step;
    a.lines = p->lines;
    a.batch.ndim = (int)p->batch_ndim;
    for (int d = 0; d < TSCAN_MAX_DIMS - 1; ++d) {
        bool used = d < (int)p->batch_ndim;
        a.batch.sizes[d] = used ? p->batch_sizes[d] : 1;
        a.batch.in_strides[d] = used ? p->in_batch_strides[d] : 0;
        a.batch.out_strides[d] = used ? p->out_batch_strides[d] : 0;
    }
    a.prod = p->op == TSCAN_OP_PROD;
    a.exclusive = p->exclusive != 0;
    return a;
}

// Multiprocessors of the current device (a cheap attribute read, no device sync).
inline tscan_status sm_count(int *count) {
    int dev = 0;
    TSCAN_CUDA_CHECK(cudaGetDevice(&dev));
    TSCAN_CUDA_CHECK(cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, dev));
    return TSCAN_SUCCESS;
}

}  // namespace tscan
