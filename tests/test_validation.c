/*
 * test_validation.c - CONTRACT §2: every class of bad input through every entry point that
 * takes tensors (tscan_scan_reference, tscan_scan_workspace_size, tscan_scan,
 * tscan_scan_supported, tscan_scan_auto_algo) and through tscan_tensor_init. Each rejection
 * must give the right status and a fresh message naming the field and value, and leave every
 * byte of both buffers as it was. tscan_scan gets host buffers: it must reject before any
 * CUDA call, so these run without a GPU. Also the accepted edge cases (in place with the same
 * view, empty tensors, offset views), the names, the version and the thread-local message.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gpuutil.h"
#include "testutil.h"

/* ---- the entry points ------------------------------------------------------------------ */

typedef enum entry {
    ENTRY_REFERENCE,
    ENTRY_WORKSPACE_SIZE,
    ENTRY_SCAN,
    ENTRY_SUPPORTED,
    ENTRY_AUTO_ALGO,
    ENTRY_COUNT
} entry;

static const char *const entry_names[ENTRY_COUNT] = {
    "tscan_scan_reference", "tscan_scan_workspace_size", "tscan_scan", "tscan_scan_supported",
    "tscan_scan_auto_algo"};

typedef struct request {
    tscan_scan_desc desc;
    tscan_tensor in, out;
} request;

/* Calls entry e on r. tscan_scan gets `ws` (host memory: it must never be touched). */
static tscan_status call_entry(entry e, const request *r, void *ws, size_t ws_bytes) {
    size_t bytes = 0;
    tscan_algo algo = TSCAN_ALGO_AUTO;
    switch (e) {
    case ENTRY_REFERENCE: return tscan_scan_reference(&r->desc, &r->in, &r->out);
    case ENTRY_WORKSPACE_SIZE: return tscan_scan_workspace_size(&r->desc, &r->in, &r->out, &bytes);
    case ENTRY_SCAN: return tscan_scan(&r->desc, &r->in, &r->out, ws, ws_bytes, (cudaStream_t)0);
    case ENTRY_SUPPORTED: return tscan_scan_supported(&r->desc, &r->in, &r->out);
    case ENTRY_AUTO_ALGO: return tscan_scan_auto_algo(&r->desc, &r->in, &r->out, &algo);
    default: break;
    }
    cr_assert_fail("no entry %d", (int)e);
    return TSCAN_ERROR_INTERNAL;
}

/* ---- the fixture: a valid request over poisoned buffers --------------------------------- */

/* float32 {2,5,7}, sum along axis 1: distinct digits, so a message's value is recognisable. */
static const gu_shape fixture_shape = {3, {2, 5, 7}, 1};

typedef struct fixture {
    tu_layout l;
    request ok; /* valid: sum along axis 1, input and output packed in separate buffers */
} fixture;

static void fixture_make(fixture *f, tscan_dtype dtype, tu_layout_kind layout) {
    const tu_case c = gu_case(dtype, &fixture_shape, 0, layout, TU_DATA_SMALL_INT,
                              tu_seed("test_validation", (uint64_t)dtype));
    tu_layout_make(&f->l, &c);
    f->ok.desc = c.desc;
    f->ok.in = f->l.input;
    f->ok.out = f->l.output;
}

static void fixture_free(fixture *f) { tu_layout_free(&f->l); }

static void expect_buffers_unchanged(const fixture *f, const char *what, entry e) {
    cr_assert(memcmp(f->l.in_buf, f->l.in_init, f->l.in_bytes) == 0,
              "%s via %s wrote to the input buffer", what, entry_names[e]);
    cr_assert(memcmp(f->l.out_buf, f->l.out_init, f->l.out_bytes) == 0,
              "%s via %s wrote to the output buffer", what, entry_names[e]);
}

/* ---- messages ------------------------------------------------------------------------------ */

/* Case-insensitive strstr. */
static int contains(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* Whether msg contains one of the '|'-separated alternatives of `alts`. */
static int contains_any(const char *msg, const char *alts) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", alts);
    for (char *save = NULL, *tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save))
        if (contains(msg, tok))
            return 1;
    return 0;
}

