/*
 * test_vec_mpfr.c - dot, nrm2, argmin/argmax and batches against MPFR and
 * closed forms, through the public API on the cpu backend. Run under mpirun
 * with any np: every rank builds the same global arrays, passes its shard
 * (gr_shard_range) with its index base, and rank 0 checks the result against
 * references computed from the whole arrays, so np 1..5 all meet the same
 * bits. Also checks the wide accumulator (gr_wacc) directly on rank 0:
 * products over the whole f64 range and correctly rounded square roots.
 */
#include "cpu_ctx.h"
#include "gr_half.h"
#include "gr_xacc.h"
#include "mpfr_ref.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define WPREC 4700 /* products span 2^-2148 .. 2^2048; sums of 2^64 of them fit */

static int rank, np;
static gr_ctx_t ctx;
static long n_checks;

/* Round an MPFR number once into (prec, [emin, emax]) with IEEE subnormals (MPFR exponent convention). */
static double mp_round(mpfr_t acc, int prec, mpfr_exp_t emin, mpfr_exp_t emax, int is_sqrt)
{
    if (mpfr_nan_p(acc))
        return NAN;
    if (mpfr_inf_p(acc))
        return mpfr_sgn(acc) > 0 ? INFINITY : -INFINITY;
    if (mpfr_zero_p(acc))
        return mpfr_signbit(acc) ? -0.0 : 0.0;
    mpfr_t y;
    mpfr_init2(y, prec);
    mpfr_exp_t oemin = mpfr_get_emin(), oemax = mpfr_get_emax();
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    int t = is_sqrt ? mpfr_sqrt(y, acc, MPFR_RNDN) : mpfr_set(y, acc, MPFR_RNDN);
    t = mpfr_check_range(y, t, MPFR_RNDN);
    t = mpfr_subnormalize(y, t, MPFR_RNDN);
    double d = mpfr_get_d(y, MPFR_RNDN);
    mpfr_set_emin(oemin);
    mpfr_set_emax(oemax);
    mpfr_clear(y);
    return d;
}

static double mp_f64(mpfr_t a, int s) { return mp_round(a, 53, -1073, 1024, s); }
static double mp_f32(mpfr_t a, int s) { return mp_round(a, 24, -148, 128, s); }

/* Exact sum of x[i]*y[i] (y NULL: squares) into acc. */
static void mp_dot(mpfr_t acc, const double *x, const double *y, size_t n)
{
    mpfr_t p;
    mpfr_init2(p, 120);
    mpfr_set_zero(acc, 1);
    for (size_t i = 0; i < n; ++i) {
        double b = y ? y[i] : x[i];
        ASSERT(mpfr_set_d(p, x[i], MPFR_RNDN) == 0);
        ASSERT(mpfr_mul_d(p, p, b, MPFR_RNDN) == 0);
        ASSERT(mpfr_add(acc, acc, p, MPFR_RNDN) == 0);
    }
    mpfr_clear(p);
}

#define CHECK_BITS(what, got, want)                                                                   \
    do {                                                                                              \
        ++n_checks;                                                                                   \
        double g_ = (got), w_ = (want);                                                               \
        if (memcmp(&g_, &w_, sizeof(double)) != 0 && !(isnan(g_) && isnan(w_)))                      \
            GR_TEST_FAIL_("%s: got %.17g (%a), want %.17g (%a)", what, g_, g_, w_, w_);               \
    } while (0)

/* ---- the wide accumulator alone (rank 0) ------------------------------- */

