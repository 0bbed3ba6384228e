/*
 * test_gpu_streams.c - CONTRACT §3's promises about streams: tscan_scan is asynchronous,
 * allocates and synchronises nothing, so it can be captured in a CUDA graph (checked in the
 * strict global capture mode, then the graph launched three times on two inputs); and it may
 * run from several host threads on several streams at once, each call with its own
 * workspace (two threads looping over different tensors; and one thread issuing two scans on
 * two streams before waiting for either). For AUTO and for LOOKBACK, whose workspace holds
 * state between the blocks of one scan.
 *
 * Skips, saying why, when there is no CUDA device.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuutil.h"
#include "testutil.h"

typedef struct stream_case {
    tscan_dtype dtype;
    gu_shape shape;
    unsigned combo; /* as gu_case takes it: bit 0 prod, bit 1 decreasing, bit 2 exclusive */
    tu_layout_kind layout;
} stream_case;

/* Long lines, long strided axes with few and many columns: where the workspace matters. */
static const stream_case cases[] = {
    {TSCAN_FLOAT32, {1, {(1 << 20) + 3}, 0}, 0, TU_LAYOUT_PACKED},    /* sum */
    {TSCAN_INT32, {2, {100000, 3}, 0}, 6, TU_LAYOUT_PACKED},           /* sum, decreasing, exclusive */
    {TSCAN_FLOAT64, {2, {5000, 300}, 0}, 5, TU_LAYOUT_PADDED},        /* prod, exclusive */
    {TSCAN_FLOAT16, {2, {300, 5000}, 1}, 2, TU_LAYOUT_NEGATIVE},      /* sum, decreasing */
    {TSCAN_UINT8, {3, {3, 70000, 5}, 1}, 1, TU_LAYOUT_IN_PLACE},      /* prod */
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* Exact comparison: small integers for float sums, units (gu_make_units) for products. */
static void make_layout(tu_layout *l, const stream_case *sc, uint64_t seed) {
    const int prod = sc->combo & 1;
    tu_case c = gu_case(sc->dtype, &sc->shape, sc->combo, sc->layout,
                        !tu_dtype_is_float(sc->dtype) ? TU_DATA_RANDOM
                        : prod                        ? TU_DATA_POW2
                                                      : TU_DATA_SMALL_INT,
                        seed);
    tu_layout_make(l, &c);
    if (prod)
        gu_make_units(l);
}

/* New random input in the same layout (same views, so a captured graph still applies). */
static void refill_input(tu_layout *l, uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    tu_fill(&r, &l->input, l->c.data);
    gu_layout_commit_input(l);
    if (l->c.desc.op == TSCAN_OP_PROD)
        gu_make_units(l);
}

static void check_download(const gu_buffers *b, const tu_layout *l, cudaStream_t s,
                           const unsigned char *expected, const char *when) {
    char msg[1024];
    unsigned char *got = gu_buffers_download(b, l, s);
    int ok = tu_check_output(l, got, expected, tu_case_tolerance_k(&l->c), msg, sizeof msg);
    free(got);
    cr_assert(ok, "%s: %s", when, msg);
}

/* ---- graph capture ---------------------------------------------------------------------------- */

/* Returns 1 when it ran, 0 when the strategy does not take the case (with a message). */
static int graph_case(const stream_case *sc, tscan_algo algo, size_t index) {
    tu_layout l;
    make_layout(&l, sc, tu_seed("graph", index));
    l.c.desc.algo = algo;
    char what[320];
    tu_case_describe(&l.c, what, sizeof what);

    gu_buffers b;
    tscan_status q = gu_buffers_make(&b, &l, &l.c.desc);
    if (q == TSCAN_ERROR_NOT_SUPPORTED && algo != TSCAN_ALGO_AUTO) {
        cr_assert(tscan_last_error()[0] != '\0', "%s: NOT_SUPPORTED without a message", what);
        cr_log_info("graph: %s not supported: %s", what, tscan_last_error());
        tu_layout_free(&l);
        return 0;
    }
    cr_assert_eq(q, TSCAN_SUCCESS, "%s: workspace query %s (%s)", what, tscan_status_string(q),
                 tscan_last_error());

    cudaStream_t s;
    GU_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    /* Global mode: any call that is unsafe during capture (allocation, synchronisation)
     * invalidates the capture. */
    GU_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    tscan_status st = tscan_scan(&l.c.desc, &b.input, &b.output, b.ws, b.ws_bytes, s);
    char scan_msg[512];
    snprintf(scan_msg, sizeof scan_msg, "%s", tscan_last_error());
    cudaError_t end = cudaStreamEndCapture(s, &graph);
    cr_assert_eq(st, TSCAN_SUCCESS, "%s: tscan_scan during capture: %s (%s)", what,
                 tscan_status_string(st), scan_msg);
    cr_assert_eq(end, cudaSuccess, "%s: cudaStreamEndCapture: %s (%s)", what,
                 cudaGetErrorString(end), cudaGetErrorName(end));
    size_t nodes = 0;
    GU_CUDA(cudaGraphGetNodes(graph, NULL, &nodes));
    cr_assert(nodes > 0, "%s: the captured graph is empty", what);
    GU_CUDA(cudaGraphInstantiate(&exec, graph, 0));

    /* capturing ran nothing */
    {
        unsigned char *got = gu_buffers_download(&b, &l, s);
        cr_assert(memcmp(got, l.out_init, l.out_bytes) == 0, "%s: capturing wrote the output", what);
        free(got);
    }

    unsigned char *expected = tu_layout_expected(&l);
    GU_CUDA(cudaGraphLaunch(exec, s));
    check_download(&b, &l, s, expected, "graph launch 1");
    free(expected);

    /* fresh input, output poisoned again, the same graph */
    refill_input(&l, tu_seed("graph refill", index));
    expected = tu_layout_expected(&l);
    gu_buffers_upload(&b, &l, s);
    GU_CUDA(cudaGraphLaunch(exec, s));
    check_download(&b, &l, s, expected, "graph launch 2 (fresh input)");
    /* and once more on the same input: the workspace's state from launch 2 must not leak */
    if (b.out != b.in) {
        GU_CUDA(cudaGraphLaunch(exec, s));
        check_download(&b, &l, s, expected, "graph launch 3 (again)");
    }
    free(expected);

    gu_graph_destroy(exec, graph);
    GU_CUDA(cudaStreamDestroy(s));
    gu_buffers_free(&b);
    tu_layout_free(&l);
    return 1;
}

static void graph_capture(tscan_algo algo) {
    GU_REQUIRE_DEVICE();
    int ran = 0;
    for (size_t i = 0; i < CASE_COUNT; ++i)
        ran += graph_case(&cases[i], algo, i);
    cr_assert(ran > 0, "%s took none of the graph cases", tscan_algo_name(algo));
    cr_log_info("graph capture, %s: %d of %zu cases ran", tscan_algo_name(algo), ran, CASE_COUNT);
}

Test(gpu_streams, graph_capture_auto) { graph_capture(TSCAN_ALGO_AUTO); }
Test(gpu_streams, graph_capture_lookback) { graph_capture(TSCAN_ALGO_LOOKBACK); }
Test(gpu_streams, graph_capture_stream) { graph_capture(TSCAN_ALGO_STREAM); }

/* ---- two host threads, two streams, at once ------------------------------------------------------- */

typedef struct worker {
    tscan_algo algo;
    size_t first_case; /* each thread walks the cases from its own starting point */
    int rounds;
    pthread_barrier_t *start;
    /* results, read after join */
    long passed, unsupported, failed;
    char first_failure[1024];
    char cuda_error[256];
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    cudaStream_t s;
    gu_arena a = {0};
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(w->cuda_error, sizeof w->cuda_error, "cudaStreamCreateWithFlags: %s",
                 cudaGetErrorString(e));
        pthread_barrier_wait(w->start);
        return NULL;
    }
    /* layouts and expected outputs first, so that the threads overlap on the GPU */
    tu_layout l[CASE_COUNT];
    unsigned char *expected[CASE_COUNT];
    for (size_t i = 0; i < CASE_COUNT; ++i) {
        make_layout(&l[i], &cases[(w->first_case + i) % CASE_COUNT],
                    tu_seed("threads", w->first_case * 100 + i));
        expected[i] = tu_layout_expected(&l[i]);
    }
    pthread_barrier_wait(w->start);
    for (int round = 0; round < w->rounds; ++round)
        for (size_t i = 0; i < CASE_COUNT; ++i) {
            char msg[1024];
            gu_outcome o = gu_run(&a, &l[i], expected[i], w->algo, s, msg, sizeof msg);
            if (o == GU_PASSED)
                w->passed++;
            else if (o == GU_NOT_SUPPORTED)
                w->unsupported++;
            else if (w->failed++ == 0)
                snprintf(w->first_failure, sizeof w->first_failure, "%s", msg);
        }
    for (size_t i = 0; i < CASE_COUNT; ++i) {
        free(expected[i]);
        tu_layout_free(&l[i]);
    }
    gu_arena_free(&a);
    e = cudaStreamDestroy(s);
    if (e != cudaSuccess)
        snprintf(w->cuda_error, sizeof w->cuda_error, "cudaStreamDestroy: %s", cudaGetErrorString(e));
    return NULL;
}