/* Sets this thread's message to a known text (a failure of its own), returns a copy. */
static char primed[512];
static const char *prime_message(void) {
    int64_t size = 1;
    tscan_tensor t;
    cr_assert_eq(tscan_tensor_init(&t, NULL, (tscan_dtype)77, 1, &size, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT, "tscan_tensor_init accepted dtype 77");
    snprintf(primed, sizeof primed, "%s", tscan_last_error());
    cr_assert(primed[0] != '\0', "tscan_tensor_init(dtype 77) failed without a message");
    return primed;
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The message after a failure: new (not the primed one), and naming every needle. */
static void expect_message(const char *what, const char *via, const char *const *needles) {
    const char *msg = tscan_last_error();
    cr_assert(msg != NULL && msg[0] != '\0', "%s via %s: empty message", what, via);
    cr_assert(strcmp(msg, primed) != 0, "%s via %s: the message was not set (still \"%s\")", what,
              via, msg);
    for (const char *const *n = needles; n && *n; ++n)
        cr_assert(contains_any(msg, *n), "%s via %s: message \"%s\" does not name \"%s\"", what,
                  via, msg, *n);
}

#define ALL_ENTRIES ((1u << ENTRY_COUNT) - 1)

/* r must be refused with `want` by every entry point in the mask `entries`. */
static void expect_refused_by(const fixture *f, const request *r, unsigned entries,
                              tscan_status want, const char *what, const char *const *needles) {
    for (int e = 0; e < ENTRY_COUNT; ++e) {
        if (!(entries & (1u << e)))
            continue;
        prime_message();
        tscan_status s = call_entry((entry)e, r, NULL, 0);
        cr_assert_eq(s, want, "%s via %s: got %s, expected %s (\"%s\")", what, entry_names[e],
                     tscan_status_string(s), tscan_status_string(want), tscan_last_error());
        expect_message(what, entry_names[e], needles);
        expect_buffers_unchanged(f, what, (entry)e);
    }
}

static void expect_refused(const fixture *f, const request *r, tscan_status want,
                           const char *what, const char *const *needles) {
    expect_refused_by(f, r, ALL_ENTRIES, want, what, needles);
}

/* r must be accepted. The reference must succeed; the others must too, except that
 * tscan_scan never runs here on host memory, and without a device the queries may answer
 * TSCAN_ERROR_CUDA (they may need the device's properties), which only skips them. */
static void expect_accepted_by_queries(const fixture *f, const request *r, const char *what) {
    char reason[256];
    const int have_device = gu_device_available(reason, sizeof reason);
    for (int e = 0; e < ENTRY_COUNT; ++e) {
        if (e == ENTRY_REFERENCE || e == ENTRY_SCAN)
            continue;
        prime_message();
        tscan_status s = call_entry((entry)e, r, NULL, 0);
        if (s == TSCAN_ERROR_CUDA && !have_device)
            continue;
        cr_assert_eq(s, TSCAN_SUCCESS, "%s via %s: got %s (\"%s\")", what, entry_names[e],
                     tscan_status_string(s), tscan_last_error());
        cr_assert_str_eq(tscan_last_error(), primed,
                         "%s via %s: a success changed the message", what, entry_names[e]);
        expect_buffers_unchanged(f, what, (entry)e);
    }
}

/* ---- null pointers ------------------------------------------------------------------------- */

Test(validation, null_pointers) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    for (int e = 0; e < ENTRY_COUNT; ++e) {
        const char *via = entry_names[e];
        tscan_status s = TSCAN_SUCCESS;
        size_t bytes = 0;
        tscan_algo algo = TSCAN_ALGO_AUTO;
        const request *r = &f.ok;
        /* desc, input, output each NULL in turn */
        for (int which = 0; which < 3; ++which) {
            const tscan_scan_desc *d = which == 0 ? NULL : &r->desc;
            const tscan_tensor *in = which == 1 ? NULL : &r->in;
            const tscan_tensor *out = which == 2 ? NULL : &r->out;
            static const char *const names[3] = {"desc", "input", "output"};
            prime_message();
            switch ((entry)e) {
            case ENTRY_REFERENCE: s = tscan_scan_reference(d, in, out); break;
            case ENTRY_WORKSPACE_SIZE: s = tscan_scan_workspace_size(d, in, out, &bytes); break;
            case ENTRY_SCAN: s = tscan_scan(d, in, out, NULL, 0, (cudaStream_t)0); break;
            case ENTRY_SUPPORTED: s = tscan_scan_supported(d, in, out); break;
            case ENTRY_AUTO_ALGO: s = tscan_scan_auto_algo(d, in, out, &algo); break;
            default: break;
            }
            cr_assert_eq(s, TSCAN_ERROR_INVALID_ARGUMENT, "NULL %s via %s: got %s", names[which],
                         via, tscan_status_string(s));
            expect_message("NULL pointer", via, NEEDLES(names[which]));
            expect_buffers_unchanged(&f, names[which], (entry)e);
        }
    }
    /* the out-parameters */
    prime_message();
    cr_assert_eq(tscan_scan_workspace_size(&f.ok.desc, &f.ok.in, &f.ok.out, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("NULL bytes", "tscan_scan_workspace_size", NEEDLES("bytes"));
    prime_message();
    cr_assert_eq(tscan_scan_auto_algo(&f.ok.desc, &f.ok.in, &f.ok.out, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("NULL algo", "tscan_scan_auto_algo", NEEDLES("algo"));
    fixture_free(&f);
}

Test(validation, null_data_on_non_empty_tensor) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.in.data = NULL;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "NULL input data", NEEDLES("data|null", "input"));
    r = f.ok;
    r.out.data = NULL;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "NULL output data", NEEDLES("data|null", "output"));
    fixture_free(&f);
}

/* ---- shapes and enums ---------------------------------------------------------------------- */

Test(validation, ndim_out_of_range) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    static const uint32_t bad[] = {0, 9, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char value[16], what[64];
        snprintf(value, sizeof value, "%" PRIu32, bad[i]);
        snprintf(what, sizeof what, "ndim %s on both tensors", value);
        request r = f.ok;
        r.desc.axis = 0;
        r.in.ndim = r.out.ndim = bad[i];
        expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES("ndim", value));
        snprintf(what, sizeof what, "ndim %s on the output only", value);
        r = f.ok;
        r.out.ndim = bad[i];
        expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES("ndim"));
    }
    fixture_free(&f);
}

Test(validation, axis_out_of_range) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    static const uint32_t bad[] = {3, 4, 8, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char value[16], what[64];
        snprintf(value, sizeof value, "%" PRIu32, bad[i]);
        snprintf(what, sizeof what, "axis %s of a 3-d tensor", value);
        request r = f.ok;
        r.desc.axis = bad[i];
        expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES("axis", value));
    }
    fixture_free(&f);
}

Test(validation, negative_size) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.in.sizes[2] = r.out.sizes[2] = -3;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "size -3 on both", NEEDLES("size", "-3"));
    r = f.ok;
    r.in.sizes[1] = r.out.sizes[1] = INT64_MIN;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "size INT64_MIN on the axis",
                   NEEDLES("size", "-9223372036854775808"));
    r = f.ok;
    r.out.sizes[0] = -1;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "size -1 on the output", NEEDLES("size"));
    /* a negative size next to a zero one is still invalid, not an empty tensor */
    r = f.ok;
    r.in.sizes[0] = r.out.sizes[0] = 0;
    r.in.sizes[2] = r.out.sizes[2] = -5;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "size -5 beside a 0", NEEDLES("size", "-5"));
    fixture_free(&f);
}

