/* options.c - parsing a run's command line. */
#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "random_sweep.h"

void print_run_usage(FILE *out) {
    fputs(
        "usage: tscan-bench [options]\n"
        "       tscan-bench compare BASE.json NEW.json [--threshold PCT] [--noise-factor K]\n"
        "                   [--base-strategy S --new-strategy S]\n"
        "       tscan-bench summary REPORT.json [--json] [--strategy S]\n"
        "       tscan-bench ab --lib-a PATH --lib-b PATH [options]   (tscan-bench ab --help)\n"
        "       tscan-bench calls [--shape AxB] [--dtype D] [--lib PATH]...  (tscan-bench calls --help)\n"
        "\n"
        "Checks every case against tscan_scan_reference, then times it (L2 flushed before each\n"
        "sample, CUDA events around the launch) beside a device-to-device copy of the same bytes.\n"
        "Without a GPU it runs tscan_scan_reference on host memory over a small sweep.\n"
        "\n"
        "What to run (each flag replaces that axis of every sweep entry):\n"
        "  --op LIST            sum, prod, or all\n"
        "  --dtype LIST         float32, float16, bfloat16, float64, int8, uint8, int16, uint16,\n"
        "                       int32, uint32, int64, uint64, or all\n"
        "  --output-dtype D     scan every dtype into the wider output D (int32 for uint8 masks,\n"
        "                       float32 for float16...); each --dtype must widen into it\n"
        "  --algo LIST          auto, cub_device, rows, columns, lookback, stream, or all\n"
        "  --direction LIST     increasing, decreasing, or both\n"
        "  --exclusive LIST     no, yes, or both\n"
        "  --shape AxBxC        a shape (repeatable); replaces the sweep's shapes\n"
        "    --axis N           scan axis of the preceding --shape (default: its last)\n"
        "    --layout L         packed, transposed or padded input for the preceding --shape\n"
        "  --sweep FILE.json    replace the built-in sweep (format: bench/README.md)\n"
        "  --random N           N cases drawn from --seed instead of a sweep: shapes, dtypes, forms\n"
        "                       and input layouts (bench/README.md); --dtype, --op, --direction\n"
        "                       and --exclusive limit the draws, --algo the strategies run; one\n"
        "                       integer or half case in five draws a wider output dtype\n"
        "    --random-min-mib X, --random-max-mib X\n"
        "                       tensor bytes of a draw, log-uniform (default 64 to 1024 MiB on\n"
        "                       the GPU, 0.25 to 2 on the reference backend)\n"
        "  --quick              a short sweep: float32 sum, AUTO on every class, every strategy\n"
        "                       on a sparse ladder\n"
        "  --list               print the cases and run nothing (with --output: as JSON)\n"
        "\n"
        "How:\n"
        "  --backend B          auto (default: gpu when a device exists), gpu, reference\n"
        "  --device N           CUDA device (default 0)\n"
        "  --min-samples N      samples per case at least (default 10, >= 2)\n"
        "  --max-noise PCT      stop once the relative stdev is under PCT percent (default 0.5)\n"
        "  --time-limit S       seconds of sampling per case before giving up on the noise target\n"
        "                       (default 0.25 on the GPU, 0.1 on the reference backend); a case\n"
        "                       whose minimum samples alone would take longer is not timed\n"
        "  --warmup N           untimed runs before sampling (default 3)\n"
        "  --seed N             input data seed (and the random sweep's)\n"
        "  --output FILE        JSON report (default tscan-bench.json)\n"
        "  --help\n"
        "\n"
        "Exit status: 0 when every case that ran passed its check, 1 when one failed, 2 on a\n"
        "usage error.\n",
        out);
}

static int parse_int(const char *flag, const char *text, int64_t min, int64_t max, int64_t *value, char *err,
                     size_t errlen) {
    char *end;
    long long parsed;
    errno = 0;
    parsed = strtoll(text, &end, 10);
    if (end == text || *end || errno || parsed < min || parsed > max) {
        snprintf(err, errlen, "%s: '%s' is not an integer in %" PRId64 "..%" PRId64, flag, text, min, max);
        return -1;
    }
    *value = parsed;
    return 0;
}

static int parse_positive_double(const char *flag, const char *text, double *value, char *err, size_t errlen) {
    char *end;
    double parsed;
    errno = 0;
    parsed = strtod(text, &end);
    if (end == text || *end || errno || !(parsed > 0.0) || !isfinite(parsed)) {
        snprintf(err, errlen, "%s: '%s' is not a positive number", flag, text);
        return -1;
    }
    *value = parsed;
    return 0;
}

