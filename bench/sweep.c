/* sweep.c - shapes, the default sweeps, sweep files, overrides and the expansion to cases. */
#include "sweep.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest tensor a case may describe: far beyond any GPU's memory, and small enough that
 * byte counts stay exact in a double. */
#define MAX_ELEMENTS (INT64_C(1) << 40)
/* Bounds of one sweep-file entry: listed shapes, and ladder rungs 2^0 .. 2^40. */
#define MAX_ENTRY_SHAPES 192
#define MAX_LADDER_STEPS 41

/* ---- axis values ------------------------------------------------------------------------ */

static const char *const direction_names[] = {"increasing", "decreasing"};
static const char *const exclusive_names[] = {"inclusive", "exclusive"};
static const char *const layout_names[] = {"packed", "transposed", "padded", "strided"};

int axis_value_count(sweep_axis axis) {
    switch (axis) {
    case AXIS_DTYPE: return TSCAN_DTYPE_COUNT;
    case AXIS_OP: return TSCAN_OP_COUNT;
    case AXIS_DIRECTION: return 2;
    case AXIS_EXCLUSIVE: return 2;
    case AXIS_ALGO: return TSCAN_ALGO_COUNT;
    default: return 0;
    }
}

const char *axis_value_name(sweep_axis axis, int value) {
    switch (axis) {
    case AXIS_DTYPE: return tscan_dtype_name((tscan_dtype)value);
    case AXIS_OP: return tscan_op_name((tscan_op)value);
    case AXIS_DIRECTION: return direction_names[value];
    case AXIS_EXCLUSIVE: return exclusive_names[value];
    case AXIS_ALGO: return tscan_algo_name((tscan_algo)value);
    default: return NULL;
    }
}

uint32_t axis_all(sweep_axis axis) { return (UINT32_C(1) << axis_value_count(axis)) - 1; }

/* One name of an axis value; the exclusive flag also reads as no/yes, false/true, 0/1. */
static int axis_value_from_name(sweep_axis axis, const char *name) {
    if (axis == AXIS_EXCLUSIVE) {
        if (!strcmp(name, "no") || !strcmp(name, "false") || !strcmp(name, "0")) return 0;
        if (!strcmp(name, "yes") || !strcmp(name, "true") || !strcmp(name, "1")) return 1;
    }
    for (int v = 0; v < axis_value_count(axis); ++v)
        if (!strcmp(name, axis_value_name(axis, v))) return v;
    return -1;
}

/* Noun for an axis in messages: "unknown dtype 'float33'". */
static const char *axis_noun(sweep_axis axis) {
    static const char *const nouns[] = {"dtype", "op", "direction", "exclusive form", "strategy"};
    return nouns[axis];
}

int parse_axis_list(sweep_axis axis, const char *list, uint32_t *mask, char *err, size_t errlen) {
    const char *token = list;
    *mask = 0;
    for (;;) {
        size_t len = strcspn(token, ",");
        char name[64];
        int value;
        if (len == 0 || len >= sizeof name) {
            snprintf(err, errlen, "'%s' is not a comma-separated list of names", list);
            return -1;
        }
        memcpy(name, token, len);
        name[len] = '\0';
        if (!strcmp(name, "all") || !strcmp(name, "both")) {
            *mask |= axis_all(axis);
        } else if ((value = axis_value_from_name(axis, name)) >= 0) {
            *mask |= UINT32_C(1) << value;
        } else {
            int used = snprintf(err, errlen, "unknown %s '%s' (expected", axis_noun(axis), name);
            for (int v = 0; v < axis_value_count(axis) && used > 0 && (size_t)used < errlen; ++v)
                used += snprintf(err + used, errlen - (size_t)used, " %s,", axis_value_name(axis, v));
            if (used > 0 && (size_t)used < errlen) snprintf(err + used, errlen - (size_t)used, " or all)");
            return -1;
        }
        if (token[len] == '\0') return 0;
        token += len + 1;
    }
}

const char *layout_name(bench_layout layout) { return layout_names[layout]; }

int parse_layout(const char *name, bench_layout *layout) {
    for (int l = 0; l < LAYOUT_COUNT; ++l)
        if (!strcmp(name, layout_names[l])) {
            *layout = (bench_layout)l;
            return 0;
        }
    return -1;
}

const char *strategy_name(int strategy) {
    return strategy == STRATEGY_REFERENCE ? "reference" : tscan_algo_name((tscan_algo)strategy);
}

/* ---- shapes ------------------------------------------------------------------------------ */

void packed_strides(uint32_t ndim, const int64_t *sizes, int64_t *strides) {
    int64_t stride = 1;
    for (uint32_t d = ndim; d-- > 0;) {
        strides[d] = stride;
        stride *= sizes[d];
    }
}

