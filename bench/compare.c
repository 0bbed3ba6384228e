/*
 * compare.c - `tscan-bench compare BASE.json NEW.json`: regression verdicts between two
 * reports, matched by case name (bench/README.md gives the rules and the exit statuses).
 *
 * Each case timed in both is judged twice: by its absolute median and by its median relative
 * to the same-run copy of the same bytes (which cancels the machine's bandwidth of that run).
 * Either within the noise, max(threshold, k x within-run noise), decides SAME (it explains the
 * other away); both beyond the allowed change, max(noise, run-to-run spread), in one direction
 * decide SLOW or FAST; anything else is AMBIGUOUS.
 */
#include "compare.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "report.h"
#include "stats.h"

typedef struct compare_entry {
    char *key;          /* the name, less "/strategy" when matching across strategies */
    const char *name;
    const char *status; /* "passed", "failed", "skipped" */
    const char *reason; /* why not timed, when known */
    int timed;
    double median, noise;
    double copy_median; /* the same-run copy of the case's bytes; 0 when the report has none */
    int matched;
} compare_entry;

typedef struct loaded_report {
    const char *path;
    cJSON *root;
    compare_entry *entries;
    size_t count;
    const char *backend, *device, *commit, *date;
} loaded_report;

static void free_report(loaded_report *r) {
    for (size_t i = 0; i < r->count; ++i) free(r->entries[i].key);
    free(r->entries);
    cJSON_Delete(r->root);
}

static const char *string_field(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* The number at object.key when it is positive, else 0. */
static double positive_field(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsNumber(item) && item->valuedouble > 0 && isfinite(item->valuedouble) ? item->valuedouble : 0.0;
}

cJSON *json_parse_file(const char *path, char *err, size_t errlen) {
    FILE *file = fopen(path, "rb");
    char *text = NULL;
    long length;
    cJSON *root = NULL;
    if (!file) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    if (fseek(file, 0, SEEK_END) == 0 && (length = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)length + 1)) && fread(text, 1, (size_t)length, file) == (size_t)length) {
        text[length] = '\0';
        if (!(root = cJSON_Parse(text)))
            snprintf(err, errlen, "%s: not valid JSON (near byte %td)", path, cJSON_GetErrorPtr() - text);
    } else {
        snprintf(err, errlen, "%s: cannot read: %s", path, errno ? strerror(errno) : "short read");
    }
    fclose(file);
    free(text);
    return root;
}

static int by_key(const void *a, const void *b) {
    return strcmp(((const compare_entry *)a)->key, ((const compare_entry *)b)->key);
}

