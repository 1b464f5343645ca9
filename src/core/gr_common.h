/*
 * gr_common.h - definitions shared by host C (src/) and device CUDA (kernels/).
 *
 * Everything here is plain C that nvcc and a C11 compiler both accept: the
 * synthetic generators (which must give the same bits on CPU and GPU), the
 * per-element terms of each op, and the local partial a backend hands to the
 * combine. Only integer arithmetic and exactly representable conversions are
 * used in the generators, so no libm difference can split CPU from GPU.
 */
#ifndef GR_COMMON_H
#define GR_COMMON_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GR_HD static __host__ __device__ __forceinline__
#else
#define GR_HD static inline
#endif

#include "gr_half.h"

/* Keep these numbers equal to the public enums (static-asserted in util.c). */
enum { GR_C_F32 = 0, GR_C_F64 = 1, GR_C_I32 = 2, GR_C_I64 = 3, GR_C_F16 = 4, GR_C_BF16 = 5 };
enum { GR_C_SUM = 0, GR_C_MIN = 1, GR_C_MAX = 2, GR_C_ABSSUM = 3, GR_C_SUMSQ = 4, GR_C_POWSUM = 5 };
enum { GR_C_ONES = 0, GR_C_IOTA = 1, GR_C_UNIFORM = 2, GR_C_NORMAL = 3, GR_C_RANDINT = 4, GR_C_STRESS = 5 };

/*
 * A backend's local result for one shard, in the form the combine consumes.
 * Floating ops: .f (sum-like: the f64 accumulation, NaN/Inf as IEEE gives;
 * min/max: the extreme as double, NaN if any input was NaN).
 * Integer sum-like ops: the exact 128-bit two's complement value hi:lo, and
 * overflow != 0 when some term x^P did not fit in int64.
 * Integer min/max: .lo holds the extreme.
 */
typedef struct gr_local {
    double f;
    uint64_t lo;
    int64_t hi;
    uint64_t count;
    int32_t overflow;
    int32_t reserved;
} gr_local_t;

/* ---------------------------------------------------------------------------
 * Counter-based hash: SplitMix64's output function (Steele, Lea, Flood 2014)
 * applied twice, keyed by the seed and a stream number. Pure in (seed, i).
 * ------------------------------------------------------------------------- */
GR_HD uint64_t gr_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Key for (seed, stream); computed once per launch, not per element. */
GR_HD uint64_t gr_gen_key(uint64_t seed, uint32_t stream)
{
    return gr_mix64(seed ^ ((uint64_t)stream * 0xD1B54A32D192ED03ull));
}

GR_HD uint64_t gr_hash(uint64_t key, uint64_t i)
{
    return gr_mix64(key ^ gr_mix64(i));
}

/* The keys one generator needs (stress and normal use up to three streams). */
typedef struct gr_gen_keys {
    uint64_t k0, k1, k2;
} gr_gen_keys_t;

GR_HD gr_gen_keys_t gr_gen_make_keys(uint64_t seed)
{
    gr_gen_keys_t k;
    k.k0 = gr_gen_key(seed, 0);
    k.k1 = gr_gen_key(seed, 1);
    k.k2 = gr_gen_key(seed, 2);
    return k;
}

/* f16 or bf16: held as 2-byte bit patterns, widened exactly to f32/f64 to compute. */
GR_HD int gr_c_is_half(int dtype) { return dtype == GR_C_F16 || dtype == GR_C_BF16; }
/* Floating dtypes: f32, f64, f16, bf16. */
GR_HD int gr_c_is_float(int dtype) { return dtype == GR_C_F32 || dtype == GR_C_F64 || gr_c_is_half(dtype); }

/* 2^e for e in [-1022, 1023] built from bits, so no ldexp is needed on device. */
GR_HD double gr_pow2(int e)
{
    union {
        uint64_t u;
        double d;
    } v;
    v.u = (uint64_t)(e + 1023) << 52;
    return v.d;
}

