/*
 * gr_half.h - IEEE binary16 (f16) and bfloat16 (bf16): exact widening to
 * f32, and correctly rounded narrowing from f32.
 *
 * Both formats embed in f32 without rounding (every f16 and bf16 value, NaN
 * and Inf included, is an f32 value). Narrowing rounds to nearest, ties to
 * even, overflows to +-Inf, gives f16 subnormals (down to 2^-24) and keeps
 * NaN a quiet NaN with its sign and its top payload bits.
 *
 * Integer bit operations only, so host and device give the same bits; plain
 * C that nvcc accepts too. This header stands alone (gr_common.h includes it
 * for the generators): it defines GR_HD itself when nobody did.
 */
#ifndef GR_HALF_H
#define GR_HALF_H

#include <stdint.h>
#include <string.h>

#ifndef GR_HD
#ifdef __CUDACC__
#define GR_HD static __host__ __device__ __forceinline__
#else
#define GR_HD static inline
#endif
#endif

/* f32 <-> its bits without memcpy (usable on the device). */
GR_HD uint32_t gr_f32_bits(float f)
{
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
}

GR_HD float gr_f32_from_bits(uint32_t u)
{
    union {
        float f;
        uint32_t u;
    } v;
    v.u = u;
    return v.f;
}

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

/* The value of a half's bits, as f32 (exact). */
GR_HD float gr_f16_bits_to_f32(uint16_t h) { return gr_f32_from_bits(gr_f16_to_f32_bits(h)); }
GR_HD float gr_bf16_bits_to_f32(uint16_t h) { return gr_f32_from_bits(gr_bf16_to_f32_bits(h)); }
/* is_bf16 0: f16, else bf16. */
GR_HD float gr_half_bits_to_f32(uint16_t h, int is_bf16)
{
    return is_bf16 ? gr_bf16_bits_to_f32(h) : gr_f16_bits_to_f32(h);
}

/*
 * f32 -> binary16, round to nearest even. |x| >= 65520 (the midpoint of the
 * largest f16, 65504, and 2^16) gives Inf; |x| <= 2^-25 gives +-0; between
 * them and below 2^-14 the result is an f16 subnormal (a multiple of 2^-24).
 */
GR_HD uint16_t gr_f32_to_f16_bits(float f)
{
    uint32_t x = gr_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) /* NaN: quiet, top 9 payload bits kept */
        return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x1FFu));
    if (ax >= 0x477FF000u) /* >= 65520, Inf included */
        return (uint16_t)(sign | 0x7C00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: normal */
        uint32_t r = ax + 0xFFFu + ((ax >> 13) & 1u); /* ties to even at bit 13 */
        return (uint16_t)(sign | ((r - 0x38000000u) >> 13)); /* rebias 127 -> 15 */
    }
    if (ax <= 0x33000000u) /* <= 2^-25: 0 (2^-25 is a tie, 0 is even) */
        return (uint16_t)sign;
    /* subnormal: |x| = mant * 2^(e - 150); in units of 2^-24: mant >> (126 - e) */
    uint32_t e = ax >> 23; /* 102..112 */
    uint32_t mant = (ax & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        ++q; /* may carry into the smallest normal, 0x400: still the right encoding */
    return (uint16_t)(sign | q);
}

/*
 * f32 -> bfloat16, round to nearest even. Same exponent range as f32:
 * |x| >= 2^128 - 2^119 (midpoint above the largest bf16) gives Inf, f32
 * subnormals round to bf16 subnormals.
 */
GR_HD uint16_t gr_f32_to_bf16_bits(float f)
{
    uint32_t x = gr_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: quiet, sign and top payload kept */
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* is_bf16 0: f16, else bf16. */
GR_HD uint16_t gr_f32_to_half_bits(float f, int is_bf16)
{
    return is_bf16 ? gr_f32_to_bf16_bits(f) : gr_f32_to_f16_bits(f);
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
