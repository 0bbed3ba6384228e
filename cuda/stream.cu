// stream.cu - TSCAN_ALGO_STREAM: a tensor whose lines lie end to end in memory (a contiguous
// axis, packed lines) scanned as one flat stream of aligned tiles, whatever the line length.
//
// A tile is 16 KB of the input stream. A line boundary inside a tile is a segment start: the
// running value restarts there, so a tile's state for the next one is the value since its
// last start, and a tile holding a start owes nothing to its predecessors. Tiles are chained
// along the stream by single-pass decoupled look-back (statuses as lookback's status words:
// cuda/lookback/status.cuh), so line length, line count and alignment of a line no longer
// choose the memory path: every load and store is a coalesced 16-byte vector except at the
// two ends of the stream.
//
// Forward progress: every block takes its tile from the claim counter, and tiles are claimed
// in the order of the scan, so a tile waits only on tiles claimed before it, which belong to
// blocks that are running or done; blockIdx.x carries no order.
//
// Decreasing scans walk the same memory tiles from the far end: logical tile c is memory
// tile tiles - 1 - c, logical vector L of a tile its memory vector count - 1 - L, and the
// elements of each vector are reversed in registers. Everything between the loads and the
// stores sees one increasing stream. The input and output types are separate (the running
// value lives in the output's accumulator, CONTRACT §1.2): a narrower input is converted as
// it is read, so an output of another width costs no other path.
#include "stream/kernel.cuh"
#include "lookback/launch.cuh"

namespace tscan {
namespace {

// The workspace: the claim counter in a sector of its own, then a sector of status words a tile.
int64_t stream_words(const stream_args &a) { return kSectorWords * (1 + a.tiles); }

template <tscan_dtype In, tscan_dtype Out> struct stream_launch {
    static tscan_status run(const stream_args &a, bool prod, void *workspace, cudaStream_t stream) {
        int sms = 0;
        const tscan_status s = sm_count(&sms);
        if (s != TSCAN_SUCCESS) return s;
        if (a.tiles > 0x7fffffff) return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED, "stream: %lld tiles exceed a grid", (long long)a.tiles);
        unsigned long long *const words = static_cast<unsigned long long *>(workspace);
        const auto kernel = prod ? stream_kernel<In, Out, true> : stream_kernel<In, Out, false>;
        return launch_after_clear(kernel, (unsigned)a.tiles, kStreamThreads, 0, stream, words, stream_words(a), sms, a, words);
    }
};

tscan_status check(const tscan_problem *p) {
    stream_args a;
    if (!stream_layout(p, &a))
        return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                          "stream takes an output whose lines lie end to end from a 16-byte aligned base, "
                          "with unit steps along the axis (input step %lld, output step %lld, output at %p)",
                          (long long)p->in_step, (long long)p->out_step, (void *)p->out);
    return TSCAN_SUCCESS;
}

tscan_status workspace_size(const tscan_problem *p, size_t *bytes) {
    stream_args a;
    if (!stream_layout(p, &a)) return check(p);
    *bytes = (size_t)stream_words(a) * sizeof(unsigned long long);
    return TSCAN_SUCCESS;
}

tscan_status launch(const tscan_problem *p, void *workspace, size_t, cudaStream_t stream) {
    stream_args a;
    if (!stream_layout(p, &a)) return check(p);
    if (!workspace || (uintptr_t)workspace % 8 != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is null or not 8-byte aligned (stream needs 8)",
                          workspace);
    return dispatch_pair<stream_launch>(p->dtype, p->out_dtype, a, p->op == TSCAN_OP_PROD, workspace, stream);
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_stream = {TSCAN_ALGO_STREAM, tscan::check, tscan::workspace_size,
                                                         tscan::launch, nullptr};
