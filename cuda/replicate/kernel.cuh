// replicate/kernel.cuh - the copies of broadcast lines (src/replication.c plans them): a dense
// output whose distinct lines are scanned already, seen in memory order as groups of dimensions
// alternately kept and replicated (tscan_replication). An element's source is the element with
// every replicated group's index at 0; the kernel writes each 16-byte vector of the output from
// its elements' sources. Included by cuda/replicate.cu and the emulated tests.
#pragma once

#include "common.cuh"

namespace tscan {
namespace {

constexpr int kReplicateThreads = kernel_policy::replicate_threads;
constexpr int64_t kReplicateBlocksPerSm = kernel_policy::replicate_blocks_per_sm;
// Replicated groups above the fastest one: groups alternate, and there are at most TSCAN_MAX_DIMS.
constexpr int kMaxUpperReplicated = TSCAN_MAX_DIMS / 2;

// The kernel's view of a tscan_replication. A row is a run of group 0: `row` elements that are
// distinct (kept) or copies of the row's first (row_replicated). Row r's source row starts at
// r * row less, for each replicated group g above, its index (r / below[g]) % extent[g] times
// its pitch (the elements below it).
struct replicate_args {
    char *out;
    int64_t vectors;  // 16-byte vectors from the one that holds the output's first byte
    int head;         // elements of that vector before the output
    uint32_t elements;
    uint32_t row;
    fast_divisor rows;
    bool row_replicated;
    int upper;  // replicated groups above group 0
    fast_divisor below[kMaxUpperReplicated], extent[kMaxUpperReplicated];
    uint32_t pitch[kMaxUpperReplicated];
};

inline replicate_args replicate_args_of(const tscan_replication &r) {
    replicate_args a{};
    const int64_t size = (int64_t)r.elem_size, misalignment = (int64_t)((uintptr_t)r.out % 16);
    a.out = r.out;
    a.head = (int)(misalignment / size);
    a.vectors = (misalignment + r.elements * size + 15) / 16;
    a.elements = (uint32_t)r.elements;
    a.row = (uint32_t)r.extents[0];
    a.rows = make_divisor(a.row);
    a.row_replicated = r.first_replicated != 0;
    int64_t pitch = r.extents[0];
    for (uint32_t g = 1; g < r.groups; ++g) {
        if ((g % 2 == 1) != a.row_replicated) {
            a.below[a.upper] = make_divisor((uint32_t)(pitch / r.extents[0]));
            a.extent[a.upper] = make_divisor((uint32_t)r.extents[g]);
            a.pitch[a.upper] = (uint32_t)pitch;
            ++a.upper;
        }
        pitch *= r.extents[g];
    }
    return a;
}

// Vector v of the output (thread v, grid-stride) holds elements f0 .. f0 + V of it. A vector
// inside one row loads its sources whole: one element to repeat, or a kept row's run as one
// vector (two, shifted, where the run lies off the grid, loaded only inside the output's bytes).
// Other vectors move element by element. Source rows are skipped; a vector that holds source
// elements beside copies rewrites them with their own values, which any thread reading them
// concurrently sees either way (the scan that wrote them came before, in stream order).
template <int Size> __global__ void __launch_bounds__(kReplicateThreads) replicate_kernel(replicate_args a) {
    using U = typename unsigned_of<Size>::type;
    constexpr int V = 16 / Size;
    union vector_of {
        uint4 whole;
        U e[V];
    };
    U *const out = reinterpret_cast<U *>(a.out);
    const uintptr_t lo = (uintptr_t)a.out, end = lo + (uintptr_t)a.elements * Size;
    const auto source_row = [&](uint32_t r) {
        uint32_t at = r * a.row;
#pragma unroll
        for (int g = 0; g < kMaxUpperReplicated; ++g)
            if (g < a.upper) at -= a.extent[g].mod(a.below[g].div(r)) * a.pitch[g];
        return at;
    };
    const int64_t stride = (int64_t)gridDim.x * kReplicateThreads;
    for (int64_t v = (int64_t)blockIdx.x * kReplicateThreads + threadIdx.x; v < a.vectors; v += stride) {
        const int64_t f0 = v * V - a.head;
        const bool whole = f0 >= 0 && f0 + V <= (int64_t)a.elements;
        if (whole) {
            const uint32_t r = a.rows.div((uint32_t)f0), o = (uint32_t)f0 - r * a.row;
            if (o + V <= a.row) {
                const uint32_t source = source_row(r);
                vector_of x;
                if (a.row_replicated) {
                    const U value = out[source];
#pragma unroll
                    for (int e = 0; e < V; ++e) x.e[e] = value;
                } else {
                    if (source == r * a.row) continue;  // a source row
                    const uintptr_t from = (uintptr_t)(out + source + o), first = from & ~(uintptr_t)15;
                    if (from == first) {
                        x.whole = *reinterpret_cast<const uint4 *>(from);
                    } else if (first >= lo && first + 32 <= end) {
                        const uint4 *const pair = reinterpret_cast<const uint4 *>(first);
                        x.whole = realigned<Size>(pair[0], pair[1], (unsigned)(from - first));
                    } else {
#pragma unroll
                        for (int e = 0; e < V; ++e) x.e[e] = out[source + o + e];
                    }
                }
                *reinterpret_cast<uint4 *>(out + f0) = x.whole;
                continue;
            }
        }
        vector_of x;
        uint32_t r = 0, o = 0, source = 0;
        bool started = false;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const int64_t f = f0 + e;
            x.e[e] = 0;
            if (f < 0 || f >= (int64_t)a.elements) continue;
            if (!started) {
                r = a.rows.div((uint32_t)f);
                o = (uint32_t)f - r * a.row;
                source = source_row(r);
                started = true;
            } else if (++o == a.row) {
                o = 0;
                source = source_row(++r);
            }
            x.e[e] = out[source + (a.row_replicated ? 0 : o)];
        }
        if (whole) {
            *reinterpret_cast<uint4 *>(out + f0) = x.whole;
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e)
                if (f0 + e >= 0 && f0 + e < (int64_t)a.elements) out[f0 + e] = x.e[e];
        }
    }
}

}  // namespace
}  // namespace tscan