static void two_threads(tscan_algo algo) {
    GU_REQUIRE_DEVICE();
    GU_CUDA(cudaFree(NULL)); /* the context exists before the threads race to create it */
    pthread_barrier_t start;
    cr_assert_eq(pthread_barrier_init(&start, NULL, 2), 0);
    worker w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].algo = algo;
        w[i].first_case = (size_t)i * 2;
        w[i].rounds = 3;
        w[i].start = &start;
        cr_assert_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 2; ++i)
        cr_assert_eq(pthread_join(th[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; ++i) {
        cr_assert(w[i].cuda_error[0] == '\0', "thread %d: %s", i, w[i].cuda_error);
        cr_assert_eq(w[i].failed, 0, "thread %d, %s: %ld of %ld runs failed; first: %s", i,
                     tscan_algo_name(algo), w[i].failed,
                     w[i].failed + w[i].passed + w[i].unsupported, w[i].first_failure);
        cr_assert(w[i].passed > 0, "thread %d: %s ran none of the cases", i, tscan_algo_name(algo));
        cr_log_info("two threads, %s, thread %d: %ld passed, %ld not supported", tscan_algo_name(algo),
                    i, w[i].passed, w[i].unsupported);
    }
}

Test(gpu_streams, two_threads_auto) { two_threads(TSCAN_ALGO_AUTO); }
Test(gpu_streams, two_threads_lookback) { two_threads(TSCAN_ALGO_LOOKBACK); }
Test(gpu_streams, two_threads_stream) { two_threads(TSCAN_ALGO_STREAM); }

/* ---- one thread, two streams, both scans in flight before either is waited for --------------------- */

static void two_streams(tscan_algo algo) {
    GU_REQUIRE_DEVICE();
    int ran = 0;
    for (size_t i = 0; i < CASE_COUNT; ++i) {
        const stream_case *pair[2] = {&cases[i], &cases[(i + 1) % CASE_COUNT]};
        tu_layout l[2];
        gu_buffers b[2];
        cudaStream_t s[2];
        int ok = 1;
        for (int k = 0; k < 2; ++k) {
            make_layout(&l[k], pair[k], tu_seed("two streams", i * 2 + (size_t)k));
            l[k].c.desc.algo = algo;
            tscan_status q = gu_buffers_make(&b[k], &l[k], &l[k].c.desc);
            if (q == TSCAN_ERROR_NOT_SUPPORTED && algo != TSCAN_ALGO_AUTO)
                ok = 0;
            else
                cr_assert_eq(q, TSCAN_SUCCESS, "workspace query: %s (%s)", tscan_status_string(q),
                             tscan_last_error());
            GU_CUDA(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
        }
        if (ok) {
            unsigned char *expected[2];
            for (int k = 0; k < 2; ++k) {
                tscan_status st = tscan_scan(&l[k].c.desc, &b[k].input, &b[k].output, b[k].ws,
                                             b[k].ws_bytes, s[k]);
                cr_assert_eq(st, TSCAN_SUCCESS, "stream %d: %s (%s)", k, tscan_status_string(st),
                             tscan_last_error());
            }
            for (int k = 0; k < 2; ++k)
                expected[k] = tu_layout_expected(&l[k]); /* on the host, while the GPU works */
            for (int k = 0; k < 2; ++k) {
                check_download(&b[k], &l[k], s[k], expected[k], k ? "second stream" : "first stream");
                free(expected[k]);
            }
            ++ran;
        }
        for (int k = 0; k < 2; ++k) {
            if (b[k].in)
                gu_buffers_free(&b[k]);
            GU_CUDA(cudaStreamDestroy(s[k]));
            tu_layout_free(&l[k]);
        }
    }
    cr_assert(ran > 0, "%s took none of the pairs", tscan_algo_name(algo));
}

Test(gpu_streams, two_streams_one_thread_auto) { two_streams(TSCAN_ALGO_AUTO); }
Test(gpu_streams, two_streams_one_thread_lookback) { two_streams(TSCAN_ALGO_LOOKBACK); }
Test(gpu_streams, two_streams_one_thread_stream) { two_streams(TSCAN_ALGO_STREAM); }
