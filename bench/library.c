/* library.c - the linked library's entry points, or a build's loaded with dlopen. */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#include "library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const tscan_library tscan_linked_library = {
    NULL, NULL, tscan_scan, tscan_scan_workspace_size, tscan_scan_supported, tscan_scan_auto_algo,
    tscan_status_string, tscan_last_error, tscan_version_string, tscan_output_dtype_allowed};

/* dlsym answers void *; POSIX guarantees it converts to a function pointer. */
#define RESOLVE(field, symbol)                                                                        \
    do {                                                                                              \
        void *address = dlsym(library->handle, symbol);                                               \
        if (!address) {                                                                               \
            snprintf(err, errlen, "%s: has no symbol %s (not a libtscan build?)", path, symbol);    \
            tscan_library_close(library);                                                             \
            return -1;                                                                                \
        }                                                                                             \
        memcpy(&library->field, &address, sizeof address);                                           \
    } while (0)

int tscan_library_load(tscan_library *library, const char *path, char *err, size_t errlen) {
    memset(library, 0, sizeof *library);
    library->path = path;
    /* DEEPBIND: the build's calls to its own exported functions resolve in the build, not in the
     * libtscan tscan-bench links (which comes first in the global scope). */
    if (!(library->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND))) {
        snprintf(err, errlen, "%s: cannot load: %s", path, dlerror());
        return -1;
    }
    RESOLVE(scan, "tscan_scan");
    RESOLVE(workspace_size, "tscan_scan_workspace_size");
    RESOLVE(supported, "tscan_scan_supported");
    RESOLVE(auto_algo, "tscan_scan_auto_algo");
    RESOLVE(status_string, "tscan_status_string");
    RESOLVE(last_error, "tscan_last_error");
    RESOLVE(version_string, "tscan_version_string");
    {
        void *address = dlsym(library->handle, "tscan_output_dtype_allowed"); /* optional */
        if (address) memcpy(&library->output_dtype_allowed, &address, sizeof address);
    }
    return 0;
}

void tscan_library_close(tscan_library *library) {
    if (library->handle) dlclose(library->handle);
    library->handle = NULL;
}
