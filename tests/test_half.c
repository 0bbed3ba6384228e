/*
 * test_half.c - the float16 / bfloat16 conversions of src/half.c: every 16-bit pattern
 * widens exactly and round-trips, narrowing rounds ties to even everywhere (subnormals,
 * overflow, the largest finite values), and random float32 values narrow as an independent
 * computation in double arithmetic says.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "testutil.h"

static uint32_t bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float float_of(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A 16-bit float format: fraction bits and exponent bias. */
typedef struct format16 {
    const char *name;
    int fraction_bits;
    int bias;
    float (*widen)(uint16_t);
    uint16_t (*narrow)(float);
} format16;

static const format16 half_format = {"float16", 10, 15, tscan_half_to_float, tscan_float_to_half};
static const format16 bfloat_format = {"bfloat16", 7, 127, tscan_bfloat16_to_float, tscan_float_to_bfloat16};

static int exponent_field(const format16 *f, uint16_t p) {
    return (p & 0x7fff) >> f->fraction_bits;
}
static int exponent_all_ones(const format16 *f) { return (1 << (15 - f->fraction_bits)) - 1; }
static uint16_t fraction_field(const format16 *f, uint16_t p) {
    return p & ((1u << f->fraction_bits) - 1);
}
static uint16_t quiet_bit(const format16 *f) { return (uint16_t)(1u << (f->fraction_bits - 1)); }

/* |value| of a pattern by the IEEE definition, in double; the all-ones exponent reads as
 * the next binade (2^(emax+1)), the value one step past the largest finite. */
static double magnitude(const format16 *f, uint16_t p) {
    int e = exponent_field(f, p);
    double fraction = fraction_field(f, p);
    if (e == 0)
        return ldexp(fraction, 1 - f->bias - f->fraction_bits);
    return ldexp(fraction + ldexp(1.0, f->fraction_bits), e - f->bias - f->fraction_bits);
}

static uint16_t max_finite(const format16 *f) {
    return (uint16_t)(((exponent_all_ones(f) - 1) << f->fraction_bits) | ((1u << f->fraction_bits) - 1));
}

/* Independent narrowing: scale by the quantum of |v|'s binade (never below the subnormal
 * quantum), round with nearbyint (ties to even in the default mode), and compare with the
 * largest finite value. Returns the rounded value, or ±inf on overflow. */
static double narrow_in_double(const format16 *f, float v) {
    double a = fabs((double)v);
    if (a == 0.0)
        return v;
    int e;
    frexp(a, &e); /* a = m·2^e, m in [0.5, 1): binade 2^(e-1) */
    int quantum_exp = (e - 1 > 1 - f->bias ? e - 1 : 1 - f->bias) - f->fraction_bits;
    double r = ldexp(nearbyint(ldexp(a, -quantum_exp)), quantum_exp);
    if (r > magnitude(f, max_finite(f)))
        r = INFINITY;
    return signbit(v) ? -r : r;
}

static void check_every_pattern(const format16 *f) {
    for (uint32_t p = 0; p <= 0xffff; ++p) {
        uint16_t h = (uint16_t)p;
        float w = f->widen(h);
        uint32_t wb = bits_of(w);
        cr_assert_eq(wb >> 31, (uint32_t)(h >> 15), "%s 0x%04x: sign lost", f->name, h);
        if (exponent_field(f, h) == exponent_all_ones(f) && fraction_field(f, h) != 0) {
            cr_assert(isnan(w), "%s 0x%04x should widen to NaN", f->name, h);
            /* Payload: the fraction moves to the top of float32's fraction, the rest zero. */
            cr_assert_eq(wb & 0x7fffffu, (uint32_t)fraction_field(f, h) << (23 - f->fraction_bits),
                         "%s 0x%04x: payload not kept (0x%08x)", f->name, h, wb);
            uint16_t back = f->narrow(w);
            cr_assert_eq(back, h | quiet_bit(f), "%s NaN 0x%04x narrowed back to 0x%04x", f->name, h, back);
            continue;
        }
        double expected = exponent_field(f, h) == exponent_all_ones(f) ? INFINITY : magnitude(f, h);
        cr_assert(fabs((double)w) == expected, "%s 0x%04x widened to %.17g, expected %.17g", f->name, h,
                  (double)w, expected);
        uint16_t back = f->narrow(w);
        cr_assert_eq(back, h, "%s 0x%04x round-tripped to 0x%04x", f->name, h, back);
    }
}

