// gather/kernel.cuh - the gather of a permuted input into the output's order (src/gather.c plans
// it, tscan_gather): the dense output seen as U x V x rest, where U runs contiguous in the input
// and V in the output. A block copies a tile of Tu x Tv elements through shared memory: loaded
// with lanes along U (the input's run), stored with lanes along V (the output's), so that both
// sides move whole sectors whatever the permutation. Elements move as unsigned integers of their
// size. Included by cuda/gather.cu and the emulated tests.
#pragma once

#include "common.cuh"

#include <algorithm>

namespace tscan {
namespace {

constexpr int kGatherThreads = kernel_policy::gather_threads;
constexpr int kGatherBlocksPerSm = kernel_policy::gather_blocks_per_sm;
constexpr int kGatherTileBytes = kernel_policy::gather_tile_bytes;
constexpr int kGatherMaxSide = kernel_policy::gather_max_side;
// A tile row (Tu elements of one v) is padded by a word (two for 8-byte elements), so that the
// stores' lanes, a row apart, fall on distinct banks.
template <int Size> constexpr int gather_row_pad() { return Size == 8 ? 8 : 4; }
// Loads a thread issues before it writes any to shared memory: 8 in 54-61 registers; 16 spilled
// 60-64 bytes under the 64 registers of 4 blocks an SM (1- to 4-byte elements).
constexpr int kGatherChunk = 8;

// A tscan_radix for the kernel: each dimension's size as a divisor of 32-bit indices (the plan
// keeps every index under 2^32), so that a digit costs a multiply, not a 64-bit division.
struct gather_radix {
    int ndim;
    fast_divisor sizes[TSCAN_MAX_DIMS];
    int64_t strides[TSCAN_MAX_DIMS];
};

inline gather_radix gather_radix_of(const tscan_radix &r) {
    gather_radix g{};
    g.ndim = (int)r.ndim;
    for (uint32_t d = 0; d < r.ndim; ++d) {
        g.sizes[d] = make_divisor((uint32_t)r.sizes[d]);
        g.strides[d] = r.strides[d];
    }
    return g;
}

// Index i's offset under r. Fully unrolled with guards, so that r stays in parameter space.
__device__ __forceinline__ int64_t radix_offset(const gather_radix &r, uint32_t i) {
    int64_t offset = 0;
#pragma unroll
    for (int d = 0; d < TSCAN_MAX_DIMS; ++d)
        if (d < r.ndim) {
            if (d + 1 < r.ndim) {
                const uint32_t q = r.sizes[d].div(i);
                offset += (int64_t)(i - q * r.sizes[d].d) * r.strides[d];
                i = q;
            } else {
                offset += (int64_t)i * r.strides[d];
            }
        }
    return offset;
}

// The kernel's view of a tscan_gather: tiles of 2^log_tu x 2^log_tv, U's tiles fastest (the
// grid's neighbours read neighbouring input), then V's, then the rest.
struct gather_args {
    const char *in;
    char *out;
    uint32_t u_extent, v_extent, tiles;
    fast_divisor u_tiles, v_tiles;
    gather_radix u_out, v_in, rest_in, rest_out;
    int log_tu, log_tv;
};

// Tiles of kGatherTileBytes, split evenly between U and V where both are long (a square of 64
// 4-byte elements: 256-byte runs each way), the rest to the longer where one is short.
inline gather_args gather_args_of(const tscan_gather &g) {
    gather_args a{};
    a.in = g.in;
    a.out = g.out;
    a.u_extent = (uint32_t)g.u_extent;
    a.v_extent = (uint32_t)g.v_extent;
    a.u_out = gather_radix_of(g.u_out);
    a.v_in = gather_radix_of(g.v_in);
    a.rest_in = gather_radix_of(g.rest_in);
    a.rest_out = gather_radix_of(g.rest_out);
    const int log_tile = log2_ceil(kGatherTileBytes / (int64_t)g.elem_size), log_side = log2_ceil(kGatherMaxSide),
              log_u = log2_ceil(g.u_extent), log_v = log2_ceil(g.v_extent);
    a.log_tu = std::min(log_u, (log_tile + 1) / 2);
    a.log_tv = std::min({log_v, log_tile - a.log_tu, log_side});
    a.log_tu = std::min({log_u, log_tile - a.log_tv, log_side});
    const int64_t u_tiles = (g.u_extent + (int64_t(1) << a.log_tu) - 1) >> a.log_tu,
                  v_tiles = (g.v_extent + (int64_t(1) << a.log_tv) - 1) >> a.log_tv;
    a.u_tiles = make_divisor((uint32_t)u_tiles);
    a.v_tiles = make_divisor((uint32_t)v_tiles);
    a.tiles = (uint32_t)(u_tiles * v_tiles * g.rest_extent);
    return a;
}

// A resident wave of blocks looping over the tiles. Each tile: its rows' offsets (U's in the
// output, V's in the input, with the rest's and the tile's origin folded in), then the loads
// (lanes along u, kGatherChunk a thread in flight), then the stores (lanes along v).
template <int Size> __global__ void __launch_bounds__(kGatherThreads, kGatherBlocksPerSm) gather_kernel(gather_args a) {
    using T = typename unsigned_of<Size>::type;
    __shared__ uint4 tile_vectors[(kGatherTileBytes + kGatherMaxSide * gather_row_pad<8>()) / 16];
    unsigned char *const tile = reinterpret_cast<unsigned char *>(tile_vectors);
    __shared__ int64_t out_u[kGatherMaxSide], in_v[kGatherMaxSide];
    const T *const in = reinterpret_cast<const T *>(a.in);
    T *const out = reinterpret_cast<T *>(a.out);
    const int tu = 1 << a.log_tu, tv = 1 << a.log_tv, elements = tu << a.log_tv;
    const int pitch = tu * Size + gather_row_pad<Size>();
    for (uint32_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
        const uint32_t outer = a.u_tiles.div(t), r = a.v_tiles.div(outer);
        const uint32_t u0 = (t - outer * a.u_tiles.d) << a.log_tu, v0 = (outer - r * a.v_tiles.d) << a.log_tv;
        const int tu_here = (int)min((uint32_t)tu, a.u_extent - u0), tv_here = (int)min((uint32_t)tv, a.v_extent - v0);
        for (int i = threadIdx.x; i < tu_here + tv_here; i += kGatherThreads) {
            if (i < tu_here) out_u[i] = radix_offset(a.rest_out, r) + radix_offset(a.u_out, u0 + i) + v0;
            else in_v[i - tu_here] = radix_offset(a.rest_in, r) + radix_offset(a.v_in, v0 + (i - tu_here)) + u0;
        }
        __syncthreads();
        for (int c = 0; c < elements; c += kGatherThreads * kGatherChunk) {
            T x[kGatherChunk];
#pragma unroll
            for (int j = 0; j < kGatherChunk; ++j) {
                const int e = c + j * kGatherThreads + (int)threadIdx.x, u = e & (tu - 1), v = e >> a.log_tu;
                if (e < elements && u < tu_here && v < tv_here) x[j] = in[in_v[v] + u];
            }
#pragma unroll
            for (int j = 0; j < kGatherChunk; ++j) {
                const int e = c + j * kGatherThreads + (int)threadIdx.x, u = e & (tu - 1), v = e >> a.log_tu;
                if (e < elements && u < tu_here && v < tv_here) *reinterpret_cast<T *>(tile + v * pitch + u * Size) = x[j];
            }
        }
        __syncthreads();
        for (int e = threadIdx.x; e < elements; e += kGatherThreads) {
            const int v = e & (tv - 1), u = e >> a.log_tv;
            if (u < tu_here && v < tv_here) out[out_u[u] + v] = *reinterpret_cast<const T *>(tile + v * pitch + u * Size);
        }
        __syncthreads();
    }
}

}  // namespace
}  // namespace tscan