Test(validation, enums_out_of_range) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    char value[32];
    request r = f.ok;

    r.in.dtype = r.out.dtype = TSCAN_DTYPE_COUNT;
    snprintf(value, sizeof value, "%d", (int)TSCAN_DTYPE_COUNT);
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "dtype TSCAN_DTYPE_COUNT", NEEDLES("dtype", value));
    r.in.dtype = r.out.dtype = (tscan_dtype)-1;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "dtype -1", NEEDLES("dtype"));

    r = f.ok;
    r.desc.op = TSCAN_OP_COUNT;
    snprintf(value, sizeof value, "%d", (int)TSCAN_OP_COUNT);
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "op TSCAN_OP_COUNT", NEEDLES("op", value));
    r.desc.op = (tscan_op)77;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "op 77", NEEDLES("op", "77"));

    r = f.ok;
    r.desc.direction = (tscan_direction)2;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "direction 2", NEEDLES("direction", "2"));
    r.desc.direction = (tscan_direction)-1;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "direction -1", NEEDLES("direction"));

    r = f.ok;
    r.desc.exclusive = 2;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "exclusive 2", NEEDLES("exclusive", "2"));
    r.desc.exclusive = -1;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "exclusive -1", NEEDLES("exclusive", "-1"));

    /* the reference validates algo too, though it ignores it (tscan_scan_auto_algo: below) */
    r = f.ok;
    r.desc.algo = TSCAN_ALGO_COUNT;
    snprintf(value, sizeof value, "%d", (int)TSCAN_ALGO_COUNT);
    const unsigned taking_algo = ALL_ENTRIES & ~(1u << ENTRY_AUTO_ALGO);
    expect_refused_by(&f, &r, taking_algo, TSCAN_ERROR_INVALID_ARGUMENT, "algo TSCAN_ALGO_COUNT",
                      NEEDLES("algo", value));
    r.desc.algo = (tscan_algo)-1;
    expect_refused_by(&f, &r, taking_algo, TSCAN_ERROR_INVALID_ARGUMENT, "algo -1", NEEDLES("algo"));
    fixture_free(&f);
}

/* CONTRACT §2 lists an algo out of range among the invalid inputs of every entry point;
 * tscan_scan_auto_algo, which does not use desc->algo, must still refuse a desc that holds
 * one, as tscan_scan_reference (which ignores it as well) does. */
Test(validation, auto_algo_refuses_algo_out_of_range) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    request r = f.ok;
    char value[32];
    r.desc.algo = TSCAN_ALGO_COUNT;
    snprintf(value, sizeof value, "%d", (int)TSCAN_ALGO_COUNT);
    expect_refused_by(&f, &r, 1u << ENTRY_AUTO_ALGO, TSCAN_ERROR_INVALID_ARGUMENT,
                      "algo TSCAN_ALGO_COUNT", NEEDLES("algo", value));
    fixture_free(&f);
}

/* ---- input and output must agree ------------------------------------------------------------ */

Test(validation, mismatched_tensors) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.out.dtype = TSCAN_INT32; /* same element size: only the type differs */
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "float32 input, int32 output",
                   NEEDLES("dtype", "int32|float32|8|0"));
    r.out.dtype = TSCAN_FLOAT16;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "float32 input, float16 output",
                   NEEDLES("dtype"));

    /* the same 70 elements seen as {10,7}: the numbers of elements agree, ndim does not */
    r = f.ok;
    r.desc.axis = 0;
    r.out.ndim = 2;
    r.out.sizes[0] = 10;
    r.out.sizes[1] = 7;
    r.out.sizes[2] = 0;
    r.out.strides[0] = 7;
    r.out.strides[1] = 1;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "3-d input, 2-d output", NEEDLES("ndim"));

    r = f.ok;
    r.out.sizes[2] = 6; /* {2,5,6} inside the packed {2,5,7} buffer */
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "sizes {2,5,7} and {2,5,6}",
                   NEEDLES("size", "6|7"));
    r = f.ok;
    r.in.sizes[1] = 4; /* on the axis */
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "sizes {2,4,7} and {2,5,7}",
                   NEEDLES("size", "4|5"));
    /* an empty input against a non-empty output is a mismatch, not an empty scan */
    r = f.ok;
    r.in.sizes[0] = 0;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "sizes {0,5,7} and {2,5,7}",
                   NEEDLES("size"));
    fixture_free(&f);
}

/* ---- alignment ---------------------------------------------------------------------------------- */

Test(validation, misaligned_data) {
    static const struct {
        tscan_dtype dtype;
        int offset; /* bytes */
    } bad[] = {{TSCAN_FLOAT32, 1}, {TSCAN_FLOAT32, 2}, {TSCAN_FLOAT16, 1}, {TSCAN_BFLOAT16, 1},
               {TSCAN_FLOAT64, 4}, {TSCAN_INT64, 4},   {TSCAN_UINT64, 2},  {TSCAN_INT32, 3},
               {TSCAN_UINT16, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        fixture f;
        fixture_make(&f, bad[i].dtype, TU_LAYOUT_PACKED);
        char what[96];
        request r = f.ok;
        r.in.data = (char *)r.in.data + bad[i].offset;
        snprintf(what, sizeof what, "%s input %d bytes off alignment", tscan_dtype_name(bad[i].dtype),
                 bad[i].offset);
        expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES("align", "input"));
        r = f.ok;
        r.out.data = (char *)r.out.data + bad[i].offset;
        snprintf(what, sizeof what, "%s output %d bytes off alignment",
                 tscan_dtype_name(bad[i].dtype), bad[i].offset);
        expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES("align", "output"));
        fixture_free(&f);
    }
}

/* Alignment to the element size is all that may be asked: views at every element offset of
 * a buffer, and int8 at odd addresses, scan correctly through the reference. */
