/*
 * tscan.h - CUDA prefix scans (cumulative sum and product) along one axis of a
 * strided 1..8 dimensional tensor. The only public header of the library; C99,
 * usable from C and C++.
 *
 * Semantics are those of DirectML's cumulative summation and product operators,
 * generalised to every dtype, any strides, both directions, inclusive or exclusive,
 * in place or not. See README.md for a worked example.
 */
#ifndef TSCAN_H
#define TSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h> /* cudaStream_t */

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header; tscan_version() gives the version of the library loaded. */
#define TSCAN_VERSION_MAJOR 0
#define TSCAN_VERSION_MINOR 1
#define TSCAN_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, e.g. 100 for 0.1.0. */
#define TSCAN_VERSION (TSCAN_VERSION_MAJOR * 10000 + TSCAN_VERSION_MINOR * 100 + TSCAN_VERSION_PATCH)

/* Most dimensions a tensor may have. */
#define TSCAN_MAX_DIMS 8

/* Result of every entry point. Values are stable across versions. */
typedef enum tscan_status {
    TSCAN_SUCCESS = 0,
    TSCAN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, bad ndim/axis/size/enum, mismatch, misalignment */
    TSCAN_ERROR_OVERLAP = 2,          /* output overlaps itself, or input and output partially overlap */
    TSCAN_ERROR_NOT_SUPPORTED = 3,    /* valid, but the chosen algorithm cannot take this layout */
    TSCAN_ERROR_WORKSPACE = 4,        /* workspace smaller than tscan_scan_workspace_size said */
    TSCAN_ERROR_CUDA = 5,             /* a CUDA call or launch failed; the message has CUDA's text */
    TSCAN_ERROR_INTERNAL = 6          /* anything else */
} tscan_status;

/*
 * The one list of element types: X(enumerator, name, bytes, kind), kind one of signed,
 * unsigned (integers) or float (the four float types). Everything per dtype (the enum below,
 * names, sizes, the pairs a scan may widen, kernel instantiation, the support query) is
 * generated from it, so the pieces cannot drift apart. Order fixes the enum values.
 */
#define TSCAN_DTYPE_LIST(X)                 \
    X(TSCAN_FLOAT32, float32, 4, float)     \
    X(TSCAN_FLOAT16, float16, 2, float)     \
    X(TSCAN_BFLOAT16, bfloat16, 2, float)   \
    X(TSCAN_FLOAT64, float64, 8, float)     \
    X(TSCAN_INT8, int8, 1, signed)          \
    X(TSCAN_UINT8, uint8, 1, unsigned)      \
    X(TSCAN_INT16, int16, 2, signed)        \
    X(TSCAN_UINT16, uint16, 2, unsigned)    \
    X(TSCAN_INT32, int32, 4, signed)        \
    X(TSCAN_UINT32, uint32, 4, unsigned)    \
    X(TSCAN_INT64, int64, 8, signed)        \
    X(TSCAN_UINT64, uint64, 8, unsigned)

#define TSCAN_DTYPE_ENUMERATOR_(enumerator, name, bytes, kind) enumerator,
/* Element type: TSCAN_FLOAT32 = 0, TSCAN_FLOAT16, TSCAN_BFLOAT16, TSCAN_FLOAT64, TSCAN_INT8,
 * TSCAN_UINT8, TSCAN_INT16, TSCAN_UINT16, TSCAN_INT32, TSCAN_UINT32, TSCAN_INT64, TSCAN_UINT64.
 * Half types (float16, bfloat16) are stored as their 16-bit IEEE / brain-float patterns. */
typedef enum tscan_dtype {
    TSCAN_DTYPE_LIST(TSCAN_DTYPE_ENUMERATOR_)
    TSCAN_DTYPE_COUNT
} tscan_dtype;
#undef TSCAN_DTYPE_ENUMERATOR_

/* Scan operator: sum (identity 0) or product (identity 1). */
typedef enum tscan_op { TSCAN_OP_SUM = 0, TSCAN_OP_PROD, TSCAN_OP_COUNT } tscan_op;

/* Direction along the axis: increasing index (out[k] covers x[0..k]) or decreasing
 * (out[k] covers x[k..n-1]). */
typedef enum tscan_direction { TSCAN_INCREASING = 0, TSCAN_DECREASING } tscan_direction;

/* Scan strategy. AUTO chooses by shape and stride and never answers NOT_SUPPORTED. */
typedef enum tscan_algo {
    TSCAN_ALGO_AUTO = 0,
    TSCAN_ALGO_CUB_DEVICE, /* cub::DeviceScan, one launch per line: one or few long lines */
    TSCAN_ALGO_ROWS,       /* CUB warp/block scans: many contiguous lines, a warp or block per line */
    TSCAN_ALGO_COLUMNS,    /* one thread per line walking a strided axis, coalesced across lines */
    TSCAN_ALGO_LOOKBACK,   /* single pass, lines split across blocks, decoupled look-back between tiles */
    TSCAN_ALGO_STREAM,     /* one flat stream of tiles: lines end to end (a line start resets the scan),
                              or rows of a small inner extent (a running value per lane) */
    TSCAN_ALGO_COUNT
} tscan_algo;

