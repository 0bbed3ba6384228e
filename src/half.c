/*
 * half.c - conversions between float32 and the two 16-bit float formats, on bit patterns.
 *
 * binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits; subnormals are fraction·2^-24.
 * bfloat16: the top 16 bits of a float32 (1 sign, 8 exponent, 7 fraction bits).
 * Widening is exact. Narrowing rounds to nearest, ties to even, overflows to infinity, and
 * turns a NaN into a quiet NaN with the top of its payload kept.
 */
#include <string.h>

#include "tscan_internal.h"

static float float_from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t bits_from_float(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

float tscan_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t fraction = h & 0x3ffu;

    if (exponent == 0x1fu) /* infinity, or NaN with its payload moved to the top */
        return float_from_bits(sign | 0x7f800000u | (fraction << 13));
    if (exponent == 0) {
        if (fraction == 0)
            return float_from_bits(sign);
        /* Subnormal fraction·2^-24: normalise so the leading 1 becomes the implicit bit. */
        int32_t e = -14;
        while ((fraction & 0x400u) == 0) {
            fraction <<= 1;
            --e;
        }
        return float_from_bits(sign | ((uint32_t)(e + 127) << 23) | ((fraction & 0x3ffu) << 13));
    }
    return float_from_bits(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

float tscan_bfloat16_to_float(uint16_t b) { return float_from_bits((uint32_t)b << 16); }

uint16_t tscan_float_to_half(float f) {
    uint32_t bits = bits_from_float(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t exponent = (bits >> 23) & 0xffu;
    uint32_t fraction = bits & 0x7fffffu;

    if (exponent == 0xffu) {
        if (fraction == 0)
            return sign | 0x7c00u;
        /* Quiet bit set: a NaN stays a NaN even when the payload lives in the dropped bits. */
        return (uint16_t)(sign | 0x7e00u | (fraction >> 13));
    }
    int32_t e = (int32_t)exponent - 127; /* float32 subnormals give e = -127: they round to 0 */
    if (e > 15)
        return sign | 0x7c00u; /* >= 2^16, beyond the largest half (65504) plus half an ulp */
    /* Keep 11 significant bits for a normal half result; fewer below 2^-14, where the result
     * is a subnormal with quantum 2^-24. Past 24 dropped bits the value is below 2^-25,
     * under half the smallest subnormal, so it rounds to zero. */
    int32_t shift = e >= -14 ? 13 : 13 + (-14 - e);
    if (shift > 24)
        return sign;
    uint32_t significand = exponent == 0 ? fraction : (fraction | 0x800000u);
    uint32_t kept = significand >> shift;
    uint32_t dropped = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (dropped > halfway || (dropped == halfway && (kept & 1u)))
        ++kept;
    if (e < -14)
        return (uint16_t)(sign | kept); /* a carry to 0x400 is the smallest normal, as it should be */
    /* kept includes the implicit bit (0x400), which adds one to the exponent field; a carry
     * to 0x800 moves to the next binade, and past 65504 to the infinity pattern. */
    return (uint16_t)(sign | (((uint32_t)(e + 14) << 10) + kept));
}

uint16_t tscan_float_to_bfloat16(float f) {
    uint32_t bits = bits_from_float(f);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0)
        return (uint16_t)((bits >> 16) | 0x0040u); /* quiet NaN, top of the payload kept */
    /* Same exponent range as float32: rounding the bit pattern itself is right for
     * subnormals too, and a carry out of the fraction reaches the next binade or infinity. */
    uint32_t upper = bits >> 16;
    uint32_t lower = bits & 0xffffu;
    if (lower > 0x8000u || (lower == 0x8000u && (upper & 1u)))
        ++upper;
    return (uint16_t)upper;
}
