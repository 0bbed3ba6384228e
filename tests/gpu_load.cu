// gpu_load.cu - work for the GPU suites to put beside a scan: a kernel that holds shared
// memory on every multiprocessor until the host releases it, and a launch that fails, so that
// a suite can leave a CUDA error pending before it calls the library.
#include <cuda_runtime.h>

#include "gpuload.h"

namespace {

// One block an SM holds its shared memory until *release is set (host-mapped memory, written
// by the host), or for at most limit_ns, so that a test that dies never leaves it running.
// *started counts the blocks running.
__global__ void hold_shared_memory(const volatile int *release, int *started, unsigned long long limit_ns) {
    extern __shared__ int reserved[];
    if (threadIdx.x != 0) return;
    reserved[0] = 1;
    atomicAdd(started, 1);
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(20000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (!*release && t - t0 < limit_ns);
}

}  // namespace

extern "C" cudaError_t gl_hold_start(gl_hold *h, cudaStream_t stream, double limit_s) {
    int device = 0;
    cudaDeviceProp prop;
    cudaError_t e;
    if ((e = cudaGetDevice(&device)) || (e = cudaGetDeviceProperties(&prop, device))) return e;
    // Over half an SM's shared memory: one block an SM at most, the rest left to others.
    size_t smem = prop.sharedMemPerMultiprocessor / 2 + 1024;
    if (smem > prop.sharedMemPerBlockOptin) smem = prop.sharedMemPerBlockOptin;
    h->blocks = prop.multiProcessorCount;
    h->smem_bytes = smem;
    if ((e = cudaHostAlloc((void **)&h->flags, 2 * sizeof(int), cudaHostAllocMapped))) return e;
    h->flags[0] = 0;  // release
    h->flags[1] = 0;  // blocks started
    int *dev_flags = nullptr;
    if ((e = cudaHostGetDevicePointer((void **)&dev_flags, h->flags, 0))) return e;
    if ((e = cudaFuncSetAttribute(hold_shared_memory, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem))) return e;
    // The whole of each SM's carveout for shared memory: a carveout sized for this kernel alone
    // would leave a scan's blocks no room on any SM until it ends.
    if ((e = cudaFuncSetAttribute(hold_shared_memory, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared)))
        return e;
    if ((e = cudaEventCreateWithFlags(&h->done, cudaEventDisableTiming))) return e;
    hold_shared_memory<<<h->blocks, 32, smem, stream>>>(dev_flags, dev_flags + 1, (unsigned long long)(limit_s * 1e9));
    if ((e = cudaGetLastError())) return e;
    return cudaEventRecord(h->done, stream);
}

extern "C" int gl_hold_started(const gl_hold *h) { return ((volatile int *)h->flags)[1]; }

extern "C" int gl_hold_running(const gl_hold *h) { return cudaEventQuery(h->done) == cudaErrorNotReady; }

extern "C" cudaError_t gl_hold_release(gl_hold *h) {
    ((volatile int *)h->flags)[0] = 1;
    cudaError_t e = cudaEventSynchronize(h->done);
    cudaEventDestroy(h->done);
    cudaFreeHost(h->flags);
    return e;
}

extern "C" cudaError_t gl_leave_launch_error(void) {
    hold_shared_memory<<<1, 4096>>>(nullptr, nullptr, 0);  // 4096 threads a block: refused
    return cudaPeekAtLastError();
}
