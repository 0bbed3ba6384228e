/* validate.c - every rule of CONTRACT §1.4 (Layout) and §2, checked before anything runs.
 * Nothing here reads or writes tensor memory. */
#include <inttypes.h>
#include <stdlib.h>

#include "tscan_internal.h"

/* Above this many elements an interleaved layout is not enumerated to prove that no two
 * elements share an address; it is refused as overlapping instead (see check_self_overlap). */
#define TSCAN_EXACT_OVERLAP_LIMIT (INT64_C(1) << 22)

int64_t tscan_numel(const tscan_tensor *t) {
    int64_t n = 1;
    for (uint32_t d = 0; d < t->ndim; ++d) n *= t->sizes[d];
    return n;
}

int tscan_same_view(const tscan_tensor *a, const tscan_tensor *b) {
    if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (uint32_t d = 0; d < a->ndim; ++d)
        if (a->sizes[d] > 1 && a->strides[d] != b->strides[d]) return 0;
    return 1;
}

tscan_status tscan_check_tensor_fields(const tscan_tensor *t, const char *name) {
    if ((unsigned)t->dtype >= (unsigned)TSCAN_DTYPE_COUNT)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "%s.dtype %d is not a tscan_dtype (0..%d)",
                          name, (int)t->dtype, TSCAN_DTYPE_COUNT - 1);
    if (t->ndim < 1 || t->ndim > TSCAN_MAX_DIMS)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "%s.ndim %" PRIu32 " is outside 1..%d", name,
                          t->ndim, TSCAN_MAX_DIMS);
    for (uint32_t d = 0; d < t->ndim; ++d)
        if (t->sizes[d] < 0)
            return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "%s.sizes[%" PRIu32 "] %" PRId64 " is negative",
                              name, d, t->sizes[d]);
    return TSCAN_SUCCESS;
}

/* Element count and the extent of the view in elements (sum of |stride| * (size - 1)) must
 * fit comfortably in 64 bits, in bytes too, so that every offset computed later is exact. */
static tscan_status check_span(const tscan_tensor *t, const char *name) {
    const int64_t limit = INT64_MAX / 16;
    int64_t count = 1, span = 0;
    for (uint32_t d = 0; d < t->ndim; ++d) {
        int64_t step, extent;
        if (__builtin_mul_overflow(count, t->sizes[d], &count) || count > limit)
            return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                              "%s has too many elements: sizes overflow 64-bit indexing at dimension %" PRIu32,
                              name, d);
        step = t->strides[d] < 0 ? -t->strides[d] : t->strides[d];
        if (t->strides[d] == INT64_MIN || __builtin_mul_overflow(step, t->sizes[d] - 1, &extent) ||
            __builtin_add_overflow(span, extent, &span) || span > limit)
            return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                              "%s.strides[%" PRIu32 "] %" PRId64 " makes the view span overflow 64-bit offsets",
                              name, d, t->strides[d]);
    }
    return TSCAN_SUCCESS;
}

void tscan_extend_offset_range(uint32_t ndim, const int64_t *sizes, const int64_t *strides, int64_t *lo,
                               int64_t *hi) {
    for (uint32_t d = 0; d < ndim; ++d) {
        int64_t extent = strides[d] * (sizes[d] - 1);
        if (extent < 0) *lo += extent; else *hi += extent;
    }
}

/* Smallest and largest element offsets of a view. */
static void offset_range(const tscan_tensor *t, int64_t *lo, int64_t *hi) {
    *lo = 0;
    *hi = 0;
    tscan_extend_offset_range(t->ndim, t->sizes, t->strides, lo, hi);
}

static int compare_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every element's byte address, sorted; NULL if out of memory. */
static int64_t *sorted_addresses(const tscan_tensor *t, int64_t count) {
    int64_t *addr = malloc((size_t)count * sizeof *addr);
    int64_t index[TSCAN_MAX_DIMS] = {0};
    int64_t es = (int64_t)tscan_dtype_size(t->dtype), offset = 0;
    const int64_t *strides = t->strides;
    if (!addr) return NULL;
    for (int64_t i = 0; i < count; ++i) {
        addr[i] = (int64_t)(intptr_t)t->data + offset * es;
        (void)tscan_next_index(t->ndim, t->sizes, t->ndim, index, 1, &strides, &offset);
    }
    qsort(addr, (size_t)count, sizeof *addr, compare_int64);
    return addr;
}