/* Loads a report; with `strategy`, only that strategy's cases, keyed without it. */
static int load_report(const char *path, const char *strategy, loaded_report *r, char *err, size_t errlen) {
    const cJSON *format, *version, *benchmarks, *item, *context, *devices;
    size_t index = 0;

    memset(r, 0, sizeof *r);
    r->path = path;
    if (!(r->root = json_parse_file(path, err, errlen))) return -1;
    format = cJSON_GetObjectItemCaseSensitive(r->root, "format");
    version = cJSON_GetObjectItemCaseSensitive(r->root, "format_version");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, REPORT_FORMAT)) {
        snprintf(err, errlen, "%s: not a tscan-bench report (\"format\" is %s%s%s, expected \"%s\")", path,
                 cJSON_IsString(format) ? "\"" : "", cJSON_IsString(format) ? format->valuestring : "missing",
                 cJSON_IsString(format) ? "\"" : "", REPORT_FORMAT);
        return -1;
    }
    if (!cJSON_IsNumber(version) || version->valuedouble != REPORT_FORMAT_VERSION) {
        snprintf(err, errlen, "%s: report format version %g is not the version %d this tscan-bench reads", path,
                 cJSON_IsNumber(version) ? version->valuedouble : 0.0, REPORT_FORMAT_VERSION);
        return -1;
    }
    benchmarks = cJSON_GetObjectItemCaseSensitive(r->root, "benchmarks");
    if (!cJSON_IsArray(benchmarks)) {
        snprintf(err, errlen, "%s: \"benchmarks\" is missing or not an array", path);
        return -1;
    }
    context = cJSON_GetObjectItemCaseSensitive(r->root, "context");
    r->backend = string_field(context, "backend");
    r->commit = string_field(context, "git_commit");
    r->date = string_field(context, "date");
    devices = cJSON_GetObjectItemCaseSensitive(r->root, "devices");
    r->device = string_field(cJSON_GetArrayItem(devices, 0), "name");
    if (!r->backend) {
        snprintf(err, errlen, "%s: context.backend is missing", path);
        return -1;
    }

    r->entries = calloc((size_t)cJSON_GetArraySize(benchmarks) + 1, sizeof *r->entries);
    if (!r->entries) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    cJSON_ArrayForEach(item, benchmarks) {
        compare_entry *e = &r->entries[r->count];
        const char *case_strategy = string_field(item, "strategy");
        const cJSON *time = cJSON_GetObjectItemCaseSensitive(item, "time");
        size_t key_length;
        e->name = string_field(item, "name");
        e->status = string_field(item, "status");
        if (!e->name || !e->status) {
            snprintf(err, errlen, "%s: benchmarks[%zu] lacks a name or a status", path, index);
            return -1;
        }
        ++index;
        if (strategy && (!case_strategy || strcmp(case_strategy, strategy))) continue;
        key_length = strlen(e->name);
        if (strategy && key_length > strlen(strategy) + 1 &&
            !strcmp(e->name + key_length - strlen(strategy), strategy) &&
            e->name[key_length - strlen(strategy) - 1] == '/')
            key_length -= strlen(strategy) + 1;
        if (!(e->key = malloc(key_length + 1))) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        memcpy(e->key, e->name, key_length);
        e->key[key_length] = '\0';
        r->count++;
        e->reason = string_field(item, "error_message");
        if (time) {
            const cJSON *median = cJSON_GetObjectItemCaseSensitive(time, "median");
            const cJSON *noise = cJSON_GetObjectItemCaseSensitive(time, "stdev_relative");
            if (!cJSON_IsNumber(median) || !(median->valuedouble > 0) || !cJSON_IsNumber(noise) ||
                noise->valuedouble < 0) {
                snprintf(err, errlen, "%s: %s: time.median and time.stdev_relative must be non-negative numbers "
                         "(median positive)", path, e->name);
                return -1;
            }
            e->timed = 1;
            e->median = median->valuedouble;
            e->noise = noise->valuedouble;
            e->copy_median = positive_field(cJSON_GetObjectItemCaseSensitive(item, "copy"), "median");
        }
    }
    qsort(r->entries, r->count, sizeof *r->entries, by_key);
    for (size_t i = 1; i < r->count; ++i)
        if (!strcmp(r->entries[i].key, r->entries[i - 1].key)) {
            snprintf(err, errlen, "%s: case %s appears twice", path, r->entries[i].key);
            return -1;
        }
    return 0;
}

/* A markdown table cell: pipes and line breaks would end the cell or the row. */
static void print_cell(const char *text) {
    putchar(' ');
    for (; *text; ++text) putchar(*text == '|' ? '/' : *text == '\n' ? ' ' : *text);
    fputs(" |", stdout);
}

static void print_time_cell(const compare_entry *e) {
    char text[32];
    if (e && e->timed) format_seconds(text, sizeof text, e->median);
    else snprintf(text, sizeof text, "%s", e ? e->status : "absent");
    print_cell(text);
}

/* Why a case has no time in one report, for the notes column. */
static void untimed_note(char *note, size_t len, const char *which, const compare_entry *e) {
    if (!e) snprintf(note, len, "absent from %s", which);
    else snprintf(note, len, "%s in %s%s%s", e->status, which, e->reason ? ": " : "", e->reason ? e->reason : "");
}

