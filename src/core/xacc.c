/* xacc.c - exact accumulator; see gr_xacc.h for the representation. */
#include "gr_xacc.h"

#include "gr_common.h"

#include <math.h>
#include <string.h>

#define DIGIT_MASK 0xFFFFFFFFll

void gr_xacc_zero(gr_xacc_t *x) { memset(x, 0, sizeof(*x)); }

/* m * 2^e with m < 2^53, e >= -1074: three 32-bit digits starting at limb k. */
static void add_scaled_n(int64_t *limb, int bias, uint64_t m, int e, int negative)
{
    int pos = e + bias; /* >= 14 for any double in gr_xacc */
    int k = pos >> 5;
    int s = pos & 31;
    unsigned __int128 v = (unsigned __int128)m << s;
    int64_t d0 = (int64_t)(uint64_t)(v & 0xFFFFFFFFu);
    int64_t d1 = (int64_t)(uint64_t)((v >> 32) & 0xFFFFFFFFu);
    int64_t d2 = (int64_t)(uint64_t)(v >> 64);
    if (negative) {
        limb[k] -= d0;
        limb[k + 1] -= d1;
        limb[k + 2] -= d2;
    } else {
        limb[k] += d0;
        limb[k + 1] += d1;
        limb[k + 2] += d2;
    }
}

static void add_double_n(int64_t *limb, int bias, double d, int shift, int flip)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    int neg = (int)(bits >> 63) ^ flip;
    int bexp = (int)((bits >> 52) & 0x7FF);
    uint64_t m = bits & ((1ull << 52) - 1);
    if (bexp == 0x7FF)
        return; /* non-finite values are the caller's business */
    if (bexp == 0) {
        if (m == 0)
            return;
        add_scaled_n(limb, bias, m, -1074 + shift, neg);
    } else {
        add_scaled_n(limb, bias, m | (1ull << 52), bexp - 1075 + shift, neg);
    }
}

void gr_xacc_add_double(gr_xacc_t *x, double d) { add_double_n(x->limb, GR_XACC_BIAS, d, 0, 0); }
void gr_xacc_sub_double(gr_xacc_t *x, double d) { add_double_n(x->limb, GR_XACC_BIAS, d, 0, 1); }

static void add_i128_n(int64_t *limb, int bias, uint64_t lo, int64_t hi)
{
    const int k = bias / 32;
    limb[k] += (int64_t)(lo & 0xFFFFFFFFu);
    limb[k + 1] += (int64_t)(lo >> 32);
    limb[k + 2] += (int64_t)((uint64_t)hi & 0xFFFFFFFFu);
    /* top digit signed: arithmetic shift keeps the sign of the 128-bit value */
    limb[k + 3] += hi >> 32;
}

void gr_xacc_add_i128(gr_xacc_t *x, uint64_t lo, int64_t hi) { add_i128_n(x->limb, GR_XACC_BIAS, lo, hi); }

/* ---- limb arrays of any length: gr_xacc (70 limbs) and gr_wacc (144) ---- */

static void normalize_n(int64_t *limb, int n)
{
    for (int k = 0; k < n - 1; ++k) {
        int64_t v = limb[k];
        int64_t carry = v >> 32; /* floor division by 2^32 (arithmetic shift) */
        limb[k] = v & DIGIT_MASK;
        limb[k + 1] += carry;
    }
}

/* Normalised magnitude of src in digits (into mag); returns 1 when src is negative. */
static int magnitude_n(const int64_t *src, int64_t *mag, int n)
{
    memcpy(mag, src, sizeof(int64_t) * (size_t)n);
    normalize_n(mag, n);
    if (mag[n - 1] >= 0)
        return 0;
    for (int k = 0; k < n; ++k)
        mag[k] = -mag[k];
    normalize_n(mag, n);
    return 1;
}

