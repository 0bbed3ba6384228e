/* calls.c - tscan-bench calls: what a call costs when calls come back to back on one stream, host
 * included (wall time from the first call to the stream's end, over the calls), beside as many
 * launches of an empty kernel timed the same way (issue 27: at most 1.3x a bare launch). One
 * problem, checked against the reference first with its output poisoned; each library given
 * (--lib PATH, up to two; else the linked one) timed in turn, round by round. */
#include <cjson/cJSON.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "data.h"
#include "library.h"
#include "options.h"
#include "stats.h"
#include "sweep.h"

cudaError_t bench_launch_empty(cudaStream_t stream); /* empty_kernel.cu */

enum { MAX_LIBRARIES = 2, MAX_ROUNDS = 51 };

typedef struct calls_options {
    const char *shape, *output, *libraries[MAX_LIBRARIES];
    int axis, dtype, library_count, device;
    tscan_algo algo;
    long calls, rounds;
} calls_options;

static void print_calls_usage(FILE *out) {
    fprintf(out,
            "usage: tscan-bench calls [--shape AxB] [--axis N] [--dtype D] [--algo A] [--calls N] [--rounds R]\n"
            "                         [--lib PATH]... [--device N] [--output FILE]\n\n"
            "Times N calls of one sum (default 1024 float32, axis its last, AUTO) back to back on one\n"
            "stream, host included, and N launches of an empty kernel the same way; the median of R\n"
            "rounds (default 1000 calls, 9 rounds) of each, per library (--lib, up to two, timed in\n"
            "turn; default the linked one). The problem is checked against the reference first.\n"
            "Exit status: 0, 1 when a check or call failed, 2 on a usage error or without a GPU.\n");
}

static double median(double *values, long count) {
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return quantile(values, count, 0.5);
}

static int parse_calls_options(int argc, char **argv, calls_options *o) {
    *o = (calls_options){.shape = "1024", .axis = -1, .dtype = TSCAN_FLOAT32, .algo = TSCAN_ALGO_AUTO,
                         .calls = 1000, .rounds = 9};
    for (int i = 1; i < argc; ++i) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--help")) {
            print_calls_usage(stdout);
            exit(EXIT_PASSED);
        }
        if (!value) {
            fprintf(stderr, "tscan-bench calls: %s needs a value (or is unknown)\n", flag);
            return -1;
        }
        ++i;
        if (!strcmp(flag, "--shape")) o->shape = value;
        else if (!strcmp(flag, "--axis")) o->axis = atoi(value);
        else if (!strcmp(flag, "--output")) o->output = value;
        else if (!strcmp(flag, "--device")) o->device = atoi(value);
        else if (!strcmp(flag, "--calls")) o->calls = atol(value);
        else if (!strcmp(flag, "--rounds")) o->rounds = atol(value);
        else if (!strcmp(flag, "--dtype")) o->dtype = parse_dtype_name(value);
        else if (!strcmp(flag, "--algo")) {
            uint32_t mask = 0;
            char err[256];
            if (parse_axis_list(AXIS_ALGO, value, &mask, err, sizeof err) || (mask & (mask - 1))) {
                fprintf(stderr, "tscan-bench calls: --algo %s: one strategy\n", value);
                return -1;
            }
            for (int a = 0; a < TSCAN_ALGO_COUNT; ++a)
                if (mask == 1u << a) o->algo = (tscan_algo)a;
        } else if (!strcmp(flag, "--lib")) {
            if (o->library_count == MAX_LIBRARIES) {
                fprintf(stderr, "tscan-bench calls: at most %d --lib\n", MAX_LIBRARIES);
                return -1;
            }
            o->libraries[o->library_count++] = value;
        } else {
            fprintf(stderr, "tscan-bench calls: unknown option %s\n", flag);
            return -1;
        }
    }
    if (o->dtype < 0 || o->calls < 1 || o->rounds < 1 || o->rounds > MAX_ROUNDS) {
        fprintf(stderr, "tscan-bench calls: --dtype must name a dtype, --calls be >= 1, --rounds 1 to %d\n",
                MAX_ROUNDS);
        return -1;
    }
    return 0;
}

#define CUDA_OR_FAIL(call)                                                                             \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "tscan-bench calls: %s: %s\n", #call, cudaGetErrorString(e_));             \
            goto done;                                                                                 \
        }                                                                                              \
    } while (0)

