/*
 * test_xacc_mpfr.c - the exact accumulator (gr_xacc) against an MPFR
 * reference: every sum of doubles, rounded once to f64 and directly to f32
 * (never through f64), on adversarial and on random data; and rounded once
 * to f16 and bf16 (gr_xacc_round_dtype, the exact mode of half input) with
 * MPFR at precision 11 / 8 and the formats' exponent ranges (subnormalized):
 * ties, the overflow boundary, subnormals, cancellation.
 */
#include "gr_common.h"
#include "gr_xacc.h"
#include "mpfr_ref.h"

#include <float.h>

static long n_cases;

static void fail_case(const char *name, const double *x, size_t n, const char *fmt, double got, double want)
{
    fprintf(stderr, "case %s (%zu terms):", name, n);
    for (size_t i = 0; i < n && i < 12; ++i)
        fprintf(stderr, " %a", x[i]);
    fprintf(stderr, "%s\n", n > 12 ? " ..." : "");
    GR_TEST_FAIL_("%s: got %.17g (%a), want %.17g (%a)", fmt, got, got, want, want);
}

/* Sum x[0..n) four ways (forwards, split in two accumulators and merged,
 * negated terms subtracted, normalised midway) and compare every rounding
 * with MPFR. Zero sums come back as +0 from the accumulator, which has no
 * signed zero (the partial layer tracks that). */
static void check(const char *name, const double *x, size_t n)
{
    ++n_cases;
    ref_sum_t r;
    ref_init(&r);
    gr_xacc_t a, b1, b2, c;
    gr_xacc_zero(&a);
    gr_xacc_zero(&b1);
    gr_xacc_zero(&b2);
    gr_xacc_zero(&c);
    for (size_t i = 0; i < n; ++i) {
        ASSERT(isfinite(x[i]));
        ref_add(&r, x[i]);
        gr_xacc_add_double(&a, x[i]);
        gr_xacc_add_double(i % 2 ? &b1 : &b2, x[i]);
        gr_xacc_sub_double(&c, -x[i]);
        if (i == n / 2)
            gr_xacc_normalize(&c);
    }
    gr_xacc_add(&b1, &b2);
    double w64 = ref_f64(&r), w32 = ref_f32(&r);
    if (w64 == 0)
        w64 = 0.0;
    if (w32 == 0 && mpfr_zero_p(r.acc))
        w32 = 0.0; /* a zero state; a tiny negative sum keeps -0 in f32 */
    const gr_xacc_t *all[3] = {&a, &b1, &c};
    for (int k = 0; k < 3; ++k) {
        double g64 = gr_xacc_to_double(all[k]);
        double g32 = (double)gr_xacc_to_float(all[k]);
        if (memcmp(&g64, &w64, sizeof(double)) != 0)
            fail_case(name, x, n, k == 0 ? "f64" : k == 1 ? "f64 (merged)" : "f64 (subtracted)", g64, w64);
        if (memcmp(&g32, &w32, sizeof(double)) != 0)
            fail_case(name, x, n, k == 0 ? "f32" : k == 1 ? "f32 (merged)" : "f32 (subtracted)", g32, w32);
        int sg = gr_xacc_sign(all[k]), ws = mpfr_sgn(r.acc);
        ws = ws > 0 ? 1 : ws < 0 ? -1 : 0;
        if (sg != ws)
            fail_case(name, x, n, "sign", sg, ws);
    }
    ref_clear(&r);
}

#define CHECK(name, ...)                                        \
    do {                                                        \
        const double v_[] = {__VA_ARGS__};                      \
        check(name, v_, sizeof(v_) / sizeof(v_[0]));            \
    } while (0)

/* f64 result of the sum, checked against a known value as well as MPFR */
static void expect(const char *name, const double *x, size_t n, double w64, double w32)
{
    check(name, x, n);
    gr_xacc_t a;
    gr_xacc_zero(&a);
    for (size_t i = 0; i < n; ++i)
        gr_xacc_add_double(&a, x[i]);
    double g64 = gr_xacc_to_double(&a), g32 = (double)gr_xacc_to_float(&a);
    if (memcmp(&g64, &w64, sizeof(double)))
        fail_case(name, x, n, "f64 known value", g64, w64);
    if (memcmp(&g32, &w32, sizeof(double)))
        fail_case(name, x, n, "f32 known value", g32, w32);
}

