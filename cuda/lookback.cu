// lookback.cu - TSCAN_ALGO_LOOKBACK: a single-pass scan that splits the axis across blocks.
//
// A tile is `cols` consecutive lines by a chunk of `rows` consecutive elements of the axis.
// Each group of `cols` lines is a chain of tiles along the axis; a tile finds the scan of
// everything before it in its chain by decoupled look-back over its predecessors' published
// aggregates and inclusive prefixes, so the data is read once and written once.
//
//   - Strided axis with 16 lines or more: cols = 32 lines, one per lane, by 256 rows (128
//     when a lane's loads are 8 bytes). A warp loads its own rows straight into registers,
//     every load coalesced across neighbouring lines.
//   - Contiguous axis, or fewer lines: cols = 1, a tile is a chunk of 32 KB of one line.
//     Loads and stores are striped across each warp's lanes (coalesced along the line) and
//     transposed through shared memory within the warp (the block for 1-byte elements), so
//     that each thread scans consecutive elements.
//
// Elements narrower than 8 bytes move several to a load wherever the layout allows (packed):
// a column block lane's "line" is then a word of neighbouring lines, 2 of 4-byte elements in
// 64 bits or 4 / size of 1- and 2-byte ones in 32 (so the tile is 64 lines by 128 rows, or
// 64 or 128 lines by 256 rows); a line chunk's "element" a slot of consecutive elements of
// the line (16 bytes of 2-byte ones, 8 of 4-byte ones, 4 of 1-byte ones). A column block
// whose output is contiguous along the axis (a transposed input) stores words of consecutive
// elements of one line. Pairs of 4-byte lines that neighbour but lie off the grid (an odd pitch,
// an odd number of lines) pack too, each row of a word moving whole where it lies on the grid
// and element by element elsewhere. Every tile moves 32 KB. Unpacked 1- and 2-byte elements move one at
// a time, zero-extended to a 32-bit slot. A narrower input (a wider output; kernels per
// output dtype) is converted to the output's type as it loads: a line chunk whose lines lie on
// the grid of 16-byte output slots in both tensors, and a column block whose lines pack as the
// output's, load a slot's elements as one word of the input; anything else moves one element a
// slot.
//
// Blocks are persistent and claim every tile, their first too, in order from an atomic
// counter, chunk-major within bands of chains (the chains of a band advance together; see
// claim_band). Forward progress: a tile waits only on tiles claimed before it, and a claimed
// tile belongs to a block that is running, so the earliest unfinished tile can always finish,
// however few blocks the GPU makes resident beside other work (blockIdx.x carries no order:
// a block that other kernels keep off the SMs owns nothing anyone waits on). When a
// thread's loads fill their slots a block is pipelined: a warp of its own looks back while
// the others load the next tile (see lookback_kernel). The workspace is the counter and the
// statuses of the tiles that have a successor (tile_status); what a call reads before writing
// is cleared on its stream by a kernel that the scan kernel's launch overlaps
// (clear_workspace).
//
// On sm_90 and later, line chunks of one width whose lines lie on one grid of 16-byte vectors
// in both tensors (any element size, line length and start) take bulk_lookback_kernel
// instead: tiles come into a ring of three shared-memory buffers by bulk copies, and a warp
// reduces each as it lands, another looks back and claims, eight scan and store. A tile's
// bytes are then in flight a buffer ahead at no register cost, and no aggregate waits on a
// scan (the tile kernel's loads fly only while it stages a tile: bench/NOTES.md §2, "Bulk
// copies into a ring of buffers").
//
// Small problems whose axis packs in 16-byte vectors, and whose tiles of 16 KB all fit on the
// device at once, take a shorter path instead (one_wave_kernel): a block a tile, no shared-
// memory transpose, and a look-back that reads all of a line's earlier aggregates in one round
// trip.
//
// The pieces, one job a file under cuda/lookback/: geometry.cuh (tiles, blocks, claim order),
// status.cuh (the status-word protocol), plan.cuh (a problem's plan, layout and workspace),
// walk.cuh (the look-back walks), launch.cuh (the clear and the overlapped launch),
// tile_kernel.cuh (the persistent kernel), bulk_kernel.cuh (the bulk line-chunk kernel) and
// async_copy.cuh (its mbarriers, bulk copies and named barriers), one_wave.cuh (the one-wave
// kernel). This file is the strategy: its plan (which of those kernels, its grid and
// workspace) and its launch.
#include "lookback/bulk_kernel.cuh"
#include "lookback/one_wave.cuh"
#include "lookback/tile_kernel.cuh"