int calls_main(int argc, char **argv) {
    calls_options o;
    tscan_library libraries[MAX_LIBRARIES];
    double per_call[MAX_LIBRARIES][MAX_ROUNDS], bare[MAX_ROUNDS];
    int count = 0, status = EXIT_FAILED, devices = 0;
    bench_shape shape;
    int64_t sizes[TSCAN_MAX_DIMS];
    char err[512];
    void *host_in = NULL, *host_out = NULL, *in = NULL, *out = NULL, *workspace = NULL;
    size_t workspace_bytes = 0;
    cudaStream_t stream = NULL;
    reference_lines ref = {0};
    tscan_tensor tin, tout;

    if (parse_calls_options(argc, argv, &o)) return EXIT_USAGE;
    const uint32_t ndim = parse_sizes(o.shape, sizes, err, sizeof err);
    if (!ndim || shape_init(&shape, "calls", ndim, sizes, o.axis < 0 ? ndim - 1 : (uint32_t)o.axis, LAYOUT_PACKED,
                            NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "tscan-bench calls: %s\n", err);
        return EXIT_USAGE;
    }
    const cudaError_t counted = cudaGetDeviceCount(&devices);
    if (counted != cudaSuccess || devices == 0) {
        fprintf(stderr, "tscan-bench calls: no CUDA device (%s); the cost of a call is the GPU's to measure, nothing ran\n",
                counted != cudaSuccess ? cudaGetErrorString(counted) : "none found");
        return EXIT_USAGE;
    }
    if (o.library_count == 0) libraries[count++] = tscan_linked_library;
    for (; count < o.library_count; ++count)
        if (tscan_library_load(&libraries[count], o.libraries[count], err, sizeof err)) {
            fprintf(stderr, "tscan-bench calls: --lib %s\n", err);
            goto done;
        }
    const tscan_dtype dtype = (tscan_dtype)o.dtype;
    const size_t bytes = (size_t)shape_numel(&shape) * tscan_dtype_size(dtype);
    const tscan_scan_desc desc = {TSCAN_OP_SUM, shape.axis, TSCAN_INCREASING, 0, o.algo};
    CUDA_OR_FAIL(cudaSetDevice(o.device));
    CUDA_OR_FAIL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_OR_FAIL(cudaMalloc(&in, bytes));
    CUDA_OR_FAIL(cudaMalloc(&out, bytes));
    if (!(host_in = malloc(bytes)) || !(host_out = malloc(bytes))) goto done;
    data_fill_input(host_in, &shape, dtype, TSCAN_OP_SUM, 1);
    CUDA_OR_FAIL(cudaMemcpy(in, host_in, bytes, cudaMemcpyHostToDevice));
    tscan_tensor_init(&tin, in, dtype, shape.ndim, shape.sizes, NULL);
    tscan_tensor_init(&tout, out, dtype, shape.ndim, shape.sizes, NULL);
    if (reference_compute(&ref, &shape, dtype, dtype, &desc, host_in, 1, err, sizeof err)) {
        fprintf(stderr, "tscan-bench calls: %s\n", err);
        goto done;
    }
    for (int k = 0; k < count; ++k) {
        size_t need = 0;
        if (libraries[k].workspace_size(&desc, &tin, &tout, &need) != TSCAN_SUCCESS) {
            fprintf(stderr, "tscan-bench calls: workspace size: %s\n", libraries[k].last_error());
            goto done;
        }
        if (need > workspace_bytes) workspace_bytes = need;
    }
    if (workspace_bytes) CUDA_OR_FAIL(cudaMalloc(&workspace, workspace_bytes));
    for (int k = 0; k < count; ++k) { /* each library's answer, output poisoned first */
        check_result check;
        CUDA_OR_FAIL(cudaMemset(out, 0xa5, bytes));
        if (libraries[k].scan(&desc, &tin, &tout, workspace, workspace_bytes, stream) != TSCAN_SUCCESS) {
            fprintf(stderr, "tscan-bench calls: tscan_scan: %s\n", libraries[k].last_error());
            goto done;
        }
        CUDA_OR_FAIL(cudaStreamSynchronize(stream));
        CUDA_OR_FAIL(cudaMemcpy(host_out, out, bytes, cudaMemcpyDeviceToHost));
        reference_check(&ref, &shape, dtype, host_out, &check);
        if (check.mismatches) {
            fprintf(stderr, "tscan-bench calls: %s: %lld elements differ from the reference (line %lld, index %lld)\n",
                    libraries[k].path ? libraries[k].path : "the linked library", (long long)check.mismatches,
                    (long long)check.first_line, (long long)check.first_index);
            goto done;
        }
    }
    for (long r = -1; r < o.rounds; ++r) { /* round -1 warms every path up, untimed */
        for (int k = 0; k < count; ++k) {
            const double t0 = bench_now();
            for (long i = 0; i < o.calls; ++i)
                if (libraries[k].scan(&desc, &tin, &tout, workspace, workspace_bytes, stream) != TSCAN_SUCCESS) {
                    fprintf(stderr, "tscan-bench calls: tscan_scan: %s\n", libraries[k].last_error());
                    goto done;
                }
            CUDA_OR_FAIL(cudaStreamSynchronize(stream));
            if (r >= 0) per_call[k][r] = (bench_now() - t0) / (double)o.calls;
        }
        const double t0 = bench_now();
        for (long i = 0; i < o.calls; ++i) CUDA_OR_FAIL(bench_launch_empty(stream));
        CUDA_OR_FAIL(cudaStreamSynchronize(stream));
        if (r >= 0) bare[r] = (bench_now() - t0) / (double)o.calls;
    }

    struct cudaDeviceProp prop;
    tscan_algo resolved = o.algo;
    CUDA_OR_FAIL(cudaGetDeviceProperties(&prop, o.device));
    if (o.algo == TSCAN_ALGO_AUTO) libraries[0].auto_algo(&desc, &tin, &tout, &resolved);
    const double bare_us = 1e6 * median(bare, o.rounds);
    cJSON *report = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(report, "libraries");
    cJSON_AddStringToObject(report, "gpu", prop.name);
    cJSON_AddStringToObject(report, "shape", o.shape);
    cJSON_AddNumberToObject(report, "axis", shape.axis);
    cJSON_AddStringToObject(report, "dtype", tscan_dtype_name(dtype));
    cJSON_AddStringToObject(report, "algo", tscan_algo_name(o.algo));
    cJSON_AddStringToObject(report, "resolved_algo", tscan_algo_name(resolved));
    cJSON_AddNumberToObject(report, "calls", (double)o.calls);
    cJSON_AddNumberToObject(report, "rounds", (double)o.rounds);
    cJSON_AddNumberToObject(report, "bare_launch_us", bare_us);
    printf("%s %s sum, %s (%s): %ld calls back to back, median of %ld rounds, on %s\n", o.shape,
           tscan_dtype_name(dtype), tscan_algo_name(o.algo), tscan_algo_name(resolved), o.calls, o.rounds, prop.name);
    printf("  %-44s %8.2f us\n", "empty kernel", bare_us);
    for (int k = 0; k < count; ++k) {
        const double us = 1e6 * median(per_call[k], o.rounds);
        const char *name = libraries[k].path ? libraries[k].path : "linked library";
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddStringToObject(entry, "library", name);
        cJSON_AddStringToObject(entry, "version", libraries[k].version_string());
        cJSON_AddNumberToObject(entry, "call_us", us);
        cJSON_AddNumberToObject(entry, "ratio_to_bare_launch", us / bare_us);
        cJSON_AddItemToArray(list, entry);
        printf("  %-44s %8.2f us  %.2fx the empty kernel\n", name, us, us / bare_us);
    }
    status = EXIT_PASSED;
    if (o.output) {
        char *text = cJSON_Print(report);
        FILE *f = text ? fopen(o.output, "w") : NULL;
        if (!f || fputs(text, f) < 0 || fclose(f)) {
            fprintf(stderr, "tscan-bench calls: cannot write %s\n", o.output);
            status = EXIT_FAILED;
        }
        free(text);
    }
    cJSON_Delete(report);
done:
    reference_free(&ref);
    free(host_in);
    free(host_out);
    cudaFree(in);
    cudaFree(out);
    cudaFree(workspace);
    if (stream) cudaStreamDestroy(stream);
    for (int k = 0; k < count; ++k)
        if (libraries[k].path) tscan_library_close(&libraries[k]);
    return status;
}
