// racecheck probe: a block of 8 data warps synchronising among themselves with a named
// barrier (bar.sync 1, 256) and one extra warp; hand-off between them only across
// __syncthreads. Race-free by construction; does racecheck say so?
#include <cstdio>
#include <cuda/barrier>
__device__ __forceinline__ void data_barrier() { asm volatile("bar.sync 1, 256;" ::: "memory"); }
template <int Named>
__global__ void probe(float *out) {
    __shared__ float s[2][32];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    const int t = threadIdx.x, w = t / 32, lane = t % 32;
    if (t == 0) init(&bar, 256);
    __syncthreads();
    int buf = 0;
    if (w < 8) {
        if (Named == 1) data_barrier(); if (Named == 2) bar.arrive_and_wait();
        if (w == 0) s[0][lane] = lane;
    }
    __syncthreads();
    for (int i = 0; i < 4; ++i) {
        if (w == 8) out[blockIdx.x * 32 + lane] += s[buf][lane];
        else {
            if (Named == 1) data_barrier(); if (Named == 2) bar.arrive_and_wait();
            if (w == 0) s[buf ^ 1][lane] = i;
        }
        __syncthreads();
        buf ^= 1;
    }
}
int main() {
    float *out;
    cudaMalloc(&out, 4 * 32 * sizeof(float));
    cudaMemset(out, 0, 4 * 32 * sizeof(float));
    probe<0><<<4, 288>>>(out);
    probe<1><<<4, 288>>>(out);
    probe<2><<<4, 288>>>(out);
    printf("probe: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