int shape_init(bench_shape *shape, const char *class_name, uint32_t ndim, const int64_t *sizes,
               uint32_t axis, bench_layout layout, const int64_t *in_strides,
               const int64_t *out_strides, char *err, size_t errlen) {
    int64_t numel = 1;
    memset(shape, 0, sizeof *shape);
    if (ndim < 1 || ndim > TSCAN_MAX_DIMS) {
        snprintf(err, errlen, "a shape has %" PRIu32 " dimensions; tscan takes 1 to %d", ndim, TSCAN_MAX_DIMS);
        return -1;
    }
    for (uint32_t d = 0; d < ndim; ++d) {
        if (sizes[d] < 1) {
            snprintf(err, errlen, "size %" PRId64 " of dimension %" PRIu32 " is not positive", sizes[d], d);
            return -1;
        }
        if (sizes[d] > MAX_ELEMENTS / numel) {
            snprintf(err, errlen, "the shape has more than 2^40 elements");
            return -1;
        }
        numel *= sizes[d];
    }
    if (axis >= ndim) {
        snprintf(err, errlen, "axis %" PRIu32 " is out of range for a %" PRIu32 "-d shape", axis, ndim);
        return -1;
    }
    if ((layout == LAYOUT_TRANSPOSED || layout == LAYOUT_PADDED) && ndim < 2) {
        snprintf(err, errlen, "layout %s needs at least 2 dimensions", layout_names[layout]);
        return -1;
    }
    if (layout == LAYOUT_STRIDED && !in_strides) {
        snprintf(err, errlen, "layout strided needs input strides");
        return -1;
    }
    snprintf(shape->class_name, sizeof shape->class_name, "%s", class_name);
    shape->ndim = ndim;
    shape->axis = axis;
    shape->layout = layout;
    memcpy(shape->sizes, sizes, ndim * sizeof *sizes);
    packed_strides(ndim, sizes, shape->out_strides);
    packed_strides(ndim, sizes, shape->in_strides);
    if (layout == LAYOUT_TRANSPOSED) {
        /* Packed memory of sizes (..., S[d-1], S[d-2]) read as (..., S[d-2], S[d-1]). */
        shape->in_strides[ndim - 2] = 1;
        shape->in_strides[ndim - 1] = sizes[ndim - 2];
    } else if (layout == LAYOUT_PADDED) {
        int64_t stride = sizes[ndim - 1] + 1;
        for (uint32_t d = ndim - 1; d-- > 0;) {
            shape->in_strides[d] = stride;
            stride *= sizes[d];
        }
    } else if (layout == LAYOUT_STRIDED) {
        memcpy(shape->in_strides, in_strides, ndim * sizeof *in_strides);
    }
    if (out_strides) {
        memcpy(shape->out_strides, out_strides, ndim * sizeof *out_strides);
        if (layout != LAYOUT_STRIDED) shape->layout = LAYOUT_STRIDED;
    }
    for (uint32_t d = 0; d < ndim; ++d) {
        int64_t in = shape->in_strides[d], out = shape->out_strides[d];
        if (in < -MAX_ELEMENTS || in > MAX_ELEMENTS || out == 0 || out < -MAX_ELEMENTS || out > MAX_ELEMENTS) {
            snprintf(err, errlen,
                     "stride of dimension %" PRIu32 " out of range (|stride| <= 2^40; output strides non-zero)", d);
            return -1;
        }
    }
    return 0;
}

uint32_t parse_sizes(const char *text, int64_t *sizes, char *err, size_t errlen) {
    const char *p = text;
    uint32_t ndim = 0;
    for (;;) {
        char *end;
        long long value;
        if (ndim == TSCAN_MAX_DIMS) {
            snprintf(err, errlen, "shape '%s' has more than %d dimensions", text, TSCAN_MAX_DIMS);
            return 0;
        }
        errno = 0;
        value = strtoll(p, &end, 10);
        if (end == p || errno || value < 1 || (*end != 'x' && *end != '\0')) {
            snprintf(err, errlen, "shape '%s' is not sizes AxBxC of positive integers", text);
            return 0;
        }
        sizes[ndim++] = value;
        if (*end == '\0') return ndim;
        p = end + 1;
    }
}

int64_t shape_numel(const bench_shape *shape) {
    int64_t n = 1;
    for (uint32_t d = 0; d < shape->ndim; ++d) n *= shape->sizes[d];
    return n;
}

int64_t shape_lines(const bench_shape *shape) { return shape_numel(shape) / shape->sizes[shape->axis]; }

void view_extent(const bench_shape *shape, const int64_t *strides, int64_t *lowest, int64_t *highest) {
    *lowest = *highest = 0;
    for (uint32_t d = 0; d < shape->ndim; ++d) {
        int64_t reach = (shape->sizes[d] - 1) * strides[d];
        if (reach < 0) *lowest += reach;
        else *highest += reach;
    }
}

