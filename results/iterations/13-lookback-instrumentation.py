# Instrumentation of lookback_kernel used in bench/NOTES.md ("look-back statuses in 64-bit words").
# Applies to cuda/lookback.cu at 68b3ca8, from the project root: python3 results/iterations/13-lookback-instrumentation.py [NOLB]
# (NOLB: no look-back walk). Adds clock64 timings of each phase, summed with atomics (which perturb the run)
# and printed as per-launch averages by the last block to finish. Not for committing into cuda/.
import sys
p='cuda/lookback.cu'; s=open(p).read()
def rep(a,b,cnt=1):
    global s
    assert s.count(a)>=1, a
    s=s.replace(a,b,cnt)
rep("template <class V> __device__ __forceinline__ V load_relaxed(V &x) {",
"""__device__ unsigned long long g_xp[12];
__device__ unsigned int g_xp_done;
template <class V> __device__ __forceinline__ V load_relaxed(V &x) {""")
rep("""    A prefix[LV];
#pragma unroll
    for (int j = 0; j < LV; ++j) prefix[j] = chunk == 0 ? start : op.neutral();
""","""    A prefix[LV];
#pragma unroll
    for (int j = 0; j < LV; ++j) prefix[j] = chunk == 0 ? start : op.neutral();
    const long long xp_t0 = clock64();
    unsigned xp_polls = 0, xp_steps = 0, xp_count = 0;
""")
if 'NOLB' in sys.argv: rep("for (int64_t base = 0; chunk > 0;) {","for (int64_t base = 0; chunk > 0 && false;) {")
rep("        if (waiting) continue;","        if (waiting) { ++xp_polls; continue; }")
rep("""        const int count = (int)min((int64_t)min(first + 1, kWindowTiles), real);""","""        const int count = (int)min((int64_t)min(first + 1, kWindowTiles), real);
        ++xp_steps; xp_count += count;""")
rep("""    if (chunk > 0) {  // chunk 0 published""","""    long long xp_t1 = clock64();
    if (chunk > 0) {  // chunk 0 published""")
rep("""    if (lane < Cols) {
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix_out[lane * LV + j] = prefix[j];
    }
}""","""    if (lane < Cols) {
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix_out[lane * LV + j] = prefix[j];
    }
    if (lane == 0 && chunk > 0) {
        atomicAdd(&g_xp[0], (unsigned long long)(xp_t1 - xp_t0));
        atomicAdd(&g_xp[1], (unsigned long long)xp_polls);
        atomicAdd(&g_xp[2], (unsigned long long)xp_steps);
        atomicAdd(&g_xp[3], (unsigned long long)xp_count);
        atomicAdd(&g_xp[4], 1ull);
        atomicAdd(&g_xp[10], (unsigned long long)(clock64() - xp_t1));
    }
}""")
# time every publish_aggregate (wherever called), by lane 0
rep("""    if (tile < L.groups) /* chunk 0 */ {""","""    const long long xp_p0 = clock64();
    if (tile < L.groups) /* chunk 0 */ {""")
rep("""        publish_status<Cols>(L, st, tile, st.aggregate, aggregate, kAggregate);
    }
}""","""        publish_status<Cols>(L, st, tile, st.aggregate, aggregate, kAggregate);
    }
    if (threadIdx.x % 32 == 0) { atomicAdd(&g_xp[9], (unsigned long long)(clock64() - xp_p0)); atomicAdd(&g_xp[11], 1ull); }
}""")
rep("""        if (!lookback_warp) staged(tile, buf, rows_of_tile(tile), within);
        __syncthreads();  // the tile's aggregate is in s_tile_aggregate
        for (;;) {""","""        const auto xp_exit = [&] {
            __syncthreads();
            if (t == 0) {
                __threadfence();
                if (atomicAdd(&g_xp_done, 1u) == gridDim.x - 1) {
                    __threadfence();
                    const double n = (double)g_xp[4], m = (double)g_xp[8];
                    printf("XP lb=%.0f lbpub=%.0f polls=%.2f steps=%.2f cnt=%.1f | stage=%.0f wait=%.0f finish=%.0f aggpub=%.0f tiles=%.0f\\n",
                           g_xp[0] / n, g_xp[10] / n, g_xp[1] / n, g_xp[2] / n, g_xp[3] / n, g_xp[5] / m, g_xp[6] / m, g_xp[7] / m,
                           g_xp[9] / (double)g_xp[11], m);
                    for (int i = 0; i < 12; ++i) g_xp[i] = 0;
                    g_xp_done = 0;
                }
            }
        };
        if (!lookback_warp) staged(tile, buf, rows_of_tile(tile), within);
        __syncthreads();  // the tile's aggregate is in s_tile_aggregate
        for (;;) {
            long long xp_a = clock64(), xp_b = 0, xp_c = 0;""")
rep("""            }
            __syncthreads();  // the prefix of this tile, and the next tile's id and aggregate
            const int64_t next = s_tile[next_buf];""","""            }
            xp_b = clock64();
            __syncthreads();  // the prefix of this tile, and the next tile's id and aggregate
            xp_c = clock64();
            const int64_t next = s_tile[next_buf];""")
rep("""            if (!lookback_warp) finished(tile, buf, within, rows_of_tile(tile));
            if (next >= L.tiles) break;""","""            if (!lookback_warp) finished(tile, buf, within, rows_of_tile(tile));
            if (t == 0) {
                atomicAdd(&g_xp[5], (unsigned long long)(xp_b - xp_a));
                atomicAdd(&g_xp[6], (unsigned long long)(xp_c - xp_b));
                atomicAdd(&g_xp[7], (unsigned long long)(clock64() - xp_c));
                atomicAdd(&g_xp[8], 1ull);
            }
            if (next >= L.tiles) break;""")
rep("""            for (int j = 0; j < LV; ++j) within[j] = next_within[j];
        }
    }
}""","""            for (int j = 0; j < LV; ++j) within[j] = next_within[j];
        }
        xp_exit();
    }
}""")
rep("""        int64_t tile = s_tile[0];
        if (tile >= L.tiles) return;
        int buf = 0;""","""        int64_t tile = s_tile[0];
        if (tile >= L.tiles) { if (t == 0) { __threadfence(); if (atomicAdd(&g_xp_done, 1u) == gridDim.x - 1) { for (int i = 0; i < 12; ++i) g_xp[i] = 0; g_xp_done = 0; } } return; }
        int buf = 0;""")
open(p,'w').write(s)
