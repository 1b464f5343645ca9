/* test_xacc_i64.c - gr_xacc_to_i64 at the int64 bounds and one past them. */
#include "gr_xacc.h"
#include "test.h"

static int to_i64(const gr_xacc_t *x, int64_t *v)
{
    *v = 12345;
    return gr_xacc_to_i64(x, v);
}

static gr_xacc_t from_i128(__int128 v)
{
    gr_xacc_t x;
    gr_xacc_zero(&x);
    gr_xacc_add_i128(&x, (uint64_t)v, (int64_t)(v >> 64));
    return x;
}

static void fits(__int128 v)
{
    gr_xacc_t x = from_i128(v);
    int64_t got;
    if (!to_i64(&x, &got) || (__int128)got != v)
        GR_TEST_FAIL_("%lld should convert", (long long)v);
    gr_xacc_normalize(&x);
    if (!to_i64(&x, &got) || (__int128)got != v)
        GR_TEST_FAIL_("%lld should convert (normalised)", (long long)v);
}

static void does_not_fit(__int128 v, const char *what)
{
    gr_xacc_t x = from_i128(v);
    int64_t got;
    if (to_i64(&x, &got))
        GR_TEST_FAIL_("%s converted to %lld", what, (long long)got);
}

int main(void)
{
    fits(0);
    fits(1);
    fits(-1);
    fits(INT64_MAX);
    fits(INT64_MIN);
    fits(INT64_MAX - 1);
    fits(INT64_MIN + 1);
    fits((__int128)1 << 32);
    fits(-((__int128)1 << 32));
    fits(((__int128)1 << 32) - 1);
    does_not_fit((__int128)INT64_MAX + 1, "INT64_MAX + 1");
    does_not_fit((__int128)INT64_MIN - 1, "INT64_MIN - 1");
    does_not_fit((__int128)UINT64_MAX, "2^64 - 1");
    does_not_fit((__int128)1 << 64, "2^64");
    does_not_fit(-((__int128)1 << 64), "-2^64");
    does_not_fit(((__int128)1 << 100) + 5, "2^100 + 5");
    does_not_fit(-((__int128)1 << 126), "-2^126");

    /* built from doubles and mixed pieces */
    gr_xacc_t x;
    int64_t v;
    gr_xacc_zero(&x);
    gr_xacc_add_double(&x, -0x1p63);
    ASSERT(to_i64(&x, &v) && v == INT64_MIN);
    gr_xacc_add_double(&x, -1.0);
    ASSERT(!to_i64(&x, &v));
    gr_xacc_zero(&x);
    gr_xacc_add_double(&x, 0x1p63);
    ASSERT(!to_i64(&x, &v));
    gr_xacc_add_i128(&x, UINT64_MAX, -1); /* -1 */
    ASSERT(to_i64(&x, &v) && v == INT64_MAX);
    /* fractions are not integers */
    gr_xacc_zero(&x);
    gr_xacc_add_double(&x, 0.5);
    ASSERT(!to_i64(&x, &v));
    gr_xacc_add_double(&x, 0.5);
    ASSERT(to_i64(&x, &v) && v == 1);
    gr_xacc_add_double(&x, 0x1p-1074);
    ASSERT(!to_i64(&x, &v));
    gr_xacc_sub_double(&x, 0x1p-1074);
    gr_xacc_sub_double(&x, 3.0);
    ASSERT(to_i64(&x, &v) && v == -2);
    /* a huge value that cancels back into range */
    gr_xacc_add_double(&x, 1e300);
    ASSERT(!to_i64(&x, &v));
    gr_xacc_sub_double(&x, 1e300);
    ASSERT(to_i64(&x, &v) && v == -2);
    /* many INT64_MIN pieces, unnormalised, summing back to INT64_MIN */
    gr_xacc_zero(&x);
    for (int i = 0; i < 1000; ++i)
        gr_xacc_add_i128(&x, (uint64_t)INT64_MIN, -1);
    for (int i = 0; i < 999; ++i)
        gr_xacc_add_i128(&x, (uint64_t)INT64_MAX, 0), gr_xacc_add_i128(&x, 1, 0);
    ASSERT(to_i64(&x, &v) && v == INT64_MIN);
    printf("xacc_to_i64: ok\n");
    return 0;
}