Test(validation, element_alignment_is_enough) {
    for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt) {
        const size_t elem = tscan_dtype_size((tscan_dtype)dt);
        for (int shift = 0; shift < 4; ++shift) {
            fixture f;
            fixture_make(&f, (tscan_dtype)dt, TU_LAYOUT_PACKED);
            request r = f.ok;
            /* move both views by `shift` elements: inside the 8 elements of slack */
            r.in.data = (char *)r.in.data + (size_t)shift * elem;
            r.out.data = (char *)r.out.data + (size_t)shift * elem;
            expect_accepted_by_queries(&f, &r, "a view shifted by whole elements");
            cr_assert_eq(tscan_scan_reference(&r.desc, &r.in, &r.out), TSCAN_SUCCESS,
                         "%s view shifted by %d elements: %s", tscan_dtype_name((tscan_dtype)dt),
                         shift, tscan_last_error());
            fixture_free(&f);
        }
    }
}

/* ---- overlap --------------------------------------------------------------------------------- */

Test(validation, output_overlaps_itself) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    /* each stays inside the packed extent of the output buffer (70 elements) */
    static const struct {
        int64_t strides[3];
        int64_t data_offset; /* elements from the packed view's start */
        const char *what;
    } bad[] = {
        {{35, 0, 1}, 0, "stride 0 on dimension 1 (size 5)"},
        {{35, 7, 0}, 0, "stride 0 on dimension 2 (size 7), the innermost"},
        {{0, 7, 1}, 0, "stride 0 on dimension 0 (size 2)"},
        {{35, 3, 1}, 0, "strides {35,3,1}: (0,1,0) and (0,0,3) share an address"},
        {{35, -3, 1}, 12, "strides {35,-3,1}: (0,1,3) and (0,0,0) share an address"},
        {{1, 7, 1}, 0, "strides {1,7,1}: (1,0,0) and (0,0,1) share an address"},
        {{-7, 7, 1}, 7, "strides {-7,7,1}: (1,1,0) and (0,0,0) share an address"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        request r = f.ok;
        memcpy(r.out.strides, bad[i].strides, sizeof bad[i].strides);
        r.out.data = (float *)f.ok.out.data + bad[i].data_offset;
        expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, bad[i].what, NEEDLES("output", "stride"));
        /* the axis does not matter */
        r.desc.axis = 2;
        expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, bad[i].what, NEEDLES("output", "stride"));
    }
    fixture_free(&f);
}

/* What is not an overlap: a stride 0 on a size-1 dimension, a broadcast input, strides that
 * interleave without collision, and rows padded apart. */
Test(validation, output_layouts_that_do_not_overlap) {
    static const struct {
        int64_t sizes[3];
        int64_t strides[3];
        int64_t data_offset;
        const char *what;
    } ok[] = {
        {{1, 5, 7}, {0, 7, 1}, 0, "stride 0 on a size-1 dimension"},
        {{2, 5, 7}, {1, 2, 10}, 0, "strides {1,2,10}: every index its own address"},
        {{2, 5, 7}, {35, -7, 1}, 28, "a negative stride"},
        {{2, 5, 7}, {-1, -2, -10}, 69, "all strides negative and interleaved"},
        {{2, 3, 2}, {12, 2, 3}, 0, "strides {12,2,3}: 2i+3j never repeats for i<3, j<2"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
        fixture f;
        fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
        request r = f.ok;
        memcpy(r.in.sizes, ok[i].sizes, sizeof ok[i].sizes);
        memcpy(r.out.sizes, ok[i].sizes, sizeof ok[i].sizes);
        memcpy(r.out.strides, ok[i].strides, sizeof ok[i].strides);
        r.out.data = (float *)f.ok.out.data + ok[i].data_offset;
        expect_accepted_by_queries(&f, &r, ok[i].what);
        cr_assert_eq(tscan_scan_reference(&r.desc, &r.in, &r.out), TSCAN_SUCCESS, "%s: %s",
                     ok[i].what, tscan_last_error());
        fixture_free(&f);
    }
}

Test(validation, input_and_output_overlap) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    const request base = f.ok;
    request r;
    float *in0 = base.in.data;

    /* the output is the input's view moved by one element, either way (inside the slack) */
    for (int shift = -1; shift <= 1; shift += 2) {
        r = base;
        r.out = r.in;
        r.out.data = in0 + shift;
        expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "output = input moved by one element",
                       NEEDLES("input", "output"));
    }
    /* the same data, other strides: a transposed view of the same 70 elements */
    r = base;
    r.out = r.in;
    r.out.strides[0] = 1;
    r.out.strides[1] = 2;
    r.out.strides[2] = 10;
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "same data, strides {1,2,10}", NEEDLES("input", "output"));
    /* the same elements in the opposite order along one dimension */
    r = base;
    r.out = tu_view_reversed(&r.in, 2);
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "output = input reversed along dimension 2",
                   NEEDLES("input", "output"));
    r.out = tu_view_reversed(&r.in, 1);
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "output = input reversed along the axis",
                   NEEDLES("input", "output"));
    /* one element in common: output {1,1,7} starting on the input's last element */
    r = base;
    r.out = r.in;
    r.out.data = in0 + 69;
    r.out.sizes[0] = r.in.sizes[0] = 1;
    r.out.sizes[1] = r.in.sizes[1] = 1;
    r.out.sizes[2] = r.in.sizes[2] = 7;
    r.in.data = in0 + 63;
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "output starts on the input's last element",
                   NEEDLES("input", "output"));
    /* a broadcast input reading the output's memory */
    r = base;
    r.in.data = base.out.data;
    r.in.strides[0] = 0;
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "broadcast input over the output's elements",
                   NEEDLES("input", "output"));
    fixture_free(&f);
}

/* ---- wider outputs ------------------------------------------------------------------------------ */

/* Every pair outside the allowed list (narrowing, integer into float, float into integer,
 * float16 and bfloat16 into each other) is refused by every entry point, naming both types. */
