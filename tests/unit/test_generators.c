/*
 * test_generators.c - the synthetic generators of gr_common.h: pure in
 * (seed, index), the documented value sets, and the statistics and
 * representability each generator promises.
 */
#include "gr_common.h"
#include "test.h"

#include <float.h>

static int is_f32(double x) { return (double)(float)x == x; }

/* x * 2^k is an integer (x lies on a grid of 2^-k). */
static int on_grid(double x, int k) { double y = ldexp(x, k); return y == floor(y); }

static void test_hash_known_answer(void)
{
    /* SplitMix64's first output for state 0: the mixer is the published one. */
    ASSERT_EQ_U(gr_mix64(0), 0xE220A8397B1DCDAFull);
    /* keys depend on the seed and the stream */
    gr_gen_keys_t a = gr_gen_make_keys(1), b = gr_gen_make_keys(2);
    ASSERT(a.k0 != b.k0 && a.k0 != a.k1 && a.k1 != a.k2);
}

static void test_pure(void)
{
    static const int gens[] = {GR_C_ONES, GR_C_IOTA, GR_C_UNIFORM, GR_C_NORMAL, GR_C_RANDINT, GR_C_STRESS};
    static const uint64_t idx[] = {0, 1, 2, 3, 999, 1000, 65535, 65536, 123456789, (1ull << 32) + 5, (1ull << 40) + 7,
                                   UINT64_MAX - 3, UINT64_MAX};
    for (uint64_t seed = 0; seed < 3; ++seed) {
        gr_gen_keys_t k1 = gr_gen_make_keys(seed);
        for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); ++g) {
            /* backwards, then forwards with fresh keys: no hidden state */
            double back[sizeof(idx) / sizeof(idx[0])];
            for (size_t j = sizeof(idx) / sizeof(idx[0]); j-- > 0;)
                back[j] = gr_gen_float(gens[g], GR_C_F64, k1, idx[j]);
            gr_gen_keys_t k2 = gr_gen_make_keys(seed);
            for (size_t j = 0; j < sizeof(idx) / sizeof(idx[0]); ++j) {
                ASSERT_BITS_EQ(gr_gen_float(gens[g], GR_C_F64, k2, idx[j]), back[j]);
                ASSERT_BITS_EQ(gr_gen_float(gens[g], GR_C_F32, k2, idx[j]),
                               gr_gen_float(gens[g], GR_C_F32, k1, idx[j]));
                if (gens[g] != GR_C_UNIFORM && gens[g] != GR_C_NORMAL) {
                    ASSERT_EQ_I(gr_gen_int(gens[g], GR_C_I64, k2, idx[j]), gr_gen_int(gens[g], GR_C_I64, k1, idx[j]));
                    ASSERT_EQ_I(gr_gen_int(gens[g], GR_C_I32, k2, idx[j]), gr_gen_int(gens[g], GR_C_I32, k1, idx[j]));
                }
            }
        }
    }
    /* another seed gives another dataset */
    gr_gen_keys_t s1 = gr_gen_make_keys(1), s2 = gr_gen_make_keys(2);
    int same = 0;
    for (uint64_t i = 0; i < 1000; ++i)
        same += gr_gen_float(GR_C_UNIFORM, GR_C_F64, s1, i) == gr_gen_float(GR_C_UNIFORM, GR_C_F64, s2, i);
    ASSERT(same < 5);
}

