// kernel_image.cu - whether this build holds code the current device can run: the library's
// kernels are all built for the same architectures, so one kernel's attributes answer for
// every one (src/device.c turns "no" into a message naming the built and present ones).
#include <cuda_runtime.h>

#include "tscan_internal.h"

namespace {
__global__ void probe_kernel() {}
}  // namespace

extern "C" cudaError_t tscan_probe_kernel_image(void) {
    cudaFuncAttributes attributes;
    return cudaFuncGetAttributes(&attributes, probe_kernel);
}