Test(validation, pairs_outside_the_list_refused_naming_both_types) {
    int refused = 0;
    for (int in = 0; in < TSCAN_DTYPE_COUNT; ++in) {
        fixture f;
        fixture_make(&f, (tscan_dtype)in, TU_LAYOUT_PACKED);
        for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out) {
            if (tscan_output_dtype_allowed((tscan_dtype)in, (tscan_dtype)out))
                continue;
            request r = f.ok;
            char what[64], in_needle[48], out_needle[48];
            r.out.dtype = (tscan_dtype)out;
            snprintf(what, sizeof what, "%s into %s", tscan_dtype_name((tscan_dtype)in),
                     tscan_dtype_name((tscan_dtype)out));
            snprintf(in_needle, sizeof in_needle, "input.dtype %s", tscan_dtype_name((tscan_dtype)in));
            snprintf(out_needle, sizeof out_needle, "output.dtype %s", tscan_dtype_name((tscan_dtype)out));
            expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, what, NEEDLES(in_needle, out_needle));
            ++refused;
        }
        fixture_free(&f);
    }
    cr_assert_eq(refused, 144 - 49, "every pair but the 49 allowed ones");
}

/* Every allowed pair of two types is accepted by the queries and the reference, on a layout of
 * its own (permuted: input and output strides differ). */
Test(validation, wider_pairs_accepted) {
    for (int in = 0; in < TSCAN_DTYPE_COUNT; ++in)
        for (int out = 0; out < TSCAN_DTYPE_COUNT; ++out) {
            if (in == out || !tscan_output_dtype_allowed((tscan_dtype)in, (tscan_dtype)out))
                continue;
            tu_case c = gu_case((tscan_dtype)in, &fixture_shape, 0, TU_LAYOUT_PERMUTED, TU_DATA_SMALL_INT,
                                tu_seed("wider_pairs_accepted", (uint64_t)(in * TSCAN_DTYPE_COUNT + out)));
            c.wider = 1;
            c.wider_dtype = (tscan_dtype)out;
            fixture f;
            tu_layout_make(&f.l, &c);
            f.ok.desc = c.desc;
            f.ok.in = f.l.input;
            f.ok.out = f.l.output;
            char what[64];
            snprintf(what, sizeof what, "%s into %s", tscan_dtype_name((tscan_dtype)in),
                     tscan_dtype_name((tscan_dtype)out));
            expect_accepted_by_queries(&f, &f.ok, what);
            cr_assert_eq(tscan_scan_reference(&f.ok.desc, &f.ok.in, &f.ok.out), TSCAN_SUCCESS, "%s: %s", what,
                         tscan_last_error());
            fixture_free(&f);
        }
}

/* Different types never share memory: the same data is not in place but an overlap, and the
 * exact check compares byte ranges of two widths, not addresses. */
Test(validation, wider_output_sharing_memory_is_an_overlap) {
    fixture f;
    fixture_make(&f, TSCAN_INT8, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.out = r.in;
    r.out.dtype = TSCAN_INT16;
    r.out.data = (char *)r.in.data - (uintptr_t)r.in.data % 2; /* aligned for int16, inside the slack */
    expect_refused(&f, &r, TSCAN_ERROR_OVERLAP, "int8 into int16 on the same bytes",
                   NEEDLES("input", "output", "dtype"));
    fixture_free(&f);

    /* one buffer: int8 elements at bytes 0, 4, 8, 12 and int16 ones 4 bytes apart */
    _Alignas(8) unsigned char buf[32];
    memset(buf, 0, sizeof buf);
    const int64_t size = 4, in_stride = 4, out_stride = 2;
    tscan_tensor in, out;
    tscan_scan_desc d = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_tensor_init(&in, buf, TSCAN_INT8, 1, &size, &in_stride), TSCAN_SUCCESS);
    for (int k = 0; k < 4; ++k)
        buf[4 * k] = (unsigned char)(k + 1);
    /* at bytes 2-3, 6-7, ...: interleaved, no byte shared */
    cr_assert_eq(tscan_tensor_init(&out, buf + 2, TSCAN_INT16, 1, &size, &out_stride), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_SUCCESS, "interleaved: %s", tscan_last_error());
    int16_t sums[4];
    for (int k = 0; k < 4; ++k)
        memcpy(&sums[k], buf + 2 + 4 * k, 2);
    cr_assert(sums[0] == 1 && sums[1] == 3 && sums[2] == 6 && sums[3] == 10, "interleaved sums %d %d %d %d",
              sums[0], sums[1], sums[2], sums[3]);
    /* at bytes 0-1, 4-5, ...: each int16 covers an int8 of the input */
    cr_assert_eq(tscan_tensor_init(&out, buf, TSCAN_INT16, 1, &size, &out_stride), TSCAN_SUCCESS);
    prime_message();
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_ERROR_OVERLAP);
    expect_message("int16 elements over the int8 ones", "tscan_scan_reference", NEEDLES("input", "output"));
    /* at bytes 12-13, ...: the first int16 over the last int8, from its own start */
    cr_assert_eq(tscan_tensor_init(&out, buf + 12, TSCAN_INT16, 1, &size, &out_stride), TSCAN_SUCCESS);
    prime_message();
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_ERROR_OVERLAP);
    /* at bytes 14-15, ...: past the input's last byte */
    cr_assert_eq(tscan_tensor_init(&out, buf + 14, TSCAN_INT16, 1, &size, &out_stride), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_SUCCESS, "after the input: %s", tscan_last_error());
}

/* In place with the very same view is accepted, whatever the strides; disjoint parts of one
 * buffer are accepted too. */