void shape_label(const bench_shape *shape, char *buf, size_t len) {
    size_t used = 0;
    for (uint32_t d = 0; d < shape->ndim && used < len; ++d)
        used += (size_t)snprintf(buf + used, len - used, d ? "x%" PRId64 : "%" PRId64, shape->sizes[d]);
}

/* Layout token of a case name: the layout's name, or the strides themselves when explicit. */
static void layout_label(const bench_shape *shape, char *buf, size_t len) {
    size_t used;
    if (shape->layout != LAYOUT_STRIDED) {
        snprintf(buf, len, "%s", layout_names[shape->layout]);
        return;
    }
    used = (size_t)snprintf(buf, len, "in");
    for (uint32_t d = 0; d < shape->ndim && used < len; ++d)
        used += (size_t)snprintf(buf + used, len - used, "%c%" PRId64, d ? ',' : '[', shape->in_strides[d]);
    for (uint32_t d = 0; d < shape->ndim && used < len; ++d)
        used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64, d ? "," : "]out[", shape->out_strides[d]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

static int same_geometry(const bench_shape *a, const bench_shape *b) {
    size_t n = a->ndim * sizeof(int64_t);
    return a->ndim == b->ndim && a->axis == b->axis && a->layout == b->layout &&
           !memcmp(a->sizes, b->sizes, n) && !memcmp(a->in_strides, b->in_strides, n) &&
           !memcmp(a->out_strides, b->out_strides, n);
}

/* ---- building sweeps ---------------------------------------------------------------------- */

size_t sweep_add_shape(bench_sweep *sweep, const bench_shape *shape) {
    bench_shape *grown;
    for (size_t i = 0; i < sweep->shape_count; ++i)
        if (same_geometry(&sweep->shapes[i], shape)) return i;
    grown = realloc(sweep->shapes, (sweep->shape_count + 1) * sizeof *grown);
    if (!grown) return (size_t)-1;
    sweep->shapes = grown;
    sweep->shapes[sweep->shape_count] = *shape;
    return sweep->shape_count++;
}

int sweep_add_entry(bench_sweep *sweep, const size_t *shape_ids, size_t shape_count,
                           const uint32_t *masks) {
    sweep_entry *grown = realloc(sweep->entries, (sweep->entry_count + 1) * sizeof *grown);
    sweep_entry *entry;
    if (!grown) return -1;
    sweep->entries = grown;
    entry = &sweep->entries[sweep->entry_count];
    entry->shape_ids = malloc((shape_count ? shape_count : 1) * sizeof *entry->shape_ids);
    if (!entry->shape_ids) return -1;
    memcpy(entry->shape_ids, shape_ids, shape_count * sizeof *shape_ids);
    entry->shape_count = shape_count;
    memcpy(entry->masks, masks, sizeof entry->masks);
    entry->output_dtype = -1;
    sweep->entry_count++;
    return 0;
}

int parse_dtype_name(const char *name) {
    for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt)
        if (!strcmp(name, tscan_dtype_name((tscan_dtype)dt))) return dt;
    return -1;
}

int sweep_output_dtype(bench_sweep *sweep, int dtype, char *err, size_t errlen) {
    for (size_t e = 0; e < sweep->entry_count; ++e) {
        sweep_entry *entry = &sweep->entries[e];
        if (dtype >= 0) entry->output_dtype = dtype;
        if (entry->output_dtype < 0) continue;
        for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt)
            if (entry->masks[AXIS_DTYPE] >> dt & 1 &&
                !tscan_output_dtype_allowed((tscan_dtype)dt, (tscan_dtype)entry->output_dtype)) {
                snprintf(err, errlen,
                         "output dtype %s cannot hold a scan of dtype %s (entry %zu): the output must be the "
                         "input's type or a wider one of its family",
                         tscan_dtype_name((tscan_dtype)entry->output_dtype), tscan_dtype_name((tscan_dtype)dt), e);
                return -1;
            }
    }
    return 0;
}

void sweep_free(bench_sweep *sweep) {
    for (size_t i = 0; i < sweep->entry_count; ++i) free(sweep->entries[i].shape_ids);
    free(sweep->entries);
    free(sweep->shapes);
    memset(sweep, 0, sizeof *sweep);
}

/* Adds the 1-D shapes 2^min_log2 .. 2^max_log2 (every step_log2-th power) to ids[]. */
static int add_ladder(bench_sweep *sweep, int min_log2, int max_log2, int step_log2, size_t *ids,
                      size_t *count) {
    char err[160];
    for (int p = min_log2; p <= max_log2; p += step_log2) {
        bench_shape shape;
        int64_t size = INT64_C(1) << p;
        if (shape_init(&shape, "ladder", 1, &size, 0, LAYOUT_PACKED, NULL, NULL, err, sizeof err)) return -1;
        if ((ids[(*count)++] = sweep_add_shape(sweep, &shape)) == (size_t)-1) return -1;
    }
    return 0;
}

