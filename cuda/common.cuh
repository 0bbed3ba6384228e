// common.cuh - what every strategy shares: the dtype traits table, the dtype dispatch
// generated from TSCAN_DTYPE_LIST, the scan operator, the CUDA-check macros, and the
// kernel-side view of a canonical problem.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cuda/std/bit>

#include <cstdint>
#include <type_traits>

#include "tscan_internal.h"
#include "policy.cuh"

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
// Half types accumulate in float and round each output to nearest even (CONTRACT §1.3).
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
#define TSCAN_CHECK_SIZE(D, name, bytes, kind)                                             \
    static_assert(sizeof(typename dtype_traits<D>::T) == (bytes), "size of " #name);
TSCAN_DTYPE_LIST(TSCAN_CHECK_SIZE)
#undef TSCAN_CHECK_SIZE

// Runs Kernel<D>::run(args...) for the run-time dtype d: the one place per strategy where
// every dtype is instantiated, generated from TSCAN_DTYPE_LIST.
template <template <tscan_dtype> class Kernel, class... Args>
tscan_status dispatch_dtype(tscan_dtype d, Args &&...args) {
    switch (d) {
#define TSCAN_DTYPE_CASE(D, name, bytes, kind) \
    case D:                                    \
        return Kernel<D>::run(args...);
        TSCAN_DTYPE_LIST(TSCAN_DTYPE_CASE)
#undef TSCAN_DTYPE_CASE
    default:
        return tscan_fail(TSCAN_ERROR_INTERNAL, "dtype %d has no kernel", (int)d);
    }
}

// Runs Kernel<In, Out>::run(args...) for the run-time pair (in, out): every pair that
// tscan_pair_allowed lists, instantiated once under its kernel dtypes (an input of the
// output's width read as the output's unsigned twin, a narrower one as itself, since its
// signedness decides how it extends). Defined after kernel_dtype, below.
template <template <tscan_dtype, tscan_dtype> class Kernel, class... Args>
tscan_status dispatch_pair(tscan_dtype in, tscan_dtype out, Args &&...args);

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

constexpr tscan_dtype kernel_input_dtype(tscan_dtype in, tscan_dtype out) {
    return tscan_bytes_of(in) == tscan_bytes_of(out) ? kernel_dtype(out) : in;
}

template <tscan_dtype In, template <tscan_dtype, tscan_dtype> class Kernel, class... Args>
tscan_status dispatch_output(tscan_dtype out, Args &&...args) {
    switch (out) {
#define TSCAN_PAIR_CASE(O, name, bytes, kind)                                              \
    case O:                                                                                \
        if constexpr (tscan_pair_allowed(In, O))                                           \
            return Kernel<kernel_input_dtype(In, O), kernel_dtype(O)>::run(args...);       \
        break;
        TSCAN_DTYPE_LIST(TSCAN_PAIR_CASE)
#undef TSCAN_PAIR_CASE
    default:
        break;
    }
    return tscan_fail(TSCAN_ERROR_INTERNAL, "no kernel for %s into dtype %d", tscan_dtype_name(In), (int)out);
}

template <template <tscan_dtype, tscan_dtype> class Kernel, class... Args>
tscan_status dispatch_pair(tscan_dtype in, tscan_dtype out, Args &&...args) {
    switch (in) {
#define TSCAN_PAIR_INPUT_CASE(I, name, bytes, kind) \
    case I:                                         \
        return dispatch_output<I, Kernel>(out, args...);
        TSCAN_DTYPE_LIST(TSCAN_PAIR_INPUT_CASE)
#undef TSCAN_PAIR_INPUT_CASE
    default:
        return tscan_fail(TSCAN_ERROR_INTERNAL, "dtype %d has no kernel", (int)in);
    }
}

// ---- inputs of a narrower type (CONTRACT §1.2) --------------------------------------
// A kernel of output dtype D reads a narrower input through the run-time input dtype: each
// element converted to D's storage type T on load (integers as C converts them, floats
// exactly), after which the scan is the same-type one. Signed integers may run the unsigned
// kernel of their width (kernel_dtype): the conversion keeps the same low bits either way, and
// an input of the output's width (int32 into uint32) is already the unsigned kernel's bits.

// The unsigned integer of N bytes (1, 2, 4 or 8).
template <size_t N>
using unsigned_bytes =
    std::conditional_t<N == 1, uint8_t,
                       std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;

// Whether some narrower input may scan into D (tscan_pair_allowed): the kernels of the others
// (uint8, float16, bfloat16) compile no widening path, and keep their registers.
constexpr bool takes_narrower_input(tscan_dtype d) {
#define TSCAN_NARROWER_INPUT(I, name, bytes, kind) || (bytes < tscan_bytes_of(d) && tscan_pair_allowed(I, d))
    return false TSCAN_DTYPE_LIST(TSCAN_NARROWER_INPUT);
#undef TSCAN_NARROWER_INPUT
}

// An element of dtype In (its storage bits) as the wider storage type T.
template <tscan_dtype In, class T> __device__ __forceinline__ T widened(typename dtype_traits<In>::T raw) {
    if constexpr (tscan_kind_of(In) == TSCAN_KIND_float) return (T)dtype_traits<In>::load(raw);
    else return (T)raw;
}

template <tscan_dtype In, class T> __device__ __forceinline__ T converted(const char *p) {
    return widened<In, T>(*reinterpret_cast<const typename dtype_traits<In>::T *>(p));
}

// The input element at p, of dtype `in` (narrower than D), as D's storage type. Only the
// narrower pairs that tscan_pair_allowed lists are instantiated; validation has refused the
// others, so the end of the switch is not reached.
template <tscan_dtype D>
__device__ __forceinline__ typename dtype_traits<D>::T read_widened(const char *p, tscan_dtype in) {
    using T = typename dtype_traits<D>::T;
    switch (in) {
#define TSCAN_WIDEN_CASE(I, name, bytes, kind)                                                    \
    case I:                                                                                       \
        if constexpr (bytes < sizeof(T) && tscan_pair_allowed(I, D)) return converted<I, T>(p); \
        break;
        TSCAN_DTYPE_LIST(TSCAN_WIDEN_CASE)
#undef TSCAN_WIDEN_CASE
    default:
        break;
    }
    return T{};
}

// Rows lo..hi-1 of a narrower input of dtype In (row i at p + i * step_bytes) as D's storage
// type, the others zero. Every row is loaded before any is converted: a conversion beside its
// load (float16's cvt, a sign extension) made each load wait for the one before it (lookback's
// float16 into float32 ran at 55 % of a copy, uint8 into int32 at 82: bench/NOTES.md §2).
template <tscan_dtype In, tscan_dtype D, int R>
__device__ __forceinline__ void read_converted_rows(typename dtype_traits<D>::T (&x)[R], const char *p,
                                                    int64_t step_bytes, int64_t lo, int64_t hi) {
    using TI = typename dtype_traits<In>::T;
    TI raw[R];
#pragma unroll
    for (int i = 0; i < R; ++i, p += step_bytes) raw[i] = i >= lo && i < hi ? *reinterpret_cast<const TI *>(p) : TI{};
#pragma unroll
    for (int i = 0; i < R; ++i) x[i] = widened<In, typename dtype_traits<D>::T>(raw[i]);
}

// The same for the run-time input dtype `in`, one that may scan into D: the switch is outside
// the loops, `in` being the same for the whole launch.
template <tscan_dtype D, int R>
__device__ __forceinline__ void read_widened_rows(typename dtype_traits<D>::T (&x)[R], const char *p,
                                                  int64_t step_bytes, int64_t lo, int64_t hi, tscan_dtype in) {
    switch (in) {
#define TSCAN_WIDEN_ROWS(I, name, bytes, kind)                                                \
    case I:                                                                                   \
        if constexpr (bytes < sizeof(typename dtype_traits<D>::T) && tscan_pair_allowed(I, D)) \
            read_converted_rows<I, D>(x, p, step_bytes, lo, hi);                              \
        break;
        TSCAN_DTYPE_LIST(TSCAN_WIDEN_ROWS)
#undef TSCAN_WIDEN_ROWS
    default:
        break;
    }
}

// Rows lo..hi-1 of a narrower input of dtype In as words of V consecutive elements (row i's at p
// + i * step_bytes, in memory order), each element converted to D's storage type and passed on
// as put(i, j, x), element j of row i; the other rows pass zeros. As read_converted_rows: every
// word is loaded before any is converted.
template <tscan_dtype In, tscan_dtype D, int V, int R, class Put>
__device__ __forceinline__ void read_converted_words(const Put &put, const char *p, int64_t step_bytes, int64_t lo,
                                                     int64_t hi) {
    using TI = typename dtype_traits<In>::T;
    using Word = unsigned_bytes<V * sizeof(TI)>;
    Word raw[R];
#pragma unroll
    for (int i = 0; i < R; ++i, p += step_bytes) raw[i] = i >= lo && i < hi ? *reinterpret_cast<const Word *>(p) : Word{};
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const auto bits = (unsigned_bytes<sizeof(TI)>)(raw[i] >> (j * 8 * sizeof(TI)));
            put(i, j, widened<In, typename dtype_traits<D>::T>(::cuda::std::bit_cast<TI>(bits)));
        }
    }
}
// The same for the run-time input dtype `in`.
template <tscan_dtype D, int V, int R, class Put>
__device__ __forceinline__ void read_widened_words(const Put &put, const char *p, int64_t step_bytes, int64_t lo,
                                                   int64_t hi, tscan_dtype in) {
    switch (in) {
#define TSCAN_WIDEN_WORDS(I, name, bytes, kind)                                               \
    case I:                                                                                   \
        if constexpr (bytes < sizeof(typename dtype_traits<D>::T) && tscan_pair_allowed(I, D)) \
            read_converted_words<I, D, V, R>(put, p, step_bytes, lo, hi);                     \
        break;
        TSCAN_DTYPE_LIST(TSCAN_WIDEN_WORDS)
#undef TSCAN_WIDEN_WORDS
    default:
        break;
    }
}

