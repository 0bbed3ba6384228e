/* random_sweep.c - drawing the random sweep's cases (weights in bench/README.md). */
#include "random_sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data.h" /* mix64 */

/* splitmix64: mix64 of a counter advanced by the golden ratio. */
typedef struct rng {
    uint64_t state;
} rng;

static uint64_t next_u64(rng *r) {
    uint64_t x = mix64(r->state);
    r->state += UINT64_C(0x9e3779b97f4a7c15);
    return x;
}

/* Uniform in [0, 1). */
static double next_unit(rng *r) { return (double)(next_u64(r) >> 11) * 0x1p-53; }

/* Uniform in 0..n-1 (n small: the modulo bias is below 2^-50). */
static int64_t next_below(rng *r, int64_t n) { return (int64_t)(next_u64(r) % (uint64_t)n); }

/* An index drawn with probability proportional to its weight; weights not all zero. */
static int next_weighted(rng *r, const double *weights, int count) {
    double total = 0.0, x;
    int last = 0;
    for (int i = 0; i < count; ++i) total += weights[i];
    x = next_unit(r) * total;
    for (int i = 0; i < count; ++i) {
        if (weights[i] <= 0.0) continue;
        if (x < weights[i]) return i;
        x -= weights[i];
        last = i;
    }
    return last; /* rounding left x at the top */
}

/* A value of an axis, among those the mask allows (0: all), the first value (the common
 * form: sum, increasing, inclusive) weighted `first_weight` to the others' 1. */
static int draw_axis_value(rng *r, sweep_axis axis, uint32_t mask, double first_weight) {
    double weights[32];
    int count = axis_value_count(axis);
    if (!mask) mask = axis_all(axis);
    for (int v = 0; v < count; ++v) weights[v] = (mask >> v & 1) ? (v == 0 ? first_weight : 1.0) : 0.0;
    return next_weighted(r, weights, count);
}

/* Sizes whose product is about `elements`, within [min_elements, max_elements] where the
 * other sizes allow: log sizes spread uniformly over the simplex (exponential shares), a
 * quarter of them rounded to a power of two, the rest to any integer (odd ones included);
 * the largest then sets the product. */
static void draw_sizes(rng *r, uint32_t ndim, double elements, double min_elements, double max_elements,
                       int64_t *sizes) {
    double share[TSCAN_MAX_DIMS], total = 0.0, others = 1.0, size;
    uint32_t largest = 0;
    for (uint32_t d = 0; d < ndim; ++d) total += share[d] = -log(1.0 - next_unit(r));
    for (uint32_t d = 0; d < ndim; ++d) {
        size = exp(log(elements) * share[d] / total);
        if (next_below(r, 4) == 0) size = exp2(round(log2(size)));
        sizes[d] = size < 1.5 ? 1 : (int64_t)llround(size);
        if (sizes[d] > sizes[largest]) largest = d;
    }
    for (uint32_t d = 0; d < ndim; ++d)
        if (d != largest) others *= (double)sizes[d];
    size = round(elements / others);
    if (size < ceil(min_elements / others)) size = ceil(min_elements / others);
    if (size > floor(max_elements / others)) size = floor(max_elements / others);
    sizes[largest] = size < 1.0 ? 1 : (int64_t)size;
}

typedef enum random_layout {
    RANDOM_PACKED,
    RANDOM_PADDED,     /* rows of a pitch larger than the row */
    RANDOM_SLICED,     /* a strided sub-view of a larger packed tensor */
    RANDOM_TRANSPOSED, /* packed memory with its dimensions permuted */
    RANDOM_BROADCAST,  /* stride 0 on a dimension other than the axis */
    RANDOM_LAYOUT_COUNT
} random_layout;

/* The class of a drawn case names its layout kind. */
static const char *const random_classes[RANDOM_LAYOUT_COUNT] = {"random_packed", "random_padded", "random_sliced",
                                                                "random_transposed", "random_broadcast"};
static const double layout_weights[RANDOM_LAYOUT_COUNT] = {0.40, 0.15, 0.15, 0.15, 0.15};

/* The dimensions of size > 1 other than `except` (ndim for none) into wide[]; their count. */
static uint32_t wide_dims(uint32_t ndim, const int64_t *sizes, uint32_t except, uint32_t *wide) {
    uint32_t count = 0;
    for (uint32_t d = 0; d < ndim; ++d)
        if (sizes[d] > 1 && d != except) wide[count++] = d;
    return count;
}

