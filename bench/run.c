/* run.c - the run loop. Cases arrive ordered so that those sharing an input (shape, dtype,
 * op) are adjacent, and within them those sharing a reference (direction, exclusive): each
 * input is generated and uploaded once, each reference computed once. */
#include "run.h"
#include "table.h"

#include <inttypes.h>
#include <nvtx3/nvToolsExt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int64_t case_bytes_moved(const bench_case *c) {
    return shape_numel(c->shape) * (int64_t)(tscan_dtype_size(c->dtype) + tscan_dtype_size(c->out_dtype));
}

/* The copy ceiling's bytes: a copy reads and writes each, so it moves what the case moves. */
static size_t copy_bytes_of(const bench_case *c) { return (size_t)((case_bytes_moved(c) + 1) / 2); }

/* ---- one case ----------------------------------------------------------------------------- */

static void set_outcome(case_result *r, case_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_outcome(case_result *r, case_status status, const char *fmt, ...) {
    va_list args;
    r->status = status;
    va_start(args, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, args);
    va_end(args);
}

/* Too slow to time: a case whose minimum samples alone would outlast the per-case time limit
 * (a strategy that takes the layout but is the wrong tool for it: seconds per run). Its
 * (shape, strategy) is remembered, and the sweep's later cases of the pair (other dtypes,
 * operators, forms) are skipped without running, as they would cost as much. */
typedef struct slow_pair {
    char reason[400]; /* empty: not found slow */
} slow_pair;

/* Memory of the current input: the host copy (generated) and the backend's spans. */
typedef struct group_state {
    const bench_case *data_case;      /* the case whose (shape, dtype, op) the input is for */
    const bench_case *reference_case; /* ... and whose (direction, exclusive) ref is for */
    int data_ok, reference_ok;
    char data_error[512], reference_error[512];
    void *host_in, *host_out;
    size_t host_in_capacity, host_out_capacity;
    void *in_base, *out_base;
    reference_lines ref;
} group_state;

/* The same input data and output buffer. */
static int same_input(const bench_case *a, const bench_case *b) {
    return a && a->shape_id == b->shape_id && a->dtype == b->dtype && a->out_dtype == b->out_dtype && a->op == b->op;
}

static int same_reference(const bench_case *a, const bench_case *b) {
    return same_input(a, b) && a->direction == b->direction && a->exclusive == b->exclusive;
}

/* Bytes of a view's span of `dtype` and the element offset of element (0,...,0) within it. */
static size_t span_bytes(const bench_case *c, const int64_t *strides, tscan_dtype dtype, int64_t *origin) {
    int64_t lowest, highest;
    view_extent(c->shape, strides, &lowest, &highest);
    *origin = -lowest;
    return (size_t)(highest - lowest + 1) * tscan_dtype_size(dtype);
}

static int reserve_host(const bench_backend *b, void **buffer, size_t *capacity, size_t bytes) {
    if (bytes <= *capacity) return 0;
    b->host_free(*buffer);
    *capacity = 0;
    if (!(*buffer = b->host_alloc(bytes))) return -1;
    *capacity = bytes;
    return 0;
}

static size_t larger(size_t a, size_t b) { return a > b ? a : b; }

static void load_input(bench_backend *b, group_state *g, const bench_case *c, uint64_t seed) {
    int64_t in_origin, out_origin;
    /* Both spans at least the copy ceiling's bytes, which it copies between them (a broadcast
     * input spans less, and a narrower input than the output less than half the bytes moved). */
    size_t in_bytes = larger(span_bytes(c, c->shape->in_strides, c->dtype, &in_origin), copy_bytes_of(c));
    size_t out_bytes = larger(span_bytes(c, c->shape->out_strides, c->out_dtype, &out_origin), copy_bytes_of(c));
    const size_t input_bytes = (size_t)shape_numel(c->shape) * tscan_dtype_size(c->dtype);
    const size_t es = tscan_dtype_size(c->dtype);

    g->data_case = c;
    g->reference_case = NULL;
    g->data_ok = 0;
    if (reserve_host(b, &g->host_in, &g->host_in_capacity, in_bytes) ||
        reserve_host(b, &g->host_out, &g->host_out_capacity, out_bytes)) {
        snprintf(g->data_error, sizeof g->data_error, "out of host memory for %zu + %zu bytes", in_bytes, out_bytes);
        return;
    }
    /* Gaps between the elements of a view hold a pattern too: nothing uninitialised is uploaded. */
    if (in_bytes > input_bytes) memset(g->host_in, 0x5a, in_bytes);
    data_fill_input((char *)g->host_in + (size_t)in_origin * es, c->shape, c->dtype, c->op, seed);
    g->data_ok = b->load(b, g->host_in, in_bytes, out_bytes, &g->in_base, &g->out_base, g->data_error,
                         sizeof g->data_error) == 0;
}

/* Cost of one run estimated from a run on 1/PROBE_FRACTION of the tensor (the largest
 * dimension cut short), so that a strategy needing seconds per run on a 2^28-element tensor is
 * found out in milliseconds. Only above PROBE_MIN_ELEMENTS; fixed costs make the estimate
 * high for fast cases, hence the slack before it alone decides. */
#define PROBE_MIN_ELEMENTS (INT64_C(1) << 24)
#define PROBE_FRACTION 64
#define PROBE_SLACK 4.0

/* Returns 1 with *estimate, 0 when the strategy declines the smaller tensor (no estimate), or
 * -1 with a message. */
static int probe_run(bench_backend *b, const tscan_scan_desc *desc, int gpu_strategy, const tscan_tensor *in,
                     const tscan_tensor *out, double *estimate, char *err, size_t errlen) {
    tscan_tensor sub_in = *in, sub_out = *out;
    size_t workspace;
    uint32_t largest = 0;
    double seconds;
    for (uint32_t d = 1; d < in->ndim; ++d)
        if (in->sizes[d] > in->sizes[largest]) largest = d;
    sub_in.sizes[largest] = sub_out.sizes[largest] = (in->sizes[largest] + PROBE_FRACTION - 1) / PROBE_FRACTION;
    if (gpu_strategy && b->library->supported(desc, &sub_in, &sub_out) != TSCAN_SUCCESS) return 0;
    if (b->begin_case(b, desc, &sub_in, &sub_out, &workspace, err, errlen)) return -1;
    /* Twice, keeping the second: the first launch of a kernel pays one-time costs (lazy module
     * loading: 2 ms measured, which put a 0.76 ms case at 0.13 s). */
    for (int pass = 0; pass < 2; ++pass) {
        if (b->run_timed(b, desc, &sub_in, &sub_out, &seconds, err, errlen)) {
            b->end_case(b);
            return -1;
        }
    }
    b->end_case(b);
    *estimate = seconds * (double)in->sizes[largest] / (double)sub_in.sizes[largest];
    return 1;
}

static void run_case(bench_backend *b, group_state *g, const measure_settings *settings, uint64_t seed,
                     const bench_case *c, slow_pair *slow, case_result *r, run_results *results) {
    const size_t es = tscan_dtype_size(c->dtype), out_es = tscan_dtype_size(c->out_dtype);
    const bench_shape *shape = c->shape;
    /* Longest run whose minimum samples fit in the time limit. */
    const double slowest = settings->time_limit / (double)settings->min_samples;
    int64_t in_origin, out_origin;
    tscan_tensor in, out;
    tscan_scan_desc desc;
    tscan_status status;
    char err[512];
    size_t copy_bytes = copy_bytes_of(c), k;
    double once;

    span_bytes(c, shape->in_strides, c->dtype, &in_origin);
    span_bytes(c, shape->out_strides, c->out_dtype, &out_origin);
    if (b->lost[0]) {
        set_outcome(r, CASE_SKIPPED, "not run: %s", b->lost);
        return;
    }
    if (slow->reason[0]) {
        /* Not run here: the reason (its time, its check) is the earlier case's. */
        set_outcome(r, CASE_SKIPPED, "not run, nor checked: an earlier case of this shape and strategy was %s",
                    slow->reason);
        return;
    }
    if (!same_input(g->data_case, c)) load_input(b, g, c, seed);
    if (!g->data_ok) {
        set_outcome(r, CASE_FAILED, "%s", g->data_error);
        return;
    }
    tscan_tensor_init(&in, (char *)g->in_base + (size_t)in_origin * es, c->dtype, shape->ndim, shape->sizes,
                      shape->in_strides);
    tscan_tensor_init(&out, (char *)g->out_base + (size_t)out_origin * out_es, c->out_dtype, shape->ndim, shape->sizes,
                      shape->out_strides);
    desc.op = c->op;
    desc.axis = shape->axis;
    desc.direction = c->direction;
    desc.exclusive = c->exclusive;
    desc.algo = c->strategy == STRATEGY_REFERENCE ? TSCAN_ALGO_AUTO : (tscan_algo)c->strategy;

    if (c->out_dtype != c->dtype &&
        (!b->library->output_dtype_allowed || !b->library->output_dtype_allowed(c->dtype, c->out_dtype))) {
        /* A build from before wider outputs (tscan-bench ab against an older libtscan). */
        set_outcome(r, CASE_SKIPPED, "this libtscan build does not scan %s into %s", tscan_dtype_name(c->dtype),
                    tscan_dtype_name(c->out_dtype));
        return;
    }
    if (c->strategy != STRATEGY_REFERENCE) {
        status = b->library->supported(&desc, &in, &out);
        if (status == TSCAN_ERROR_NOT_SUPPORTED) {
            set_outcome(r, CASE_SKIPPED, "%s", b->library->last_error());
            return;
        }
        if (status != TSCAN_SUCCESS) {
            set_outcome(r, CASE_FAILED, "tscan_scan_supported: %s: %s", b->library->status_string(status),
                        b->library->last_error());
            return;
        }
        if (desc.algo == TSCAN_ALGO_AUTO) {
            tscan_algo chosen;
            if (b->library->auto_algo(&desc, &in, &out, &chosen) == TSCAN_SUCCESS) r->resolved_strategy = (int)chosen;
        }
    }
    /* AUTO may choose differently for the smaller tensor, so its probe would say little. */
    if (shape_numel(shape) >= PROBE_MIN_ELEMENTS && c->strategy != TSCAN_ALGO_AUTO) {
        double estimate;
        int probed = probe_run(b, &desc, c->strategy != STRATEGY_REFERENCE, &in, &out, &estimate, err, sizeof err);
        if (probed < 0) {
            set_outcome(r, CASE_FAILED, "run on 1/%d of the tensor: %s", PROBE_FRACTION, err);
            return;
        }
        if (probed && estimate > PROBE_SLACK * slowest) {
            snprintf(slow->reason, sizeof slow->reason,
                     "too slow to time: %s on this shape takes about %.3g s a run (from a run on 1/%d of the "
                     "tensor), so %" PRId64 " samples would outlast the per-case time limit of %g s (--time-limit)",
                     strategy_name(c->strategy), estimate, PROBE_FRACTION, settings->min_samples,
                     settings->time_limit);
            set_outcome(r, CASE_SKIPPED, "%s", slow->reason);
            return;
        }
    }
    if (!same_reference(g->reference_case, c)) {
        g->reference_case = c;
        g->reference_ok = reference_compute(&g->ref, shape, c->dtype, c->out_dtype, &desc,
                                            (char *)g->host_in + (size_t)in_origin * es, seed, g->reference_error,
                                            sizeof g->reference_error) == 0;
    }
    if (!g->reference_ok) {
        set_outcome(r, CASE_FAILED, "%s", g->reference_error);
        return;
    }
    if (b->begin_case(b, &desc, &in, &out, &r->workspace_bytes, err, sizeof err)) {
        set_outcome(r, CASE_FAILED, "%s", err);
        return;
    }
    if (b->poison_output(b, err, sizeof err) || b->run_timed(b, &desc, &in, &out, &once, err, sizeof err) ||
        b->fetch_output(b, g->host_out, err, sizeof err)) {
        set_outcome(r, CASE_FAILED, "%s", err);
        b->end_case(b);
        return;
    }
    reference_check(&g->ref, shape, c->out_dtype, (char *)g->host_out + (size_t)out_origin * out_es, &r->check);
    r->checked = 1;
    if (r->check.mismatches) {
        set_outcome(r, CASE_FAILED,
                    "wrong answer: %" PRId64 " of %" PRId64 " checked elements differ; first at line %" PRId64
                    " index %" PRId64 ": expected %s, got %s",
                    r->check.mismatches, r->check.elements_checked, r->check.first_line, r->check.first_index,
                    r->check.expected, r->check.actual);
        b->end_case(b);
        return;
    }
    /* The checked run may carry first-use costs (a sweep's first AUTO case read 41 ms on the H100
     * for a 0.2 ms kernel, most likely its module's lazy load): a second run, a warm-up, decides.
     * With --warmup 0 there is none (under a sanitizer every run is slow, and a second doubles it). */
    if (once > slowest && settings->warmup > 0 && b->run_timed(b, &desc, &in, &out, &once, err, sizeof err)) {
        set_outcome(r, CASE_FAILED, "%s", err);
        b->end_case(b);
        return;
    }
    if (once > slowest) {
        snprintf(slow->reason, sizeof slow->reason,
                 "too slow to time: %s on this shape took %.3g s for one run (checked: right), so %" PRId64
                 " samples would outlast the per-case time limit of %g s (--time-limit)",
                 strategy_name(c->strategy), once, settings->min_samples, settings->time_limit);
        set_outcome(r, CASE_SKIPPED, "%s", slow->reason);
        b->end_case(b);
        return;
    }
    if (b->measure_scan(b, &desc, &in, &out, settings, &r->time, err, sizeof err)) {
        set_outcome(r, CASE_FAILED, "timing: %s", err);
        b->end_case(b);
        return;
    }
    r->timed = 1;
    b->end_case(b);

    /* The ceiling: a copy of the same bytes, measured once per byte count in this run. */
    for (k = 0; k < results->copy_count && results->copies[k].bytes != copy_bytes; ++k) continue;
    if (k == results->copy_count) {
        copy_result *copy = &results->copies[k];
        nvtxRangePushA("copy ceiling");
        if (b->measure_copy(b, copy_bytes, settings, &copy->time, err, sizeof err)) {
            nvtxRangePop();
            set_outcome(r, CASE_FAILED, "timing the copy ceiling: %s", err);
            return;
        }
        nvtxRangePop();
        copy->bytes = copy_bytes;
        results->copy_count++;
    }
    r->copy_index = (int)k;
    r->status = CASE_PASSED;
}

int run_cases(bench_backend *const *backends, size_t backend_count, const measure_settings *settings, uint64_t seed,
              const bench_case *cases, size_t count, run_results *results, FILE *table) {
    group_state groups[MAX_BACKENDS];
    slow_pair *slow[MAX_BACKENDS] = {NULL};
    progress p;
    double start = bench_now();
    size_t shape_slots = 0, slots;
    int out_of_memory = 0;

    for (size_t i = 0; i < count; ++i)
        if (cases[i].shape_id >= shape_slots) shape_slots = cases[i].shape_id + 1;
    slots = (shape_slots ? shape_slots : 1) * (STRATEGY_REFERENCE + 1);
    memset(groups, 0, sizeof groups);
    for (size_t k = 0; k < backend_count; ++k) {
        memset(&results[k], 0, sizeof results[k]);
        slow[k] = calloc(slots, sizeof *slow[k]);
        results[k].cases = calloc(count ? count : 1, sizeof *results[k].cases);
        /* At most one copy per case. */
        results[k].copies = calloc(count ? count : 1, sizeof *results[k].copies);
        out_of_memory |= !slow[k] || !results[k].cases || !results[k].copies;
    }
    if (out_of_memory || backend_count > MAX_BACKENDS) {
        for (size_t k = 0; k < backend_count && k < MAX_BACKENDS; ++k) {
            free(slow[k]);
            run_results_free(&results[k]);
        }
        return -1;
    }
    memset(&p, 0, sizeof p);
    p.start = p.last = start;
    for (size_t i = 0; i < count; ++i) p.total_weight += case_weight(&cases[i]);

    table_header(table);
    for (size_t i = 0; i < count; ++i) {
        /* Backends take turns case by case, in alternating order, so that drift and the order
         * within a pair fall on each alike. */
        for (size_t turn = 0; turn < backend_count; ++turn) {
            size_t k = i % 2 ? backend_count - 1 - turn : turn;
            case_result *r = &results[k].cases[i];
            r->copy_index = -1;
            r->resolved_strategy = -1;
            nvtxRangePushA(cases[i].name);
            run_case(backends[k], &groups[k], settings, seed, &cases[i],
                     &slow[k][cases[i].shape_id * (STRATEGY_REFERENCE + 1) + (size_t)cases[i].strategy], r,
                     &results[k]);
            nvtxRangePop();
            if (r->status == CASE_PASSED) results[k].passed++;
            else if (r->status == CASE_FAILED) results[k].failed++;
            else results[k].skipped++;
        }
        for (size_t k = 0; k < backend_count; ++k) table_row(table, &cases[i], &results[k].cases[i], &results[k]);
        progress_update(&p, &cases[i], i + 1, count);
    }
    for (size_t k = 0; k < backend_count; ++k) {
        results[k].walltime = bench_now() - start;
        backends[k]->host_free(groups[k].host_in);
        backends[k]->host_free(groups[k].host_out);
        reference_free(&groups[k].ref);
        free(slow[k]);
    }
    return 0;
}

void run_results_free(run_results *results) {
    free(results->cases);
    free(results->copies);
    memset(results, 0, sizeof *results);
}
