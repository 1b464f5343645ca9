/*
 * test_cpu_ieee.c - NaN, +-Inf, -0.0 and empty input through gr_reduce_host
 * on the cpu backend, fast and exact mode, f32 and f64: IEEE/numpy rules.
 */
#include "cpu_ctx.h"

#include <float.h>

#define N 200003 /* four chunks of 2^16, the last one short */

static void *make(gr_dtype_t t, uint64_t n, double fill)
{
    void *p = malloc(n * 8 + 8);
    ASSERT(p);
    for (uint64_t i = 0; i < n; ++i) {
        if (t == GR_F32)
            ((float *)p)[i] = (float)fill;
        else
            ((double *)p)[i] = fill;
    }
    return p;
}

static void put(void *p, gr_dtype_t t, uint64_t i, double x)
{
    if (t == GR_F32)
        ((float *)p)[i] = (float)x;
    else
        ((double *)p)[i] = x;
}

static void expect_bits(gr_value_t v, double want, const char *what, gr_dtype_t t, gr_mode_t m)
{
    if (!v.valid || memcmp(&v.f, &want, sizeof(double)) != 0)
        GR_TEST_FAIL_("%s (%s %s): got %.17g (%a) valid %d, want %.17g (%a)", what, gr_dtype_name(t),
                      gr_mode_name(m), v.f, v.f, v.valid, want, want);
}

static void expect_nan(gr_value_t v, const char *what, gr_dtype_t t, gr_mode_t m)
{
    if (!v.valid || !isnan(v.f))
        GR_TEST_FAIL_("%s (%s %s): got %.17g, want NaN", what, gr_dtype_name(t), gr_mode_name(m), v.f);
}

/* Positions that land in different chunks, lanes and the short tail. */
static const uint64_t where[] = {0, 1, 7, 8, 65535, 65536, 131075, N - 1};
#define NWHERE (sizeof(where) / sizeof(where[0]))

static void test_specials(gr_ctx_t ctx, gr_dtype_t t, gr_mode_t m)
{
    double big = t == GR_F32 ? FLT_MAX : DBL_MAX;
    for (size_t a = 0; a < NWHERE; ++a) {
        /* one NaN anywhere in 1.0s: sum, abssum, min, max are NaN */
        void *p = make(t, N, 1.0);
        put(p, t, where[a], NAN);
        expect_nan(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), "NaN in sum", t, m);
        expect_nan(test_host(ctx, p, N, t, GR_OP_ABSSUM, 1, m), "NaN in abssum", t, m);
        expect_nan(test_host(ctx, p, N, t, GR_OP_MIN, 1, m), "NaN in min", t, m);
        expect_nan(test_host(ctx, p, N, t, GR_OP_MAX, 1, m), "NaN in max", t, m);
        if (m == GR_MODE_EXACT)
            ASSERT_EQ_U(test_host(ctx, p, N, t, GR_OP_SUM, 1, m).nan_count, 1);
        /* NaN beside +Inf is still NaN */
        put(p, t, where[(a + 3) % NWHERE], INFINITY);
        expect_nan(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), "NaN and +Inf", t, m);
        free(p);

        /* +Inf: sum +Inf; max +Inf; min finite */
        p = make(t, N, 1.0);
        put(p, t, where[a], INFINITY);
        expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), INFINITY, "+Inf sum", t, m);
        expect_bits(test_host(ctx, p, N, t, GR_OP_MAX, 1, m), INFINITY, "+Inf max", t, m);
        expect_bits(test_host(ctx, p, N, t, GR_OP_MIN, 1, m), 1.0, "+Inf min", t, m);
        /* +Inf and -Inf anywhere else (same chunk or not): NaN */
        for (size_t b = 0; b < NWHERE; ++b) {
            if (b == a)
                continue;
            put(p, t, where[b], -INFINITY);
            expect_nan(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), "+Inf and -Inf", t, m);
            /* |.| makes both +Inf */
            expect_bits(test_host(ctx, p, N, t, GR_OP_ABSSUM, 1, m), INFINITY, "abssum +-Inf", t, m);
            expect_bits(test_host(ctx, p, N, t, GR_OP_MIN, 1, m), -INFINITY, "min -Inf", t, m);
            put(p, t, where[b], 1.0);
        }
        free(p);

        /* -Inf alone */
        p = make(t, N, -2.0);
        put(p, t, where[a], -INFINITY);
        put(p, t, where[(a + 1) % NWHERE], -INFINITY);
        expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), -INFINITY, "-Inf sum", t, m);
        expect_bits(test_host(ctx, p, N, t, GR_OP_ABSSUM, 1, m), INFINITY, "-Inf abssum", t, m);
        if (t == GR_F32 || m == GR_MODE_FAST)
            expect_bits(test_host(ctx, p, N, t, GR_OP_SUMSQ, 1, m), INFINITY, "-Inf sumsq", t, m);
        expect_bits(test_host(ctx, p, N, t, GR_OP_MAX, 1, m), -2.0, "-Inf max", t, m);
        free(p);
    }
    /* finite values whose sum leaves the range: +Inf, in one chunk or across */
    void *p = make(t, N, 0.0);
    put(p, t, 0, big);
    put(p, t, 1, big);
    expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), t == GR_F32 && m == GR_MODE_FAST ? 2.0 * FLT_MAX : INFINITY,
                "big+big", t, m);
    if (m == GR_MODE_EXACT) {
        /* the exact sum comes back to range: finite */
        put(p, t, 70000, -big);
        expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), big, "big+big-big", t, m);
        put(p, t, 70000, big);
        put(p, t, 140000, -big);
        put(p, t, 140001, -big);
        put(p, t, 140002, -big);
        put(p, t, 140003, -big);
        expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), -big, "3 big - 4 big", t, m);
        put(p, t, 140003, -0.0);
        put(p, t, 140002, 0.0);
        expect_bits(test_host(ctx, p, N, t, GR_OP_SUM, 1, m), big, "3 big - 2 big", t, m);
    }
    free(p);
}