Test(validation, in_place_same_view_accepted) {
    for (int dt = 0; dt < TSCAN_DTYPE_COUNT; ++dt) {
        fixture f;
        fixture_make(&f, (tscan_dtype)dt, TU_LAYOUT_IN_PLACE); /* permuted, padded, negated */
        cr_assert(f.l.in_buf == f.l.out_buf);
        expect_accepted_by_queries(&f, &f.ok, "in place, the same view");
        unsigned char *expected = tu_layout_expected(&f.l);
        cr_assert_eq(tscan_scan_reference(&f.ok.desc, &f.ok.in, &f.ok.out), TSCAN_SUCCESS,
                     "%s in place: %s", tscan_dtype_name((tscan_dtype)dt), tscan_last_error());
        char msg[1024];
        cr_assert(tu_check_output(&f.l, f.l.out_buf, expected, 0.0, msg, sizeof msg), "%s", msg);
        free(expected);
        fixture_free(&f);
    }
}

Test(validation, disjoint_parts_of_one_buffer_accepted) {
    float buf[8 + 16 + 8];
    memset(buf, 0, sizeof buf);
    for (int k = 0; k < 8; ++k)
        buf[8 + k] = (float)(k + 1);
    const int64_t size = 8;
    tscan_tensor in, out;
    tscan_scan_desc d = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    cr_assert_eq(tscan_tensor_init(&in, buf + 8, TSCAN_FLOAT32, 1, &size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_tensor_init(&out, buf + 16, TSCAN_FLOAT32, 1, &size, NULL), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_SUCCESS, "%s", tscan_last_error());
    for (int k = 0; k < 8; ++k)
        cr_assert_eq(buf[16 + k], (float)((k + 1) * (k + 2) / 2), "element %d", k);
    /* and the output just before the input, backwards */
    const int64_t back = -1;
    cr_assert_eq(tscan_tensor_init(&out, buf + 7, TSCAN_FLOAT32, 1, &size, &back), TSCAN_SUCCESS);
    cr_assert_eq(tscan_scan_reference(&d, &in, &out), TSCAN_SUCCESS, "%s", tscan_last_error());
    cr_assert_eq(buf[7], 1.0f);
    cr_assert_eq(buf[0], 36.0f);
}

/* ---- empty tensors ---------------------------------------------------------------------------- */

Test(validation, empty_tensors) {
    for (int zero_dim = 0; zero_dim < 3; ++zero_dim) {
        for (int null_data = 0; null_data < 2; ++null_data) {
            fixture f;
            fixture_make(&f, TSCAN_INT16, TU_LAYOUT_PACKED);
            request r = f.ok;
            char what[96];
            r.in.sizes[zero_dim] = r.out.sizes[zero_dim] = 0;
            if (null_data)
                r.in.data = r.out.data = NULL;
            snprintf(what, sizeof what, "size 0 on dimension %d%s", zero_dim,
                     null_data ? ", NULL data" : "");
            for (int e = 0; e < ENTRY_COUNT; ++e) {
                size_t ws_bytes = 0;
                prime_message();
                if (e == ENTRY_SCAN) {
                    /* with whatever workspace the query asks for (host memory: never touched) */
                    tscan_status q = tscan_scan_workspace_size(&r.desc, &r.in, &r.out, &ws_bytes);
                    cr_assert_eq(q, TSCAN_SUCCESS, "%s: workspace query %s (%s)", what,
                                 tscan_status_string(q), tscan_last_error());
                }
                void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
                tscan_status s = call_entry((entry)e, &r, ws, ws_bytes);
                free(ws);
                cr_assert_eq(s, TSCAN_SUCCESS, "%s via %s: %s (%s)", what, entry_names[e],
                             tscan_status_string(s), tscan_last_error());
                cr_assert_str_eq(tscan_last_error(), primed,
                                 "%s via %s: a success changed the message", what, entry_names[e]);
                expect_buffers_unchanged(&f, what, (entry)e);
            }
            fixture_free(&f);
        }
    }
}

/* Empty or not, the request is still validated. */
Test(validation, empty_tensors_still_validated) {
    fixture f;
    fixture_make(&f, TSCAN_INT16, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.in.sizes[0] = r.out.sizes[0] = 0;
    r.desc.axis = 3;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "empty, axis 3", NEEDLES("axis", "3"));
    r.desc.axis = 1;
    r.out.dtype = TSCAN_INT8;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "empty, int16 into int8", NEEDLES("dtype"));
    r.out.dtype = TSCAN_INT16;
    r.desc.op = (tscan_op)5;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "empty, op 5", NEEDLES("op", "5"));
    r.desc.op = TSCAN_OP_SUM;
    r.in.ndim = r.out.ndim = 9;
    expect_refused(&f, &r, TSCAN_ERROR_INVALID_ARGUMENT, "empty, ndim 9", NEEDLES("ndim", "9"));
    fixture_free(&f);
}

/* ---- workspace -------------------------------------------------------------------------------- */

/* A workspace smaller than the query said is refused before anything runs. Host buffers: the
 * library must stop at the size check. Needs a request for which some strategy asks for a
 * workspace; without a device the query may be unable to answer, and the test skips. */
