/* report.c - the JSON report, written with cJSON. Field names follow Google Benchmark for
 * each case (name, real_time, time_unit, bytes_per_second, items_per_second) and nvbench for
 * the device and the timing summaries; bench/REPORT.md documents every field. */
#include "report.h"

#include <cjson/cJSON.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "summary.h"

/* ---- context ------------------------------------------------------------------------------ */

/* argv joined with spaces, arguments that need it in single quotes, as a shell would take it. */
static char *command_line(int argc, char **argv) {
    size_t length = 1;
    char *text, *p;
    for (int i = 0; i < argc; ++i) length += 4 * strlen(argv[i]) + 3;
    if (!(p = text = malloc(length))) return NULL;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        int quote = !*a || strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") != NULL;
        if (i) *p++ = ' ';
        if (quote) *p++ = '\'';
        for (; *a; ++a) {
            if (*a == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *a;
            }
        }
        if (quote) *p++ = '\'';
    }
    *p = '\0';
    return text;
}

/* Output of `git -C <source dir> <args>`, trailing newline removed; NULL when git or the
 * repository is not there (a copied tree, a tarball): the report then says null. */
static char *git_output(const char *args) {
    const char *dir = TSCAN_BENCH_SOURCE_DIR;
    char command[1024], *text = NULL;
    size_t length = 0, capacity = 0;
    FILE *pipe;
    int c;
    if (strchr(dir, '\'')) return NULL;
    snprintf(command, sizeof command, "git -C '%s' %s 2>/dev/null", dir, args);
    if (!(pipe = popen(command, "r"))) return NULL;
    while ((c = fgetc(pipe)) != EOF) {
        if (length + 2 > capacity) {
            char *grown = realloc(text, capacity = capacity ? 2 * capacity : 256);
            if (!grown) break;
            text = grown;
        }
        text[length++] = (char)c;
    }
    if (pclose(pipe) != 0 || !text) {
        free(text);
        return NULL;
    }
    while (length && (text[length - 1] == '\n' || text[length - 1] == '\r')) --length;
    text[length] = '\0';
    return text;
}

/* TSCAN_GIT_COMMIT, and TSCAN_GIT_DIRTY (0 or 1) when known, name the tree that was built:
 * a tree copied without its .git (as sent to a GPU machine) has no other way to say it. */
static char *commit_from_environment(int *dirty) {
    const char *commit = getenv("TSCAN_GIT_COMMIT"), *flag = getenv("TSCAN_GIT_DIRTY");
    if (!commit || !*commit) return NULL;
    *dirty = flag && *flag ? atoi(flag) != 0 : -1;
    return strdup(commit);
}

static void add_version(cJSON *object, const char *key, int version) {
    char text[32];
    if (version <= 0) {
        cJSON_AddNullToObject(object, key);
        return;
    }
    snprintf(text, sizeof text, "%d.%d", version / 1000, version % 1000 / 10);
    cJSON_AddStringToObject(object, key, text);
}

static void add_string_or_null(cJSON *object, const char *key, const char *value) {
    if (value) cJSON_AddStringToObject(object, key, value);
    else cJSON_AddNullToObject(object, key);
}