// ITEMS consecutive elements of a narrower input of the run-time dtype `in`, the lowest at p
// (aligned to their words: min(ITEMS, 8 bytes' worth) elements each), as D's storage type,
// passed on as put(m, x), m the element's place in memory order. Every word loads before any
// converts (read_converted_words).
template <tscan_dtype D, int ITEMS, class Put>
__device__ __forceinline__ void read_widened_item_words(const Put &put, const char *p, tscan_dtype in) {
    switch (in) {
#define TSCAN_WIDEN_ITEM_WORDS(I, name, bytes, kind)                                                        \
    case I:                                                                                                 \
        if constexpr (bytes < sizeof(typename dtype_traits<D>::T) && tscan_pair_allowed(I, D)) {            \
            constexpr int kWord = ITEMS * bytes < 8 ? ITEMS : 8 / bytes;                                    \
            read_converted_words<I, D, kWord, ITEMS / kWord>(                                               \
                [&](int i, int j, typename dtype_traits<D>::T x) { put(i * kWord + j, x); }, p, kWord * bytes, 0, \
                ITEMS / kWord);                                                                             \
        }                                                                                                   \
        break;
        TSCAN_DTYPE_LIST(TSCAN_WIDEN_ITEM_WORDS)
#undef TSCAN_WIDEN_ITEM_WORDS
    default:
        break;
    }
}

