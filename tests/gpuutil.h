/*
 * gpuutil.h - what the GPU suites share beyond testutil: whether a device is there (and
 * the skip reason when not), checked CUDA calls, and one complete, checked run of a
 * testutil case on the device.
 *
 * gu_run never asserts, so host threads may call it; it reports through its return value
 * and message, which the test then asserts on.
 */
#ifndef TSCAN_GPUUTIL_H
#define TSCAN_GPUUTIL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "testutil.h"

/* 1 when the CUDA runtime reports at least one device; else 0 with the reason in `reason`. */
int gu_device_available(char *reason, size_t size);

/* Skips the current Criterion test, with the reason, when there is no device. */
#define GU_REQUIRE_DEVICE()                                                                  \
    do {                                                                                     \
        char gu_reason_[256];                                                                \
        if (!gu_device_available(gu_reason_, sizeof gu_reason_))                             \
            cr_skip_test("no CUDA device: %s", gu_reason_);                                  \
    } while (0)

/* A CUDA call in a test body: asserts cudaSuccess, with CUDA's own text. */
#define GU_CUDA(call)                                                                        \
    do {                                                                                     \
        cudaError_t gu_err_ = (call);                                                        \
        cr_assert(gu_err_ == cudaSuccess, "%s failed: %s (%s)", #call,                       \
                  cudaGetErrorString(gu_err_), cudaGetErrorName(gu_err_));                   \
    } while (0)

/* A shape and the axis to scan. */
typedef struct gu_shape {
    uint32_t ndim;
    int64_t sizes[TSCAN_MAX_DIMS];
    uint32_t axis;
} gu_shape;

/* The case of `dtype` on shape s with algo AUTO; `combo` picks the request: bit 0 the op
 * (sum, prod), bit 1 the direction (increasing, decreasing), bit 2 exclusive. */
tu_case gu_case(tscan_dtype dtype, const gu_shape *s, unsigned combo, tu_layout_kind layout,
                tu_data data, uint64_t seed);

/* Device memory (and host scratch) reused from run to run, grown on demand. One per thread. */
typedef struct gu_arena {
    unsigned char *dev;
    size_t dev_bytes;
    unsigned char *host;
    size_t host_bytes;
} gu_arena;

void gu_arena_free(gu_arena *a);

typedef enum gu_outcome { GU_PASSED, GU_NOT_SUPPORTED, GU_FAILED } gu_outcome;

/* Byte written over the whole workspace before each scan (the library may not rely on its
 * contents) and over GU_GUARD_BYTES after it (it may not write past the size it asked for). */
#define GU_WORKSPACE_POISON 0x5A
#define GU_GUARD_BYTES 256

/*
 * Runs l's case with desc.algo = algo on `stream` and checks everything:
 *  - tscan_scan_supported, tscan_scan_workspace_size and tscan_scan agree: all SUCCESS, or
 *    all NOT_SUPPORTED with a message (never for AUTO, whose tscan_scan_auto_algo must name
 *    a strategy that supports the case);
 *  - with a non-zero workspace, NULL and one byte less both give TSCAN_ERROR_WORKSPACE;
 *  - the scan runs with a workspace of exactly the queried size, poisoned, with a poisoned
 *    guard after it that must stay intact;
 *  - the output matches `expected` (from tu_layout_expected) with tu_case_tolerance_k, every
 *    byte of the output buffer outside the view is unchanged, and the input buffer (when
 *    not in place) is unchanged.
 * The buffers start from l's snapshots on every call. Sets l->c.desc.algo = algo, so that
 * descriptions name the strategy. Returns GU_PASSED, GU_NOT_SUPPORTED (msg: the reason) or
 * GU_FAILED (msg: the case and the first thing wrong).
 */
gu_outcome gu_run(gu_arena *a, tu_layout *l, const unsigned char *expected, tscan_algo algo,
                  cudaStream_t stream, char *msg, size_t size);

/* Counts of runs per strategy, and the first failures, for a test that runs many cases and
 * reports them all at the end. */
#define GU_TALLY_KEEP 6
typedef struct gu_tally {
    long passed[TSCAN_ALGO_COUNT];
    long unsupported[TSCAN_ALGO_COUNT];
    long failed;
    char first[GU_TALLY_KEEP][768];
} gu_tally;

void gu_tally_add(gu_tally *t, tscan_algo algo, gu_outcome o, const char *msg);
/* Makes c's layout, lets `prepare` (when not NULL) change its input, computes the expected
 * output, and runs it with every strategy (AUTO first). */
void gu_run_all_algos(gu_arena *a, const tu_case *c, void (*prepare)(tu_layout *l),
                      cudaStream_t stream, gu_tally *t);
/* Logs the counts (cr_log_info) and asserts that nothing failed, quoting the first failures. */
void gu_tally_assert(const gu_tally *t, const char *what);

/* Call after changing l's input elements in l->in_buf: makes the change l's snapshot. */
void gu_layout_commit_input(tu_layout *l);

/* A `prepare` for long product lines: each input element becomes a unit of its ring, an odd
 * integer or a float ±1, so products neither collapse to 0 (integers: factors of two) nor
 * run to 0 or infinity (floats), and every term of a long line stays visible in the result.
 * Leaves l->c.data as it was: ±1 floats compare exactly under both SMALL_INT and POW2. */
void gu_make_units(tu_layout *l);

/* ---- one layout in its own device allocations (graphs, concurrent streams) -------------- */

typedef struct gu_buffers {
    unsigned char *in, *out; /* out == in in place */
    unsigned char *ws;       /* exactly ws_bytes (NULL when 0) */
    size_t ws_bytes;
    tscan_tensor input, output; /* the layout's views, on the device */
} gu_buffers;

/* Allocates l's buffers and the workspace that tscan_scan_workspace_size gives for desc, and
 * uploads l's snapshots (synchronously). Returns the query's status: on anything but
 * SUCCESS nothing is allocated. Asserts on CUDA failures: for the test's own thread only. */
tscan_status gu_buffers_make(gu_buffers *b, const tu_layout *l, const tscan_scan_desc *desc);
/* Uploads l's snapshots again on `stream` (asynchronous; from pageable memory). */
void gu_buffers_upload(const gu_buffers *b, const tu_layout *l, cudaStream_t stream);
/* Synchronises `stream`, then copies the output buffer into a new malloc'd buffer (free it). */
unsigned char *gu_buffers_download(const gu_buffers *b, const tu_layout *l, cudaStream_t stream);
void gu_buffers_free(gu_buffers *b);

/* Destroys an instantiated graph and the graph it came from. */
void gu_graph_destroy(cudaGraphExec_t exec, cudaGraph_t graph);

#endif /* TSCAN_GPUUTIL_H */