static void test_zeros(gr_ctx_t ctx, gr_dtype_t t, gr_mode_t m)
{
    static const uint64_t ns[] = {1, 2, 9, 65536, 65537, N};
    for (size_t s = 0; s < sizeof(ns) / sizeof(ns[0]); ++s) {
        uint64_t n = ns[s];
        void *p = make(t, n, -0.0);
        expect_bits(test_host(ctx, p, n, t, GR_OP_SUM, 1, m), -0.0, "all -0.0 sum", t, m);
        expect_bits(test_host(ctx, p, n, t, GR_OP_ABSSUM, 1, m), 0.0, "all -0.0 abssum", t, m);
        expect_bits(test_host(ctx, p, n, t, GR_OP_MIN, 1, m), -0.0, "all -0.0 min", t, m);
        expect_bits(test_host(ctx, p, n, t, GR_OP_MAX, 1, m), -0.0, "all -0.0 max", t, m);
        if (t == GR_F32 || m == GR_MODE_FAST) /* (-0)^2 = +0 */
            expect_bits(test_host(ctx, p, n, t, GR_OP_SUMSQ, 1, m), 0.0, "all -0.0 sumsq", t, m);
        /* one +0.0 anywhere makes the sum +0.0 */
        put(p, t, n - 1, 0.0);
        expect_bits(test_host(ctx, p, n, t, GR_OP_SUM, 1, m), n == 1 ? 0.0 : 0.0, "-0.0 and +0.0 sum", t, m);
        expect_bits(test_host(ctx, p, n, t, GR_OP_MIN, 1, m), n == 1 ? 0.0 : -0.0, "-0.0 and +0.0 min", t, m);
        expect_bits(test_host(ctx, p, n, t, GR_OP_MAX, 1, m), 0.0, "-0.0 and +0.0 max", t, m);
        /* x + (-x) cancels to +0.0 */
        if (n >= 2) {
            put(p, t, 0, 3.5);
            put(p, t, n - 1, -3.5);
            expect_bits(test_host(ctx, p, n, t, GR_OP_SUM, 1, m), 0.0, "x - x", t, m);
        }
        free(p);
    }
}

