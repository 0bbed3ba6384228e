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
// blocks that are running or done; blockIdx.x carries no order. Lines of up to 8 KB of input
// (stream_halo_max_n) wait on nothing: a tile's block reads the part of its first line that
// lies before it (its halo) and needs no claim, no status and no workspace.
//
// Decreasing scans walk the same memory tiles from the far end: logical tile c is memory
// tile tiles - 1 - c, logical vector L of a tile its memory vector count - 1 - L, and the
// elements of each vector are reversed in registers. Everything between the loads and the
// stores sees one increasing stream. The input and output types are separate (the running
// value lives in the output's accumulator, CONTRACT §1.2): a narrower input is converted as
// it is read, so an output of another width costs no other path.
//
// A second form takes a strided axis of small inner extent I (cuda/stream/lanes.cuh): the same
// stream of tiles in whole rows of I elements, each lane carrying its own running value.
#include "stream/kernel.cuh"
#include "stream/lanes.cuh"
#include "lookback/launch.cuh"

#include <climits>

namespace tscan {
namespace {

// Which form takes p, with its arguments: segments (lines end to end) or lanes (a small inner
// extent); neither where `takes` is false. A grid holds at most INT_MAX tiles.
struct stream_plan {
    bool takes;
    bool lanes;
    stream_args segment_form;
    lanes_args lanes_form;
    int64_t tiles() const { return lanes ? lanes_form.tiles : segment_form.tiles; }
    // The workspace: the claim counter in a sector of its own, then each tile's status words;
    // none where the segment form's tiles read their halos.
    int64_t words() const {
        if (!lanes && segment_form.halo) return 0;
        return kSectorWords + (lanes ? lanes_form.tiles * lanes_form.status_words : segment_form.tiles * kSectorWords);
    }
};

stream_plan plan_of(const tscan_problem *p) {
    stream_plan plan = {};
    if (stream_layout(p, &plan.segment_form)) plan.takes = true;
    else if (lanes_layout(p, &plan.lanes_form)) plan.takes = plan.lanes = true;
    plan.takes = plan.takes && plan.tiles() <= INT_MAX;
    return plan;
}

// A planned call: the form and its arguments, the SM count (the clear's grid), and the kernel
// of the pair and operator, chosen when planning (the lanes form's from its layout too).
struct stream_call {
    tscan_status (*run)(const stream_call &, void *workspace, cudaStream_t stream);
    stream_plan plan;
    int sms;
    lanes_kernel_t lanes_kernel;
};

// Takes a lanes kernel for the call where its largest tile's shared memory fits the current
// device (the kernel's limit is raised to that once); a query with no device plans without it.
struct lanes_kernel_fit {
    template <lanes_kernel_t K> static tscan_status with(stream_call *call) {
        call->lanes_kernel = K;
        if (!tscan_device_present()) return TSCAN_SUCCESS;
        const tscan_device_info *dev;
        tscan_status s = tscan_current_device_info(&dev);
        if (s != TSCAN_SUCCESS) return s;
        kernel_fit fit;
        s = fit_on<K>(dev, kStreamThreads, kLanesMaxSmemBytes, &fit);
        if (s != TSCAN_SUCCESS) return s;
        if (fit.per_sm == 0)
            return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                              "stream's lanes tile takes %zu bytes of shared memory a block, more than device %d gives",
                              kLanesMaxSmemBytes + fit.static_smem, dev->ordinal);
        return TSCAN_SUCCESS;
    }
};

template <tscan_dtype In, tscan_dtype Out> struct stream_launch {
    template <bool Prod> static tscan_status launch(const stream_call &call, void *workspace, cudaStream_t stream) {
        const stream_plan &plan = call.plan;
        const unsigned grid = (unsigned)plan.tiles();
        if (!plan.lanes && plan.segment_form.halo) {  // one launch: no workspace to clear
            stream_kernel<In, Out, Prod><<<grid, kStreamThreads, 0, stream>>>(plan.segment_form, nullptr);
            TSCAN_LAUNCH_CHECK("stream_kernel");
            return TSCAN_SUCCESS;
        }
        if (!workspace || (uintptr_t)workspace % 8 != 0)
            return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is null or not 8-byte aligned (stream needs 8)",
                              workspace);
        unsigned long long *const words = static_cast<unsigned long long *>(workspace);
        if (plan.lanes)
            return launch_after_clear(call.lanes_kernel, grid, kStreamThreads, plan.lanes_form.smem_bytes, stream, words,
                                      plan.words(), call.sms, plan.lanes_form, words);
        return launch_after_clear(stream_kernel<In, Out, Prod>, grid, kStreamThreads, 0, stream, words, plan.words(),
                                  call.sms, plan.segment_form, words);
    }
    static tscan_status run(stream_call *call, bool prod) {
        call->run = prod ? &launch<true> : &launch<false>;
        if (!call->plan.lanes) return TSCAN_SUCCESS;
        return prod ? with_lanes_kernel<In, Out, true, lanes_kernel_fit>(call->plan.lanes_form, call)
                    : with_lanes_kernel<In, Out, false, lanes_kernel_fit>(call->plan.lanes_form, call);
    }
};

tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    const stream_plan form = plan_of(p);
    if (!form.takes)
        return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                          "stream takes a contiguous axis whose output lines lie end to end, or an output that is "
                          "a packed block with an inner extent of 2 to %d along the axis, from an input laid out "
                          "alike or running along its lines (input step %lld, output step %lld)",
                          kMaxLanes, (long long)p->in_step, (long long)p->out_step);
    stream_call *const call = plan_state<stream_call>(plan);
    *call = stream_call{nullptr, form, 0, nullptr};
    plan->workspace_bytes = (size_t)form.words() * sizeof(unsigned long long);
    const tscan_status s = current_sms(&call->sms);
    if (s != TSCAN_SUCCESS) return s;
    return dispatch_pair<stream_launch>(p->dtype, p->out_dtype, call, p->op == TSCAN_OP_PROD);
}

// What AUTO may know of the stream's way with p: whether either form takes its layout, whether
// the lanes form scans its small elements as words, whether it reads its input lane-major, and
// whether the segment form reads a packed input as one flat run, its tiles their halos too.
void outline(const tscan_problem *p, tscan_strategy_outline *o) {
    const stream_plan plan = plan_of(p);
    o->takes_layout = plan.takes;
    o->packs_small_elements = plan.takes && plan.lanes && plan.lanes_form.packed_size != 0;
    o->reads_along_lines = plan.takes && plan.lanes && plan.lanes_form.lane_major;
    o->reads_flat = plan.takes && !plan.lanes && !plan.segment_form.gather;
    o->reads_halos = o->reads_flat && plan.segment_form.halo;
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_stream = {TSCAN_ALGO_STREAM, tscan::plan,
                                                         tscan::run_plan<tscan::stream_call>, tscan::outline};