#define EXPECT(name, w64, w32, ...)                             \
    do {                                                        \
        const double v_[] = {__VA_ARGS__};                      \
        expect(name, v_, sizeof(v_) / sizeof(v_[0]), w64, w32); \
    } while (0)

static void test_cancellation(void)
{
    static const double xs[] = {1e30, 1e300, DBL_MAX, 0x1p1023, 1e16, 0x1p53};
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); ++i) {
        double x = xs[i];
        EXPECT("x,1,-x", 1.0, 1.0, x, 1.0, -x);
        EXPECT("1,x,-x", 1.0, 1.0, 1.0, x, -x);
        EXPECT("x,-x,1", 1.0, 1.0, x, -x, 1.0);
        EXPECT("-x,1,x", 1.0, 1.0, -x, 1.0, x);
        EXPECT("x,tiny,-x", 0x1p-1074, 0.0, x, 0x1p-1074, -x);
        EXPECT("x,x,-x,-x,-1", -1.0, -1.0, x, x, -x, -x, -1.0);
        EXPECT("x,1e-300,-x", 1e-300, 0.0, x, 1e-300, -x);
        EXPECT("x,-x", 0.0, 0.0, x, -x);
    }
    /* a cascade: each term cancels the previous big one and leaves bits behind */
    double v[4000];
    size_t n = 0;
    for (int e = 1023; e > -1000 && n + 2 < 4000; e -= 1) {
        v[n++] = ldexp(1.0, e);
        v[n++] = -ldexp(1.0, e) + (e > 0 ? ldexp(1.0, e - 52) : 0.0);
    }
    check("cascade", v, n);
}

static void test_exponent_range(void)
{
    /* every power of two, 2^-1074 .. 2^1023: sum = 2^1024 - 2^-1074 -> +Inf */
    double v[2200];
    size_t n = 0;
    for (int e = -1074; e <= 1023; ++e)
        v[n++] = ldexp(1.0, e);
    check("all powers of two", v, n);
    /* same without the top one: 2^1023 - 2^-1074 rounds to 2^1023 */
    check("powers below 2^1023", v, n - 1);
    /* the subnormals only: exact in f64, 0x1.ffffffffffffep-1023 */
    expect("subnormal powers", v, 52, 0x1.ffffffffffffep-1023, 0.0);
    /* alternating signs down the whole range */
    for (size_t i = 0; i < n; ++i)
        v[i] = i % 2 ? -v[i] : v[i];
    check("alternating powers", v, n);
    /* near overflow */
    const double M = DBL_MAX;
    EXPECT("M+M", INFINITY, INFINITY, M, M);
    EXPECT("-M-M", -INFINITY, -INFINITY, -M, -M);
    EXPECT("M+M-M", M, INFINITY, M, M, -M);
    EXPECT("M+M+M-M-M", M, INFINITY, M, M, M, -M, -M);
    EXPECT("-M-M+M", -M, -INFINITY, -M, -M, M);
    /* half an ulp above DBL_MAX: a tie, odd mantissa -> rounds up to overflow */
    EXPECT("M+ulp/2", INFINITY, INFINITY, M, 0x1p970);
    EXPECT("M+ulp/2-tiny", M, INFINITY, M, 0x1p970, -0x1p-1074);
    EXPECT("M+ulp/2-ulp/2", M, INFINITY, M, 0x1p970, -0x1p970);
    EXPECT("-M-ulp/2", -INFINITY, -INFINITY, -M, -0x1p970);
    EXPECT("2^1023 * 2", INFINITY, INFINITY, 0x1p1023, 0x1p1023);
    /* subnormal sums: exact in f64, underflow in f32 */
    EXPECT("subnormals", 0x3p-1074, 0.0, 0x1p-1074, 0x1p-1073);
    EXPECT("min normal", 0x1p-1022, 0.0, 0x1.ffffffffffffep-1023, 0x1p-1074);
    EXPECT("min normal + tiny", 0x1.0000000000001p-1022, 0.0, 0x1.ffffffffffffep-1023, 0x1p-1074, 0x1p-1074);
    EXPECT("-subnormal", -0x1p-1074, -0.0, 0x1p-1073, -0x3p-1074);
    /* f32 range edges from doubles */
    const double F = FLT_MAX; /* 0x1.fffffep127, ulp 2^104 */
    EXPECT("F + ulp32/2 (tie, odd -> Inf)", F + 0x1p103, INFINITY, F, 0x1p103);
    EXPECT("F + ulp32/2 - tiny", F + 0x1p103 - 0x1p50, F, F, 0x1p103, -0x1p50);
    EXPECT("F + ulp32/2 + tiny", F + 0x1p103, INFINITY, F, 0x1p103, 0x1p-1000);
    EXPECT("2^128", 0x1p128, INFINITY, 0x1p127, 0x1p127);
    /* f32 subnormals: min 2^-149; 2^-150 is a tie to 0 (even), 3*2^-150 -> 2^-148 */
    EXPECT("2^-150", 0x1p-150, 0.0, 0x1p-150);
    EXPECT("2^-150+tiny", 0x1p-150 + 0x1p-1074, 0x1p-149, 0x1p-150, 0x1p-1074);
    EXPECT("3*2^-150", 0x3p-150, 0x1p-148, 0x1p-149, 0x1p-150);
    EXPECT("-2^-150", -0x1p-150, -0.0, -0x1p-150);
    EXPECT("-(2^-150+tiny)", -0x1p-150 - 0x1p-1074, -0x1p-149, -0x1p-150, -0x1p-1074);
    EXPECT("f32 min normal tie", 0x1p-126 - 0x1p-150, 0x1p-126, 0x1p-126, -0x1p-150);
}

