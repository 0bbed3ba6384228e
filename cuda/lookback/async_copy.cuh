// lookback/async_copy.cuh - the sm_90 pieces that the bulk line-chunk kernel (bulk_kernel.cuh) is built from:
// shared-memory mbarriers, bulk copies from global into shared memory that complete on one, and
// named barriers with an immediate id.
// Device code runs PTX; tests/emulated compiles the same calls for the host, where simt.h's
// tscan_emu functions stand in (a bulk copy is a memcpy that completes its bytes at once). nvcc's
// host pass sees empty bodies: they never run there.
// Included by cuda/lookback.cu alone, hence the anonymous namespace.
#pragma once

#include <cstdint>
#include "common.cuh"

namespace tscan {
namespace {

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t shared_address(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
#endif

// An mbarrier expecting `count` arrivals a phase; made visible to the bulk copies (the async
// proxy) by the block barrier that must follow.
__device__ __forceinline__ void mbarrier_init(uint64_t *bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#elif !defined(__CUDACC__)
    ::tscan_emu::mbarrier_init(bar, count);
#else
    (void)bar, (void)count;
#endif
}

// One arrival (release: the thread's earlier accesses happen before the phase completes).
__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
#elif !defined(__CUDACC__)
    ::tscan_emu::mbarrier_arrive(bar, 0);
#else
    (void)bar;
#endif
}

// True once the phase of parity `parity` has completed (acquire).
__device__ __forceinline__ bool mbarrier_done(uint64_t *bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done;
    asm volatile(
        "{ .reg .pred p;\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
    return done != 0;
#elif !defined(__CUDACC__)
    return ::tscan_emu::mbarrier_done(bar, parity);
#else
    (void)bar, (void)parity;
    return true;
#endif
}
__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, unsigned parity) {
    while (!mbarrier_done(bar, parity)) {
    }
}

// Orders this thread's shared-memory writes before later bulk copies into the same bytes (the
// async proxy), for a thread that writes where a later copy lands.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// This thread's arrival, announcing `bytes` that a bulk copy will complete, then the copy of
// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global src to shared dst.
// No proxy fence here: the bytes' earlier readers are ordered before it by the barriers that
// freed the buffer, and their writers fence themselves (fence_proxy_async_shared).
__device__ __forceinline__ void bulk_copy_to_shared(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(bar))
                 : "memory");
#elif !defined(__CUDACC__)
    ::tscan_emu::mbarrier_arrive(bar, bytes);
    std::memcpy(dst, src, bytes);
    ::tscan_emu::mbarrier_complete_tx(bar, bytes);
#else
    (void)dst, (void)src, (void)bytes, (void)bar;
#endif
}

// Named barrier Id of Count threads: bar.sync (arrive and wait) when Wait, else bar.arrive,
// and only where `take` holds (uniform across the warp). The id is an immediate: with an id
// in a register ptxas reserves all 16 barriers, and the kernel's warps spilled
// (bench/NOTES.md §2, "Bulk copies into a ring of buffers").
template <int Id, int Count, bool Wait> __device__ __forceinline__ void named_barrier_if(bool take) {
    static_assert(Id > 0 && Id < 16 && Count % 32 == 0, "a named barrier other than __syncthreads' 0, whole warps");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (Wait)
        asm volatile("{ .reg .pred p;\n  setp.ne.u32 p, %0, 0;\n  @p bar.sync %1, %2; }" ::"r"((uint32_t)take),
                     "n"(Id), "n"(Count)
                     : "memory");
    else
        asm volatile("{ .reg .pred p;\n  setp.ne.u32 p, %0, 0;\n  @p bar.arrive %1, %2; }" ::"r"((uint32_t)take),
                     "n"(Id), "n"(Count)
                     : "memory");
#elif !defined(__CUDACC__)
    if (take) ::tscan_emu::named_barrier(Id, Count, Wait);
#else
    (void)take;
#endif
}

// Named barrier First + s of Count threads for a run-time s < N: each id's instruction under
// its own predicate, so that no branch (a jump table on the data warps' path cost float64 3-7
// points) and no register id is needed.
template <int First, int N, int Count, bool Wait> __device__ __forceinline__ void named_barrier_of(int s) {
    if constexpr (N > 0) {
        named_barrier_if<First, Count, Wait>(s == 0);
        named_barrier_of<First + 1, N - 1, Count, Wait>(s - 1);
    }
}

}  // namespace
}  // namespace tscan