/* One of those dimensions, uniformly; -1 if there is none. */
static int draw_wide_dim(rng *r, uint32_t ndim, const int64_t *sizes, uint32_t except) {
    uint32_t wide[TSCAN_MAX_DIMS], count = wide_dims(ndim, sizes, except, wide);
    return count ? (int)wide[next_below(r, count)] : -1;
}

/* Input strides of a layout kind for these sizes. */
static void draw_strides(rng *r, random_layout kind, uint32_t ndim, const int64_t *sizes, uint32_t axis, size_t es,
                         int64_t *strides) {
    const uint32_t last = ndim - 1;
    int64_t parent[TSCAN_MAX_DIMS], stride = 1;
    uint32_t order[TSCAN_MAX_DIMS];
    memcpy(parent, sizes, ndim * sizeof *sizes);
    switch (kind) {
    case RANDOM_PADDED: {
        /* Half of the pitches whole 128-byte lines (what cudaMallocPitch gives), half a few
         * elements over the row (misaligned rows). */
        const int64_t line = 128 / (int64_t)es;
        parent[last] = next_below(r, 2) ? (sizes[last] / line + 1) * line : sizes[last] + 1 + next_below(r, 16);
        packed_strides(ndim, parent, strides);
        break;
    }
    case RANDOM_SLICED: {
        /* parent[..., :, a:b] with a step of 2 or 3 on one dimension: rows of the parent longer
         * by up to a quarter, and one dimension strided. */
        int cut = draw_wide_dim(r, ndim, sizes, ndim);
        int64_t step = 2 + next_below(r, 2);
        if (cut < 0) cut = (int)last;
        parent[cut] *= step;
        parent[last] += 1 + next_below(r, 1 + sizes[last] / 4);
        packed_strides(ndim, parent, strides);
        strides[cut] *= step;
        break;
    }
    case RANDOM_TRANSPOSED: {
        /* Memory order: order[0] outermost. Only the order of dimensions of size > 1 changes
         * the strides that matter; when the shuffle kept it, its last two are swapped. */
        uint32_t previous = 0, kept = 1, tail[2] = {0, 0}, found = 0;
        for (uint32_t d = 0; d < ndim; ++d) order[d] = d;
        for (uint32_t d = ndim; d-- > 1;) {
            uint32_t pick = (uint32_t)next_below(r, (int64_t)d + 1), held = order[d];
            order[d] = order[pick];
            order[pick] = held;
        }
        for (uint32_t k = 0; k < ndim; ++k) {
            if (sizes[order[k]] <= 1) continue;
            if (found && order[k] < previous) kept = 0;
            previous = order[k];
            tail[0] = tail[1];
            tail[1] = k;
            ++found;
        }
        if (kept && found >= 2) {
            uint32_t held = order[tail[0]];
            order[tail[0]] = order[tail[1]];
            order[tail[1]] = held;
        }
        for (uint32_t k = ndim; k-- > 0;) {
            strides[order[k]] = stride;
            stride *= sizes[order[k]];
        }
        break;
    }
    case RANDOM_BROADCAST: {
        int spread = draw_wide_dim(r, ndim, sizes, axis);
        parent[spread] = 1;
        packed_strides(ndim, parent, strides);
        strides[spread] = 0;
        break;
    }
    default: packed_strides(ndim, sizes, strides); break;
    }
}

/* Elements a view of these strides spans, from its lowest address to its highest. */
static double span_elements(uint32_t ndim, const int64_t *sizes, const int64_t *strides) {
    double span = 1.0;
    for (uint32_t d = 0; d < ndim; ++d) span += (double)(sizes[d] - 1) * fabs((double)strides[d]);
    return span;
}

/* The output dtype of a case: one in RANDOM_WIDER_ONE_IN of those whose dtype has a wider
 * output (integers, float16, bfloat16, float32) takes one, uniformly among those that keep
 * the case's input span and output within `limit` bytes; -1 (the input's dtype) otherwise.
 * Drawn last, so that every other draw of a case is as without wider outputs. */
static int draw_output_dtype(rng *r, int dtype, double input_bytes, double numel, double limit) {
    int wider[TSCAN_DTYPE_COUNT], count = 0;
    if (next_below(r, RANDOM_WIDER_ONE_IN) != 0) return -1;
    for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out)
        if (out != dtype && tscan_output_dtype_allowed((tscan_dtype)dtype, (tscan_dtype)out) &&
            input_bytes + numel * (double)tscan_dtype_size((tscan_dtype)out) <= limit)
            wider[count++] = out;
    return count ? wider[next_below(r, count)] : -1;
}

/* Draws case `index` of the sweep: a function of (seed, index, spec) alone, so that a longer
 * sweep of the same seed starts with the same cases. */