Test(half, every_float16_pattern_widens_exactly_and_round_trips) { check_every_pattern(&half_format); }
Test(half, every_bfloat16_pattern_widens_exactly_and_round_trips) { check_every_pattern(&bfloat_format); }

/* Between every pair of neighbours lo < hi (both signs, subnormals through the step from
 * the largest finite value to infinity): the exact midpoint goes to the even one, one
 * float32 ulp either side goes to the nearer one. */
static void check_ties_to_even(const format16 *f) {
    const uint16_t inf = (uint16_t)(exponent_all_ones(f) << f->fraction_bits);
    for (uint16_t lo = 0; lo < inf; ++lo) {
        uint16_t hi = lo + 1;
        /* The midpoint has one more significant bit than the format: exact in float32. */
        double mid = (magnitude(f, lo) + magnitude(f, hi)) / 2;
        float m = (float)mid;
        cr_assert((double)m == mid, "%s: midpoint of 0x%04x not a float32", f->name, lo);
        uint16_t even = (lo & 1) ? hi : lo;
        for (int neg = 0; neg <= 1; ++neg) {
            float s = neg ? -1.0f : 1.0f;
            uint16_t sign = neg ? 0x8000 : 0;
            uint16_t got = f->narrow(s * m);
            cr_assert_eq(got, sign | even, "%s: tie %.17g between 0x%04x and 0x%04x gave 0x%04x", f->name,
                         mid, lo, hi, got);
            got = f->narrow(s * nextafterf(m, 0.0f));
            cr_assert_eq(got, sign | lo, "%s: just below the tie after 0x%04x gave 0x%04x", f->name, lo, got);
            got = f->narrow(s * nextafterf(m, INFINITY));
            cr_assert_eq(got, sign | hi, "%s: just above the tie after 0x%04x gave 0x%04x", f->name, lo, got);
        }
    }
}

Test(half, float16_rounds_ties_to_even_everywhere) { check_ties_to_even(&half_format); }
Test(half, bfloat16_rounds_ties_to_even_everywhere) { check_ties_to_even(&bfloat_format); }

Test(half, float16_edges) {
    cr_assert_eq(tscan_float_to_half(65504.0f), 0x7bff);        /* largest finite */
    cr_assert_eq(tscan_float_to_half(65519.996f), 0x7bff);      /* below the tie with 65536 */
    cr_assert_eq(tscan_float_to_half(65520.0f), 0x7c00);        /* tie, odd 0x7bff loses: inf */
    cr_assert_eq(tscan_float_to_half(1e10f), 0x7c00);
    cr_assert_eq(tscan_float_to_half(-3.4028235e38f), 0xfc00);
    cr_assert_eq(tscan_float_to_half(INFINITY), 0x7c00);
    cr_assert_eq(tscan_float_to_half(-INFINITY), 0xfc00);
    cr_assert_eq(tscan_float_to_half(0x1p-24f), 0x0001);        /* smallest subnormal */
    cr_assert_eq(tscan_float_to_half(0x1p-25f), 0x0000);        /* tie with 0: even is 0 */
    cr_assert_eq(tscan_float_to_half(0x1.000002p-25f), 0x0001); /* just above the tie */
    cr_assert_eq(tscan_float_to_half(0x3p-25f), 0x0002);        /* 1.5 quanta: tie, to even 2 */
    cr_assert_eq(tscan_float_to_half(0x1.ff8p-15f), 0x03ff);    /* largest subnormal */
    cr_assert_eq(tscan_float_to_half(0x1.ffcp-15f), 0x0400);    /* tie above it: to even, the smallest normal */
    cr_assert_eq(tscan_float_to_half(0x1p-149f), 0x0000);       /* float32 subnormal */
    cr_assert_eq(tscan_float_to_half(-0x1p-149f), 0x8000);
    cr_assert_eq(tscan_float_to_half(-0.0f), 0x8000);
    cr_assert_eq(tscan_float_to_half(0x1.002p0f), 0x3c00);      /* 1 + half ulp: tie to even 1 */
    cr_assert_eq(tscan_float_to_half(0x1.006p0f), 0x3c02);      /* 1 + 3 half ulps: tie to even */
    cr_assert_eq(tscan_float_to_half(float_of(0x7f800001u)), 0x7e00); /* payload only in dropped bits */
    cr_assert_eq(tscan_float_to_half(float_of(0xffc00000u)), 0xfe00);
    cr_assert_eq(tscan_float_to_half(float_of(0x7fa02000u)), 0x7f01); /* signalling: quieted, top kept */
}