static void describe(const char *label, const loaded_report *r) {
    printf("- %s: `%s` (%s backend%s%s, commit %.12s, %s)\n", label, r->path, r->backend, r->device ? ", " : "",
           r->device ? r->device : "", r->commit ? r->commit : "unknown", r->date ? r->date : "undated");
}

/* Per-case run-to-run spreads (a fraction) from `--spread FILE`, sorted by name. */
typedef struct spread_entry {
    const char *name;
    double spread;
} spread_entry;

typedef struct spread_table {
    cJSON *root;
    spread_entry *entries;
    size_t count;
} spread_table;

static int by_spread_name(const void *a, const void *b) {
    return strcmp(((const spread_entry *)a)->name, ((const spread_entry *)b)->name);
}

/* Reads {"format": "tscan-bench-spread", "cases": {NAME: FRACTION, ...}} (bench/history.py). */
static int load_spreads(const char *path, spread_table *t, char *err, size_t errlen) {
    const cJSON *cases, *item;
    memset(t, 0, sizeof *t);
    if (!(t->root = json_parse_file(path, err, errlen))) return -1;
    if (!string_field(t->root, "format") || strcmp(string_field(t->root, "format"), SPREAD_FORMAT)) {
        snprintf(err, errlen, "%s: not a spread file (\"format\" must be \"%s\")", path, SPREAD_FORMAT);
        return -1;
    }
    cases = cJSON_GetObjectItemCaseSensitive(t->root, "cases");
    if (!cJSON_IsObject(cases)) {
        snprintf(err, errlen, "%s: \"cases\" is missing or not an object", path);
        return -1;
    }
    if (!(t->entries = calloc((size_t)cJSON_GetArraySize(cases) + 1, sizeof *t->entries))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    cJSON_ArrayForEach(item, cases) {
        if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0) || !isfinite(item->valuedouble)) {
            snprintf(err, errlen, "%s: cases.%s: the spread must be a non-negative fraction", path, item->string);
            return -1;
        }
        t->entries[t->count].name = item->string;
        t->entries[t->count++].spread = item->valuedouble;
    }
    qsort(t->entries, t->count, sizeof *t->entries, by_spread_name);
    return 0;
}

static void free_spreads(spread_table *t) {
    free(t->entries);
    cJSON_Delete(t->root);
}

/* The run-to-run spread of a case: from history when the table has it, else the default for
 * cases near the copy's speed or the wider one for cases far from it (bench/NOTES.md). */
static double case_spread(const compare_settings *s, const spread_table *t, const compare_entry *b,
                          const compare_entry *n, int *from_history) {
    spread_entry key = {n->name, 0.0}, *found = t->count ? bsearch(&key, t->entries, t->count, sizeof *t->entries,
                                                                   by_spread_name) : NULL;
    *from_history = found != NULL;
    if (found) return found->spread;
    if (b->copy_median > 0 && b->copy_median / b->median >= OFF_COPY_FRACTION) return s->spread / 100.0;
    return s->off_copy_spread / 100.0;
}

enum { SAME, FAST, SLOW, AMBIGUOUS, NEW, GONE, VERDICTS };
static const char *const verdict_names[VERDICTS] = {"SAME", "FAST", "SLOW", "AMBIGUOUS", "NEW", "GONE"};

/* The verdict from the absolute change and the change relative to the same-run copy (NAN
 * when a report lacks the copy). A measure is within the noise up to `noise_margin`, and
 * beyond the run-to-run spread past `margin` (>= noise_margin). *decided names the measure
 * that settled it. */
