/* testutil.c - the shared test utilities declared in testutil.h. */
#include "testutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- RNG ------------------------------------------------------------------------------ */

tu_rng tu_rng_make(uint64_t seed) {
    tu_rng r = {seed};
    return r;
}

uint64_t tu_rng_u64(tu_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t tu_rng_below(tu_rng *r, uint64_t n) {
    /* Reject the lowest 2^64 mod n values so that every residue is equally likely. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = tu_rng_u64(r);
        if (x >= threshold)
            return x % n;
    }
}

int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    uint64_t offset = span == 0 ? tu_rng_u64(r) : tu_rng_below(r, span); /* span 0: all of int64 */
    return (int64_t)((uint64_t)lo + offset);
}

double tu_rng_unit(tu_rng *r) { return (double)(tu_rng_u64(r) >> 11) * 0x1p-53; }

uint64_t tu_seed(const char *name, uint64_t index) {
    uint64_t h = 0xcbf29ce484222325u;
    for (const char *c = name; *c; ++c)
        h = (h ^ (unsigned char)*c) * 0x100000001b3u;
    tu_rng r = tu_rng_make(h ^ index);
    return tu_rng_u64(&r);
}

/* ---- dtype facts and element access ----------------------------------------------------- */

int tu_dtype_is_float(tscan_dtype t) {
    return t == TSCAN_FLOAT32 || t == TSCAN_FLOAT16 || t == TSCAN_BFLOAT16 || t == TSCAN_FLOAT64;
}

int tu_dtype_is_signed_int(tscan_dtype t) {
    return t == TSCAN_INT8 || t == TSCAN_INT16 || t == TSCAN_INT32 || t == TSCAN_INT64;
}

double tu_get(tscan_dtype t, const void *p) {
    switch (t) {
    case TSCAN_FLOAT32: return *(const float *)p;
    case TSCAN_FLOAT16: return tscan_half_to_float(*(const uint16_t *)p);
    case TSCAN_BFLOAT16: return tscan_bfloat16_to_float(*(const uint16_t *)p);
    case TSCAN_FLOAT64: return *(const double *)p;
    case TSCAN_INT8: return *(const int8_t *)p;
    case TSCAN_UINT8: return *(const uint8_t *)p;
    case TSCAN_INT16: return *(const int16_t *)p;
    case TSCAN_UINT16: return *(const uint16_t *)p;
    case TSCAN_INT32: return *(const int32_t *)p;
    case TSCAN_UINT32: return *(const uint32_t *)p;
    case TSCAN_INT64: return (double)*(const int64_t *)p;
    case TSCAN_UINT64: return (double)*(const uint64_t *)p;
    default: abort();
    }
}

void tu_set(tscan_dtype t, void *p, double v) {
    switch (t) {
    case TSCAN_FLOAT32: *(float *)p = (float)v; return;
    case TSCAN_FLOAT16: *(uint16_t *)p = tscan_float_to_half((float)v); return;
    case TSCAN_BFLOAT16: *(uint16_t *)p = tscan_float_to_bfloat16((float)v); return;
    case TSCAN_FLOAT64: *(double *)p = v; return;
    default: tu_set_u64(t, p, v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v); return;
    }
}

uint64_t tu_get_u64(tscan_dtype t, const void *p) {
    int is_signed = tu_dtype_is_signed_int(t);
    switch (tscan_dtype_size(t)) {
    case 1: return is_signed ? (uint64_t)*(const int8_t *)p : *(const uint8_t *)p;
    case 2: return is_signed ? (uint64_t)*(const int16_t *)p : *(const uint16_t *)p;
    case 4: return is_signed ? (uint64_t)*(const int32_t *)p : *(const uint32_t *)p;
    case 8: return *(const uint64_t *)p;
    default: abort();
    }
}

void tu_set_u64(tscan_dtype t, void *p, uint64_t v) {
    switch (tscan_dtype_size(t)) {
    case 1: *(uint8_t *)p = (uint8_t)v; return;
    case 2: *(uint16_t *)p = (uint16_t)v; return;
    case 4: *(uint32_t *)p = (uint32_t)v; return;
    case 8: *(uint64_t *)p = v; return;
    default: abort();
    }
}

int tu_values_equal(tscan_dtype t, const void *a, const void *b) {
    if (!tu_dtype_is_float(t))
        return tu_get_u64(t, a) == tu_get_u64(t, b);
    double x = tu_get(t, a), y = tu_get(t, b);
    return (x == y && !signbit(x) == !signbit(y)) || (isnan(x) && isnan(y));
}

/* ---- views ------------------------------------------------------------------------------ */

void *tu_elem(const tscan_tensor *t, const int64_t *idx) {
    int64_t offset = 0;
    for (uint32_t d = 0; d < t->ndim; ++d)
        offset += idx[d] * t->strides[d];
    return (char *)t->data + offset * (int64_t)tscan_dtype_size(t->dtype);
}

int tu_next_index(const tscan_tensor *t, int64_t *idx) {
    for (uint32_t d = t->ndim; d-- > 0;) {
        if (++idx[d] < t->sizes[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

tscan_tensor tu_view_rebase(const tscan_tensor *t, const void *from, void *to) {
    tscan_tensor r = *t;
    r.data = (char *)to + ((const char *)t->data - (const char *)from);
    return r;
}

tscan_tensor tu_view_reversed(const tscan_tensor *t, uint32_t dim) {
    tscan_tensor r = *t;
    if (t->sizes[dim] > 0) {
        int64_t idx[TSCAN_MAX_DIMS] = {0};
        idx[dim] = t->sizes[dim] - 1;
        r.data = tu_elem(t, idx);
    }
    r.strides[dim] = -t->strides[dim];
    return r;
}

static void packed_strides(uint32_t ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (uint32_t d = ndim; d-- > 0;) {
        strides[d] = s;
        s *= sizes[d] > 0 ? sizes[d] : 1;
    }
}

static void *checked_malloc(size_t bytes) {
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "testutil: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

static void *duplicate(const void *src, size_t bytes) {
    return memcpy(checked_malloc(bytes), src, bytes);
}

tscan_tensor tu_packed_copy(const tscan_tensor *t, void **buf) {
    size_t elem = tscan_dtype_size(t->dtype);
    int64_t count = tscan_numel(t);
    tscan_tensor r = *t;
    *buf = checked_malloc((size_t)count * elem);
    r.data = *buf;
    packed_strides(t->ndim, t->sizes, r.strides);
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (count > 0)
        do
            memcpy(tu_elem(&r, idx), tu_elem(t, idx), elem);
        while (tu_next_index(t, idx));
    return r;
}

/* ---- random data -------------------------------------------------------------------------- */

const char *tu_data_name(tu_data kind) {
    switch (kind) {
    case TU_DATA_SMALL_INT: return "small_int";
    case TU_DATA_POW2: return "pow2";
    case TU_DATA_RANDOM: return "random";
    case TU_DATA_NEAR_ONE: return "near_one";
    default: return "?";
    }
}

void tu_random_elem(tu_rng *r, tscan_dtype t, tu_data kind, void *p) {
    int is_float = tu_dtype_is_float(t);
    int has_sign = is_float || tu_dtype_is_signed_int(t);
    double sign = has_sign && tu_rng_below(r, 2) ? -1.0 : 1.0;
    switch (kind) {
    case TU_DATA_SMALL_INT:
        tu_set(t, p, (double)(has_sign ? tu_rng_range(r, -2, 2) : tu_rng_range(r, 0, 4)));
        return;
    case TU_DATA_POW2:
        tu_set(t, p, sign * (double)tu_rng_range(r, 1, 2));
        return;
    case TU_DATA_RANDOM:
    case TU_DATA_NEAR_ONE:
        if (!is_float)
            tu_set_u64(t, p, tu_rng_u64(r));
        else if (kind == TU_DATA_RANDOM)
            tu_set(t, p, 2.0 * tu_rng_unit(r) - 1.0);
        else
            tu_set(t, p, sign * exp2(2.0 * tu_rng_unit(r) - 1.0));
        return;
    default: abort();
    }
}

void tu_fill(tu_rng *r, const tscan_tensor *t, tu_data kind) {
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (tscan_numel(t) > 0)
        do
            tu_random_elem(r, t->dtype, kind, tu_elem(t, idx));
        while (tu_next_index(t, idx));
}

/* ---- cases and layouts ---------------------------------------------------------------- */

const char *tu_layout_name(tu_layout_kind kind) {
    switch (kind) {
    case TU_LAYOUT_PACKED: return "packed";
    case TU_LAYOUT_PERMUTED: return "permuted";
    case TU_LAYOUT_PADDED: return "padded";
    case TU_LAYOUT_NEGATIVE: return "negative";
    case TU_LAYOUT_BROADCAST: return "broadcast";
    case TU_LAYOUT_IN_PLACE: return "in_place";
    case TU_LAYOUT_TRANSPOSED: return "transposed";
    case TU_LAYOUT_PITCHED: return "pitched";
    default: return "?";
    }
}

void tu_case_describe(const tu_case *c, char *buf, size_t size) {
    char sizes[TSCAN_MAX_DIMS * 24] = "";
    size_t used = 0;
    for (uint32_t d = 0; d < c->ndim && used < sizeof sizes; ++d)
        used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%" PRId64, d ? "," : "",
                                 c->sizes[d]);
    const char *algo = tscan_algo_name(c->desc.algo), *out = tscan_dtype_name(c->wider_dtype);
    snprintf(buf, size, "%s%s%s %s axis %u %s %s sizes {%s} %s %s algo %s seed 0x%" PRIx64,
             tscan_dtype_name(c->dtype) ? tscan_dtype_name(c->dtype) : "?", c->wider ? "->" : "",
             c->wider ? (out ? out : "?") : "",
             tscan_op_name(c->desc.op) ? tscan_op_name(c->desc.op) : "?", c->desc.axis,
             c->desc.direction == TSCAN_DECREASING ? "decreasing" : "increasing",
             c->desc.exclusive ? "exclusive" : "inclusive", sizes, tu_layout_name(c->layout),
             tu_data_name(c->data), algo ? algo : "?", c->seed);
}

tscan_dtype tu_case_out_dtype(const tu_case *c) { return c->wider ? c->wider_dtype : c->dtype; }

/* Elements of slack before and after each view (plus a random 0..3 before it). */
enum { SLACK = 8 };

/* How a view sits in memory: dimension order, gaps, and which strides are negated or 0. */
typedef struct view_plan {
    uint32_t order[TSCAN_MAX_DIMS]; /* order[0] is the outermost dimension in memory */
    int64_t pad[TSCAN_MAX_DIMS];    /* extra elements of extent per dimension */
    int64_t inner_step;             /* stride of the innermost stored dimension */
    unsigned negated, broadcast;    /* bit d: stride of dimension d negated / 0 */
} view_plan;

static view_plan plan_packed(uint32_t ndim) {
    view_plan p = {.inner_step = 1};
    for (uint32_t d = 0; d < ndim; ++d)
        p.order[d] = d;
    return p;
}

static void shuffle_order(tu_rng *r, view_plan *p, uint32_t ndim) {
    for (uint32_t i = ndim; i > 1; --i) {
        uint32_t j = (uint32_t)tu_rng_below(r, i);
        uint32_t tmp = p->order[i - 1];
        p->order[i - 1] = p->order[j];
        p->order[j] = tmp;
    }
}

static void add_padding(tu_rng *r, view_plan *p, uint32_t ndim) {
    p->inner_step = tu_rng_range(r, 1, 2);
    for (uint32_t d = 0; d < ndim; ++d)
        p->pad[d] = tu_rng_range(r, 0, 2);
}

/* A random non-empty subset of c's dimensions longer than 1 (of all of them when none
 * is), so that a negated or broadcast stride changes the layout. */
static unsigned random_dims(tu_rng *r, const tu_case *c) {
    unsigned candidates = 0;
    for (uint32_t d = 0; d < c->ndim; ++d)
        if (c->sizes[d] > 1)
            candidates |= 1u << d;
    if (candidates == 0)
        candidates = (1u << c->ndim) - 1;
    unsigned chosen;
    do
        chosen = (unsigned)tu_rng_below(r, 1u << c->ndim) & candidates;
    while (chosen == 0);
    return chosen;
}

/* The view of plan p for case c, of dtype `dtype`, in a new poisoned buffer. */
static tscan_tensor make_view(const tu_case *c, tscan_dtype dtype, const view_plan *p, tu_rng *r,
                              unsigned char **buf, size_t *bytes) {
    tscan_tensor t = {.dtype = dtype, .ndim = c->ndim};
    int64_t step = p->inner_step;
    for (uint32_t i = c->ndim; i-- > 0;) {
        uint32_t d = p->order[i];
        t.sizes[d] = c->sizes[d];
        if (p->broadcast & (1u << d)) {
            t.strides[d] = 0;
            continue;
        }
        t.strides[d] = p->negated & (1u << d) ? -step : step;
        step *= (c->sizes[d] > 0 ? c->sizes[d] : 1) + p->pad[d];
    }
    int64_t lowest = 0, highest = 0, span = 0;
    if (tscan_numel(&t) > 0) {
        for (uint32_t d = 0; d < c->ndim; ++d) {
            int64_t reach = (t.sizes[d] - 1) * t.strides[d];
            if (reach < 0)
                lowest += reach;
            else
                highest += reach;
        }
        span = highest - lowest + 1;
    }
    size_t elem = tscan_dtype_size(dtype);
    const int64_t jitter = tu_rng_range(r, 0, 3); /* drawn either way: the other choices stay */
    int64_t lead = SLACK + (c->aligned ? 0 : jitter);
    *bytes = (size_t)(lead + span + SLACK) * elem;
    *buf = checked_malloc(*bytes);
    memset(*buf, TU_POISON, *bytes);
    t.data = *buf + (size_t)(lead - lowest) * elem;
    return t;
}

void tu_layout_make(tu_layout *l, const tu_case *c) {
    memset(l, 0, sizeof *l);
    l->c = *c;
    tu_rng r = tu_rng_make(c->seed);
    uint32_t ndim = c->ndim;
    view_plan in = plan_packed(ndim), out = plan_packed(ndim);
    switch (c->layout) {
    case TU_LAYOUT_PACKED: break;
    case TU_LAYOUT_PERMUTED:
        shuffle_order(&r, &in, ndim);
        shuffle_order(&r, &out, ndim);
        break;
    case TU_LAYOUT_PADDED:
        add_padding(&r, &in, ndim);
        add_padding(&r, &out, ndim);
        break;
    case TU_LAYOUT_NEGATIVE:
        in.negated = random_dims(&r, c);
        out.negated = random_dims(&r, c);
        break;
    case TU_LAYOUT_BROADCAST: in.broadcast = random_dims(&r, c); break;
    case TU_LAYOUT_IN_PLACE:
        shuffle_order(&r, &in, ndim);
        add_padding(&r, &in, ndim);
        in.negated = (unsigned)tu_rng_below(&r, 1u << ndim);
        break;
    case TU_LAYOUT_TRANSPOSED:
        for (uint32_t d = 0; d < ndim; ++d)
            in.order[d] = ndim - 1 - d;
        break;
    case TU_LAYOUT_PITCHED: in.pad[ndim - 1] = 1; break;
    default: abort();
    }
    if (c->wider && c->layout == TU_LAYOUT_IN_PLACE) {
        fprintf(stderr, "testutil: an in-place case keeps one dtype (CONTRACT §1.2)\n");
        abort();
    }
    l->input = make_view(c, c->dtype, &in, &r, &l->in_buf, &l->in_bytes);
    if (c->layout == TU_LAYOUT_IN_PLACE) {
        l->out_buf = l->in_buf;
        l->out_bytes = l->in_bytes;
        l->output = l->input;
    } else {
        l->output = make_view(c, tu_case_out_dtype(c), &out, &r, &l->out_buf, &l->out_bytes);
    }
    tu_fill(&r, &l->input, c->data);
    l->in_init = duplicate(l->in_buf, l->in_bytes);
    l->out_init = l->out_buf == l->in_buf ? l->in_init : duplicate(l->out_buf, l->out_bytes);
}

void tu_layout_free(tu_layout *l) {
    if (l->out_buf != l->in_buf) {
        free(l->out_buf);
        free(l->out_init);
    }
    free(l->in_buf);
    free(l->in_init);
    memset(l, 0, sizeof *l);
}

tscan_tensor tu_layout_input_init(const tu_layout *l) {
    return tu_view_rebase(&l->input, l->in_buf, l->in_init);
}

unsigned char *tu_layout_expected(const tu_layout *l) {
    unsigned char *expected = duplicate(l->out_init, l->out_bytes);
    int in_place = l->out_buf == l->in_buf;
    /* A copy of the input even where it is only read, so the snapshot stays pristine. */
    unsigned char *input_copy = in_place ? expected : duplicate(l->in_init, l->in_bytes);
    tscan_tensor input = tu_view_rebase(&l->input, l->in_buf, input_copy);
    tscan_tensor output = tu_view_rebase(&l->output, l->out_buf, expected);
    tscan_status s = tscan_scan_reference(&l->c.desc, &input, &output);
    if (!in_place)
        free(input_copy);
    if (s != TSCAN_SUCCESS) {
        char what[256];
        tu_case_describe(&l->c, what, sizeof what);
        fprintf(stderr, "testutil: reference failed on %s: %s (%s)\n", what,
                tscan_status_string(s), tscan_last_error());
        abort();
    }
    return expected;
}

void tu_matrix_case(size_t index, tu_case *c) {
    size_t i = index;
    memset(c, 0, sizeof *c);
    c->layout = (tu_layout_kind)(i % TU_LAYOUT_COUNT);
    i /= TU_LAYOUT_COUNT;
    c->ndim = (uint32_t)(i % TSCAN_MAX_DIMS) + 1;
    i /= TSCAN_MAX_DIMS;
    c->desc.exclusive = (int)(i % 2);
    i /= 2;
    c->desc.direction = (tscan_direction)(i % 2);
    i /= 2;
    c->desc.op = (tscan_op)(i % TSCAN_OP_COUNT);
    i /= TSCAN_OP_COUNT;
    c->dtype = (tscan_dtype)(i % TSCAN_DTYPE_COUNT);
    c->desc.algo = TSCAN_ALGO_AUTO;
    c->seed = tu_seed("tu_matrix_case", index);

    tu_rng r = tu_rng_make(c->seed ^ 0x5eed);
    c->desc.axis = (uint32_t)tu_rng_below(&r, c->ndim);
    for (uint32_t d = 0; d < c->ndim; ++d)
        c->sizes[d] = d == c->desc.axis ? tu_rng_range(&r, 1, 9) : tu_rng_range(&r, 1, 3);
    if (tu_rng_below(&r, 32) == 0)
        c->sizes[tu_rng_below(&r, c->ndim)] = 0;
    if (!tu_dtype_is_float(c->dtype))
        c->data = TU_DATA_RANDOM;
    else if (c->desc.op == TSCAN_OP_SUM)
        c->data = tu_rng_below(&r, 2) ? TU_DATA_RANDOM : TU_DATA_SMALL_INT;
    else {
        static const tu_data prod_data[] = {TU_DATA_SMALL_INT, TU_DATA_POW2, TU_DATA_NEAR_ONE};
        c->data = prod_data[tu_rng_below(&r, 3)];
    }
}

/* ---- checks --------------------------------------------------------------------------- */

double tu_case_tolerance_k(const tu_case *c) {
    if (!tu_dtype_is_float(c->dtype) || c->data == TU_DATA_SMALL_INT || c->data == TU_DATA_POW2)
        return 0.0;
    return TU_TOLERANCE_K;
}

/* Unit roundoff of t's accumulator (see TU_TOLERANCE_K). */
static double accumulator_roundoff(tscan_dtype t) { return t == TSCAN_FLOAT64 ? 0x1p-53 : 0x1p-24; }

/* Spacing of float dtype t's values at |v|: 2^(binade - fraction bits), with the binade
 * never below the smallest normal one (subnormals share its spacing). */
static double output_ulp(tscan_dtype t, double v) {
    int fraction_bits, min_binade;
    switch (t) {
    case TSCAN_FLOAT16: fraction_bits = 10, min_binade = -14; break;
    case TSCAN_BFLOAT16: fraction_bits = 7, min_binade = -126; break;
    case TSCAN_FLOAT32: fraction_bits = 23, min_binade = -126; break;
    default: fraction_bits = 52, min_binade = -1022; break;
    }
    int e = 0;
    frexp(v, &e); /* |v| = m·2^e with m in [0.5, 1): binade e - 1 */
    int binade = v != 0.0 && e - 1 > min_binade ? e - 1 : min_binade;
    return ldexp(1.0, binade - fraction_bits);
}

static void format_index(const int64_t *idx, uint32_t ndim, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "{");
    for (uint32_t d = 0; d < ndim && used < size; ++d)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, d ? "," : "", idx[d]);
    if (used < size)
        snprintf(buf + used, size - used, "}");
}

static void format_value(tscan_dtype t, const void *p, char *buf, size_t size) {
    if (tu_dtype_is_float(t))
        snprintf(buf, size, "%.17g", tu_get(t, p));
    else if (tu_dtype_is_signed_int(t))
        snprintf(buf, size, "%" PRId64, (int64_t)tu_get_u64(t, p));
    else
        snprintf(buf, size, "%" PRIu64, tu_get_u64(t, p));
}

/* Whether a (actual) matches b (expected) of float dtype t within `accumulated` plus one
 * output ulp. */
static int floats_match(tscan_dtype t, double a, double b, double accumulated) {
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (a == b)
        return 1;
    if (isinf(a) || isinf(b))
        return 0;
    return fabs(a - b) <= accumulated + output_ulp(t, fmax(fabs(a), fabs(b)));
}

int tu_compare_views(const tscan_scan_desc *desc, const tscan_tensor *input,
                     const tscan_tensor *expected, const tscan_tensor *actual, double k, char *msg,
                     size_t msg_size) {
    if (tscan_numel(expected) == 0)
        return 1;
    const tscan_dtype t = expected->dtype;
    const int is_float = tu_dtype_is_float(t), sum = desc->op == TSCAN_OP_SUM;
    const uint32_t axis = desc->axis;
    const int64_t n = expected->sizes[axis];
    const double u = accumulator_roundoff(t);

    /* Walk each line in scan order, carrying the bound's terms: S = Σ|x|, P = Π|x| and
     * their count m over the elements that the current output covers. */
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    for (;;) {
        double abs_sum = 0.0, abs_prod = 1.0, terms = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            idx[axis] = desc->direction == TSCAN_DECREASING ? n - 1 - j : j;
            double x = is_float ? fabs(tu_get(input->dtype, tu_elem(input, idx))) : 0.0;
            if (!desc->exclusive) {
                abs_sum += x;
                abs_prod *= x;
                terms += 1.0;
            }
            const void *e = tu_elem(expected, idx), *a = tu_elem(actual, idx);
            int ok = !is_float || k == 0.0
                         ? tu_values_equal(t, e, a)
                         : floats_match(t, tu_get(t, a), tu_get(t, e),
                                        k * u * (sum ? abs_sum : terms * abs_prod));
            if (!ok) {
                char where[TSCAN_MAX_DIMS * 24], want[64], got[64];
                format_index(idx, expected->ndim, where, sizeof where);
                format_value(t, e, want, sizeof want);
                format_value(t, a, got, sizeof got);
                snprintf(msg, msg_size, "element %s: expected %s, got %s (k = %g)", where, want, got, k);
                return 0;
            }
            if (desc->exclusive) {
                abs_sum += x;
                abs_prod *= x;
                terms += 1.0;
            }
        }
        idx[axis] = 0;
        uint32_t d = expected->ndim;
        while (d-- > 0) {
            if (d == axis)
                continue;
            if (++idx[d] < expected->sizes[d])
                break;
            idx[d] = 0;
        }
        if (d == UINT32_MAX)
            return 1;
    }
}

int tu_outside_view_unchanged(const tscan_tensor *view, const void *buf, const void *orig,
                              size_t bytes, char *msg, size_t msg_size) {
    const unsigned char *b = buf, *o = orig;
    const size_t elem = tscan_dtype_size(view->dtype);
    unsigned char *inside = calloc(bytes > 0 ? bytes : 1, 1);
    if (!inside)
        abort();
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (tscan_numel(view) > 0)
        do {
            ptrdiff_t at = (const unsigned char *)tu_elem(view, idx) - b;
            if (at < 0 || (size_t)at + elem > bytes) {
                snprintf(msg, msg_size, "view element at byte %td lies outside the %zu-byte buffer", at, bytes);
                free(inside);
                return 0;
            }
            memset(inside + at, 1, elem);
        } while (tu_next_index(view, idx));
    for (size_t i = 0; i < bytes; ++i) {
        if (!inside[i] && b[i] != o[i]) {
            snprintf(msg, msg_size, "byte %zu outside the output view changed from 0x%02x to 0x%02x", i,
                     o[i], b[i]);
            free(inside);
            return 0;
        }
    }
    free(inside);
    return 1;
}

int tu_check_output(const tu_layout *l, const void *actual, const void *expected, double k,
                    char *msg, size_t msg_size) {
    char detail[512];
    tscan_tensor input = tu_layout_input_init(l);
    tscan_tensor actual_view = tu_view_rebase(&l->output, l->out_buf, (void *)actual);
    tscan_tensor expected_view = tu_view_rebase(&l->output, l->out_buf, (void *)expected);
    int ok = tu_compare_views(&l->c.desc, &input, &expected_view, &actual_view, k, detail, sizeof detail) &&
             tu_outside_view_unchanged(&actual_view, actual, l->out_init, l->out_bytes, detail, sizeof detail);
    if (!ok) {
        char what[256];
        tu_case_describe(&l->c, what, sizeof what);
        snprintf(msg, msg_size, "%s: %s", what, detail);
    }
    return ok;
}
