// lookback/launch.cuh - the workspace's clear and the scan kernel's overlapped launch after it, with what a
// kernel does while it waits (prefetch_l2, wait_for_clear).
// Included by cuda/lookback.cu and by the stream kernels (cuda/stream/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include <algorithm>
#include "common.cuh"

namespace tscan {
namespace {

// A hint: fetch the line at p into L2 (no register written, nothing waited for).
// (Device code only: tests/emulated compiles these kernels for the host, where it is a no-op.)
__device__ __forceinline__ void prefetch_l2(const void *p) {
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

// The scan kernel is launched as a programmatic dependent of clear_workspace: its blocks start
// while the clear runs and wait here, at their start, for the clear to be done and visible.
// (Waiting only before the first touch of the workspace, so that a block's first loads overlap
// the clear too, measured the same: bench/NOTES.md §3.10.) Without that
// launch attribute, or before sm_90, there is nothing to wait for. The clear triggers its
// dependent under the same guard as this wait: code built for an older architecture has
// neither, and the scan kernel then starts only once the clear has completed.
__device__ __forceinline__ void wait_for_clear() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#ifdef __CUDACC__  // the clear and the launches: nvcc's alone (tests/emulated's host compiler has no <<< >>>)
// Zeroes what a call reads before writing (workspace_plan::cleared, in words: the claim
// counter first) and lets the scan kernel launch at once, rather than after a memset
// (bench/NOTES.md, "Small problems").
__global__ void clear_workspace(unsigned long long *words, int64_t n_words) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_words; i += (int64_t)gridDim.x * blockDim.x)
        words[i] = 0;
}

// Blocks of kernel (threads and smem bytes each) that the device holds at once, and its SMs.
template <class Kernel> tscan_status resident_blocks(Kernel kernel, int threads, size_t smem, int64_t *resident, int *sms) {
    int per_sm = 0;
    TSCAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    const tscan_status s = sm_count(sms);
    if (s != TSCAN_SUCCESS) return s;
    *resident = (int64_t)per_sm * *sms;
    return TSCAN_SUCCESS;
}

// Clears the workspace's first n_words (see clear_workspace) and launches kernel as its programmatic dependent, so that the kernel's launch overlaps the
// clear and its threads wait in wait_for_clear.
template <class... Params, class... Args>
tscan_status launch_after_clear(void (*kernel)(Params...), unsigned grid, int threads, size_t smem, cudaStream_t stream,
                                unsigned long long *words, int64_t n_words, int sms, const Args &...args) {
    const unsigned clear_grid = (unsigned)std::min<int64_t>((n_words + 255) / 256, (int64_t)sms * 4);
    clear_workspace<<<clear_grid, 256, 0, stream>>>(words, n_words);
    TSCAN_LAUNCH_CHECK("clear_workspace");
    cudaLaunchAttribute overlap;
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = (unsigned)threads;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &overlap;
    config.numAttrs = 1;
    TSCAN_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
    return TSCAN_SUCCESS;
}

#endif  // __CUDACC__

}  // namespace
}  // namespace tscan
