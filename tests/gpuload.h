/*
 * gpuload.h - other work for the GPU suites to run beside a scan (tests/gpu_load.cu).
 */
#ifndef TSCAN_GPULOAD_H
#define TSCAN_GPULOAD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel that holds over half of every multiprocessor's shared memory (one block an SM)
 * until released, so that a scan launched meanwhile gets fewer resident blocks than the
 * occupancy of an idle GPU promised it. */
typedef struct gl_hold {
    int blocks;
    size_t smem_bytes;
    int *flags;       /* host-mapped: [0] release, [1] blocks started */
    cudaEvent_t done; /* recorded after the kernel */
} gl_hold;

/* Launches it on `stream`; it ends by itself after limit_s seconds at the latest. */
cudaError_t gl_hold_start(gl_hold *h, cudaStream_t stream, double limit_s);
/* Its blocks running so far. */
int gl_hold_started(const gl_hold *h);
/* 1 while it has not finished. */
int gl_hold_running(const gl_hold *h);
/* Releases it, waits for it to end and frees what it held. */
cudaError_t gl_hold_release(gl_hold *h);

/* Leaves a (non-sticky) launch error pending on this thread, as a caller's failed launch
 * would; returns it. */
cudaError_t gl_leave_launch_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TSCAN_GPULOAD_H */
