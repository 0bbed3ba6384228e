// replicate.cu - the copies of broadcast lines that AUTO scans once (src/replication.c plans
// them, src/dispatch.c launches this after the scan of the distinct lines, on the same stream).
// The kernel is a copy whatever the dtype: one a element size.
#include "replicate/kernel.cuh"

namespace tscan {
namespace {

template <int Size> tscan_status launch_replicate(const replicate_args &a, int sms, cudaStream_t stream) {
    const int64_t blocks = (a.vectors + kReplicateThreads - 1) / kReplicateThreads, cap = kReplicateBlocksPerSm * sms;
    replicate_kernel<Size><<<(unsigned)(blocks < cap ? blocks : cap), kReplicateThreads, 0, stream>>>(a);
    TSCAN_LAUNCH_CHECK("replicate_kernel");
    return TSCAN_SUCCESS;
}

}  // namespace
}  // namespace tscan

extern "C" tscan_status tscan_replicate(const tscan_replication *r, cudaStream_t stream) {
    using namespace tscan;
    int sms = 0;
    const tscan_status s = current_sms(&sms);
    if (s != TSCAN_SUCCESS) return s;
    if (sms == 0) return tscan_fail(TSCAN_ERROR_CUDA, "replicate: no current device to copy broadcast lines on");
    const replicate_args a = replicate_args_of(*r);
    switch (r->elem_size) {
    case 1: return launch_replicate<1>(a, sms, stream);
    case 2: return launch_replicate<2>(a, sms, stream);
    case 4: return launch_replicate<4>(a, sms, stream);
    case 8: return launch_replicate<8>(a, sms, stream);
    default: return tscan_fail(TSCAN_ERROR_INTERNAL, "replicate: elements of %zu bytes", r->elem_size);
    }
}