static cJSON *context_json(const run_context *context) {
    cJSON *object = cJSON_CreateObject(), *notes;
    char date[32], host[256] = "";
    time_t now = time(NULL);
    struct tm utc;
    /* The environment first: whoever sets it knows which tree was built, and a copied tree can
     * sit where git finds some other checkout (it did on the GPU machine). */
    int dirty = -1;
    char *commit = commit_from_environment(&dirty), *status = NULL;
    if (!commit && (commit = git_output("rev-parse HEAD")) &&
        (status = git_output("status --porcelain --untracked-files=no")))
        dirty = status[0] != '\0';
    char *line = command_line(context->argc, context->argv);
    int runtime = 0, driver = 0;

    gmtime_r(&now, &utc);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    cJSON_AddStringToObject(object, "date", date);
    cJSON_AddStringToObject(object, "host_name", host);
    cJSON_AddStringToObject(object, "executable", context->argv[0]);
    add_string_or_null(object, "command_line", line);
    cJSON_AddNumberToObject(object, "num_cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(object, "library_version", context->library->version_string());
    cJSON_AddStringToObject(object, "library_build_type", TSCAN_BENCH_BUILD_TYPE);
    add_string_or_null(object, "git_commit", commit);
    if (commit && dirty >= 0) cJSON_AddBoolToObject(object, "git_dirty", dirty);
    else cJSON_AddNullToObject(object, "git_dirty");
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    cudaGetLastError();
    add_version(object, "cuda_runtime_version", runtime);
    add_version(object, "cuda_driver_version", driver);
    cJSON_AddStringToObject(object, "backend", context->backend);
    cJSON_AddStringToObject(object, "timer", context->timer);
    cJSON_AddBoolToObject(object, "gpu_available", context->gpu_unavailable == NULL);
    add_string_or_null(object, "gpu_unavailable_reason", context->gpu_unavailable);
    notes = cJSON_AddArrayToObject(object, "notes");
    if (context->gpu_unavailable)
        cJSON_AddItemToArray(notes, cJSON_CreateString("no GPU: the cases ran tscan_scan_reference on host memory, "
                                                       "timed with the host clock; the copy ceiling is memcpy"));
    if (context->library->path) {
        char note[1200];
        snprintf(note, sizeof note, "the library was loaded from %s (tscan-bench ab); git_commit is tscan-bench's "
                 "source tree, not necessarily that build's", context->library->path);
        cJSON_AddItemToArray(notes, cJSON_CreateString(note));
    }
    free(commit);
    free(status);
    free(line);
    return object;
}

static cJSON *device_json(const device_info *d) {
    cJSON *object = cJSON_CreateObject();
    cJSON_AddNumberToObject(object, "id", d->id);
    cJSON_AddStringToObject(object, "name", d->name);
    cJSON_AddNumberToObject(object, "sm_version", d->sm_version);
    cJSON_AddNumberToObject(object, "number_of_sms", d->number_of_sms);
    cJSON_AddNumberToObject(object, "sm_default_clock_rate", (double)d->sm_default_clock_rate);
    cJSON_AddNumberToObject(object, "max_blocks_per_sm", d->max_blocks_per_sm);
    cJSON_AddNumberToObject(object, "max_threads_per_sm", d->max_threads_per_sm);
    cJSON_AddNumberToObject(object, "max_threads_per_block", d->max_threads_per_block);
    cJSON_AddNumberToObject(object, "registers_per_sm", d->registers_per_sm);
    cJSON_AddNumberToObject(object, "registers_per_block", d->registers_per_block);
    cJSON_AddNumberToObject(object, "global_memory_size", (double)d->global_memory_size);
    cJSON_AddNumberToObject(object, "global_memory_bus_peak_clock_rate", (double)d->global_memory_bus_peak_clock_rate);
    cJSON_AddNumberToObject(object, "global_memory_bus_width", d->global_memory_bus_width);
    cJSON_AddNumberToObject(object, "global_memory_bus_bandwidth", d->global_memory_bus_bandwidth);
    cJSON_AddNumberToObject(object, "l2_cache_size", (double)d->l2_cache_size);
    cJSON_AddNumberToObject(object, "shared_memory_per_sm", (double)d->shared_memory_per_sm);
    cJSON_AddNumberToObject(object, "shared_memory_per_block", (double)d->shared_memory_per_block);
    cJSON_AddBoolToObject(object, "ecc_state", d->ecc_state != 0);
    cJSON_AddStringToObject(object, "pci_bus_id", d->pci_bus_id);
    return object;
}

static cJSON *settings_json(const run_context *context) {
    const bench_options *o = context->options;
    cJSON *object = cJSON_CreateObject();
    cJSON_AddStringToObject(object, "sweep", o->random_count ? "random"
                                             : o->sweep_path ? o->sweep_path
                                             : o->quick      ? "default (quick)"
                                                             : "default");
    if (o->random_count) {
        cJSON *random = cJSON_AddObjectToObject(object, "random");
        cJSON_AddNumberToObject(random, "count", (double)o->random_count);
        cJSON_AddNumberToObject(random, "min_mib", o->random_min_mib);
        cJSON_AddNumberToObject(random, "max_mib", o->random_max_mib);
    }
    cJSON_AddBoolToObject(object, "quick", o->quick);
    cJSON_AddNumberToObject(object, "device", o->device);
    cJSON_AddNumberToObject(object, "min_samples", (double)context->measure->min_samples);
    cJSON_AddNumberToObject(object, "max_noise_percent", 100.0 * context->measure->max_noise);
    cJSON_AddNumberToObject(object, "time_limit_seconds", context->measure->time_limit);
    cJSON_AddNumberToObject(object, "warmup", (double)context->measure->warmup);
    cJSON_AddNumberToObject(object, "seed", (double)o->seed);
    cJSON_AddNumberToObject(object, "flush_bytes", (double)context->flush_bytes);
    cJSON_AddNumberToObject(object, "check_full_limit_elements", (double)CHECK_FULL_LIMIT);
    cJSON_AddNumberToObject(object, "check_sample_elements", (double)CHECK_SAMPLE_ELEMENTS);
    cJSON_AddNumberToObject(object, "check_min_lines", (double)CHECK_MIN_LINES);
    return object;
}

/* ---- cases -------------------------------------------------------------------------------- */

static cJSON *int_array(const int64_t *values, uint32_t count) {
    cJSON *array = cJSON_CreateArray();
    for (uint32_t i = 0; i < count; ++i) cJSON_AddItemToArray(array, cJSON_CreateNumber((double)values[i]));
    return array;
}

/* What a case is: every axis, and the counts its throughput is computed from. */
static cJSON *case_json(const bench_case *c) {
    cJSON *object = cJSON_CreateObject();
    const bench_shape *s = c->shape;
    const int64_t es = (int64_t)tscan_dtype_size(c->dtype), out_es = (int64_t)tscan_dtype_size(c->out_dtype);
    const int64_t numel = shape_numel(s);
    cJSON_AddStringToObject(object, "name", c->name);
    cJSON_AddStringToObject(object, "run_name", c->name);
    cJSON_AddStringToObject(object, "class", s->class_name);
    cJSON_AddStringToObject(object, "op", tscan_op_name(c->op));
    cJSON_AddStringToObject(object, "dtype", tscan_dtype_name(c->dtype));
    cJSON_AddStringToObject(object, "output_dtype", tscan_dtype_name(c->out_dtype));
    cJSON_AddItemToObject(object, "sizes", int_array(s->sizes, s->ndim));
    cJSON_AddItemToObject(object, "input_strides", int_array(s->in_strides, s->ndim));
    cJSON_AddItemToObject(object, "output_strides", int_array(s->out_strides, s->ndim));
    cJSON_AddNumberToObject(object, "axis", s->axis);
    cJSON_AddStringToObject(object, "layout", layout_name(s->layout));
    cJSON_AddStringToObject(object, "direction", axis_value_name(AXIS_DIRECTION, c->direction));
    cJSON_AddBoolToObject(object, "exclusive", c->exclusive);
    cJSON_AddStringToObject(object, "strategy", strategy_name(c->strategy));
    cJSON_AddNumberToObject(object, "elements", (double)numel);
    cJSON_AddNumberToObject(object, "lines", (double)shape_lines(s));
    cJSON_AddNumberToObject(object, "line_length", (double)s->sizes[s->axis]);
    cJSON_AddNumberToObject(object, "bytes_read", (double)(numel * es));
    cJSON_AddNumberToObject(object, "bytes_written", (double)(numel * out_es));
    cJSON_AddNumberToObject(object, "bytes_moved", (double)case_bytes_moved(c));
    return object;
}

static cJSON *time_json(const timing_stats *t) {
    cJSON *object = cJSON_CreateObject();
    cJSON_AddNumberToObject(object, "min", t->min);
    cJSON_AddNumberToObject(object, "q1", t->q1);
    cJSON_AddNumberToObject(object, "median", t->median);
    cJSON_AddNumberToObject(object, "q3", t->q3);
    cJSON_AddNumberToObject(object, "max", t->max);
    cJSON_AddNumberToObject(object, "mean", t->mean);
    cJSON_AddNumberToObject(object, "stdev_relative", t->stdev_relative);
    cJSON_AddNumberToObject(object, "samples", (double)t->samples);
    cJSON_AddNumberToObject(object, "walltime", t->walltime);
    cJSON_AddStringToObject(object, "stop_reason", stop_reason_name(t->stop));
    return object;
}

/* Google Benchmark's per-run fields, from the median: real_time in ns. */
static void add_benchmark_fields(cJSON *object, const timing_stats *t, double bytes, double items) {
    cJSON_AddStringToObject(object, "run_type", "aggregate");
    cJSON_AddStringToObject(object, "aggregate_name", "median");
    cJSON_AddNumberToObject(object, "iterations", (double)t->samples);
    cJSON_AddNumberToObject(object, "real_time", t->median * 1e9);
    cJSON_AddStringToObject(object, "time_unit", "ns");
    cJSON_AddNumberToObject(object, "bytes_per_second", bytes / t->median);
    if (items > 0) cJSON_AddNumberToObject(object, "items_per_second", items / t->median);
}

/* nvbench's cold-measurement summaries, flattened to tag: value (nvbench's rates use the mean). */
static cJSON *summaries_json(const run_context *context, const timing_stats *t, double bytes, double items) {
    cJSON *object = cJSON_CreateObject();
    const char *clock = strcmp(context->timer, "cuda_event") ? "cpu" : "gpu";
    char tag[64];
    snprintf(tag, sizeof tag, "nv/cold/time/%s/min", clock);
    cJSON_AddNumberToObject(object, tag, t->min);
    snprintf(tag, sizeof tag, "nv/cold/time/%s/max", clock);
    cJSON_AddNumberToObject(object, tag, t->max);
    snprintf(tag, sizeof tag, "nv/cold/time/%s/mean", clock);
    cJSON_AddNumberToObject(object, tag, t->mean);
    snprintf(tag, sizeof tag, "nv/cold/time/%s/stdev/relative", clock);
    cJSON_AddNumberToObject(object, tag, t->stdev_relative);
    cJSON_AddNumberToObject(object, "nv/cold/sample_size", (double)t->samples);
    cJSON_AddNumberToObject(object, "nv/cold/walltime", t->walltime);
    cJSON_AddNumberToObject(object, "nv/cold/bw/item_rate", items / t->mean);
    cJSON_AddNumberToObject(object, "nv/cold/bw/global/bytes_per_second", bytes / t->mean);
    if (context->device && context->device->global_memory_bus_bandwidth > 0)
        cJSON_AddNumberToObject(object, "nv/cold/bw/global/utilization",
                                bytes / t->mean / context->device->global_memory_bus_bandwidth);
    return object;
}

static const char *status_name(case_status s) {
    return s == CASE_PASSED ? "passed" : s == CASE_FAILED ? "failed" : "skipped";
}

static cJSON *result_json(const run_context *context, const bench_case *c, const case_result *r,
                          const run_results *results) {
    cJSON *object = case_json(c), *check;
    const double bytes = (double)case_bytes_moved(c), items = (double)shape_numel(c->shape);
    const char *message = r->status == CASE_PASSED ? NULL : r->message;

    if (r->resolved_strategy >= 0) cJSON_AddStringToObject(object, "resolved_strategy", strategy_name(r->resolved_strategy));
    cJSON_AddStringToObject(object, "status", status_name(r->status));
    cJSON_AddBoolToObject(object, "checked", r->checked);
    cJSON_AddBoolToObject(object, "skipped", r->status == CASE_SKIPPED);
    add_string_or_null(object, "skip_reason", r->status == CASE_SKIPPED ? message : NULL);
    add_string_or_null(object, "error", r->status == CASE_FAILED ? message : NULL);
    cJSON_AddBoolToObject(object, "error_occurred", message != NULL);
    if (message) cJSON_AddStringToObject(object, "error_message", message);
    if (r->checked) {
        check = cJSON_AddObjectToObject(object, "check");
        cJSON_AddBoolToObject(check, "passed", r->check.mismatches == 0);
        cJSON_AddNumberToObject(check, "lines_total", (double)r->check.lines_total);
        cJSON_AddNumberToObject(check, "lines_checked", (double)r->check.lines_checked);
        cJSON_AddNumberToObject(check, "elements_checked", (double)r->check.elements_checked);
        cJSON_AddNumberToObject(check, "mismatches", (double)r->check.mismatches);
        if (r->check.mismatches) {
            cJSON *first = cJSON_AddObjectToObject(check, "first_mismatch");
            cJSON_AddNumberToObject(first, "line", (double)r->check.first_line);
            cJSON_AddNumberToObject(first, "index", (double)r->check.first_index);
            cJSON_AddStringToObject(first, "expected", r->check.expected);
            cJSON_AddStringToObject(first, "actual", r->check.actual);
        }
    }
    if (r->status != CASE_SKIPPED) cJSON_AddNumberToObject(object, "workspace_bytes", (double)r->workspace_bytes);
    if (r->timed) {
        add_benchmark_fields(object, &r->time, bytes, items);
        cJSON_AddItemToObject(object, "time", time_json(&r->time));
        cJSON_AddItemToObject(object, "summaries", summaries_json(context, &r->time, bytes, items));
    }
    if (r->timed && r->copy_index >= 0) {
        const copy_result *copy = &results->copies[r->copy_index];
        cJSON *ceiling = cJSON_AddObjectToObject(object, "copy");
        cJSON_AddNumberToObject(ceiling, "bytes", (double)copy->bytes);
        cJSON_AddNumberToObject(ceiling, "median", copy->time.median);
        cJSON_AddNumberToObject(object, "percent_of_copy", 100.0 * copy->time.median / r->time.median);
    }
    cJSON_AddArrayToObject(object, "notes");
    return object;
}

static cJSON *copy_json(const run_context *context, const copy_result *copy) {
    cJSON *object = cJSON_CreateObject();
    char name[64];
    snprintf(name, sizeof name, "copy/%zu", copy->bytes);
    cJSON_AddStringToObject(object, "name", name);
    cJSON_AddStringToObject(object, "method", strcmp(context->backend, "gpu") ? "memcpy" : "cudaMemcpyAsync");
    cJSON_AddNumberToObject(object, "bytes", (double)copy->bytes);
    cJSON_AddNumberToObject(object, "bytes_moved", 2.0 * (double)copy->bytes);
    add_benchmark_fields(object, &copy->time, 2.0 * (double)copy->bytes, 0);
    cJSON_AddItemToObject(object, "time", time_json(&copy->time));
    return object;
}

static cJSON *report_root(const char *format, const run_context *context) {
    cJSON *root = cJSON_CreateObject(), *devices;
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "format_version", REPORT_FORMAT_VERSION);
    cJSON_AddItemToObject(root, "context", context_json(context));
    devices = cJSON_AddArrayToObject(root, "devices");
    if (context->device) cJSON_AddItemToArray(devices, device_json(context->device));
    cJSON_AddItemToObject(root, "settings", settings_json(context));
    return root;
}

