/*
 * test_gpu_stress.c - forward progress (ARCHITECTURE.md, "Invariants"): a scan never waits on
 * work that the GPU may not schedule. Long scans on 2 and 4 streams at once, scans beside a
 * kernel that holds part of every multiprocessor for as long as the test likes, and graph
 * replays beside other work, hundreds of rounds. Each round is bounded by a watchdog that ends
 * the process, saying HUNG, rather than hang CI (a kernel that never ends cannot be stopped
 * from the host; ending the process tears its context down). Every output is checked against
 * the reference afterwards, with the output poisoned first.
 *
 * Skips, saying why, when there is no CUDA device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuload.h"
#include "gpuutil.h"
#include "testutil.h"

/* A round that takes longer than this has hung: the longest round here runs in milliseconds. */
#define WATCHDOG_S 10.0
/* The holding kernel ends by itself after this, so a stalled scan fails by the watchdog first. */
#define HOLD_LIMIT_S 60.0

typedef struct job_spec {
    tscan_dtype dtype;
    gu_shape shape;
    tscan_algo algo;
} job_spec;

/* One scan with its own buffers, workspace, stream and completion event. */
typedef struct scan_job {
    tu_layout l;
    gu_buffers b;
    unsigned char *expected;
    cudaStream_t s;
    cudaEvent_t done;
    char what[320];
} scan_job;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void job_make(scan_job *j, const job_spec *spec, uint64_t seed) {
    /* Integers wrap exactly; float32 sums of small integers stay within the tolerance. */
    tu_case c = gu_case(spec->dtype, &spec->shape, 0, TU_LAYOUT_PACKED,
                        tu_dtype_is_float(spec->dtype) ? TU_DATA_SMALL_INT : TU_DATA_RANDOM, seed);
    tu_layout_make(&j->l, &c);
    j->l.c.desc.algo = spec->algo;
    tu_case_describe(&j->l.c, j->what, sizeof j->what);
    tscan_status q = gu_buffers_make(&j->b, &j->l, &j->l.c.desc);
    cr_assert_eq(q, TSCAN_SUCCESS, "%s: workspace query %s (%s)", j->what, tscan_status_string(q),
                 tscan_last_error());
    j->expected = tu_layout_expected(&j->l);
    GU_CUDA(cudaStreamCreateWithFlags(&j->s, cudaStreamNonBlocking));
    GU_CUDA(cudaEventCreateWithFlags(&j->done, cudaEventDisableTiming));
}

static void job_launch(scan_job *j) {
    tscan_status st = tscan_scan(&j->l.c.desc, &j->b.input, &j->b.output, j->b.ws, j->b.ws_bytes, j->s);
    cr_assert_eq(st, TSCAN_SUCCESS, "%s: %s (%s)", j->what, tscan_status_string(st), tscan_last_error());
    GU_CUDA(cudaEventRecord(j->done, j->s));
}

/* Poisons the output again (the layout's snapshot), on the job's stream. */
static void job_poison(scan_job *j) { gu_buffers_upload(&j->b, &j->l, j->s); }

static void job_check(scan_job *j, const char *when) {
    char msg[1024];
    unsigned char *got = gu_buffers_download(&j->b, &j->l, j->s);
    int ok = tu_check_output(&j->l, got, j->expected, tu_case_tolerance_k(&j->l.c), msg, sizeof msg);
    free(got);
    cr_assert(ok, "%s, %s: %s", j->what, when, msg);
}

static void job_free(scan_job *j) {
    GU_CUDA(cudaEventDestroy(j->done));
    GU_CUDA(cudaStreamDestroy(j->s));
    gu_buffers_free(&j->b);
    free(j->expected);
    tu_layout_free(&j->l);
}

/* For a hung scan: its workspace's first words (lookback's claim counter first), read by a copy
 * engine beside the kernel that still runs. */