typedef struct class_spec {
    const char *name;
    uint32_t ndim;
    int64_t sizes[TSCAN_MAX_DIMS];
    uint32_t axis;
    bench_layout layout;
} class_spec;

/* The shape classes, each a distinct memory pattern, 2^28 elements apiece. */
static const class_spec gpu_classes[] = {
    {"1d", 1, {INT64_C(1) << 28}, 0, LAYOUT_PACKED},             /* one long contiguous line */
    {"square_rows", 2, {16384, 16384}, 1, LAYOUT_PACKED},        /* many long contiguous rows */
    {"square_cols", 2, {16384, 16384}, 0, LAYOUT_PACKED},        /* long strided axis, wide */
    {"narrow_rows", 2, {4194304, 64}, 1, LAYOUT_PACKED},         /* millions of short rows */
    {"medium_rows", 2, {1048576, 256}, 1, LAYOUT_PACKED},
    {"medium_cols", 2, {1048576, 256}, 0, LAYOUT_PACKED},        /* very long strided axis, narrow */
    {"wide_rows", 2, {256, 1048576}, 1, LAYOUT_PACKED},          /* few very long rows */
    {"wide_cols", 2, {256, 1048576}, 0, LAYOUT_PACKED},          /* short strided axis, very wide */
    {"middle_axis", 3, {64, 4096, 1024}, 1, LAYOUT_PACKED},      /* strided axis inside batches */
    {"8d", 8, {2, 2, 2, 2, 2, 2, 2, 2097152}, 4, LAYOUT_PACKED}, /* axis of 2 among 8 dims */
    {"transposed", 2, {16384, 16384}, 1, LAYOUT_TRANSPOSED},     /* non-packed input, strided reads */
    {"padded", 2, {4194304, 64}, 1, LAYOUT_PADDED},              /* misaligned short rows */
};

/* The same patterns at 2^18 elements, for the host reference backend. */
static const class_spec reference_classes[] = {
    {"1d", 1, {INT64_C(1) << 18}, 0, LAYOUT_PACKED},
    {"square_rows", 2, {512, 512}, 1, LAYOUT_PACKED},
    {"square_cols", 2, {512, 512}, 0, LAYOUT_PACKED},
    {"narrow_rows", 2, {4096, 64}, 1, LAYOUT_PACKED},
    {"medium_rows", 2, {1024, 256}, 1, LAYOUT_PACKED},
    {"medium_cols", 2, {1024, 256}, 0, LAYOUT_PACKED},
    {"wide_rows", 2, {16, 16384}, 1, LAYOUT_PACKED},
    {"wide_cols", 2, {16, 16384}, 0, LAYOUT_PACKED},
    {"middle_axis", 3, {16, 128, 128}, 1, LAYOUT_PACKED},
    {"8d", 8, {2, 2, 2, 2, 2, 2, 2, 2048}, 4, LAYOUT_PACKED},
    {"transposed", 2, {512, 512}, 1, LAYOUT_TRANSPOSED},
    {"padded", 2, {4096, 64}, 1, LAYOUT_PADDED},
};

_Static_assert(sizeof gpu_classes == sizeof reference_classes, "both default sweeps list every class");

#define BIT(x) (UINT32_C(1) << (x))

int sweep_default(bench_sweep *sweep, int reference_backend, int quick) {
    const class_spec *classes = reference_backend ? reference_classes : gpu_classes;
    const size_t class_count = sizeof gpu_classes / sizeof gpu_classes[0];
    const int ladder_max = reference_backend ? 18 : 28;
    size_t class_ids[sizeof gpu_classes / sizeof gpu_classes[0]], ladder_ids[32], ladder_count = 0;
    uint32_t masks[AXIS_COUNT];
    char err[160];

    memset(sweep, 0, sizeof *sweep);
    for (size_t i = 0; i < class_count; ++i) {
        bench_shape shape;
        const class_spec *c = &classes[i];
        if (shape_init(&shape, c->name, c->ndim, c->sizes, c->axis, c->layout, NULL, NULL, err, sizeof err) ||
            (class_ids[i] = sweep_add_shape(sweep, &shape)) == (size_t)-1)
            return -1;
    }
    if (add_ladder(sweep, 10, ladder_max, quick ? 4 : 1, ladder_ids, &ladder_count)) return -1;

    /* float32 sum, increasing, inclusive: every strategy on the ladder, and on every class
     * (--quick: AUTO alone there, as some strategies take seconds on some classes). */
    masks[AXIS_DTYPE] = BIT(TSCAN_FLOAT32);
    masks[AXIS_OP] = BIT(TSCAN_OP_SUM);
    masks[AXIS_DIRECTION] = BIT(TSCAN_INCREASING);
    masks[AXIS_EXCLUSIVE] = BIT(0);
    masks[AXIS_ALGO] = axis_all(AXIS_ALGO);
    if (sweep_add_entry(sweep, ladder_ids, ladder_count, masks)) return -1;
    if (quick) masks[AXIS_ALGO] = BIT(TSCAN_ALGO_AUTO);
    if (sweep_add_entry(sweep, class_ids, class_count, masks)) return -1;
    if (quick) return 0;

    /* float32 on the classes: products, and every direction and exclusive form of the sum. */
    masks[AXIS_OP] = axis_all(AXIS_OP);
    if (sweep_add_entry(sweep, class_ids, class_count, masks)) return -1;
    masks[AXIS_OP] = BIT(TSCAN_OP_SUM);
    masks[AXIS_DIRECTION] = axis_all(AXIS_DIRECTION);
    masks[AXIS_EXCLUSIVE] = axis_all(AXIS_EXCLUSIVE);
    if (sweep_add_entry(sweep, class_ids, class_count, masks)) return -1;

    /* The other element widths and kinds, sum only, on the classes. */
    masks[AXIS_DIRECTION] = BIT(TSCAN_INCREASING);
    masks[AXIS_EXCLUSIVE] = BIT(0);
    masks[AXIS_DTYPE] = reference_backend ? BIT(TSCAN_FLOAT16) | BIT(TSCAN_INT32)
                                          : BIT(TSCAN_FLOAT16) | BIT(TSCAN_BFLOAT16) | BIT(TSCAN_FLOAT64) |
                                                BIT(TSCAN_INT8) | BIT(TSCAN_INT32) | BIT(TSCAN_INT64);
    return sweep_add_entry(sweep, class_ids, class_count, masks);
}

