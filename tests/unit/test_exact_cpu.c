/*
 * test_exact_cpu.c - the cpu backend's exact mode through gr_reduce_host,
 * against the MPFR reference: sum and abssum of f64 and f32, sumsq of f32,
 * with NaN, +-Inf, signed zeros, subnormals, near-overflow values and
 * cancellation, on crafted and on random data (fixed seed). Runs on one rank.
 */
#include "cpu_ctx.h"
#include "mpfr_ref.h"

#include <float.h>

static gr_ctx_t ctx;
static long n_cases;

enum { OP_SUM, OP_ABSSUM, OP_SUMSQ };

/* x holds doubles; for f32 they are converted (callers pass f32 values). */
static void check(const char *name, const double *x, size_t n, gr_dtype_t t, int op)
{
    ++n_cases;
    ref_sum_t r;
    ref_init(&r);
    uint64_t nans = 0;
    void *buf = malloc(n * 8 + 8);
    ASSERT(buf);
    for (size_t i = 0; i < n; ++i) {
        double v = x[i];
        if (t == GR_F32) {
            ((float *)buf)[i] = (float)v;
            v = (double)(float)v;
        } else {
            ((double *)buf)[i] = v;
        }
        nans += isnan(v) != 0;
        ref_add(&r, op == OP_ABSSUM ? fabs(v) : op == OP_SUMSQ ? v * v : v);
    }
    double want = t == GR_F32 ? ref_f32(&r) : ref_f64(&r);
    gr_op_kind_t k = op == OP_ABSSUM ? GR_OP_ABSSUM : op == OP_SUMSQ ? GR_OP_SUMSQ : GR_OP_SUM;
    gr_value_t got = test_host(ctx, n ? buf : NULL, n, t, k, 1, GR_MODE_EXACT);
    int ok = got.valid && got.count == n && got.nan_count == nans &&
             (isnan(want) ? isnan(got.f) : memcmp(&got.f, &want, sizeof(double)) == 0);
    if (!ok) {
        fprintf(stderr, "case %s (%s %s, %zu terms):", name, gr_dtype_name(t), gr_op_name(k), n);
        for (size_t i = 0; i < n && i < 10; ++i)
            fprintf(stderr, " %a", t == GR_F32 ? (double)((float *)buf)[i] : ((double *)buf)[i]);
        fprintf(stderr, "%s\n", n > 10 ? " ..." : "");
        GR_TEST_FAIL_("got %.17g (%a) count %llu nan %llu, want %.17g (%a) count %zu nan %llu", got.f, got.f,
                      (unsigned long long)got.count, (unsigned long long)got.nan_count, want, want, n,
                      (unsigned long long)nans);
    }
    free(buf);
    ref_clear(&r);
}

/* every op that exact mode accepts for t */
static void check_all(const char *name, const double *x, size_t n, gr_dtype_t t)
{
    check(name, x, n, t, OP_SUM);
    check(name, x, n, t, OP_ABSSUM);
    if (t == GR_F32)
        check(name, x, n, t, OP_SUMSQ);
}

#define CASE(name, ...)                                                  \
    do {                                                                 \
        const double v_[] = {__VA_ARGS__};                               \
        check_all(name, v_, sizeof(v_) / sizeof(v_[0]), GR_F64);         \
        check_all(name, v_, sizeof(v_) / sizeof(v_[0]), GR_F32);         \
    } while (0)

