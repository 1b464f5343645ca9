/*
 * test_half.c - f16 and bf16 (src/core/gr_half.h): widening on all 65536 bit
 * patterns of each, against the value the format defines, computed in double;
 * narrowing f32 -> f16 / bf16 against a reference that searches the sorted
 * half values (nearest, ties to the even pattern, 2^16 / 2^128 as the value
 * past the largest so overflow rounds as IEEE says): every half round-trips,
 * every midpoint between neighbours and the f32 values next to it, and a
 * sweep of every 251st f32 pattern; plus the named boundaries.
 */
#include "gr_half.h"
#include "test.h"

static float bits_to_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

/* Value of the positive half pattern h (0 .. inf pattern); inf counts as the next power of two. */
static double half_val_calc(uint32_t h, int bf16)
{
    if (bf16) {
        int exp = (h >> 7) & 0xFF, frac = h & 0x7F;
        if (exp == 0xFF)
            return ldexp(1.0, 128);
        return exp ? ldexp(1.0 + frac / 128.0, exp - 127) : ldexp(frac, -133);
    }
    int exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
    if (exp == 0x1F)
        return 65536.0;
    return exp ? ldexp(1.0 + frac / 1024.0, exp - 15) : ldexp(frac, -24);
}

static double val_table[2][0x7F81];

static double half_val(uint32_t h, int bf16) { return val_table[bf16][h]; }

static void fill_tables(void)
{
    for (uint32_t h = 0; h <= 0x7C00u; ++h)
        val_table[0][h] = half_val_calc(h, 0);
    for (uint32_t h = 0; h <= 0x7F80u; ++h)
        val_table[1][h] = half_val_calc(h, 1);
}

