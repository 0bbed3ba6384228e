/* names.c - names, sizes and the version, generated from the lists in tscan.h. */
#include "tscan_internal.h"

#define TSCAN_STR_(x) #x
#define TSCAN_STR(x) TSCAN_STR_(x)

const char *tscan_dtype_name(tscan_dtype t) {
    switch (t) {
#define TSCAN_NAME_CASE(D, name, bytes, kind) case D: return #name;
        TSCAN_DTYPE_LIST(TSCAN_NAME_CASE)
#undef TSCAN_NAME_CASE
    default: return NULL;
    }
}

size_t tscan_dtype_size(tscan_dtype t) { return tscan_bytes_of(t); }

int tscan_output_dtype_allowed(tscan_dtype input, tscan_dtype output) {
    return (unsigned)input < (unsigned)TSCAN_DTYPE_COUNT && (unsigned)output < (unsigned)TSCAN_DTYPE_COUNT &&
           tscan_pair_allowed(input, output);
}

const char *tscan_algo_name(tscan_algo a) {
    switch (a) {
    case TSCAN_ALGO_AUTO: return "auto";
    case TSCAN_ALGO_CUB_DEVICE: return "cub_device";
    case TSCAN_ALGO_ROWS: return "rows";
    case TSCAN_ALGO_COLUMNS: return "columns";
    case TSCAN_ALGO_LOOKBACK: return "lookback";
    case TSCAN_ALGO_STREAM: return "stream";
    default: return NULL;
    }
}

const char *tscan_op_name(tscan_op op) {
    switch (op) {
    case TSCAN_OP_SUM: return "sum";
    case TSCAN_OP_PROD: return "prod";
    default: return NULL;
    }
}

int tscan_version(void) { return TSCAN_VERSION; }

const char *tscan_version_string(void) {
    return TSCAN_STR(TSCAN_VERSION_MAJOR) "." TSCAN_STR(TSCAN_VERSION_MINOR) "." TSCAN_STR(
        TSCAN_VERSION_PATCH);
}