static int draw_case(bench_sweep *sweep, const random_spec *spec, uint64_t seed, size_t index, char *err,
                     size_t errlen) {
    static const double ndim_weights[TSCAN_MAX_DIMS] = {0.20, 0.25, 0.20, 0.15, 0.05, 0.05, 0.05, 0.05};
    rng r = {mix64(mix64(seed) + (uint64_t)index)};
    uint32_t masks[AXIS_COUNT], ndim, axis, wide[TSCAN_MAX_DIMS];
    int64_t sizes[TSCAN_MAX_DIMS], strides[TSCAN_MAX_DIMS];
    double weights[RANDOM_LAYOUT_COUNT], elements, numel = 1.0;
    random_layout kind = RANDOM_PACKED;
    bench_shape shape;
    size_t es, id;
    char message[160];
    int dtype = draw_axis_value(&r, AXIS_DTYPE, spec->masks[AXIS_DTYPE], 1.0), wide_axis;

    /* Three in four cases take the common form of each of op, direction, exclusive. */
    masks[AXIS_DTYPE] = UINT32_C(1) << dtype;
    masks[AXIS_OP] = UINT32_C(1) << draw_axis_value(&r, AXIS_OP, spec->masks[AXIS_OP], 3.0);
    masks[AXIS_DIRECTION] = UINT32_C(1) << draw_axis_value(&r, AXIS_DIRECTION, spec->masks[AXIS_DIRECTION], 3.0);
    masks[AXIS_EXCLUSIVE] = UINT32_C(1) << draw_axis_value(&r, AXIS_EXCLUSIVE, spec->masks[AXIS_EXCLUSIVE], 3.0);
    masks[AXIS_ALGO] = spec->masks[AXIS_ALGO] ? spec->masks[AXIS_ALGO] : axis_all(AXIS_ALGO);

    es = tscan_dtype_size((tscan_dtype)dtype);
    elements = spec->min_bytes * pow(spec->max_bytes / spec->min_bytes, next_unit(&r)) / (double)es;
    ndim = 1 + (uint32_t)next_weighted(&r, ndim_weights, TSCAN_MAX_DIMS);
    draw_sizes(&r, ndim, elements < 1.0 ? 1.0 : elements, spec->min_bytes / (double)es,
               spec->max_bytes / (double)es, sizes);
    wide_axis = draw_wide_dim(&r, ndim, sizes, ndim);
    axis = wide_axis < 0 ? 0 : (uint32_t)wide_axis;
    for (uint32_t d = 0; d < ndim; ++d) numel *= (double)sizes[d];

    /* The kinds this shape can take; one whose draw spans too much memory is drawn again (a
     * few times at most, then packed). */
    memcpy(weights, layout_weights, sizeof weights);
    if (ndim < 2) weights[RANDOM_PADDED] = 0.0;
    if (!wide_dims(ndim, sizes, axis, wide)) weights[RANDOM_TRANSPOSED] = weights[RANDOM_BROADCAST] = 0.0;
    for (int attempt = 0; attempt < 8; ++attempt) {
        kind = (random_layout)next_weighted(&r, weights, RANDOM_LAYOUT_COUNT);
        draw_strides(&r, kind, ndim, sizes, axis, es, strides);
        if (span_elements(ndim, sizes, strides) <= RANDOM_MAX_SPAN_FACTOR * numel)
            break;
        kind = RANDOM_PACKED;
    }
    if (shape_init(&shape, random_classes[kind], ndim, sizes, axis, kind == RANDOM_PACKED ? LAYOUT_PACKED
                                                                                          : LAYOUT_STRIDED,
                   strides, NULL, message, sizeof message)) {
        snprintf(err, errlen, "random case %zu: %s", index, message);
        return -1;
    }
    if ((id = sweep_add_shape(sweep, &shape)) == (size_t)-1 || sweep_add_entry(sweep, &id, 1, masks)) {
        snprintf(err, errlen, "out of host memory building the random sweep");
        return -1;
    }
    sweep->entries[sweep->entry_count - 1].output_dtype =
        draw_output_dtype(&r, dtype, span_elements(ndim, sizes, shape.in_strides) * (double)es, numel,
                          (RANDOM_MAX_SPAN_FACTOR + 1) * spec->max_bytes);
    return 0;
}

int sweep_random(bench_sweep *sweep, const random_spec *spec, uint64_t seed, char *err, size_t errlen) {
    memset(sweep, 0, sizeof *sweep);
    for (size_t i = 0; i < spec->count; ++i)
        if (draw_case(sweep, spec, seed, i, err, errlen)) {
            sweep_free(sweep);
            return -1;
        }
    return 0;
}