static int judge(double absolute, double relative, double noise_margin, double margin, const char **decided) {
    int quiet_absolute = fabs(absolute) <= noise_margin, quiet_relative = fabs(relative) <= noise_margin;
    if (isnan(relative)) {
        *decided = "absolute (no copy)";
        return quiet_absolute ? SAME : absolute > margin ? SLOW : absolute < -margin ? FAST : AMBIGUOUS;
    }
    if (quiet_absolute || quiet_relative) {
        /* One measure in the noise explains the other away: the copy moved with the case (the
         * machine), or the copy moved and the case did not. */
        *decided = quiet_absolute && quiet_relative ? "both" : quiet_relative ? "copy-relative" : "absolute";
        return SAME;
    }
    *decided = "both";
    if (absolute > margin && relative > margin) return SLOW;
    if (absolute < -margin && relative < -margin) return FAST;
    *decided = "within the run-to-run spread";
    return AMBIGUOUS;
}

static void print_row(const char *key, const compare_entry *b, const compare_entry *n, const char *change,
                      const char *relative, const char *allowed, int verdict, const char *decided,
                      const char *note) {
    printf("|");
    print_cell(key);
    print_time_cell(b);
    print_time_cell(n);
    print_cell(change);
    print_cell(relative);
    print_cell(allowed);
    print_cell(verdict_names[verdict]);
    print_cell(decided);
    print_cell(note);
    printf("\n");
}

void compare_settings_default(compare_settings *s) {
    memset(s, 0, sizeof *s);
    s->threshold = 3.0;
    s->noise_factor = 2.0;
    s->spread = 5.0;
    s->off_copy_spread = 20.0;
}