static void wacc_case(const char *name, const double *x, const double *y, size_t n)
{
    mpfr_t acc;
    mpfr_init2(acc, WPREC);
    mp_dot(acc, x, y, n);
    gr_wacc_t w, w2;
    gr_wacc_zero(&w);
    gr_wacc_zero(&w2);
    for (size_t i = 0; i < n; ++i) {
        double b = y ? y[i] : x[i];
        gr_wacc_add_product(i % 2 ? &w2 : &w, x[i], b);
    }
    gr_wacc_add(&w, &w2);
    char what[128];
    snprintf(what, sizeof(what), "%s: f64", name);
    CHECK_BITS(what, gr_wacc_round(&w, 53, -1074, 1023) + 0.0, mp_f64(acc, 0) + 0.0);
    snprintf(what, sizeof(what), "%s: f32", name);
    CHECK_BITS(what, gr_wacc_round(&w, 24, -149, 127) + 0.0, mp_f32(acc, 0) + 0.0);
    if (!y) {
        snprintf(what, sizeof(what), "%s: sqrt f64", name);
        CHECK_BITS(what, gr_wacc_sqrt_round(&w, 53, -1074, 1023), mp_f64(acc, 1));
        snprintf(what, sizeof(what), "%s: sqrt f32", name);
        CHECK_BITS(what, gr_wacc_sqrt_round(&w, 24, -149, 127), mp_f32(acc, 1));
        snprintf(what, sizeof(what), "%s: sqrt f16", name);
        CHECK_BITS(what, gr_wacc_sqrt_round(&w, GR_XACC_F16_ROUND), mp_round(acc, 11, -23, 16, 1));
    }
    mpfr_clear(acc);
}

static void test_wacc(void)
{
    uint64_t s = 42;
    double x[64], y[64];
    /* the whole range, subnormals to the largest, with cancellation */
    for (int rep = 0; rep < 300; ++rep) {
        size_t n = 1 + ref_rand(&s) % 64;
        int lo = rep % 3 == 0 ? -1074 : -600, hi = rep % 3 == 1 ? 1023 : 600;
        for (size_t i = 0; i < n; ++i) {
            x[i] = ref_rand_double(&s, lo, hi);
            y[i] = ref_rand_double(&s, lo, hi);
        }
        if (rep % 4 == 0 && n > 2) { /* exact cancellation of the big pair, small rest survives */
            x[1] = -x[0];
            y[1] = y[0];
        }
        wacc_case("random dot", x, y, n);
        wacc_case("random squares", x, NULL, n);
    }
    /* closed forms: 1e300 and 1e-300 vectors, the overflow edge, subnormal products */
    double big[4] = {1e300, 1e300, -1e300, 1e300}, tiny[4] = {1e-300, -1e-300, 1e-300, 1e-300};
    wacc_case("1e300 squares", big, NULL, 4);
    wacc_case("1e-300 squares", tiny, NULL, 4);
    wacc_case("1e300 . 1e-300", big, tiny, 4);
    double sub[3] = {0x1p-1074, 0x1p-1074, 0x1.8p-1073};
    wacc_case("subnormal squares", sub, NULL, 3);
    double mx[2] = {DBL_MAX, -DBL_MAX}, one[2] = {1.0, 1.0};
    wacc_case("max cancels", mx, one, 2);
    double sq2[1] = {0x1.6a09e667f3bcdp+0};
    wacc_case("sqrt2 squared", sq2, NULL, 1);
    /* a sum of squares that is an exact square: the root is exact */
    /* sqrt just above an f32 midpoint (2M+1 with M even): only the root's own
     * inexactness says "round up", no bit of the window does */
    double mid[2] = {2 * (0x1p23 + 2) + 1, 0x1p-30};
    wacc_case("sqrt above a midpoint", mid, NULL, 2);
    double pyth[2] = {3e200, 4e200};
    wacc_case("3-4-5", pyth, NULL, 2);
}

/* ---- through the API, sharded over the ranks --------------------------- */

static void shard(uint64_t n, uint64_t *b, uint64_t *e) { gr_shard_range(n, np, rank, b, e); }

static gr_value_t run_item(gr_batch_item_t *it)
{
    gr_value_t v;
    memset(&v, 0xA5, sizeof(v));
    gr_result_t r = gr_reduce_batch_host(ctx, it, 1, &v, NULL);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("batch(%s %s %s): %s", gr_dtype_name(it->desc.dtype), gr_op_name(it->desc.op.kind),
                      gr_mode_name(it->desc.mode), gr_strerror(r));
    return v;
}