// ---- the operator: a run-time choice, uniform across the launch --------------------------
// Two starting values. identity() is what the definition starts an exclusive scan from (+0 for
// sums). neutral() leaves every x unchanged, -0 included: -0 for a float sum, since +0 + -0 is
// +0. Inclusive scans start from neutral(), and partial reductions and padding use it, so that
// a line of -0 scans to -0 as in the reference.
template <class A> struct scan_op {
    bool prod;
    __host__ __device__ __forceinline__ A operator()(A a, A b) const { return prod ? a * b : a + b; }
    __host__ __device__ __forceinline__ A identity() const { return prod ? A(1) : A(0); }
    __host__ __device__ __forceinline__ A neutral() const {
        if constexpr (std::is_floating_point_v<A>) return prod ? A(1) : -A(0);
        return identity();
    }
    // The value a scan starts from, before its first element.
    __host__ __device__ __forceinline__ A start(bool exclusive) const { return exclusive ? identity() : neutral(); }
};

// The operator fixed at compile time, for loops over a thread's items: with scan_op's run-time
// choice the compiler computes both the sum and the product of every item and selects. rows
// passes it to a generic lambda; lookback's kernel cannot (a generic lambda there crashes
// cudafe++ in CUDA 13) and calls its inlined steps with a constant scan_op instead.
template <class A, bool Prod> struct fixed_op {
    __device__ __forceinline__ A operator()(A a, A b) const { return Prod ? a * b : a + b; }
};

// ---- elements packed in a wider word W (32 or 64 bits), element 0 at the lowest address ----
template <class T> using element_bits = unsigned_bytes<sizeof(T)>;
template <class T, class W> __device__ __forceinline__ T word_element(W w, int j) {
    static_assert(sizeof(T) < sizeof(W), "elements narrower than the word");
    return ::cuda::std::bit_cast<T>((element_bits<T>)(w >> (j * 8 * sizeof(T))));
}
template <class T, class W> __device__ __forceinline__ W with_word_element(W w, int j, T value) {
    constexpr W mask = ((W)1 << (8 * sizeof(T))) - 1;
    const int shift = j * 8 * (int)sizeof(T);
    return (w & ~(mask << shift)) | (W)::cuda::std::bit_cast<element_bits<T>>(value) << shift;
}