int compare_reports(const char *base_path, const char *new_path, const compare_settings *s) {
    size_t counts[VERDICTS] = {0}, untimed = 0, from_history = 0;
    loaded_report base, fresh;
    spread_table spreads;
    char err[1024];
    int status = EXIT_USAGE;

    memset(&spreads, 0, sizeof spreads);
    if (load_report(base_path, s->base_strategy, &base, err, sizeof err)) {
        fprintf(stderr, "tscan-bench compare: %s\n", err);
        free_report(&base);
        return EXIT_USAGE;
    }
    if (load_report(new_path, s->new_strategy, &fresh, err, sizeof err) ||
        (s->spread_path && load_spreads(s->spread_path, &spreads, err, sizeof err))) {
        fprintf(stderr, "tscan-bench compare: %s\n", err);
        goto done;
    }
    if (strcmp(base.backend, fresh.backend)) {
        fprintf(stderr,
                "tscan-bench compare: incompatible reports: %s ran the %s backend, %s the %s backend; their "
                "times do not compare\n",
                base_path, base.backend, new_path, fresh.backend);
        goto done;
    }
    if (base.device && fresh.device && strcmp(base.device, fresh.device) && !s->allow_different_gpus) {
        fprintf(stderr,
                "tscan-bench compare: different GPUs: %s ran on \"%s\", %s on \"%s\"; their times do not "
                "compare (--allow-different-gpus compares them anyway)\n",
                base_path, base.device, new_path, fresh.device);
        goto done;
    }

    printf("## tscan-bench compare\n\n");
    describe("base", &base);
    describe("new", &fresh);
    if (base.device && fresh.device && strcmp(base.device, fresh.device))
        printf("\n> **Warning:** the reports come from different GPUs (--allow-different-gpus); their times are "
               "not comparable.\n");
    printf("\nEach case is judged by its median (change) and by its median relative to the same-run copy of its "
           "bytes (vs copy). Noise: max(%g%%, %g x combined relative stdev). Allowed: the larger of the noise and "
           "the case's run-to-run spread (%s%g%% for cases at %g%% of the copy's speed or more, %g%% below). SAME "
           "when either measure stays within the noise; SLOW or FAST when both clear the allowed change; "
           "AMBIGUOUS otherwise.\n\n",
           s->threshold, s->noise_factor, s->spread_path ? "from history where it has the case, else " : "",
           s->spread, 100.0 * OFF_COPY_FRACTION, s->off_copy_spread);
    printf("| case | base | new | change | vs copy | allowed | verdict | decided by | note |\n");
    printf("|---|---:|---:|---:|---:|---:|---|---|---|\n");

    /* NEW's cases, in name order... */
    for (size_t i = 0; i < fresh.count; ++i) {
        compare_entry *n = &fresh.entries[i];
        compare_entry *b = bsearch(n, base.entries, base.count, sizeof *base.entries, by_key);
        char change[32] = "", relative_text[32] = "", allowed[48] = "", note[768] = "";
        const char *decided = "";
        int verdict;
        if (b) b->matched = 1;
        if (!(b && b->timed) && !n->timed) {
            ++untimed;
            continue;
        }
        if (b && b->timed && n->timed) {
            int history;
            double absolute = n->median / b->median - 1.0;
            double relative = b->copy_median > 0 && n->copy_median > 0
                                  ? (n->median / n->copy_median) / (b->median / b->copy_median) - 1.0
                                  : NAN;
            double spread = case_spread(s, &spreads, b, n, &history);
            double noise_margin = fmax(s->threshold / 100.0,
                                       s->noise_factor * sqrt(b->noise * b->noise + n->noise * n->noise));
            double margin = fmax(noise_margin, spread);
            verdict = judge(absolute, relative, noise_margin, margin, &decided);
            from_history += history;
            snprintf(change, sizeof change, "%+.1f%%", 100.0 * absolute);
            if (!isnan(relative)) {
                snprintf(relative_text, sizeof relative_text, "%+.1f%%", 100.0 * relative);
                snprintf(note, sizeof note, "copy %+.1f%%", 100.0 * (n->copy_median / b->copy_median - 1.0));
            }
            snprintf(allowed, sizeof allowed, "±%.1f%%%s", 100.0 * margin, history ? " (history)" : "");
        } else if (n->timed) {
            verdict = NEW;
            untimed_note(note, sizeof note, "base", b);
        } else {
            verdict = GONE;
            untimed_note(note, sizeof note, "new", n);
        }
        counts[verdict]++;
        print_row(n->key, b, n, change, relative_text, allowed, verdict, decided, note);
    }
    /* ...then what BASE timed and NEW does not have at all. */
    for (size_t i = 0; i < base.count; ++i) {
        const compare_entry *b = &base.entries[i];
        if (b->matched) continue;
        if (!b->timed) {
            ++untimed;
            continue;
        }
        counts[GONE]++;
        print_row(b->key, b, NULL, "", "", "", GONE, "", "absent from new");
    }
    printf("\n**Summary:** %zu SAME, %zu FAST, %zu SLOW, %zu AMBIGUOUS, %zu NEW, %zu GONE", counts[SAME],
           counts[FAST], counts[SLOW], counts[AMBIGUOUS], counts[NEW], counts[GONE]);
    if (untimed) printf("; %zu cases timed in neither report (skipped or failed) not compared", untimed);
    if (s->spread_path) printf("; %zu cases with a spread from history", from_history);
    printf(".\n");
    status = counts[SLOW] ? EXIT_FAILED : EXIT_PASSED;
done:
    free_report(&base);
    free_report(&fresh);
    free_spreads(&spreads);
    return status;
}

static void print_compare_usage(FILE *out) {
    fputs("usage: tscan-bench compare BASE.json NEW.json [--threshold PCT] [--noise-factor K]\n"
          "                           [--spread FILE] [--default-spread PCT] [--off-copy-spread PCT]\n"
          "                           [--allow-different-gpus] [--base-strategy S --new-strategy S]\n"
          "  --threshold PCT        smallest change called FAST or SLOW (default 3)\n"
          "  --noise-factor K       allowed change grows to K x the combined relative stdev (default 2)\n"
          "  --spread FILE          per-case run-to-run spreads (bench/history.py --spread-out)\n"
          "  --default-spread PCT   spread of a case without history, at a quarter of the copy's speed\n"
          "                         or more (default 5)\n"
          "  --off-copy-spread PCT  spread of a case without history, slower than that (default 20)\n"
          "  --allow-different-gpus compare reports from differently named GPUs (refused otherwise)\n"
          "  --base-strategy S, --new-strategy S\n"
          "                         compare strategy S of BASE with strategy S of NEW, case by case\n"
          "                         (e.g. torch from a peers report against auto)\n"
          "Exit status: 0 when no case is SLOW (SAME, FAST, AMBIGUOUS, NEW, GONE), 1 when a case is SLOW,\n"
          "2 on a usage error, an unreadable report, or reports of other backends or other GPUs.\n",
          out);
}

