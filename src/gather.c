/* gather.c - permuted inputs gathered into the output, then scanned in place. Where the input's
 * unit stride lies on another dimension than the output's, columns' thread a line can read
 * every element from a sector of its own: its warp's lanes (the output's neighbouring lines)
 * lie a sector or more apart in the input, and the lines that share each sector (the input's
 * unit-stride neighbours) are more than a block apart, so no cache keeps the sector between
 * them (H100, 5x3x5x4x2x521x390 int32 along its axis of 3: 8.3 % of the copy). AUTO instead
 * copies the input into the output in the output's order (cuda/gather.cu: tiles through shared
 * memory, read along the input's contiguous run and written along the output's) and scans the
 * output in place, dense. The copy moves an element at a time, at 200-400 G elements a second
 * on the H100 (bench/NOTES.md §2, "Permuted inputs"): it pays only against a sector an element. */
#include <stdlib.h>
#include <string.h>

#include "tscan_internal.h"

enum { TSCAN_SECTOR_BYTES = 32 }; /* the memory system's unit of transfer */

static void radix_push(tscan_radix *r, int64_t size, int64_t stride) {
    r->sizes[r->ndim] = size;
    r->strides[r->ndim] = stride;
    ++r->ndim;
}

int tscan_plan_gather(const tscan_problem *p, const tscan_auto_policy *policy, tscan_gather *g) {
    tscan_problem_dim dims[TSCAN_MAX_DIMS];
    memset(g, 0, sizeof *g);
    const int64_t elements = p->n * p->lines;
    /* The kernel indexes elements and tiles in 32 bits, and its grid-stride loop passes the last
     * tile by a grid at most (cuda/gather/kernel.cuh). */
    if (p->elem_size != p->out_elem_size || elements * (int64_t)p->out_elem_size < policy->gather_min_output_bytes ||
        elements > (int64_t)INT32_MAX)
        return 0;
    /* Columns' lanes: the output's fastest batch dimension (the canonical problem's last). */
    if (p->batch_ndim == 0 ||
        llabs(p->in_batch_strides[p->batch_ndim - 1]) * (int64_t)p->elem_size < policy->gather_min_lane_gap_bytes)
        return 0;
    const uint32_t count = tscan_dense_output_dims(p, dims);
    if (count == 0) return 0;
    /* Permuted: the input's unit stride on a batch dimension other than the output's fastest.
     * (Validation refuses an input that overlaps the output unless it is the same view, which is
     * not permuted: the copy never overwrites input it has yet to read.) */
    uint32_t unit = count;
    for (uint32_t k = 0; k < count; ++k)
        if (dims[k].in_stride == 1) unit = k;
    if (unit == count || unit == 0 || dims[unit].axis) return 0;
    /* Lines that share a sector of the input: the unit stride's neighbours, as many lines apart
     * as the batch dimensions faster than it in the output hold. */
    int64_t sharing_lines = 1;
    for (uint32_t k = 0; k < unit; ++k)
        if (!dims[k].axis) sharing_lines *= dims[k].size;
    if (sharing_lines < policy->gather_min_sharing_lines) return 0;
    /* 8-byte elements fill a quarter of each sector, and where the lines that share one lie
     * within the L2's reach, columns reads it from there again at half the copy or more (H100,
     * 3x8x1000x1000 float64 along its axis of 3, a sector shared 1000 lines apart: 54 % of the
     * copy against the gather's 47); beyond it, from DRAM (5x3x5x4x2x521x390, 406380 lines
     * apart: 15.5 against 37.9). */
    if (p->elem_size == 8 && sharing_lines * p->n * TSCAN_SECTOR_BYTES < policy->gather_wide_min_reuse_bytes) return 0;
    /* U: the input's contiguous run from its unit stride, never the output's fastest dimension. */
    int in_u[TSCAN_MAX_DIMS] = {0};
    int64_t next = 1;
    for (uint32_t k = unit; k < count;) {
        in_u[k] = 1;
        radix_push(&g->u_out, dims[k].size, dims[k].out_stride);
        next *= dims[k].size;
        uint32_t j = 1;
        while (j < count && (in_u[j] || dims[j].in_stride != next)) ++j;
        k = j;
    }
    g->u_extent = next;
    /* V: the output's contiguous run from its unit stride, up to the first dimension of U. */
    g->v_extent = g->rest_extent = 1;
    uint32_t k = 0;
    for (; k < count && !in_u[k]; ++k) {
        radix_push(&g->v_in, dims[k].size, dims[k].in_stride);
        g->v_extent *= dims[k].size;
    }
    for (; k < count; ++k)
        if (!in_u[k]) {
            radix_push(&g->rest_in, dims[k].size, dims[k].in_stride);
            radix_push(&g->rest_out, dims[k].size, dims[k].out_stride);
            g->rest_extent *= dims[k].size;
        }
    g->in = p->in;
    g->out = p->out;
    g->elem_size = p->elem_size;
    return 1;
}
