/* summary.c - the distribution of % of copy over a report's cases, and AUTO against the best
 * forced strategy (bench/REPORT.md, summary.distribution). */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

#include "compare.h" /* json_parse_file */
#include "options.h"
#include "report.h"
#include "stats.h"
#include "tscan.h"

/* AUTO "within X %" of the best forced strategy: its median at most (1 + X/100) times that. */
static const double within_percents[] = {3.0, 5.0};

/* Groups of the distribution: all cases, then by element size. */
enum { GROUP_ALL, GROUP_1, GROUP_2, GROUP_4, GROUP_8, GROUP_COUNT };
static const char *const group_names[GROUP_COUNT] = {"all", "1_byte", "2_byte", "4_byte", "8_byte"};

/* One benchmark, as the distribution reads it. */
typedef struct summary_entry {
    const char *name, *strategy;
    size_t key_length; /* the name less "/strategy" */
    int group;         /* element size group, or -1 when the dtype is unknown */
    int timed;         /* status passed, with a median and a % of copy */
    double median, percent;
} summary_entry;

/* A group's values and the case of its smallest. */
typedef struct value_list {
    double *values;
    size_t count;
    const char *worst_case;
    double worst;
} value_list;

const char *distribution_strategy(const char *backend) {
    return backend && !strcmp(backend, "reference") ? "reference" : "auto";
}