static int usage_error(const char *fmt, const char *value) {
    fputs("tscan-bench compare: ", stderr);
    fprintf(stderr, fmt, value);
    fputs("\nRun 'tscan-bench compare --help' for usage.\n", stderr);
    return EXIT_USAGE;
}

static int parse_percent(const char *text, double *value) {
    char *end;
    errno = 0;
    *value = strtod(text, &end);
    return end == text || *end || errno || !(*value >= 0.0) || !isfinite(*value) ? -1 : 0;
}

int parse_compare_option(int argc, char **argv, int *i, compare_settings *s, int *error) {
    static const struct {
        const char *flag;
        size_t offset;
        const char *what;
    } numbers[] = {{"--threshold", offsetof(compare_settings, threshold), "a non-negative percentage"},
                   {"--noise-factor", offsetof(compare_settings, noise_factor), "a non-negative number"},
                   {"--default-spread", offsetof(compare_settings, spread), "a non-negative percentage"},
                   {"--off-copy-spread", offsetof(compare_settings, off_copy_spread), "a non-negative percentage"}};
    const char *arg = argv[*i];
    *error = EXIT_PASSED;
    if (!strcmp(arg, "--allow-different-gpus")) {
        s->allow_different_gpus = 1;
        return 1;
    }
    for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; ++k) {
        if (strcmp(arg, numbers[k].flag)) continue;
        if (*i + 1 == argc) *error = usage_error("%s needs a value", arg);
        else if (parse_percent(argv[++*i], (double *)((char *)s + numbers[k].offset))) {
            fprintf(stderr, "tscan-bench: %s: '%s' is not %s\n", arg, argv[*i], numbers[k].what);
            *error = EXIT_USAGE;
        }
        return 1;
    }
    if (!strcmp(arg, "--spread")) {
        if (*i + 1 == argc) *error = usage_error("%s needs a value", arg);
        else s->spread_path = argv[++*i];
        return 1;
    }
    return 0;
}

int compare_main(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL};
    size_t positional = 0;
    compare_settings settings;

    compare_settings_default(&settings);
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        int error;
        if (!strcmp(arg, "--help")) {
            print_compare_usage(stdout);
            return EXIT_PASSED;
        }
        if (parse_compare_option(argc, argv, &i, &settings, &error)) {
            if (error != EXIT_PASSED) return error;
        } else if (!strcmp(arg, "--base-strategy") || !strcmp(arg, "--new-strategy")) {
            if (i + 1 == argc) return usage_error("%s needs a value", arg);
            *(!strcmp(arg, "--base-strategy") ? &settings.base_strategy : &settings.new_strategy) = argv[++i];
        } else if (!strncmp(arg, "--", 2)) {
            return usage_error("unknown option '%s'", arg);
        } else if (positional == 2) {
            return usage_error("unexpected argument '%s' (compare takes two reports)", arg);
        } else {
            paths[positional++] = arg;
        }
    }
    if (positional != 2) return usage_error("%s", "needs two reports: BASE.json NEW.json");
    if (!settings.base_strategy != !settings.new_strategy)
        return usage_error("%s", "--base-strategy and --new-strategy go together");
    return compare_reports(paths[0], paths[1], &settings);
}
