/*
 * test_cpu_closed_forms.c - the cpu backend through the public API on one
 * rank, against closed forms and exact integer references: ones, iota,
 * randint, integer stress, min/max, and int64 overflow reporting.
 */
#include "cpu_ctx.h"
#include "gr_common.h"

static const uint64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 999, 1000, 1001, 65535, 65536, 65537, 3 * 65536 + 5, 1000003};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* sum over i < n of (i mod 1000)^p, exactly */
static unsigned __int128 iota_powsum(uint64_t n, int p)
{
    unsigned __int128 block = 0, tail = 0;
    uint64_t r = n % 1000;
    for (uint64_t k = 0; k < 1000; ++k) {
        unsigned __int128 t = 1;
        for (int j = 0; j < p; ++j)
            t *= k;
        block += t;
        if (k < r)
            tail += t;
    }
    return block * (n / 1000) + tail;
}

/* exact mode rounds an f32 input's sum to f32; fast mode reports f64 */
static double rounded(int t, gr_mode_t m, double x) { return t == GR_F32 && m == GR_MODE_EXACT ? (double)(float)x : x; }

static void check_float(const gr_value_t *v, double want, uint64_t n, const char *what)
{
    if (!v->valid || v->is_integer || v->count != n || memcmp(&v->f, &want, sizeof(double)) != 0)
        GR_TEST_FAIL_("%s n=%llu: valid %d int %d count %llu f %.17g, want %.17g", what, (unsigned long long)n,
                      v->valid, v->is_integer, (unsigned long long)v->count, v->f, want);
}

static void check_int(const gr_value_t *v, int64_t want, uint64_t n, const char *what)
{
    if (!v->valid || !v->is_integer || v->overflow || v->count != n || v->i != want)
        GR_TEST_FAIL_("%s n=%llu: valid %d int %d ovf %d count %llu i %lld, want %lld", what,
                      (unsigned long long)n, v->valid, v->is_integer, v->overflow, (unsigned long long)v->count,
                      (long long)v->i, (long long)want);
}

static void test_ones(gr_ctx_t ctx)
{
    for (size_t s = 0; s < NSIZES; ++s) {
        uint64_t n = sizes[s];
        for (int m = 0; m < 2; ++m) {
            gr_mode_t mode = (gr_mode_t)m;
            for (int t = GR_F32; t <= GR_F64; ++t) {
                gr_value_t v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
                check_float(&v, (double)n, n, "ones sum");
                v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_ABSSUM, 1, mode);
                check_float(&v, (double)n, n, "ones abssum");
                if (t == GR_F32 || mode == GR_MODE_FAST) {
                    v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_SUMSQ, 1, mode);
                    check_float(&v, (double)n, n, "ones sumsq");
                }
                if (mode == GR_MODE_FAST) {
                    v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_POWSUM, 7, mode);
                    check_float(&v, (double)n, n, "ones powsum:7");
                }
                if (n > 0) {
                    v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_MIN, 1, mode);
                    check_float(&v, 1.0, n, "ones min");
                    v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_MAX, 1, mode);
                    check_float(&v, 1.0, n, "ones max");
                }
            }
            for (int t = GR_I32; t <= GR_I64; ++t) {
                gr_value_t v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
                check_int(&v, (int64_t)n, n, "ones int sum");
                ASSERT_BITS_EQ(v.f, (double)n);
                v = test_syn(ctx, GR_GEN_ONES, 1, n, (gr_dtype_t)t, GR_OP_POWSUM, 8, mode);
                check_int(&v, (int64_t)n, n, "ones int powsum:8");
            }
        }
    }
}

static void test_iota(gr_ctx_t ctx)
{
    for (size_t s = 0; s < NSIZES; ++s) {
        uint64_t n = sizes[s];
        int64_t s1 = (int64_t)iota_powsum(n, 1), s2 = (int64_t)iota_powsum(n, 2), s3 = (int64_t)iota_powsum(n, 3);
        int64_t mx = n == 0 ? 0 : (int64_t)(n - 1 < 999 ? n - 1 : 999);
        /* the documented closed form for the sum */
        ASSERT_EQ_I(s1, (int64_t)((n / 1000) * 499500 + (n % 1000) * (n % 1000 - (n % 1000 > 0)) / 2));
        for (int m = 0; m < 2; ++m) {
            gr_mode_t mode = (gr_mode_t)m;
            for (int t = GR_F32; t <= GR_F64; ++t) {
                /* every partial sum here is an integer below 2^53: exact in any mode */
                gr_value_t v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
                check_float(&v, rounded(t, mode, (double)s1), n, "iota sum");
                if (t == GR_F32 || mode == GR_MODE_FAST) {
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_SUMSQ, 1, mode);
                    check_float(&v, rounded(t, mode, (double)s2), n, "iota sumsq");
                }
                if (mode == GR_MODE_FAST) {
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_POWSUM, 3, mode);
                    check_float(&v, (double)s3, n, "iota powsum:3");
                }
                if (n > 0) {
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_MIN, 1, mode);
                    check_float(&v, 0.0, n, "iota min");
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_MAX, 1, mode);
                    check_float(&v, (double)mx, n, "iota max");
                }
            }
            for (int t = GR_I32; t <= GR_I64; ++t) {
                gr_value_t v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
                check_int(&v, s1, n, "iota int sum");
                v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_SUMSQ, 1, mode);
                check_int(&v, s2, n, "iota int sumsq");
                v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_POWSUM, 3, mode);
                check_int(&v, s3, n, "iota int powsum:3");
                if (n > 0) {
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_MIN, 1, mode);
                    check_int(&v, 0, n, "iota int min");
                    v = test_syn(ctx, GR_GEN_IOTA, 9, n, (gr_dtype_t)t, GR_OP_MAX, 1, mode);
                    check_int(&v, mx, n, "iota int max");
                }
            }
        }
    }
}

