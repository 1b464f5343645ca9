/* xacc.c - exact accumulator; see gr_xacc.h for the representation. */
#include "gr_xacc.h"

#include "gr_common.h"

#include <math.h>
#include <string.h>

#define DIGIT_MASK 0xFFFFFFFFll

void gr_xacc_zero(gr_xacc_t *x) { memset(x, 0, sizeof(*x)); }

/* m * 2^e with m < 2^53, e >= -1074: three 32-bit digits starting at limb k. */
static void add_scaled(gr_xacc_t *x, uint64_t m, int e, int negative)
{
    int pos = e + GR_XACC_BIAS; /* >= 14 for any double */
    int k = pos >> 5;
    int s = pos & 31;
    unsigned __int128 v = (unsigned __int128)m << s;
    int64_t d0 = (int64_t)(uint64_t)(v & 0xFFFFFFFFu);
    int64_t d1 = (int64_t)(uint64_t)((v >> 32) & 0xFFFFFFFFu);
    int64_t d2 = (int64_t)(uint64_t)(v >> 64);
    if (negative) {
        x->limb[k] -= d0;
        x->limb[k + 1] -= d1;
        x->limb[k + 2] -= d2;
    } else {
        x->limb[k] += d0;
        x->limb[k + 1] += d1;
        x->limb[k + 2] += d2;
    }
}

static void add_double_signed(gr_xacc_t *x, double d, int flip)
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
        add_scaled(x, m, -1074, neg);
    } else {
        add_scaled(x, m | (1ull << 52), bexp - 1075, neg);
    }
}

void gr_xacc_add_double(gr_xacc_t *x, double d) { add_double_signed(x, d, 0); }
void gr_xacc_sub_double(gr_xacc_t *x, double d) { add_double_signed(x, d, 1); }

void gr_xacc_add_i128(gr_xacc_t *x, uint64_t lo, int64_t hi)
{
    const int k = GR_XACC_BIAS / 32;
    x->limb[k] += (int64_t)(lo & 0xFFFFFFFFu);
    x->limb[k + 1] += (int64_t)(lo >> 32);
    x->limb[k + 2] += (int64_t)((uint64_t)hi & 0xFFFFFFFFu);
    /* top digit signed: arithmetic shift keeps the sign of the 128-bit value */
    x->limb[k + 3] += hi >> 32;
}

void gr_xacc_add(gr_xacc_t *x, const gr_xacc_t *y)
{
    for (int k = 0; k < GR_XACC_LIMBS; ++k)
        x->limb[k] += y->limb[k];
}

void gr_xacc_normalize(gr_xacc_t *x)
{
    for (int k = 0; k < GR_XACC_LIMBS - 1; ++k) {
        int64_t v = x->limb[k];
        int64_t carry = v >> 32; /* floor division by 2^32 (arithmetic shift) */
        x->limb[k] = v & DIGIT_MASK;
        x->limb[k + 1] += carry;
    }
}

int gr_xacc_sign(const gr_xacc_t *x)
{
    gr_xacc_t t = *x;
    gr_xacc_normalize(&t);
    if (t.limb[GR_XACC_LIMBS - 1] < 0)
        return -1;
    for (int k = 0; k < GR_XACC_LIMBS; ++k)
        if (t.limb[k] != 0)
            return 1;
    return 0;
}

/* Normalised magnitude of x in digits; returns 1 when x is negative. */
static int magnitude(const gr_xacc_t *x, gr_xacc_t *mag)
{
    *mag = *x;
    gr_xacc_normalize(mag);
    if (mag->limb[GR_XACC_LIMBS - 1] >= 0)
        return 0;
    for (int k = 0; k < GR_XACC_LIMBS; ++k)
        mag->limb[k] = -mag->limb[k];
    gr_xacc_normalize(mag);
    return 1;
}

static int bit_at(const gr_xacc_t *m, int pos)
{
    if (pos < 0)
        return 0;
    return (int)((m->limb[pos >> 5] >> (pos & 31)) & 1);
}

/* Any bit set strictly below pos? */
static int sticky_below(const gr_xacc_t *m, int pos)
{
    if (pos <= 0)
        return 0;
    int k = pos >> 5;
    for (int j = 0; j < k; ++j)
        if (m->limb[j] != 0)
            return 1;
    int s = pos & 31;
    return s != 0 && (m->limb[k] & ((1ll << s) - 1)) != 0;
}

double gr_xacc_round(const gr_xacc_t *x, int prec, int emin_lsb, int emax)
{
    gr_xacc_t m;
    int neg = magnitude(x, &m);
    int top = GR_XACC_LIMBS - 1;
    while (top >= 0 && m.limb[top] == 0)
        --top;
    if (top < 0)
        return 0.0;
    if ((uint64_t)m.limb[top] >> 32)
        return neg ? -INFINITY : INFINITY; /* beyond 2^1120: no format reaches it */
    int msb = 32 * top + 31;
    while (!((m.limb[top] >> (msb & 31)) & 1))
        --msb;
    int e_msb = msb - GR_XACC_BIAS;
    if (e_msb > emax)
        return neg ? -INFINITY : INFINITY;
    int lsb_exp = e_msb - (prec - 1);
    if (lsb_exp < emin_lsb)
        lsb_exp = emin_lsb;
    int qb = lsb_exp + GR_XACC_BIAS; /* bit index of the result's last place */
    uint64_t mant = 0;
    for (int b = msb; b >= qb && b >= 0; --b)
        mant = (mant << 1) | (uint64_t)bit_at(&m, b);
    if (qb > msb)
        mant = 0;
    int round = bit_at(&m, qb - 1);
    int sticky = sticky_below(&m, qb - 1);
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

int gr_xacc_to_i64(const gr_xacc_t *x, int64_t *out)
{
    gr_xacc_t m;
    int neg = magnitude(x, &m);
    const int k0 = GR_XACC_BIAS / 32;
    for (int k = 0; k < k0; ++k)
        if (m.limb[k] != 0)
            return 0; /* not an integer */
    for (int k = k0 + 2; k < GR_XACC_LIMBS; ++k)
        if (m.limb[k] != 0)
            return 0;
    uint64_t mag = ((uint64_t)m.limb[k0 + 1] << 32) | (uint64_t)m.limb[k0];
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
