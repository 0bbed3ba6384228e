// simt.h - just enough of CUDA's execution model on CPU threads to run a kernel's own source
// on a machine without a GPU: a block is blockDim.x std::threads, __syncthreads a barrier of
// all of them, warp shuffles and ballots an exchange through a per-warp buffer between two
// barriers of its 32 threads, mbarriers and named barriers counters under the block's lock
// (a bulk copy a memcpy, complete at once). Blocks run one after another, so __shared__
// variables are function statics. What it cannot show: timing, memory ordering between blocks that run at
// once, and anything of the hardware's scheduling (the GPU suites cover those).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tscan_emu {

struct warp_state {
    std::barrier<> bar{32};
    unsigned char slot[32][16];
};

// An mbarrier: arrivals still expected this phase, bytes still to come (expect_tx adds them,
// a bulk copy's completion takes them away), and the phases completed.
struct mbarrier_state {
    unsigned expected = 0, pending = 0;
    int64_t tx = 0;
    unsigned phase = 0;
};
// A named barrier: arrivals so far, and the times it has completed.
struct named_state {
    unsigned arrived = 0, generation = 0;
};

struct block_state {
    explicit block_state(unsigned threads) : bar(threads), warps(threads / 32) {
        for (auto &w : warps) w = std::make_unique<warp_state>();
    }
    std::barrier<> bar;
    std::atomic<int> any{0};  // __syncthreads_or's count
    std::vector<std::unique_ptr<warp_state>> warps;
    std::mutex sync;  // guards the mbarriers and named barriers
    std::map<const void *, mbarrier_state> mbarriers;
    named_state named[16];
};

struct thread_ctx {
    uint3 thread_idx, block_idx, block_dim, grid_dim;
    block_state *block;
};
inline thread_local thread_ctx ctx;

inline unsigned lane() { return ctx.thread_idx.x % 32; }
inline warp_state &warp() { return *ctx.block->warps[ctx.thread_idx.x / 32]; }

// Every lane posts its value, then reads lane src's (its own where src is out of range).
template <class T> T exchange(T v, int src) {
    static_assert(sizeof(T) <= 16, "shuffled values of 16 bytes at most");
    warp_state &w = warp();
    std::memcpy(w.slot[lane()], &v, sizeof(T));
    w.bar.arrive_and_wait();
    T r = v;
    if (src >= 0 && src < 32) std::memcpy(&r, w.slot[src], sizeof(T));
    w.bar.arrive_and_wait();
    return r;
}

// mbarriers and named barriers (cuda/lookback/async_copy.cuh's host side). A waiting thread
// yields rather than blocks: the block's other threads must run for it to be released.
inline void mbarrier_init(const void *bar, unsigned count) {
    std::lock_guard<std::mutex> lock(ctx.block->sync);
    ctx.block->mbarriers[bar] = {count, count, 0, 0};
}
inline void mbarrier_settle(mbarrier_state &m) {
    if (m.pending == 0 && m.tx == 0) ++m.phase, m.pending = m.expected;
}
inline void mbarrier_arrive(const void *bar, uint32_t expect_bytes) {
    std::lock_guard<std::mutex> lock(ctx.block->sync);
    mbarrier_state &m = ctx.block->mbarriers.at(bar);
    m.tx += expect_bytes;
    --m.pending;
    mbarrier_settle(m);
}
inline void mbarrier_complete_tx(const void *bar, uint32_t bytes) {
    std::lock_guard<std::mutex> lock(ctx.block->sync);
    mbarrier_state &m = ctx.block->mbarriers.at(bar);
    m.tx -= bytes;
    mbarrier_settle(m);
}
inline bool mbarrier_done(const void *bar, unsigned parity) {
    bool done;
    {
        std::lock_guard<std::mutex> lock(ctx.block->sync);
        done = (ctx.block->mbarriers.at(bar).phase & 1) != parity;
    }
    if (!done) std::this_thread::yield();
    return done;
}
inline void named_barrier(int id, unsigned count, bool wait) {
    std::unique_lock<std::mutex> lock(ctx.block->sync);
    named_state &n = ctx.block->named[id];
    const unsigned generation = n.generation;
    if (++n.arrived == count) {
        n.arrived = 0, ++n.generation;
        return;
    }
    if (!wait) return;
    while (n.generation == generation) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
    }
}

