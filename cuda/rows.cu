// rows.cu - TSCAN_ALGO_ROWS: many lines, each scanned by one group of threads that walks it
// in chunks and carries the running prefix from chunk to chunk. A group is a logical
// sub-warp of 1..32 lanes for lines that fit one chunk (several lines per warp), a warp for
// longer lines when there are enough of them to fill the GPU (both cub::WarpScan), else a
// whole block (cub::BlockScan with a prefix callback). Warps and blocks load the next chunk
// while they scan the current one.
//
// Within a chunk every thread holds ITEMS consecutive elements of its line: it reduces them,
// the group scans the per-thread totals, and the thread rescans its items from its prefix.
// Lines with |step| == 1 move as aligned 16-byte vectors: positions are counted from an
// aligned "virtual" origin `head` elements before the line's first element, so every
// thread's items start on a vector boundary of the output; elements outside the line are
// masked. A 1-byte line's vectors that hold it in part load whole too where they lie in the
// input (not in place) and store in aligned pieces. An input off the output's alignment (a
// padded row pitch) loads the vectors at its own alignment, one more, and shifts the items out
// of them in registers. Other strides
// load (and store) element by element: the same code, every layout, just fewer bytes per
// instruction.
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <type_traits>

#include "common.cuh"

namespace tscan {
namespace {

constexpr int rows_block_threads = kernel_policy::rows_block_threads;
// Resident blocks per SM that the register budget must allow: left alone, ptxas takes up to
// 128 registers in some sub-warp kernels and halves the loads in flight. Sub-warp and warp
// threads holding 32 bytes of accumulators get 64 registers (1024 threads per SM), those
// holding 64 bytes 80 (768); the block kernel, with two chunks of 64 bytes, 128 (512).
constexpr int rows_min_blocks_per_sm(int group, int accumulator_bytes) {
    return group > 32 ? 2 : accumulator_bytes > 32 ? 3 : 4;
}
// Register bytes an item takes: its accumulator's, but 1 for 1-byte items, which sums and
// products keep four to a word.
template <tscan_dtype D> constexpr int item_register_bytes() {
    using traits = dtype_traits<D>;
    return sizeof(typename traits::T) == 1 ? 1 : (int)sizeof(typename traits::A);
}

// Lines longer than a warp's chunk get a warp each when there are enough of them to fill
// every SM with warps (32 per SM at 1024 resident threads), else a block each.
constexpr int64_t warp_min_lines_per_sm = kernel_policy::rows_warp_min_lines_per_sm;

// Blocks per SM beyond which a grid-stride loop takes the remaining lines: ten or more waves,
// enough to balance the tail, and no block index can overflow.
constexpr int64_t max_blocks_per_sm = kernel_policy::rows_max_blocks_per_sm;

// Items per thread: whole 16-byte vectors; in a group, 32 bytes of input (as many bytes in
// flight per thread for every element size) up to 64 bytes of the items' registers
// (item_register_bytes); in a block, about 64 bytes of accumulators; so that a thread keeps a
// few independent loads in flight without spilling.
constexpr int group_items_for(int elem_size, int item_register_size) {
    const int vec = 16 / elem_size,
              in_items = 32 / elem_size < 64 / item_register_size ? 32 / elem_size : 64 / item_register_size;
    return in_items > vec ? in_items : vec;
}
template <tscan_dtype D> struct row_geometry {
    using T = typename dtype_traits<D>::T;
    using A = typename dtype_traits<D>::A;
    static constexpr int vec = 16 / (int)sizeof(T);  // elements per 16-byte vector
    static constexpr int group_items = group_items_for((int)sizeof(T), item_register_bytes<D>());
    static constexpr int block_items = 64 / (int)sizeof(A) > vec ? 64 / (int)sizeof(A) : vec;
};

// Virtual position of a unit-step line's first element: the count of elements between it and
// the 16-byte boundary that starts its first vector, in the direction of the scan.
__host__ __device__ __forceinline__ int64_t vector_head(const char *first, int64_t step, size_t elem_size,
                                                        int vec) {
    const int64_t phase = (int64_t)(((uintptr_t)first / elem_size) % (uintptr_t)vec);
    return step > 0 ? phase : vec - 1 - phase;
}

// What a thread keeps of one line; the length and the steps are the same for every line
// and stay in scan_args. Scan element k is in[k * a.in_step] and out[k * a.out_step]
// (direction folded into the steps); virtual position p holds scan element p - head.
template <class T> struct row_line {
    const T *in;  // the line's first input element (of a.in_dtype when a.widens)
    T *out;
    int head;
    bool vec_in, vec_out;  // 16-byte vectors for loads, for stores

    // Widen: the input is narrower than T (the kernel's compile-time choice; see rows_kernel).
    template <bool Widen> __device__ row_line(const scan_args &a, int64_t b, int vec, std::bool_constant<Widen>) {
        int64_t in_off, out_off;
        a.batch.offsets(b, in_off, out_off);
        if constexpr (Widen) in = reinterpret_cast<const T *>(a.in + in_off * a.in_bytes);
        else in = reinterpret_cast<const T *>(a.in) + in_off;
        out = reinterpret_cast<T *>(a.out) + out_off;
        vec_out = a.out_step == 1 || a.out_step == -1;
        head = vec_out ? (int)vector_head((const char *)out, a.out_step, sizeof(T), vec) : 0;
        vec_in = !Widen && vec_out && a.in_step == a.out_step &&
                 vector_head((const char *)in, a.in_step, sizeof(T), vec) == head;
    }
};

// The bytes a vector load may read outside its own line: the input's byte range [lo, end), set
// only when no output byte lies in it (so nothing read there is being written) and unit steps
// run the same way on both sides; empty (lo == end) otherwise. realign: some line's input is
// off its output's alignment, so every load realigns (fetch_realigned); else a 1-byte line's
// vectors that hold it in part load whole inside the window. words: a narrower input's items
// lie in whole aligned words of it (narrow_words), which then load whole.
struct input_window {
    uintptr_t lo, end;
    bool realign;
    bool words;
};

// Scan element k exists.
__device__ __forceinline__ bool holds(const scan_args &a, int64_t k) { return (uint64_t)k < (uint64_t)a.n; }

// Some of scan elements [k0, k0 + items) exist, not all.
__device__ __forceinline__ bool in_part(const scan_args &a, int64_t k0, int items) {
    return k0 < a.n && k0 + items > 0 && (k0 < 0 || k0 + items > a.n);
}

// Virtual positions [p0, p0 + items) all lie inside the line.
template <class T>
__device__ __forceinline__ bool whole(const scan_args &a, const row_line<T> &l, int64_t p0, int items) {
    return p0 >= l.head && p0 - l.head + items <= a.n;
}

// Reads scan elements [k0, k0 + ITEMS) from the 16-byte vectors that cover them at the input's
// own alignment: the items start `shift` bytes into the first, so one vector more is loaded
// when the shift is not 0, and the items are shifted out word by word, then byte by byte.
// Bytes outside the line (the input's pitch padding, its neighbouring lines) are read and
// masked later. False, with nothing read, when a vector would leave the window: near the
// ends of the input.
template <class T, int ITEMS>
__device__ __forceinline__ bool fetch_realigned(const scan_args &a, const input_window &window,
                                                const row_line<T> &l, int64_t k0, item_pack<T, ITEMS> &raw) {
    constexpr int vectors = ITEMS * (int)sizeof(T) / 16, words = 4 * vectors;
    if (k0 >= a.n || k0 + ITEMS <= 0) return true;  // no item in the line: nothing to read
    const bool reversed = a.in_step < 0;
    // Lowest address of the items (a decreasing line holds them in reverse order).
    const int64_t es = (int64_t)sizeof(T);
    const uintptr_t low = (uintptr_t)l.in + (uintptr_t)((reversed ? -(k0 + ITEMS - 1) : k0) * es);
    const uintptr_t first = low & ~(uintptr_t)15;
    const unsigned shift = (unsigned)(low - first);
    if (first < window.lo || first + 16 * (vectors + (shift != 0)) > window.end) return false;
    const uint4 *at = reinterpret_cast<const uint4 *>(first);
    uint32_t w[words + 4];
#pragma unroll
    for (int u = 0; u <= vectors; ++u) {
        const bool needed = u < vectors || shift != 0;
        const uint4 v = needed ? at[u] : make_uint4(0, 0, 0, 0);
        w[4 * u] = v.x;
        w[4 * u + 1] = v.y;
        w[4 * u + 2] = v.z;
        w[4 * u + 3] = v.w;
    }
    drop_low_bytes<sizeof(T)>(w, shift);
    // Scan order from memory order; both indices constant, so that w stays in registers.
#pragma unroll
    for (int u = 0; u < vectors; ++u) {
        uint4 v;
        v.x = reversed ? w[4 * (vectors - 1 - u)] : w[4 * u];
        v.y = reversed ? w[4 * (vectors - 1 - u) + 1] : w[4 * u + 1];
        v.z = reversed ? w[4 * (vectors - 1 - u) + 2] : w[4 * u + 2];
        v.w = reversed ? w[4 * (vectors - 1 - u) + 3] : w[4 * u + 3];
        raw.set_vector(u, v, reversed);
    }
    return true;
}

// Reads the thread's items at virtual positions [p0, p0 + ITEMS); positions outside the line
// are left as they were (the caller masks them). D is the output's dtype: a narrower input
// (Widen) loads words of it where every line's items lie whole in them (window.words), else
// element by element, each converted to T.
template <tscan_dtype D, bool Widen, bool Batched, class T, int ITEMS>
__device__ __forceinline__ void fetch(const scan_args &a, const input_window &window, const row_line<T> &l,
                                      int64_t p0, item_pack<T, ITEMS> &raw) {
    constexpr int vec = 16 / (int)sizeof(T);
    const int64_t k0 = p0 - l.head;
    if (window.realign) {  // the same for every thread of the grid
        if (fetch_realigned(a, window, l, k0, raw)) return;
    } else if (l.vec_in && whole(a, l, p0, ITEMS)) {
        const bool reversed = a.in_step < 0;
        // lowest address of the first vector; later ones follow in the scan's direction
        const uint4 *first = reinterpret_cast<const uint4 *>(reversed ? l.in - (k0 + vec - 1) : l.in + k0);
#pragma unroll
        for (int u = 0; u < ITEMS / vec; ++u) raw.set_vector(u, first[reversed ? -u : u], reversed);
        return;
    } else if (sizeof(T) == 1 && ITEMS > vec && l.vec_in) {
        // A thread of 1-byte items (two vectors) at the line's end: its vectors inside the line
        // still load whole (bench/NOTES.md §3.6), and so do those that hold the line in part
        // where they lie in the window (the caller masks the bytes of other lines); element by
        // element elsewhere (near the input's ends, or in place).
        const bool reversed = a.in_step < 0;
        const uint4 *first = reinterpret_cast<const uint4 *>(reversed ? l.in - (k0 + vec - 1) : l.in + k0);
        const T *at = l.in + k0 * a.in_step;
#pragma unroll
        for (int u = 0; u < ITEMS / vec; ++u, at += vec * a.in_step) {
            const uintptr_t vector_at = reinterpret_cast<uintptr_t>(first + (reversed ? -u : u));
            if (whole(a, l, p0 + u * vec, vec) ||
                (in_part(a, k0 + u * vec, vec) && vector_at >= window.lo && vector_at + 16 <= window.end)) {
                raw.set_vector(u, first[reversed ? -u : u], reversed);
            } else if (in_part(a, k0 + u * vec, vec)) {
#pragma unroll
                for (int j = 0; j < vec; ++j)
                    if (holds(a, k0 + u * vec + j)) raw.set(u * vec + j, at[j * a.in_step]);
            }
        }
        return;
    }
    if constexpr (Widen) {
        // A narrower input whose items lie in whole aligned words of it: every word loads before
        // any converts (read_widened_item_words); words of up to 8 bytes, in memory order, then
        // put in scan order by selects (both indices constant, so that raw stays in registers).
        // One loader a warp: where some of its threads' items run past a line's end it would
        // run both, one after the other (lines of 255 ran 10-15 % slower, H100).
        if (window.words && __all_sync(__activemask(), whole(a, l, p0, ITEMS))) {
            const bool reversed = a.in_step < 0;
            const char *lowest = reinterpret_cast<const char *>(l.in) + (reversed ? -(k0 + ITEMS - 1) : k0) * a.in_bytes;
            read_widened_item_words<D, ITEMS>([&](int m, T x) { raw.set(m, x); }, lowest, a.in_dtype);
#pragma unroll
            for (int i = 0; i < ITEMS / 2; ++i) {
                const T low = raw.get(i), high = raw.get(ITEMS - 1 - i);
                raw.set(i, reversed ? high : low);
                raw.set(ITEMS - 1 - i, reversed ? low : high);
            }
            return;
        }
    }
    // Element by element, walking a pointer: one 64-bit address live rather than ITEMS. A
    // narrower input off its words (never vectors: vec_in is false and the window empty)
    // converts each one:
    // where nothing else is in flight (Batched: the kernel does not prefetch) all items load
    // before any converts, else each as it arrives. On the H100 batching sped up sub-warp
    // groups 2-17 % and slowed the prefetching warp and block kernels 4-13 % (registers:
    // bench/NOTES.md §3.1, "Wider outputs").
    if constexpr (Widen && Batched) {
        const int64_t step = a.in_step * a.in_bytes;
        T x[ITEMS];
        read_widened_rows<D>(x, reinterpret_cast<const char *>(l.in) + k0 * step, step, -k0, a.n - k0, a.in_dtype);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) raw.set(i, x[i]);
    } else if constexpr (Widen) {
        const int64_t step = a.in_step * a.in_bytes;
        const char *at = reinterpret_cast<const char *>(l.in) + k0 * step;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i, at += step)
            if (holds(a, k0 + i)) raw.set(i, read_widened<D>(at, a.in_dtype));
    } else {
        const T *at = l.in + k0 * a.in_step;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i, at += a.in_step)
            if (holds(a, k0 + i)) raw.set(i, *at);
    }
}

