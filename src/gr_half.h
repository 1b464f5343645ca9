/*
 * gr_half.h - IEEE binary16 (f16) and bfloat16 (bf16) to f32, exactly.
 *
 * Both formats embed in f32 without rounding (every f16 and bf16 value, NaN
 * and Inf included, is an f32 value), so data stored in them can be reduced
 * by the f32 paths after widening. Integer bit operations only; plain C that
 * nvcc accepts too (GR_HD from gr_common.h).
 */
#ifndef GR_HALF_H
#define GR_HALF_H

#include "gr_common.h"

#include <stdint.h>
#include <string.h>

/* bfloat16 is the top half of an f32. */
GR_HD uint32_t gr_bf16_to_f32_bits(uint16_t h) { return (uint32_t)h << 16; }

/* binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
GR_HD uint32_t gr_f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t frac = h & 0x3FFu;
    if (exp == 0x1Fu) /* Inf, NaN (payload kept, quiet bit as stored) */
        return sign | 0x7F800000u | (frac << 13);
    if (exp != 0)
        return sign | ((exp + 112u) << 23) | (frac << 13); /* 112 = 127 - 15 */
    if (frac == 0)
        return sign; /* +-0 */
    /* subnormal: frac * 2^-24; normalise into f32 */
    int e = -1;
    do {
        frac <<= 1;
        ++e;
    } while (!(frac & 0x400u));
    return sign | ((uint32_t)(112 - e) << 23) | ((frac & 0x3FFu) << 13);
}

/* Widen n 2-byte items at in (f16 when is_bf16 is 0, else bf16) to f32 at out. */
static inline void gr_half_widen(const void *in, float *out, uint64_t n, int is_bf16)
{
    const unsigned char *p = (const unsigned char *)in;
    for (uint64_t i = 0; i < n; ++i) {
        uint16_t h = (uint16_t)(p[2 * i] | (p[2 * i + 1] << 8)); /* little-endian, any alignment */
        uint32_t b = is_bf16 ? gr_bf16_to_f32_bits(h) : gr_f16_to_f32_bits(h);
        memcpy(&out[i], &b, sizeof(b));
    }
}

#endif /* GR_HALF_H */
