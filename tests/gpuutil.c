/* gpuutil.c - device detection, the arena, and one checked run of a case on the GPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuutil.h"
#include "tscan_internal.h"

int gu_device_available(char *reason, size_t size) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(reason, size, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
        (void)cudaGetLastError();
        return 0;
    }
    if (count == 0) {
        snprintf(reason, size, "cudaGetDeviceCount found 0 devices");
        return 0;
    }
    return 1;
}

tu_case gu_case(tscan_dtype dtype, const gu_shape *s, unsigned combo, tu_layout_kind layout,
                tu_data data, uint64_t seed) {
    tu_case c;
    memset(&c, 0, sizeof c);
    c.dtype = dtype;
    c.ndim = s->ndim;
    memcpy(c.sizes, s->sizes, sizeof c.sizes);
    c.desc.op = (tscan_op)(combo & 1);
    c.desc.axis = s->axis;
    c.desc.direction = (tscan_direction)((combo >> 1) & 1);
    c.desc.exclusive = (int)((combo >> 2) & 1);
    c.desc.algo = TSCAN_ALGO_AUTO;
    c.layout = layout;
    c.data = data;
    c.seed = seed;
    return c;
}

void gu_arena_free(gu_arena *a) {
    if (a->dev)
        (void)cudaFree(a->dev);
    free(a->host);
    memset(a, 0, sizeof *a);
}

static size_t align_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* Formats "what: detail" into msg and returns GU_FAILED. */
static gu_outcome fail(char *msg, size_t size, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static gu_outcome fail(char *msg, size_t size, const char *what, const char *fmt, ...) {
    char detail[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
    snprintf(msg, size, "%s: %s", what, detail);
    return GU_FAILED;
}

#define GU_TRY(call)                                                                          \
    do {                                                                                      \
        cudaError_t gu_err_ = (call);                                                         \
        if (gu_err_ != cudaSuccess)                                                           \
            return fail(msg, size, what, "%s failed: %s (%s)", #call,                         \
                        cudaGetErrorString(gu_err_), cudaGetErrorName(gu_err_));              \
    } while (0)

static cudaError_t reserve_device(gu_arena *a, size_t bytes) {
    if (bytes <= a->dev_bytes)
        return cudaSuccess;
    if (a->dev) {
        cudaError_t e = cudaFree(a->dev);
        a->dev = NULL;
        a->dev_bytes = 0;
        if (e != cudaSuccess)
            return e;
    }
    size_t want = align_up(bytes + bytes / 2, 1 << 20);
    cudaError_t e = cudaMalloc((void **)&a->dev, want);
    if (e == cudaSuccess)
        a->dev_bytes = want;
    return e;
}

static int reserve_host(gu_arena *a, size_t bytes) {
    if (bytes <= a->host_bytes)
        return 1;
    free(a->host);
    a->host_bytes = align_up(bytes + bytes / 2, 1 << 20);
    a->host = malloc(a->host_bytes);
    if (!a->host)
        a->host_bytes = 0;
    return a->host != NULL;
}

gu_outcome gu_run(gu_arena *a, tu_layout *l, const unsigned char *expected, tscan_algo algo,
                  cudaStream_t stream, char *msg, size_t size) {
    char what[320];
    l->c.desc.algo = algo;
    const tscan_scan_desc desc = l->c.desc;
    tu_case_describe(&l->c, what, sizeof what);

    /* Device arena: [input][output][workspace][guard], each piece 256-aligned like a fresh
     * cudaMalloc, so the views keep testutil's alignment (element size only). */
    const int in_place = l->out_buf == l->in_buf;
    const size_t in_off = 0;
    const size_t out_off = in_place ? 0 : align_up(l->in_bytes, 256);
    const size_t ws_off = align_up(out_off + l->out_bytes, 256);
    tscan_tensor din, dout;
    tscan_status s_sup, s_ws;
    char sup_msg[512];
    size_t ws_bytes = 0;
    for (;;) {
        GU_TRY(reserve_device(a, ws_off + ws_bytes + GU_GUARD_BYTES));
        din = tu_view_rebase(&l->input, l->in_buf, a->dev + in_off);
        dout = tu_view_rebase(&l->output, l->out_buf, a->dev + out_off);
        s_sup = tscan_scan_supported(&desc, &din, &dout);
        snprintf(sup_msg, sizeof sup_msg, "%s", tscan_last_error());
        s_ws = tscan_scan_workspace_size(&desc, &din, &dout, &ws_bytes);
        if (s_ws != TSCAN_SUCCESS || ws_off + ws_bytes + GU_GUARD_BYTES <= a->dev_bytes)
            break;
    }

    if (s_sup == TSCAN_ERROR_NOT_SUPPORTED) {
        if (algo == TSCAN_ALGO_AUTO)
            return fail(msg, size, what, "AUTO answered NOT_SUPPORTED (%s)", sup_msg);
        if (sup_msg[0] == '\0')
            return fail(msg, size, what, "NOT_SUPPORTED without a message");
        if (s_ws != TSCAN_ERROR_NOT_SUPPORTED)
            return fail(msg, size, what,
                        "tscan_scan_supported says NOT_SUPPORTED, tscan_scan_workspace_size %s",
                        tscan_status_string(s_ws));
        tscan_status s = tscan_scan(&desc, &din, &dout, NULL, 0, stream);
        if (s != TSCAN_ERROR_NOT_SUPPORTED)
            return fail(msg, size, what,
                        "tscan_scan_supported says NOT_SUPPORTED, tscan_scan %s (%s)",
                        tscan_status_string(s), tscan_last_error());
        snprintf(msg, size, "%s", sup_msg);
        return GU_NOT_SUPPORTED;
    }
    if (s_sup != TSCAN_SUCCESS)
        return fail(msg, size, what, "tscan_scan_supported: %s (%s)", tscan_status_string(s_sup),
                    sup_msg);
    if (s_ws != TSCAN_SUCCESS)
        return fail(msg, size, what, "tscan_scan_workspace_size: %s (%s)",
                    tscan_status_string(s_ws), tscan_last_error());

    if (algo == TSCAN_ALGO_AUTO) {
        tscan_algo chosen = TSCAN_ALGO_AUTO;
        tscan_status s = tscan_scan_auto_algo(&desc, &din, &dout, &chosen);
        if (s != TSCAN_SUCCESS)
            return fail(msg, size, what, "tscan_scan_auto_algo: %s (%s)", tscan_status_string(s),
                        tscan_last_error());
        if (chosen <= TSCAN_ALGO_AUTO || chosen >= TSCAN_ALGO_COUNT)
            return fail(msg, size, what, "tscan_scan_auto_algo chose %d", (int)chosen);
        tscan_scan_desc as_chosen = desc;
        size_t chosen_bytes = 0;
        as_chosen.algo = chosen;
        /* What AUTO's choice scans: the distinct lines of broadcast ones it copies, the output in
         * place where it gathers a permuted input (tscan_auto_scanned_views). */
        tscan_tensor chosen_in = din, chosen_out = dout;
        if (tscan_numel(&din) > 0) tscan_auto_scanned_views(&desc, &din, &dout, &chosen_in, &chosen_out);
        s = tscan_scan_supported(&as_chosen, &chosen_in, &chosen_out);
        if (s != TSCAN_SUCCESS)
            return fail(msg, size, what, "AUTO chose %s, which answers %s (%s)",
                        tscan_algo_name(chosen), tscan_status_string(s), tscan_last_error());
        s = tscan_scan_workspace_size(&as_chosen, &chosen_in, &chosen_out, &chosen_bytes);
        if (s != TSCAN_SUCCESS || chosen_bytes != ws_bytes)
            return fail(msg, size, what,
                        "AUTO asks for %zu workspace bytes, its choice %s for %zu (%s)", ws_bytes,
                        tscan_algo_name(chosen), chosen_bytes, tscan_status_string(s));
    }

    unsigned char *ws = a->dev + ws_off;
    GU_TRY(cudaMemcpyAsync(a->dev + in_off, l->in_init, l->in_bytes, cudaMemcpyHostToDevice,
                           stream));
    if (!in_place)
        GU_TRY(cudaMemcpyAsync(a->dev + out_off, l->out_init, l->out_bytes,
                               cudaMemcpyHostToDevice, stream));
    GU_TRY(cudaMemsetAsync(ws, GU_WORKSPACE_POISON, ws_bytes + GU_GUARD_BYTES, stream));

    if (ws_bytes > 0) {
        tscan_status s = tscan_scan(&desc, &din, &dout, ws, ws_bytes - 1, stream);
        if (s != TSCAN_ERROR_WORKSPACE || tscan_last_error()[0] == '\0')
            return fail(msg, size, what,
                        "a workspace of %zu bytes (one less than asked) gave %s (\"%s\")",
                        ws_bytes - 1, tscan_status_string(s), tscan_last_error());
        s = tscan_scan(&desc, &din, &dout, NULL, 0, stream);
        if (s != TSCAN_ERROR_WORKSPACE)
            return fail(msg, size, what, "no workspace where %zu bytes are needed gave %s (\"%s\")",
                        ws_bytes, tscan_status_string(s), tscan_last_error());
    }

    tscan_status s = tscan_scan(&desc, &din, &dout, ws_bytes ? ws : NULL, ws_bytes, stream);
    if (s != TSCAN_SUCCESS)
        return fail(msg, size, what, "tscan_scan: %s (%s)", tscan_status_string(s),
                    tscan_last_error());
    GU_TRY(cudaStreamSynchronize(stream));
    GU_TRY(cudaPeekAtLastError());

    const size_t host_need = l->out_bytes + (in_place ? 0 : l->in_bytes) + GU_GUARD_BYTES;
    if (!reserve_host(a, host_need))
        return fail(msg, size, what, "out of host memory (%zu bytes)", host_need);
    unsigned char *h_out = a->host, *h_guard = h_out + l->out_bytes, *h_in = h_guard + GU_GUARD_BYTES;
    GU_TRY(cudaMemcpyAsync(h_out, a->dev + out_off, l->out_bytes, cudaMemcpyDeviceToHost, stream));
    GU_TRY(cudaMemcpyAsync(h_guard, ws + ws_bytes, GU_GUARD_BYTES, cudaMemcpyDeviceToHost, stream));
    if (!in_place)
        GU_TRY(cudaMemcpyAsync(h_in, a->dev + in_off, l->in_bytes, cudaMemcpyDeviceToHost, stream));
    GU_TRY(cudaStreamSynchronize(stream));

    for (size_t i = 0; i < GU_GUARD_BYTES; ++i)
        if (h_guard[i] != GU_WORKSPACE_POISON)
            return fail(msg, size, what, "wrote past its %zu-byte workspace (guard byte %zu)",
                        ws_bytes, i);
    if (!in_place)
        for (size_t i = 0; i < l->in_bytes; ++i)
            if (h_in[i] != l->in_init[i])
                return fail(msg, size, what, "input buffer byte %zu changed from 0x%02x to 0x%02x",
                            i, l->in_init[i], h_in[i]);
    if (!tu_check_output(l, h_out, expected, tu_case_tolerance_k(&l->c), msg, size))
        return GU_FAILED;
    return GU_PASSED;
}

void gu_tally_add(gu_tally *t, tscan_algo algo, gu_outcome o, const char *msg) {
    switch (o) {
    case GU_PASSED: t->passed[algo]++; break;
    case GU_NOT_SUPPORTED: t->unsupported[algo]++; break;
    case GU_FAILED:
        if (t->failed < GU_TALLY_KEEP)
            snprintf(t->first[t->failed], sizeof t->first[0], "%.*s", (int)sizeof t->first[0] - 1, msg);
        t->failed++;
        break;
    }
}

void gu_run_all_algos(gu_arena *a, const tu_case *c, void (*prepare)(tu_layout *l),
                      cudaStream_t stream, gu_tally *t) {
    tu_layout l;
    tu_layout_make(&l, c);
    if (prepare)
        prepare(&l);
    unsigned char *expected = tu_layout_expected(&l);
    for (int algo = 0; algo < TSCAN_ALGO_COUNT; ++algo) {
        char msg[1024];
        gu_outcome o = gu_run(a, &l, expected, (tscan_algo)algo, stream, msg, sizeof msg);
        gu_tally_add(t, (tscan_algo)algo, o, msg);
    }
    free(expected);
    tu_layout_free(&l);
}

void gu_tally_assert(const gu_tally *t, const char *what) {
    char counts[512];
    size_t used = 0;
    for (int algo = 0; algo < TSCAN_ALGO_COUNT && used < sizeof counts; ++algo)
        used += (size_t)snprintf(counts + used, sizeof counts - used, "%s%s %ld ran, %ld not supported",
                                 algo ? "; " : "", tscan_algo_name((tscan_algo)algo),
                                 t->passed[algo], t->unsupported[algo]);
    cr_log_info("%s: %s; %ld failed", what, counts, t->failed);
    for (long i = 0; i < t->failed && i < GU_TALLY_KEEP; ++i)
        cr_log_error("%s failure %ld: %s", what, i + 1, t->first[i]);
    cr_assert(t->failed == 0, "%s: %ld runs failed (%s); first: %s", what, t->failed, counts,
              t->first[0]);
}

void gu_layout_commit_input(tu_layout *l) { memcpy(l->in_init, l->in_buf, l->in_bytes); }

void gu_make_units(tu_layout *l) {
    const tscan_tensor *t = &l->input;
    int64_t idx[TSCAN_MAX_DIMS] = {0};
    if (tscan_numel(t) == 0)
        return;
    do {
        void *p = tu_elem(t, idx);
        if (tu_dtype_is_float(t->dtype))
            tu_set(t->dtype, p, tu_get(t->dtype, p) < 0 ? -1.0 : 1.0);
        else
            tu_set_u64(t->dtype, p, tu_get_u64(t->dtype, p) | 1u);
    } while (tu_next_index(t, idx));
    gu_layout_commit_input(l);
}

tscan_status gu_buffers_make(gu_buffers *b, const tu_layout *l, const tscan_scan_desc *desc) {
    const int in_place = l->out_buf == l->in_buf;
    memset(b, 0, sizeof *b);
    GU_CUDA(cudaMalloc((void **)&b->in, l->in_bytes));
    b->out = b->in;
    if (!in_place)
        GU_CUDA(cudaMalloc((void **)&b->out, l->out_bytes));
    b->input = tu_view_rebase(&l->input, l->in_buf, b->in);
    b->output = tu_view_rebase(&l->output, l->out_buf, b->out);
    tscan_status s = tscan_scan_workspace_size(desc, &b->input, &b->output, &b->ws_bytes);
    if (s != TSCAN_SUCCESS) {
        gu_buffers_free(b);
        return s;
    }
    if (b->ws_bytes)
        GU_CUDA(cudaMalloc((void **)&b->ws, b->ws_bytes));
    gu_buffers_upload(b, l, (cudaStream_t)0);
    GU_CUDA(cudaStreamSynchronize((cudaStream_t)0));
    return TSCAN_SUCCESS;
}

void gu_buffers_upload(const gu_buffers *b, const tu_layout *l, cudaStream_t stream) {
    GU_CUDA(cudaMemcpyAsync(b->in, l->in_init, l->in_bytes, cudaMemcpyHostToDevice, stream));
    if (b->out != b->in)
        GU_CUDA(cudaMemcpyAsync(b->out, l->out_init, l->out_bytes, cudaMemcpyHostToDevice, stream));
}

unsigned char *gu_buffers_download(const gu_buffers *b, const tu_layout *l, cudaStream_t stream) {
    unsigned char *host = malloc(l->out_bytes);
    cr_assert(host != NULL, "out of host memory");
    GU_CUDA(cudaStreamSynchronize(stream));
    GU_CUDA(cudaMemcpy(host, b->out, l->out_bytes, cudaMemcpyDeviceToHost));
    return host;
}

void gu_buffers_free(gu_buffers *b) {
    if (b->out && b->out != b->in)
        GU_CUDA(cudaFree(b->out));
    if (b->in)
        GU_CUDA(cudaFree(b->in));
    if (b->ws)
        GU_CUDA(cudaFree(b->ws));
    memset(b, 0, sizeof *b);
}

void gu_graph_destroy(cudaGraphExec_t exec, cudaGraph_t graph) {
    GU_CUDA(cudaGraphExecDestroy(exec));
    GU_CUDA(cudaGraphDestroy(graph));
}
