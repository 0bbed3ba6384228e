/* wrong_answer.c - LD_PRELOAD stand-in for tscan_scan_reference: runs the real one, then
 * adds 1 to element (0,...,0) of every float32 output of two or more dimensions. tscan-bench
 * checks with one-dimensional lines, so on the reference backend the whole-tensor run (the
 * one under test) comes out wrong while the check's own reference stays right. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "tscan.h"

typedef tscan_status (*reference_fn)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *);

tscan_status tscan_scan_reference(const tscan_scan_desc *desc, const tscan_tensor *input,
                                  const tscan_tensor *output) {
    static reference_fn real;
    tscan_status status;
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "tscan_scan_reference");
    if (!real) return TSCAN_ERROR_INTERNAL;
    status = real(desc, input, output);
    if (status == TSCAN_SUCCESS && output->ndim >= 2 && output->dtype == TSCAN_FLOAT32)
        *(float *)output->data += 1.0f;
    return status;
}
