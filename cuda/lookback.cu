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
//     Loads and stores are striped across the block (coalesced along the line) and
//     transposed through shared memory so that each thread scans consecutive elements.
//
// Elements narrower than 8 bytes move several to a load wherever the layout allows (packed):
// a column block lane's "line" is then a word of neighbouring lines, 2 of 4-byte elements in
// 64 bits or 4 / size of 1- and 2-byte ones in 32 (so the tile is 64 lines by 128 rows, or
// 64 or 128 lines by 256 rows); a line chunk's "element" a slot of consecutive elements of
// the line (16 bytes of 2-byte ones, 8 of 4-byte ones, 4 of 1-byte ones). A column block
// whose output is contiguous along the axis (a transposed input) stores words of consecutive
// elements of one line. Every tile moves 32 KB. Unpacked 1- and 2-byte elements move one at
// a time, zero-extended to a 32-bit slot. A narrower input (a wider output; kernels per
// output dtype) moves one element a slot too, converted to the output's type as it loads.
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
// Small problems whose axis packs in 16-byte vectors, and whose tiles of 16 KB all fit on the
// device at once, take a shorter path instead (one_wave_kernel): a block a tile, no shared-
// memory transpose, and a look-back that reads all of a line's earlier aggregates in one round
// trip.
//
// The pieces, one job a file under cuda/lookback/: geometry.cuh (tiles, blocks, claim order),
// status.cuh (the status-word protocol), plan.cuh (a problem's plan, layout and workspace),
// walk.cuh (the look-back walks), launch.cuh (the clear and the overlapped launch),
// tile_kernel.cuh (the persistent kernel), one_wave.cuh (the one-wave kernel). This file is the
// strategy: its workspace size, its check and its launch, choosing among those kernels.
#include "lookback/one_wave.cuh"
#include "lookback/tile_kernel.cuh"

namespace tscan {
namespace {

// D is the output's dtype, as for the launch.
template <tscan_dtype D> struct lookback_workspace {
    static tscan_status run(const tscan_problem *p, size_t *bytes) {
        constexpr tscan_dtype K = kernel_dtype(D);
        using T = typename dtype_traits<K>::T;
        const lookback_plan plan = make_plan<T>(p);
        using A = typename dtype_traits<K>::A;
        *bytes = plan_workspace<A>(make_layout<T, A>(plan), plan).total;
        one_wave_plan wave;  // the launch decides between the two: room for either
        if (make_one_wave_plan<T>(p, &wave)) *bytes = std::max(*bytes, (size_t)one_wave_words<A>(wave) * sizeof(unsigned long long));
        return TSCAN_SUCCESS;
    }
};

// D is the output's dtype. Signed integers run the kernels of their unsigned twins
// (kernel_dtype): 24 kernels, not 36, and 10 more for the outputs that a narrower input may
// scan into (takes_narrower_input), one a tile shape.
template <tscan_dtype D> struct lookback_launch {
    static constexpr tscan_dtype K = kernel_dtype(D);
    using T = typename dtype_traits<K>::T;
    using A = typename dtype_traits<K>::A;
    // With no workspace, only checks that the device can run the kernel that p would launch.
    static tscan_status run(const tscan_problem *p, void *workspace, cudaStream_t stream) {
        one_wave_plan wave;
        if (workspace && make_one_wave_plan<T>(p, &wave)) {
            bool ran = false;
            const tscan_status s = p->op == TSCAN_OP_PROD ? launch_one_wave<true>(wave, workspace, stream, &ran)
                                                          : launch_one_wave<false>(wave, workspace, stream, &ran);
            if (s != TSCAN_SUCCESS || ran) return s;
        }
        const lookback_plan plan = make_plan<T>(p);
        if constexpr (takes_narrower_input(K)) {
            if (plan.a.widens)
                return plan.cols == kLineChunk ? launch_shape<kLineChunk, 1, true>(plan, workspace, stream)
                                               : launch_shape<kColumnBlock, 1, true>(plan, workspace, stream);
        }
        if (plan.cols == kLineChunk) return launch_line_chunk<axis_pack<T>()>(plan, workspace, stream);
        return plan.v > 1 ? launch_shape<kColumnBlock, line_pack<T>()>(plan, workspace, stream)
                          : launch_shape<kColumnBlock, 1>(plan, workspace, stream);
    }

    // The line chunk kernel of plan.v: one of axis_pack's halvings down to min_axis_pack, or 1.
    template <int V> static tscan_status launch_line_chunk(const lookback_plan &plan, void *workspace, cudaStream_t stream) {
        if constexpr (V >= min_axis_pack<T>()) {
            if (plan.v == V) return launch_shape<kLineChunk, V>(plan, workspace, stream);
            return launch_line_chunk<V / 2>(plan, workspace, stream);
        } else {
            return launch_shape<kLineChunk, 1>(plan, workspace, stream);
        }
    }

    template <int Cols, int V, bool Widen = false>
    static tscan_status launch_shape(const lookback_plan &plan, void *workspace, cudaStream_t stream) {
        const auto kernel = lookback_kernel<K, Cols, V, Widen>;
        // Shared memory from the device, not from Hopper: a block that does not fit is declined,
        // and AUTO runs another strategy.
        const size_t smem = dynamic_smem_bytes<T, V>();
        const tscan_device_info *dev;
        cudaFuncAttributes attributes;
        if (!workspace && !tscan_device_present()) return TSCAN_SUCCESS;  // a query, with no device to fit: yes
        tscan_status s = tscan_current_device_info(&dev);
        if (s != TSCAN_SUCCESS) return s;
        TSCAN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
        if (smem + attributes.sharedSizeBytes > dev->smem_per_block_optin)
            return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                              "lookback's blocks need %zu bytes of shared memory; device %d (%s) gives a block %zu",
                              smem + attributes.sharedSizeBytes, dev->ordinal, dev->name, dev->smem_per_block_optin);
        if (!workspace) return TSCAN_SUCCESS;
        tile_layout L = make_layout<T, A>(plan);
        const workspace_plan w = plan_workspace<A>(L, plan);
        char *base = static_cast<char *>(workspace);
        tile_status<A> st;
        st.counter = reinterpret_cast<unsigned long long *>(base);
        st.flags = reinterpret_cast<uint32_t *>(base + sizeof(unsigned long long));
        st.words = reinterpret_cast<unsigned long long *>(base + w.values);
        st.aggregate = reinterpret_cast<A *>(base + w.values);
        st.inclusive = st.aggregate + L.status_tiles * plan.tile_lines();

        // Persistent grid: as many blocks as can be resident, each claiming tiles until none is left.
        const int threads = block_threads<T, V>();
        TSCAN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int64_t resident = 0;
        int sms = 0;
        s = resident_blocks(kernel, threads, smem, &resident, &sms);
        if (s != TSCAN_SUCCESS) return s;
        if (resident < 1) return tscan_fail(TSCAN_ERROR_INTERNAL, "lookback_kernel cannot be resident on this device");
        const unsigned grid = (unsigned)(L.tiles < resident ? L.tiles : resident);
        L.band = claim_band(L.groups, resident);

        return launch_after_clear(kernel, grid, threads, smem, stream, st.counter,
                                  (int64_t)((w.cleared + 7) / 8), sms, plan.a, plan.out_word_line_step, L, st);
    }

