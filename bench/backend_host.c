/* backend_host.c - the reference backend: tscan_scan_reference on host memory, timed with the
 * host clock after a cache flush, beside memcpy of the same bytes. It keeps the whole driver
 * runnable (and tested) on machines without a GPU; its timings describe the host, not tscan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

typedef struct host_state {
    unsigned char *flush;
    unsigned flush_value;
    void *in, *out;
    size_t in_capacity, out_capacity, out_bytes;
} host_state;

/* Twice the last-level cache, at most 64 MiB so that CI stays quick: on hosts with a larger
 * cache the reference timings are partly warm, which is fine for what they are for. */
static size_t host_flush_bytes(void) {
    long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    size_t bytes = llc > 0 ? 2 * (size_t)llc : (size_t)32 << 20;
    return bytes < ((size_t)64 << 20) ? bytes : (size_t)64 << 20;
}

static int grow(void **buffer, size_t *capacity, size_t bytes, char *err, size_t errlen) {
    void *grown;
    if (bytes <= *capacity) return 0;
    if (!(grown = realloc(*buffer, bytes))) {
        snprintf(err, errlen, "out of host memory for %zu bytes", bytes);
        return -1;
    }
    *buffer = grown;
    *capacity = bytes;
    return 0;
}

static int host_load(bench_backend *b, const void *host_input, size_t in_bytes, size_t out_bytes, void **in_base,
                     void **out_base, char *err, size_t errlen) {
    host_state *s = b->state;
    if (grow(&s->in, &s->in_capacity, in_bytes, err, errlen) ||
        grow(&s->out, &s->out_capacity, out_bytes, err, errlen))
        return -1;
    memcpy(s->in, host_input, in_bytes);
    s->out_bytes = out_bytes;
    *in_base = s->in;
    *out_base = s->out;
    return 0;
}

static int host_begin_case(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                           const tscan_tensor *out, size_t *workspace_bytes, char *err, size_t errlen) {
    (void)b, (void)desc, (void)in, (void)out, (void)err, (void)errlen;
    *workspace_bytes = 0;
    return 0;
}

static void host_end_case(bench_backend *b) { (void)b; }

static int reference_failed(tscan_status status, char *err, size_t errlen) {
    if (status == TSCAN_SUCCESS) return 0;
    snprintf(err, errlen, "tscan_scan_reference: %s: %s", tscan_status_string(status), tscan_last_error());
    return -1;
}

static int host_poison_output(bench_backend *b, char *err, size_t errlen) {
    host_state *s = b->state;
    (void)err, (void)errlen;
    memset(s->out, 0xff, s->out_bytes);
    return 0;
}

static int host_run_timed(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                          const tscan_tensor *out, double *seconds, char *err, size_t errlen) {
    double start = bench_now();
    (void)b;
    if (reference_failed(tscan_scan_reference(desc, in, out), err, errlen)) return -1;
    *seconds = bench_now() - start;
    return 0;
}

static int host_fetch_output(bench_backend *b, void *host_output, char *err, size_t errlen) {
    host_state *s = b->state;
    (void)err, (void)errlen;
    memcpy(host_output, s->out, s->out_bytes);
    return 0;
}

typedef struct host_sample {
    bench_backend *backend;
    const tscan_scan_desc *desc; /* NULL: the copy */
    const tscan_tensor *in, *out;
    size_t copy_bytes;
} host_sample;

static int host_sample_once(void *ctx, double *seconds, char *err, size_t errlen) {
    host_sample *c = ctx;
    host_state *s = c->backend->state;
    tscan_status status = TSCAN_SUCCESS;
    double start;
    memset(s->flush, (int)(s->flush_value++ & 0xff), c->backend->flush_bytes);
    start = bench_now();
    if (c->desc) status = tscan_scan_reference(c->desc, c->in, c->out);
    else memcpy(s->out, s->in, c->copy_bytes);
    *seconds = bench_now() - start;
    return reference_failed(status, err, errlen);
}

static int host_measure_scan(bench_backend *b, const tscan_scan_desc *desc, const tscan_tensor *in,
                             const tscan_tensor *out, const measure_settings *settings, timing_stats *stats,
                             char *err, size_t errlen) {
    host_sample sample = {b, desc, in, out, 0};
    return measure(settings, host_sample_once, &sample, stats, err, errlen);
}

static int host_measure_copy(bench_backend *b, size_t bytes, const measure_settings *settings, timing_stats *stats,
                             char *err, size_t errlen) {
    host_sample sample = {b, NULL, NULL, NULL, bytes};
    return measure(settings, host_sample_once, &sample, stats, err, errlen);
}

static void host_destroy(bench_backend *b) {
    host_state *s = b->state;
    if (!s) return;
    free(s->flush);
    free(s->in);
    free(s->out);
    free(s);
    b->state = NULL;
}

int host_backend_create(bench_backend *b, char *err, size_t errlen) {
    host_state *s;
    memset(b, 0, sizeof *b);
    b->flush_bytes = host_flush_bytes();
    if (!(s = calloc(1, sizeof *s)) || !(s->flush = malloc(b->flush_bytes))) {
        free(s);
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    b->name = "reference";
    b->library = &tscan_linked_library;
    b->timer = "host_clock";
    b->state = s;
    b->host_alloc = malloc;
    b->host_free = free;
    b->load = host_load;
    b->begin_case = host_begin_case;
    b->poison_output = host_poison_output;
    b->run_timed = host_run_timed;
    b->fetch_output = host_fetch_output;
    b->measure_scan = host_measure_scan;
    b->measure_copy = host_measure_copy;
    b->end_case = host_end_case;
    b->destroy = host_destroy;
    return 0;
}