static void test_crafted(void)
{
    const double M = DBL_MAX, F = FLT_MAX;
    check_all("empty", NULL, 0, GR_F64);
    check_all("empty", NULL, 0, GR_F32);
    CASE("-0", -0.0);
    CASE("-0,-0,-0", -0.0, -0.0, -0.0);
    CASE("-0,+0", -0.0, 0.0);
    CASE("+0,-0", 0.0, -0.0);
    CASE("1,-1", 1.0, -1.0);
    CASE("-1,1,-0", -1.0, 1.0, -0.0);
    CASE("NaN", NAN);
    CASE("1,NaN,2", 1.0, NAN, 2.0);
    CASE("NaN,NaN,Inf", NAN, NAN, INFINITY);
    CASE("Inf", INFINITY);
    CASE("-Inf,-1", -INFINITY, -1.0);
    CASE("Inf,-Inf", INFINITY, -INFINITY);
    CASE("Inf,Inf,1", INFINITY, INFINITY, 1.0);
    CASE("-Inf,M,M", -INFINITY, M, M);
    CASE("1e30,1,-1e30", 1e30, 1.0, -1e30);
    CASE("1e300,1,-1e300", 1e300, 1.0, -1e300);
    CASE("1,1e30,1e-30,-1e30", 1.0, 1e30, 1e-30, -1e30);
    CASE("F,F", F, F);
    CASE("F,F,-F", F, F, -F);
    CASE("-F,-F,F,-1", -F, -F, F, -1.0);
    CASE("M,M", M, M);
    CASE("M,M,-M", M, M, -M);
    CASE("M,2^970", M, 0x1p970);
    CASE("subnormals", 0x1p-1074, 0x1p-1073, 0x1p-1060, -0x1p-1074);
    CASE("f32 subnormals", 0x1p-149, 0x1p-148, -0x1p-140, 0x1p-126);
    CASE("f32 tie 1+2^-24", 1.0, 0x1p-24);
    CASE("f32 tie odd", 1.0, 0x1p-23, 0x1p-24);
    CASE("f32 tie + far bit", 1.0, 0x1p-24, 0x1p-100);
    CASE("f64 tie", 1.0, 0x1p-53);
    CASE("f64 tie odd", 1.0, 0x1p-52, 0x1p-53);
    CASE("f64 tie + far bit", 1.0, 0x1p-53, 0x1p-1000);
    CASE("-f64 tie + far bit", -1.0, -0x1p-53, -0x1p-1000);
}

static double rand_special(uint64_t *s, int f32)
{
    switch (ref_rand(s) % 6) {
    case 0:
        return NAN;
    case 1:
        return INFINITY;
    case 2:
        return -INFINITY;
    case 3:
        return -0.0;
    case 4:
        return 0.0;
    default:
        return f32 ? (ref_rand(s) & 1 ? FLT_MAX : -FLT_MAX) : (ref_rand(s) & 1 ? DBL_MAX : -DBL_MAX);
    }
}

static double rand_float(uint64_t *s)
{
    /* any finite float bit pattern, subnormals included */
    uint32_t b = (uint32_t)ref_rand(s);
    if (((b >> 23) & 0xFF) == 0xFF)
        b &= ~(1u << 30);
    float f;
    memcpy(&f, &b, 4);
    return (double)f;
}

static void test_random(void)
{
    uint64_t s = 31337;
    static double v[400];
    for (int c = 0; c < 1500; ++c) {
        int f32 = c & 1;
        size_t n = ref_rand(&s) % (c < 1200 ? 40 : 400);
        int specials = (ref_rand(&s) % 4) == 0;
        int kind = (int)(ref_rand(&s) % 3);
        for (size_t i = 0; i < n; ++i) {
            uint64_t h = ref_rand(&s) % 100;
            if (specials && h < 3)
                v[i] = rand_special(&s, f32);
            else if (i > 0 && h < 15)
                v[i] = -v[ref_rand(&s) % i];
            else if (f32)
                v[i] = kind == 0 ? rand_float(&s) : (double)(float)ref_rand_double(&s, kind == 1 ? -30 : 100, kind == 1 ? 30 : 127);
            else
                v[i] = ref_rand_double(&s, kind == 0 ? -1074 : kind == 1 ? -60 : 990, kind == 0 ? 1023 : kind == 1 ? 60 : 1023);
        }
        check_all("random", v, n, f32 ? GR_F32 : GR_F64);
    }
}

/* long arrays across chunks and threads, cancelling to a small value */
static void test_long(void)
{
    enum { N = 300007 };
    double *v = (double *)malloc(N * sizeof(double));
    ASSERT(v);
    uint64_t s = 99;
    for (int f32 = 0; f32 < 2; ++f32) {
        size_t n = 0;
        while (n + 2 <= N - 3) {
            v[n] = f32 ? rand_float(&s) : ref_rand_double(&s, -1074, 1023);
            v[n + 1] = -v[n];
            n += 2;
        }
        v[n++] = f32 ? 0x1p-149 : 0x1p-1074;
        v[n++] = f32 ? 0x1p-130 : 0x1p-1070;
        v[n++] = 3.0;
        for (size_t i = n - 1; i > 0; --i) {
            size_t j = ref_rand(&s) % (i + 1);
            double t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        check_all("long cancelling", v, n, f32 ? GR_F32 : GR_F64);
        v[n / 2] = NAN;
        check("long with NaN", v, n, f32 ? GR_F32 : GR_F64, OP_SUM);
    }
    free(v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ctx = test_cpu_ctx(3);
    test_crafted();
    test_random();
    test_long();
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    printf("exact cpu vs MPFR: %ld cases ok\n", n_cases);
    return 0;
}
