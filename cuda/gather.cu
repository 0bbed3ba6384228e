// gather.cu - the gather of a permuted input into the output's order, which AUTO then scans in
// place (src/gather.c plans it, src/dispatch.c launches this before the scan, on the same
// stream). The kernel is a copy whatever the dtype: one an element size.
#include "gather/kernel.cuh"

namespace tscan {
namespace {

template <int Size> tscan_status launch_gather(const gather_args &a, int sms, cudaStream_t stream) {
    const int64_t wave = (int64_t)kGatherBlocksPerSm * sms;
    gather_kernel<Size><<<(unsigned)(a.tiles < wave ? a.tiles : wave), kGatherThreads, 0, stream>>>(a);
    TSCAN_LAUNCH_CHECK("gather_kernel");
    return TSCAN_SUCCESS;
}

}  // namespace
}  // namespace tscan

extern "C" tscan_status tscan_gather_input(const tscan_gather *g, cudaStream_t stream) {
    using namespace tscan;
    int sms = 0;
    const tscan_status s = current_sms(&sms);
    if (s != TSCAN_SUCCESS) return s;
    if (sms == 0) return tscan_fail(TSCAN_ERROR_CUDA, "gather: no current device to gather the input on");
    const gather_args a = gather_args_of(*g);
    switch (g->elem_size) {
    case 1: return launch_gather<1>(a, sms, stream);
    case 2: return launch_gather<2>(a, sms, stream);
    case 4: return launch_gather<4>(a, sms, stream);
    case 8: return launch_gather<8>(a, sms, stream);
    default: return tscan_fail(TSCAN_ERROR_INTERNAL, "gather: elements of %zu bytes", g->elem_size);
    }
}