// ---- ITEMS storage elements packed in 32-bit words --------------------------------------
// Byte and half types take a register per word, not per element, and move as 16-byte vectors.
template <class T, int ITEMS> struct item_pack {
    static_assert(ITEMS * sizeof(T) % 16 == 0, "whole 16-byte vectors");
    uint32_t words[ITEMS * sizeof(T) / 4];

    __device__ __forceinline__ T get(int i) const {
        if constexpr (sizeof(T) == 8) {
            return ::cuda::std::bit_cast<T>((uint64_t)words[2 * i] | (uint64_t)words[2 * i + 1] << 32);
        } else if constexpr (sizeof(T) == 4) {
            return ::cuda::std::bit_cast<T>(words[i]);
        } else {
            constexpr int per_word = 4 / sizeof(T);
            return word_element<T>(words[i / per_word], i % per_word);
        }
    }
    __device__ __forceinline__ void set(int i, T value) {
        if constexpr (sizeof(T) == 8) {
            const uint64_t u = ::cuda::std::bit_cast<uint64_t>(value);
            words[2 * i] = (uint32_t)u;
            words[2 * i + 1] = (uint32_t)(u >> 32);
        } else if constexpr (sizeof(T) == 4) {
            words[i] = ::cuda::std::bit_cast<uint32_t>(value);
        } else {
            constexpr int per_word = 4 / sizeof(T);
            uint32_t &w = words[i / per_word];
            w = with_word_element(w, i % per_word, value);
        }
    }
    // Vector u as stored in memory for an increasing line, or for a decreasing one (reversed:
    // the lowest address holds the last scan element).
    __device__ __forceinline__ uint4 vector(int u, bool reversed) const {
        const uint4 v = make_uint4(words[4 * u], words[4 * u + 1], words[4 * u + 2], words[4 * u + 3]);
        return reversed ? reverse_elements(v) : v;
    }
    __device__ __forceinline__ void set_vector(int u, uint4 v, bool reversed) {
        if (reversed) v = reverse_elements(v);
        words[4 * u] = v.x;
        words[4 * u + 1] = v.y;
        words[4 * u + 2] = v.z;
        words[4 * u + 3] = v.w;
    }
    static __device__ __forceinline__ uint4 reverse_elements(uint4 v) {
        if constexpr (sizeof(T) == 8) {
            return make_uint4(v.z, v.w, v.x, v.y);
        } else {
            // __byte_perm selector: the word's elements in reverse order
            constexpr unsigned within = sizeof(T) == 4 ? 0x3210 : sizeof(T) == 2 ? 0x1032 : 0x0123;
            return make_uint4(__byte_perm(v.w, 0, within), __byte_perm(v.z, 0, within),
                              __byte_perm(v.y, 0, within), __byte_perm(v.x, 0, within));
        }
    }
};

// Every lane of a warp, for its shuffles and votes.
constexpr unsigned kFullMask = 0xffffffffu;

// A warp's rows of values, lane l holding values[r] of row r: each replaced by the reduction of
// carry and every value before it (rows in order, lanes in order within a row), and carry
// advanced past them all. The rows' shuffles interleave, so that their latencies overlap.
template <int R, class A, class Op>
__device__ __forceinline__ void warp_rows_exclusive(A (&values)[R], A &carry, const Op &op, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const A up = __shfl_up_sync(kFullMask, values[r], d);
            if (lane >= d) values[r] = op(up, values[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const A before = __shfl_up_sync(kFullMask, values[r], 1);
        const A row_total = __shfl_sync(kFullMask, values[r], 31);
        values[r] = lane == 0 ? carry : op(carry, before);
        carry = op(carry, row_total);
    }
}

// The least l with 2^l >= x (host planning: tile sides).
inline int log2_ceil(int64_t x) {
    int l = 0;
    while ((int64_t(1) << l) < x) ++l;
    return l;
}

// n / d for every 32-bit n, by a multiply and a shift (Granlund and Montgomery's round-up
// method): shift = ceil(log2 d), magic = floor(2^32 (2^shift - d) / d) + 1, which fits 32 bits.
struct fast_divisor {
    uint32_t d, magic, shift;
    __host__ __device__ __forceinline__ uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
        const uint64_t high = __umulhi(n, magic);
#else
        const uint64_t high = ((uint64_t)n * magic) >> 32;
#endif
        return (uint32_t)((high + n) >> shift);
    }
    __host__ __device__ __forceinline__ uint32_t mod(uint32_t n) const { return n - div(n) * d; }
};
inline fast_divisor make_divisor(uint32_t d) {
    const uint32_t shift = (uint32_t)log2_ceil(d);
    const uint64_t magic = ((uint64_t)1 << 32) * (((uint64_t)1 << shift) - d) / d + 1;
    return fast_divisor{d, (uint32_t)magic, shift};
}

// The unsigned integer of Size bytes: what kernels that only move elements (the copies of
// broadcast lines, the gather of permuted inputs) load and store, whatever the dtype.
template <int Size> struct unsigned_of;
template <> struct unsigned_of<1> { using type = uint8_t; };
template <> struct unsigned_of<2> { using type = uint16_t; };
template <> struct unsigned_of<4> { using type = uint32_t; };
template <> struct unsigned_of<8> { using type = uint64_t; };