// The scan-order items [lo, hi) of the vector whose first item is scan element k (vec of them)
// that lie in the line.
__device__ __forceinline__ void items_in_line(const scan_args &a, int64_t k, int vec, int &lo, int &hi) {
    lo = (int)min(max(-k, (int64_t)0), (int64_t)vec);
    hi = (int)min(max(a.n - k, (int64_t)0), (int64_t)vec);
}

// Stores bytes [s, e) of v (memory order) at base + s, base on the 16-byte grid and e - s < 16 (a
// vector in part): aligned pieces of 1, 2, 4 and 8 bytes up to the next 16-byte boundary or e,
// then down from 8 (at most 7 stores).
__device__ __forceinline__ void store_bytes(char *base, uint4 v, unsigned s, unsigned e) {
    const unsigned long long low = (unsigned long long)v.y << 32 | v.x, high = (unsigned long long)v.w << 32 | v.z;
    const auto store_piece = [&](unsigned size) {
        const unsigned long long bits = s < 8 ? low >> (8 * s) : high >> (8 * (s - 8));
        char *const p = base + s;
        if (size == 8) *reinterpret_cast<unsigned long long *>(p) = bits;
        else if (size == 4) *reinterpret_cast<uint32_t *>(p) = (uint32_t)bits;
        else if (size == 2) *reinterpret_cast<uint16_t *>(p) = (uint16_t)bits;
        else *reinterpret_cast<uint8_t *>(p) = (uint8_t)bits;
        s += size;
    };
#pragma unroll
    for (unsigned size = 1; size <= 8; size *= 2)
        if ((s & size) && s + size <= e) store_piece(size);
#pragma unroll
    for (unsigned size = 8; size >= 1; size /= 2)
        if (s + size <= e) store_piece(size);
}

