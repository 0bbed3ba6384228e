/* backend_gpu.c - cases on the GPU: tscan_scan on device memory, timed with CUDA events after
 * an L2 flush, beside cudaMemcpyAsync of the same bytes. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

typedef struct gpu_state {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    void *flush;
    unsigned flush_value; /* changes every sample, so no flush is a no-op rewrite */
    void *in, *out;
    size_t in_capacity, out_capacity, out_bytes;
    void *workspace;
    size_t workspace_bytes;
} gpu_state;

/* Turns a CUDA error into a message; marks the backend lost when the context is unusable
 * afterwards (a sticky error such as an illegal address in a kernel). */
static int cuda_failed(bench_backend *b, cudaError_t e, const char *what, char *err, size_t errlen) {
    if (e == cudaSuccess) return 0;
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess)
        snprintf(b->lost, sizeof b->lost, "the CUDA context is unusable after: %s", err);
    return -1;
}

static int tscan_failed(const bench_backend *b, tscan_status status, const char *what, char *err, size_t errlen) {
    if (status == TSCAN_SUCCESS) return 0;
    snprintf(err, errlen, "%s: %s: %s", what, b->library->status_string(status), b->library->last_error());
    return -1;
}

/* Makes *buffer hold at least `bytes`, freeing the old one first to keep the peak low. */
static int reserve(bench_backend *b, void **buffer, size_t *capacity, size_t bytes, char *err, size_t errlen) {
    if (bytes <= *capacity) return 0;
    cudaFree(*buffer);
    *buffer = NULL;
    *capacity = 0;
    if (cuda_failed(b, cudaMalloc(buffer, bytes), "cudaMalloc", err, errlen)) return -1;
    *capacity = bytes;
    return 0;
}

static int gpu_load(bench_backend *b, const void *host_input, size_t in_bytes, size_t out_bytes, void **in_base,
                    void **out_base, char *err, size_t errlen) {
    gpu_state *s = b->state;
    /* On the case stream, and waited for: a copy from pageable memory may return before its DMA
     * lands, and the non-blocking stream would not wait for the legacy stream. */
    if (reserve(b, &s->in, &s->in_capacity, in_bytes, err, errlen) ||
        reserve(b, &s->out, &s->out_capacity, out_bytes, err, errlen) ||
        cuda_failed(b, cudaMemcpyAsync(s->in, host_input, in_bytes, cudaMemcpyHostToDevice, s->stream),
                    "cudaMemcpyAsync of the input", err, errlen) ||
        cuda_failed(b, cudaStreamSynchronize(s->stream), "the input upload", err, errlen))
        return -1;
    s->out_bytes = out_bytes;
    *in_base = s->in;
    *out_base = s->out;
    return 0;
}

static int gpu_begin_case(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                          const tscan_tensor *out, size_t *workspace_bytes, char *err, size_t errlen) {
    gpu_state *s = b->state;
    if (tscan_failed(b, b->library->workspace_size(desc, in, out, &s->workspace_bytes), "tscan_scan_workspace_size",
                     err, errlen))
        return -1;
    *workspace_bytes = s->workspace_bytes;
    if (s->workspace_bytes &&
        cuda_failed(b, cudaMalloc(&s->workspace, s->workspace_bytes), "cudaMalloc of the workspace", err, errlen))
        return -1;
    return 0;
}

static void gpu_end_case(bench_backend *b) {
    gpu_state *s = b->state;
    cudaFree(s->workspace);
    s->workspace = NULL;
    s->workspace_bytes = 0;
}

static int gpu_poison_output(bench_backend *b, char *err, size_t errlen) {
    gpu_state *s = b->state;
    if (cuda_failed(b, cudaMemsetAsync(s->out, 0xff, s->out_bytes, s->stream), "cudaMemsetAsync of the output",
                    err, errlen) ||
        cuda_failed(b, cudaStreamSynchronize(s->stream), "the output poisoning", err, errlen))
        return -1;
    return 0;
}

