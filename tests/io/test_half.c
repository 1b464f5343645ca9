/*
 * test_half.c - f16 and bf16 widening (src/gr_half.h) on all 65536 bit
 * patterns of each, against the value the format defines, computed in double.
 */
#include "gr_half.h"
#include "test.h"

static float bits_to_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

int main(void)
{
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
    printf("f16/bf16 widening: ok\n");
    return 0;
}