static void test_ones_iota_randint(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(42);
    static const uint64_t idx[] = {0, 1, 999, 1000, 1001, 123456789, (1ull << 40) + 7, UINT64_MAX};
    for (size_t j = 0; j < sizeof(idx) / sizeof(idx[0]); ++j) {
        uint64_t i = idx[j];
        for (int t = GR_C_F32; t <= GR_C_F64; ++t) {
            ASSERT_BITS_EQ(gr_gen_float(GR_C_ONES, t, k, i), 1.0);
            ASSERT_BITS_EQ(gr_gen_float(GR_C_IOTA, t, k, i), (double)(i % 1000));
        }
        for (int t = GR_C_I32; t <= GR_C_I64; ++t) {
            ASSERT_EQ_I(gr_gen_int(GR_C_ONES, t, k, i), 1);
            ASSERT_EQ_I(gr_gen_int(GR_C_IOTA, t, k, i), (int64_t)(i % 1000));
        }
    }
    ASSERT_EQ_I(gr_gen_int(GR_C_IOTA, GR_C_I64, k, (1ull << 40) + 7), 783); /* 1099511627783 mod 1000 */
    /* randint: digits 0..9, the same number in every dtype, roughly uniform */
    uint64_t hist[10] = {0};
    const uint64_t n = 200000;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t v = gr_gen_int(GR_C_RANDINT, GR_C_I32, k, i);
        ASSERT(v >= 0 && v <= 9);
        ASSERT_EQ_I(gr_gen_int(GR_C_RANDINT, GR_C_I64, k, i), v);
        ASSERT_BITS_EQ(gr_gen_float(GR_C_RANDINT, GR_C_F32, k, i), (double)v);
        ASSERT_BITS_EQ(gr_gen_float(GR_C_RANDINT, GR_C_F64, k, i), (double)v);
        hist[v]++;
    }
    for (int d = 0; d < 10; ++d) /* expected 20000, sd ~134 */
        ASSERT(hist[d] > 19000 && hist[d] < 21000);
}

static void test_uniform(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(7);
    const uint64_t n = 1000000;
    double s32 = 0, s64 = 0;
    double lo32 = 1, hi32 = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double a = gr_gen_float(GR_C_UNIFORM, GR_C_F32, k, i);
        double b = gr_gen_float(GR_C_UNIFORM, GR_C_F64, k, i);
        ASSERT(a >= 0.0 && a < 1.0);
        ASSERT(b >= 0.0 && b < 1.0);
        ASSERT(is_f32(a));
        ASSERT(on_grid(a, 24)); /* 24 random bits */
        ASSERT(on_grid(b, 53));
        /* the f32 value is the f64 value's top 24 bits */
        ASSERT_BITS_EQ(a, ldexp(floor(ldexp(b, 24)), -24));
        s32 += a;
        s64 += b;
        lo32 = a < lo32 ? a : lo32;
        hi32 = a > hi32 ? a : hi32;
    }
    /* mean 1/2, sd of the mean 1/sqrt(12 n) ~ 2.9e-4 */
    ASSERT(fabs(s32 / (double)n - 0.5) < 2e-3);
    ASSERT(fabs(s64 / (double)n - 0.5) < 2e-3);
    ASSERT(lo32 < 1e-5 && hi32 > 1 - 1e-5);
    /* the f64 stream uses more than 24 bits */
    int fine = 0;
    for (uint64_t i = 0; i < 100; ++i)
        fine += !on_grid(gr_gen_float(GR_C_UNIFORM, GR_C_F64, k, i), 24);
    ASSERT(fine > 90);
}

static void test_normal(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(3);
    const uint64_t n = 1000000;
    double s = 0, s2 = 0, lo = 0, hi = 0;
    uint64_t beyond3 = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double x = gr_gen_float(GR_C_NORMAL, GR_C_F64, k, i);
        ASSERT_BITS_EQ(gr_gen_float(GR_C_NORMAL, GR_C_F32, k, i), x);
        ASSERT(x >= -6.0 && x <= 6.0);
        ASSERT(is_f32(x));
        ASSERT(on_grid(x, 17));
        s += x;
        s2 += x * x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        beyond3 += fabs(x) > 3.0;
    }
    double mean = s / (double)n;
    double sd = sqrt(s2 / (double)n - mean * mean);
    /* sd of the sample mean 1e-3, of the sample sd ~7e-4 */
    if (!(fabs(mean) < 5e-3))
        GR_TEST_FAIL_("normal mean %g", mean);
    if (!(fabs(sd - 1.0) < 5e-3))
        GR_TEST_FAIL_("normal sd %g", sd);
    ASSERT(lo < -4.0 && hi > 4.0);
    /* Gaussian tail P(|x|>3) = 0.27%; Irwin-Hall(12) is a little lighter */
    ASSERT(beyond3 > 1500 && beyond3 < 3500);
}