// Writes the thread's items at virtual positions [p0, p0 + ITEMS), skipping positions outside
// the line.
template <class T, int ITEMS>
__device__ __forceinline__ void put(const scan_args &a, const row_line<T> &l, int64_t p0,
                                    const item_pack<T, ITEMS> &raw) {
    constexpr int vec = 16 / (int)sizeof(T);
    const int64_t k0 = p0 - l.head;
    if (l.vec_out && whole(a, l, p0, ITEMS)) {
        const bool reversed = a.out_step < 0;
        uint4 *first = reinterpret_cast<uint4 *>(reversed ? l.out - (k0 + vec - 1) : l.out + k0);
#pragma unroll
        for (int u = 0; u < ITEMS / vec; ++u) first[reversed ? -u : u] = raw.vector(u, reversed);
        return;
    }
    if (sizeof(T) == 1 && ITEMS > vec && l.vec_out) {  // a thread of 1-byte items at the line's end, as fetch
        const bool reversed = a.out_step < 0;
        uint4 *first = reinterpret_cast<uint4 *>(reversed ? l.out - (k0 + vec - 1) : l.out + k0);
        T *at = l.out + k0 * a.out_step;
#pragma unroll
        for (int u = 0; u < ITEMS / vec; ++u, at += vec * a.out_step) {
            if (whole(a, l, p0 + u * vec, vec)) {
                first[reversed ? -u : u] = raw.vector(u, reversed);
            } else if (in_part(a, k0 + u * vec, vec)) {  // the line's bytes of the vector, in aligned pieces
                int lo, hi;
                items_in_line(a, k0 + u * vec, vec, lo, hi);
                store_bytes(reinterpret_cast<char *>(first + (reversed ? -u : u)), raw.vector(u, reversed),
                            reversed ? vec - hi : lo, reversed ? vec - lo : hi);
            }
        }
        return;
    }
    T *at = l.out + k0 * a.out_step;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i, at += a.out_step)
        if (holds(a, k0 + i)) *at = raw.get(i);
}