static int sign_n(const int64_t *limb, int64_t *tmp, int n)
{
    memcpy(tmp, limb, sizeof(int64_t) * (size_t)n);
    normalize_n(tmp, n);
    if (tmp[n - 1] < 0)
        return -1;
    for (int k = 0; k < n; ++k)
        if (tmp[k] != 0)
            return 1;
    return 0;
}

static int bit_at(const int64_t *m, int pos)
{
    if (pos < 0)
        return 0;
    return (int)((m[pos >> 5] >> (pos & 31)) & 1);
}

/* Any bit set strictly below pos? */
static int sticky_below(const int64_t *m, int pos)
{
    if (pos <= 0)
        return 0;
    int k = pos >> 5;
    for (int j = 0; j < k; ++j)
        if (m[j] != 0)
            return 1;
    int s = pos & 31;
    return s != 0 && (m[k] & ((1ll << s) - 1)) != 0;
}

/* Index of the highest set bit of a normalised magnitude, -1 for zero, -2 beyond the top digit. */
static int msb_n(const int64_t *m, int n)
{
    int top = n - 1;
    while (top >= 0 && m[top] == 0)
        --top;
    if (top < 0)
        return -1;
    if ((uint64_t)m[top] >> 32)
        return -2;
    int msb = 32 * top + 31;
    while (!((m[top] >> (msb & 31)) & 1))
        --msb;
    return msb;
}

/* Round mag * 2^-bias (normalised, non-negative) once into (prec, emin_lsb, emax). */
static double round_mag(const int64_t *m, int n, int bias, int neg, int prec, int emin_lsb, int emax)
{
    int msb = msb_n(m, n);
    if (msb == -1)
        return 0.0;
    if (msb == -2)
        return neg ? -INFINITY : INFINITY; /* beyond every format */
    int e_msb = msb - bias;
    if (e_msb > emax)
        return neg ? -INFINITY : INFINITY;
    int lsb_exp = e_msb - (prec - 1);
    if (lsb_exp < emin_lsb)
        lsb_exp = emin_lsb;
    int qb = lsb_exp + bias; /* bit index of the result's last place */
    uint64_t mant = 0;
    for (int b = msb; b >= qb && b >= 0; --b)
        mant = (mant << 1) | (uint64_t)bit_at(m, b);
    if (qb > msb)
        mant = 0;
    int round = bit_at(m, qb - 1);
    int sticky = sticky_below(m, qb - 1);
    if (round && (sticky || (mant & 1)))
        ++mant;
    /* mant <= 2^prec, exact in double; the product below is exact unless it
     * overflows the target format */
    double mag = ldexp((double)mant, lsb_exp);
    double limit = ldexp(1.0, emax + 1);
    if (mag >= limit)
        mag = INFINITY;
    return neg ? -mag : mag;
}

static int to_i64_n(const int64_t *limb, int64_t *tmp, int n, int bias, int64_t *out)
{
    int neg = magnitude_n(limb, tmp, n);
    const int k0 = bias / 32;
    for (int k = 0; k < k0; ++k)
        if (tmp[k] != 0)
            return 0; /* not an integer */
    for (int k = k0 + 2; k < n; ++k)
        if (tmp[k] != 0)
            return 0;
    uint64_t mag = ((uint64_t)tmp[k0 + 1] << 32) | (uint64_t)tmp[k0];
    if (!neg) {
        if (mag > (uint64_t)INT64_MAX)
            return 0;
        *out = (int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX + 1u)
            return 0;
        *out = (int64_t)(0u - mag);
    }
    return 1;
}

/* ---- gr_xacc ------------------------------------------------------------ */

void gr_xacc_add(gr_xacc_t *x, const gr_xacc_t *y)
{
    for (int k = 0; k < GR_XACC_LIMBS; ++k)
        x->limb[k] += y->limb[k];
}

void gr_xacc_normalize(gr_xacc_t *x) { normalize_n(x->limb, GR_XACC_LIMBS); }

int gr_xacc_sign(const gr_xacc_t *x)
{
    gr_xacc_t t;
    return sign_n(x->limb, t.limb, GR_XACC_LIMBS);
}