static void test_stress_float(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(11);
    const uint64_t triples = 200000;
    int emin = 1000, emax = -1000, neg = 0, tneg = 0;
    for (uint64_t j = 0; j < triples; ++j) {
        double a = gr_gen_float(GR_C_STRESS, GR_C_F64, k, 3 * j);
        double b = gr_gen_float(GR_C_STRESS, GR_C_F64, k, 3 * j + 1);
        double t = gr_gen_float(GR_C_STRESS, GR_C_F64, k, 3 * j + 2);
        /* f32 and f64 datasets hold the same numbers */
        ASSERT_BITS_EQ(gr_gen_float(GR_C_STRESS, GR_C_F32, k, 3 * j), a);
        ASSERT_BITS_EQ(gr_gen_float(GR_C_STRESS, GR_C_F32, k, 3 * j + 2), t);
        ASSERT(is_f32(a) && is_f32(b) && is_f32(t));
        ASSERT_BITS_EQ(a + b, 0.0); /* the big pair cancels exactly */
        ASSERT_BITS_EQ(b, -a);
        ASSERT(fabs(a) >= 0x1p-64 && fabs(a) < 0x1p64);
        ASSERT(fabs(t) >= 0x1p-40 && fabs(t) < 0x1p-8);
        int e;
        frexp(a, &e);
        emin = e < emin ? e : emin;
        emax = e > emax ? e : emax;
        neg += a < 0;
        tneg += t < 0;
        ASSERT(on_grid(ldexp(fabs(a), 1 - e), 20)); /* mantissa on a 2^-20 grid */
    }
    ASSERT_EQ_I(emin, -63); /* frexp exponent: [1,2)*2^-64 -> e = -63 */
    ASSERT_EQ_I(emax, 64);
    ASSERT(neg > 90000 && neg < 110000);
    ASSERT(tneg > 90000 && tneg < 110000);
}

static void test_stress_int(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(5);
    const uint64_t triples = 200000;
    int64_t max32 = 0, max64 = 0;
    int tseen[19] = {0};
    for (uint64_t j = 0; j < triples; ++j) {
        int64_t a32 = gr_gen_int(GR_C_STRESS, GR_C_I32, k, 3 * j);
        int64_t b32 = gr_gen_int(GR_C_STRESS, GR_C_I32, k, 3 * j + 1);
        int64_t t32 = gr_gen_int(GR_C_STRESS, GR_C_I32, k, 3 * j + 2);
        int64_t a64 = gr_gen_int(GR_C_STRESS, GR_C_I64, k, 3 * j);
        int64_t b64 = gr_gen_int(GR_C_STRESS, GR_C_I64, k, 3 * j + 1);
        int64_t t64 = gr_gen_int(GR_C_STRESS, GR_C_I64, k, 3 * j + 2);
        ASSERT_EQ_I(a32 + b32, 0);
        ASSERT_EQ_I(a64 + b64, 0);
        ASSERT_EQ_I(t32, t64);
        ASSERT(t32 >= -9 && t32 <= 9);
        tseen[t32 + 9] = 1;
        int64_t m32 = a32 < 0 ? -a32 : a32, m64 = a64 < 0 ? -a64 : a64;
        ASSERT(m32 < (1ll << 30));
        ASSERT(m64 < (1ll << 62));
        max32 = m32 > max32 ? m32 : max32;
        max64 = m64 > max64 ? m64 : max64;
    }
    ASSERT(max32 >= (1ll << 29)); /* the ranges are used, not just bounded */
    ASSERT(max64 >= (1ll << 61));
    for (int v = 0; v < 19; ++v)
        ASSERT(tseen[v]);
}

int main(void)
{
    test_hash_known_answer();
    test_pure();
    test_ones_iota_randint();
    test_uniform();
    test_normal();
    test_stress_float();
    test_stress_int();
    printf("generators: ok\n");
    return 0;
}
