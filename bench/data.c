/* data.c - generating inputs and checking outputs against tscan_scan_reference. */
#include "data.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tscan_internal.h" /* half conversions */

uint64_t mix64(uint64_t x) {
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static int is_float(tscan_dtype dtype) {
    return dtype == TSCAN_FLOAT32 || dtype == TSCAN_FLOAT16 || dtype == TSCAN_BFLOAT16 || dtype == TSCAN_FLOAT64;
}

/* Value of the element with row-major index `index` and index `k` along the axis, whose
 * predecessor along the axis has row-major index `index - axis_pitch` (see data.h). */
static double input_value(uint64_t seed, int64_t index, int64_t k, int64_t axis_pitch, tscan_op op, int floating) {
    static const double small[] = {-2.0, -1.0, 1.0, 2.0};
    static const double odd[] = {-3.0, -1.0, 1.0, 3.0};
    static const double powers[] = {0.5, 1.0, 2.0, 4.0};
    uint64_t h = mix64(seed ^ (uint64_t)index);
    double r;
    if (op == TSCAN_OP_SUM) return small[h & 3];
    if (!floating) return odd[h & 3];
    /* Both elements of a pair draw r from the index of the pair's first element. */
    r = powers[mix64(seed ^ (uint64_t)(index - (k & 1) * axis_pitch)) >> 62];
    return (h & 1 ? -1.0 : 1.0) * (k & 1 ? 1.0 / r : r);
}

/* Stores a small integer or a power of two, exact in every dtype (integers wrap). */
static void store_element(void *p, tscan_dtype dtype, double v) {
    switch (dtype) {
    case TSCAN_FLOAT32: {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
        break;
    }
    case TSCAN_FLOAT16: {
        uint16_t h = tscan_float_to_half((float)v);
        memcpy(p, &h, sizeof h);
        break;
    }
    case TSCAN_BFLOAT16: {
        uint16_t h = tscan_float_to_bfloat16((float)v);
        memcpy(p, &h, sizeof h);
        break;
    }
    case TSCAN_FLOAT64: memcpy(p, &v, sizeof v); break;
    case TSCAN_INT8:
    case TSCAN_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case TSCAN_INT16:
    case TSCAN_UINT16: {
        uint16_t u = (uint16_t)(int64_t)v;
        memcpy(p, &u, sizeof u);
        break;
    }
    case TSCAN_INT32:
    case TSCAN_UINT32: {
        uint32_t u = (uint32_t)(int64_t)v;
        memcpy(p, &u, sizeof u);
        break;
    }
    default: {
        uint64_t u = (uint64_t)(int64_t)v;
        memcpy(p, &u, sizeof u);
        break;
    }
    }
}

/* One thread's share of the input: elements begin..end-1 in row-major order. An element with
 * a non-zero index on a dimension of stride 0 (broadcast) shares its memory with the one of
 * index 0 there and is not written: the input is that element's, whatever the split. */
typedef struct fill_job {
    char *data;
    const bench_shape *shape;
    tscan_dtype dtype;
    tscan_op op;
    uint64_t seed;
    int64_t begin, end;
} fill_job;

static void *fill_range(void *arg) {
    const fill_job *job = arg;
    const bench_shape *shape = job->shape;
    const int64_t es = (int64_t)tscan_dtype_size(job->dtype);
    const uint32_t last = shape->ndim - 1, axis = shape->axis;
    const int floating = is_float(job->dtype);
    int64_t idx[TSCAN_MAX_DIMS], axis_pitch = 1, index = job->begin, rest = job->begin;

    for (uint32_t d = axis + 1; d < shape->ndim; ++d) axis_pitch *= shape->sizes[d];
    for (uint32_t d = shape->ndim; d-- > 0;) {
        idx[d] = rest % shape->sizes[d];
        rest /= shape->sizes[d];
    }
    while (index < job->end) {
        int64_t row = 0, stop = shape->sizes[last];
        if (stop - idx[last] > job->end - index) stop = idx[last] + (job->end - index);
        int aliased = 0;
        for (uint32_t d = 0; d < last; ++d) {
            row += idx[d] * shape->in_strides[d];
            aliased |= idx[d] && !shape->in_strides[d];
        }
        for (int64_t j = idx[last]; j < stop; ++j, ++index) {
            int64_t k = axis == last ? j : idx[axis];
            if (aliased || (j && !shape->in_strides[last])) continue;
            store_element(job->data + (row + j * shape->in_strides[last]) * es, job->dtype,
                          input_value(job->seed, index, k, axis_pitch, job->op, floating));
        }
        idx[last] = 0;
        for (uint32_t d = last; d-- > 0;) {
            if (++idx[d] < shape->sizes[d]) break;
            idx[d] = 0;
        }
    }
    return NULL;
}

void data_fill_input(void *data, const bench_shape *shape, tscan_dtype dtype, tscan_op op, uint64_t seed) {
    /* A 2^28-element input takes seconds on one core: split it across the host's cores (each
     * element's value depends on its index alone, so the split changes nothing). */
    enum { MAX_THREADS = 32 };
    const int64_t numel = shape_numel(shape);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = numel < (INT64_C(1) << 20) || cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
    fill_job jobs[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};

    for (int t = 0; t < threads; ++t) {
        jobs[t] = (fill_job){data, shape, dtype, op, seed, numel * t / threads, numel * (t + 1) / threads};
        started[t] = t > 0 && pthread_create(&ids[t], NULL, fill_range, &jobs[t]) == 0;
    }
    for (int t = 0; t < threads; ++t)
        if (!started[t]) fill_range(&jobs[t]); /* the calling thread's share, or a thread that did not start */
    for (int t = 1; t < threads; ++t)
        if (started[t]) pthread_join(ids[t], NULL);
}

void line_offsets(const bench_shape *shape, int64_t line, int64_t *in_offset, int64_t *out_offset) {
    *in_offset = *out_offset = 0;
    for (uint32_t d = shape->ndim; d-- > 0;) {
        int64_t i;
        if (d == shape->axis) continue;
        i = line % shape->sizes[d];
        line /= shape->sizes[d];
        *in_offset += i * shape->in_strides[d];
        *out_offset += i * shape->out_strides[d];
    }
}

/* The lines a check looks at: all of them for a small tensor, else the first, the last and
 * one at random from each of evenly spaced strata (how many: data.h). */
static int choose_lines(reference_lines *ref, const bench_shape *shape, uint64_t seed) {
    const int64_t lines = shape_lines(shape), n = shape->sizes[shape->axis];
    int64_t count = lines;
    if (shape_numel(shape) > CHECK_FULL_LIMIT) {
        count = (CHECK_SAMPLE_ELEMENTS + n - 1) / n;
        if (count < CHECK_MIN_LINES)
            count = CHECK_MIN_LINES < CHECK_FULL_LIMIT / n ? CHECK_MIN_LINES : CHECK_FULL_LIMIT / n;
        if (count < 2) count = 2;
        if (count > lines) count = lines;
    }
    if ((size_t)count > ref->ids_capacity) {
        int64_t *grown = realloc(ref->ids, (size_t)count * sizeof *grown);
        if (!grown) return -1;
        ref->ids = grown;
        ref->ids_capacity = (size_t)count;
    }
    for (int64_t j = 0; j < count; ++j) {
        int64_t low = j * lines / count, high = (j + 1) * lines / count;
        ref->ids[j] = count == lines ? j : low + (int64_t)(mix64(seed + (uint64_t)j) % (uint64_t)(high - low));
    }
    ref->ids[0] = 0;
    ref->ids[count - 1] = lines - 1;
    ref->count = count;
    return 0;
}

int reference_compute(reference_lines *ref, const bench_shape *shape, tscan_dtype dtype, tscan_dtype out_dtype,
                      const tscan_scan_desc *desc, const void *input, uint64_t seed, char *err, size_t errlen) {
    const int64_t n = shape->sizes[shape->axis];
    const size_t es = tscan_dtype_size(dtype), out_es = tscan_dtype_size(out_dtype);
    tscan_scan_desc line_desc = *desc;
    size_t bytes;

    if (choose_lines(ref, shape, seed)) {
        snprintf(err, errlen, "out of host memory choosing lines to check");
        return -1;
    }
    bytes = (size_t)ref->count * (size_t)n * out_es;
    if (bytes > ref->capacity_bytes) {
        void *grown = realloc(ref->values, bytes);
        if (!grown) {
            snprintf(err, errlen, "out of host memory for %zu bytes of reference lines", bytes);
            return -1;
        }
        ref->values = grown;
        ref->capacity_bytes = bytes;
    }
    line_desc.axis = 0;
    line_desc.algo = TSCAN_ALGO_AUTO;
    for (int64_t j = 0; j < ref->count; ++j) {
        int64_t in_offset, out_offset;
        tscan_tensor in_line, out_line;
        tscan_status status;
        line_offsets(shape, ref->ids[j], &in_offset, &out_offset);
        tscan_tensor_init(&in_line, (char *)input + in_offset * (int64_t)es, dtype, 1, &n,
                          &shape->in_strides[shape->axis]);
        tscan_tensor_init(&out_line, (char *)ref->values + (size_t)j * (size_t)n * out_es, out_dtype, 1, &n, NULL);
        if ((status = tscan_scan_reference(&line_desc, &in_line, &out_line)) != TSCAN_SUCCESS) {
            snprintf(err, errlen, "tscan_scan_reference failed on line %" PRId64 ": %s: %s", ref->ids[j],
                     tscan_status_string(status), tscan_last_error());
            return -1;
        }
    }
    return 0;
}

static double float_value(const void *p, tscan_dtype dtype) {
    uint16_t h;
    float f;
    double d;
    switch (dtype) {
    case TSCAN_FLOAT16: memcpy(&h, p, sizeof h); return tscan_half_to_float(h);
    case TSCAN_BFLOAT16: memcpy(&h, p, sizeof h); return tscan_bfloat16_to_float(h);
    case TSCAN_FLOAT32: memcpy(&f, p, sizeof f); return f;
    default: memcpy(&d, p, sizeof d); return d;
    }
}

/* Floats compare by value (NaN equal to NaN); integers bit for bit. */
static int elements_equal(const void *a, const void *b, tscan_dtype dtype) {
    if (is_float(dtype)) {
        double x = float_value(a, dtype), y = float_value(b, dtype);
        return x == y || (x != x && y != y);
    }
    return !memcmp(a, b, tscan_dtype_size(dtype));
}

static void format_element(char *buf, size_t len, const void *p, tscan_dtype dtype) {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (dtype) {
    case TSCAN_FLOAT16:
    case TSCAN_BFLOAT16:
    case TSCAN_FLOAT32: snprintf(buf, len, "%.9g", float_value(p, dtype)); break;
    case TSCAN_FLOAT64: snprintf(buf, len, "%.17g", float_value(p, dtype)); break;
    case TSCAN_INT8: memcpy(&i8, p, 1); snprintf(buf, len, "%d", i8); break;
    case TSCAN_UINT8: snprintf(buf, len, "%u", *(const uint8_t *)p); break;
    case TSCAN_INT16: memcpy(&i16, p, 2); snprintf(buf, len, "%d", i16); break;
    case TSCAN_UINT16: memcpy(&u16, p, 2); snprintf(buf, len, "%u", u16); break;
    case TSCAN_INT32: memcpy(&i32, p, 4); snprintf(buf, len, "%" PRId32, i32); break;
    case TSCAN_UINT32: memcpy(&u32, p, 4); snprintf(buf, len, "%" PRIu32, u32); break;
    case TSCAN_INT64: memcpy(&i64, p, 8); snprintf(buf, len, "%" PRId64, i64); break;
    default: memcpy(&u64, p, 8); snprintf(buf, len, "%" PRIu64, u64); break;
    }
}

void reference_check(const reference_lines *ref, const bench_shape *shape, tscan_dtype dtype, const void *output,
                     check_result *result) {
    const int64_t n = shape->sizes[shape->axis], step = shape->out_strides[shape->axis];
    const size_t es = tscan_dtype_size(dtype);
    memset(result, 0, sizeof *result);
    result->lines_total = shape_lines(shape);
    result->lines_checked = ref->count;
    result->elements_checked = ref->count * n;
    for (int64_t j = 0; j < ref->count; ++j) {
        int64_t in_offset, out_offset;
        const char *expected = (const char *)ref->values + (size_t)j * (size_t)n * es, *actual;
        line_offsets(shape, ref->ids[j], &in_offset, &out_offset);
        actual = (const char *)output + out_offset * (int64_t)es;
        /* A contiguous line that matches bit for bit needs no element-wise look. */
        if (step == 1 && !memcmp(actual, expected, (size_t)n * es)) continue;
        for (int64_t k = 0; k < n; ++k) {
            const char *a = actual + k * step * (int64_t)es, *e = expected + (size_t)k * es;
            if (elements_equal(a, e, dtype)) continue;
            if (result->mismatches++ == 0) {
                result->first_line = ref->ids[j];
                result->first_index = k;
                format_element(result->expected, sizeof result->expected, e, dtype);
                format_element(result->actual, sizeof result->actual, a, dtype);
            }
        }
    }
}

void reference_free(reference_lines *ref) {
    free(ref->ids);
    free(ref->values);
    memset(ref, 0, sizeof *ref);
}