static int gpu_run_timed(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                         const tscan_tensor *out, double *seconds, char *err, size_t errlen) {
    gpu_state *s = b->state;
    double start = bench_now();
    if (tscan_failed(b, b->library->scan(desc, in, out, s->workspace, s->workspace_bytes, s->stream), "tscan_scan",
                     err, errlen) ||
        cuda_failed(b, cudaStreamSynchronize(s->stream), "the scan", err, errlen))
        return -1;
    *seconds = bench_now() - start;
    return 0;
}

static int gpu_fetch_output(bench_backend *b, void *host_output, char *err, size_t errlen) {
    gpu_state *s = b->state;
    if (cuda_failed(b, cudaMemcpyAsync(host_output, s->out, s->out_bytes, cudaMemcpyDeviceToHost, s->stream),
                    "cudaMemcpyAsync of the output", err, errlen) ||
        cuda_failed(b, cudaStreamSynchronize(s->stream), "the output download", err, errlen))
        return -1;
    return 0;
}

/* One sample of either operation: flush, event, the operation alone, event. */
typedef struct gpu_sample {
    bench_backend *backend;
    const tscan_scan_desc *desc; /* NULL: the copy */
    const tscan_tensor *in, *out;
    size_t copy_bytes;
} gpu_sample;

static int gpu_sample_once(void *ctx, double *seconds, char *err, size_t errlen) {
    gpu_sample *c = ctx;
    bench_backend *b = c->backend;
    gpu_state *s = b->state;
    tscan_status status = TSCAN_SUCCESS;
    cudaError_t copied = cudaSuccess;
    float ms;

    if (cuda_failed(b, cudaMemsetAsync(s->flush, (int)(s->flush_value++ & 0xff), b->flush_bytes, s->stream),
                    "cudaMemsetAsync (L2 flush)", err, errlen) ||
        cuda_failed(b, cudaEventRecord(s->start, s->stream), "cudaEventRecord", err, errlen))
        return -1;
    if (c->desc) {
        nvtxRangePushA("scan launch");
        status = b->library->scan(c->desc, c->in, c->out, s->workspace, s->workspace_bytes, s->stream);
    } else {
        nvtxRangePushA("copy launch");
        copied = cudaMemcpyAsync(s->out, s->in, c->copy_bytes, cudaMemcpyDeviceToDevice, s->stream);
    }
    nvtxRangePop();
    if (tscan_failed(b, status, "tscan_scan", err, errlen) ||
        cuda_failed(b, copied, "cudaMemcpyAsync", err, errlen) ||
        cuda_failed(b, cudaEventRecord(s->stop, s->stream), "cudaEventRecord", err, errlen) ||
        cuda_failed(b, cudaEventSynchronize(s->stop), c->desc ? "the scan" : "the copy", err, errlen) ||
        cuda_failed(b, cudaEventElapsedTime(&ms, s->start, s->stop), "cudaEventElapsedTime", err, errlen))
        return -1;
    *seconds = 1e-3 * (double)ms;
    return 0;
}

static int gpu_measure_scan(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                            const tscan_tensor *out, const measure_settings *settings, timing_stats *stats,
                            char *err, size_t errlen) {
    gpu_sample sample = {b, desc, in, out, 0};
    return measure(settings, gpu_sample_once, &sample, stats, err, errlen);
}

static int gpu_measure_copy(bench_backend *b, size_t bytes, const measure_settings *settings, timing_stats *stats,
                            char *err, size_t errlen) {
    gpu_sample sample = {b, NULL, NULL, NULL, bytes};
    return measure(settings, gpu_sample_once, &sample, stats, err, errlen);
}

static void gpu_destroy(bench_backend *b) {
    gpu_state *s = b->state;
    if (!s) return;
    cudaFree(s->workspace);
    cudaFree(s->in);
    cudaFree(s->out);
    cudaFree(s->flush);
    if (s->start) cudaEventDestroy(s->start);
    if (s->stop) cudaEventDestroy(s->stop);
    if (s->stream) cudaStreamDestroy(s->stream);
    free(s);
    b->state = NULL;
}

static void *pinned_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

static void pinned_free(void *p) {
    if (p) cudaFreeHost(p);
}