// The group's exclusive scan of per-thread totals, seeded with the running prefix of the
// line so far (`start` at the line's beginning), which it then advances by the chunk's
// aggregate.
template <class A, int GROUP, bool BLOCK = (GROUP > 32)> struct group_scan;

template <class A, int GROUP> struct group_scan<A, GROUP, false> {
    static_assert((GROUP & (GROUP - 1)) == 0, "sub-warps are powers of two (shuffle-based WarpScan)");
    using warp_scan = cub::WarpScan<A, GROUP>;
    struct shared_storage {};
    scan_op<A> op;
    A carry;

    __device__ group_scan(shared_storage &, scan_op<A> scan, A start) : op(scan), carry(start) {}
    __device__ A exclusive(A total) {
        if constexpr (GROUP == 1) {
            const A prefix = carry;
            carry = op(carry, total);
            return prefix;
        } else {
            typename warp_scan::TempStorage unused;  // the shuffle variant keeps nothing in memory
            A prefix, aggregate;
            warp_scan(unused).ExclusiveScan(total, prefix, carry, op, aggregate);
            carry = op(carry, aggregate);
            return prefix;
        }
    }
    __device__ void chunk_done() {}
};

template <class A, int GROUP> struct group_scan<A, GROUP, true> {
    using block_scan = cub::BlockScan<A, GROUP, cub::BLOCK_SCAN_WARP_SCANS>;
    using shared_storage = typename block_scan::TempStorage;

    // BlockScan asks warp 0 for the chunk's prefix, given the chunk's aggregate.
    struct running_prefix {
        A carry;
        scan_op<A> op;
        __device__ A operator()(A aggregate) {
            const A prefix = carry;
            carry = op(carry, aggregate);
            return prefix;
        }
    };
    shared_storage &storage;
    running_prefix prefix_op;

    __device__ group_scan(shared_storage &s, scan_op<A> scan, A start) : storage(s), prefix_op{start, scan} {}
    __device__ A exclusive(A total) {
        A prefix;
        block_scan(storage).ExclusiveScan(total, prefix, prefix_op.op, prefix_op);
        return prefix;
    }
    // The next chunk's scan reuses the shared storage.
    __device__ void chunk_done() { __syncthreads(); }
};