int sweep_override(bench_sweep *sweep, const bench_shape *shapes, size_t shape_count,
                   const uint32_t *masks) {
    if (shape_count) {
        size_t *ids = malloc(shape_count * sizeof *ids);
        if (!ids) return -1;
        for (size_t i = 0; i < shape_count; ++i)
            if ((ids[i] = sweep_add_shape(sweep, &shapes[i])) == (size_t)-1) {
                free(ids);
                return -1;
            }
        for (size_t e = 0; e < sweep->entry_count; ++e) {
            size_t *copy = malloc(shape_count * sizeof *copy);
            if (!copy) {
                free(ids);
                return -1;
            }
            memcpy(copy, ids, shape_count * sizeof *ids);
            free(sweep->entries[e].shape_ids);
            sweep->entries[e].shape_ids = copy;
            sweep->entries[e].shape_count = shape_count;
        }
        free(ids);
    }
    for (size_t e = 0; e < sweep->entry_count; ++e)
        for (int a = 0; a < AXIS_COUNT; ++a)
            if (masks[a]) sweep->entries[e].masks[a] = masks[a];
    return 0;
}

/* ---- the sweep file ----------------------------------------------------------------------- */

/* Message helper: "FILE: entries[2].shapes[0].axis: ..." */
#define FILE_ERROR(...)                                                      \
    do {                                                                     \
        int used_ = snprintf(err, errlen, "%s: %s: ", path, where);          \
        if (used_ > 0 && (size_t)used_ < errlen)                             \
            snprintf(err + used_, errlen - (size_t)used_, __VA_ARGS__);      \
        return -1;                                                           \
    } while (0)

/* An integral JSON number within +-2^53 (where doubles hold integers exactly). */
static int json_integer(const cJSON *item, int64_t *value) {
    const double limit = 9007199254740992.0;
    if (!cJSON_IsNumber(item) || item->valuedouble < -limit || item->valuedouble > limit ||
        item->valuedouble != (double)(int64_t)item->valuedouble)
        return -1;
    *value = (int64_t)item->valuedouble;
    return 0;
}

/* Reads a JSON array of integers (at most TSCAN_MAX_DIMS) into values. */
static int read_int_array(const cJSON *array, int64_t *values, uint32_t *count, const char *path,
                          const char *where, char *err, size_t errlen) {
    const cJSON *item;
    *count = 0;
    if (!cJSON_IsArray(array)) FILE_ERROR("expected an array of integers");
    cJSON_ArrayForEach(item, array) {
        if (*count == TSCAN_MAX_DIMS) FILE_ERROR("more than %d values", TSCAN_MAX_DIMS);
        if (json_integer(item, &values[*count])) FILE_ERROR("value %u is not an integer", *count);
        ++*count;
    }
    return 0;
}