/* dot / nrm2 / sumsq of f64 arrays (global n), exact, against MPFR on rank 0. */
static void check_f64(const char *name, const double *x, const double *y, uint64_t n)
{
    uint64_t b, e;
    shard(n, &b, &e);
    gr_batch_item_t it[3];
    for (int j = 0; j < 3; ++j) {
        gr_batch_item_init(&it[j]);
        it[j].desc.dtype = GR_F64;
        it[j].desc.mode = GR_MODE_EXACT;
        it[j].x = x + b;
        it[j].count = e - b;
    }
    it[0].desc.op.kind = GR_OP_DOT;
    it[0].y = y + b;
    it[1].desc.op.kind = GR_OP_NRM2;
    it[2].desc.op.kind = GR_OP_SUMSQ;
    it[2].desc.op.power = 2;
    gr_value_t one[3], batch[3];
    for (int j = 0; j < 3; ++j)
        one[j] = run_item(&it[j]);
    ASSERT_EQ_I(gr_reduce_batch_host(ctx, it, 3, batch, NULL), GR_SUCCESS);
    if (rank != 0)
        return;
    for (int j = 0; j < 3; ++j)
        ASSERT(test_value_same(&one[j], &batch[j])); /* a batch has the bits of the separate calls */
    mpfr_t acc;
    mpfr_init2(acc, WPREC);
    char what[160];
    mp_dot(acc, x, y, (size_t)n);
    snprintf(what, sizeof(what), "%s: exact dot", name);
    CHECK_BITS(what, one[0].f, mp_f64(acc, 0));
    mp_dot(acc, x, NULL, (size_t)n);
    snprintf(what, sizeof(what), "%s: exact nrm2", name);
    CHECK_BITS(what, one[1].f, mp_f64(acc, 1));
    snprintf(what, sizeof(what), "%s: exact sumsq", name);
    CHECK_BITS(what, one[2].f, mp_f64(acc, 0));
    mpfr_clear(acc);
}

static void test_dot_nrm2_f64(void)
{
    enum { N = 5000 };
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
    ASSERT(x && y);
    uint64_t s = 7;
    /* cancellation: big +p and -p products around small ones, positions that straddle shards */
    for (int i = 0; i < N; ++i) {
        x[i] = ref_rand_double(&s, -60, 60);
        y[i] = ref_rand_double(&s, -60, 60);
    }
    for (int i = 0; i + 1 < N; i += 2) {
        x[i + 1] = -x[i];
        y[i + 1] = y[i] * (i % 6 == 0 ? 1.0 : 1.0 + 0x1p-52);
    }
    check_f64("cancellation", x, y, N);
    /* nrm2 without spurious overflow / underflow */
    for (int i = 0; i < N; ++i) {
        x[i] = i % 2 ? 1e300 : -3e299;
        y[i] = i % 3 ? 1e-300 : 2e-310;
    }
    check_f64("1e300", x, y, N);
    check_f64("1e-300", y, x, N);
    /* the full range */
    for (int i = 0; i < N; ++i) {
        x[i] = ref_rand_double(&s, -1074, 1000);
        y[i] = ref_rand_double(&s, -1074, 1000);
    }
    check_f64("full range", x, y, N);

    /* fast nrm2 scales too: 1e300 and 1e-300 vectors give the right answer (to a few ulps) */
    uint64_t b, e;
    shard(N, &b, &e);
    for (int i = 0; i < N; ++i)
        x[i] = 1e300;
    gr_batch_item_t it;
    gr_batch_item_init(&it);
    it.desc.dtype = GR_F64;
    it.desc.op.kind = GR_OP_NRM2;
    it.x = x + b;
    it.count = e - b;
    gr_value_t v = run_item(&it);
    if (rank == 0)
        ASSERT_NEAR(v.f, 1e300 * sqrt((double)N), 1e-14);
    for (int i = 0; i < N; ++i)
        x[i] = 1e-300;
    v = run_item(&it);
    if (rank == 0)
        ASSERT_NEAR(v.f, 1e-300 * sqrt((double)N), 1e-14);
    free(x);
    free(y);
}

