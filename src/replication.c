/* replication.c - broadcast lines scanned once: where the input repeats along dimensions other
 * than the axis (stride 0), every line of the output along them is a copy of one distinct line.
 * AUTO then scans the distinct lines (the view with those dimensions of size 1, which the output
 * holds at their index 0) and copies them into the others (cuda/replicate.cu): the scan reads and
 * writes each distinct line once, and the copies are whole vectors of a dense output, whatever
 * layout the broadcast gave the scan. The copies read the distinct lines back from the output. */
#include <string.h>

#include "tscan_internal.h"

/* The input repeats along d (stride 0); never the axis. */
static int replicated(const tscan_problem_dim *d) { return !d->axis && d->in_stride == 0; }

int tscan_plan_replication(const tscan_problem *p, const tscan_auto_policy *policy, tscan_replication *r) {
    tscan_problem_dim dims[TSCAN_MAX_DIMS];
    memset(r, 0, sizeof *r);
    int64_t copies = 1;
    for (uint32_t d = 0; d < p->batch_ndim; ++d)
        if (p->in_batch_strides[d] == 0) copies *= p->batch_sizes[d];
    const int64_t elements = p->n * p->lines;
    if (copies < policy->replicate_min_copies || elements * (int64_t)p->out_elem_size < policy->replicate_min_output_bytes ||
        elements > (int64_t)UINT32_MAX)
        return 0;
    /* A dense output, in memory order. */
    const uint32_t count = tscan_dense_output_dims(p, dims);
    if (count == 0) return 0;
    /* Neighbours of one kind merge: a group is a run of kept or of replicated dimensions. */
    for (uint32_t k = 0; k < count; ++k) {
        if (r->groups > 0 && replicated(&dims[k]) == replicated(&dims[k - 1])) {
            r->extents[r->groups - 1] *= dims[k].size;
            continue;
        }
        if (r->groups == 0) r->first_replicated = replicated(&dims[k]);
        r->extents[r->groups++] = dims[k].size;
    }
    /* Where the copies pay (H100, bench/NOTES.md §2, "Broadcast inputs"): the distinct lines'
     * scan writes group 0's runs; runs of 128 bytes or more keep its stores whole. A repeated
     * group 0 puts the distinct elements a row apart, each in a sector of its own, and each
     * copy's vectors load them again: that pays only on a small distinct output, and only where
     * the direct kernels move repeated lines a byte or two a thread (columns' broadcast loads
     * of 8-byte lines stored 201 % of the copy; copied, 161). */
    const int64_t distinct_bytes = elements / copies * (int64_t)p->out_elem_size;
    if (r->first_replicated ? (int64_t)p->out_elem_size > policy->replicate_repeated_max_elem_bytes ||
                                  distinct_bytes > policy->replicate_repeated_max_distinct_bytes
                            : r->extents[0] * (int64_t)p->out_elem_size < policy->replicate_min_row_bytes)
        return 0;
    r->copies = copies;
    r->out = p->out;
    r->elem_size = p->out_elem_size;
    r->elements = elements;
    return 1;
}

void tscan_distinct_view(const tscan_tensor *input, const tscan_tensor *output, uint32_t axis,
                         tscan_tensor *distinct_input, tscan_tensor *distinct_output) {
    *distinct_input = *input;
    *distinct_output = *output;
    for (uint32_t d = 0; d < input->ndim; ++d)
        if (d != axis && input->strides[d] == 0) distinct_input->sizes[d] = distinct_output->sizes[d] = 1;
}