// Scans lines of a: GROUP threads per line (GROUP == rows_block_threads: the whole block),
// ITEMS elements per thread per chunk, lines assigned grid-stride. Widen: the input is narrower
// than the output (a.widens): a kernel of its own, so that same-type scans compile as they did
// before wider outputs (bench/NOTES.md §2).
template <tscan_dtype D, int GROUP, int ITEMS, bool Widen>
__global__ void __launch_bounds__(
    rows_block_threads, rows_min_blocks_per_sm(GROUP, ITEMS * item_register_bytes<D>()))
    rows_kernel(const scan_args a, const input_window window) {
    using traits = dtype_traits<D>;
    using T = typename traits::T;
    using A = typename traits::A;
    using group = group_scan<A, GROUP>;
    constexpr int vec = row_geometry<D>::vec;
    constexpr int groups_per_block = rows_block_threads / GROUP;
    constexpr int64_t chunk = (int64_t)GROUP * ITEMS;
    // Lines of several chunks keep two in registers: the next one's loads are in flight
    // while this one is scanned. Sub-warps mostly see one chunk and save the registers.
    constexpr bool prefetch = GROUP >= 32;
    static_assert(ITEMS % vec == 0, "a thread's items are whole vectors");

    __shared__ typename group::shared_storage storage;
    const scan_op<A> op{a.prod};
    const A pad = op.neutral();
    const int64_t offset = (int64_t)(threadIdx.x % GROUP) * ITEMS;  // of the thread's items in a chunk
    const int64_t stride = (int64_t)gridDim.x * groups_per_block;

    const int64_t first = (int64_t)blockIdx.x * groups_per_block + threadIdx.x / GROUP;
    for (int64_t b = first; b < a.lines; b += stride) {
        const row_line<T> line(a, b, vec, std::bool_constant<Widen>{});
        const int64_t span = line.head + a.n;
        group scan(storage, op, op.start(a.exclusive));
        item_pack<T, ITEMS> current = {}, next = {};
        if constexpr (prefetch) fetch<D, Widen, !prefetch>(a, window, line, offset, current);
        for (int64_t start = 0; start < span; start += chunk) {
            const int64_t p0 = start + offset;
            if constexpr (prefetch) {
                if (start + chunk < span) fetch<D, Widen, !prefetch>(a, window, line, p0 + chunk, next);
            } else {
                fetch<D, Widen, !prefetch>(a, window, line, p0, current);
            }

            const bool all_inside = whole(a, line, p0, ITEMS);
            if constexpr (sizeof(T) == 1) {
                // 1-byte items four to a word (byte_word_scan, byte_word_product_scan: common.cuh),
                // those outside the line set to the operator's neutral value; the operator is a
                // constant in each of two inlined copies.
                const auto byte_words = [&](auto prod) {
                    constexpr bool kProd = decltype(prod)::value;
                    if (!all_inside) {  // a vector outside the line at once, one in part word by word
                        const int64_t k0 = p0 - line.head;
#pragma unroll
                        for (int u = 0; u < ITEMS / vec; ++u) {
                            if (in_part(a, k0 + u * vec, vec)) {
                                int lo, hi;
                                items_in_line(a, k0 + u * vec, vec, lo, hi);
#pragma unroll
                                for (int w = 0; w < 4; ++w) {  // bytes [below, above) of word w lie in the line
                                    const int below = min(max(lo - 4 * w, 0), 4), above = min(max(hi - 4 * w, 0), 4);
                                    const uint32_t keep = (below >= 4 ? 0u : ~0u << 8 * below) &
                                                          (above >= 4 ? ~0u : ~(~0u << 8 * above));
                                    current.words[4 * u + w] = byte_word_masked(current.words[4 * u + w], keep, kProd);
                                }
                            } else if (!holds(a, k0 + u * vec)) {
#pragma unroll
                                for (int w = 0; w < 4; ++w) current.words[4 * u + w] = byte_word_masked(0u, 0u, kProd);
                            }
                        }
                    }
                    uint32_t total = kProd;
#pragma unroll
                    for (int w = 0; w < ITEMS / 4; ++w)
                        total = byte_word_reduce(current.words[w], total, kProd);
                    uint32_t running = scan.exclusive(total);
#pragma unroll
                    for (int w = 0; w < ITEMS / 4; ++w)
                        current.words[w] = byte_word_rescan(current.words[w], running, a.exclusive, kProd);
                };
                if (a.prod) byte_words(std::true_type{});
                else byte_words(std::false_type{});
            } else {
                A x[ITEMS];
#pragma unroll
                for (int i = 0; i < ITEMS; ++i)
                    x[i] = all_inside || holds(a, p0 - line.head + i) ? traits::load(current.get(i)) : pad;
                // Items reduced, then rescanned from the group's prefix, with the operator fixed
                // at compile time (fixed_op): a thread's items are most of the kernel's arithmetic.
                const auto reduce_and_rescan = [&](auto item_op) {
                    A total = x[0];
#pragma unroll
                    for (int i = 1; i < ITEMS; ++i) total = item_op(total, x[i]);
                    A running = scan.exclusive(total);
#pragma unroll
                    for (int i = 0; i < ITEMS; ++i) {
                        const A before = running;
                        running = item_op(running, x[i]);
                        current.set(i, traits::store(a.exclusive ? before : running));
                    }
                };
                if (a.prod) reduce_and_rescan(fixed_op<A, true>{});
                else reduce_and_rescan(fixed_op<A, false>{});
            }
            put(a, line, p0, current);
            scan.chunk_done();
            if constexpr (prefetch) current = next;
        }
    }
}