static void print_workspace_head(const scan_job *j) {
    unsigned long long head[8] = {0};
    cudaStream_t s;
    const size_t bytes = j->b.ws_bytes < sizeof head ? j->b.ws_bytes : sizeof head;
    fprintf(stderr, "  unfinished: %s, workspace %zu bytes", j->what, j->b.ws_bytes);
    if (bytes && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
        cudaMemcpyAsync(head, j->b.ws, bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess) {
        const double t0 = now_s();
        while (cudaStreamQuery(s) == cudaErrorNotReady && now_s() - t0 < 2.0) usleep(1000);
        fprintf(stderr, ", head:");
        for (size_t w = 0; w < bytes / 8; ++w) fprintf(stderr, " %llx", head[w]);
    }
    fprintf(stderr, "\n");
}

/* Waits for the jobs' events at most WATCHDOG_S; past that the process ends (exit code 3). */
static void watchdog_wait(scan_job *jobs, int count, const char *what, int round) {
    const double t0 = now_s();
    for (;;) {
        int unfinished = 0;
        for (int i = 0; i < count; ++i) {
            cudaError_t e = cudaEventQuery(jobs[i].done);
            if (e == cudaErrorNotReady)
                ++unfinished;
            else
                cr_assert(e == cudaSuccess, "%s, round %d, %s: %s", what, round, jobs[i].what, cudaGetErrorString(e));
        }
        if (!unfinished) return;
        if (now_s() - t0 > WATCHDOG_S) {
            fprintf(stderr, "HUNG: %s, round %d: %d of %d scans unfinished after %.0f s\n", what, round, unfinished,
                    count, WATCHDOG_S);
            for (int i = 0; i < count; ++i)
                if (cudaEventQuery(jobs[i].done) == cudaErrorNotReady) print_workspace_head(&jobs[i]);
            fflush(stderr);
            _exit(3);
        }
        usleep(100);
    }
}

/* Runs the jobs together, each on its own stream, `rounds` times; checks every output after
 * the first round and after the last (the input never changes, so each round's answer is the
 * same), with the output poisoned before each of those two rounds. */
static void run_together(const job_spec *specs, int count, int rounds, const char *what) {
    GU_REQUIRE_DEVICE();
    scan_job *jobs = calloc((size_t)count, sizeof *jobs);
    cr_assert(jobs != NULL);
    for (int i = 0; i < count; ++i)
        job_make(&jobs[i], &specs[i], tu_seed(what, (uint64_t)i));
    const double t0 = now_s();
    for (int round = 0; round < rounds; ++round) {
        const int checked = round == 0 || round == rounds - 1;
        if (checked && round > 0)
            for (int i = 0; i < count; ++i) job_poison(&jobs[i]);
        for (int i = 0; i < count; ++i) job_launch(&jobs[i]);
        watchdog_wait(jobs, count, what, round);
        if (checked)
            for (int i = 0; i < count; ++i) job_check(&jobs[i], round ? "last round" : "first round");
    }
    cr_log_info("%s: %d rounds of %d scans at once in %.2f s", what, rounds, count, now_s() - t0);
    for (int i = 0; i < count; ++i) job_free(&jobs[i]);
    free(jobs);
}

#define LINE(n) {1, {(n)}, 0}
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The report's hang: two AUTO scans of one int32 line of 2^28 on two streams. */
Test(gpu_stress, two_long_lines_on_two_streams, .timeout = 600) {
    static const job_spec specs[] = {{TSCAN_INT32, LINE(INT64_C(1) << 28), TSCAN_ALGO_AUTO},
                                     {TSCAN_INT32, LINE(INT64_C(1) << 28), TSCAN_ALGO_AUTO}};
    run_together(specs, COUNT_OF(specs), 200, "two 2^28 lines");
}

/* Line chunks, column blocks of packed and single elements, and many chains at once. */
Test(gpu_stress, four_streams_of_long_lines_and_strided_axes, .timeout = 600) {
    static const job_spec specs[] = {
        {TSCAN_INT32, LINE(INT64_C(1) << 26), TSCAN_ALGO_AUTO},
        {TSCAN_FLOAT32, LINE((INT64_C(1) << 26) - 2), TSCAN_ALGO_LOOKBACK},
        {TSCAN_UINT16, {2, {8192, 4096}, 0}, TSCAN_ALGO_AUTO},
        {TSCAN_INT64, {2, {4096, 2048}, 0}, TSCAN_ALGO_LOOKBACK},
    };
    run_together(specs, COUNT_OF(specs), 200, "four streams");
}

/* The stream strategy's tiles, one a block, from several streams at once: odd lines of 1-byte
 * elements (every tile holds line starts), one long line of 8-byte ones (every tile waits), and
 * long lines of 3 lanes (the lanes form). */
Test(gpu_stress, four_streams_of_stream_tiles, .timeout = 600) {
    static const job_spec specs[] = {
        {TSCAN_UINT8, {2, {4099, 16411}, 1}, TSCAN_ALGO_STREAM},
        {TSCAN_INT64, LINE((INT64_C(1) << 25) + 1), TSCAN_ALGO_STREAM},
        {TSCAN_FLOAT16, {2, {1000003, 7}, 1}, TSCAN_ALGO_STREAM},
        {TSCAN_UINT8, {3, {4, 1 << 22, 3}, 1}, TSCAN_ALGO_STREAM}, /* 3 lanes */
    };
    run_together(specs, COUNT_OF(specs), 200, "four streams of stream tiles");
}

/* Small problems on lookback's one-wave path, whose grids each fill an idle GPU. */
Test(gpu_stress, four_streams_of_one_wave_problems, .timeout = 600) {
    static const job_spec specs[] = {
        {TSCAN_FLOAT32, LINE(INT64_C(1) << 20), TSCAN_ALGO_AUTO},
        {TSCAN_INT64, LINE(INT64_C(1) << 19), TSCAN_ALGO_AUTO},
        {TSCAN_UINT8, LINE(INT64_C(1) << 22), TSCAN_ALGO_AUTO},
        {TSCAN_INT32, LINE((INT64_C(1) << 20) + 4), TSCAN_ALGO_LOOKBACK},
    };
    run_together(specs, COUNT_OF(specs), 400, "four one-wave streams");
}

/* Each scan runs, rounds times, while a kernel holds over half of every multiprocessor's shared
 * memory: the scan gets a third of the blocks that its grid was sized for, and must finish
 * while that kernel still runs (which the test checks, so that it cannot pass vacuously). */
Test(gpu_stress, scans_beside_a_kernel_holding_every_sm, .timeout = 600) {
    GU_REQUIRE_DEVICE();
    static const job_spec specs[] = {
        {TSCAN_INT32, LINE(INT64_C(1) << 26), TSCAN_ALGO_LOOKBACK},           /* line chunks */
        {TSCAN_FLOAT32, {2, {8192, 8192}, 0}, TSCAN_ALGO_LOOKBACK},           /* column blocks */
        {TSCAN_INT8, {2, {8192, 8192}, 0}, TSCAN_ALGO_LOOKBACK},              /* packed column blocks */
        {TSCAN_FLOAT32, LINE(INT64_C(1) << 20), TSCAN_ALGO_LOOKBACK},         /* one wave */
        {TSCAN_INT32, LINE(INT64_C(1) << 24), TSCAN_ALGO_CUB_DEVICE},
        {TSCAN_UINT8, {2, {4096, 8191}, 1}, TSCAN_ALGO_AUTO},
        {TSCAN_UINT8, LINE((INT64_C(1) << 26) + 3), TSCAN_ALGO_STREAM},    /* stream: one odd line */
        {TSCAN_FLOAT32, {2, {65536, 1001}, 1}, TSCAN_ALGO_STREAM},         /* stream: many odd lines */
        {TSCAN_FLOAT64, {3, {64, 65537, 12}, 1}, TSCAN_ALGO_STREAM},       /* stream: 12 lanes */
    };
    enum { ROUNDS = 20 };
    cudaStream_t hold_stream;
    GU_CUDA(cudaStreamCreateWithFlags(&hold_stream, cudaStreamNonBlocking));
    for (int i = 0; i < COUNT_OF(specs); ++i) {
        scan_job j;
        job_make(&j, &specs[i], tu_seed("beside a kernel", (uint64_t)i));
        /* Once alone first: CUDA loads a kernel at its first launch (lazy loading), and a load
         * can wait for the GPU's running kernels, the holding one included. */
        job_launch(&j);
        watchdog_wait(&j, 1, j.what, -1);
        for (int round = 0; round < ROUNDS; ++round) {
            gl_hold hold;
            GU_CUDA(gl_hold_start(&hold, hold_stream, HOLD_LIMIT_S));
            const double t0 = now_s();
            while (gl_hold_started(&hold) < hold.blocks) {
                cr_assert(now_s() - t0 < 10.0, "the holding kernel started %d of %d blocks in 10 s",
                          gl_hold_started(&hold), hold.blocks);
                usleep(100);
            }
            if (round == ROUNDS - 1) job_poison(&j);
            job_launch(&j);
            watchdog_wait(&j, 1, j.what, round);
            const int held = gl_hold_running(&hold);
            GU_CUDA(gl_hold_release(&hold));
            cr_assert(held, "%s, round %d: the holding kernel ended before the scan did", j.what, round);
            if (round == 0 || round == ROUNDS - 1) job_check(&j, round ? "last round" : "first round");
        }
        job_free(&j);
    }
    GU_CUDA(cudaStreamDestroy(hold_stream));
}

/* A captured scan replayed while another scan runs on another stream, then while a kernel
 * holds every SM. */
Test(gpu_stress, graph_replays_beside_other_work, .timeout = 600) {
    GU_REQUIRE_DEVICE();
    static const job_spec specs[] = {{TSCAN_FLOAT32, LINE((INT64_C(1) << 26) - 2), TSCAN_ALGO_LOOKBACK},
                                     {TSCAN_INT32, {2, {4096, 8192}, 0}, TSCAN_ALGO_AUTO}};
    scan_job jobs[2];
    for (int i = 0; i < 2; ++i) job_make(&jobs[i], &specs[i], tu_seed("graph beside", (uint64_t)i));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    GU_CUDA(cudaStreamBeginCapture(jobs[0].s, cudaStreamCaptureModeGlobal));
    tscan_status st = tscan_scan(&jobs[0].l.c.desc, &jobs[0].b.input, &jobs[0].b.output, jobs[0].b.ws,
                                 jobs[0].b.ws_bytes, jobs[0].s);
    GU_CUDA(cudaStreamEndCapture(jobs[0].s, &graph));
    cr_assert_eq(st, TSCAN_SUCCESS, "capture: %s (%s)", tscan_status_string(st), tscan_last_error());
    GU_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    job_launch(&jobs[1]); /* its kernels loaded before any round holds the SMs (see above) */
    watchdog_wait(&jobs[1], 1, "graph replays, warm-up", -1);
    cudaStream_t hold_stream;
    GU_CUDA(cudaStreamCreateWithFlags(&hold_stream, cudaStreamNonBlocking));
    enum { ROUNDS = 200, HELD_ROUNDS = 10 };
    for (int round = 0; round < ROUNDS + HELD_ROUNDS; ++round) {
        const int held = round >= ROUNDS;
        gl_hold hold;
        if (held) {
            GU_CUDA(gl_hold_start(&hold, hold_stream, HOLD_LIMIT_S));
            while (gl_hold_started(&hold) < hold.blocks) usleep(100);
        }
        if (round == 0 || round == ROUNDS + HELD_ROUNDS - 1)
            for (int i = 0; i < 2; ++i) job_poison(&jobs[i]);
        GU_CUDA(cudaGraphLaunch(exec, jobs[0].s));
        GU_CUDA(cudaEventRecord(jobs[0].done, jobs[0].s));
        job_launch(&jobs[1]);
        watchdog_wait(jobs, 2, "graph replays", round);
        if (held) GU_CUDA(gl_hold_release(&hold));
        if (round == 0 || round == ROUNDS + HELD_ROUNDS - 1)
            for (int i = 0; i < 2; ++i) job_check(&jobs[i], round ? "last round" : "first round");
    }
    GU_CUDA(cudaStreamDestroy(hold_stream));
    gu_graph_destroy(exec, graph);
    for (int i = 0; i < 2; ++i) job_free(&jobs[i]);
}