static const char *string_of(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static int size_group(const char *dtype) {
    for (int d = 0; dtype && d < TSCAN_DTYPE_COUNT; ++d)
        if (!strcmp(dtype, tscan_dtype_name((tscan_dtype)d))) switch (tscan_dtype_size((tscan_dtype)d)) {
            case 1: return GROUP_1;
            case 2: return GROUP_2;
            case 4: return GROUP_4;
            default: return GROUP_8;
            }
    return -1;
}

/* A strategy tscan can be forced to: any tscan_algo but AUTO. */
static int is_forced(const char *strategy) {
    for (int a = 0; a < TSCAN_ALGO_COUNT; ++a)
        if (a != TSCAN_ALGO_AUTO && !strcmp(strategy, tscan_algo_name((tscan_algo)a))) return 1;
    return 0;
}

static const summary_entry *sort_base;

static int by_key(const void *a, const void *b) {
    const summary_entry *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    size_t n = x->key_length < y->key_length ? x->key_length : y->key_length;
    int order = strncmp(x->name, y->name, n);
    return order ? order : (x->key_length > y->key_length) - (x->key_length < y->key_length);
}

static void add_value(value_list *list, double value, const char *name) {
    if (!list->count || value < list->worst) {
        list->worst = value;
        list->worst_case = name;
    }
    list->values[list->count++] = value;
}

static void add_nullable(cJSON *object, const char *key, int present, double value) {
    if (present) cJSON_AddNumberToObject(object, key, value);
    else cJSON_AddNullToObject(object, key);
}

static cJSON *group_json(value_list *list) {
    cJSON *object = cJSON_CreateObject();
    int any = list->count > 0;
    qsort(list->values, list->count, sizeof *list->values, compare_doubles);
    cJSON_AddNumberToObject(object, "cases", (double)list->count);
    add_nullable(object, "worst", any, any ? list->values[0] : 0.0);
    add_nullable(object, "p10", any, any ? quantile(list->values, (int64_t)list->count, 0.10) : 0.0);
    add_nullable(object, "median", any, any ? quantile(list->values, (int64_t)list->count, 0.50) : 0.0);
    if (any) cJSON_AddStringToObject(object, "worst_case", list->worst_case);
    else cJSON_AddNullToObject(object, "worst_case");
    return object;
}

cJSON *distribution_json(const cJSON *benchmarks, const char *strategy) {
    const size_t total = (size_t)cJSON_GetArraySize(benchmarks);
    summary_entry *entries = calloc(total ? total : 1, sizeof *entries);
    size_t *order = malloc((total ? total : 1) * sizeof *order);
    double *storage = malloc((GROUP_COUNT + 1) * (total ? total : 1) * sizeof *storage);
    value_list groups[GROUP_COUNT], ratios;
    size_t count = 0, cases = 0, untimed = 0, within[2] = {0, 0};
    const cJSON *item;
    cJSON *object = NULL, *percent;

    if (!entries || !order || !storage) goto done;
    memset(groups, 0, sizeof groups);
    memset(&ratios, 0, sizeof ratios);
    for (int g = 0; g < GROUP_COUNT; ++g) groups[g].values = storage + (size_t)g * total;
    ratios.values = storage + (size_t)GROUP_COUNT * total;

    cJSON_ArrayForEach(item, benchmarks) {
        summary_entry *e = &entries[count];
        const cJSON *time = cJSON_GetObjectItemCaseSensitive(item, "time");
        const cJSON *median = cJSON_GetObjectItemCaseSensitive(time, "median");
        const cJSON *share = cJSON_GetObjectItemCaseSensitive(item, "percent_of_copy");
        const char *status = string_of(item, "status"), *slash;
        e->name = string_of(item, "name");
        e->strategy = string_of(item, "strategy");
        if (!e->name || !e->strategy || !(slash = strrchr(e->name, '/'))) continue;
        e->key_length = (size_t)(slash - e->name);
        e->group = size_group(string_of(item, "dtype"));
        e->timed = status && !strcmp(status, "passed") && cJSON_IsNumber(median) && median->valuedouble > 0 &&
                   cJSON_IsNumber(share);
        if (e->timed) {
            e->median = median->valuedouble;
            e->percent = share->valuedouble;
        }
        order[count] = count;
        ++count;
    }
    sort_base = entries;
    qsort(order, count, sizeof *order, by_key);

    /* Each run of equal keys is one case: its strategies side by side. */
    for (size_t begin = 0, end; begin < count; begin = end) {
        const summary_entry *subject = NULL;
        double best = 0.0;
        for (end = begin; end < count && !by_key(&order[begin], &order[end]); ++end) {
            const summary_entry *e = &entries[order[end]];
            if (!strcmp(e->strategy, strategy)) subject = e;
            else if (e->timed && is_forced(e->strategy) && (best == 0.0 || e->median < best)) best = e->median;
        }
        if (!subject) continue;
        ++cases;
        if (!subject->timed) {
            ++untimed;
            continue;
        }
        add_value(&groups[GROUP_ALL], subject->percent, subject->name);
        if (subject->group >= 0) add_value(&groups[subject->group], subject->percent, subject->name);
        if (best > 0.0) {
            double ratio = subject->median / best;
            /* The worst ratio is the largest: kept negated so that add_value's smallest is it. */
            add_value(&ratios, -ratio, subject->name);
            for (int w = 0; w < 2; ++w) within[w] += ratio <= 1.0 + within_percents[w] / 100.0;
        }
    }

    object = cJSON_CreateObject();
    cJSON_AddStringToObject(object, "strategy", strategy);
    cJSON_AddNumberToObject(object, "cases", (double)cases);
    cJSON_AddNumberToObject(object, "untimed", (double)untimed);
    percent = cJSON_AddObjectToObject(object, "percent_of_copy");
    for (int g = 0; g < GROUP_COUNT; ++g) cJSON_AddItemToObject(percent, group_names[g], group_json(&groups[g]));
    {
        cJSON *against = cJSON_AddObjectToObject(object, "against_best_forced");
        int any = ratios.count > 0;
        cJSON_AddNumberToObject(against, "cases", (double)ratios.count);
        add_nullable(against, "percent_within_3", any, any ? 100.0 * (double)within[0] / (double)ratios.count : 0);
        add_nullable(against, "percent_within_5", any, any ? 100.0 * (double)within[1] / (double)ratios.count : 0);
        add_nullable(against, "worst_ratio", any, -ratios.worst);
        if (any) cJSON_AddStringToObject(against, "worst_case", ratios.worst_case);
        else cJSON_AddNullToObject(against, "worst_case");
    }
done:
    free(entries);
    free(order);
    free(storage);
    return object;
}

static double number_of(const cJSON *object, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsNumber(item) ? item->valuedouble : 0.0;
}

void distribution_print(FILE *out, const cJSON *distribution) {
    const cJSON *percent = cJSON_GetObjectItemCaseSensitive(distribution, "percent_of_copy");
    const cJSON *against = cJSON_GetObjectItemCaseSensitive(distribution, "against_best_forced");
    const char *strategy = string_of(distribution, "strategy");
    fprintf(out, "\n%s's %% of copy over %.0f cases (%.0f not timed):\n", strategy ? strategy : "?",
            number_of(distribution, "cases"), number_of(distribution, "untimed"));
    fprintf(out, "  %-8s %6s %8s %8s %8s  %s\n", "elements", "cases", "worst", "p10", "median", "worst case");
    for (int g = 0; g < GROUP_COUNT; ++g) {
        const cJSON *group = cJSON_GetObjectItemCaseSensitive(percent, group_names[g]);
        const char *worst_case = string_of(group, "worst_case");
        fprintf(out, "  %-8s %6.0f", group_names[g], number_of(group, "cases"));
        if (worst_case)
            fprintf(out, " %7.1f%% %7.1f%% %7.1f%%  %s\n", number_of(group, "worst"), number_of(group, "p10"),
                    number_of(group, "median"), worst_case);
        else
            fputs("        -        -        -\n", out);
    }
    if (string_of(against, "worst_case"))
        fprintf(out,
                "%s against the best forced strategy over %.0f cases: within 3 %% in %.1f %%, within 5 %% in "
                "%.1f %%, worst ratio %.3f (%s)\n",
                strategy ? strategy : "?", number_of(against, "cases"), number_of(against, "percent_within_3"),
                number_of(against, "percent_within_5"), number_of(against, "worst_ratio"),
                string_of(against, "worst_case"));
}

static int summary_usage_error(const char *message, const char *value) {
    fputs("tscan-bench summary: ", stderr);
    fprintf(stderr, message, value);
    fputs("\nusage: tscan-bench summary REPORT.json [--json] [--strategy S]\n", stderr);
    return EXIT_USAGE;
}

int summary_main(int argc, char **argv) {
    const char *path = NULL, *strategy = NULL, *format;
    const cJSON *benchmarks;
    cJSON *root, *distribution;
    int as_json = 0;
    char err[1024];

    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json")) as_json = 1;
        else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) strategy = argv[++i];
        else if (!strncmp(argv[i], "--", 2))
            return summary_usage_error("unknown option or missing value: '%s'", argv[i]);
        else if (path) return summary_usage_error("unexpected argument '%s' (summary takes one report)", argv[i]);
        else path = argv[i];
    }
    if (!path) return summary_usage_error("%s", "needs a report");
    if (!(root = json_parse_file(path, err, sizeof err))) return summary_usage_error("%s", err);
    format = string_of(root, "format");
    benchmarks = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");
    if (!format || strcmp(format, REPORT_FORMAT) || !cJSON_IsArray(benchmarks)) {
        cJSON_Delete(root);
        return summary_usage_error("%s: not a tscan-bench report with benchmarks", path);
    }
    if (!strategy)
        strategy = distribution_strategy(string_of(cJSON_GetObjectItemCaseSensitive(root, "context"), "backend"));
    if (!(distribution = distribution_json(benchmarks, strategy))) {
        cJSON_Delete(root);
        fputs("tscan-bench summary: out of memory\n", stderr);
        return EXIT_FAILED;
    }
    if (as_json) {
        char *text = cJSON_Print(distribution);
        if (text) puts(text);
        free(text);
    } else {
        distribution_print(stdout, distribution);
    }
    cJSON_Delete(distribution);
    cJSON_Delete(root);
    return EXIT_PASSED;
}