// Whether a narrower input's items, `items` a thread, lie in whole aligned words of min(items,
// 8 bytes' worth) of its elements in every line: unit steps alike on both sides, every line at
// one phase of the input's words and of the output's vectors (strides multiples of both), and
// line 0's two phases equal (a thread's items start at an output vector's boundary). Found once
// a call: a line's own test (two 64-bit divisions) cost short lines more than the words saved.
template <tscan_dtype D> bool narrow_words(const scan_args &a, int items) {
    constexpr int vec = row_geometry<D>::vec;
    if (!a.widens || a.in_step != a.out_step || (a.in_step != 1 && a.in_step != -1)) return false;
    const int64_t word_items = items * a.in_bytes < 8 ? items : 8 / a.in_bytes;
    for (int d = 0; d < a.batch.ndim; ++d)
        if (a.batch.in_strides[d] % word_items != 0 || a.batch.out_strides[d] % vec != 0) return false;
    return vector_head(a.in, a.in_step, (size_t)a.in_bytes, (int)word_items) ==
           vector_head(a.out, a.out_step, sizeof(typename dtype_traits<D>::T), vec);
}

// Launches rows_kernel<D, GROUP, ITEMS> over every line of a (its widening form for a
// narrower input, which only output dtypes that take one compile).
template <tscan_dtype D, int GROUP, int ITEMS>
tscan_status launch_rows(const scan_args &a, input_window window, int sms, cudaStream_t stream) {
    constexpr int64_t groups_per_block = rows_block_threads / GROUP;
    const int64_t wanted = (a.lines + groups_per_block - 1) / groups_per_block;
    const int64_t cap = (int64_t)sms * max_blocks_per_sm;
    const unsigned blocks = (unsigned)(wanted < cap ? wanted : cap);
    if constexpr (takes_narrower_input(D)) {
        window.words = narrow_words<D>(a, ITEMS);
        if (a.widens) rows_kernel<D, GROUP, ITEMS, true><<<blocks, rows_block_threads, 0, stream>>>(a, window);
        else rows_kernel<D, GROUP, ITEMS, false><<<blocks, rows_block_threads, 0, stream>>>(a, window);
    } else {
        rows_kernel<D, GROUP, ITEMS, false><<<blocks, rows_block_threads, 0, stream>>>(a, window);
    }
    TSCAN_LAUNCH_CHECK("rows_kernel");
    return TSCAN_SUCCESS;
}

