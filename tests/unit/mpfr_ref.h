/*
 * mpfr_ref.h - a correctly rounded reference sum for the exact-mode tests:
 * every addition is exact in a 2600-bit MPFR number (doubles span 2^-1074 ..
 * 2^1024, so 2^400 summands fit), then one rounding to the target format with
 * IEEE subnormals emulated (mpfr_check_range + mpfr_subnormalize, which
 * avoid double rounding). Special values follow MPFR, i.e. IEEE: NaN absorbs,
 * +Inf + -Inf = NaN, -0 + -0 = -0, x + -x = +0.
 */
#ifndef GR_TEST_MPFR_REF_H
#define GR_TEST_MPFR_REF_H

#include "test.h"

#include <mpfr.h>

#define REF_PREC 2600

typedef struct ref_sum {
    mpfr_t acc;
    uint64_t n;
} ref_sum_t;

static inline void ref_init(ref_sum_t *r)
{
    mpfr_init2(r->acc, REF_PREC);
    mpfr_set_zero(r->acc, -1); /* -0 is the additive identity */
    r->n = 0;
}

static inline void ref_clear(ref_sum_t *r) { mpfr_clear(r->acc); }

static inline void ref_add(ref_sum_t *r, double x)
{
    int t = mpfr_add_d(r->acc, r->acc, x, MPFR_RNDN);
    if (t != 0)
        GR_TEST_FAIL_("MPFR reference lost exactness adding %a (precision too small?)", x);
    r->n++;
}

/* Round to a format of prec bits, MPFR exponent range [emin, emax]
 * (f64: 53, -1073, 1024; f32: 24, -148, 128). Empty sum: +0. */
static inline double ref_round(const ref_sum_t *r, int prec, mpfr_exp_t emin, mpfr_exp_t emax)
{
    if (r->n == 0)
        return 0.0;
    if (mpfr_nan_p(r->acc))
        return NAN;
    if (mpfr_inf_p(r->acc))
        return mpfr_sgn(r->acc) > 0 ? INFINITY : -INFINITY;
    if (mpfr_zero_p(r->acc))
        return mpfr_signbit(r->acc) ? -0.0 : 0.0;
    mpfr_t y;
    mpfr_init2(y, prec);
    int t = mpfr_set(y, r->acc, MPFR_RNDN); /* unbounded exponent: only the precision rounds */
    mpfr_exp_t oemin = mpfr_get_emin(), oemax = mpfr_get_emax();
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    t = mpfr_check_range(y, t, MPFR_RNDN);
    t = mpfr_subnormalize(y, t, MPFR_RNDN);
    double d = mpfr_get_d(y, MPFR_RNDN); /* exact: y is in the format */
    mpfr_set_emin(oemin);
    mpfr_set_emax(oemax);
    mpfr_clear(y);
    return d;
}

static inline double ref_f64(const ref_sum_t *r) { return ref_round(r, 53, -1073, 1024); }
static inline double ref_f32(const ref_sum_t *r) { return ref_round(r, 24, -148, 128); }

/* A small deterministic RNG for test data (SplitMix64). */
static inline uint64_t ref_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A finite double with an exponent anywhere in [elo, ehi] (subnormals when
 * elo < -1022), a random or a short mantissa, and a random sign. */
static inline double ref_rand_double(uint64_t *s, int elo, int ehi)
{
    uint64_t h = ref_rand(s);
    int e = elo + (int)(ref_rand(s) % (uint64_t)(ehi - elo + 1));
    double m;
    switch (h & 3) {
    case 0: /* one bit: powers of two make ties */
        m = 1.0;
        break;
    case 1: /* a few bits */
        m = 1.0 + (double)((h >> 8) & 7) * 0.125;
        break;
    default: /* 53 bits */
        m = 1.0 + (double)(h >> 12) * 0x1p-52;
        break;
    }
    double x = ldexp(m, e); /* rounds (correctly) only below 2^-1022 */
    if (!isfinite(x))
        x = 0x1.fffffffffffffp1023;
    return (h >> 2) & 1 ? -x : x;
}

#endif /* GR_TEST_MPFR_REF_H */
