/* main.c - tscan-bench: the benchmark driver (a run), `tscan-bench compare`, `tscan-bench ab`
 * (two builds of the library timed alternately in one process), or `tscan-bench calls` (what a
 * call costs back to back, host included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "calls.h"
#include "compare.h"
#include "options.h"
#include "random_sweep.h"
#include "report.h"
#include "run.h"
#include "summary.h"
#include "sweep.h"

static int usage_error(const char *message) {
    fprintf(stderr, "tscan-bench: %s\nRun 'tscan-bench --help' for usage.\n", message);
    return EXIT_USAGE;
}

static void print_cases(const bench_case *cases, size_t count) {
    for (size_t i = 0; i < count; ++i)
        printf("%-17s %14lld B  %s\n", cases[i].shape->class_name, (long long)case_bytes_moved(&cases[i]),
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
        opened = gpu_backend_create(b, &tscan_linked_library, o->device, device, err, sizeof err);
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

/* Completes the random sweep's byte range from the backend's defaults (a bound given alone
 * moves the other where it would cross it) and checks that its largest case fits in half the
 * device's memory. Returns 0, or -1 with a message. */
static int resolve_random_range(bench_options *o, const device_info *device, char *err, size_t errlen) {
    const int gpu = device != NULL;
    const double mib = 1024.0 * 1024.0, factor = RANDOM_MAX_SPAN_FACTOR + 1;
    const double default_min = gpu ? RANDOM_GPU_MIN_MIB : RANDOM_REFERENCE_MIN_MIB;
    const double default_max = gpu ? RANDOM_GPU_MAX_MIB : RANDOM_REFERENCE_MAX_MIB;
    if (o->random_min_mib <= 0.0)
        o->random_min_mib =
            o->random_max_mib > 0.0 && o->random_max_mib < default_min ? o->random_max_mib : default_min;
    if (o->random_max_mib <= 0.0) o->random_max_mib = o->random_min_mib > default_max ? o->random_min_mib : default_max;
    if (gpu && factor * o->random_max_mib * mib > 0.5 * (double)device->global_memory_size) {
        snprintf(err, errlen,
                 "--random-max-mib: a case of %g MiB may need %g MiB of device memory (an input spanning up to %d "
                 "times the tensor, and the output); more than half of the device's %.0f MiB",
                 o->random_max_mib, factor * o->random_max_mib, RANDOM_MAX_SPAN_FACTOR,
                 (double)device->global_memory_size / mib);
        return -1;
    }
    return 0;
}

/* The cases a run measures: drawn (--random), from a sweep file, or the built-in sweep, with
 * the command line's overrides. Returns an exit status (EXIT_PASSED on success). */
static int build_cases(bench_options *o, const device_info *device, int reference, bench_sweep *sweep,
                       bench_case **cases, size_t *count) {
    char err[1024];
    if (o->random_count) {
        random_spec spec;
        if (resolve_random_range(o, device, err, sizeof err)) return usage_error(err);
        spec.count = (size_t)o->random_count;
        spec.min_bytes = o->random_min_mib * 1024.0 * 1024.0;
        spec.max_bytes = o->random_max_mib * 1024.0 * 1024.0;
        memcpy(spec.masks, o->masks, sizeof spec.masks);
        if (sweep_random(sweep, &spec, o->seed, err, sizeof err)) {
            fprintf(stderr, "tscan-bench: %s\n", err);
            return EXIT_FAILED;
        }
    } else if (o->sweep_path ? sweep_load_file(sweep, o->sweep_path, err, sizeof err)
                             : sweep_default(sweep, reference, o->quick)) {
        return o->sweep_path ? usage_error(err) : usage_error("out of memory building the sweep");
    } else if (sweep_override(sweep, o->shapes, o->shape_count, o->masks)) {
        sweep_free(sweep);
        fprintf(stderr, "tscan-bench: out of host memory expanding the sweep\n");
        return EXIT_FAILED;
    } else if (sweep_output_dtype(sweep, o->output_dtype, err, sizeof err)) {
        sweep_free(sweep);
        return usage_error(err);
    }
    /* The random sweep drew its cases within the masks: no override crosses them. */
    if (sweep_expand(sweep, reference, cases, count)) {
        sweep_free(sweep);
        fprintf(stderr, "tscan-bench: out of host memory expanding the sweep\n");
        return EXIT_FAILED;
    }
    return EXIT_PASSED;
}