/* No two indices of the output may share an address. Sorting the dimensions by |stride|,
 * each stride clearing the whole extent of the smaller ones proves it at once; layouts
 * that interleave are enumerated exactly when small, and refused when too large to check. */
static tscan_status check_self_overlap(const tscan_tensor *t, const char *name) {
    uint32_t order[TSCAN_MAX_DIMS], used = 0;
    int64_t extent = 0, count = tscan_numel(t);
    int proven = 1;
    for (uint32_t d = 0; d < t->ndim; ++d) {
        if (t->sizes[d] <= 1) continue;
        if (t->strides[d] == 0)
            return tscan_fail(TSCAN_ERROR_OVERLAP,
                              "%s.strides[%" PRIu32 "] is 0 on a dimension of size %" PRId64
                              ": its elements would share one address",
                              name, d, t->sizes[d]);
        uint32_t k = used++;
        while (k > 0 && llabs(t->strides[order[k - 1]]) > llabs(t->strides[d])) {
            order[k] = order[k - 1];
            --k;
        }
        order[k] = d;
    }
    for (uint32_t k = 0; k < used; ++k) {
        int64_t step = llabs(t->strides[order[k]]);
        if (step <= extent) proven = 0;
        extent += step * (t->sizes[order[k]] - 1);
    }
    if (proven) return TSCAN_SUCCESS;
    if (count > TSCAN_EXACT_OVERLAP_LIMIT)
        return tscan_fail(TSCAN_ERROR_OVERLAP,
                          "%s strides interleave dimensions and its %" PRId64
                          " elements are too many to prove that none share an address",
                          name, count);
    int64_t *addr = sorted_addresses(t, count);
    if (!addr) return tscan_fail(TSCAN_ERROR_INTERNAL, "out of host memory checking %s for overlap", name);
    int64_t shared = -1;
    for (int64_t i = 1; i < count && shared < 0; ++i)
        if (addr[i] == addr[i - 1]) shared = addr[i];
    free(addr);
    if (shared >= 0)
        return tscan_fail(TSCAN_ERROR_OVERLAP, "%s strides map two elements to address 0x%" PRIx64, name,
                          (uint64_t)shared);
    return TSCAN_SUCCESS;
}

/* Input and output may be the very same view (in place, one type) or touch disjoint bytes.
 * Disjoint byte ranges settle it; otherwise small views are compared exactly, element by
 * element, each element the bytes [address, address + its size). */
static tscan_status check_cross_overlap(const tscan_tensor *in, const tscan_tensor *out) {
    const int64_t in_es = (int64_t)tscan_dtype_size(in->dtype), out_es = (int64_t)tscan_dtype_size(out->dtype);
    int64_t in_lo, in_hi, out_lo, out_hi;
    if (tscan_same_view(in, out)) return TSCAN_SUCCESS;
    offset_range(in, &in_lo, &in_hi);
    offset_range(out, &out_lo, &out_hi);
    intptr_t in_first = (intptr_t)in->data + in_lo * in_es, in_end = (intptr_t)in->data + (in_hi + 1) * in_es;
    intptr_t out_first = (intptr_t)out->data + out_lo * out_es, out_end = (intptr_t)out->data + (out_hi + 1) * out_es;
    if (in_end <= out_first || out_end <= in_first) return TSCAN_SUCCESS;
    int64_t count = tscan_numel(in);
    if (count > TSCAN_EXACT_OVERLAP_LIMIT)
        return tscan_fail(TSCAN_ERROR_OVERLAP,
                          "input bytes [0x%" PRIxPTR ", 0x%" PRIxPTR ") and output bytes [0x%" PRIxPTR
                          ", 0x%" PRIxPTR ") intersect and the two are not the same view",
                          in_first, in_end, out_first, out_end);
    int64_t *a = sorted_addresses(in, count), *b = sorted_addresses(out, count);
    int64_t shared = -1;
    if (a && b) {
        /* Merge of two sorted runs of elements: the earlier-ending one is clear of everything
         * left in the other run when it ends before that run's next start. */
        for (int64_t i = 0, j = 0; i < count && j < count && shared < 0;) {
            if (a[i] + in_es <= b[j]) ++i;
            else if (b[j] + out_es <= a[i]) ++j;
            else shared = a[i] > b[j] ? a[i] : b[j];
        }
    }
    int missing = !a || !b;
    free(a);
    free(b);
    if (missing) return tscan_fail(TSCAN_ERROR_INTERNAL, "out of host memory checking input/output overlap");
    if (shared >= 0)
        return tscan_fail(TSCAN_ERROR_OVERLAP,
                          "input and output share address 0x%" PRIx64 " without being the same view%s",
                          (uint64_t)shared, in->dtype != out->dtype ? " (in place keeps one dtype)" : "");
    return TSCAN_SUCCESS;
}