/* An axis selection: "all", a comma list, or an array of names (booleans for exclusive). */
static int read_axis(const cJSON *value, sweep_axis axis, uint32_t *mask, const char *path,
                     const char *where, char *err, size_t errlen) {
    char message[384];
    const cJSON *item;
    if (cJSON_IsString(value)) {
        if (parse_axis_list(axis, value->valuestring, mask, message, sizeof message)) FILE_ERROR("%s", message);
        return 0;
    }
    if (!cJSON_IsArray(value) || cJSON_GetArraySize(value) == 0) FILE_ERROR("expected a non-empty array of names");
    *mask = 0;
    cJSON_ArrayForEach(item, value) {
        uint32_t bits;
        if (axis == AXIS_EXCLUSIVE && cJSON_IsBool(item)) {
            *mask |= UINT32_C(1) << (cJSON_IsTrue(item) ? 1 : 0);
            continue;
        }
        if (!cJSON_IsString(item)) FILE_ERROR("expected names, found a non-string");
        if (parse_axis_list(axis, item->valuestring, &bits, message, sizeof message)) FILE_ERROR("%s", message);
        *mask |= bits;
    }
    return 0;
}

static int read_shape(bench_sweep *sweep, const cJSON *object, const char *entry_class, size_t *id,
                      const char *path, const char *where, char *err, size_t errlen) {
    static const char *const keys[] = {"class", "sizes", "axis", "layout", "input_strides", "output_strides"};
    int64_t sizes[TSCAN_MAX_DIMS], in_strides[TSCAN_MAX_DIMS], out_strides[TSCAN_MAX_DIMS];
    uint32_t ndim, count, axis;
    int64_t number;
    bench_layout layout = LAYOUT_PACKED;
    const cJSON *item, *field;
    const char *class_name = entry_class;
    char inner[96], message[160];
    bench_shape shape;

    if (!cJSON_IsObject(object)) FILE_ERROR("expected an object");
    cJSON_ArrayForEach(item, object) {
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(item->string, keys[k])) ++k;
        if (k == sizeof keys / sizeof keys[0]) FILE_ERROR("unknown key '%s'", item->string);
    }
    snprintf(inner, sizeof inner, "%s.sizes", where);
    if (read_int_array(cJSON_GetObjectItemCaseSensitive(object, "sizes"), sizes, &ndim, path, inner, err, errlen))
        return -1;
    axis = ndim - 1;
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "axis"))) {
        if (json_integer(field, &number) || number < 0 || number >= TSCAN_MAX_DIMS)
            FILE_ERROR("axis must be an integer in 0..%d", TSCAN_MAX_DIMS - 1);
        axis = (uint32_t)number;
    }
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "class"))) {
        if (!cJSON_IsString(field)) FILE_ERROR("class must be a string");
        class_name = field->valuestring;
    }
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "layout")) &&
        (!cJSON_IsString(field) || parse_layout(field->valuestring, &layout)))
        FILE_ERROR("layout must be one of packed, transposed, padded, strided");
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "input_strides"))) {
        snprintf(inner, sizeof inner, "%s.input_strides", where);
        if (read_int_array(field, in_strides, &count, path, inner, err, errlen)) return -1;
        if (count != ndim) FILE_ERROR("input_strides has %u values for %u sizes", count, ndim);
        layout = LAYOUT_STRIDED;
    } else if (layout == LAYOUT_STRIDED) {
        FILE_ERROR("layout strided needs input_strides");
    }
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "output_strides"))) {
        snprintf(inner, sizeof inner, "%s.output_strides", where);
        if (read_int_array(field, out_strides, &count, path, inner, err, errlen)) return -1;
        if (count != ndim) FILE_ERROR("output_strides has %u values for %u sizes", count, ndim);
    }
    if (shape_init(&shape, class_name, ndim, sizes, axis, layout, in_strides, field ? out_strides : NULL, message,
                   sizeof message))
        FILE_ERROR("%s", message);
    if ((*id = sweep_add_shape(sweep, &shape)) == (size_t)-1) FILE_ERROR("out of memory");
    return 0;
}