static void fill_context(run_context *context, int argc, char **argv, const bench_options *o,
                         const measure_settings *settings, const bench_backend *backend, const device_info *device,
                         const char *gpu_unavailable) {
    context->argc = argc;
    context->argv = argv;
    context->options = o;
    context->measure = settings;
    context->backend = backend->name;
    context->timer = backend->timer;
    context->flush_bytes = backend->flush_bytes;
    context->device = device;
    context->gpu_unavailable = gpu_unavailable;
    context->library = backend->library;
}

/* Writes a run's report, and its distribution table to `table` unless NULL; returns an exit
 * status. */
static int write_report(const char *path, const run_context *context, const bench_case *cases, size_t count,
                        const run_results *results, FILE *table) {
    char err[1024];
    if (report_write(path, context, cases, count, results, table, err, sizeof err)) {
        fprintf(stderr, "tscan-bench: %s\n", err);
        return EXIT_FAILED;
    }
    fprintf(stderr, "tscan-bench: report written to %s\n", path);
    return EXIT_PASSED;
}

static int run_main(int argc, char **argv) {
    bench_options o;
    bench_backend backend, *backends[1] = {&backend};
    device_info device;
    bench_sweep sweep;
    bench_case *cases = NULL;
    size_t count = 0;
    run_results results;
    run_context context;
    measure_settings settings;
    char err[1024], no_gpu[512];
    int have_device, reference, status;

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
    if ((status = build_cases(&o, have_device ? &device : NULL, reference, &sweep, &cases, &count)) != EXIT_PASSED) {
        backend.destroy(&backend);
        return status;
    }

    settings = o.measure;
    if (!o.time_limit_given) settings.time_limit = reference ? 0.1 : 0.25;
    fill_context(&context, argc, argv, &o, &settings, &backend, have_device ? &device : NULL,
                 have_device ? NULL : no_gpu);

    if (o.list) {
        print_cases(cases, count);
        status = EXIT_PASSED;
        if (o.output_given && case_list_write(o.output_path, &context, cases, count, err, sizeof err)) {
            fprintf(stderr, "tscan-bench: %s\n", err);
            status = EXIT_FAILED;
        }
    } else if (run_cases(backends, 1, &settings, o.seed, cases, count, &results, stdout)) {
        fprintf(stderr, "tscan-bench: out of host memory for the results\n");
        status = EXIT_FAILED;
    } else {
        fprintf(stderr, "tscan-bench: %zu cases: %zu passed, %zu failed, %zu skipped (%.1f s)\n", count,
                results.passed, results.failed, results.skipped, results.walltime);
        status = write_report(o.output_path, &context, cases, count, &results, stdout);
        if (results.failed) status = EXIT_FAILED;
        run_results_free(&results);
    }
    free(cases);
    sweep_free(&sweep);
    backend.destroy(&backend);
    return status;
}

static void print_ab_usage(FILE *out) {
    fputs("usage: tscan-bench ab --lib-a PATH --lib-b PATH [--output-a FILE] [--output-b FILE]\n"
          "                      [compare options] [run options]\n"
          "Times two builds of libtscan.so (each loaded with dlopen on its own) on the same GPU, alternating\n"
          "them case by case over the sweep the run options select, writes a report for each (default\n"
          "tscan-bench-a.json, tscan-bench-b.json) and prints the compare of B against A. Compare options as\n"
          "for 'tscan-bench compare', except that the run-to-run spreads default to 0 (both builds share the\n"
          "run). Needs a GPU: there is no reference-backend fallback.\n"
          "Exit status: 0 when no case is SLOW, 1 when one is or a case failed, 2 on a usage error, a\n"
          "library that does not load, or no GPU.\n",
          out);
}