static tscan_status check_data(const tscan_tensor *t, const char *name) {
    size_t es = tscan_dtype_size(t->dtype);
    if (!t->data)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "%s.data is NULL for a non-empty tensor", name);
    if ((uintptr_t)t->data % es != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                          "%s.data %p is not aligned to the %zu-byte size of %s", name, t->data, es,
                          tscan_dtype_name(t->dtype));
    return TSCAN_SUCCESS;
}

tscan_status tscan_validate(const tscan_scan_desc *desc, const tscan_tensor *input,
                            const tscan_tensor *output) {
    tscan_status s;
    if (!desc) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "desc is NULL");
    if (!input) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "input is NULL");
    if (!output) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "output is NULL");
    if ((unsigned)desc->op >= (unsigned)TSCAN_OP_COUNT)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "desc.op %d is not a tscan_op (0..%d)", (int)desc->op,
                          TSCAN_OP_COUNT - 1);
    if ((unsigned)desc->direction > (unsigned)TSCAN_DECREASING)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "desc.direction %d is not a tscan_direction (0..1)",
                          (int)desc->direction);
    if (desc->exclusive != 0 && desc->exclusive != 1)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "desc.exclusive %d is not 0 or 1", desc->exclusive);
    if ((unsigned)desc->algo >= (unsigned)TSCAN_ALGO_COUNT)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "desc.algo %d is not a tscan_algo (0..%d)",
                          (int)desc->algo, TSCAN_ALGO_COUNT - 1);
    if ((s = tscan_check_tensor_fields(input, "input")) || (s = tscan_check_tensor_fields(output, "output")))
        return s;
    if (desc->axis >= input->ndim)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "axis %" PRIu32 " is out of range for a %" PRIu32 "-d tensor",
                          desc->axis, input->ndim);
    if (!tscan_pair_allowed(input->dtype, output->dtype))
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                          "output.dtype %s cannot hold a scan of input.dtype %s: the output must be the "
                          "input's type or a wider one of its family",
                          tscan_dtype_name(output->dtype), tscan_dtype_name(input->dtype));
    if (output->ndim != input->ndim)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "output.ndim %" PRIu32 " differs from input.ndim %" PRIu32,
                          output->ndim, input->ndim);
    for (uint32_t d = 0; d < input->ndim; ++d)
        if (output->sizes[d] != input->sizes[d])
            return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT,
                              "output.sizes[%" PRIu32 "] %" PRId64 " differs from input.sizes[%" PRIu32 "] %" PRId64,
                              d, output->sizes[d], d, input->sizes[d]);
    if ((s = check_span(input, "input")) || (s = check_span(output, "output"))) return s;
    if (tscan_numel(input) == 0) return TSCAN_SUCCESS; /* empty: valid, nothing to touch */
    if ((s = check_data(input, "input")) || (s = check_data(output, "output"))) return s;
    if ((s = check_self_overlap(output, "output"))) return s;
    return check_cross_overlap(input, output);
}
