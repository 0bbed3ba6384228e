/* library.h - the tscan entry points the benchmark calls, as a table: those of the library
 * tscan-bench links, or those of a build loaded by path (tscan-bench ab times two builds in
 * one process, each loaded on its own). */
#ifndef TSCAN_BENCH_LIBRARY_H
#define TSCAN_BENCH_LIBRARY_H

#include <stddef.h>

#include "tscan.h"

typedef struct tscan_library {
    const char *path; /* NULL for the linked library */
    void *handle;     /* dlopen's handle; NULL for the linked library */
    tscan_status (*scan)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *, void *, size_t,
                         cudaStream_t);
    tscan_status (*workspace_size)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *, size_t *);
    tscan_status (*supported)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *);
    tscan_status (*auto_algo)(const tscan_scan_desc *, const tscan_tensor *, const tscan_tensor *, tscan_algo *);
    const char *(*status_string)(tscan_status);
    const char *(*last_error)(void);
    const char *(*version_string)(void);
    /* NULL for a build from before wider outputs (issue 28): it scans into the input's dtype only. */
    int (*output_dtype_allowed)(tscan_dtype, tscan_dtype);
} tscan_library;

extern const tscan_library tscan_linked_library;

/* Loads the shared library at `path` (RTLD_LOCAL and RTLD_DEEPBIND, so that two builds keep
 * their own symbols) and resolves every entry point (output_dtype_allowed where the build has
 * it). Returns 0, or -1 with a message naming the path. */
int tscan_library_load(tscan_library *library, const char *path, char *err, size_t errlen);
void tscan_library_close(tscan_library *library);

#endif