static int read_entry(bench_sweep *sweep, const cJSON *object, const char *path, const char *where,
                      char *err, size_t errlen) {
    static const char *const axis_keys[AXIS_COUNT] = {"dtypes", "ops", "directions", "exclusive", "algos"};
    static const char *const other_keys[] = {"class", "shapes", "ladder", "output_dtype"};
    uint32_t masks[AXIS_COUNT] = {UINT32_C(1) << TSCAN_FLOAT32, UINT32_C(1) << TSCAN_OP_SUM,
                                  UINT32_C(1) << TSCAN_INCREASING, 1, axis_all(AXIS_ALGO)};
    const cJSON *item, *shapes, *ladder, *field;
    const char *class_name = "custom";
    size_t ids[MAX_ENTRY_SHAPES + MAX_LADDER_STEPS], count = 0;
    int64_t low, high;
    char inner[64];

    if (!cJSON_IsObject(object)) FILE_ERROR("expected an object");
    cJSON_ArrayForEach(item, object) {
        int known = 0;
        for (int a = 0; a < AXIS_COUNT; ++a)
            if (!strcmp(item->string, axis_keys[a])) {
                snprintf(inner, sizeof inner, "%s.%s", where, axis_keys[a]);
                if (read_axis(item, (sweep_axis)a, &masks[a], path, inner, err, errlen)) return -1;
                known = 1;
            }
        for (size_t k = 0; k < sizeof other_keys / sizeof other_keys[0]; ++k) known |= !strcmp(item->string, other_keys[k]);
        if (!known) FILE_ERROR("unknown key '%s'", item->string);
    }
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "class"))) {
        if (!cJSON_IsString(field)) FILE_ERROR("class must be a string");
        class_name = field->valuestring;
    }
    shapes = cJSON_GetObjectItemCaseSensitive(object, "shapes");
    ladder = cJSON_GetObjectItemCaseSensitive(object, "ladder");
    if (!shapes && !ladder) FILE_ERROR("an entry needs shapes or a ladder");
    if (shapes) {
        if (!cJSON_IsArray(shapes)) FILE_ERROR("shapes must be an array");
        cJSON_ArrayForEach(item, shapes) {
            if (count == MAX_ENTRY_SHAPES) FILE_ERROR("more than %d shapes in one entry", MAX_ENTRY_SHAPES);
            snprintf(inner, sizeof inner, "%s.shapes[%zu]", where, count);
            if (read_shape(sweep, item, class_name, &ids[count], path, inner, err, errlen)) return -1;
            ++count;
        }
    }
    if (ladder) {
        if (json_integer(cJSON_GetObjectItemCaseSensitive(ladder, "min_log2"), &low) ||
            json_integer(cJSON_GetObjectItemCaseSensitive(ladder, "max_log2"), &high) || low < 0 ||
            high >= MAX_LADDER_STEPS || low > high)
            FILE_ERROR("ladder needs {\"min_log2\": A, \"max_log2\": B}, integers with 0 <= A <= B <= %d",
                       MAX_LADDER_STEPS - 1);
        if (add_ladder(sweep, (int)low, (int)high, 1, ids, &count)) FILE_ERROR("out of memory");
    }
    if (sweep_add_entry(sweep, ids, count, masks)) FILE_ERROR("out of memory");
    if ((field = cJSON_GetObjectItemCaseSensitive(object, "output_dtype"))) {
        const int dtype = cJSON_IsString(field) ? parse_dtype_name(field->valuestring) : -1;
        if (dtype < 0) FILE_ERROR("output_dtype must be the name of a dtype");
        sweep->entries[sweep->entry_count - 1].output_dtype = dtype;
    }
    return 0;
}

int sweep_load_file(bench_sweep *sweep, const char *path, char *err, size_t errlen) {
    const char *where = "top level";
    FILE *file = fopen(path, "rb");
    char *text = NULL, inner[32];
    long length;
    cJSON *root = NULL;
    const cJSON *entries, *entry, *item;
    size_t index = 0;
    int result = -1;

    memset(sweep, 0, sizeof *sweep);
    if (!file) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fseek(file, 0, SEEK_END) == 0 && (length = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)length + 1)) && fread(text, 1, (size_t)length, file) == (size_t)length) {
        text[length] = '\0';
        root = cJSON_Parse(text);
        if (!root) snprintf(err, errlen, "%s: not valid JSON (near byte %td)", path, cJSON_GetErrorPtr() - text);
    } else {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    }
    fclose(file);
    free(text);
    if (!root) return -1;

    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: expected a JSON object with \"entries\"", path);
        goto done;
    }
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "entries") && strcmp(item->string, "format") && strcmp(item->string, "format_version")) {
            snprintf(err, errlen, "%s: top level: unknown key '%s'", path, item->string);
            goto done;
        }
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (item && (!cJSON_IsString(item) || strcmp(item->valuestring, "tscan-bench-sweep"))) {
        snprintf(err, errlen, "%s: format is not \"tscan-bench-sweep\"", path);
        goto done;
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "format_version");
    if (item && (!cJSON_IsNumber(item) || item->valueint != 1)) {
        snprintf(err, errlen, "%s: format_version is not 1", path);
        goto done;
    }
    entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!cJSON_IsArray(entries) || cJSON_GetArraySize(entries) == 0) {
        snprintf(err, errlen, "%s: %s: \"entries\" must be a non-empty array", path, where);
        goto done;
    }
    cJSON_ArrayForEach(entry, entries) {
        snprintf(inner, sizeof inner, "entries[%zu]", index++);
        if (read_entry(sweep, entry, path, inner, err, errlen)) goto done;
    }
    result = 0;
done:
    cJSON_Delete(root);
    if (result) sweep_free(sweep);
    return result;
}

/* ---- expansion ---------------------------------------------------------------------------- */

