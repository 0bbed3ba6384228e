// lookback/launch.cuh - the workspace's clear and the scan kernel's overlapped launch after it, with what a
// kernel does while it waits (prefetch_l2, wait_for_clear), and a kernel's fit on a device (fit_on).
// Included by cuda/lookback.cu and by the stream kernels (cuda/stream/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include <algorithm>
#include <atomic>
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
// Zeroes what a call reads before writing (tile_workspace_words, one_wave_words: the claim
// counter first) and lets the scan kernel launch at once, rather than after a memset
// (bench/NOTES.md, "Small problems").
__global__ void clear_workspace(unsigned long long *words, int64_t n_words) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_words; i += (int64_t)gridDim.x * blockDim.x)
        words[i] = 0;
}

// What Kernel gets on device dev with blocks of `threads` threads and `smem` dynamic
// shared-memory bytes (each kernel launches with one such shape): the blocks an SM holds, 0
// where a block's shared memory (the static and `smem`) exceeds what the device gives one; and
// that static size. Read once per kernel and device and cached (the first read also raises
// the kernel's dynamic shared-memory limit to smem), so that a call plans from the cache.
struct kernel_fit {
    int per_sm;
    size_t static_smem;
};
template <auto Kernel> tscan_status fit_on(const tscan_device_info *dev, int threads, size_t smem, kernel_fit *fit) {
    static std::atomic<unsigned long long> cache[TSCAN_MAX_DEVICES];  // bit 63 set: known; static << 32 | per_sm
    constexpr unsigned long long kKnown = 1ull << 63;
    const unsigned long long known = cache[dev->ordinal].load(std::memory_order_relaxed);
    if (known & kKnown) {
        *fit = {(int)(known & 0xffffffffu), (size_t)((known & ~kKnown) >> 32)};
        return TSCAN_SUCCESS;
    }
    cudaFuncAttributes attributes;
    TSCAN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, Kernel));
    *fit = {0, attributes.sharedSizeBytes};
    if (smem + attributes.sharedSizeBytes <= dev->smem_per_block_optin) {
        TSCAN_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        TSCAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit->per_sm, Kernel, threads, smem));
    }
    cache[dev->ordinal].store(kKnown | (unsigned long long)fit->static_smem << 32 | (unsigned)fit->per_sm,
                              std::memory_order_relaxed);
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