// Runs kernel(args...) on a grid of `grid` blocks of `threads` threads, block after block.
template <class Kernel, class... Args> void launch(unsigned grid, unsigned threads, Kernel kernel, const Args &...args) {
    for (unsigned b = 0; b < grid; ++b) {
        block_state block(threads);
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                ctx = {{t, 0, 0}, {b, 0, 0}, {threads, 1, 1}, {grid, 1, 1}, &block};
                kernel(args...);
            });
        for (auto &th : pool) th.join();
    }
}

}  // namespace tscan_emu

#undef __shared__
#define __shared__ static
#undef __launch_bounds__
#define __launch_bounds__(...)
#ifndef __noinline__  // cuda_runtime.h defines it for nvcc only
#define __noinline__ __attribute__((noinline))
#endif
#define threadIdx (::tscan_emu::ctx.thread_idx)
#define blockIdx (::tscan_emu::ctx.block_idx)
#define blockDim (::tscan_emu::ctx.block_dim)
#define gridDim (::tscan_emu::ctx.grid_dim)

inline void __syncthreads() { ::tscan_emu::ctx.block->bar.arrive_and_wait(); }
inline int __syncthreads_or(int predicate) {
    ::tscan_emu::block_state &b = *::tscan_emu::ctx.block;
    if (predicate) b.any.fetch_add(1);
    b.bar.arrive_and_wait();
    const int result = b.any.load() != 0;
    b.bar.arrive_and_wait();
    if (::tscan_emu::ctx.thread_idx.x == 0) b.any.store(0);
    b.bar.arrive_and_wait();
    return result;
}
inline void __syncwarp(unsigned = 0xffffffffu) { ::tscan_emu::warp().bar.arrive_and_wait(); }
template <class T> T __shfl_sync(unsigned, T v, int src, int = 32) { return ::tscan_emu::exchange(v, src & 31); }
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int = 32) {
    return ::tscan_emu::exchange(v, (int)::tscan_emu::lane() - (int)d);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask, int = 32) {
    return ::tscan_emu::exchange(v, (int)(::tscan_emu::lane() ^ (unsigned)mask));
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) {
    return ::tscan_emu::exchange(v, (int)::tscan_emu::lane() + (int)d);
}
inline unsigned __ballot_sync(unsigned, int predicate) {
    ::tscan_emu::warp_state &w = ::tscan_emu::warp();
    w.slot[::tscan_emu::lane()][0] = predicate != 0;
    w.bar.arrive_and_wait();
    unsigned bits = 0;
    for (int l = 0; l < 32; ++l) bits |= (unsigned)w.slot[l][0] << l;
    w.bar.arrive_and_wait();
    return bits;
}
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == 0xffffffffu; }
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
template <class T> T min(T a, T b) { return b < a ? b : a; }
template <class T> T max(T a, T b) { return a < b ? b : a; }
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const uint64_t bytes = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {  // unsigned bytes
    for (int i = 0; i < 4; ++i) c += (a >> (8 * i) & 0xff) * (b >> (8 * i) & 0xff);
    return c;
}
inline unsigned __vadd4(unsigned a, unsigned b) {  // bytes, each wrapping
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (((a >> (8 * i)) + (b >> (8 * i))) & 0xffu) << (8 * i);
    return r;
}
inline unsigned __vadd2(unsigned a, unsigned b) {  // 16-bit halves, each wrapping
    return (((a & 0xffffu) + (b & 0xffffu)) & 0xffffu) | ((a >> 16) + (b >> 16)) << 16;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)((unsigned long long)a * b >> 32); }
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return std::atomic_ref<unsigned long long>(*p).fetch_add(v);
}
