/*
 * test_gpu_devices.c - tscan_scan and the CUDA state around it: a scan captured in a graph on
 * memory allocated inside the same capture; an error the caller left pending stays pending
 * and launches nothing; memory of another device is refused by name; the device's cached
 * facts are the device's.
 *
 * Skips, saying why, when there is no CUDA device (or, for the second device, only one).
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuload.h"
#include "gpuutil.h"
#include "testutil.h"
#include "tscan_internal.h"

static void make_case(tu_layout *l, tscan_algo algo) {
    static const gu_shape shape = {2, {300, 5001}, 1};
    tu_case c = gu_case(TSCAN_FLOAT32, &shape, 0, TU_LAYOUT_PACKED, TU_DATA_SMALL_INT, tu_seed("devices", algo));
    tu_layout_make(l, &c);
    l->c.desc.algo = algo;
}

/* Output and workspace from cudaMallocAsync inside the capture (they exist only when the graph
 * runs, so the driver cannot classify them while capturing); the result is copied into a buffer
 * made before the capture, poisoned, and checked. */
static void capture_with_stream_ordered_memory(tscan_algo algo) {
    GU_REQUIRE_DEVICE();
    tu_layout l;
    make_case(&l, algo);
    gu_buffers b;
    cr_assert_eq(gu_buffers_make(&b, &l, &l.c.desc), TSCAN_SUCCESS, "%s", tscan_last_error());
    cudaStream_t s;
    GU_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *out = NULL, *ws = NULL;
    const ptrdiff_t view_offset = (unsigned char *)b.output.data - b.out;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    GU_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    GU_CUDA(cudaMallocAsync((void **)&out, l.out_bytes, s));
    if (b.ws_bytes) GU_CUDA(cudaMallocAsync((void **)&ws, b.ws_bytes, s));
    GU_CUDA(cudaMemcpyAsync(out, b.out, l.out_bytes, cudaMemcpyDeviceToDevice, s)); /* the poison */
    tscan_tensor output = b.output;
    output.data = out + view_offset;
    tscan_status st = tscan_scan(&l.c.desc, &b.input, &output, ws, b.ws_bytes, s);
    char msg[512];
    strncpy(msg, tscan_last_error(), sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    GU_CUDA(cudaMemcpyAsync(b.out, out, l.out_bytes, cudaMemcpyDeviceToDevice, s));
    GU_CUDA(cudaFreeAsync(out, s));
    if (ws) GU_CUDA(cudaFreeAsync(ws, s));
    GU_CUDA(cudaStreamEndCapture(s, &graph));
    cr_assert_eq(st, TSCAN_SUCCESS, "%s: tscan_scan in the capture: %s (%s)", tscan_algo_name(algo),
                 tscan_status_string(st), msg);
    GU_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    unsigned char *expected = tu_layout_expected(&l);
    for (int launch = 0; launch < 2; ++launch) {
        gu_buffers_upload(&b, &l, s); /* output poisoned again */
        GU_CUDA(cudaGraphLaunch(exec, s));
        unsigned char *got = gu_buffers_download(&b, &l, s);
        cr_assert(tu_check_output(&l, got, expected, tu_case_tolerance_k(&l.c), msg, sizeof msg),
                  "%s, graph launch %d: %s", tscan_algo_name(algo), launch + 1, msg);
        free(got);
    }
    free(expected);
    gu_graph_destroy(exec, graph);
    GU_CUDA(cudaStreamDestroy(s));
    gu_buffers_free(&b);
    tu_layout_free(&l);
}

Test(gpu_devices, capture_with_stream_ordered_memory_auto) { capture_with_stream_ordered_memory(TSCAN_ALGO_AUTO); }
Test(gpu_devices, capture_with_stream_ordered_memory_lookback) {
    capture_with_stream_ordered_memory(TSCAN_ALGO_LOOKBACK);
}
Test(gpu_devices, capture_with_stream_ordered_memory_stream) { capture_with_stream_ordered_memory(TSCAN_ALGO_STREAM); }

/* A launch error the caller left pending: tscan_scan says so, writes nothing, and the error is
 * still there for the caller afterwards; once the caller has read it, the scan runs. */
Test(gpu_devices, a_pending_error_stays_the_callers) {
    GU_REQUIRE_DEVICE();
    tu_layout l;
    make_case(&l, TSCAN_ALGO_AUTO);
    gu_buffers b;
    cr_assert_eq(gu_buffers_make(&b, &l, &l.c.desc), TSCAN_SUCCESS, "%s", tscan_last_error());
    const cudaError_t left = gl_leave_launch_error();
    cr_assert_neq(left, cudaSuccess, "the provoked launch did not fail");
    tscan_status st = tscan_scan(&l.c.desc, &b.input, &b.output, b.ws, b.ws_bytes, 0);
    cr_assert_eq(st, TSCAN_ERROR_CUDA, "with an error pending: %s (%s)", tscan_status_string(st), tscan_last_error());
    cr_assert(strstr(tscan_last_error(), "pending") && strstr(tscan_last_error(), cudaGetErrorName(left)),
              "the message names neither the pending state nor the error: %s", tscan_last_error());
    cr_assert_eq(cudaGetLastError(), left, "tscan_scan cleared or replaced the caller's error");
    unsigned char *got = gu_buffers_download(&b, &l, 0);
    cr_assert(memcmp(got, l.out_init, l.out_bytes) == 0, "tscan_scan wrote the output with an error pending");
    free(got);
    st = tscan_scan(&l.c.desc, &b.input, &b.output, b.ws, b.ws_bytes, 0);
    cr_assert_eq(st, TSCAN_SUCCESS, "after the caller read its error: %s (%s)", tscan_status_string(st),
                 tscan_last_error());
    cr_assert_eq(cudaStreamSynchronize(0), cudaSuccess);
    cr_assert_eq(cudaGetLastError(), cudaSuccess, "tscan_scan left an error pending after a good scan");
    gu_buffers_free(&b);
    tu_layout_free(&l);
}

/* Memory on another device than the stream's, with no peer access between them. */
Test(gpu_devices, memory_of_another_device_is_refused) {
    GU_REQUIRE_DEVICE();
    int devices = 0, peer = 0;
    GU_CUDA(cudaGetDeviceCount(&devices));
    if (devices < 2) cr_skip_test("one CUDA device: no other device's memory to refuse");
    GU_CUDA(cudaDeviceCanAccessPeer(&peer, 0, 1));
    if (peer) cr_skip_test("devices 0 and 1 can access each other's memory: nothing to refuse");
    tu_layout l;
    make_case(&l, TSCAN_ALGO_AUTO);
    GU_CUDA(cudaSetDevice(1));
    gu_buffers b;
    cr_assert_eq(gu_buffers_make(&b, &l, &l.c.desc), TSCAN_SUCCESS, "%s", tscan_last_error());
    GU_CUDA(cudaSetDevice(0));
    tscan_status st = tscan_scan(&l.c.desc, &b.input, &b.output, b.ws, b.ws_bytes, 0);
    cr_assert_eq(st, TSCAN_ERROR_INVALID_ARGUMENT, "%s (%s)", tscan_status_string(st), tscan_last_error());
    cr_assert(strstr(tscan_last_error(), "device 1"), "the message does not name the device: %s", tscan_last_error());
    GU_CUDA(cudaSetDevice(1));
    gu_buffers_free(&b);
    GU_CUDA(cudaSetDevice(0));
    tu_layout_free(&l);
}

/* The cached facts are the device's own, and this build runs on it. */
Test(gpu_devices, the_cached_facts_are_the_devices) {
    GU_REQUIRE_DEVICE();
    const tscan_device_info *info = NULL;
    int device = 0, sms = 0, major = 0, minor = 0;
    GU_CUDA(cudaGetDevice(&device));
    GU_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GU_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    GU_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    cr_assert_eq(tscan_current_device_info(&info), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert_eq(info->ordinal, device);
    cr_assert_eq(info->sm_count, sms);
    cr_assert_eq(info->cc, major * 10 + minor);
    cr_assert(info->kernel_image);
    cr_log_info("device %d: %s, sm_%d, %d SMs, %zu bytes of shared memory a block", device, info->name, info->cc,
                info->sm_count, info->smem_per_block_optin);
}