/*
 * Floating generators before any rounding to a half type. Every value is
 * exactly representable in f32, so the f32 and f64 datasets hold the same
 * numbers except for `uniform`, whose f64 version carries 53 random bits
 * instead of 24. For f16 and bf16 (dtype GR_C_F16 / GR_C_BF16) this is the
 * f32 value except where the half type needs other parameters: iota wraps at
 * 256 for bf16 (integers above 256 are not all bf16 values; f16 keeps 1000),
 * and stress for f16 uses exponents that stay inside f16's range (|B| in
 * [1, 2^15) before rounding, so at most 2^15 after; |t| in [2^-24, 2^-8), the
 * smallest ones f16 subnormals); bf16 has f32's range and keeps f32's.
 * gr_gen_float rounds this value to the half type (gr_gen_half_bits).
 */
GR_HD double gr_gen_float_raw(int gen, int dtype, gr_gen_keys_t k, uint64_t i)
{
    switch (gen) {
    case GR_C_ONES:
        return 1.0;
    case GR_C_IOTA:
        return (double)(i % (dtype == GR_C_BF16 ? 256u : 1000u));
    case GR_C_UNIFORM: {
        uint64_t h = gr_hash(k.k0, i);
        if (dtype != GR_C_F64)
            return (double)(h >> 40) * 0x1p-24;
        return (double)(h >> 11) * 0x1p-53;
    }
    case GR_C_NORMAL: {
        /* Irwin-Hall: twelve 16-bit uniforms (cell centres) minus 6.
         * Mean 0, sd 1 (to 1e-9), support [-6, 6], exact in f32. */
        uint64_t a = gr_hash(k.k0, i), b = gr_hash(k.k1, i), c = gr_hash(k.k2, i);
        uint64_t s = 0;
        for (int j = 0; j < 4; ++j) {
            s += (a >> (16 * j)) & 0xFFFFu;
            s += (b >> (16 * j)) & 0xFFFFu;
            s += (c >> (16 * j)) & 0xFFFFu;
        }
        return (double)(2 * s + 12) * 0x1p-17 - 6.0;
    }
    case GR_C_RANDINT:
        return (double)(gr_hash(k.k0, i) % 10u);
    case GR_C_STRESS: {
        /* Triples (3j, 3j+1, 3j+2) = (+B, -B, t): B = +-m 2^e with e in
         * [-64, 63], t = +-m' 2^e' with e' in [-40, -9]; m, m' in [1, 2) on a
         * 2^-20 grid. The exact sum is the sum of the small t's, which any
         * order-dependent accumulation loses under the big ones. */
        uint64_t j = i / 3u;
        uint64_t r = i - 3u * j;
        int f16 = dtype == GR_C_F16;
        if (r == 2u) {
            uint64_t h = gr_hash(k.k1, j);
            double m = 1.0 + (double)((h >> 7) & 0xFFFFFu) * 0x1p-20;
            double t = m * gr_pow2(f16 ? (int)(h & 15u) - 24 : (int)(h & 31u) - 40);
            return ((h >> 27) & 1u) ? -t : t;
        }
        uint64_t h = gr_hash(k.k0, j);
        double m = 1.0 + (double)((h >> 7) & 0xFFFFFu) * 0x1p-20;
        /* f16: e in [0, 14], so m 2^e rounds to at most 2^15, never to Inf */
        double big = m * gr_pow2(f16 ? (int)((h & 127u) % 15u) : (int)(h & 127u) - 64);
        if ((h >> 27) & 1u)
            big = -big;
        return r == 0u ? big : -big;
    }
    default:
        return 0.0;
    }
}

/*
 * The f16 / bf16 element of a floating generator: gr_gen_float_raw rounded
 * (to f32 first, exact for every raw value, then to the half type, nearest
 * even). What a kernel stores for dtype GR_C_F16 / GR_C_BF16.
 */
GR_HD uint16_t gr_gen_half_bits(int gen, int dtype, gr_gen_keys_t k, uint64_t i)
{
    return gr_f32_to_half_bits((float)gr_gen_float_raw(gen, dtype, k, i), dtype == GR_C_BF16);
}

/*
 * Floating generators: the value of element i for dtype f32, f64, f16 or
 * bf16 (for the half types: the half's value, widened exactly).
 */
GR_HD double gr_gen_float(int gen, int dtype, gr_gen_keys_t k, uint64_t i)
{
    if (gr_c_is_half(dtype))
        return (double)gr_half_bits_to_f32(gr_gen_half_bits(gen, dtype, k, i), dtype == GR_C_BF16);
    return gr_gen_float_raw(gen, dtype, k, i);
}

