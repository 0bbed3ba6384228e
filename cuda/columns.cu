// columns.cu - TSCAN_ALGO_COLUMNS: one thread per line, walking the axis. Thread b takes line
// b, so when the last batch dimension has unit stride (a strided axis: the columns of a
// matrix), the threads of a warp touch neighbouring addresses at every step of the walk and
// each load is coalesced. The general fallback: any layout, including in place, 0 and
// negative strides and 64-bit offsets.
//
// Neighbouring lines move as 16-byte vectors: a thread takes 16 / sizeof(T) of them and each
// step of its walk is one 16-byte load and store, straight when every vector lies on the grid
// (packed), shifted in registers when the rows' pitch or base moves them off it (realigned:
// columns/kernel.cuh). One- or two-byte elements otherwise move 1-2 bytes per instruction,
// and even 4-byte ones leave too few bytes in flight when the axis is short (an axis of 2:
// two loads a thread).
//
// A permuted input's short lines (its unit stride on another batch dimension than the output's
// lines, which lie a sector or more apart in it) go through shared memory a tile at a time
// instead: columns/staged.cuh.
#include "columns/kernel.cuh"
#include "columns/staged.cuh"

namespace tscan {
namespace {

template <tscan_dtype K, int W> tscan_status launch_kernel(const scan_args &a, int sms, cudaStream_t stream) {
    const unsigned grid = columns_grid(a, sms);
    if constexpr (W == 1 && takes_narrower_input(K)) {
        if (a.widens) {
            if (a.n <= kShortUnroll) columns_kernel<K, 1, kShortUnroll, true><<<grid, kColumnsThreads, 0, stream>>>(a);
            else columns_kernel<K, 1, kLongUnroll, true><<<grid, kColumnsThreads, 0, stream>>>(a);
            TSCAN_LAUNCH_CHECK("columns_kernel");
            return TSCAN_SUCCESS;
        }
    }
    if (a.n <= kShortUnroll)
        columns_kernel<K, W, kShortUnroll, false><<<grid, kColumnsThreads, 0, stream>>>(a);
    else
        columns_kernel<K, W, kLongUnroll, false><<<grid, kColumnsThreads, 0, stream>>>(a);
    TSCAN_LAUNCH_CHECK("columns_kernel");
    return TSCAN_SUCCESS;
}

template <tscan_dtype K, int W>
tscan_status launch_realigned(const scan_args &a, const realign_args &r, int sms, cudaStream_t stream) {
    if constexpr (W == 2) {  // 8-byte elements: realign_lines declines them
        return tscan_fail(TSCAN_ERROR_INTERNAL, "columns: 8-byte elements are not realigned");
    } else {
        columns_realigned_kernel<K, W><<<columns_grid(a, sms), kColumnsThreads, 0, stream>>>(a, r);
        TSCAN_LAUNCH_CHECK("columns_realigned_kernel");
        return TSCAN_SUCCESS;
    }
}

// A narrower input in vectors: one kernel a pair (dispatch_pair), of 17 under kernel dtypes.
template <tscan_dtype In, tscan_dtype Out> struct widen_launch {
    static tscan_status run(const scan_args &a, int sms, cudaStream_t stream) {
        if constexpr (tscan_bytes_of(In) < tscan_bytes_of(Out)) {
            const unsigned grid = columns_grid(a, sms);
            if (a.n <= kShortUnroll) columns_widen_kernel<In, Out, kShortUnroll><<<grid, kColumnsThreads, 0, stream>>>(a);
            else columns_widen_kernel<In, Out, kLongUnroll / 2><<<grid, kColumnsThreads, 0, stream>>>(a);  // outputs of R vectors a row: half the rows, for registers
            TSCAN_LAUNCH_CHECK("columns_widen_kernel");
            return TSCAN_SUCCESS;
        } else {
            return tscan_fail(TSCAN_ERROR_INTERNAL, "columns: %s into %s does not widen", tscan_dtype_name(In),
                              tscan_dtype_name(Out));
        }
    }
};
tscan_status launch_widened(const tscan_problem &p, const scan_args &a, int sms, cudaStream_t stream) {
    return dispatch_pair<widen_launch>(p.dtype, p.out_dtype, a, sms, stream);
}

// The staged form (columns/staged.cuh), a resident wave of blocks looping over the tiles.
template <tscan_dtype K> tscan_status launch_staged(const scan_args &a, const staged_args &s, int sms, cudaStream_t stream) {
    const int64_t wave = (int64_t)kStagedBlocksPerSM * sms;
    const unsigned grid = (unsigned)(s.tiles < wave ? s.tiles : wave);
    if constexpr (takes_narrower_input(K)) {
        if (a.widens) {
            columns_staged_kernel<K, true><<<grid, kStagedThreads, 0, stream>>>(a, s);
            TSCAN_LAUNCH_CHECK("columns_staged_kernel");
            return TSCAN_SUCCESS;
        }
    }
    if constexpr (sizeof(typename dtype_traits<K>::T) < 4) {
        if (s.load_words) {
            columns_staged_kernel<K, false, true><<<grid, kStagedThreads, 0, stream>>>(a, s);
            TSCAN_LAUNCH_CHECK("columns_staged_kernel");
            return TSCAN_SUCCESS;
        }
    }
    columns_staged_kernel<K, false><<<grid, kStagedThreads, 0, stream>>>(a, s);
    TSCAN_LAUNCH_CHECK("columns_staged_kernel");
    return TSCAN_SUCCESS;
}

// Signed integers run the kernels of their unsigned twins (kernel_dtype).
// D is the output's dtype; a narrower input walks its lines in vectors where they lie on the
// grids, else single lines (its elements convert one by one).
template <tscan_dtype D> struct columns_launch {
    static tscan_status run(const problem_call &call, void *, cudaStream_t stream) {
        constexpr tscan_dtype K = kernel_dtype(D);
        constexpr int W = 16 / (int)sizeof(typename dtype_traits<K>::T);
        scan_args a = make_scan_args(&call.p);
        staged_args s;
        if (plan_staged(a, s, (int64_t)call.p.out_elem_size)) return launch_staged<K>(a, s, call.sms, stream);
        if (widen_vectors(a, 16 / (int)call.p.elem_size, call.p.elem_size, call.p.out_elem_size, call.sms))
            return launch_widened(call.p, a, call.sms, stream);
        realign_args r;
        switch (plan_columns(a, r, W, call.p.elem_size)) {
        case columns_form::packed: return launch_kernel<K, W>(a, call.sms, stream);
        case columns_form::realigned: return launch_realigned<K, W>(a, r, call.sms, stream);
        case columns_form::single: break;
        }
        return launch_kernel<K, 1>(a, call.sms, stream);
    }
};

// Every layout, no workspace.
tscan_status plan(const tscan_problem *p, tscan_launch_plan *plan) {
    plan->workspace_bytes = 0;
    return plan_problem_call<columns_launch>(p, plan);
}

// What AUTO may know of columns' way with p: whether tiles of a permuted input's lines go
// through shared memory (the staged form), else whether a thread moves 16 bytes of lines a step.
void outline(const tscan_problem *p, tscan_strategy_outline *o) {
    scan_args a = make_scan_args(p);
    staged_args s;
    o->stages_lines = plan_staged(a, s, (int64_t)p->out_elem_size);
    realign_args r;
    const int w = 16 / (int)p->out_elem_size;
    o->vector_lines = !o->stages_lines && plan_columns(a, r, w, p->out_elem_size) != columns_form::single;
}

}  // namespace
}  // namespace tscan

// Every layout and every allowed pair of dtypes.
extern "C" const tscan_strategy tscan_strategy_columns = {TSCAN_ALGO_COLUMNS, tscan::plan,
                                                          tscan::run_plan<tscan::problem_call>, tscan::outline};
