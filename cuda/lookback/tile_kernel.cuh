// lookback/tile_kernel.cuh - the persistent tile kernel (lookback_kernel): line chunks and column blocks, pipelined
// or serial.
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include <cuda/barrier>
#include "lookback/launch.cuh"
#include "lookback/plan.cuh"
#include "lookback/walk.cuh"

namespace tscan {
namespace {

// Runs step with the operator: when `copies`, inlined once per operator, each a constant (so
// that the compiler does not compute both the sum and the product and select), else once with
// the run-time choice. The step takes a scan_op, not auto: a generic lambda in the kernel
// crashes cudafe++ in CUDA 13.
template <class A, class Step>
__device__ __forceinline__ void with_op_copies(bool copies, const scan_op<A> &op, Step &&step) {
    if (copies && op.prod) step(scan_op<A>{true});
    else if (copies) step(scan_op<A>{false});
    else step(op);
}

// Shared-memory slots of one tile buffer: the tile, padded one slot per 128 bytes.
template <class S> constexpr int buffer_slots() {
    return kThreads * items_per_thread(sizeof(S)) + kThreads * items_per_thread(sizeof(S)) / (128 / (int)sizeof(S));
}
template <class T, int V> constexpr size_t dynamic_smem_bytes() {
    return (pipelined<T, V>() ? 2 : 1) * (size_t)buffer_slots<slot_t<T, V>>() * sizeof(slot_t<T, V>);
}

// A packed widened line chunk's slot that holds the line in part: elements [first, end)
// (memory order) of the narrower input at row, converted, the others `fill`.
template <tscan_dtype D, int V>
__device__ __noinline__ slot_t<typename dtype_traits<D>::T, V> widened_part_slot(const char *row, int first, int end,
                                                                                   typename dtype_traits<D>::T fill,
                                                                                   int64_t in_bytes, tscan_dtype in) {
    using IO = slot_io<typename dtype_traits<D>::T, V>;
    typename IO::S slot{};
    for (int j = 0; j < V; ++j) slot = IO::with(slot, j, j >= first && j < end ? read_widened<D>(row + j * in_bytes, in) : fill);
    return slot;
}

// A pipelined block is 8 data warps and one look-back warp, with two tile buffers in shared
// memory. While the look-back warp finds the prefix of the current tile, the data warps claim,
// load, reduce and publish the next one into the other buffer; then they finish the current
// tile (scan it from its prefix, store). So a look-back no longer stops the block's memory
// traffic, and a tile's aggregate is published as soon as its data is in, whatever its
// predecessors are doing: claiming the next tile early delays no chain. (An earlier try, which
// loaded the next tile in the waiting warps but published it only after the current
// look-back, lost heavily: bench/NOTES.md §3.10.) A serial block runs the same steps one
// after another, warp 0 looking back while the other warps wait.
//
// Data thread t serves line group * Cols + t % Cols and the R consecutive rows of slice t / Cols.
// A column block's warp is one slice and loads its rows straight into registers, coalesced
// across lanes. A line chunk is loaded striped (each load 32 consecutive slots a warp,
// coalesced along the line) and transposed through shared memory, padded one slot per 128
// bytes so that each thread's run of R slots starts on its own bank. Its warp owns 32 R
// consecutive slots and reads back only what its own lanes wrote, so that its transposes wait
// on __syncwarp, not on the block (kWarpTransposes; 1-byte elements stripe across the block).
// Either way the tile waits in its buffer until the prefix is known, so that it holds no
// registers then: a column block's rows of single elements already scanned, anything else raw,
// to be scanned on the way out (kScanned).
//
// A column block whose output is contiguous along the axis (a transposed input: lines are
// neighbours in the input, rows in the output) stores line by line instead: the finished
// tile goes through shared memory, padded one slot per row of slots so that a warp reads a
// line's rows from distinct banks, and each warp writes a run of one line's rows (as words
// of V rows when a slot holds V lines).
//
// Widen: the input is narrower than the output D (a wider output, CONTRACT §1.2), of the
// run-time dtype a.in_dtype, converted to D's type on the way in (read_widened_rows); from
// there the tile is the same-type one. Packed (V > 1), each row of a slot's V elements (a
// column block's V lines, a line chunk's V consecutive elements) loads as one word of the
// input (read_widened_words); else one element a slot.
//
// OffGrid: a column block of 4-byte pairs that lie off their grid in some rows, or hold a run's
// last line alone (lookback_plan::off_grid): each row of a word loads and stores whole where it
// lies on the grid and holds both lines, element by element elsewhere.
template <tscan_dtype D, int Cols, int V, bool Widen = false, bool OffGrid = false>
__global__ void __launch_bounds__(block_threads<typename dtype_traits<D>::T, V>(),
                                  blocks_per_sm<typename dtype_traits<D>::T, V, Widen && Cols == kColumnBlock>())
    lookback_kernel(scan_args a, int64_t out_word_line_step, tile_layout L, tile_status<typename dtype_traits<D>::A> st) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    using IO = slot_io<T, V>;
    using S = slot_t<T, V>;
    constexpr int R = items_per_thread(sizeof(S));
    constexpr int LV = lines_per_thread<Cols, V>();
    constexpr int kTileLines = Cols * LV;
    constexpr bool kTransposed = Cols == kLineChunk;
    constexpr bool kPipelined = pipelined<T, V>();
    constexpr int kPacked = packed_status<T, A>(LV, Cols);  // the lines' low bits in one status word a lane
    // A column block of single elements keeps its rows scanned in the buffer (an accumulator
    // fits the slot); line chunks and words keep them raw, and finish scans them. Measured on
    // the H100 (bench/NOTES.md §3.10): raw column blocks cost int64 on the transposed input
    // (8-byte registers spilled), raw line chunks gained float32.
    constexpr bool kScanned = V == 1 && !kTransposed;
    // 1-byte slots take their four elements whole: a line chunk's sums and products
    // (byte_word_scan, byte_word_product_scan: common.cuh), a column block's sums (even_bytes).
    constexpr bool kByteWords = sizeof(T) == 1 && V == 4;
    constexpr int kSlots = 128 / sizeof(S);
    // A line chunk's transposes stay within each warp, but for 1-byte elements: the warp's
    // first row costs them a register at the cap (ptxas spilled 20 bytes) and they ran 3-5 %
    // slower on the H100, where wider ones gained 1-2.5 % (bench/NOTES.md §2).
    constexpr bool kWarpTransposes = kTransposed && sizeof(T) > 1;
    constexpr int kRowStride = kWarpTransposes ? 32 : kTransposed ? kThreads : 1;  // between a thread's loaded rows
    static_assert(R == kSlots, "a thread's run of rows is one 128-byte row of banks");
    static_assert(!OffGrid || (Cols == kColumnBlock && V == 2 && sizeof(T) == 4 && !Widen), "pairs off the grid");
    static_assert((R - 1) * (kThreads + 1) + kThreads <= buffer_slots<S>(), "a column block's padded slots fit a buffer");
    const scan_op<A> op{a.prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int col = t % Cols;
    const bool lookback_warp = warp == kWarps;
    const int first_row = kWarpTransposes ? warp * 32 * R + lane : kTransposed ? t : warp * R;
    // A packed line chunk's slot holds its elements in reverse order when its step decreases.
    const bool in_reversed = kTransposed && V > 1 && a.in_step < 0;
    const bool out_reversed = kTransposed && V > 1 && a.out_step < 0;
    // Shared-memory slot of the thread's row r, and of the slot loaded striped as row i (a line
    // chunk's slot j along the axis lies at j + j / kSlots; the thread's row r is slot t R + r).
    const auto own_slot = [&](int r) { return kTransposed ? t * (R + R / kSlots) + r : r * (kThreads + 1) + t; };
    static_assert(!kTransposed || kRowStride % kSlots == 0, "a loaded row's padding is first_row's");
    const int first_striped_slot = first_row + first_row / kSlots;
    const auto striped_slot = [&](int i) { return first_striped_slot + i * (kRowStride + kRowStride / kSlots); };

#ifdef __CUDACC__
    extern __shared__ __align__(16) unsigned char s_dynamic[];  // dynamic_smem_bytes<T, V>()
#else  // tests/emulated: blocks run one after another, and __shared__ is static
    alignas(16) static unsigned char s_dynamic[dynamic_smem_bytes<T, V>()];
#endif
    S *const s_buffers = reinterpret_cast<S *>(s_dynamic);
    __shared__ tile_at s_tile[2];                   // the tile in each buffer
    __shared__ A s_warp_total[kWarps][kTileLines];  // the staged tile: each slice's total per line
    __shared__ A s_tile_aggregate[2][kTileLines];   // per buffer
    __shared__ A s_tile_prefix[2][kTileLines];
    __shared__ T *s_line_out[32];  // line-by-line stores: each line's output base
    // The data threads' barrier. Pipelined blocks need one that the look-back warp does not take
    // part in: an mbarrier rather than a named barrier (bar.sync 1, 256), which is as good on
    // the hardware, but which racecheck does not model when a warp stays out of it (it reports
    // hazards on a probe that has none: bench/NOTES.md).
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> s_data_sync;
    const auto data_barrier = [&] {
        if constexpr (kPipelined) s_data_sync.arrive_and_wait();
        else __syncthreads();
    };
    // A line chunk's transposes exchange slots within a warp, or across the block.
    const auto transpose_barrier = [&] {
        if constexpr (kWarpTransposes) __syncwarp();
        else data_barrier();
    };

    // Where a data thread's rows of a tile are: its line's base pointers (null past the last
    // line), the first row, how many of its rows exist, how many of those come before a line
    // chunk's last row that holds the line in part (L.axis_tail), and whether its first row is
    // the line's first that holds it in part (L.axis_head).
    using InPtr = std::conditional_t<Widen, const char *, const T *>;  // a narrower input is addressed in bytes
    struct rows_of {
        InPtr in;
        T *out;
        int64_t k0;
        int left;
        int whole;
        bool head_part;
        int count;  // OffGrid: the lines in the thread's word (V but in a run's last word)
    };
    const auto rows_of_tile = [&](tile_at at) {
        const int64_t line = at.group * Cols + col;
        rows_of v{nullptr, nullptr, at.chunk * L.rows + first_row, 0, 0, false, V};
        if (line < a.lines) {
            int64_t in_offset, out_offset;
            a.batch.offsets(line, in_offset, out_offset);
            if constexpr (OffGrid) v.count = lines_in_group(a, line, L.run_lines, L.run_words, V);
            if constexpr (Widen) v.in = a.in + in_offset * a.in_bytes;
            else v.in = reinterpret_cast<const T *>(a.in) + in_offset;
            v.out = reinterpret_cast<T *>(a.out) + out_offset;
            // Loaded row i of this thread is axis element k0 + i * kRowStride, present for
            // i * kRowStride < left.
            v.left = (int)min(max(a.n - v.k0, (int64_t)0), L.rows);
            v.whole = L.axis_tail == 0 ? v.left : (int)min(max(a.n - 1 - v.k0, (int64_t)0), L.rows);
            v.head_part = L.axis_head != 0 && v.k0 == 0;
        }
        return v;
    };
    // Element e of a slot in scan order: line e of a column block's word, or the e-th
    // element along the axis of a line chunk's (stage puts a decreasing line's in that order).
    const auto element_in = [&](S s, int e) { return Traits::load(IO::get(s, e)); };
    const auto line_of = [](int e) { return LV == 1 ? 0 : e; };
    // A line chunk's loaded row i holds the line in part: the line's first row after a head, or
    // its last before a tail (row v.whole when v.whole < v.left). Only those rows' elements
    // [first, end) exist, in memory order (the rest load as the operator's neutral value).
    const auto is_whole_row = [&](const rows_of &v, int i) { return i * kRowStride < v.whole && (i > 0 || !v.head_part); };
    const auto is_part_row = [&](const rows_of &v, int i) {
        return (i == 0 && v.head_part) || (v.whole < v.left && i * kRowStride == v.whole);
    };
    const auto part_of_row = [&](const rows_of &v, int i, int64_t step, int &first, int &end) {
        const int64_t k = v.k0 + (int64_t)i * kRowStride;
        const int lo = k == 0 ? L.axis_head : 0, hi = k == a.n - 1 && L.axis_tail != 0 ? L.axis_tail : V;  // scan order
        first = step < 0 ? V - hi : lo;
        end = step < 0 ? V - lo : hi;
    };

    // Data warps: load a tile into buffer buf and reduce (or scan) each thread's rows, then the
    // slices' totals per line (within the warp: lanes Cols apart serve the same line; then
    // across warps), and publish the tile's aggregate. Sets `within` to the thread's exclusive
    // prefix within the tile.
    const auto stage = [&](tile_at tile, int buf, const rows_of &v, A(&within)[LV], const scan_op<A> &item_op) {
        S *const s_items = s_buffers + buf * buffer_slots<S>();
        S slots[R];
        if constexpr (Widen && V == 1) {
            T x[R];
            read_widened_rows<D>(x, v.in + v.k0 * a.in_step * a.in_bytes, kRowStride * a.in_step * a.in_bytes, 0,
                                 (v.left + kRowStride - 1) / kRowStride, a.in_dtype);
#pragma unroll
            for (int i = 0; i < R; ++i) slots[i] = IO::with(S{}, 0, x[i]);
        } else if constexpr (Widen) {
            // Whole rows as words of the input (a line chunk's first row may hold its line in part).
#pragma unroll
            for (int i = 0; i < R; ++i) slots[i] = S{};
            read_widened_words<D, V, R>([&](int i, int j, T x) { slots[i] = IO::with(slots[i], j, x); },
                                        v.in + v.k0 * a.in_step * a.in_bytes, kRowStride * a.in_step * a.in_bytes,
                                        v.head_part ? 1 : 0, (v.whole + kRowStride - 1) / kRowStride, a.in_dtype);
        } else {
            int64_t offset = v.k0 * a.in_step;
            const int64_t step = kRowStride * a.in_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step) {
                if constexpr (OffGrid) {
                    const T *p = v.in + offset;
                    slots[i] = !is_whole_row(v, i)                                   ? S{}
                               : v.count == V && (uintptr_t)p % sizeof(S) == 0 ? IO::load(p)
                                                                                 : IO::load_part(p, 0, v.count, T{});
                } else {
                    slots[i] = is_whole_row(v, i) ? IO::load(v.in + offset) : S{};
                }
            }
        }
        // A line chunk's rows that hold the line in part load element by element; a narrower
        // input's out of line (they are rare, and inlined they cost registers: every packed
        // widened kernel spilled).
        if constexpr (kTransposed && !(Widen && V == 1)) {
            if (v.head_part || v.whole < v.left) {
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    if (!is_part_row(v, i)) continue;
                    int first, end;
                    part_of_row(v, i, a.in_step, first, end);
                    const int64_t at = (v.k0 + i * kRowStride) * a.in_step;
                    if constexpr (Widen)
                        slots[i] = widened_part_slot<D, V>(v.in + at * a.in_bytes, first, end,
                                                           Traits::store(op.neutral()), a.in_bytes, a.in_dtype);
                    else
                        slots[i] = IO::load_part(v.in + at, first, end, Traits::store(op.neutral()));
                }
            }
        }
        if (in_reversed) {
#pragma unroll
            for (int i = 0; i < R; ++i) slots[i] = IO::reversed(slots[i]);
        }
        if (kTransposed) {
#pragma unroll
            for (int i = 0; i < R; ++i) s_items[striped_slot(i)] = slots[i];
            transpose_barrier();
#pragma unroll
            for (int r = 0; r < R; ++r) slots[r] = s_items[own_slot(r)];
        }
        // Rows past the end of the line load as zeros: they only reach totals that no
        // existing element and no published status depends on.
        A total[LV];
        if constexpr (kScanned) {
            A scanned = element_in(slots[0], 0);
            s_items[own_slot(0)] = ::cuda::std::bit_cast<S>(scanned);
#pragma unroll
            for (int r = 1; r < R; ++r) {
                scanned = item_op(scanned, element_in(slots[r], 0));
                s_items[own_slot(r)] = ::cuda::std::bit_cast<S>(scanned);
            }
            total[0] = scanned;
        } else {
            if (!kTransposed) {
#pragma unroll
                for (int r = 0; r < R; ++r) s_items[own_slot(r)] = slots[r];
            }
            const auto reduce_elements = [&] {
#pragma unroll
                for (int j = 0; j < LV; ++j) total[j] = op.neutral();
#pragma unroll
                for (int r = 0; r < R; ++r) {
#pragma unroll
                    for (int e = 0; e < V; ++e) total[line_of(e)] = item_op(total[line_of(e)], element_in(slots[r], e));
                }
            };
            if constexpr (kByteWords && kTransposed) {
                total[0] = item_op.prod;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    total[0] = byte_word_reduce(slots[r], total[0], item_op.prod);
            } else if constexpr (kByteWords) {
                if (item_op.prod) {
                    reduce_elements();
                } else {
                    uint32_t even = 0, odd = 0;  // R rows: no lane carries
#pragma unroll
                    for (int r = 0; r < R; ++r) even += even_bytes(slots[r]), odd += odd_bytes(slots[r]);
                    total[0] = even & 0xffu, total[1] = odd & 0xffu, total[2] = even >> 16, total[3] = odd >> 16;
                }
            } else {
                reduce_elements();
            }
        }
        A warp_exclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) {
#pragma unroll
            for (int d = Cols; d < 32; d *= 2) {
                const A up = __shfl_up_sync(kFullMask, total[j], d);
                if (lane >= d) total[j] = op(up, total[j]);
            }
            warp_exclusive[j] = __shfl_up_sync(kFullMask, total[j], Cols);
            if (lane >= 32 - Cols) s_warp_total[warp][col * LV + j] = total[j];
        }
        data_barrier();
        // The earlier slices' totals: every one that can be earlier is read before any is
        // reduced, so that the reads overlap (a loop of `warp` dependent reads cannot); the
        // reduction stops at the warp's own slice (the same for the whole warp).
        A slice_total[kWarps - 1][LV];
#pragma unroll
        for (int w = 0; w < kWarps - 1; ++w) {
#pragma unroll
            for (int j = 0; j < LV; ++j) slice_total[w][j] = s_warp_total[w][col * LV + j];
        }
        A prefix[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix[j] = op.neutral();
#pragma unroll
        for (int w = 0; w < kWarps - 1; ++w) {
            if (w >= warp) break;
#pragma unroll
            for (int j = 0; j < LV; ++j) prefix[j] = op(prefix[j], slice_total[w][j]);
        }
#pragma unroll
        for (int j = 0; j < LV; ++j) within[j] = lane >= Cols ? op(prefix[j], warp_exclusive[j]) : prefix[j];
        if (warp == 0) {
            A aggregate[LV];
#pragma unroll
            for (int j = 0; j < LV; ++j) {
                aggregate[j] = op.neutral();
                for (int w = 0; w < kWarps; ++w) aggregate[j] = op(aggregate[j], s_warp_total[w][col * LV + j]);
                if (lane < Cols) s_tile_aggregate[buf][lane * LV + j] = aggregate[j];
            }
            publish_aggregate<Cols, kPacked>(L, st, op, tile, op.start(a.exclusive), aggregate);
        }
    };