/*
 * Integer generators (i32 and i64). uniform and normal have no integer form
 * and are rejected before this is reached. stress: (+B, -B, t) triples with
 * B in [0, 2^30) for i32 and [0, 2^62) for i64, t in [-9, 9].
 */
GR_HD int64_t gr_gen_int(int gen, int dtype, gr_gen_keys_t k, uint64_t i)
{
    switch (gen) {
    case GR_C_ONES:
        return 1;
    case GR_C_IOTA:
        return (int64_t)(i % 1000u);
    case GR_C_RANDINT:
        return (int64_t)(gr_hash(k.k0, i) % 10u);
    case GR_C_STRESS: {
        uint64_t j = i / 3u;
        uint64_t r = i - 3u * j;
        if (r == 2u)
            return (int64_t)(gr_hash(k.k1, j) % 19u) - 9;
        uint64_t h = gr_hash(k.k0, j);
        int64_t b = (int64_t)(dtype == GR_C_I32 ? (h >> 34) : (h >> 2));
        if ((h >> 1) & 1u)
            b = -b;
        return r == 0u ? b : -b;
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------------------
 * Per-element terms.
 * ------------------------------------------------------------------------- */

/* Element i of a floating array of dtype GR_C_F32, F64, F16 or BF16, widened
 * exactly to f64 (the halves through their f32 bits, gr_half.h). */
GR_HD double gr_load_f(const void *p, int dtype, uint64_t i)
{
    switch (dtype) {
    case GR_C_F32:
        return (double)((const float *)p)[i];
    case GR_C_F16:
        return (double)gr_f16_bits_to_f32(((const uint16_t *)p)[i]);
    case GR_C_BF16:
        return (double)gr_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    default:
        return ((const double *)p)[i];
    }
}

/* x^p for p in 1..8 by left-to-right multiplication, the order both backends use. */
GR_HD double gr_powd(double x, int p)
{
    double r = x;
    for (int k = 1; k < p; ++k)
        r = r * x;
    return r;
}

/* Term of a floating sum-like op. */
GR_HD double gr_term_f(int op, int power, double x)
{
    switch (op) {
    case GR_C_ABSSUM:
        return fabs(x);
    case GR_C_SUMSQ:
        return x * x;
    case GR_C_POWSUM:
        return gr_powd(x, power);
    default:
        return x;
    }
}

/*
 * Term of an integer sum-like op, exactly as int64; *ovf is set when the term
 * itself does not fit in int64 (|x| of INT64_MIN, or x^P too large).
 */
GR_HD int64_t gr_term_i(int op, int power, int64_t x, int32_t *ovf)
{
    if (op == GR_C_SUM)
        return x;
    if (op == GR_C_ABSSUM) {
        if (x == INT64_MIN) {
            *ovf = 1;
            return INT64_MAX;
        }
        return x < 0 ? -x : x;
    }
    int p = op == GR_C_SUMSQ ? 2 : power;
    /* |x|^p checked in unsigned arithmetic; the sign is restored at the end. */
    uint64_t ax = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    uint64_t r = ax;
    for (int k = 1; k < p; ++k) {
        if (ax != 0 && r > UINT64_MAX / ax) {
            *ovf = 1;
            return 0;
        }
        r *= ax;
    }
    int neg = x < 0 && (p & 1);
    if (r > (uint64_t)INT64_MAX + (uint64_t)neg) {
        *ovf = 1;
        return 0;
    }
    return neg ? (int64_t)((uint64_t)0 - r) : (int64_t)r;
}

/* 128-bit two's complement accumulation in (hi, lo) words. */
GR_HD void gr_acc128_add(uint64_t *lo, int64_t *hi, int64_t v)
{
    uint64_t old = *lo;
    *lo = old + (uint64_t)v;
    *hi = (int64_t)((uint64_t)*hi + (v < 0 ? UINT64_MAX : 0u) + (*lo < old ? 1u : 0u));
}

GR_HD void gr_acc128_add128(uint64_t *lo, int64_t *hi, uint64_t blo, int64_t bhi)
{
    uint64_t old = *lo;
    *lo = old + blo;
    *hi = (int64_t)((uint64_t)*hi + (uint64_t)bhi + (*lo < old ? 1u : 0u));
}

#endif /* GR_COMMON_H */
