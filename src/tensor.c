/* tensor.c - building tensor views, and reducing a validated request to its canonical
 * problem (the one form every strategy and the dispatcher reason about). */
#include <stdlib.h>
#include <string.h>

#include "tscan_internal.h"

tscan_status tscan_tensor_init(tscan_tensor *t, void *data, tscan_dtype dtype, uint32_t ndim,
                               const int64_t *sizes, const int64_t *strides) {
    tscan_tensor view;
    tscan_status s;
    if (!t) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "t is NULL");
    if (!sizes) return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "sizes is NULL");
    memset(&view, 0, sizeof view);
    view.data = data;
    view.dtype = dtype;
    view.ndim = ndim;
    if (ndim < 1 || ndim > TSCAN_MAX_DIMS) /* before sizes[] is read */
        return tscan_check_tensor_fields(&view, "tensor");
    memcpy(view.sizes, sizes, ndim * sizeof *sizes);
    if (strides) {
        memcpy(view.strides, strides, ndim * sizeof *strides);
    } else {
        int64_t packed = 1;
        for (int d = (int)ndim - 1; d >= 0; --d) {
            view.strides[d] = packed;
            packed *= sizes[d] > 0 ? sizes[d] : 1;
        }
    }
    if ((s = tscan_check_tensor_fields(&view, "tensor"))) return s;
    *t = view;
    return TSCAN_SUCCESS;
}

/* One dimension of the problem other than the axis. */
typedef struct batch_dim {
    int64_t size, in_stride, out_stride;
} batch_dim;

void tscan_problem_init(tscan_problem *p, const tscan_scan_desc *desc, const tscan_tensor *input,
                        const tscan_tensor *output) {
    batch_dim dims[TSCAN_MAX_DIMS];
    uint32_t count = 0, axis = desc->axis;
    int64_t in_es, out_es;

    memset(p, 0, sizeof *p);
    p->dtype = input->dtype;
    p->elem_size = tscan_dtype_size(input->dtype);
    p->out_dtype = output->dtype;
    p->out_elem_size = tscan_dtype_size(output->dtype);
    in_es = (int64_t)p->elem_size;
    out_es = (int64_t)p->out_elem_size;
    p->op = desc->op;
    p->exclusive = desc->exclusive;
    p->reverse = desc->direction == TSCAN_DECREASING;
    p->in = (const char *)input->data;
    p->out = (char *)output->data;
    p->n = input->sizes[axis];
    p->in_step = input->strides[axis];
    p->out_step = output->strides[axis];

    /* A view whose output runs backwards along a dimension is the same work walked the other
     * way: move the base to the far end and negate, so that one layout has one form. */
    for (uint32_t d = 0; d < input->ndim; ++d) {
        batch_dim b = {input->sizes[d], input->strides[d], output->strides[d]};
        if (d == axis || b.size == 1) continue;
        if (b.out_stride < 0 && b.in_stride <= 0) {
            p->in += (b.size - 1) * b.in_stride * in_es;
            p->out += (b.size - 1) * b.out_stride * out_es;
            b.in_stride = -b.in_stride;
            b.out_stride = -b.out_stride;
        }
        /* insertion sort: decreasing |out stride|, then |in stride| */
        uint32_t k = count++;
        while (k > 0 && (llabs(dims[k - 1].out_stride) < llabs(b.out_stride) ||
                         (llabs(dims[k - 1].out_stride) == llabs(b.out_stride) &&
                          llabs(dims[k - 1].in_stride) < llabs(b.in_stride)))) {
            dims[k] = dims[k - 1];
            --k;
        }
        dims[k] = b;
    }
    if (p->n == 1) {
        p->reverse = 0; /* a single element reads the same both ways */
    } else if (p->out_step < 0 && p->in_step <= 0) {
        p->in += (p->n - 1) * p->in_step * in_es;
        p->out += (p->n - 1) * p->out_step * out_es;
        p->in_step = -p->in_step;
        p->out_step = -p->out_step;
        p->reverse = !p->reverse;
    }

    /* Merge neighbours that both tensors lay out as one longer dimension. */
    p->lines = 1;
    for (uint32_t k = 0; k < count; ++k) {
        batch_dim b = dims[k];
        if (p->batch_ndim > 0) {
            uint32_t last = p->batch_ndim - 1;
            if (p->in_batch_strides[last] == b.in_stride * b.size &&
                p->out_batch_strides[last] == b.out_stride * b.size) {
                p->batch_sizes[last] *= b.size;
                p->in_batch_strides[last] = b.in_stride;
                p->out_batch_strides[last] = b.out_stride;
                p->lines *= b.size;
                continue;
            }
        }
        p->batch_sizes[p->batch_ndim] = b.size;
        p->in_batch_strides[p->batch_ndim] = b.in_stride;
        p->out_batch_strides[p->batch_ndim] = b.out_stride;
        p->batch_ndim++;
        p->lines *= b.size;
    }
}

int tscan_next_index(uint32_t ndim, const int64_t *sizes, uint32_t skip, int64_t *idx, int count,
                     const int64_t *const *strides, int64_t *offset) {
    for (uint32_t d = ndim; d-- > 0;) {
        if (d == skip) continue;
        for (int t = 0; t < count; ++t) offset[t] += strides[t][d];
        if (++idx[d] < sizes[d]) return 1;
        for (int t = 0; t < count; ++t) offset[t] -= strides[t][d] * sizes[d];
        idx[d] = 0;
    }
    return 0;
}

void tscan_problem_line_offsets(const tscan_problem *p, int64_t b, int64_t *in_offset,
                                int64_t *out_offset) {
    *in_offset = 0;
    *out_offset = 0;
    for (int d = (int)p->batch_ndim - 1; d >= 0; --d) {
        int64_t i = b % p->batch_sizes[d];
        b /= p->batch_sizes[d];
        *in_offset += i * p->in_batch_strides[d];
        *out_offset += i * p->out_batch_strides[d];
    }
}

uint32_t tscan_dense_output_dims(const tscan_problem *p, tscan_problem_dim *dims) {
    uint32_t count = 0;
    if (p->n > 1) dims[count++] = (tscan_problem_dim){p->n, p->in_step, p->out_step, 1};
    for (uint32_t d = 0; d < p->batch_ndim; ++d)
        dims[count++] = (tscan_problem_dim){p->batch_sizes[d], p->in_batch_strides[d], p->out_batch_strides[d], 0};
    for (uint32_t k = 1; k < count; ++k) { /* insertion sort by output stride */
        const tscan_problem_dim d = dims[k];
        uint32_t j = k;
        while (j > 0 && dims[j - 1].out_stride > d.out_stride) dims[j] = dims[j - 1], --j;
        dims[j] = d;
    }
    int64_t below = 1;
    for (uint32_t k = 0; k < count; ++k) {
        if (dims[k].out_stride != below) return 0;
        below *= dims[k].size;
    }
    return count;
}