static void case_init(bench_case *c, const bench_sweep *sweep, size_t shape_id, int dtype, int out_dtype, int op,
                      int direction, int exclusive, int strategy) {
    char sizes[160], layout[192], dtypes[40];
    c->shape_id = shape_id;
    c->shape = &sweep->shapes[shape_id];
    c->dtype = (tscan_dtype)dtype;
    c->out_dtype = (tscan_dtype)(out_dtype >= 0 ? out_dtype : dtype);
    c->op = (tscan_op)op;
    c->direction = (tscan_direction)direction;
    c->exclusive = exclusive;
    c->strategy = strategy;
    shape_label(c->shape, sizes, sizeof sizes);
    layout_label(c->shape, layout, sizeof layout);
    /* A wider output shows in the name as "uint8->int32". */
    snprintf(dtypes, sizeof dtypes, "%s%s%s", tscan_dtype_name(c->dtype), c->out_dtype != c->dtype ? "->" : "",
             c->out_dtype != c->dtype ? tscan_dtype_name(c->out_dtype) : "");
    snprintf(c->name, sizeof c->name, "%s/%s/%s/axis%" PRIu32 "/%s/%s/%s/%s", tscan_op_name(c->op), dtypes, sizes, c->shape->axis, layout, direction_names[direction],
             exclusive_names[exclusive], strategy_name(strategy));
}

size_t case_key_length(const bench_case *c) { return strlen(c->name) - strlen(strategy_name(c->strategy)) - 1; }

static const bench_case *sort_base;

static int by_name(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int order = strcmp(sort_base[i].name, sort_base[j].name);
    return order ? order : (i > j) - (i < j);
}

/* Run order: cases that share an input and output buffers (shape, dtypes, op) together, then
 * those that share a reference (direction, exclusive), then the strategies. */
static int by_run_order(const void *a, const void *b) {
    const bench_case *x = a, *y = b;
    int64_t keys_x[] = {(int64_t)x->shape_id, x->dtype, x->out_dtype, x->op, x->direction, x->exclusive, x->strategy};
    int64_t keys_y[] = {(int64_t)y->shape_id, y->dtype, y->out_dtype, y->op, y->direction, y->exclusive, y->strategy};
    for (size_t k = 0; k < sizeof keys_x / sizeof keys_x[0]; ++k)
        if (keys_x[k] != keys_y[k]) return keys_x[k] < keys_y[k] ? -1 : 1;
    return 0;
}

int sweep_expand(const bench_sweep *sweep, int reference_backend, bench_case **cases, size_t *count) {
    size_t total = 0, n = 0, kept = 0, *order;
    bench_case *list;
    char *drop;

    for (size_t e = 0; e < sweep->entry_count; ++e) {
        const sweep_entry *entry = &sweep->entries[e];
        size_t per_shape = 1;
        for (int a = 0; a < AXIS_COUNT; ++a)
            if (!(reference_backend && a == AXIS_ALGO)) per_shape *= (size_t)__builtin_popcount(entry->masks[a]);
        total += per_shape * entry->shape_count;
    }
    list = malloc((total ? total : 1) * sizeof *list);
    if (!list) return -1;
    for (size_t e = 0; e < sweep->entry_count; ++e) {
        const sweep_entry *entry = &sweep->entries[e];
        uint32_t strategies = reference_backend ? UINT32_C(1) : entry->masks[AXIS_ALGO];
        for (size_t s = 0; s < entry->shape_count; ++s)
            for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt)
                for (int op = 0; op < TSCAN_OP_COUNT; ++op)
                    for (int dir = 0; dir < 2; ++dir)
                        for (int ex = 0; ex < 2; ++ex)
                            for (int st = 0; st < TSCAN_ALGO_COUNT; ++st) {
                                if (!(entry->masks[AXIS_DTYPE] >> dt & 1) || !(entry->masks[AXIS_OP] >> op & 1) ||
                                    !(entry->masks[AXIS_DIRECTION] >> dir & 1) ||
                                    !(entry->masks[AXIS_EXCLUSIVE] >> ex & 1) || !(strategies >> st & 1))
                                    continue;
                                case_init(&list[n++], sweep, entry->shape_ids[s], dt, entry->output_dtype, op, dir, ex,
                                          reference_backend ? STRATEGY_REFERENCE : st);
                            }
    }
    /* Drop repeated names, keeping the first occurrence (and so its entry's class). */
    order = malloc((n ? n : 1) * sizeof *order);
    drop = calloc(n ? n : 1, 1);
    if (!order || !drop) {
        free(order);
        free(drop);
        free(list);
        return -1;
    }
    for (size_t i = 0; i < n; ++i) order[i] = i;
    sort_base = list;
    qsort(order, n, sizeof *order, by_name);
    for (size_t i = 1; i < n; ++i)
        if (!strcmp(list[order[i]].name, list[order[i - 1]].name)) drop[order[i]] = 1;
    for (size_t i = 0; i < n; ++i)
        if (!drop[i]) list[kept++] = list[i];
    free(order);
    free(drop);
    qsort(list, kept, sizeof *list, by_run_order);
    *cases = list;
    *count = kept;
    return 0;
}