double gr_xacc_round(const gr_xacc_t *x, int prec, int emin_lsb, int emax)
{
    gr_xacc_t m;
    int neg = magnitude_n(x->limb, m.limb, GR_XACC_LIMBS);
    return round_mag(m.limb, GR_XACC_LIMBS, GR_XACC_BIAS, neg, prec, emin_lsb, emax);
}

int gr_xacc_to_i64(const gr_xacc_t *x, int64_t *out)
{
    gr_xacc_t t;
    return to_i64_n(x->limb, t.limb, GR_XACC_LIMBS, GR_XACC_BIAS, out);
}

double gr_xacc_round_dtype(const gr_xacc_t *x, int dtype)
{
    switch (dtype) {
    case GR_C_F32:
        return (double)gr_xacc_to_float(x);
    case GR_C_F16:
        return gr_xacc_round(x, GR_XACC_F16_ROUND);
    case GR_C_BF16:
        return gr_xacc_round(x, GR_XACC_BF16_ROUND);
    default:
        return gr_xacc_to_double(x);
    }
}

/* ---- gr_wacc ------------------------------------------------------------ */

void gr_wacc_zero(gr_wacc_t *w) { memset(w, 0, sizeof(*w)); }

void gr_wacc_add_double_shift(gr_wacc_t *w, double d, int shift)
{
    add_double_n(w->limb, GR_WACC_BIAS, d, shift, 0);
}

void gr_wacc_add_product(gr_wacc_t *w, double a, double b)
{
    double p = a * b;
    double ap = fabs(p);
    /* TwoProduct is exact when neither p nor its error underflows or overflows:
     * |p| >= 2^-968 leaves room for the 53 bits below p's last place. */
    if (ap >= 0x1p-968 && ap <= 0x1p1020) {
        double e = fma(a, b, -p);
        add_double_n(w->limb, GR_WACC_BIAS, p, 0, 0);
        add_double_n(w->limb, GR_WACC_BIAS, e, 0, 0);
        return;
    }
    if (a == 0 || b == 0)
        return;
    /* scale both into [0.5, 1): the product of the fractions is safe, and
     * 2^(ea+eb) goes to the accumulator as a shift */
    int ea, eb;
    double ma = frexp(a, &ea), mb = frexp(b, &eb);
    p = ma * mb;
    double e = fma(ma, mb, -p);
    add_double_n(w->limb, GR_WACC_BIAS, p, ea + eb, 0);
    add_double_n(w->limb, GR_WACC_BIAS, e, ea + eb, 0);
}

void gr_wacc_add_i128(gr_wacc_t *w, uint64_t lo, int64_t hi) { add_i128_n(w->limb, GR_WACC_BIAS, lo, hi); }

void gr_wacc_add(gr_wacc_t *w, const gr_wacc_t *v)
{
    for (int k = 0; k < GR_WACC_LIMBS; ++k)
        w->limb[k] += v->limb[k];
}

void gr_wacc_normalize(gr_wacc_t *w) { normalize_n(w->limb, GR_WACC_LIMBS); }

int gr_wacc_sign(const gr_wacc_t *w)
{
    gr_wacc_t t;
    return sign_n(w->limb, t.limb, GR_WACC_LIMBS);
}

double gr_wacc_round(const gr_wacc_t *w, int prec, int emin_lsb, int emax)
{
    gr_wacc_t m;
    int neg = magnitude_n(w->limb, m.limb, GR_WACC_LIMBS);
    return round_mag(m.limb, GR_WACC_LIMBS, GR_WACC_BIAS, neg, prec, emin_lsb, emax);
}

double gr_wacc_round_dtype(const gr_wacc_t *w, int dtype)
{
    switch (dtype) {
    case GR_C_F32:
        return (double)(float)gr_wacc_round(w, 24, -149, 127);
    case GR_C_F16:
        return gr_wacc_round(w, GR_XACC_F16_ROUND);
    case GR_C_BF16:
        return gr_wacc_round(w, GR_XACC_BF16_ROUND);
    default:
        return gr_wacc_round(w, 53, -1074, 1023);
    }
}

