/* device.c - what tscan needs to know of a device, read once per device and cached: its
 * multiprocessors, shared memory, pageable-memory access, and whether this build holds
 * kernels it can run (the message for a device it was not built for is made here). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "tscan_internal.h"

#ifndef TSCAN_BUILT_ARCHS
#define TSCAN_BUILT_ARCHS "unknown"
#endif

static tscan_device_info cache[TSCAN_MAX_DEVICES];
static atomic_int cached[TSCAN_MAX_DEVICES]; /* 1 once cache[d] is complete: readers need no lock */
static pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;

static tscan_status cuda_failure(cudaError_t e, const char *what, int device) {
    (void)cudaGetLastError(); /* ours: converted into the status, then cleared */
    return tscan_fail(TSCAN_ERROR_CUDA, "%s (device %d): %s (%s)", what, device, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

static tscan_status read_device(int device, tscan_device_info *info) {
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) return cuda_failure(e, "cudaGetDeviceProperties", device);
    info->ordinal = device;
    info->sm_count = prop.multiProcessorCount;
    info->cc = prop.major * 10 + prop.minor;
    info->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    info->smem_per_sm = prop.sharedMemPerMultiprocessor;
    info->pageable_memory_access = prop.pageableMemoryAccess;
    info->kernel_image = tscan_probe_kernel_image() == cudaSuccess;
    (void)cudaGetLastError(); /* a missing image is an answer here, not an error to leave pending */
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    return TSCAN_SUCCESS;
}

tscan_status tscan_device_info_of(int device, const tscan_device_info **info) {
    if (device < 0 || device >= TSCAN_MAX_DEVICES)
        return tscan_fail(TSCAN_ERROR_INTERNAL, "device %d is beyond the %d devices tscan caches", device,
                          TSCAN_MAX_DEVICES);
    if (!atomic_load_explicit(&cached[device], memory_order_acquire)) {
        tscan_status s = TSCAN_SUCCESS;
        pthread_mutex_lock(&fill_lock);
        if (!atomic_load_explicit(&cached[device], memory_order_relaxed)) {
            /* The probe runs on the current device: make it the one asked about meanwhile. */
            int current = 0;
            cudaError_t e = cudaGetDevice(&current);
            if (e == cudaSuccess && current != device) e = cudaSetDevice(device);
            if (e != cudaSuccess) s = cuda_failure(e, "cudaSetDevice", device);
            if (s == TSCAN_SUCCESS) s = read_device(device, &cache[device]);
            if (current != device) (void)cudaSetDevice(current);
            if (s == TSCAN_SUCCESS) atomic_store_explicit(&cached[device], 1, memory_order_release);
        }
        pthread_mutex_unlock(&fill_lock);
        if (s != TSCAN_SUCCESS) return s;
    }
    *info = &cache[device];
    if (!cache[device].kernel_image)
        return tscan_fail(TSCAN_ERROR_CUDA,
                          "tscan was built for CUDA architectures %s, which device %d (%s, sm_%d) cannot run: "
                          "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d (or native)",
                          TSCAN_BUILT_ARCHS, device, cache[device].name, cache[device].cc, cache[device].cc);
    return TSCAN_SUCCESS;
}

tscan_status tscan_current_device_info(const tscan_device_info **info) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return cuda_failure(e, "cudaGetDevice", -1);
    return tscan_device_info_of(device, info);
}

int tscan_device_present(void) {
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess) return 1;
    (void)cudaGetLastError();
    return 0;
}
