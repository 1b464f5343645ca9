/*
 * test_cpu_exact_fast.c - the cpu backend's exact fast paths (the plain f64
 * sum of an f32 block within an exponent span, and two levels of biased f64
 * accumulators per block: cpu_kernels_body.h), on every instruction-set level
 * this build and CPU have, against the term-by-term accumulation they replace
 * (gr_cpu_exact_f_reference), bit for bit, on thousands of random cases built
 * to break them: huge and tiny magnitudes in one block, exponent spans around
 * the plain sum's limit, cancellation, signed zeros, subnormals, values near
 * 2^1024, NaN and Inf, every floating dtype and sum-like op, lengths around
 * the block size. Compared: the exact sum (normalised limbs), the NaN / Inf
 * counts, whether a zero sum is -0.0, and the rounded result. The fast paths
 * must also have been taken (else this test would compare the reference with
 * itself).
 */
#include "cpu_kernels.h"
#include "gr_internal.h"
#include "test.h"

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) { return gr_mix64(rng_state++); }
static int rnd_int(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

/* +-m 2^e with a random 53-bit (or, short, 8-bit) significand; e in [-1074, 1023] */
static double rnd_scaled(int e, int short_mant)
{
    if (e > 1023)
        e = 1023;
    if (e < -1074)
        e = -1074;
    double m = short_mant ? (double)(128 + rnd() % 128) / 128.0 : 1.0 + (double)(rnd() >> 12) * 0x1p-52;
    double v = ldexp(m, e);
    return (rnd() & 1) ? -v : v;
}

enum { C_NARROW, C_WIDE, C_CANCEL, C_ZEROS, C_SUBNORMAL, C_OVERFLOW, C_SPECIAL, C_UNIFORM, C_MIXED, C_SPAN, C_COUNT };
static const char *const class_names[C_COUNT] = {"narrow", "wide", "cancel", "zeros", "subnormal", "overflow",
                                                 "special", "uniform", "mixed", "span"};

/* sign: 0 as generated, 1 all >= 0, 2 all <= 0 (one-signed sums drift the most) */
static double gen(int cls, uint64_t i, int E, int k, int sign)
{
    double v = 0;
    switch (cls) {
    case C_NARROW:
        v = rnd_scaled(E - (int)(rnd() % (uint64_t)(k + 1)), (int)(rnd() & 1));
        break;
    case C_WIDE: {
        uint64_t b = rnd();
        if (((b >> 52) & 0x7FF) == 0x7FF)
            b ^= 1ull << 62; /* finite */
        v = bits_to_double(b);
        break;
    }
    case C_CANCEL: {
        static double last;
        if (i % 3 == 1)
            v = -last;
        else if (i % 3 == 2)
            v = rnd_scaled(E - 60 - (int)(rnd() % 40), 0);
        else
            v = last = rnd_scaled(E - (int)(rnd() % (uint64_t)(k + 1)), 0);
        break;
    }
    case C_ZEROS:
        v = (rnd() % 8 == 0) ? 0.0 : -0.0;
        if (k == 0)
            v = -0.0;
        break;
    case C_SUBNORMAL:
        v = bits_to_double(rnd() & ((1ull << 52) - 1)) * ((rnd() & 1) ? -1 : 1);
        if (rnd() % 16 == 0)
            v = rnd_scaled(-1022 - (int)(rnd() % 40), 0);
        break;
    case C_OVERFLOW:
        v = rnd_scaled(1023 - (int)(rnd() % 8), 0);
        break;
    case C_SPECIAL:
        v = rnd_scaled(E - (int)(rnd() % 20), 0);
        if (rnd() % 512 == 0) {
            const double sp[3] = {NAN, INFINITY, -INFINITY};
            v = sp[rnd() % 3];
        }
        break;
    case C_UNIFORM:
        v = (double)(rnd() >> 11) * 0x1p-53;
        break;
    case C_SPAN: /* near 2^(E+1), now and then one k + 16 .. k + 19 binades lower (k: 0-4): f32 blocks
                    at the plain sum's span limit (18), on both sides; long mantissas, so a sum that
                    does not fit 53 bits rounds */
        v = rnd() % 64 ? rnd_scaled(E, 0) : rnd_scaled(E - 16 - (k % 5) - (int)(rnd() % 4), 0);
        break;
    default: /* mostly narrow, rarely one tiny or huge element */
        v = rnd_scaled(E - (int)(rnd() % 10), 0);
        if (rnd() % 1000 == 0)
            v = rnd_scaled(E - 100 - (int)(rnd() % 900), 0);
        break;
    }
    if (sign && !(v != v))
        v = sign == 1 ? fabs(v) : -fabs(v);
    return v;
}

static uint64_t pick_n(void)
{
    static const uint64_t edges[] = {0, 1, 7, 8, 9, 15, 16, 2047, 2048, 2049, 4095, 4096, 4103, 6144};
    if (rnd() % 2)
        return edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
    return rnd() % 7000;
}

int main(void)
{
    const int dtypes[4] = {GR_C_F32, GR_C_F64, GR_C_F16, GR_C_BF16};
    const int ops[4] = {GR_C_SUM, GR_C_ABSSUM, GR_C_SUMSQ, GR_C_POWSUM};
    static double xd[8192];
    static float xf[8192];
    static uint16_t xh[8192];
    const gr_cpu_kernels_t *levels[GR_CPU_ISA_COUNT];
    int nlev = 0;
    for (int i = 0; i < GR_CPU_ISA_COUNT; ++i)
        if ((levels[nlev] = gr_cpu_kernels_isa((gr_cpu_isa_t)i)) != NULL)
            nlev++;
    uint64_t fast_by_class[GR_CPU_ISA_COUNT][C_COUNT] = {{0}}, cases = 0, terms = 0;
    for (int iter = 0; iter < 6000; ++iter) {
        int cls = iter % C_COUNT;
        int dt = dtypes[rnd() % 4];
        int op = ops[rnd() % 4];
        int pw = op == GR_C_POWSUM ? rnd_int(1, 4) : op == GR_C_SUMSQ ? 2 : 1;
        uint64_t n = pick_n();
        if (cls == C_SPAN)
            dt = rnd() % 4 ? GR_C_F32 : dt; /* mostly the dtype it is made for */
        int E = rnd_int(-1060, 1020), k = rnd_int(0, 70), sign = (int)(rnd() % 3);
        if (dt == GR_C_F32 && cls != C_WIDE && cls != C_OVERFLOW && cls != C_SUBNORMAL)
            E = rnd_int(-150, 127); /* mostly inside f32's range, the edges included */
        if ((cls == C_UNIFORM || cls == C_MIXED || cls == C_SPAN) && sign == 0)
            sign = 1;
        const void *in;
        for (uint64_t i = 0; i < n; ++i) {
            double v = gen(cls, i, E, k, sign);
            xd[i] = v;
            xf[i] = (float)v;
            xh[i] = (uint16_t)rnd();
            if (cls == C_ZEROS)
                xh[i] = (uint16_t)(xd[i] == 0 && signbit(xd[i]) ? 0x8000u : 0u);
            else if (cls == C_UNIFORM || cls == C_MIXED || cls == C_NARROW)
                xh[i] = (uint16_t)(0x3C00u + (rnd() % 0x400u)); /* [1, 2) in f16, [1, 2^8) in bf16 */
        }
        in = dt == GR_C_F64 ? (const void *)xd : dt == GR_C_F32 ? (const void *)xf : (const void *)xh;
        /* a random start: the blocks fall elsewhere than at 0 */
        uint64_t off = n > 0 ? rnd() % (n < 9 ? n : 9) : 0;
        size_t esz = dt == GR_C_F64 ? 8 : dt == GR_C_F32 ? 4 : 2;
        const void *p_in = (const char *)in + off * esz;
        uint64_t m = n - off;

        gr_partial_t pr;
        gr_partial_init(&pr);
        gr_cpu_exact_f_reference(&pr, p_in, dt, op, pw, m);
        pr.count = (int64_t)m;
        gr_xacc_normalize(&pr.sum);
        gr_desc_t d;
        gr_desc_init(&d);
        d.dtype = (gr_dtype_t)dt;
        d.op.kind = (gr_op_kind_t)op;
        d.op.power = pw;
        d.mode = GR_MODE_EXACT;
        gr_value_t vr;
        gr_partial_finish(&pr, &d, &vr);
        cases++;
        terms += m;
        for (int l = 0; l < nlev; ++l) {
            gr_partial_t pf;
            gr_partial_init(&pf);
            fast_by_class[l][cls] += levels[l]->exact_f(&pf, p_in, dt, op, pw, m);
            pf.count = (int64_t)m;
            gr_xacc_normalize(&pf.sum);
            if (memcmp(&pf.sum, &pr.sum, sizeof(pf.sum)) != 0 || pf.nan != pr.nan || pf.pinf != pr.pinf ||
                pf.ninf != pr.ninf || (pf.nonnegzero > 0) != (pr.nonnegzero > 0)) {
                GR_TEST_FAIL_("case %d, level %s (%s, dtype %d, op %d^%d, n %llu from %llu): fast %a nan %lld "
                              "+inf %lld -inf %lld nonneg %lld; reference %a nan %lld +inf %lld -inf %lld "
                              "nonneg %lld",
                              iter, gr_cpu_isa_name(levels[l]->isa), class_names[cls], dt, op, pw,
                              (unsigned long long)m, (unsigned long long)off, gr_xacc_to_double(&pf.sum),
                              (long long)pf.nan, (long long)pf.pinf, (long long)pf.ninf, (long long)pf.nonnegzero,
                              gr_xacc_to_double(&pr.sum), (long long)pr.nan, (long long)pr.pinf,
                              (long long)pr.ninf, (long long)pr.nonnegzero);
            }
            gr_value_t vf;
            gr_partial_finish(&pf, &d, &vf);
            ASSERT_BITS_EQ(vf.f, vr.f);
        }
    }
    printf("%llu cases, %llu terms, %d level(s)\n", (unsigned long long)cases, (unsigned long long)terms, nlev);
    for (int l = 0; l < nlev; ++l) {
        printf("%s: terms on a fast path by class:", gr_cpu_isa_name(levels[l]->isa));
        for (int c = 0; c < C_COUNT; ++c)
            printf(" %s %llu", class_names[c], (unsigned long long)fast_by_class[l][c]);
        printf("\n");
        /* the classes a block can be proved exact for must have used the fast paths */
        const int must[] = {C_NARROW, C_UNIFORM, C_MIXED, C_CANCEL, C_ZEROS, C_SPECIAL, C_SPAN};
        for (size_t c = 0; c < sizeof(must) / sizeof(must[0]); ++c)
            if (fast_by_class[l][must[c]] == 0)
                GR_TEST_FAIL_("level %s: no %s block took a fast path", gr_cpu_isa_name(levels[l]->isa),
                              class_names[must[c]]);
    }
    return 0;
}