static void test_halfway(void)
{
    /* f64 ties: 1 + 2^-53 is halfway between 1 (even) and 1 + 2^-52 (odd) */
    EXPECT("1+2^-53", 1.0, 1.0, 1.0, 0x1p-53);
    EXPECT("1+3*2^-53", 1.0 + 0x1p-51, 1.0, 1.0, 0x1p-52, 0x1p-53); /* odd -> up */
    EXPECT("1+2^-53+tiny", 1.0 + 0x1p-52, 1.0, 1.0, 0x1p-53, 0x1p-1074);
    EXPECT("1+2^-53-tiny", 1.0, 1.0, 1.0, 0x1p-53, -0x1p-1074);
    EXPECT("-1-2^-53", -1.0, -1.0, -1.0, -0x1p-53);
    EXPECT("-1-3*2^-53", -1.0 - 0x1p-51, -1.0, -1.0, -0x1p-52, -0x1p-53);
    EXPECT("2^53+1", 0x1p53, 0x1p53, 0x1p53, 1.0);
    EXPECT("2^53+3", 0x1p53 + 4, 0x1p53, 0x1p53, 2.0, 1.0);
    /* f32 ties, rounded directly: 1 + 2^-24 ties to 1; with a far-away bit it
     * must go up, which a detour through f64 (1 + 2^-24 exactly) would lose */
    EXPECT("1+2^-24", 1.0 + 0x1p-24, 1.0, 1.0, 0x1p-24);
    EXPECT("1+3*2^-24", 1.0 + 0x3p-24, 1.0 + 0x1p-22, 1.0, 0x1p-23, 0x1p-24);
    EXPECT("1+2^-24+2^-80 (no double rounding)", 1.0 + 0x1p-24, 1.0 + 0x1p-23, 1.0, 0x1p-24, 0x1p-80);
    EXPECT("1+2^-24-2^-80", 1.0 + 0x1p-24, 1.0, 1.0, 0x1p-24, -0x1p-80);
    EXPECT("-(1+2^-24+2^-80)", -1.0 - 0x1p-24, -1.0 - 0x1p-23, -1.0, -0x1p-24, -0x1p-80);
    EXPECT("1+2^-24+2^-1074", 1.0 + 0x1p-24, 1.0 + 0x1p-23, 1.0, 0x1p-24, 0x1p-1074);
    EXPECT("2^24+1", 0x1p24 + 1, 0x1p24, 0x1p24, 1.0);
    EXPECT("2^24+3", 0x1p24 + 3, 0x1p24 + 4, 0x1p24, 2.0, 1.0);
    /* f64 tie that the f32 rounding sees as an ordinary value */
    EXPECT("1+2^-23+2^-53", 1.0 + 0x1p-23, 1.0 + 0x1p-23, 1.0, 0x1p-23, 0x1p-53);

    /* generated ties at every scale, both parities, both signs */
    uint64_t s = 12345;
    for (int i = 0; i < 3000; ++i) {
        double y = ref_rand_double(&s, -1000, 1000);
        int e;
        frexp(y, &e);
        double half64 = ldexp(1.0, e - 54); /* half an ulp of y */
        double v1[3] = {y, half64, 0};
        check("f64 tie", v1, 2);
        v1[1] = -half64;
        check("f64 tie below", v1, 2);
        v1[2] = ref_rand(&s) & 1 ? ldexp(1.0, e - 200) : -ldexp(1.0, e - 200);
        check("f64 near tie", v1, 3);
        float yf = (float)ldexp(y, -e) * 1.0f; /* a float in [0.5, 1) */
        double yd = ldexp((double)yf, (int)(ref_rand(&s) % 200) - 100);
        frexp(yd, &e);
        double half32 = ldexp(1.0, e - 25);
        double v2[3] = {yd, half32, ldexp(1.0, e - 90)};
        check("f32 tie", v2, 2);
        check("f32 tie + sticky", v2, 3);
        v2[2] = -v2[2];
        check("f32 tie - sticky", v2, 3);
    }
}