static void test_empty(gr_ctx_t ctx)
{
    double dummy = 42;
    for (int m = 0; m < 2; ++m)
        for (int t = 0; t < GR_DTYPE_COUNT; ++t)
            for (int k = 0; k < GR_OP_COUNT; ++k) {
                if (m == GR_MODE_EXACT && (t == GR_F32 || t == GR_F64) &&
                    (k == GR_OP_POWSUM || (k == GR_OP_SUMSQ && t == GR_F64)))
                    continue;
                for (int withptr = 0; withptr < 2; ++withptr) {
                    gr_value_t v = test_host(ctx, withptr ? (void *)&dummy : NULL, 0, (gr_dtype_t)t,
                                             (gr_op_kind_t)k, 2, (gr_mode_t)m);
                    ASSERT(v.valid);
                    ASSERT_EQ_U(v.count, 0);
                    ASSERT_EQ_I(v.overflow, 0);
                    int is_int = t == GR_I32 || t == GR_I64;
                    ASSERT_EQ_I(v.is_integer, is_int);
                    if (k == GR_OP_MIN || k == GR_OP_MAX)
                        continue; /* no identity that means anything */
                    if (is_int)
                        ASSERT_EQ_I(v.i, 0);
                    ASSERT_BITS_EQ(v.f, 0.0); /* numpy: sum([]) == +0.0 */
                }
            }
}

static void test_bad_calls(gr_ctx_t ctx)
{
    gr_desc_t d = test_desc(GR_F64, GR_OP_SUM, 1, GR_MODE_FAST);
    gr_value_t v;
    double x[2] = {1, 2};
    ASSERT_EQ_I(gr_reduce_host(ctx, NULL, 5, &d, &v, NULL), GR_ERR_INVALID_ARG);
    ASSERT(!v.valid);
    /* a cpu context cannot read device pointers */
    ASSERT_EQ_I(gr_reduce_device(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    ASSERT(!v.valid);
    d.root = 1; /* one rank only */
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    d.root = -1;
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    d = test_desc(GR_F64, GR_OP_SUMSQ, 1, GR_MODE_EXACT); /* exact since issue 20 */
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
    ASSERT_BITS_EQ(v.f, 5.0);
    d = test_desc(GR_F64, GR_OP_POWSUM, 3, GR_MODE_EXACT);
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_ERR_UNSUPPORTED);
    d = test_desc(GR_F64, GR_OP_DOT, 1, GR_MODE_FAST); /* two arrays: gr_dot_host */
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    d = test_desc(GR_F64, GR_OP_NRM2, 1, GR_MODE_FAST); /* device memory: a cpu context cannot */
    ASSERT_EQ_I(gr_reduce_device(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    d = test_desc(GR_F64, GR_OP_POWSUM, 0, GR_MODE_FAST);
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_ERR_INVALID_ARG);
    /* real-valued generators have no integer form */
    gr_buffer_t b = NULL;
    ASSERT_EQ_I(gr_buffer_create_synthetic(ctx, GR_I32, GR_GEN_UNIFORM, 1, 10, &b), GR_ERR_UNSUPPORTED);
    ASSERT(b == NULL);
    ASSERT_EQ_I(gr_buffer_create_synthetic(ctx, GR_I64, GR_GEN_NORMAL, 1, 10, &b), GR_ERR_UNSUPPORTED);
    ASSERT(b == NULL);
    /* a buffer reduced with another dtype */
    ASSERT_EQ_I(gr_buffer_create_synthetic(ctx, GR_F32, GR_GEN_ONES, 1, 10, &b), GR_SUCCESS);
    d = test_desc(GR_F64, GR_OP_SUM, 1, GR_MODE_FAST);
    ASSERT_EQ_I(gr_reduce_buffer(ctx, b, &d, &v, NULL), GR_ERR_INVALID_ARG);
    d.dtype = GR_F32;
    ASSERT_EQ_I(gr_reduce_buffer(ctx, b, &d, &v, NULL), GR_SUCCESS);
    ASSERT_BITS_EQ(v.f, 10.0);
    uint64_t lo, hi;
    gr_buffer_range(b, &lo, &hi);
    ASSERT_EQ_U(lo, 0);
    ASSERT_EQ_U(hi, 10);
    ASSERT_EQ_I(gr_buffer_dtype(b), GR_F32);
    gr_buffer_destroy(b);
    /* the context still works afterwards */
    gr_value_t ok = test_host(ctx, x, 2, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST);
    ASSERT_BITS_EQ(ok.f, 3.0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    gr_ctx_t ctx = test_cpu_ctx(3);
    for (int m = 0; m < 2; ++m)
        for (int t = GR_F32; t <= GR_F64; ++t) {
            test_specials(ctx, (gr_dtype_t)t, (gr_mode_t)m);
            test_zeros(ctx, (gr_dtype_t)t, (gr_mode_t)m);
        }
    test_empty(ctx);
    test_bad_calls(ctx);
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    printf("cpu_ieee: ok\n");
    return 0;
}