namespace tscan {
namespace {

// A planned call: the kernel chosen and what its launch passes, the tile path's (the problem as
// packed, layout, workspace offsets, grid) or the one-wave path's (the problem, its chunks).
struct lookback_call {
    tscan_status (*run)(const lookback_call &, void *workspace, cudaStream_t stream);
    scan_args a;
    int64_t out_word_line_step;  // tile path
    tile_layout L;               // tile and bulk paths
    int64_t wave_chunks;         // one-wave path
    int64_t clear_words;         // the workspace's words cleared first
    unsigned grid;
    int threads;
    size_t smem;
    int sms;
};

// D is the output's dtype. Signed integers run the kernels of their unsigned twins
// (kernel_dtype): 24 kernels, not 36, 2 more for column blocks of 4-byte pairs off the grid,
// and 18 more for the outputs that a narrower input may scan into (takes_narrower_input): a
// column block of single lines and (2- and 4-byte outputs) one of pairs, a line chunk of one
// element a slot and a packed one.
template <tscan_dtype D> struct lookback_planner {
    static constexpr tscan_dtype K = kernel_dtype(D);
    using T = typename dtype_traits<K>::T;
    using A = typename dtype_traits<K>::A;

    // The workspace is room for either path (device-independent: a size asked on one device
    // holds on another); with a device, the kernel that will run, its grid and what it needs.
    static tscan_status run(const tscan_problem *p, lookback_call *call, size_t *bytes) {
        const lookback_plan plan = make_plan<T>(p);
        one_wave_plan wave;
        const bool wave_layout = make_one_wave_plan<T>(p, &wave);
        bulk_plan bulk;
        const bool bulk_layout = make_bulk_plan<T>(p, &bulk);
        *bytes = (size_t)tile_workspace_words(make_layout<T, A>(plan)) * sizeof(unsigned long long);
        if (wave_layout) *bytes = std::max(*bytes, (size_t)one_wave_words<A>(wave) * sizeof(unsigned long long));
        if (bulk_layout)
            *bytes = std::max(*bytes, (size_t)tile_workspace_words(make_bulk_layout<T, A>(bulk)) * sizeof(unsigned long long));
        if (!tscan_device_present()) return TSCAN_SUCCESS;  // a query, with no device to fit: yes
        const tscan_device_info *dev;
        tscan_status s = tscan_current_device_info(&dev);
        if (s != TSCAN_SUCCESS) return s;
        call->sms = dev->sm_count;
        if (wave_layout) {
            bool fits = false;
            s = p->op == TSCAN_OP_PROD ? plan_one_wave<true>(wave, dev, call, &fits)
                                       : plan_one_wave<false>(wave, dev, call, &fits);
            if (s != TSCAN_SUCCESS || fits) return s;
        }
        if (bulk_layout) {
            const bool prod = p->op == TSCAN_OP_PROD;
            int64_t resident = 0;
            bool runs = false;
            s = bulk_fit(bulk, prod, dev, &resident, &runs);
            if (s != TSCAN_SUCCESS) return s;
            if (runs) {
                prod ? plan_bulk<true>(bulk, resident, call) : plan_bulk<false>(bulk, resident, call);
                return TSCAN_SUCCESS;
            }
        }
        return with_tile_kernel<K>(plan, tile_planner{plan, dev, call});
    }

    // Bulk line chunks (sm_90 and later): as many blocks as can be resident, as for the tile
    // kernel. *runs stays false where the element or op is not the kernel's (bulk_takes), where a
    // block's buffers do not fit the device, or where the blocks would get fewer than
    // bulk_min_tiles_per_block tiles each: a block's ring fills once, its first tiles claimed,
    // copied, reduced, looked back and scanned one after another, and over a few tiles that costs
    // more than it saves (H200: float64 2^22 elements, 3.9 tiles a block, 12.7 % slower than the
    // tile kernel; 15.5 a block, 1.4-3.5 % faster: bench/NOTES.md §2). The tile kernel runs
    // instead. The planner and AUTO's outline both ask it.
    template <bool Prod>
    static tscan_status bulk_fit(const bulk_plan &bulk, const tscan_device_info *dev, int64_t *resident, bool *runs) {
        *runs = false;
        if constexpr (!bulk_takes<T>(Prod)) {
            (void)bulk, (void)dev, (void)resident;
            return TSCAN_SUCCESS;
        } else {
            if (dev->cc < 90) return TSCAN_SUCCESS;
            kernel_fit fit;
            const tscan_status s = fit_on<bulk_lookback_kernel<K, Prod>>(dev, kBulkThreads, kBulkSmemBytes, &fit);
            if (s != TSCAN_SUCCESS) return s;
            *resident = (int64_t)fit.per_sm * dev->sm_count;
            *runs = fit.per_sm >= 1 &&
                    make_bulk_layout<T, A>(bulk).tiles >= kernel_policy::bulk_min_tiles_per_block * *resident;
            return TSCAN_SUCCESS;
        }
    }
    static tscan_status bulk_fit(const bulk_plan &bulk, bool prod, const tscan_device_info *dev, int64_t *resident,
                                 bool *runs) {
        return prod ? bulk_fit<true>(bulk, dev, resident, runs) : bulk_fit<false>(bulk, dev, resident, runs);
    }

    // The bulk kernel's call, where bulk_fit says it runs.
    template <bool Prod> static void plan_bulk(const bulk_plan &bulk, int64_t resident, lookback_call *call) {
        if constexpr (bulk_takes<T>(Prod)) {
            constexpr auto kernel = bulk_lookback_kernel<K, Prod>;
            call->a = bulk.a;
            call->L = make_bulk_layout<T, A>(bulk);
            call->grid = (unsigned)(call->L.tiles < resident ? call->L.tiles : resident);
            call->L.band = claim_band(call->L.groups, resident);
            call->threads = kBulkThreads;
            call->smem = kBulkSmemBytes;
            call->clear_words = tile_workspace_words(call->L);
            call->run = &launch_bulk<kernel>;
        } else {
            (void)bulk, (void)resident, (void)call;
        }
    }

    template <auto Kernel> static tscan_status launch_bulk(const lookback_call &call, void *workspace, cudaStream_t stream) {
        const tile_status<A> st = statuses_in(workspace);
        return launch_after_clear(Kernel, call.grid, call.threads, call.smem, stream, st.counter, call.clear_words,
                                  call.sms, call.a, call.L, st);
    }

    // with_tile_kernel's callback: plans the kernel it picks.
    struct tile_planner {
        const lookback_plan &plan;
        const tscan_device_info *dev;
        lookback_call *call;
        template <int Cols, int V, bool Widen, bool OffGrid> tscan_status with() const {
            return plan_tiles<Cols, V, Widen, OffGrid>(plan, dev, call);
        }
    };

    // The persistent tile kernel: as many blocks as can be resident, each claiming tiles until
    // none is left. Shared memory from the device, not from Hopper: a block that does not fit
    // is declined, and AUTO runs another strategy.
    template <int Cols, int V, bool Widen = false, bool OffGrid = false>
    static tscan_status plan_tiles(const lookback_plan &plan, const tscan_device_info *dev, lookback_call *call) {
        constexpr auto kernel = lookback_kernel<K, Cols, V, Widen, OffGrid>;
        call->smem = dynamic_smem_bytes<T, V>();
        call->threads = block_threads<T, V>();
        kernel_fit fit;
        const tscan_status s = fit_on<kernel>(dev, call->threads, call->smem, &fit);
        if (s != TSCAN_SUCCESS) return s;
        if (fit.per_sm < 1)
            return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                              "lookback's blocks need %zu bytes of shared memory; device %d (%s) gives a block %zu",
                              call->smem + fit.static_smem, dev->ordinal, dev->name, dev->smem_per_block_optin);
        const int64_t resident = (int64_t)fit.per_sm * dev->sm_count;
        call->a = plan.a;
        call->out_word_line_step = plan.out_word_line_step;
        call->L = make_layout<T, A>(plan);
        call->grid = (unsigned)(call->L.tiles < resident ? call->L.tiles : resident);
        call->L.band = claim_band(call->L.groups, resident);
        call->clear_words = tile_workspace_words(call->L);
        call->run = &launch_tiles<kernel>;
        return TSCAN_SUCCESS;
    }