/* Wider outputs: the output may have a wider type than the input, of the same family, so that
 * a scan neither overflows nor loses precision where the caller says so (a uint8 mask into
 * int32 offsets). Allowed (input, output) pairs: every type into itself; an integer into any
 * integer of at least its width (signed or not); float16 or bfloat16 into float32 or float64;
 * float32 into float64. Integer inputs convert as C converts (sign or zero extension, modulo
 * 2^bits into an unsigned output), then scan and wrap in the output type; floats keep the
 * running value in the output type. Any other pair is TSCAN_ERROR_INVALID_ARGUMENT. In place
 * keeps one type: an input and an output of different types sharing memory overlap. */
int tscan_output_dtype_allowed(tscan_dtype input, tscan_dtype output);

/* A strided view of device or host memory. Sizes and strides are in elements (DLPack style). */
typedef struct tscan_tensor {
    void *data;                       /* address of element (0,...,0) */
    tscan_dtype dtype;
    uint32_t ndim;                    /* 1..8 */
    int64_t sizes[TSCAN_MAX_DIMS];
    int64_t strides[TSCAN_MAX_DIMS];  /* elements */
} tscan_tensor;

/* What to compute (DirectML: Axis, AxisDirection, HasExclusiveSum/HasExclusiveProduct). */
typedef struct tscan_scan_desc {
    tscan_op op;
    uint32_t axis;                    /* 0 <= axis < ndim */
    tscan_direction direction;
    int exclusive;                    /* 0 or 1 */
    tscan_algo algo;                  /* TSCAN_ALGO_AUTO picks the best */
} tscan_scan_desc;

/* Fills *t. strides == NULL means packed row-major (last dimension contiguous).
 * Checks ndim, dtype and sizes; the data pointer is checked when the tensor is used. */
tscan_status tscan_tensor_init(tscan_tensor *t, void *data, tscan_dtype dtype, uint32_t ndim,
                               const int64_t *sizes, const int64_t *strides);

/* Exact device workspace, in bytes, that tscan_scan needs for this request (may be 0).
 * Validates like tscan_scan; with AUTO it answers for the strategy AUTO will choose. */
tscan_status tscan_scan_workspace_size(const tscan_scan_desc *desc, const tscan_tensor *input,
                                       const tscan_tensor *output, size_t *bytes);

/* Scans device memory on `stream`. Asynchronous: allocates nothing, synchronises nothing,
 * may be captured in a CUDA graph (memory from cudaMallocAsync in the same capture included)
 * and called from several threads on several streams; it finishes whatever else runs on the
 * GPU. `workspace` must hold the bytes the size query gave (NULL when it gave 0); concurrent
 * calls need separate workspaces. Invalid input launches nothing and writes nothing: memory
 * that the stream's device cannot reach is refused, naming its device. A CUDA error left
 * pending by the caller is left pending, and the call returns TSCAN_ERROR_CUDA naming it
 * without launching; a CUDA error of its own is returned, with CUDA's text, and cleared. */
tscan_status tscan_scan(const tscan_scan_desc *desc, const tscan_tensor *input,
                        const tscan_tensor *output, void *workspace, size_t workspace_bytes,
                        cudaStream_t stream);

/* The oracle: the same scan on host memory, sequentially, exactly as the spec defines it.
 * desc->algo is validated but otherwise ignored. */
tscan_status tscan_scan_reference(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output);

/* Whether `desc->algo` can run this request on the GPU: TSCAN_SUCCESS, or the status
 * tscan_scan would return (NOT_SUPPORTED with a reason in tscan_last_error()). Launches nothing. */
tscan_status tscan_scan_supported(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output);

/* The strategy AUTO picks for this request (never TSCAN_ALGO_AUTO), in *algo. */
tscan_status tscan_scan_auto_algo(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output, tscan_algo *algo);

/* Static text for a status, e.g. "TSCAN_ERROR_OVERLAP"; "unknown status" if out of range. */
const char *tscan_status_string(tscan_status s);

/* This thread's last failure message ("axis 4 is out of range for a 3-d tensor"), "" if none.
 * A later failure on the same thread replaces it; a success leaves it as it was. */
const char *tscan_last_error(void);

/* "float32", "float16", ...; NULL if out of range. */
const char *tscan_dtype_name(tscan_dtype t);

/* Bytes per element of t; 0 if out of range. */
size_t tscan_dtype_size(tscan_dtype t);

/* "auto", "cub_device", "rows", "columns", "lookback"; NULL if out of range. */
const char *tscan_algo_name(tscan_algo a);

/* "sum" or "prod"; NULL if out of range. */
const char *tscan_op_name(tscan_op op);

/* Version of the library loaded, as TSCAN_VERSION encodes it, and as "0.1.0". */
int tscan_version(void);
const char *tscan_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* TSCAN_H */