template <tscan_dtype D> struct rows_launcher {
    using geometry = row_geometry<D>;
    static constexpr int gi = geometry::group_items;

    // Virtual positions before the first element in the worst line: line 0's head when every
    // line shares its alignment, else up to a vector less one.
    static int64_t head_slack(const scan_args &a, size_t elem_size) {
        if (a.out_step != 1 && a.out_step != -1) return 0;
        for (int d = 0; d < a.batch.ndim; ++d)
            if (a.batch.out_strides[d] % geometry::vec != 0) return geometry::vec - 1;
        return vector_head(a.out, a.out_step, elem_size, geometry::vec);
    }

    // The input_window of a: empty unless vector loads past a line's ends are safe, realigning
    // where some line's input and output do not share their alignment (realigned loads are
    // then needed everywhere; without a window they go element by element).
    static input_window load_window(const scan_args &a, size_t elem_size) {
        if (a.widens || a.in_step != a.out_step || (a.in_step != 1 && a.in_step != -1)) return {};
        input_window in{}, out{};
        tensor_byte_range(a, input_side(a), elem_size, in.lo, in.end);
        tensor_byte_range(a, output_side(a), elem_size, out.lo, out.end);
        if (in.lo < out.end && out.lo < in.end) return {};
        bool aligned = vector_head(a.in, a.in_step, elem_size, geometry::vec) ==
                       vector_head(a.out, a.out_step, elem_size, geometry::vec);
        for (int d = 0; d < a.batch.ndim; ++d)
            aligned = aligned && (a.batch.in_strides[d] - a.batch.out_strides[d]) % geometry::vec == 0;
        in.realign = !aligned;
        return in;
    }

    // The group for a line of `span` virtual positions, GI items a thread.
    template <int GI>
    static tscan_status launch_for(const scan_args &a, const input_window &window, int64_t span, int sms,
                                   cudaStream_t stream) {
        if (span <= 32 * GI) {  // one chunk: the narrowest sub-warp that holds the line
            // A line of one vector takes a thread of one: a thread of two moving half its items
            // pays for both (bench/NOTES.md §3.6).
            if (span <= geometry::vec) return launch_rows<D, 1, geometry::vec>(a, window, sms, stream);
            if (span <= 1 * GI) return launch_rows<D, 1, GI>(a, window, sms, stream);
            if (span <= 2 * GI) return launch_rows<D, 2, GI>(a, window, sms, stream);
            if (span <= 4 * GI) return launch_rows<D, 4, GI>(a, window, sms, stream);
            if (span <= 8 * GI) return launch_rows<D, 8, GI>(a, window, sms, stream);
            if (span <= 16 * GI) return launch_rows<D, 16, GI>(a, window, sms, stream);
            return launch_rows<D, 32, GI>(a, window, sms, stream);
        }
        if (a.lines >= warp_min_lines_per_sm * sms) return launch_rows<D, 32, GI>(a, window, sms, stream);
        return launch_rows<D, rows_block_threads, geometry::block_items>(a, window, sms, stream);
    }

    static tscan_status run(const tscan_problem *p, int sms, cudaStream_t stream) {
        const scan_args a = make_scan_args(p);
        const input_window window = load_window(a, p->out_elem_size);
        const int64_t span = a.n + head_slack(a, p->out_elem_size);
        // 1-byte lines read with a step other than +-1 keep a vector's items a thread: they load
        // element by element, a lane's items a step apart, so a warp's load spans 32 * items *
        // step bytes, which two vectors' items made twice as wide (bench/NOTES.md §2).
        if constexpr (sizeof(typename geometry::T) == 1) {
            if (a.in_step != 1 && a.in_step != -1) return launch_for<geometry::vec>(a, window, span, sms, stream);
        }
        return launch_for<gi>(a, window, span, sms, stream);
    }
};