    // The tile and bulk kernels' workspace: the claim counter in its sector, then the statuses.
    static tile_status<A> statuses_in(void *workspace) {
        unsigned long long *const counter = static_cast<unsigned long long *>(workspace);
        return {counter, counter + kSectorWords};
    }

    template <auto Kernel> static tscan_status launch_tiles(const lookback_call &call, void *workspace, cudaStream_t stream) {
        const tile_status<A> st = statuses_in(workspace);
        return launch_after_clear(Kernel, call.grid, call.threads, call.smem, stream, st.counter, call.clear_words,
                                  call.sms, call.a, call.out_word_line_step, call.L, st);
    }

    // The one-wave path, when the plan's tiles all fit on the device at once (*fits says
    // whether they do).
    template <bool Prod>
    static tscan_status plan_one_wave(const one_wave_plan &wave, const tscan_device_info *dev, lookback_call *call,
                                      bool *fits) {
        constexpr auto kernel = one_wave_kernel<K, Prod>;
        kernel_fit fit;
        const tscan_status s = fit_on<kernel>(dev, kWaveThreads, 0, &fit);
        if (s != TSCAN_SUCCESS) return s;
        *fits = wave.tiles <= (int64_t)fit.per_sm * dev->sm_count;
        if (!*fits) return TSCAN_SUCCESS;
        call->a = wave.a;
        call->wave_chunks = wave.chunks;
        call->grid = (unsigned)wave.tiles;
        call->threads = kWaveThreads;
        call->smem = 0;
        call->clear_words = one_wave_words<A>(wave);
        call->run = &launch_one_wave<kernel>;
        return TSCAN_SUCCESS;
    }