static int attribute(enum cudaDeviceAttr attr, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return value;
}

static void describe_device(int device, device_info *info) {
    struct cudaDeviceProp prop;
    memset(info, 0, sizeof *info);
    info->id = device;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        snprintf(info->name, sizeof info->name, "%s", prop.name);
        info->sm_version = prop.major * 100 + prop.minor * 10;
        info->global_memory_size = (int64_t)prop.totalGlobalMem;
        info->shared_memory_per_block = (int64_t)prop.sharedMemPerBlock;
        info->shared_memory_per_sm = (int64_t)prop.sharedMemPerMultiprocessor;
        info->registers_per_block = prop.regsPerBlock;
        info->registers_per_sm = prop.regsPerMultiprocessor;
        info->max_threads_per_block = prop.maxThreadsPerBlock;
        info->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
        info->max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    }
    cudaGetLastError();
    info->number_of_sms = attribute(cudaDevAttrMultiProcessorCount, device);
    info->sm_default_clock_rate = 1000 * (int64_t)attribute(cudaDevAttrClockRate, device);
    info->global_memory_bus_peak_clock_rate = 1000 * (int64_t)attribute(cudaDevAttrMemoryClockRate, device);
    info->global_memory_bus_width = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    info->global_memory_bus_bandwidth =
        2.0 * (double)info->global_memory_bus_peak_clock_rate * (double)info->global_memory_bus_width / 8.0;
    info->l2_cache_size = attribute(cudaDevAttrL2CacheSize, device);
    info->ecc_state = attribute(cudaDevAttrEccEnabled, device);
    if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, device) != cudaSuccess) {
        cudaGetLastError();
        info->pci_bus_id[0] = '\0';
    }
}

int gpu_backend_create(bench_backend *b, const tscan_library *library, int device, device_info *info, char *err,
                       size_t errlen) {
    gpu_state *s;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);

    memset(b, 0, sizeof *b);
    if (e != cudaSuccess || count == 0) {
        snprintf(err, errlen, "no CUDA device: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
        cudaGetLastError();
        return BACKEND_NO_GPU;
    }
    if (device >= count) {
        snprintf(err, errlen, "--device %d: there %s %d CUDA device%s (0..%d)", device, count == 1 ? "is" : "are",
                 count, count == 1 ? "" : "s", count - 1);
        return BACKEND_BAD_DEVICE;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        snprintf(err, errlen, "cudaSetDevice(%d): %s", device, cudaGetErrorString(e));
        return BACKEND_ERROR;
    }
    describe_device(device, info);
    if (!(s = calloc(1, sizeof *s))) {
        snprintf(err, errlen, "out of host memory");
        return BACKEND_ERROR;
    }
    b->name = "gpu";
    b->timer = "cuda_event";
    b->library = library;
    b->state = s;
    b->host_alloc = pinned_alloc;
    b->host_free = pinned_free;
    b->load = gpu_load;
    b->begin_case = gpu_begin_case;
    b->poison_output = gpu_poison_output;
    b->run_timed = gpu_run_timed;
    b->fetch_output = gpu_fetch_output;
    b->measure_scan = gpu_measure_scan;
    b->measure_copy = gpu_measure_copy;
    b->end_case = gpu_end_case;
    b->destroy = gpu_destroy;
    /* Twice the L2, so that nothing of the previous sample survives in it. */
    b->flush_bytes = 2 * (size_t)(info->l2_cache_size > 0 ? info->l2_cache_size : 64 << 20);
    if (cuda_failed(b, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "cudaStreamCreate", err,
                    errlen) ||
        cuda_failed(b, cudaEventCreate(&s->start), "cudaEventCreate", err, errlen) ||
        cuda_failed(b, cudaEventCreate(&s->stop), "cudaEventCreate", err, errlen) ||
        cuda_failed(b, cudaMalloc(&s->flush, b->flush_bytes), "cudaMalloc of the L2 flush buffer", err, errlen)) {
        gpu_destroy(b);
        return BACKEND_ERROR;
    }
    return BACKEND_OK;
}