int gr_wacc_to_i64(const gr_wacc_t *w, int64_t *out)
{
    gr_wacc_t t;
    return to_i64_n(w->limb, t.limb, GR_WACC_LIMBS, GR_WACC_BIAS, out);
}

/* floor(sqrt(v)) of v < 2^120, and whether it is exact. */
static uint64_t isqrt_u128(unsigned __int128 v, int *exact)
{
    /* bit by bit: 60 result bits, no division, no rounding to trust */
    unsigned __int128 rem = v, res = 0, bit = (unsigned __int128)1 << 118;
    while (bit > v)
        bit >>= 2;
    while (bit != 0) {
        if (rem >= res + bit) {
            rem -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    *exact = rem == 0;
    return (uint64_t)res;
}

double gr_wacc_sqrt_round(const gr_wacc_t *w, int prec, int emin_lsb, int emax)
{
    gr_wacc_t m;
    if (magnitude_n(w->limb, m.limb, GR_WACC_LIMBS))
        return NAN;
    int msb = msb_n(m.limb, GR_WACC_LIMBS);
    if (msb == -1)
        return 0.0;
    if (msb == -2)
        return INFINITY;
    /* M = the state as an integer (value M * 2^-bias, bias even). Take a window
     * m' = M / 4^j of 119 or 120 bits (shifted left when M is short), so
     * r = isqrt(m') has 60 bits: sqrt(value) = (r + frac) * 2^(j - bias/2). */
    int t = msb + 1;
    int j = (t - 119) >= 0 ? (t - 119) / 2 : -((120 - t) / 2);
    unsigned __int128 win = 0;
    int sticky = 0;
    if (j >= 0) {
        int lo = 2 * j;
        for (int b = msb; b >= lo; --b)
            win = (win << 1) | (unsigned)bit_at(m.limb, b);
        sticky = sticky_below(m.limb, lo);
    } else {
        for (int b = msb; b >= 0; --b)
            win = (win << 1) | (unsigned)bit_at(m.limb, b);
        win <<= -2 * j;
    }
    int exact;
    uint64_t r = isqrt_u128(win, &exact);
    sticky |= !exact;
    int e0 = j - GR_WACC_BIAS / 2; /* sqrt = (r + frac) * 2^e0, r in [2^59, 2^60) */
    int rmsb = 63;
    while (!((r >> rmsb) & 1))
        --rmsb;
    int e_msb = rmsb + e0;
    if (e_msb > emax)
        return INFINITY;
    int lsb_exp = e_msb - (prec - 1);
    if (lsb_exp < emin_lsb)
        lsb_exp = emin_lsb;
    int sh = lsb_exp - e0; /* >= 7: 60 bits rounded to at most 53 */
    uint64_t mant;
    int round;
    if (sh > 63) {
        mant = 0;
        round = 0;
        sticky |= r != 0;
    } else {
        mant = r >> sh;
        round = (int)((r >> (sh - 1)) & 1);
        sticky |= sh >= 2 && (r & ((1ull << (sh - 1)) - 1)) != 0;
    }
    if (round && (sticky || (mant & 1)))
        ++mant;
    double mag = ldexp((double)mant, lsb_exp);
    if (mag >= ldexp(1.0, emax + 1))
        mag = INFINITY;
    return mag;
}

double gr_wacc_sqrt_round_dtype(const gr_wacc_t *w, int dtype)
{
    switch (dtype) {
    case GR_C_F32:
        return gr_wacc_sqrt_round(w, 24, -149, 127);
    case GR_C_F16:
        return gr_wacc_sqrt_round(w, GR_XACC_F16_ROUND);
    case GR_C_BF16:
        return gr_wacc_sqrt_round(w, GR_XACC_BF16_ROUND);
    default:
        return gr_wacc_sqrt_round(w, 53, -1074, 1023);
    }
}