    template <auto Kernel> static tscan_status launch_one_wave(const lookback_call &call, void *workspace, cudaStream_t stream) {
        unsigned long long *const words = static_cast<unsigned long long *>(workspace);
        return launch_after_clear(Kernel, call.grid, call.threads, 0, stream, words, call.clear_words, call.sms, call.a,
                                  call.wave_chunks, words);
    }
};

tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    lookback_call *const call = plan_state<lookback_call>(plan);
    *call = lookback_call{};
    return dispatch_dtype<lookback_planner>(p->out_dtype, p, call, &plan->workspace_bytes);
}

tscan_status launch(const tscan_launch_plan *plan, void *workspace, cudaStream_t stream) {
    if (!workspace || (uintptr_t)workspace % 8 != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is null or not 8-byte aligned (lookback needs 8)",
                          workspace);
    return run_plan<lookback_call>(plan, workspace, stream);
}

// What AUTO may know of lookback's way with p: whether its 1- and 2-byte elements move several
// to a slot (32-bit words of lines, or 32- to 128-bit slots along the axis), whether it runs
// column blocks or line chunks, whether its column blocks move words of lines (on the grid or
// off it) and its line chunks slots of several elements, the tiles of its one-wave path (a
// contiguous axis packed in 16-byte vectors, tiles of 16 KB; 0 where the layout does not take
// it; it runs only when they all fit at once), the bytes of its other tiles, and whether the
// bulk kernel would run p on the current device (bulk_fit, read from the per-device cache of its
// fit; a device fault here is left for the plan to report).
template <tscan_dtype D> struct lookback_outline {
    static tscan_status run(const tscan_problem *p, tscan_strategy_outline *o) {
        using T = typename lookback_planner<D>::T;
        one_wave_plan wave;
        const lookback_plan plan = make_plan<T>(p);
        o->packs_small_elements = sizeof(T) <= 2 && plan.v > 1;
        o->column_blocks = plan.cols == kColumnBlock;
        o->packs_lines = plan.cols == kColumnBlock && plan.v > 1;
        o->packs_axis = plan.cols == kLineChunk && plan.v > 1;
        o->one_wave_tiles = make_one_wave_plan<T>(p, &wave) ? wave.tiles : 0;
        o->tile_bytes = kTileBytes;
        bulk_plan bulk;
        const tscan_device_info *dev;
        if (!make_bulk_plan<T>(p, &bulk) || !tscan_device_present() || tscan_current_device_info(&dev) != TSCAN_SUCCESS)
            return TSCAN_SUCCESS;
        int64_t resident = 0;
        bool runs = false;
        const tscan_status s = lookback_planner<D>::bulk_fit(bulk, p->op == TSCAN_OP_PROD, dev, &resident, &runs);
        o->runs_bulk = s == TSCAN_SUCCESS && runs;
        return TSCAN_SUCCESS;
    }
};

void outline(const tscan_problem *p, tscan_strategy_outline *o) { (void)dispatch_dtype<lookback_outline>(p->out_dtype, p, o); }

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_lookback = {TSCAN_ALGO_LOOKBACK, tscan::plan, tscan::launch,
                                                           tscan::outline};