static void test_randint(gr_ctx_t ctx)
{
    const uint64_t n = 1000003, seed = 2;
    gr_gen_keys_t k = gr_gen_make_keys(seed);
    int64_t s1 = 0, s2 = 0, s3 = 0, mn = 9, mx = 0;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t x = gr_gen_int(GR_C_RANDINT, GR_C_I32, k, i);
        s1 += x;
        s2 += x * x;
        s3 += x * x * x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    ASSERT(s1 > 4400000 && s1 < 4600000); /* mean 4.5 */
    ASSERT_EQ_I(mn, 0);
    ASSERT_EQ_I(mx, 9);
    for (int m = 0; m < 2; ++m) {
        gr_mode_t mode = (gr_mode_t)m;
        for (int t = GR_I32; t <= GR_I64; ++t) {
            gr_value_t v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
            check_int(&v, s1, n, "randint sum");
            v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_SUMSQ, 1, mode);
            check_int(&v, s2, n, "randint sumsq");
            v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_POWSUM, 3, mode);
            check_int(&v, s3, n, "randint powsum:3"); /* seed 002's sum of cubes */
            v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_ABSSUM, 1, mode);
            check_int(&v, s1, n, "randint abssum");
            v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_MIN, 1, mode);
            check_int(&v, 0, n, "randint min");
            v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_MAX, 1, mode);
            check_int(&v, 9, n, "randint max");
        }
        for (int t = GR_F32; t <= GR_F64; ++t) {
            gr_value_t v = test_syn(ctx, GR_GEN_RANDINT, seed, n, (gr_dtype_t)t, GR_OP_SUM, 1, mode);
            check_float(&v, rounded(t, mode, (double)s1), n, "randint float sum");
        }
    }
}

static void test_int_stress(gr_ctx_t ctx)
{
    const uint64_t n = 300001, seed = 77;
    gr_gen_keys_t k = gr_gen_make_keys(seed);
    for (int t = GR_I32; t <= GR_I64; ++t) {
        int ct = t == GR_I32 ? GR_C_I32 : GR_C_I64;
        __int128 s1 = 0, sa = 0;
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (uint64_t i = 0; i < n; ++i) {
            int64_t x = gr_gen_int(GR_C_STRESS, ct, k, i);
            s1 += x;
            sa += x < 0 ? -(__int128)x : x;
            mn = x < mn ? x : mn;
            mx = x > mx ? x : mx;
        }
        /* n = 3j + 1: the t's and one unmatched B remain */
        __int128 ts = s1 - gr_gen_int(GR_C_STRESS, ct, k, n - 1);
        ASSERT(ts > -900000 && ts < 900000);
        gr_value_t v = test_syn(ctx, GR_GEN_STRESS, seed, n, (gr_dtype_t)t, GR_OP_SUM, 1, GR_MODE_FAST);
        check_int(&v, (int64_t)s1, n, "stress sum");
        v = test_syn(ctx, GR_GEN_STRESS, seed, n, (gr_dtype_t)t, GR_OP_MIN, 1, GR_MODE_FAST);
        check_int(&v, mn, n, "stress min");
        v = test_syn(ctx, GR_GEN_STRESS, seed, n, (gr_dtype_t)t, GR_OP_MAX, 1, GR_MODE_FAST);
        check_int(&v, mx, n, "stress max");
        v = test_syn(ctx, GR_GEN_STRESS, seed, n, (gr_dtype_t)t, GR_OP_ABSSUM, 1, GR_MODE_FAST);
        if (t == GR_I32) {
            check_int(&v, (int64_t)sa, n, "stress i32 abssum");
        } else {
            /* 2e5 values near 2^61: the sum of |x| does not fit int64 */
            ASSERT(sa > (__int128)INT64_MAX);
            ASSERT(v.valid && v.is_integer && v.overflow);
            ASSERT_BITS_EQ(v.f, (double)sa); /* the exact value, rounded once */
            /* i64 squares of values near 2^61 overflow as terms */
            v = test_syn(ctx, GR_GEN_STRESS, seed, n, GR_I64, GR_OP_SUMSQ, 1, GR_MODE_FAST);
            ASSERT(v.valid && v.is_integer && v.overflow);
        }
    }
}