    // The one-wave path, when the plan's tiles all fit on the device at once (*ran says
    // whether it ran).
    template <bool Prod>
    static tscan_status launch_one_wave(const one_wave_plan &wave, void *workspace, cudaStream_t stream, bool *ran) {
        const auto kernel = one_wave_kernel<K, Prod>;
        int64_t resident = 0;
        int sms = 0;
        const tscan_status s = resident_blocks(kernel, kWaveThreads, 0, &resident, &sms);
        if (s != TSCAN_SUCCESS) return s;
        *ran = wave.tiles <= resident;
        if (!*ran) return TSCAN_SUCCESS;
        unsigned long long *const words = static_cast<unsigned long long *>(workspace);
        return launch_after_clear(kernel, (unsigned)wave.tiles, kWaveThreads, 0, stream, words, one_wave_words<A>(wave), sms,
                                  wave.a, wave.chunks, words);
    }
};

tscan_status workspace_size(const tscan_problem *p, size_t *bytes) {
    return dispatch_dtype<lookback_workspace>(p->out_dtype, p, bytes);
}

tscan_status check(const tscan_problem *p) { return dispatch_dtype<lookback_launch>(p->out_dtype, p, nullptr, cudaStream_t{}); }

tscan_status launch(const tscan_problem *p, void *workspace, size_t, cudaStream_t stream) {
    if (!workspace || (uintptr_t)workspace % 8 != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is null or not 8-byte aligned (lookback needs 8)",
                          workspace);
    return dispatch_dtype<lookback_launch>(p->out_dtype, p, workspace, stream);
}

// What AUTO may know of lookback's way with p: whether its 1- and 2-byte elements move several
// to a slot (32-bit words of lines, or 32- to 128-bit slots along the axis), the tiles of its
// one-wave path (a contiguous axis packed in 16-byte vectors, tiles of 16 KB; 0 where the layout
// does not take it; it runs only when they all fit at once), and the bytes of its other tiles.
template <class T> void outline_of(const tscan_problem *p, tscan_strategy_outline *o) {
    one_wave_plan wave;
    o->packs_small_elements = sizeof(T) <= 2 && make_plan<T>(p).v > 1;
    o->one_wave_tiles = make_one_wave_plan<T>(p, &wave) ? wave.tiles : 0;
    o->tile_bytes = kTileBytes;
}

void outline(const tscan_problem *p, tscan_strategy_outline *o) {
    switch (p->out_elem_size) {
    case 1: return outline_of<uint8_t>(p, o);
    case 2: return outline_of<uint16_t>(p, o);
    case 4: return outline_of<uint32_t>(p, o);
    default: return outline_of<uint64_t>(p, o);
    }
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_lookback = {TSCAN_ALGO_LOOKBACK, tscan::check,
                                                           tscan::workspace_size, tscan::launch, tscan::outline};