Test(half, bfloat16_edges) {
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x7f7f0000u)), 0x7f7f); /* largest finite */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x7f7f7fffu)), 0x7f7f);
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x7f7f8000u)), 0x7f80); /* tie, odd loses: inf */
    cr_assert_eq(tscan_float_to_bfloat16(3.4028235e38f), 0x7f80);
    cr_assert_eq(tscan_float_to_bfloat16(-INFINITY), 0xff80);
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x00008000u)), 0x0000); /* subnormal tie to even 0 */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x00018000u)), 0x0002); /* subnormal tie to even 2 */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x00008001u)), 0x0001);
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x007fffffu)), 0x0080); /* up into the smallest normal */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x80000001u)), 0x8000);
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x7f800001u)), 0x7fc0); /* payload only in dropped bits */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0xff810000u)), 0xffc1); /* signalling: quieted, top kept */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x3f818000u)), 0x3f82); /* tie, odd 0x3f81 loses */
    cr_assert_eq(tscan_float_to_bfloat16(float_of(0x3f828000u)), 0x3f82); /* tie, even 0x3f82 wins */
}

/* Random float32 patterns: half of them anywhere, half with exponents near the 16-bit
 * formats' ranges, where the rounding decisions are. */
static void check_random_narrowing(const format16 *f, const char *seed_name) {
    tu_rng r = tu_rng_make(tu_seed(seed_name, 0));
    const int low = 127 - f->bias - f->fraction_bits - 3, high = 127 + f->bias + 2;
    for (int i = 0; i < (1 << 22); ++i) {
        uint32_t b = (uint32_t)tu_rng_u64(&r);
        if (i & 1) {
            uint32_t e = (uint32_t)tu_rng_range(&r, low < 0 ? 0 : low, high > 255 ? 255 : high);
            b = (b & 0x807fffffu) | (e << 23);
        }
        float v = float_of(b);
        uint16_t got = f->narrow(v);
        float back = f->widen(got);
        if (isnan(v)) {
            if (!isnan(back) || (got >> 15) != (b >> 31))
                cr_assert_fail("%s: NaN 0x%08x narrowed to 0x%04x", f->name, b, got);
            continue;
        }
        double want = narrow_in_double(f, v);
        if ((double)back != want || !signbit(back) != !signbit(want))
            cr_assert_fail("%s: 0x%08x (%.9g) narrowed to 0x%04x (%.9g), expected %.9g", f->name, b,
                           (double)v, got, (double)back, want);
    }
}

Test(half, float16_narrowing_matches_double_arithmetic) {
    check_random_narrowing(&half_format, "float16_narrowing");
}
Test(half, bfloat16_narrowing_matches_double_arithmetic) {
    check_random_narrowing(&bfloat_format, "bfloat16_narrowing");
}