static void test_tiny_long_sums(void)
{
    /* 200000 terms of size up to 2^1000 that cancel pairwise, in a shuffled
     * order, plus three subnormals: the true value is 3 * 2^-1074 + ... */
    enum { N = 200003 };
    static double v[N + 1];
    uint64_t s = 777;
    size_t n = 0;
    for (; n + 1 < N - 3; n += 2) {
        v[n] = ref_rand_double(&s, -100, 1000);
        v[n + 1] = -v[n];
    }
    v[n++] = 0x1p-1074;
    v[n++] = 0x1p-1073;
    v[n++] = -0x1p-1072;
    for (size_t i = n - 1; i > 0; --i) {
        size_t j = ref_rand(&s) % (i + 1);
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    expect("long cancelling sum, tiny result", v, n, -0x1p-1074, -0.0);
    /* the same with one small normal left over */
    v[n] = 0x1p-1020;
    check("long cancelling sum + 2^-1020", v, n + 1);
}

static void test_random(void)
{
    uint64_t s = 20240601;
    double v[300];
    for (int c = 0; c < 6000; ++c) {
        size_t n = 1 + ref_rand(&s) % (c < 5000 ? 40 : 300);
        int kind = (int)(ref_rand(&s) % 4);
        int elo, ehi;
        switch (kind) {
        case 0: /* the whole range, subnormals included */
            elo = -1074;
            ehi = 1023;
            break;
        case 1: /* around 1 */
            elo = -60;
            ehi = 60;
            break;
        case 2: /* near overflow */
            elo = 1000;
            ehi = 1023;
            break;
        default: /* subnormal and near-subnormal */
            elo = -1074;
            ehi = -1000;
            break;
        }
        for (size_t i = 0; i < n; ++i) {
            uint64_t h = ref_rand(&s) % 8;
            if (i > 0 && h == 0)
                v[i] = -v[ref_rand(&s) % i]; /* a cancelling partner */
            else
                v[i] = ref_rand_double(&s, elo, ehi);
        }
        check("random", v, n);
    }
}

/* Unnormalised states (limbs anywhere in int64 range, as headroom allows)
 * round like the value they stand for. */
static void test_unnormalised(void)
{
    uint64_t s = 4242;
    mpfr_t t;
    mpfr_init2(t, REF_PREC);
    for (int c = 0; c < 2000; ++c) {
        gr_xacc_t x;
        gr_xacc_zero(&x);
        ref_sum_t r;
        ref_init(&r);
        int lo = (int)(ref_rand(&s) % 60), span = 1 + (int)(ref_rand(&s) % 8);
        for (int k = lo; k < lo + span && k < GR_XACC_LIMBS; ++k) {
            int64_t v = (int64_t)(ref_rand(&s) >> (1 + ref_rand(&s) % 60));
            if (ref_rand(&s) & 1)
                v = -v;
            x.limb[k] = v;
            mpfr_set_si(t, v, MPFR_RNDN);
            mpfr_mul_2si(t, t, 32 * k - GR_XACC_BIAS, MPFR_RNDN);
            ASSERT(mpfr_add(r.acc, r.acc, t, MPFR_RNDN) == 0);
            r.n++;
        }
        double w64 = ref_f64(&r), w32 = ref_f32(&r);
        if (mpfr_zero_p(r.acc))
            w64 = w32 = 0.0;
        for (int pass = 0; pass < 2; ++pass) {
            double g64 = gr_xacc_to_double(&x), g32 = (double)gr_xacc_to_float(&x);
            if (memcmp(&g64, &w64, 8) || memcmp(&g32, &w32, 8))
                GR_TEST_FAIL_("unnormalised case %d pass %d: f64 %a want %a, f32 %a want %a", c, pass, g64, w64, g32,
                              w32);
            gr_xacc_normalize(&x);
            for (int k = 0; k < GR_XACC_LIMBS - 1; ++k)
                ASSERT(x.limb[k] >= 0 && x.limb[k] < (1ll << 32));
        }
        ref_clear(&r);
    }
    mpfr_clear(t);
}

static void test_nonfinite_ignored(void)
{
    /* non-finite values are the caller's business: the state is unchanged */
    gr_xacc_t x;
    gr_xacc_zero(&x);
    gr_xacc_add_double(&x, 2.5);
    gr_xacc_add_double(&x, INFINITY);
    gr_xacc_add_double(&x, -INFINITY);
    gr_xacc_add_double(&x, NAN);
    gr_xacc_add_double(&x, -0.0);
    gr_xacc_sub_double(&x, INFINITY);
    ASSERT_BITS_EQ(gr_xacc_to_double(&x), 2.5);
    gr_xacc_t z;
    gr_xacc_zero(&z);
    ASSERT_BITS_EQ(gr_xacc_to_double(&z), 0.0);
    ASSERT_BITS_EQ((double)gr_xacc_to_float(&z), 0.0);
    ASSERT_EQ_I(gr_xacc_sign(&z), 0);
}

/* MPFR exponent ranges (significand in [0.5, 1)): f16 subnormals from 2^-24,
 * largest below 2^16; bf16 from 2^-133, below 2^128. */
static double ref_f16(const ref_sum_t *r) { return ref_round(r, 11, -23, 16); }
static double ref_bf16(const ref_sum_t *r) { return ref_round(r, 8, -132, 128); }

static void check_half(const char *name, const double *x, size_t n)
{
    ++n_cases;
    ref_sum_t r;
    ref_init(&r);
    gr_xacc_t a;
    gr_xacc_zero(&a);
    for (size_t i = 0; i < n; ++i) {
        ref_add(&r, x[i]);
        gr_xacc_add_double(&a, x[i]);
    }
    for (int bf = 0; bf < 2; ++bf) {
        double want = bf ? ref_bf16(&r) : ref_f16(&r);
        if (want == 0 && mpfr_zero_p(r.acc))
            want = 0.0; /* a zero state is +0 (the partial layer applies the -0.0 rule) */
        double got = gr_xacc_round_dtype(&a, bf ? GR_C_BF16 : GR_C_F16);
        if (memcmp(&got, &want, sizeof(double)) != 0)
            fail_case(name, x, n, bf ? "bf16" : "f16", got, want);
        /* the result is a value of the type */
        if (isfinite(got)) {
            uint16_t h = gr_f32_to_half_bits((float)got, bf);
            ASSERT((double)gr_half_bits_to_f32(h, bf) == got);
        }
    }
    ref_clear(&r);
}

#define CHECK_HALF(name, ...)                                   \
    do {                                                        \
        const double v_[] = {__VA_ARGS__};                      \
        check_half(name, v_, sizeof(v_) / sizeof(v_[0]));       \
    } while (0)

static void test_half_rounding(void)
{
    /* ties at every f16 / bf16 binade: 1 + half an ulp (to even, down), 1 + 3 half ulps (up) */
    for (int e = -24; e <= 15; ++e) {
        double u16 = ldexp(1.0, e - 10 < -24 ? -24 : e - 10), u8 = ldexp(1.0, e - 7);
        double b = ldexp(1.0, e);
        CHECK_HALF("f16 tie down", b, u16 / 2);
        CHECK_HALF("f16 tie up", b, 3 * u16 / 2);
        CHECK_HALF("f16 near tie", b, u16 / 2, ldexp(1.0, -60));
        CHECK_HALF("f16 below tie", b, u16 / 2, -ldexp(1.0, -60));
        CHECK_HALF("bf16 tie down", b, u8 / 2);
        CHECK_HALF("bf16 tie up", b, 3 * u8 / 2);
        CHECK_HALF("bf16 near tie", -b, -u8 / 2, -ldexp(1.0, -90));
    }
    /* overflow: f16 max 65504; 65520 (the tie above it) and beyond round to Inf */
    CHECK_HALF("f16 max", 65504.0);
    CHECK_HALF("f16 max + 15.99", 65504.0, 15.99);
    CHECK_HALF("f16 tie to inf", 65504.0, 16.0);
    CHECK_HALF("f16 -tie to -inf", -65504.0, -16.0);
    CHECK_HALF("f16 over then back", 65504.0, 65504.0, -65504.0);
    CHECK_HALF("f16 far over", 1e6, 1e6);
    CHECK_HALF("bf16 max", 0x1.fep127);
    CHECK_HALF("bf16 tie to inf", 0x1.fep127, 0x1p119);
    CHECK_HALF("bf16 below tie", 0x1.fep127, 0x1p119, -0x1p60);
    CHECK_HALF("bf16 far over", 0x1p127, 0x1p127, 0x1p127);
    /* subnormals */
    CHECK_HALF("f16 2^-25 tie to 0", 0x1p-25);
    CHECK_HALF("f16 3*2^-25 tie to even", 0x1.8p-24);
    CHECK_HALF("f16 just above 2^-25", 0x1p-25, 0x1p-60);
    CHECK_HALF("f16 -tiny to -0", -0x1p-30);
    CHECK_HALF("f16 largest subnormal", 0x1.ff8p-15);
    CHECK_HALF("f16 subnormal tie up to normal", 0x1.ff8p-15, 0x1p-25);
    CHECK_HALF("bf16 2^-134 tie to 0", 0x1p-134);
    CHECK_HALF("bf16 subnormals", 0x1p-133, 0x1p-133, 0x1p-134);
    CHECK_HALF("bf16 smallest normal", 0x1p-126, -0x1p-133);
    /* cancellation: big terms cancel, the small rest rounds */
    CHECK_HALF("f16 cancel", 60000.0, 0x1.8p-24, -60000.0);
    CHECK_HALF("f16 cancel to 0", 1000.0, -1000.0);
    CHECK_HALF("bf16 cancel", 0x1p100, 0x1.23p-120, -0x1p100, 0x1p-133);
    CHECK_HALF("mixed", 1.0, 0x1p-11, 0x1p-40, -0x1p-70);
    /* random: half values (their sums need more than the type's precision) */
    uint64_t seed = 99;
    for (int rep = 0; rep < 3000; ++rep) {
        double v[64];
        size_t n = 1 + ref_rand(&seed) % 64;
        int bf = rep & 1;
        for (size_t i = 0; i < n; ++i) {
            uint16_t h = (uint16_t)ref_rand(&seed);
            if (bf ? (h & 0x7F80u) == 0x7F80u : (h & 0x7C00u) == 0x7C00u)
                h &= bf ? 0xBFFFu : 0xBBFFu; /* no Inf, NaN */
            if (rep % 3 == 0) /* narrow exponents: more carries and ties */
                h = (uint16_t)((h & (bf ? 0x807Fu : 0x83FFu)) | (bf ? 0x3F80u : 0x3C00u));
            v[i] = (double)gr_half_bits_to_f32(h, bf);
        }
        check_half(bf ? "random bf16 values" : "random f16 values", v, n);
    }
}

int main(void)
{
    test_half_rounding();
    test_nonfinite_ignored();
    test_cancellation();
    test_exponent_range();
    test_halfway();
    test_tiny_long_sums();
    test_random();
    test_unnormalised();
    printf("xacc vs MPFR: %ld cases ok\n", n_cases);
    return 0;
}
