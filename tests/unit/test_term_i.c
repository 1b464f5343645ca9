/* test_term_i.c - integer terms x, |x|, x^2, x^P and their overflow flags. */
#include "gr_common.h"
#include "test.h"

/* term and flag from a fresh flag */
static int64_t term(int op, int p, int64_t x, int *ovf)
{
    int32_t f = 0;
    int64_t r = gr_term_i(op, p, x, &f);
    *ovf = f;
    return r;
}

static void fits(int op, int p, int64_t x, int64_t want)
{
    int ovf;
    int64_t r = term(op, p, x, &ovf);
    if (ovf || r != want)
        GR_TEST_FAIL_("op %d p %d x %lld: got %lld ovf %d, want %lld", op, p, (long long)x, (long long)r, ovf,
                      (long long)want);
}

static void overflows(int op, int p, int64_t x)
{
    int ovf;
    term(op, p, x, &ovf);
    if (!ovf)
        GR_TEST_FAIL_("op %d p %d x %lld: no overflow flagged", op, p, (long long)x);
}

int main(void)
{
    fits(GR_C_SUM, 1, INT64_MIN, INT64_MIN);
    fits(GR_C_SUM, 1, INT64_MAX, INT64_MAX);
    fits(GR_C_SUM, 1, -5, -5);
    fits(GR_C_ABSSUM, 1, -5, 5);
    fits(GR_C_ABSSUM, 1, INT64_MAX, INT64_MAX);
    fits(GR_C_ABSSUM, 1, -INT64_MAX, INT64_MAX);
    overflows(GR_C_ABSSUM, 1, INT64_MIN);
    fits(GR_C_SUMSQ, 1, 0, 0);
    fits(GR_C_SUMSQ, 1, -3, 9);
    fits(GR_C_SUMSQ, 1, 3037000499ll, 9223372030926249001ll); /* floor(sqrt(2^63-1)) */
    fits(GR_C_SUMSQ, 1, -3037000499ll, 9223372030926249001ll);
    overflows(GR_C_SUMSQ, 1, 3037000500ll);
    overflows(GR_C_SUMSQ, 1, -3037000500ll);
    overflows(GR_C_SUMSQ, 1, 1ll << 32);
    overflows(GR_C_SUMSQ, 1, INT64_MIN);
    overflows(GR_C_SUMSQ, 1, INT64_MAX);
    /* sumsq ignores .power */
    fits(GR_C_SUMSQ, 7, 3, 9);
    fits(GR_C_POWSUM, 1, INT64_MIN, INT64_MIN);
    fits(GR_C_POWSUM, 1, INT64_MAX, INT64_MAX);
    fits(GR_C_POWSUM, 2, -7, 49);
    fits(GR_C_POWSUM, 3, -7, -343);
    fits(GR_C_POWSUM, 3, 9, 729);
    /* -2^63 is a cube and a 7th power that fits; +2^63 does not */
    fits(GR_C_POWSUM, 3, -2097152, INT64_MIN);
    overflows(GR_C_POWSUM, 3, 2097152);
    fits(GR_C_POWSUM, 3, 2097151, 2097151ll * 2097151ll * 2097151ll);
    fits(GR_C_POWSUM, 7, -512, INT64_MIN);
    overflows(GR_C_POWSUM, 7, 512);
    fits(GR_C_POWSUM, 8, 181, 1151936657823500641ll); /* 181^8 */
    overflows(GR_C_POWSUM, 8, 256);  /* 2^64: the multiplication itself overflows */
    overflows(GR_C_POWSUM, 8, 255);  /* 1.8e19: fits uint64, not int64 */
    overflows(GR_C_POWSUM, 8, -255); /* even power of a negative: positive, too big */
    overflows(GR_C_POWSUM, 2, INT64_MIN);
    overflows(GR_C_POWSUM, 5, 1ll << 40);
    for (int p = 1; p <= 8; ++p) {
        fits(GR_C_POWSUM, p, 0, 0);
        fits(GR_C_POWSUM, p, 1, 1);
        fits(GR_C_POWSUM, p, -1, (p & 1) ? -1 : 1);
        fits(GR_C_POWSUM, p, -2, (p & 1) ? -(1ll << p) : (1ll << p));
    }
    /* the flag is sticky: a later term that fits never clears it */
    int32_t f = 1;
    ASSERT_EQ_I(gr_term_i(GR_C_POWSUM, 3, 2, &f), 8);
    ASSERT_EQ_I(f, 1);
    f = 0;
    ASSERT_EQ_I(gr_term_i(GR_C_POWSUM, 3, 2, &f), 8);
    ASSERT_EQ_I(f, 0);

    /* 128-bit accumulation */
    uint64_t lo = 0;
    int64_t hi = 0;
    gr_acc128_add(&lo, &hi, INT64_MAX);
    gr_acc128_add(&lo, &hi, INT64_MAX);
    gr_acc128_add(&lo, &hi, 2);
    ASSERT_EQ_U(lo, 0);
    ASSERT_EQ_I(hi, 1); /* 2^64 */
    gr_acc128_add(&lo, &hi, -1);
    ASSERT_EQ_U(lo, UINT64_MAX);
    ASSERT_EQ_I(hi, 0);
    lo = 0;
    hi = 0;
    gr_acc128_add(&lo, &hi, INT64_MIN);
    gr_acc128_add(&lo, &hi, INT64_MIN);
    ASSERT_EQ_U(lo, 0);
    ASSERT_EQ_I(hi, -1); /* -2^64 */
    gr_acc128_add(&lo, &hi, 5);
    ASSERT_EQ_U(lo, 5);
    ASSERT_EQ_I(hi, -1);
    gr_acc128_add128(&lo, &hi, UINT64_MAX - 4, 0); /* + (2^64 - 5) */
    ASSERT_EQ_U(lo, 0);
    ASSERT_EQ_I(hi, 0);
    printf("term_i: ok\n");
    return 0;
}
