/*
 * backend.h - where cases run: the GPU (tscan_scan on device memory, CUDA events) or the
 * reference backend (tscan_scan_reference on host memory, the host clock) used where no GPU
 * is present. The run loop drives either through this table.
 */
#ifndef TSCAN_BENCH_BACKEND_H
#define TSCAN_BENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "library.h"
#include "stats.h"
#include "tscan.h"

/* The device, under nvbench's field names (see bench/REPORT.md). */
typedef struct device_info {
    int id;
    char name[256];
    int sm_version;              /* major * 100 + minor * 10 */
    int number_of_sms;
    int64_t sm_default_clock_rate;             /* Hz */
    int64_t global_memory_size;                /* bytes */
    int64_t global_memory_bus_peak_clock_rate; /* Hz */
    int global_memory_bus_width;               /* bits */
    double global_memory_bus_bandwidth;        /* bytes/s, DDR: 2 * clock * width / 8 */
    int64_t l2_cache_size;                     /* bytes */
    int64_t shared_memory_per_sm, shared_memory_per_block;
    int max_threads_per_sm, max_threads_per_block, max_blocks_per_sm;
    int registers_per_sm, registers_per_block;
    int ecc_state;
    char pci_bus_id[32];
} device_info;

typedef struct bench_backend bench_backend;

struct bench_backend {
    const char *name;      /* "gpu" or "reference" */
    const char *timer;     /* "cuda_event" or "host_clock" */
    size_t flush_bytes;    /* written before every sample to evict the cache */
    char lost[512];        /* set when the backend can run nothing more (a sticky CUDA error) */
    const tscan_library *library; /* the entry points its cases call */

    /* Host memory for inputs and outputs: pinned on the GPU backend, for fast copies. */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);
    /* Holds a copy of the host input span and room for an output span; *in_base and
     * *out_base receive the backend's addresses of both spans. */
    int (*load)(bench_backend *b, const void *host_input, size_t in_bytes, size_t out_bytes, void **in_base,
                void **out_base, char *err, size_t errlen);
    /* Gets a case ready (its workspace); *workspace_bytes receives the size. */
    int (*begin_case)(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in, const tscan_tensor *out,
                      size_t *workspace_bytes, char *err, size_t errlen);
    /* Fills the output span with 0xff bytes, so that a strategy that writes nothing cannot
     * pass on an earlier run's answer. */
    int (*poison_output)(bench_backend *b, char *err, size_t errlen);
    /* Runs the scan once and waits; *seconds receives the host-clock time of both. */
    int (*run_timed)(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in, const tscan_tensor *out,
                     double *seconds, char *err, size_t errlen);
    /* Copies the output span to host memory. */
    int (*fetch_output)(bench_backend *b, void *host_output, char *err, size_t errlen);
    int (*measure_scan)(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                        const tscan_tensor *out, const measure_settings *settings, timing_stats *stats, char *err,
                        size_t errlen);
    /* Times a copy of `bytes` from the input span to the output span (both at least that big). */
    int (*measure_copy)(bench_backend *b, size_t bytes, const measure_settings *settings, timing_stats *stats,
                        char *err, size_t errlen);
    void (*end_case)(bench_backend *b);
    void (*destroy)(bench_backend *b);
    void *state;
};

/* What gpu_backend_create answers; every failure comes with a message in err. */
enum {
    BACKEND_OK = 0,
    BACKEND_NO_GPU = 1,     /* no usable device: the caller may fall back to the reference backend */
    BACKEND_BAD_DEVICE = 2, /* --device names a device that is not there */
    BACKEND_ERROR = -1
};

/* A GPU backend calling `library`'s entry points. */
int gpu_backend_create(bench_backend *b, const tscan_library *library, int device, device_info *info, char *err,
                       size_t errlen);
int host_backend_create(bench_backend *b, char *err, size_t errlen);

#endif