Test(validation, workspace_too_small) {
    static const gu_shape shapes[] = {
        {1, {100000}, 0}, {2, {100000, 3}, 0}, {2, {5000, 300}, 0}, {2, {300, 5000}, 1}};
    char tried[1024] = "";
    size_t used = 0;
    int checked = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const tu_case c = gu_case(TSCAN_FLOAT32, &shapes[i], 0, TU_LAYOUT_PACKED, TU_DATA_SMALL_INT, i);
        fixture f;
        tu_layout_make(&f.l, &c);
        f.ok.desc = c.desc;
        f.ok.in = f.l.input;
        f.ok.out = f.l.output;
        for (int algo = 0; algo < TSCAN_ALGO_COUNT; ++algo) {
            request r = f.ok;
            size_t bytes = 0;
            r.desc.algo = (tscan_algo)algo;
            tscan_status q = tscan_scan_workspace_size(&r.desc, &r.in, &r.out, &bytes);
            if (used < sizeof tried)
                used += (size_t)snprintf(tried + used, sizeof tried - used, "%s%s shape %zu: %s %zu",
                                         used ? "; " : "", tscan_algo_name((tscan_algo)algo), i,
                                         tscan_status_string(q), bytes);
            if (q != TSCAN_SUCCESS || bytes == 0)
                continue;
            void *ws = malloc(bytes);
            memset(ws, 0x3C, bytes);
            for (int variant = 0; variant < 2; ++variant) {
                size_t given = variant == 0 ? bytes - 1 : 0;
                char value[32];
                snprintf(value, sizeof value, "%zu", given);
                prime_message();
                tscan_status s = tscan_scan(&r.desc, &r.in, &r.out, variant == 0 ? ws : NULL,
                                            given, (cudaStream_t)0);
                cr_assert_eq(s, TSCAN_ERROR_WORKSPACE,
                             "%s, %zu of %zu workspace bytes: got %s (\"%s\")",
                             tscan_algo_name((tscan_algo)algo), given, bytes,
                             tscan_status_string(s), tscan_last_error());
                expect_message("workspace too small", "tscan_scan", NEEDLES("workspace", value));
                expect_buffers_unchanged(&f, "workspace too small", ENTRY_SCAN);
            }
            for (size_t b = 0; b < bytes; ++b)
                cr_assert_eq(((unsigned char *)ws)[b], 0x3C, "the refused scan wrote its workspace");
            free(ws);
            ++checked;
        }
        fixture_free(&f);
    }
    if (!checked)
        cr_skip_test("no strategy asked for a workspace here, so none can be too small (%s)", tried);
    cr_log_info("workspace queries: %s", tried);
}

/* ---- tscan_tensor_init's own checks -------------------------------------------------------------- */

Test(validation, tensor_init) {
    int64_t sizes[TSCAN_MAX_DIMS + 1] = {2, 3, 4, 1, 1, 1, 1, 2, 1};
    const int64_t strides[3] = {-12, 0, 3};
    float buf[4];
    tscan_tensor t;

    prime_message();
    cr_assert_eq(tscan_tensor_init(NULL, buf, TSCAN_FLOAT32, 3, sizes, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("NULL tensor", "tscan_tensor_init", NULL);
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT32, 3, NULL, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("NULL sizes", "tscan_tensor_init", NEEDLES("sizes"));
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT32, 0, sizes, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("ndim 0", "tscan_tensor_init", NEEDLES("ndim", "0"));
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT32, 9, sizes, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("ndim 9", "tscan_tensor_init", NEEDLES("ndim", "9"));
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_DTYPE_COUNT, 3, sizes, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("dtype 12", "tscan_tensor_init", NEEDLES("dtype", "12"));
    sizes[1] = -7;
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT32, 3, sizes, NULL),
                 TSCAN_ERROR_INVALID_ARGUMENT);
    expect_message("size -7", "tscan_tensor_init", NEEDLES("size", "-7"));
    sizes[1] = 3;

    /* accepted: data is checked only when the tensor is used; strides are copied */
    prime_message();
    cr_assert_eq(tscan_tensor_init(&t, NULL, TSCAN_UINT8, 3, sizes, strides), TSCAN_SUCCESS, "%s",
                 tscan_last_error());
    cr_assert_str_eq(tscan_last_error(), primed, "a success changed the message");
    cr_assert_eq(t.data, NULL);
    cr_assert_eq(t.dtype, TSCAN_UINT8);
    cr_assert_eq(t.ndim, 3u);
    for (int d = 0; d < 3; ++d) {
        cr_assert_eq(t.sizes[d], sizes[d]);
        cr_assert_eq(t.strides[d], strides[d]);
    }
    /* packed row-major, 8 dimensions */
    cr_assert_eq(tscan_tensor_init(&t, buf, TSCAN_FLOAT64, 8, sizes, NULL), TSCAN_SUCCESS);
    cr_assert_eq(t.ndim, 8u);
    for (int d = 0; d < 8; ++d) {
        int64_t expect = 1;
        for (int e = d + 1; e < 8; ++e)
            expect *= sizes[e];
        cr_assert_eq(t.strides[d], expect, "packed stride %d is %" PRId64 ", expected %" PRId64, d,
                     t.strides[d], expect);
    }
    /* sizes of 0 are valid */
    sizes[0] = 0;
    cr_assert_eq(tscan_tensor_init(&t, NULL, TSCAN_INT8, 3, sizes, NULL), TSCAN_SUCCESS, "%s",
                 tscan_last_error());
    cr_assert_eq(t.sizes[0], 0);
}

/* ---- names, sizes, version ---------------------------------------------------------------------- */

Test(validation, status_strings) {
    static const char *const names[] = {"TSCAN_SUCCESS",          "TSCAN_ERROR_INVALID_ARGUMENT",
                                        "TSCAN_ERROR_OVERLAP",    "TSCAN_ERROR_NOT_SUPPORTED",
                                        "TSCAN_ERROR_WORKSPACE",  "TSCAN_ERROR_CUDA",
                                        "TSCAN_ERROR_INTERNAL"};
    static const tscan_status values[] = {TSCAN_SUCCESS,          TSCAN_ERROR_INVALID_ARGUMENT,
                                          TSCAN_ERROR_OVERLAP,    TSCAN_ERROR_NOT_SUPPORTED,
                                          TSCAN_ERROR_WORKSPACE,  TSCAN_ERROR_CUDA,
                                          TSCAN_ERROR_INTERNAL};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
        const char *s = tscan_status_string(values[i]);
        cr_assert(s != NULL, "status %d has no string", (int)values[i]);
        cr_assert_str_eq(s, names[i]);
        for (size_t j = 0; j < i; ++j)
            cr_assert_neq(values[i], values[j], "%s and %s share a value", names[i], names[j]);
    }
    static const int out_of_range[] = {7, 8, 100, -1, 0x7fffffff};
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; ++i) {
        const char *s = tscan_status_string((tscan_status)out_of_range[i]);
        cr_assert(s != NULL, "status %d gives NULL", out_of_range[i]);
        cr_assert_str_eq(s, "unknown status", "status %d", out_of_range[i]);
    }
}

