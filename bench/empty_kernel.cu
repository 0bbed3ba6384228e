// empty_kernel.cu - the bare launch that `tscan-bench calls` sets a call against: an empty kernel,
// one block of 32 threads, launched as tscan's kernels are (runtime API, one stream).
#include <cuda_runtime.h>

__global__ void bench_empty_kernel() {}

extern "C" cudaError_t bench_launch_empty(cudaStream_t stream) {
    bench_empty_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}