/* The shape most recently given with --shape, re-derived after --axis or --layout changed. */
static int update_last_shape(bench_options *o, const char *flag, uint32_t axis, bench_layout layout, char *err,
                             size_t errlen) {
    const bench_shape given = o->shapes[o->shape_count - 1]; /* shape_init clears its destination first */
    char message[160];
    if (shape_init(&o->shapes[o->shape_count - 1], given.class_name, given.ndim, given.sizes, axis, layout, NULL,
                   NULL, message, sizeof message)) {
        snprintf(err, errlen, "%s: %s", flag, message);
        return -1;
    }
    return 0;
}

/* --random replaces the sweep: it does not mix with what builds one nor with --output-dtype
 * (it draws its own), and its byte range needs --random and an order. */
static int check_random_options(const bench_options *o, char *err, size_t errlen) {
    const char *other = o->sweep_path ? "--sweep" : o->shape_count ? "--shape" : o->quick ? "--quick" : NULL;
    if (o->random_count && other) {
        snprintf(err, errlen, "--random replaces the sweep: it does not take %s", other);
        return -1;
    }
    if (o->random_count && o->output_dtype >= 0) {
        snprintf(err, errlen, "--random draws each case's output dtype: it does not take --output-dtype");
        return -1;
    }
    if (!o->random_count && (o->random_min_mib > 0.0 || o->random_max_mib > 0.0)) {
        snprintf(err, errlen, "--random-%s-mib needs --random N", o->random_min_mib > 0.0 ? "min" : "max");
        return -1;
    }
    if (o->random_min_mib > 0.0 && o->random_max_mib > 0.0 && o->random_min_mib > o->random_max_mib) {
        snprintf(err, errlen, "--random-min-mib %g is above --random-max-mib %g", o->random_min_mib,
                 o->random_max_mib);
        return -1;
    }
    return 0;
}

