/* main.c - tscan-bench: the benchmark driver (a run), or `tscan-bench compare`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compare.h"
#include "options.h"
#include "report.h"
#include "run.h"
#include "sweep.h"

static int usage_error(const char *message) {
    fprintf(stderr, "tscan-bench: %s\nRun 'tscan-bench --help' for usage.\n", message);
    return EXIT_USAGE;
}

static void print_cases(const bench_case *cases, size_t count) {
    for (size_t i = 0; i < count; ++i)
        printf("%-12s %14lld B  %s\n", cases[i].shape->class_name, (long long)case_bytes_moved(&cases[i]),
               cases[i].name);
    printf("%zu cases\n", count);
}

/* Opens the backend the options ask for; falls back to the reference backend when there is
 * no GPU and none was demanded. Returns an exit status (EXIT_PASSED on success). */
static int open_backend(const bench_options *o, bench_backend *b, device_info *device, int *have_device,
                        char *no_gpu, size_t no_gpu_len) {
    char err[512];
    int opened;
    *have_device = 0;
    no_gpu[0] = '\0';
    if (o->backend != BACKEND_REFERENCE) {
        opened = gpu_backend_create(b, o->device, device, err, sizeof err);
        if (opened == BACKEND_OK) {
            *have_device = 1;
            return EXIT_PASSED;
        }
        if (opened == BACKEND_BAD_DEVICE) return usage_error(err);
        if (opened == BACKEND_ERROR || o->backend == BACKEND_GPU) {
            fprintf(stderr, "tscan-bench: %s\n", err);
            return EXIT_FAILED;
        }
        snprintf(no_gpu, no_gpu_len, "%s", err);
        fprintf(stderr, "tscan-bench: %s; running the reference backend (tscan_scan_reference on the host) "
                        "on a small sweep instead\n", err);
    } else {
        snprintf(no_gpu, no_gpu_len, "--backend reference");
    }
    if (host_backend_create(b, err, sizeof err)) {
        fprintf(stderr, "tscan-bench: %s\n", err);
        return EXIT_FAILED;
    }
    return EXIT_PASSED;
}

static int run_main(int argc, char **argv) {
    bench_options o;
    bench_backend backend;
    device_info device;
    bench_sweep sweep;
    bench_case *cases = NULL;
    size_t count = 0;
    run_results results;
    run_context context;
    measure_settings settings;
    char err[1024], no_gpu[512];
    int have_device, reference, status, overridden;

    if (parse_run_options(argc, argv, &o, err, sizeof err)) return usage_error(err);
    if (o.help) {
        print_run_usage(stdout);
        return EXIT_PASSED;
    }
    if ((status = open_backend(&o, &backend, &device, &have_device, no_gpu, sizeof no_gpu)) != EXIT_PASSED)
        return status;
    reference = !have_device;
    if (reference && o.masks[AXIS_ALGO])
        fprintf(stderr, "tscan-bench: --algo has no effect on the reference backend\n");

    if (o.sweep_path ? sweep_load_file(&sweep, o.sweep_path, err, sizeof err)
                     : sweep_default(&sweep, reference, o.quick)) {
        backend.destroy(&backend);
        return o.sweep_path ? usage_error(err) : usage_error("out of memory building the sweep");
    }
    overridden = sweep_override(&sweep, o.shapes, o.shape_count, o.masks) == 0;
    if (overridden && sweep_output_dtype(&sweep, o.output_dtype, err, sizeof err)) {
        sweep_free(&sweep);
        backend.destroy(&backend);
        return usage_error(err);
    }
    if (!overridden || sweep_expand(&sweep, reference, &cases, &count)) {
        sweep_free(&sweep);
        backend.destroy(&backend);
        fprintf(stderr, "tscan-bench: out of host memory expanding the sweep\n");
        return EXIT_FAILED;
    }

    settings = o.measure;
    if (!o.time_limit_given) settings.time_limit = reference ? 0.1 : 0.25;
    context.argc = argc;
    context.argv = argv;
    context.options = &o;
    context.measure = &settings;
    context.backend = backend.name;
    context.timer = backend.timer;
    context.flush_bytes = backend.flush_bytes;
    context.device = have_device ? &device : NULL;
    context.gpu_unavailable = have_device ? NULL : no_gpu;

    if (o.list) {
        print_cases(cases, count);
        status = EXIT_PASSED;
        if (o.output_given && case_list_write(o.output_path, &context, cases, count, err, sizeof err)) {
            fprintf(stderr, "tscan-bench: %s\n", err);
            status = EXIT_FAILED;
        }
    } else if (run_cases(&backend, &settings, o.seed, cases, count, &results, stdout)) {
        fprintf(stderr, "tscan-bench: out of host memory for the results\n");
        status = EXIT_FAILED;
    } else {
        status = results.failed ? EXIT_FAILED : EXIT_PASSED;
        fprintf(stderr, "tscan-bench: %zu cases: %zu passed, %zu failed, %zu skipped (%.1f s)\n", count,
                results.passed, results.failed, results.skipped, results.walltime);
        if (report_write(o.output_path, &context, cases, count, &results, err, sizeof err)) {
            fprintf(stderr, "tscan-bench: %s\n", err);
            status = EXIT_FAILED;
        } else {
            fprintf(stderr, "tscan-bench: report written to %s\n", o.output_path);
        }
        run_results_free(&results);
    }
    free(cases);
    sweep_free(&sweep);
    backend.destroy(&backend);
    return status;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "compare")) return compare_main(argc - 1, argv + 1);
    return run_main(argc, argv);
}