// Signed integers run the unsigned instantiation (see kernel_dtype).
template <tscan_dtype D> struct rows_entry {
    static tscan_status run(const problem_call &call, void *, cudaStream_t stream) {
        return rows_launcher<kernel_dtype(D)>::run(&call.p, call.sms, stream);
    }
};

// Every layout, no workspace.
tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    plan->workspace_bytes = 0;
    return plan_problem_call<rows_entry>(p, plan);
}

// What AUTO may know of rows' way with p: the consecutive elements a thread of a group holds,
// and whether a thread at a line's end still moves its vectors inside the line whole.
template <tscan_dtype D> struct thread_items_of {
    static tscan_status run(tscan_strategy_outline *o) {
        o->thread_items = row_geometry<kernel_dtype(D)>::group_items;
        o->whole_vector_ends = sizeof(typename dtype_traits<D>::T) == 1;
        return TSCAN_SUCCESS;
    }
};
void outline(const tscan_problem *p, tscan_strategy_outline *o) { dispatch_dtype<thread_items_of>(p->dtype, o); }

}  // namespace
}  // namespace tscan

// Every layout and every allowed pair of dtypes: unit steps take the vector path, any other
// stride or a narrower input the element path.
extern "C" const tscan_strategy tscan_strategy_rows = {TSCAN_ALGO_ROWS, tscan::plan,
                                                       tscan::run_plan<tscan::problem_call>, tscan::outline};