    // Data warps: finish the scan of the rows in buffer buf from the tile's prefix
    // (s_tile_prefix[buf]) and the thread's prefix within it, and store them.
    const auto finish = [&](tile_at tile, int buf, const A(&within)[LV], const rows_of &v, const scan_op<A> &item_op) {
        S *const s_items = s_buffers + buf * buffer_slots<S>();
        A running[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) running[j] = op(s_tile_prefix[buf][col * LV + j], within[j]);
        const bool line_by_line = !kTransposed && (a.out_step == 1 || a.out_step == -1);
        A previous = running[0];  // scanned buffers: the inclusive scan before row r
        // 1-byte sums of a column block: lines 0 and 2, 1 and 3 in 16-bit lanes (R rows from a
        // byte each: no lane carries).
        uint32_t even_running = 0, odd_running = 0;
        if constexpr (kByteWords && !kTransposed) {
            even_running = (running[0] & 0xffu) | (running[2] & 0xffu) << 16;
            odd_running = (running[1] & 0xffu) | (running[3] & 0xffu) << 16;
        }
        // Row r's outputs, in a slot as stored (each thread overwrites only its own slots, once
        // read: no barrier is needed before).
        const auto output_row = [&](int r) {
            const S in = s_items[own_slot(r)];
            S out{};
            if constexpr (kScanned) {
                const A inclusive = item_op(running[0], ::cuda::std::bit_cast<A>(in));
                out = IO::with(out, 0, Traits::store(a.exclusive ? previous : inclusive));
                previous = inclusive;
            } else {
                const auto scan_elements = [&] {
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        A &acc = running[line_of(e)];
                        const A next = item_op(acc, element_in(in, e));
                        out = IO::with(out, e, Traits::store(a.exclusive ? acc : next));
                        acc = next;
                    }
                };
                if constexpr (kByteWords && kTransposed) {
                    out = byte_word_rescan(in, running[0], a.exclusive, item_op.prod);
                } else if constexpr (kByteWords) {
                    if (item_op.prod) {
                        scan_elements();
                    } else {
                        const uint32_t even = even_running + even_bytes(in), odd = odd_running + odd_bytes(in);
                        out = a.exclusive ? interleaved_bytes(even_running, odd_running) : interleaved_bytes(even, odd);
                        even_running = even, odd_running = odd;
                    }
                } else {
                    scan_elements();
                }
            }
            return out_reversed ? IO::reversed(out) : out;
        };
        if (V > 1 && line_by_line) {
            // Each V rows of V lines become V words, one per line of V rows, in the group's
            // slots (line j in slot j); a decreasing output holds a word's rows in reverse order.
#pragma unroll
            for (int r = 0; r < R; r += V) {
                S group[V];
#pragma unroll
                for (int e = 0; e < V; ++e) group[e] = output_row(r + e);
                IO::transpose(group);
#pragma unroll
                for (int j = 0; j < V; ++j) s_items[own_slot(r + j)] = a.out_step < 0 ? IO::reversed(group[j]) : group[j];
            }
        } else {
            // Rows go through shared memory for line chunks and single-element lines, else
            // straight out (spelled so that words' column blocks know it at compile time,
            // which measured faster: bench/NOTES.md §3.10).
            int64_t offset = v.k0 * a.out_step;
#pragma unroll
            for (int r = 0; r < R; ++r, offset += a.out_step) {
                const S out = output_row(r);
                if (kTransposed || (V == 1 && line_by_line)) s_items[own_slot(r)] = out;
                else if (r < v.left) {
                    if constexpr (OffGrid) {
                        T *const p = v.out + offset;
                        if (v.count == V && (uintptr_t)p % sizeof(S) == 0) IO::store(p, out);
                        else IO::store_part(p, out, 0, v.count);
                    } else {
                        IO::store(v.out + offset, out);
                    }
                }
            }
        }
        if (line_by_line) {
            if (warp == 0) s_line_out[lane] = v.out;
            data_barrier();
        } else if (kTransposed) {
            transpose_barrier();
        }
        if (line_by_line) {
            // A lane column c holds V lines (a word's) of kTileRows rows: kTileRows output words
            // of V rows each, the words of a warp's slice of rows in its thread's own slots.
            // Thread t writes word t % kTileRows of every kLineSteps-th lane column: within a
            // warp, 32 / V lanes per line take 32 consecutive rows, so that each line's run is
            // one contiguous store and the 32 slots read lie in distinct banks. For V = 1 that
            // is row t of line c.
            constexpr int kTileRows = kWarps * R;
            constexpr int kLineSteps = kThreads / kTileRows;
            constexpr int kLanesPerLine = 32 / V;
            const int unit = t % kTileRows;
            const int line_in_word = unit % 32 / kLanesPerLine;
            const int row = unit / 32 * 32 + unit % kLanesPerLine * V;  // the word's first row
            const int64_t k = tile.chunk * L.rows + row;
            // A decreasing output's word starts at its last row.
            const int64_t word_offset = k * a.out_step - (a.out_step < 0 ? V - 1 : 0) + line_in_word * out_word_line_step;
            const int slot = (row % R + line_in_word) * (kThreads + 1) + row / R * 32;  // of lane column 0
            if (k < a.n) {
                // Eight lines' output pointers and words are read before any is stored, so that the
                // reads overlap rather than each store waiting on two dependent shared-memory
                // reads, which sped up every type on the transposed input (bench/NOTES.md §3.10).
                // Sixteen spill 36-44 bytes in the float32 pairs and the 8-byte column blocks.
                static_assert(kTransposed || Cols % kLineSteps == 0, "each thread stores the same number of lane columns");
                constexpr int kBatch = std::clamp(Cols / kLineSteps, 1, 8);
                const int first_col = t / kTileRows;
#pragma unroll
                for (int i0 = 0; i0 < Cols / kLineSteps; i0 += kBatch) {
                    T *outs[kBatch];
                    S words[kBatch];
#pragma unroll
                    for (int i = 0; i < kBatch; ++i) {
                        const int c = first_col + (i0 + i) * kLineSteps;
                        outs[i] = s_line_out[c];
                        words[i] = s_items[slot + c];
                    }
#pragma unroll
                    for (int i = 0; i < kBatch; ++i)
                        if (outs[i]) IO::store(outs[i] + word_offset, words[i]);
                }
            }
        } else if (kTransposed) {
            int64_t offset = v.k0 * a.out_step;
            const int64_t step = kRowStride * a.out_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                if (is_whole_row(v, i)) IO::store(v.out + offset, s_items[striped_slot(i)]);
            if (v.head_part || v.whole < v.left) {
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    if (!is_part_row(v, i)) continue;
                    int first, end;
                    part_of_row(v, i, a.out_step, first, end);
                    IO::store_part(v.out + (v.k0 + i * kRowStride) * a.out_step, s_items[striped_slot(i)], first, end);
                }
            }
        }
    };

    // 1- and 2-byte elements (several a slot, each converted) have the most arithmetic a
    // byte: their stage and finish are inlined twice, each with its operator a constant, so
    // that the compiler does not compute both the sum and the product of every element and
    // select. Other sizes keep one copy (two cost float32 sums: bench/NOTES.md §3.10).
    constexpr bool kOpCopies = sizeof(T) < 4;
    // The look-back of 4-byte elements has its operator a constant too: a long walk is bound by
    // its instructions (bench/NOTES.md §3.10). Others keep one look-back: beside the two copies
    // of stage and finish of 1- and 2-byte elements a third cost bfloat16's column blocks (it
    // spills), and float64's transposed input lost too.
    constexpr bool kLookBackCopies = sizeof(T) == 4;
    const auto staged = [&](tile_at tile, int buf, const rows_of &v, A(&within)[LV]) {
        with_op_copies(kOpCopies, op, [&](const scan_op<A> &item_op) { stage(tile, buf, v, within, item_op); });
    };
    const auto finished = [&](tile_at tile, int buf, const A(&within)[LV], const rows_of &v) {
        with_op_copies(kOpCopies, op, [&](const scan_op<A> &item_op) { finish(tile, buf, within, v, item_op); });
    };
    const auto looked_back = [&](tile_at tile, int buf) {
        const A start = op.start(a.exclusive);
        with_op_copies(kLookBackCopies, op, [&](const scan_op<A> &walk_op) {
            look_back<Cols, LV, kPacked>(L, st, walk_op, tile, start, s_tile_aggregate[buf], s_tile_prefix[buf]);
        });
    };

    // Every tile, the first included, is claimed from the counter (forward progress: see the
    // file's header), each no earlier than the block can load it: a claimed tile that waits
    // behind another stalls every successor in its chain. (A pipelined block claims as it
    // starts to finish the tile before, which waits on nothing, so that the claim's round trip
    // overlaps that finish: below.) Thread 0 finds a claim's tile (tile_of_claim divides) and
    // the block reads it from s_tile.
    const auto claim_index = [&] { return (int64_t)atomicAdd(st.counter, 1ull); };
    const auto claim = [&] { return tile_of_claim(L, claim_index()); };
    // No tile can be claimed before the clear is done. Meanwhile each data thread fetches into L2
    // its rows of the tile of claim blockIdx.x, which the block's first claim most often takes
    // (blocks start, and so claim, in about index order): its loads then find them there.
    if (!lookback_warp) {
        const rows_of v = rows_of_tile(tile_of_claim(L, blockIdx.x));
        const int64_t in_bytes = Widen ? a.in_bytes : 1;  // InPtr's units of an input element
#pragma unroll
        for (int i = 0; i < R; ++i)
            if (is_whole_row(v, i)) prefetch_l2(v.in + (v.k0 + (int64_t)i * kRowStride) * a.in_step * in_bytes);
    }
    wait_for_clear();
    if (t == 0) s_tile[0] = claim();
    if constexpr (!kPipelined) {
        __syncthreads();
        for (;;) {
            const tile_at tile = s_tile[0];
            if (tile.chunk == L.chunks) break;
            const rows_of v = rows_of_tile(tile);
            A within[LV];
            staged(tile, 0, v, within);
            if (warp == 0) {
                __syncwarp();  // lane 0's s_tile_aggregate, when Cols is 1
                looked_back(tile, 0);
            }
            __syncthreads();
            finished(tile, 0, within, v);
            __syncthreads();  // everyone is done with the tile and has read s_tile
            if (t == 0) s_tile[0] = claim();
            __syncthreads();
        }
    } else {
        if (t == 0) init(&s_data_sync, kThreads);
        __syncthreads();
        // A block that starts once every tile is taken has nothing to do (its first claim is past
        // the last tile, which it must neither stage nor look back from).
        if (s_tile[0].chunk == L.chunks) return;
        int buf = 0;
        A within[LV], next_within[LV];
        if (!lookback_warp) staged(s_tile[0], buf, rows_of_tile(s_tile[0]), within);
        __syncthreads();  // the tile's aggregate is in s_tile_aggregate
        // Thread 0's claim of the next tile, in flight: sent as the block starts to finish a tile
        // and read at the next stage, so that its round trip overlaps the finish rather than
        // holding every data warp at the stage's barrier. 1- and 2-byte tiles (stage and finish
        // inlined twice) and widened ones run their finish at the register cap, where holding
        // the claim through it spilled (ptxas: 16-108 bytes): they claim at the stage.
        constexpr bool kClaimAhead = !kOpCopies && !Widen;
        int64_t next_claim = 0;
        if (kClaimAhead && t == 0) next_claim = claim_index();
        for (;;) {
            const int next_buf = buf ^ 1;
            if (lookback_warp) {
                looked_back(s_tile[buf], buf);
            } else {
                // The other buffer was last read by the previous finish, and s_warp_total by the
                // previous stage, which every data thread has passed before this barrier.
                if (t == 0) s_tile[next_buf] = kClaimAhead ? tile_of_claim(L, next_claim) : claim();
                data_barrier();
                const tile_at next = s_tile[next_buf];
                if (next.chunk < L.chunks) staged(next, next_buf, rows_of_tile(next), next_within);
            }
            // Read before the barrier: the next iteration's claim writes this slot. The line
            // pointers are found again rather than kept across the next tile's stage, which
            // would hold them in registers through its loads.
            const tile_at tile = s_tile[buf];
            __syncthreads();  // the prefix of this tile, and the next tile's id and aggregate
            const bool last = s_tile[next_buf].chunk == L.chunks;
            if (kClaimAhead && t == 0 && !last) next_claim = claim_index();
            if (!lookback_warp) finished(tile, buf, within, rows_of_tile(tile));
            if (last) break;
            buf = next_buf;
#pragma unroll
            for (int j = 0; j < LV; ++j) within[j] = next_within[j];
        }
    }
}

}  // namespace
}  // namespace tscan
