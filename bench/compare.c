/*
 * compare.c - `tscan-bench compare BASE.json NEW.json`: regression verdicts between two
 * reports, matched by case name.
 *
 * For a case timed in both, with change = new median / base median - 1 and each report's
 * relative standard deviation r_base, r_new:
 *     allowed = max(threshold, k * sqrt(r_base^2 + r_new^2))
 *     SLOW if change > allowed, FAST if change < -allowed, else SAME.
 * NEW: timed only in NEW. GONE: timed only in BASE (absent from NEW, or skipped or failed
 * there). Cases timed in neither are counted, not listed.
 */
#include "compare.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
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

static void print_compare_usage(FILE *out) {
    fputs("usage: tscan-bench compare BASE.json NEW.json [--threshold PCT] [--noise-factor K]\n"
          "                           [--base-strategy S --new-strategy S]\n"
          "  --threshold PCT      smallest change called FAST or SLOW (default 5)\n"
          "  --noise-factor K     allowed change grows to K x the combined relative stdev (default 2)\n"
          "  --base-strategy S, --new-strategy S\n"
          "                       compare strategy S of BASE with strategy S of NEW, case by case\n"
          "                       (e.g. torch from a peers report against auto)\n"
          "Exit status: 0, 1 when a case is SLOW, 2 on a usage error or an unreadable report.\n",
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

int compare_main(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL}, *strategies[2] = {NULL, NULL};
    double threshold = 5.0, noise_factor = 2.0;
    size_t positional = 0, counts[5] = {0}, untimed = 0;
    enum { SAME, FAST, SLOW, NEW, GONE };
    static const char *const verdicts[] = {"SAME", "FAST", "SLOW", "NEW", "GONE"};
    loaded_report base, fresh;
    char err[1024];

    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help")) {
            print_compare_usage(stdout);
            return EXIT_PASSED;
        }
        if (!strcmp(arg, "--threshold") || !strcmp(arg, "--noise-factor") || !strcmp(arg, "--base-strategy") ||
            !strcmp(arg, "--new-strategy")) {
            if (i + 1 == argc) return usage_error("%s needs a value", arg);
            if (!strcmp(arg, "--threshold") && parse_percent(argv[i + 1], &threshold))
                return usage_error("--threshold: '%s' is not a non-negative percentage", argv[i + 1]);
            if (!strcmp(arg, "--noise-factor") && parse_percent(argv[i + 1], &noise_factor))
                return usage_error("--noise-factor: '%s' is not a non-negative number", argv[i + 1]);
            if (!strcmp(arg, "--base-strategy")) strategies[0] = argv[i + 1];
            if (!strcmp(arg, "--new-strategy")) strategies[1] = argv[i + 1];
            ++i;
        } else if (!strncmp(arg, "--", 2)) {
            return usage_error("unknown option '%s'", arg);
        } else if (positional == 2) {
            return usage_error("unexpected argument '%s' (compare takes two reports)", arg);
        } else {
            paths[positional++] = arg;
        }
    }
    if (positional != 2) return usage_error("%s", "needs two reports: BASE.json NEW.json");
    if (!strategies[0] != !strategies[1])
        return usage_error("%s", "--base-strategy and --new-strategy go together");

    if (load_report(paths[0], strategies[0], &base, err, sizeof err)) {
        fprintf(stderr, "tscan-bench compare: %s\n", err);
        free_report(&base);
        return EXIT_USAGE;
    }
    if (load_report(paths[1], strategies[1], &fresh, err, sizeof err)) {
        fprintf(stderr, "tscan-bench compare: %s\n", err);
        free_report(&base);
        free_report(&fresh);
        return EXIT_USAGE;
    }
    if (strcmp(base.backend, fresh.backend)) {
        fprintf(stderr,
                "tscan-bench compare: incompatible reports: %s ran the %s backend, %s the %s backend; their "
                "times do not compare\n",
                paths[0], base.backend, paths[1], fresh.backend);
        free_report(&base);
        free_report(&fresh);
        return EXIT_USAGE;
    }

    printf("## tscan-bench compare\n\n");
    describe("base", &base);
    describe("new", &fresh);
    if (base.device && fresh.device && strcmp(base.device, fresh.device))
        printf("\n> **Warning:** the reports come from different devices; their times are not comparable.\n");
    printf("\nSLOW when the new median exceeds the base by more than max(%g%%, %g x combined relative stdev); "
           "FAST when it is below by as much.\n\n",
           threshold, noise_factor);
    printf("| case | base | new | change | allowed | verdict | note |\n");
    printf("|---|---:|---:|---:|---:|---|---|\n");

    /* NEW's cases, in name order... */
    for (size_t i = 0; i < fresh.count; ++i) {
        compare_entry *n = &fresh.entries[i];
        compare_entry *b = bsearch(n, base.entries, base.count, sizeof *base.entries, by_key);
        char change[32] = "", allowed[32] = "", note[768] = "";
        int verdict;
        if (b) b->matched = 1;
        if (!(b && b->timed) && !n->timed) {
            ++untimed;
            continue;
        }
        if (b && b->timed && n->timed) {
            double delta = n->median / b->median - 1.0;
            double margin = fmax(threshold / 100.0, noise_factor * sqrt(b->noise * b->noise + n->noise * n->noise));
            verdict = delta > margin ? SLOW : delta < -margin ? FAST : SAME;
            snprintf(change, sizeof change, "%+.1f%%", 100.0 * delta);
            snprintf(allowed, sizeof allowed, "±%.1f%%", 100.0 * margin);
        } else if (n->timed) {
            verdict = NEW;
            untimed_note(note, sizeof note, "base", b);
        } else {
            verdict = GONE;
            untimed_note(note, sizeof note, "new", n);
        }
        counts[verdict]++;
        printf("|");
        print_cell(n->key);
        print_time_cell(b);
        print_time_cell(n);
        print_cell(change);
        print_cell(allowed);
        print_cell(verdicts[verdict]);
        print_cell(note);
        printf("\n");
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
        printf("|");
        print_cell(b->key);
        print_time_cell(b);
        print_time_cell(NULL);
        print_cell("");
        print_cell("");
        print_cell(verdicts[GONE]);
        print_cell("absent from new");
        printf("\n");
    }
    printf("\n**Summary:** %zu SAME, %zu FAST, %zu SLOW, %zu NEW, %zu GONE", counts[SAME], counts[FAST],
           counts[SLOW], counts[NEW], counts[GONE]);
    if (untimed) printf("; %zu cases timed in neither report (skipped or failed) not compared", untimed);
    printf(".\n");
    free_report(&base);
    free_report(&fresh);
    return counts[SLOW] ? EXIT_FAILED : EXIT_PASSED;
}