/* Reference narrowing of a finite or infinite, non-NaN f32 by search. */
static uint16_t ref_narrow(float x, int bf16)
{
    uint32_t inf = bf16 ? 0x7F80u : 0x7C00u;
    uint16_t sign = signbit(x) ? 0x8000u : 0;
    double a = fabs((double)x);
    if (isinf(x))
        return (uint16_t)(sign | inf);
    /* largest h in [0, inf] with half_val(h) <= a */
    uint32_t lo = 0, hi = inf;
    if (a >= half_val(inf, bf16))
        return (uint16_t)(sign | inf);
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (half_val(mid, bf16) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dl = a - half_val(lo, bf16), dh = half_val(hi, bf16) - a; /* exact: both in double */
    uint32_t r = dl < dh ? lo : dh < dl ? hi : ((lo & 1u) ? hi : lo);
    return (uint16_t)(sign | r);
}

static void check_narrow(float x)
{
    for (int bf16 = 0; bf16 < 2; ++bf16) {
        uint16_t got = gr_f32_to_half_bits(x, bf16), want = ref_narrow(x, bf16);
        if (got != want)
            GR_TEST_FAIL_("%s of f32 %a (0x%08x): got 0x%04x, want 0x%04x", bf16 ? "bf16" : "f16", (double)x,
                          (unsigned)float_bits(x), (unsigned)got, (unsigned)want);
    }
}

static void test_narrowing(void)
{
    fill_tables();
    /* every half value round-trips; NaNs stay NaN, quiet, sign and payload kept */
    for (uint32_t h = 0; h < 65536; ++h) {
        for (int bf16 = 0; bf16 < 2; ++bf16) {
            float w = gr_half_bits_to_f32((uint16_t)h, bf16);
            uint16_t back = gr_f32_to_half_bits(w, bf16);
            uint32_t quiet = bf16 ? 0x0040u : 0x0200u;
            if (isnan(w)) {
                if (back != (h | quiet))
                    GR_TEST_FAIL_("%s NaN 0x%04x came back as 0x%04x", bf16 ? "bf16" : "f16", (unsigned)h,
                                  (unsigned)back);
            } else if (back != h) {
                GR_TEST_FAIL_("%s 0x%04x -> %a -> 0x%04x", bf16 ? "bf16" : "f16", (unsigned)h, (double)w,
                              (unsigned)back);
            }
        }
    }
    /* midpoints between neighbouring positive halves (ties) and the f32s around them */
    for (int bf16 = 0; bf16 < 2; ++bf16) {
        uint32_t inf = bf16 ? 0x7F80u : 0x7C00u;
        for (uint32_t h = 0; h < inf; ++h) {
            double mid = (half_val(h, bf16) + half_val(h + 1, bf16)) / 2;
            if (mid >= 0x1p128)
                continue; /* not an f32 */
            float m = (float)mid;
            ASSERT((double)m == mid); /* every midpoint is an f32 */
            uint32_t mb = float_bits(m);
            for (int d = -3; d <= 3; ++d) {
                uint32_t b = mb + (uint32_t)d;
                float x;
                memcpy(&x, &b, sizeof(x));
                check_narrow(x);
                check_narrow(-x);
            }
        }
    }
    /* a sweep over every exponent and many fractions */
    for (uint64_t b = 0; b < 0x100000000ull; b += 251) {
        float x;
        uint32_t u = (uint32_t)b;
        memcpy(&x, &u, sizeof(x));
        if (!isnan(x))
            check_narrow(x);
    }
    /* the named boundaries */
    ASSERT(gr_f32_to_f16_bits(65504.0f) == 0x7BFF);
    ASSERT(gr_f32_to_f16_bits(65519.0f) == 0x7BFF);
    ASSERT(gr_f32_to_f16_bits(65520.0f) == 0x7C00);  /* the tie above the largest rounds to Inf */
    ASSERT(gr_f32_to_f16_bits(-65520.0f) == 0xFC00);
    ASSERT(gr_f32_to_f16_bits(1e30f) == 0x7C00);
    ASSERT(gr_f32_to_f16_bits(0x1p-24f) == 0x0001);  /* smallest subnormal */
    ASSERT(gr_f32_to_f16_bits(0x1p-25f) == 0x0000);  /* tie with 0: even */
    ASSERT(gr_f32_to_f16_bits(0x1.000002p-25f) == 0x0001);
    ASSERT(gr_f32_to_f16_bits(-0x1p-26f) == 0x8000); /* -0 */
    ASSERT(gr_f32_to_f16_bits(0x1.8p-24f) == 0x0002); /* 1.5 ulp: tie to even 2 */
    ASSERT(gr_f32_to_f16_bits(0x1.ff8p-15f) == 0x03FF); /* largest subnormal */
    ASSERT(gr_f32_to_f16_bits(0x1.ffcp-15f) == 0x0400); /* tie: up to the smallest normal */
    ASSERT(gr_f32_to_f16_bits(1.0f + 0x1p-11f) == 0x3C00); /* tie, even below */
    ASSERT(gr_f32_to_f16_bits(1.0f + 3 * 0x1p-11f) == 0x3C02); /* tie, even above */
    ASSERT(gr_f32_to_bf16_bits(1.0f + 0x1p-8f) == 0x3F80);
    ASSERT(gr_f32_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3F82);
    ASSERT(gr_f32_to_bf16_bits(0x1.fep127f) == 0x7F7F);  /* largest bf16 */
    ASSERT(gr_f32_to_bf16_bits(0x1.ff0000p127f) == 0x7F80); /* tie above it: Inf */
    ASSERT(gr_f32_to_bf16_bits(0x1.fefffep127f) == 0x7F7F);
    ASSERT(gr_f32_to_bf16_bits(0x1p-133f) == 0x0001);  /* smallest bf16 subnormal */
    ASSERT(gr_f32_to_bf16_bits(0x1p-134f) == 0x0000);  /* tie with 0 */
    ASSERT(gr_f32_to_bf16_bits(-INFINITY) == 0xFF80);
    ASSERT(gr_f32_to_f16_bits(NAN) == 0x7E00 || gr_f32_to_f16_bits(NAN) == 0xFE00);
    {
        float snan;
        uint32_t sb = 0xFF800001u; /* negative signalling NaN, payload 1 */
        memcpy(&snan, &sb, sizeof(snan));
        uint16_t h = gr_f32_to_f16_bits(snan), b = gr_f32_to_bf16_bits(snan);
        ASSERT((h & 0xFE00u) == 0xFE00u); /* sign, Inf exponent, quiet bit */
        ASSERT((b & 0xFFC0u) == 0xFFC0u);
    }
}

int main(void)
{
    test_narrowing();
    for (uint32_t h = 0; h < 65536; ++h) {
        int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
        float got = bits_to_float(gr_f16_to_f32_bits((uint16_t)h));
        if (exp == 0x1F) {
            if (frac == 0)
                ASSERT(isinf(got) && (signbit(got) != 0) == sign);
            else
                ASSERT(isnan(got));
            continue;
        }
        double want = exp ? ldexp(1.0 + frac / 1024.0, exp - 15) : ldexp(frac, -24);
        if (sign)
            want = -want;
        if ((double)got != want || (signbit(got) != 0) != sign)
            GR_TEST_FAIL_("f16 0x%04x: %a != %a", (unsigned)h, (double)got, want);
    }
    for (uint32_t h = 0; h < 65536; ++h) {
        int sign = (h >> 15) & 1, exp = (h >> 7) & 0xFF, frac = h & 0x7F;
        float got = bits_to_float(gr_bf16_to_f32_bits((uint16_t)h));
        if (exp == 0xFF) {
            ASSERT(frac ? isnan(got) : (isinf(got) && (signbit(got) != 0) == sign));
            continue;
        }
        double want = exp ? ldexp(1.0 + frac / 128.0, exp - 127) : ldexp(frac, -133);
        if (sign)
            want = -want;
        if ((double)got != want || (signbit(got) != 0) != sign)
            GR_TEST_FAIL_("bf16 0x%04x: %a != %a", (unsigned)h, (double)got, want);
    }
    /* unaligned little-endian input */
    unsigned char buf[7] = {0xAA, 0x00, 0x3C, 0x00, 0xC0, 0x80, 0x3F};
    float out[3];
    gr_half_widen(buf + 1, out, 3, 0);
    ASSERT(out[0] == 1.0f && out[1] == -2.0f && out[2] == 1.875f); /* f16 0x3C00, 0xC000, 0x3F80 */
    gr_half_widen(buf + 1, out, 3, 1);
    ASSERT(out[0] == 0.0078125f && out[1] == -2.0f && out[2] == 1.0f); /* the same bits as bf16 */
    printf("f16/bf16 widening and narrowing: ok\n");
    return 0;
}