Test(validation, dtype_algo_op_names) {
    static const char *const dtypes[TSCAN_DTYPE_COUNT] = {
        "float32", "float16", "bfloat16", "float64", "int8",   "uint8",
        "int16",   "uint16",  "int32",    "uint32",  "int64", "uint64"};
    static const size_t sizes[TSCAN_DTYPE_COUNT] = {4, 2, 2, 8, 1, 1, 2, 2, 4, 4, 8, 8};
    for (int i = 0; i < TSCAN_DTYPE_COUNT; ++i) {
        cr_assert(tscan_dtype_name((tscan_dtype)i) != NULL, "dtype %d", i);
        cr_assert_str_eq(tscan_dtype_name((tscan_dtype)i), dtypes[i], "dtype %d", i);
        cr_assert_eq(tscan_dtype_size((tscan_dtype)i), sizes[i], "dtype %d", i);
    }
    static const int bad[] = {TSCAN_DTYPE_COUNT, TSCAN_DTYPE_COUNT + 1, 1000, -1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cr_assert_null(tscan_dtype_name((tscan_dtype)bad[i]), "dtype %d has a name", bad[i]);
        cr_assert_eq(tscan_dtype_size((tscan_dtype)bad[i]), 0, "dtype %d has a size", bad[i]);
    }

    static const char *const algos[] = {"auto", "cub_device", "rows", "columns", "lookback", "stream"};
    static const tscan_algo algo_values[] = {TSCAN_ALGO_AUTO, TSCAN_ALGO_CUB_DEVICE, TSCAN_ALGO_ROWS,
                                             TSCAN_ALGO_COLUMNS, TSCAN_ALGO_LOOKBACK, TSCAN_ALGO_STREAM};
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; ++i) {
        cr_assert(tscan_algo_name(algo_values[i]) != NULL, "algo %s", algos[i]);
        cr_assert_str_eq(tscan_algo_name(algo_values[i]), algos[i]);
    }
    for (int a = 0; a < TSCAN_ALGO_COUNT; ++a) {
        const char *name = tscan_algo_name((tscan_algo)a);
        cr_assert(name != NULL && name[0] != '\0', "algo %d has no name", a);
        for (int b = 0; b < a; ++b)
            cr_assert_str_neq(name, tscan_algo_name((tscan_algo)b), "algos %d and %d share a name", a, b);
    }
    cr_assert_null(tscan_algo_name(TSCAN_ALGO_COUNT));
    cr_assert_null(tscan_algo_name((tscan_algo)-1));
    cr_assert_null(tscan_algo_name((tscan_algo)99));

    cr_assert_str_eq(tscan_op_name(TSCAN_OP_SUM), "sum");
    cr_assert_str_eq(tscan_op_name(TSCAN_OP_PROD), "prod");
    cr_assert_null(tscan_op_name(TSCAN_OP_COUNT));
    cr_assert_null(tscan_op_name((tscan_op)-1));
}

Test(validation, version) {
    char want[64];
    cr_assert_eq(TSCAN_VERSION, TSCAN_VERSION_MAJOR * 10000 + TSCAN_VERSION_MINOR * 100 + TSCAN_VERSION_PATCH);
    cr_assert_eq(tscan_version(), TSCAN_VERSION, "library %d, header %d", tscan_version(), TSCAN_VERSION);
    snprintf(want, sizeof want, "%d.%d.%d", TSCAN_VERSION_MAJOR, TSCAN_VERSION_MINOR, TSCAN_VERSION_PATCH);
    cr_assert(tscan_version_string() != NULL);
    cr_assert_str_eq(tscan_version_string(), want);
}

/* ---- the message is per thread ----------------------------------------------------------------- */

typedef struct thread_result {
    char initial[512];   /* the new thread's message before any failure */
    tscan_status status; /* of its own failure */
    char after[512];     /* its message after that failure */
} thread_result;

static void *fail_on_other_thread(void *arg) {
    thread_result *res = arg;
    int32_t x[3] = {0};
    const int64_t size = 3;
    tscan_tensor t;
    tscan_scan_desc d = {TSCAN_OP_SUM, 6, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    snprintf(res->initial, sizeof res->initial, "%s", tscan_last_error());
    (void)tscan_tensor_init(&t, x, TSCAN_INT32, 1, &size, NULL);
    res->status = tscan_scan_reference(&d, &t, &t);
    snprintf(res->after, sizeof res->after, "%s", tscan_last_error());
    return NULL;
}

Test(validation, last_error_is_thread_local) {
    fixture f;
    fixture_make(&f, TSCAN_FLOAT32, TU_LAYOUT_PACKED);
    request r = f.ok;
    r.desc.exclusive = 3;
    cr_assert_eq(tscan_scan_reference(&r.desc, &r.in, &r.out), TSCAN_ERROR_INVALID_ARGUMENT);
    char mine[512];
    snprintf(mine, sizeof mine, "%s", tscan_last_error());
    cr_assert(contains(mine, "exclusive"), "\"%s\"", mine);

    thread_result res;
    memset(&res, 0, sizeof res);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, fail_on_other_thread, &res), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);

    cr_assert_str_eq(res.initial, "", "a new thread starts with \"%s\", not \"\"", res.initial);
    cr_assert_eq(res.status, TSCAN_ERROR_INVALID_ARGUMENT);
    cr_assert(contains(res.after, "axis") && contains(res.after, "6"),
              "the other thread's message \"%s\"", res.after);
    cr_assert_str_eq(tscan_last_error(), mine,
                     "another thread's failure changed this thread's message to \"%s\"",
                     tscan_last_error());

    /* a success leaves the message as it was */
    cr_assert_eq(tscan_scan_reference(&f.ok.desc, &f.ok.in, &f.ok.out), TSCAN_SUCCESS);
    cr_assert_str_eq(tscan_last_error(), mine);
    fixture_free(&f);
}