static int write_json(const char *path, cJSON *root, char *err, size_t errlen) {
    char *text = cJSON_Print(root);
    FILE *file;
    int ok;
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory printing the report", path);
        return -1;
    }
    if (!(file = fopen(path, "w"))) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        free(text);
        return -1;
    }
    ok = fputs(text, file) >= 0 && fputc('\n', file) != EOF;
    ok = (fclose(file) == 0) && ok;
    free(text);
    if (!ok) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int report_write(const char *path, const run_context *context, const bench_case *cases, size_t count,
                 const run_results *results, FILE *table, char *err, size_t errlen) {
    cJSON *root = report_root(REPORT_FORMAT, context), *copies, *benchmarks, *summary, *distribution;
    copies = cJSON_AddArrayToObject(root, "copies");
    for (size_t k = 0; k < results->copy_count; ++k) cJSON_AddItemToArray(copies, copy_json(context, &results->copies[k]));
    benchmarks = cJSON_AddArrayToObject(root, "benchmarks");
    for (size_t i = 0; i < count; ++i)
        cJSON_AddItemToArray(benchmarks, result_json(context, &cases[i], &results->cases[i], results));
    summary = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(summary, "cases", (double)count);
    cJSON_AddNumberToObject(summary, "passed", (double)results->passed);
    cJSON_AddNumberToObject(summary, "failed", (double)results->failed);
    cJSON_AddNumberToObject(summary, "skipped", (double)results->skipped);
    cJSON_AddNumberToObject(summary, "walltime", results->walltime);
    if (!(distribution = distribution_json(benchmarks, distribution_strategy(context->backend)))) {
        cJSON_Delete(root);
        snprintf(err, errlen, "%s: out of memory summarising the report", path);
        return -1;
    }
    cJSON_AddItemToObject(summary, "distribution", distribution);
    if (table) distribution_print(table, distribution);
    return write_json(path, root, err, errlen);
}

int case_list_write(const char *path, const run_context *context, const bench_case *cases, size_t count,
                    char *err, size_t errlen) {
    cJSON *root = report_root(CASE_LIST_FORMAT, context), *benchmarks;
    benchmarks = cJSON_AddArrayToObject(root, "benchmarks");
    for (size_t i = 0; i < count; ++i) cJSON_AddItemToArray(benchmarks, case_json(&cases[i]));
    return write_json(path, root, err, errlen);
}