/* f32 dot and nrm2, exact: rounded once to f32 */
static void test_f32(void)
{
    enum { N = 3001 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    double *xd = malloc(sizeof(double) * N), *yd = malloc(sizeof(double) * N);
    ASSERT(x && y && xd && yd);
    uint64_t s = 99;
    for (int i = 0; i < N; ++i) {
        x[i] = (float)ref_rand_double(&s, -140, 120);
        y[i] = (float)ref_rand_double(&s, -140, 120);
        if (i % 2) {
            x[i] = -x[i - 1];
            y[i] = y[i - 1];
        }
        xd[i] = x[i];
        yd[i] = y[i];
    }
    uint64_t b, e;
    shard(N, &b, &e);
    gr_batch_item_t it[2];
    for (int j = 0; j < 2; ++j) {
        gr_batch_item_init(&it[j]);
        it[j].desc.dtype = GR_F32;
        it[j].desc.mode = GR_MODE_EXACT;
        it[j].x = x + b;
        it[j].count = e - b;
    }
    it[0].desc.op.kind = GR_OP_DOT;
    it[0].y = y + b;
    it[1].desc.op.kind = GR_OP_NRM2;
    gr_value_t v[2];
    ASSERT_EQ_I(gr_reduce_batch_host(ctx, it, 2, v, NULL), GR_SUCCESS);
    if (rank == 0) {
        mpfr_t acc;
        mpfr_init2(acc, WPREC);
        mp_dot(acc, xd, yd, N);
        CHECK_BITS("f32 exact dot", v[0].f, mp_f32(acc, 0));
        mp_dot(acc, xd, NULL, N);
        CHECK_BITS("f32 exact nrm2", v[1].f, mp_f32(acc, 1));
        mpfr_clear(acc);
    }
    free(x);
    free(y);
    free(xd);
    free(yd);
}

/* IEEE specials in dot: Inf * 0 is NaN; Inf alone is Inf; -0 products give -0. */
static void test_specials(void)
{
    double x[6] = {1, 2, INFINITY, 4, 5, 6}, y[6] = {1, 1, 1, 1, 1, 1};
    double z[6] = {0, 0, 0, 0, 0, 0};
    gr_desc_t d = test_desc(GR_F64, GR_OP_DOT, 1, GR_MODE_EXACT);
    uint64_t b, e;
    shard(6, &b, &e);
    gr_value_t v;
    for (int mode = 0; mode < 2; ++mode) {
        d.mode = (gr_mode_t)mode;
        ASSERT_EQ_I(gr_dot_host(ctx, x + b, y + b, e - b, &d, &v, NULL), GR_SUCCESS);
        if (rank == 0)
            ASSERT(isinf(v.f) && v.f > 0);
        ASSERT_EQ_I(gr_dot_host(ctx, x + b, z + b, e - b, &d, &v, NULL), GR_SUCCESS);
        if (rank == 0)
            ASSERT(isnan(v.f)); /* Inf * 0 */
        double mz[6] = {-0.0, -0.0, -0.0, -0.0, -0.0, -0.0};
        ASSERT_EQ_I(gr_dot_host(ctx, mz + b, y + b, e - b, &d, &v, NULL), GR_SUCCESS);
        if (rank == 0)
            ASSERT(v.f == 0 && signbit(v.f));
    }
    /* nrm2: NaN wins over Inf; Inf otherwise */
    double w[6] = {1, INFINITY, 3, NAN, 5, 6};
    d.op.kind = GR_OP_NRM2;
    d.mode = GR_MODE_EXACT;
    ASSERT_EQ_I(gr_reduce_host(ctx, w + b, e - b, &d, &v, NULL), GR_SUCCESS);
    if (rank == 0)
        ASSERT(isnan(v.f));
    w[3] = 4;
    ASSERT_EQ_I(gr_reduce_host(ctx, w + b, e - b, &d, &v, NULL), GR_SUCCESS);
    if (rank == 0)
        ASSERT(isinf(v.f) && v.f > 0);
    /* integers: i64 dot beyond int64 is flagged, its double is right */
    int64_t a[6] = {INT64_MAX, INT64_MAX, 3, -4, 0, 1}, c[6] = {2, 2, 1, 1, 1, 0};
    d = test_desc(GR_I64, GR_OP_DOT, 1, GR_MODE_FAST);
    ASSERT_EQ_I(gr_dot_host(ctx, a + b, c + b, e - b, &d, &v, NULL), GR_SUCCESS);
    if (rank == 0) {
        ASSERT(v.is_integer && v.overflow);
        ASSERT_BITS_EQ(v.f, ldexp(1.0, 65)); /* 4 (2^63 - 1) - 1 rounds to 2^65 */
    }
    a[0] = a[1] = 1000000007;
    ASSERT_EQ_I(gr_dot_host(ctx, a + b, c + b, e - b, &d, &v, NULL), GR_SUCCESS);
    if (rank == 0) {
        ASSERT(v.is_integer && !v.overflow);
        ASSERT_EQ_I(v.i, 4000000028 - 1);
    }
}

/* argmin/argmax: ties straddle every shard boundary, NaN positions, +-0. */
static void arg_check(const double *x, uint64_t n, gr_op_kind_t k, double want_v, int64_t want_i, const char *what)
{
    uint64_t b, e;
    shard(n, &b, &e);
    gr_batch_item_t it;
    gr_batch_item_init(&it);
    it.desc.dtype = GR_F64;
    it.desc.op.kind = k;
    it.x = x + b;
    it.count = e - b;
    it.index_base = (int64_t)b;
    gr_value_t v = run_item(&it);
    if (rank != 0)
        return;
    ++n_checks;
    if (v.index != want_i || (memcmp(&v.f, &want_v, 8) != 0 && !(isnan(v.f) && isnan(want_v))))
        GR_TEST_FAIL_("%s %s: got (%a, %lld), want (%a, %lld)", what, gr_op_name(k), v.f, (long long)v.index,
                      want_v, (long long)want_i);
}

static void test_argext(void)
{
    enum { N = 1000 };
    double x[N];
    for (int i = 0; i < N; ++i)
        x[i] = (double)(i % 7) - 3.0;
    /* every 7th element ties: the extremes repeat across all shards */
    arg_check(x, N, GR_OP_ARGMIN, -3.0, 0, "repeated");
    arg_check(x, N, GR_OP_ARGMAX, 3.0, 6, "repeated");
    /* a tie at the last element of every shard for np 1..5: the lowest wins */
    for (int i = 0; i < N; ++i)
        x[i] = 0.5;
    for (int p = 1; p <= 5; ++p)
        for (int r = 0; r < p; ++r) {
            uint64_t b, e;
            gr_shard_range(N, p, r, &b, &e);
            x[e - 1] = 9.0;
            x[b] = -9.0;
        }
    arg_check(x, N, GR_OP_ARGMAX, 9.0, 199, "shard ends");
    arg_check(x, N, GR_OP_ARGMIN, -9.0, 0, "shard starts");
    /* +-0: equal, the first wins with its sign */
    for (int i = 0; i < N; ++i)
        x[i] = 1.0;
    x[333] = -0.0;
    x[100] = 0.0;
    arg_check(x, N, GR_OP_ARGMIN, 0.0, 100, "+0 before -0");
    x[100] = 1.0;
    x[500] = 0.0;
    arg_check(x, N, GR_OP_ARGMIN, -0.0, 333, "-0 before +0");
    /* NaN: the first NaN wins for both, as numpy */
    x[777] = NAN;
    x[901] = NAN;
    arg_check(x, N, GR_OP_ARGMIN, NAN, 777, "NaN");
    arg_check(x, N, GR_OP_ARGMAX, NAN, 777, "NaN");
    x[777] = INFINITY;
    arg_check(x, N, GR_OP_ARGMAX, NAN, 901, "late NaN");
    x[901] = 2.0;
    arg_check(x, N, GR_OP_ARGMAX, INFINITY, 777, "Inf");
    /* integers */
    int32_t iv[N];
    for (int i = 0; i < N; ++i)
        iv[i] = (i * 37) % 101 - 50;
    uint64_t b, e;
    shard(N, &b, &e);
    gr_batch_item_t it[2];
    for (int j = 0; j < 2; ++j) {
        gr_batch_item_init(&it[j]);
        it[j].desc.dtype = GR_I32;
        it[j].desc.op.kind = j ? GR_OP_ARGMAX : GR_OP_ARGMIN;
        it[j].x = iv + b;
        it[j].count = e - b;
        it[j].index_base = (int64_t)b;
    }
    gr_value_t v[2];
    ASSERT_EQ_I(gr_reduce_batch_host(ctx, it, 2, v, NULL), GR_SUCCESS);
    if (rank == 0) {
        int64_t imin = 0, imax = 0;
        for (int i = 1; i < N; ++i) {
            if (iv[i] < iv[imin])
                imin = i;
            if (iv[i] > iv[imax])
                imax = i;
        }
        ASSERT(v[0].is_integer && v[1].is_integer);
        ASSERT_EQ_I(v[0].i, iv[imin]);
        ASSERT_EQ_I(v[0].index, imin);
        ASSERT_EQ_I(v[1].i, iv[imax]);
        ASSERT_EQ_I(v[1].index, imax);
    }
    /* empty input: index -1 */
    gr_batch_item_init(&it[0]);
    it[0].desc.op.kind = GR_OP_ARGMAX;
    gr_value_t ev = run_item(&it[0]);
    if (rank == 0)
        ASSERT(ev.index == -1 && isnan(ev.f));
}

/* half types: exact dot rounded once to the type */
static void test_half(void)
{
    enum { N = 777 };
    uint16_t x[N], y[N];
    double xd[N], yd[N];
    uint64_t s = 5;
    for (int bf = 0; bf < 2; ++bf) {
        for (int i = 0; i < N; ++i) {
            x[i] = gr_f32_to_half_bits((float)ref_rand_double(&s, -14, 10), bf);
            y[i] = gr_f32_to_half_bits((float)ref_rand_double(&s, -14, 10), bf);
            xd[i] = gr_half_bits_to_f32(x[i], bf);
            yd[i] = gr_half_bits_to_f32(y[i], bf);
        }
        uint64_t b, e;
        shard(N, &b, &e);
        gr_desc_t d = test_desc(bf ? GR_BF16 : GR_F16, GR_OP_DOT, 1, GR_MODE_EXACT);
        gr_value_t v;
        ASSERT_EQ_I(gr_dot_host(ctx, x + b, y + b, e - b, &d, &v, NULL), GR_SUCCESS);
        if (rank == 0) {
            mpfr_t acc;
            mpfr_init2(acc, WPREC);
            mp_dot(acc, xd, yd, N);
            double want = bf ? mp_round(acc, 8, -132, 128, 0) : mp_round(acc, 11, -23, 16, 0);
            CHECK_BITS(bf ? "bf16 exact dot" : "f16 exact dot", v.f, want);
            mpfr_clear(acc);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    ctx = test_cpu_ctx(2);
    if (rank == 0)
        test_wacc();
    test_dot_nrm2_f64();
    test_f32();
    test_specials();
    test_argext();
    test_half();
    gr_ctx_destroy(ctx);
    if (rank == 0)
        printf("vec_mpfr: np %d, %ld checks passed\n", np, n_checks);
    MPI_Finalize();
    return 0;
}