static int ab_main(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL}, *outputs[2] = {"tscan-bench-a.json", "tscan-bench-b.json"};
    char **run_argv = calloc((size_t)argc + 1, sizeof *run_argv);
    int run_argc = 1, status = EXIT_USAGE, opened = 0, created = 0;
    compare_settings compare;
    tscan_library libraries[2];
    bench_backend backends[2], *order[2] = {&backends[0], &backends[1]};
    device_info device;
    bench_options o;
    bench_sweep sweep;
    bench_case *cases = NULL;
    size_t count = 0;
    run_results results[2];
    measure_settings settings;
    char err[1024];

    if (!run_argv) return usage_error("out of host memory");
    compare_settings_default(&compare);
    compare.spread = compare.off_copy_spread = 0.0;
    run_argv[0] = argv[0];
    for (int i = 1; i < argc; ++i) {
        static const char *const flags[] = {"--lib-a", "--lib-b", "--output-a", "--output-b"};
        const char **targets[] = {&paths[0], &paths[1], &outputs[0], &outputs[1]};
        int taken = 0, error;
        if (!strcmp(argv[i], "--help")) {
            print_ab_usage(stdout);
            free(run_argv);
            return EXIT_PASSED;
        }
        for (size_t k = 0; k < 4 && !taken; ++k) {
            if (strcmp(argv[i], flags[k])) continue;
            if (i + 1 == argc) {
                fprintf(stderr, "tscan-bench ab: %s needs a value\n", flags[k]);
                goto done;
            }
            *targets[k] = argv[++i];
            taken = 1;
        }
        if (taken) continue;
        if (parse_compare_option(argc, argv, &i, &compare, &error)) {
            if (error != EXIT_PASSED) goto done;
            continue;
        }
        if (!strcmp(argv[i], "--output") || !strcmp(argv[i], "--backend") || !strcmp(argv[i], "--list")) {
            fprintf(stderr, "tscan-bench ab: %s does not apply (ab writes --output-a and --output-b, on the GPU)\n",
                    argv[i]);
            goto done;
        }
        run_argv[run_argc++] = argv[i];
    }
    if (!paths[0] || !paths[1]) {
        fprintf(stderr, "tscan-bench ab: needs --lib-a PATH and --lib-b PATH (two builds of libtscan.so)\n");
        goto done;
    }
    if (parse_run_options(run_argc, run_argv, &o, err, sizeof err)) {
        fprintf(stderr, "tscan-bench ab: %s\n", err);
        goto done;
    }
    for (; opened < 2; ++opened)
        if (tscan_library_load(&libraries[opened], paths[opened], err, sizeof err)) {
            fprintf(stderr, "tscan-bench ab: --lib-%c %s\n", "ab"[opened], err);
            goto done;
        }
    for (; created < 2; ++created) {
        int made = gpu_backend_create(&backends[created], &libraries[created], o.device, &device, err, sizeof err);
        if (made != BACKEND_OK) {
            fprintf(stderr, "tscan-bench ab: %s%s\n", err,
                    made == BACKEND_NO_GPU ? "; A/B timing needs a GPU (no reference-backend fallback), nothing ran"
                                           : "");
            status = made == BACKEND_ERROR ? EXIT_FAILED : EXIT_USAGE;
            goto done;
        }
    }
    if ((status = build_cases(&o, &device, 0, &sweep, &cases, &count)) != EXIT_PASSED) goto done;
    settings = o.measure;
    if (!o.time_limit_given) settings.time_limit = 0.25;
    fprintf(stderr, "tscan-bench ab: A = %s (%s), B = %s (%s), alternating case by case\n", paths[0],
            libraries[0].version_string(), paths[1], libraries[1].version_string());
    if (run_cases(order, 2, &settings, o.seed, cases, count, results, stdout)) {
        fprintf(stderr, "tscan-bench ab: out of host memory for the results\n");
        status = EXIT_FAILED;
    } else {
        status = EXIT_PASSED;
        for (int k = 0; k < 2; ++k) {
            run_context context;
            fill_context(&context, argc, argv, &o, &settings, &backends[k], &device, NULL);
            if (write_report(outputs[k], &context, cases, count, &results[k], NULL) != EXIT_PASSED)
                status = EXIT_FAILED;
            if (results[k].failed) status = EXIT_FAILED;
        }
        if (status == EXIT_PASSED) status = compare_reports(outputs[0], outputs[1], &compare);
        run_results_free(&results[0]);
        run_results_free(&results[1]);
    }
    free(cases);
    sweep_free(&sweep);
done:
    for (int k = 0; k < created; ++k) backends[k].destroy(&backends[k]);
    for (int k = 0; k < opened; ++k) tscan_library_close(&libraries[k]);
    free(run_argv);
    return status;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "compare")) return compare_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "summary")) return summary_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "ab")) return ab_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "calls")) return calls_main(argc - 1, argv + 1);
    return run_main(argc, argv);
}