/* Sums whose partial sums leave int64 although the result may not. */
static void test_int64_overflow(gr_ctx_t ctx)
{
    int64_t a[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
    gr_value_t v = test_host(ctx, a, 3, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    ASSERT(v.valid && v.is_integer && v.overflow);
    ASSERT_BITS_EQ(v.f, 0x1.8p+64); /* 3 (2^63 - 1) rounded to double */

    int64_t b[3] = {INT64_MAX, 1, -1};
    v = test_host(ctx, b, 3, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    check_int(&v, INT64_MAX, 3, "MAX+1-1");
    int64_t c[3] = {INT64_MIN, -1, 1};
    v = test_host(ctx, c, 3, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    check_int(&v, INT64_MIN, 3, "MIN-1+1");
    int64_t d[2] = {INT64_MIN, -1};
    v = test_host(ctx, d, 2, GR_I64, GR_OP_SUM, 1, GR_MODE_EXACT);
    ASSERT(v.valid && v.overflow);
    ASSERT_BITS_EQ(v.f, -0x1p63);
    int64_t e[2] = {INT64_MAX, 1};
    v = test_host(ctx, e, 2, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    ASSERT(v.valid && v.overflow);
    ASSERT_BITS_EQ(v.f, 0x1p63);

    /* across chunks and threads: 2^16 MAX then 2^16 MIN then 5 ones */
    const uint64_t n = 2 * 65536 + 5;
    int64_t *x = (int64_t *)malloc(n * sizeof(*x));
    ASSERT(x);
    for (uint64_t i = 0; i < n; ++i)
        x[i] = i < 65536 ? INT64_MAX : i < 131072 ? INT64_MIN : 1;
    v = test_host(ctx, x, n, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    check_int(&v, -65536 + 5, n, "chunks MAX, MIN");
    v = test_host(ctx, x, 65536 + 7, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST);
    ASSERT(v.valid && v.overflow);
    ASSERT_BITS_EQ(v.f, (double)((__int128)INT64_MAX * 65536 + (__int128)INT64_MIN * 7));
    v = test_host(ctx, x, n, GR_I64, GR_OP_MIN, 1, GR_MODE_FAST);
    check_int(&v, INT64_MIN, n, "i64 min");
    v = test_host(ctx, x, n, GR_I64, GR_OP_MAX, 1, GR_MODE_FAST);
    check_int(&v, INT64_MAX, n, "i64 max");
    /* abssum of INT64_MIN is a term overflow */
    v = test_host(ctx, x + 65536, 1, GR_I64, GR_OP_ABSSUM, 1, GR_MODE_FAST);
    ASSERT(v.valid && v.overflow);
    free(x);

    int32_t y[4] = {INT32_MAX, INT32_MIN, -7, INT32_MAX};
    v = test_host(ctx, y, 4, GR_I32, GR_OP_SUM, 1, GR_MODE_FAST);
    check_int(&v, (int64_t)INT32_MAX - 8, 4, "i32 sum");
    v = test_host(ctx, y, 4, GR_I32, GR_OP_MIN, 1, GR_MODE_FAST);
    check_int(&v, INT32_MIN, 4, "i32 min");
    v = test_host(ctx, y, 4, GR_I32, GR_OP_MAX, 1, GR_MODE_FAST);
    check_int(&v, INT32_MAX, 4, "i32 max");
    v = test_host(ctx, y, 4, GR_I32, GR_OP_POWSUM, 3, GR_MODE_FAST);
    ASSERT(v.valid && v.overflow); /* (2^31 - 1)^3 is a term beyond int64 */
    int32_t z[3] = {2097151, -2097152, 3};
    v = test_host(ctx, z, 3, GR_I32, GR_OP_POWSUM, 3, GR_MODE_FAST);
    check_int(&v, (int64_t)((__int128)2097151 * 2097151 * 2097151 - ((__int128)1 << 63) + 27), 3, "i32 cubes");
    v = test_host(ctx, y, 4, GR_I32, GR_OP_POWSUM, 4, GR_MODE_FAST);
    ASSERT(v.valid && v.overflow); /* (2^31)^4 = 2^124 */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    gr_ctx_t ctx = test_cpu_ctx(2);
    test_ones(ctx);
    test_iota(ctx);
    test_randint(ctx);
    test_int_stress(ctx);
    test_int64_overflow(ctx);
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    printf("cpu_closed_forms: ok\n");
    return 0;
}