// ---- realigned vectors: 16-byte loads at memory's own alignment, shifted in registers ------
// Drops the first `shift` bytes of w (memory order, lowest address first; shift < 16 and a
// multiple of the element size Size): afterwards w[j] holds bytes [4j + shift, 4j + shift + 4)
// for j < N - 4. Word selects in two stages, then a funnel shift within words (each only
// where the element size allows a shift of its kind).
template <size_t Size, int N> __device__ __forceinline__ void drop_low_bytes(uint32_t (&w)[N], unsigned shift) {
    const unsigned word_shift = shift / 4;
    if constexpr (Size < 8) {
#pragma unroll
        for (int j = 0; j < N - 1; ++j) w[j] = word_shift & 1 ? w[j + 1] : w[j];
    }
#pragma unroll
    for (int j = 0; j < N - 3; ++j) w[j] = word_shift & 2 ? w[j + 2] : w[j];
    if constexpr (Size < 4) {
#pragma unroll
        for (int j = 0; j < N - 4; ++j) w[j] = __funnelshift_r(w[j], w[j + 1], 8 * (shift % 4));
    }
}

// Bytes [shift, shift + 16) of lo then hi (memory order).
template <size_t Size> __device__ __forceinline__ uint4 realigned(uint4 lo, uint4 hi, unsigned shift) {
    uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    drop_low_bytes<Size>(w, shift);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// ---- 1- and 2-byte integer lines, 4 / Size of them to a 32-bit word ------------------------
// A sum or product kept in an integer output's width depends only on the low bits of its
// terms (CONTRACT §1.2; signed and unsigned, and a same-width pair, alike): a word holding 4 /
// Size lines' low bytes (Size 1) or halves (Size 2), line j at bits [8 Size j, 8 Size (j + 1)),
// combines line by line with no carry between them.
template <int Size> struct packed_lines_op {
    static_assert(Size == 1 || Size == 2, "bytes or 16-bit halves");
    static constexpr int kBits = 8 * Size;
    bool prod;
    __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const {
        if (!prod) {
            if constexpr (Size == 1) return __vadd4(a, b);
            else return __vadd2(a, b);
        }
        uint32_t r = 0;  // line j's product: its low bits depend on the factors' low bits alone
#pragma unroll
        for (int j = 0; j < 32 / kBits; ++j) r |= ((a >> kBits * j) * (b >> kBits * j) & ((1u << kBits) - 1)) << kBits * j;
        return r;
    }
    __device__ __forceinline__ uint32_t neutral() const { return prod ? (Size == 1 ? 0x01010101u : 0x00010001u) : 0u; }
    __device__ __forceinline__ uint32_t start(bool) const { return neutral(); }
};
// The low 8 * Size bits of 4 / Size accumulators, packed as packed_lines_op takes them.
template <int Size, class A> __device__ __forceinline__ uint32_t packed_low_bits(const A (&value)[4 / Size]) {
    uint32_t r = 0;
#pragma unroll
    for (int j = 0; j < 4 / Size; ++j) r |= ((uint32_t)value[j] & ((1u << 8 * Size) - 1)) << 8 * Size * j;
    return r;
}

// ---- sums and products of 1-byte elements, four to a 32-bit word -------------------------
// A 1-byte output keeps a sum's low byte, which depends only on the low bytes of the terms: a
// word of four elements is summed, scanned and packed whole, signed or not, with dp4a and
// byte permutes (about two instructions an element, where taking it apart costs five). Running
// sums are 32-bit accumulators whose low byte is the element's.
__device__ __forceinline__ uint32_t byte_word_total(uint32_t word, uint32_t acc) { return __dp4a(word, 0x01010101u, acc); }
// The word's four running sums from acc (inclusive, or exclusive: each before its element),
// their low bytes packed in the word's order; acc moves past the word.
__device__ __forceinline__ uint32_t byte_word_scan(uint32_t word, uint32_t &acc, bool exclusive) {
    const uint32_t w3 = exclusive ? 0x00010101u : 0x01010101u;  // element 3's weights of elements 0..3
    const uint32_t p0 = __dp4a(word, w3 >> 24, acc), p1 = __dp4a(word, w3 >> 16, acc);
    const uint32_t p2 = __dp4a(word, w3 >> 8, acc), p3 = __dp4a(word, w3, acc);
    acc = byte_word_total(word, acc);
    return __byte_perm(__byte_perm(p0, p1, 0x0040), __byte_perm(p2, p3, 0x4000), 0x7610);
}
// Products likewise: a product's low byte depends only on the factors' low bytes, so each
// element multiplies in as the word shifted down to it, unmasked (a shift and a multiply an
// element, and three permutes a word, where taking it apart costs five).
__device__ __forceinline__ uint32_t byte_word_product(uint32_t word, uint32_t acc) {
    return acc * (word * (word >> 8)) * ((word >> 16) * (word >> 24));
}
__device__ __forceinline__ uint32_t byte_word_product_scan(uint32_t word, uint32_t &acc, bool exclusive) {
    const uint32_t p0 = acc * word, p1 = p0 * (word >> 8), p2 = p1 * (word >> 16), p3 = p2 * (word >> 24);
    const uint32_t lo = exclusive ? __byte_perm(acc, p0, 0x0040) : __byte_perm(p0, p1, 0x0040);
    const uint32_t hi = exclusive ? __byte_perm(p1, p2, 0x0040) : __byte_perm(p2, p3, 0x0040);
    acc = p3;
    return __byte_perm(lo, hi, 0x5410);
}
// Either operator on a word (prod: products), for kernels that choose it where they call: its
// total into acc, its running values from acc, and the word with its bytes outside keep set to
// the operator's neutral byte (0 or 1), which leaves totals and running values alone.
__device__ __forceinline__ uint32_t byte_word_reduce(uint32_t word, uint32_t acc, bool prod) {
    return prod ? byte_word_product(word, acc) : byte_word_total(word, acc);
}
__device__ __forceinline__ uint32_t byte_word_rescan(uint32_t word, uint32_t &acc, bool exclusive, bool prod) {
    return prod ? byte_word_product_scan(word, acc, exclusive) : byte_word_scan(word, acc, exclusive);
}
__device__ __forceinline__ uint32_t byte_word_masked(uint32_t word, uint32_t keep, bool prod) {
    return prod ? (word & keep) | (0x01010101u & ~keep) : word & keep;
}
// Four lines a word (byte j is line j): lines 0 and 2, or 1 and 3, each in a 16-bit lane, so
// that one 32-bit add adds two lines. A lane carries into the next only past 256 adds.
__device__ __forceinline__ uint32_t even_bytes(uint32_t word) { return __byte_perm(word, 0, 0x4240); }
__device__ __forceinline__ uint32_t odd_bytes(uint32_t word) { return __byte_perm(word, 0, 0x4341); }
__device__ __forceinline__ uint32_t interleaved_bytes(uint32_t even, uint32_t odd) { return __byte_perm(even, odd, 0x6240); }

// ---- the kernel-side view of a tscan_problem ----------------------------------------------
// Direction is folded into the steps: line b is scanned in increasing k over
// in[in_offset(b) + k * in_step], so a decreasing scan is an increasing one over a view
// that starts at the far end with negated steps. Offsets are 64-bit throughout.
struct batch_map {
    int ndim;
    int64_t sizes[TSCAN_MAX_DIMS - 1];
    int64_t in_strides[TSCAN_MAX_DIMS - 1];
    int64_t out_strides[TSCAN_MAX_DIMS - 1];

    // Line b's offsets, for b < lines (the product of sizes): what the inner dimensions leave
    // of b is the outermost index, so that one takes no division, and one batch dimension
    // (packed lines merge into one) none at all (without a batch dimension the strides are 0).
    // The general loop would give the one-dimension answer too; it keeps a path of its own
    // because folded into the loop it changed register allocation in kernels that never ran
    // the loop, and slowed them. Lookback finds a tile's line offsets twice a tile, where the
    // 64-bit division cost its column blocks and line chunks (bench/NOTES.md §3.10). Fully
    // unrolled with guards so the arrays stay in parameter space (no local memory).
    __device__ __forceinline__ void offsets(int64_t b, int64_t &in_off,
                                            int64_t &out_off) const {
        if (ndim <= 1) {
            in_off = b * in_strides[0];
            out_off = b * out_strides[0];
            return;
        }
        in_off = 0;
        out_off = 0;
#pragma unroll
        for (int d = TSCAN_MAX_DIMS - 2; d >= 1; --d) {
            if (d < ndim) {
                int64_t i = b % sizes[d];
                b /= sizes[d];
                in_off += i * in_strides[d];
                out_off += i * out_strides[d];
            }
        }
        in_off += b * in_strides[0];
        out_off += b * out_strides[0];
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
    // The input's dtype and element size. `widens`: narrower than the output's (the kernels load
    // its elements one at a time through read_widened); an input of the output's width is read
    // as the output's type (the same bits: the pair is one of integers, see kernel_dtype).
    tscan_dtype in_dtype;
    bool widens;
    int64_t in_bytes;
};

inline scan_args make_scan_args(const tscan_problem *p) {
    scan_args a;
    int64_t far = p->reverse ? p->n - 1 : 0;
    a.in = p->in + far * p->in_step * (int64_t)p->elem_size;
    a.out = p->out + far * p->out_step * (int64_t)p->out_elem_size;
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
    a.in_dtype = p->dtype;
    a.widens = p->elem_size != p->out_elem_size;
    a.in_bytes = (int64_t)p->elem_size;
    return a;
}

// ---- vectors: several elements moved by one load or store --------------------------------
// Each check is made of one tensor's side (input or output): a vector of w elements must be
// whole at every address that tensor's loads or stores reach.
struct tensor_side {
    const char *base;
    const int64_t *strides;  // batch strides
    int64_t step;
};
inline tensor_side input_side(const scan_args &a) { return {a.in, a.batch.in_strides, a.in_step}; }
inline tensor_side output_side(const scan_args &a) { return {a.out, a.batch.out_strides, a.out_step}; }

// Lowest byte and one past the highest byte of one tensor's elements.
inline void tensor_byte_range(const scan_args &a, const tensor_side &s, size_t elem_size, uintptr_t &lo,
                              uintptr_t &end) {
    int64_t below = 0, above = 0;  // element offsets from the base
    tscan_extend_offset_range(1, &a.n, &s.step, &below, &above);
    tscan_extend_offset_range((uint32_t)a.batch.ndim, a.batch.sizes, s.strides, &below, &above);
    lo = (uintptr_t)s.base + (uintptr_t)(below * (int64_t)elem_size);
    end = (uintptr_t)s.base + (uintptr_t)((above + 1) * (int64_t)elem_size);
}

// w neighbouring lines of one tensor form a vector: the last batch dimension has unit stride,
// and every other stride, the step and the base are whole vectors of w elements.
inline bool side_lines_packed_by(const scan_args &a, const tensor_side &s, int64_t w, size_t elem_size) {
    const int last = a.batch.ndim - 1;
    if (last < 0 || s.strides[last] != 1 || (uintptr_t)s.base % ((size_t)w * elem_size) != 0 || s.step % w != 0)
        return false;
    for (int d = 0; d < last; ++d)
        if (s.strides[d] % w != 0) return false;
    return true;
}

// Where one tensor's lines start on the grid of aligned vectors of w elements: the elements of
// a line's first vector that come before its first element in scan order (the same for every
// line: a unit step, either sign, and every batch stride a multiple of w), or -1 where the
// lines lie on no common grid.
inline int side_axis_head(const scan_args &a, const tensor_side &s, int64_t w, size_t elem_size) {
    if (s.step != 1 && s.step != -1) return -1;
    for (int d = 0; d < a.batch.ndim; ++d)
        if (s.strides[d] % w != 0) return -1;
    const int within = (int)((uintptr_t)s.base % ((uintptr_t)w * elem_size) / elem_size);  // in memory order
    return s.step > 0 ? within : (int)w - 1 - within;
}
// w consecutive elements of one tensor's lines form a whole vector: each line starts one. The
// caller checks n % w.
inline bool side_axis_packed_by(const scan_args &a, const tensor_side &s, int64_t w, size_t elem_size) {
    return side_axis_head(a, s, w, elem_size) == 0;
}

// The lines come in whole vectors of w: the last batch dimension holds a multiple of w.
inline bool whole_line_vectors(const scan_args &a, int64_t w) {
    return a.batch.ndim > 0 && a.batch.sizes[a.batch.ndim - 1] % w == 0;
}

// Lines packed by w in both tensors. elem_size is the output's element size; the input's is
// a.in_bytes (narrower when the output is wider), as for axis_head_in_vectors_of.
inline bool lines_packed_by(const scan_args &a, int64_t w, size_t elem_size) {
    return whole_line_vectors(a, w) && side_lines_packed_by(a, input_side(a), w, (size_t)a.in_bytes) &&
           side_lines_packed_by(a, output_side(a), w, elem_size);
}

// A transposing layout: lines packed by w in the input, the axis packed by w in the output.
inline bool lines_packed_into_axis_by(const scan_args &a, int64_t w, size_t elem_size) {
    return whole_line_vectors(a, w) && a.n % w == 0 && side_lines_packed_by(a, input_side(a), w, (size_t)a.in_bytes) &&
           side_axis_packed_by(a, output_side(a), w, elem_size);
}

// A group of w neighbouring input lines becomes one line of the kernel, w times the last batch
// stride apart: w times fewer lines where each run of the last batch dimension is whole groups
// (lines_packed_by, lines_packed_into_axis_by), else a run's last group holds the rest (the
// kernels that take that find a group's lines with lines_in_group).
inline void pack_lines(scan_args &a, int64_t w) {
    const int last = a.batch.ndim - 1;
    const int64_t run = a.batch.sizes[last], groups = (run + w - 1) / w;
    a.lines = a.lines / run * groups;
    a.batch.sizes[last] = groups;
    a.batch.in_strides[last] *= w;
    a.batch.out_strides[last] *= w;
}

// The lines of the last batch dimension neighbour in both tensors (unit stride), at least
// min_run of them a run.
inline bool lines_neighbour(const scan_args &a, int64_t min_run) {
    const int last = a.batch.ndim - 1;
    return last >= 0 && a.batch.in_strides[last] == 1 && a.batch.out_strides[last] == 1 &&
           a.batch.sizes[last] >= min_run;
}

// The lines in group g of a packed by pack_lines(a, w), whose runs held run_lines lines in
// run_groups groups each: w, but in a run's last group.
__device__ __forceinline__ int lines_in_group(const scan_args &a, int64_t g, int64_t run_lines, int64_t run_groups,
                                              int w) {
    const int64_t in_run = a.batch.ndim <= 1 ? g : g % run_groups;  // g's place in its run
    return (int)min((int64_t)w, run_lines - in_run * w);
}

// The lines of both tensors lie on one grid of vectors of w (the same head in each): the head,
// or -1. elem_size is the output's element size; the input's is a.in_bytes (narrower when
// the output is wider).
inline int axis_head_in_vectors_of(const scan_args &a, int64_t w, size_t elem_size) {
    const int head = side_axis_head(a, input_side(a), w, (size_t)a.in_bytes);
    return head == side_axis_head(a, output_side(a), w, elem_size) ? head : -1;
}
// The axis packed by w in both tensors: every line whole vectors.
inline bool axis_packed_by(const scan_args &a, int64_t w, size_t elem_size) {
    return a.n % w == 0 && axis_head_in_vectors_of(a, w, elem_size) == 0;
}

// The vectors of w that hold a line become the kernel's elements, each addressed at its lowest
// element (for a decreasing step, its elements lie in reverse order): ceil((head + n) / w) of
// them, the first holding the line after `head` elements, the last its first `tail` (0: whole),
// which it returns. Needs head = axis_head_in_vectors_of(a, w) >= 0.
inline int pack_axis(scan_args &a, int64_t w, size_t elem_size, int head) {
    // The first scan element's place in its vector, in memory order, on either side.
    a.in -= (a.in_step > 0 ? head : w - 1 - head) * a.in_bytes;
    a.out -= (a.out_step > 0 ? head : w - 1 - head) * (int64_t)elem_size;
    const int tail = (int)((head + a.n) % w);
    a.n = (head + a.n + w - 1) / w;
    a.in_step *= w;
    a.out_step *= w;
    return tail;
}

// A strategy's state in a launch plan (tscan_launch_plan::state): a type of its own, copied in
// whole, whose `run` member the plan's launch calls.
template <class State> State *plan_state(tscan_launch_plan *plan) {
    static_assert(sizeof(State) <= TSCAN_PLAN_STATE_BYTES && alignof(State) <= alignof(decltype(plan->state)) &&
                      std::is_trivially_copyable_v<State>,
                  "a plan's state fits its buffer and is copied as bytes");
    return reinterpret_cast<State *>(plan->state.bytes);
}
template <class State> tscan_status run_plan(const tscan_launch_plan *plan, void *workspace, cudaStream_t stream) {
    const State &state = *reinterpret_cast<const State *>(plan->state.bytes);
    return state.run(state, workspace, stream);
}

// The SM count of the current device from the per-device cache, or 0 where no device answers
// (a host-only query plans, and nothing will launch).
inline tscan_status current_sms(int *sms) {
    *sms = 0;
    if (!tscan_device_present()) return TSCAN_SUCCESS;
    const tscan_device_info *dev = nullptr;
    const tscan_status s = tscan_current_device_info(&dev);
    if (s == TSCAN_SUCCESS) *sms = dev->sm_count;
    return s;
}

// The plan of a strategy that needs the problem, the SM count and the launch of its output
// dtype, chosen when planning (rows, columns, cub_device): Launch<D>::run(call, workspace,
// stream). The dtype dispatch and the device's facts are read once, here.
struct problem_call {
    tscan_status (*run)(const problem_call &, void *workspace, cudaStream_t stream);
    tscan_problem p;
    int sms;
    size_t cub_temp_bytes;  // cub_device: CUB's temp storage for one line
};
template <template <tscan_dtype> class Launch> struct problem_launch_of {
    template <tscan_dtype D> struct dtype {
        static tscan_status run(problem_call *call) {
            call->run = &Launch<D>::run;
            return TSCAN_SUCCESS;
        }
    };
};
template <template <tscan_dtype> class Launch>
tscan_status plan_problem_call(const tscan_problem *p, tscan_launch_plan *plan) {
    problem_call *const call = plan_state<problem_call>(plan);
    *call = problem_call{nullptr, *p, 0, 0};
    const tscan_status s = current_sms(&call->sms);
    if (s != TSCAN_SUCCESS) return s;
    return dispatch_dtype<problem_launch_of<Launch>::template dtype>(p->out_dtype, call);
}

}  // namespace tscan
