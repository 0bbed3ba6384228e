/* errors.c - status strings and the thread-local failure message. */
#include <stdarg.h>
#include <stdio.h>

#include "tscan_internal.h"

/* One message per host thread, so concurrent callers on several streams never mix them. */
static _Thread_local char last_error[512];

tscan_status tscan_fail(tscan_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

const char *tscan_last_error(void) { return last_error; }

const char *tscan_status_string(tscan_status s) {
    switch (s) {
    case TSCAN_SUCCESS: return "TSCAN_SUCCESS";
    case TSCAN_ERROR_INVALID_ARGUMENT: return "TSCAN_ERROR_INVALID_ARGUMENT";
    case TSCAN_ERROR_OVERLAP: return "TSCAN_ERROR_OVERLAP";
    case TSCAN_ERROR_NOT_SUPPORTED: return "TSCAN_ERROR_NOT_SUPPORTED";
    case TSCAN_ERROR_WORKSPACE: return "TSCAN_ERROR_WORKSPACE";
    case TSCAN_ERROR_CUDA: return "TSCAN_ERROR_CUDA";
    case TSCAN_ERROR_INTERNAL: return "TSCAN_ERROR_INTERNAL";
    }
    return "unknown status";
}