int parse_run_options(int argc, char **argv, bench_options *o, char *err, size_t errlen) {
    static const struct {
        const char *flag;
        sweep_axis axis;
    } axis_flags[] = {{"--dtype", AXIS_DTYPE},
                      {"--op", AXIS_OP},
                      {"--direction", AXIS_DIRECTION},
                      {"--exclusive", AXIS_EXCLUSIVE},
                      {"--algo", AXIS_ALGO}};
    memset(o, 0, sizeof *o);
    o->output_path = "tscan-bench.json";
    o->measure.warmup = 3;
    o->measure.min_samples = 10;
    o->measure.max_noise = 0.005;
    o->seed = 0x5eed;
    o->output_dtype = -1;

    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *value = NULL;
        char flag[32], message[384];
        size_t flag_len = eq ? (size_t)(eq - arg) : strlen(arg);
        int64_t number;
        int matched = 0;

        if (strncmp(arg, "--", 2) || flag_len >= sizeof flag) {
            snprintf(err, errlen, "unexpected argument '%s'", arg);
            return -1;
        }
        memcpy(flag, arg, flag_len);
        flag[flag_len] = '\0';

        {
            int *switch_flag = !strcmp(flag, "--help")    ? &o->help
                               : !strcmp(flag, "--list")  ? &o->list
                               : !strcmp(flag, "--quick") ? &o->quick
                                                          : NULL;
            if (switch_flag) {
                if (eq) {
                    snprintf(err, errlen, "%s takes no value", flag);
                    return -1;
                }
                *switch_flag = 1;
                continue;
            }
        }
        /* Every other flag takes a value: --flag=value or --flag value. */
        {
            static const char *const value_flags[] = {
                "--dtype", "--op", "--direction", "--exclusive", "--algo", "--shape", "--axis", "--layout",
                "--sweep", "--output", "--backend", "--device", "--min-samples", "--warmup", "--max-noise",
                "--time-limit", "--seed", "--random", "--random-min-mib", "--random-max-mib", "--output-dtype"};
            size_t f = 0;
            while (f < sizeof value_flags / sizeof value_flags[0] && strcmp(flag, value_flags[f])) ++f;
            if (f == sizeof value_flags / sizeof value_flags[0]) {
                snprintf(err, errlen, "unknown option '%s'", flag);
                return -1;
            }
        }
        if (eq) value = eq + 1;
        else if (i + 1 < argc) value = argv[++i];
        else {
            snprintf(err, errlen, "%s needs a value", flag);
            return -1;
        }

        for (size_t a = 0; a < sizeof axis_flags / sizeof axis_flags[0]; ++a)
            if (!strcmp(flag, axis_flags[a].flag)) {
                if (parse_axis_list(axis_flags[a].axis, value, &o->masks[axis_flags[a].axis], message,
                                    sizeof message)) {
                    snprintf(err, errlen, "%s: %s", flag, message);
                    return -1;
                }
                matched = 1;
            }
        if (matched) continue;

        if (!strcmp(flag, "--shape")) {
            int64_t sizes[TSCAN_MAX_DIMS];
            uint32_t ndim = parse_sizes(value, sizes, message, sizeof message);
            if (!ndim) {
                snprintf(err, errlen, "--shape: %s", message);
                return -1;
            }
            if (o->shape_count == MAX_CLI_SHAPES) {
                snprintf(err, errlen, "--shape: more than %d shapes", MAX_CLI_SHAPES);
                return -1;
            }
            if (shape_init(&o->shapes[o->shape_count], "custom", ndim, sizes, ndim - 1, LAYOUT_PACKED, NULL, NULL,
                           message, sizeof message)) {
                snprintf(err, errlen, "--shape: %s", message);
                return -1;
            }
            o->shape_count++;
        } else if (!strcmp(flag, "--axis") || !strcmp(flag, "--layout")) {
            bench_shape *last;
            if (!o->shape_count) {
                snprintf(err, errlen, "%s must follow a --shape", flag);
                return -1;
            }
            last = &o->shapes[o->shape_count - 1];
            if (!strcmp(flag, "--axis")) {
                if (parse_int(flag, value, 0, TSCAN_MAX_DIMS - 1, &number, err, errlen) ||
                    update_last_shape(o, flag, (uint32_t)number, last->layout, err, errlen))
                    return -1;
            } else {
                bench_layout layout;
                if (parse_layout(value, &layout) || layout == LAYOUT_STRIDED) {
                    snprintf(err, errlen, "--layout: unknown layout '%s' (expected packed, transposed or padded)",
                             value);
                    return -1;
                }
                if (update_last_shape(o, flag, last->axis, layout, err, errlen)) return -1;
            }
        } else if (!strcmp(flag, "--output-dtype")) {
            if ((o->output_dtype = parse_dtype_name(value)) < 0) {
                snprintf(err, errlen, "--output-dtype: unknown dtype '%s'", value);
                return -1;
            }
        } else if (!strcmp(flag, "--sweep")) {
            o->sweep_path = value;
        } else if (!strcmp(flag, "--output")) {
            if (!*value) {
                snprintf(err, errlen, "--output: empty file name");
                return -1;
            }
            o->output_path = value;
            o->output_given = 1;
        } else if (!strcmp(flag, "--backend")) {
            if (!strcmp(value, "auto")) o->backend = BACKEND_AUTO;
            else if (!strcmp(value, "gpu")) o->backend = BACKEND_GPU;
            else if (!strcmp(value, "reference")) o->backend = BACKEND_REFERENCE;
            else {
                snprintf(err, errlen, "--backend: unknown backend '%s' (expected auto, gpu or reference)", value);
                return -1;
            }
        } else if (!strcmp(flag, "--device")) {
            if (parse_int(flag, value, 0, 1023, &number, err, errlen)) return -1;
            o->device = (int)number;
        } else if (!strcmp(flag, "--min-samples")) {
            if (parse_int(flag, value, 2, INT64_C(1) << 24, &o->measure.min_samples, err, errlen)) return -1;
        } else if (!strcmp(flag, "--warmup")) {
            if (parse_int(flag, value, 0, 1000000, &o->measure.warmup, err, errlen)) return -1;
        } else if (!strcmp(flag, "--max-noise")) {
            if (parse_positive_double(flag, value, &o->measure.max_noise, err, errlen)) return -1;
            o->measure.max_noise /= 100.0;
        } else if (!strcmp(flag, "--time-limit")) {
            if (parse_positive_double(flag, value, &o->measure.time_limit, err, errlen)) return -1;
            o->time_limit_given = 1;
        } else if (!strcmp(flag, "--random")) {
            if (parse_int(flag, value, 1, 1000000, &o->random_count, err, errlen)) return -1;
        } else if (!strcmp(flag, "--random-min-mib") || !strcmp(flag, "--random-max-mib")) {
            double *mib = !strcmp(flag, "--random-min-mib") ? &o->random_min_mib : &o->random_max_mib;
            if (parse_positive_double(flag, value, mib, err, errlen)) return -1;
            if (*mib > RANDOM_LIMIT_MIB) {
                snprintf(err, errlen, "%s: %s MiB is over the limit of %g MiB", flag, value, RANDOM_LIMIT_MIB);
                return -1;
            }
        } else { /* --seed: below 2^53, so that the report's JSON number holds it exactly */
            if (parse_int(flag, value, 0, (INT64_C(1) << 53) - 1, &number, err, errlen)) return -1;
            o->seed = (uint64_t)number;
        }
    }
    return check_random_options(o, err, errlen);
}
