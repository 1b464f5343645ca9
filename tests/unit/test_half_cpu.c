/*
 * test_half_cpu.c - f16 and bf16 on the cpu backend through the public API,
 * run under mpirun with np 1, 2 and 3: closed forms of ones and iota (fast
 * mode: the sum in f64; exact mode: the exact sum rounded once to the half
 * type), min/max, the generators' half values, and exact mode's bits equal
 * to the formula reference (gr_reference_synthetic) for every generator,
 * whatever np and the thread count.
 */
#include "cpu_ctx.h"
#include "gr_common.h"
#include "gr_xacc.h"

static int g_rank;

/* An integer-valued double below 2^53 rounded once to the half type. */
static double round_half(double s, gr_dtype_t t)
{
    gr_xacc_t x;
    gr_xacc_zero(&x);
    gr_xacc_add_double(&x, s);
    gr_xacc_normalize(&x);
    return gr_xacc_round_dtype(&x, (int)t);
}

static void expect(const gr_value_t *v, double want, uint64_t n, gr_dtype_t t, const char *what)
{
    if (g_rank != 0)
        return; /* the result lives on the root */
    if (!v->valid || v->is_integer || v->count != n || v->dtype != (int)t || memcmp(&v->f, &want, sizeof(double)))
        GR_TEST_FAIL_("%s %s n=%llu: valid %d int %d count %llu dtype %d f %.17g (%a), want %.17g (%a)", what,
                      gr_dtype_name(t), (unsigned long long)n, v->valid, v->is_integer, (unsigned long long)v->count,
                      v->dtype, v->f, v->f, want, want);
}

static void test_closed_forms(gr_ctx_t ctx)
{
    static const uint64_t sizes[] = {0, 1, 2, 3, 7, 255, 256, 257, 999, 1000, 1001, 2049, 65537, 300001};
    for (int t = GR_F16; t <= GR_BF16; ++t) {
        gr_dtype_t dt = (gr_dtype_t)t;
        uint64_t period = t == GR_BF16 ? 256 : 1000; /* README: bf16 iota wraps at 256 */
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
            uint64_t n = sizes[s];
            double nn = (double)n;
            uint64_t full = n / period, r = n % period;
            double iota = (double)full * (double)(period * (period - 1) / 2) + (double)(r * (r - 1) / 2);
            for (int m = 0; m < 2; ++m) {
                gr_mode_t mode = (gr_mode_t)m;
                double w = mode == GR_MODE_EXACT ? round_half(nn, dt) : nn;
                gr_value_t v = test_syn(ctx, GR_GEN_ONES, 1, n, dt, GR_OP_SUM, 1, mode);
                expect(&v, w, n, dt, "ones sum");
                v = test_syn(ctx, GR_GEN_ONES, 1, n, dt, GR_OP_SUMSQ, 1, mode);
                expect(&v, w, n, dt, "ones sumsq");
                v = test_syn(ctx, GR_GEN_ONES, 1, n, dt, GR_OP_ABSSUM, 1, mode);
                expect(&v, w, n, dt, "ones abssum");
                v = test_syn(ctx, GR_GEN_IOTA, 1, n, dt, GR_OP_SUM, 1, mode);
                expect(&v, mode == GR_MODE_EXACT ? round_half(iota, dt) : iota, n, dt, "iota sum");
                if (n > 0) {
                    v = test_syn(ctx, GR_GEN_IOTA, 1, n, dt, GR_OP_MAX, 1, mode);
                    expect(&v, (double)((n < period ? n : period) - 1), n, dt, "iota max");
                    v = test_syn(ctx, GR_GEN_ONES, 1, n, dt, GR_OP_MIN, 1, mode);
                    expect(&v, 1.0, n, dt, "ones min");
                }
            }
        }
    }
    /* the exact sum rounds once: 4096 ones are 4096 in f16, but 4097 are 4096 (tie, even) and
     * 4099 are 4100; in bf16 257 ones are 256 and 259 are 260 */
    gr_value_t v = test_syn(ctx, GR_GEN_ONES, 1, 4097, GR_F16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, 4096.0, 4097, GR_F16, "4097 ones, exact");
    v = test_syn(ctx, GR_GEN_ONES, 1, 4099, GR_F16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, 4100.0, 4099, GR_F16, "4099 ones, exact");
    v = test_syn(ctx, GR_GEN_ONES, 1, 257, GR_BF16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, 256.0, 257, GR_BF16, "257 ones, exact");
    v = test_syn(ctx, GR_GEN_ONES, 1, 259, GR_BF16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, 260.0, 259, GR_BF16, "259 ones, exact");
    /* f16 overflow: 65520 ones are Inf in exact mode, 65520 in fast mode */
    v = test_syn(ctx, GR_GEN_ONES, 1, 65520, GR_F16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, INFINITY, 65520, GR_F16, "65520 ones, exact");
    v = test_syn(ctx, GR_GEN_ONES, 1, 65519, GR_F16, GR_OP_SUM, 1, GR_MODE_EXACT);
    expect(&v, 65504.0, 65519, GR_F16, "65519 ones, exact");
    v = test_syn(ctx, GR_GEN_ONES, 1, 65520, GR_F16, GR_OP_SUM, 1, GR_MODE_FAST);
    expect(&v, 65520.0, 65520, GR_F16, "65520 ones, fast");
}

/* Every generator's half values are values of the type, finite, in range. */
static void test_generator_values(void)
{
    gr_gen_keys_t k = gr_gen_make_keys(7);
    for (int t = GR_C_F16; t <= GR_C_BF16; ++t)
        for (int g = 0; g < GR_GEN_COUNT; ++g)
            for (uint64_t i = 0; i < 30000; ++i) {
                double x = gr_gen_float(g, t, k, i);
                uint16_t h = gr_gen_half_bits(g, t, k, i);
                ASSERT((double)gr_half_bits_to_f32(h, t == GR_C_BF16) == x);
                if (!isfinite(x))
                    GR_TEST_FAIL_("%s %s element %llu is %g", gr_gen_name((gr_gen_t)g), t == GR_C_BF16 ? "bf16" : "f16",
                                  (unsigned long long)i, x);
                if (g == GR_C_UNIFORM)
                    ASSERT(x >= 0 && x <= 1); /* rounding may reach 1.0 */
                if (g == GR_C_NORMAL)
                    ASSERT(x >= -6 && x <= 6);
                if (g == GR_C_STRESS && i % 3 == 1) /* (+B, -B) cancel exactly */
                    ASSERT(gr_gen_float(g, t, k, i - 1) == -x);
            }
}

/* Exact mode: the bits of the formula reference, with 1 and 5 threads. */
static void test_exact_identity(gr_ctx_t c1, gr_ctx_t c5)
{
    static const uint64_t sizes[] = {1, 3, 1000, 65536 * 3 + 17};
    for (int t = GR_F16; t <= GR_BF16; ++t)
        for (int g = 0; g < GR_GEN_COUNT; ++g)
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
                static const gr_op_kind_t ops[] = {GR_OP_SUM, GR_OP_ABSSUM, GR_OP_SUMSQ, GR_OP_MIN, GR_OP_MAX};
                for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); ++o) {
                    gr_desc_t d = test_desc((gr_dtype_t)t, ops[o], 1, GR_MODE_EXACT);
                    gr_value_t ref;
                    ASSERT_EQ_I(gr_reference_synthetic(c1, (gr_gen_t)g, 11, sizes[s], &d, &ref), GR_SUCCESS);
                    gr_value_t a = test_syn(c1, (gr_gen_t)g, 11, sizes[s], (gr_dtype_t)t, ops[o], 1, GR_MODE_EXACT);
                    gr_value_t b = test_syn(c5, (gr_gen_t)g, 11, sizes[s], (gr_dtype_t)t, ops[o], 1, GR_MODE_EXACT);
                    if (g_rank == 0 && (!test_value_same(&a, &ref) || !test_value_same(&b, &ref)))
                        GR_TEST_FAIL_("%s %s %s n=%llu exact: 1 thread %a, 5 threads %a, reference %a",
                                      gr_gen_name((gr_gen_t)g), gr_dtype_name((gr_dtype_t)t), gr_op_name(ops[o]),
                                      (unsigned long long)sizes[s], a.f, b.f, ref.f);
                }
            }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    gr_ctx_t c1 = test_cpu_ctx(1), c5 = test_cpu_ctx(5);
    test_generator_values();
    test_closed_forms(c5);
    test_exact_identity(c1, c5);
    gr_ctx_destroy(c1);
    gr_ctx_destroy(c5);
    if (g_rank == 0)
        printf("f16/bf16 on the cpu backend: ok\n");
    MPI_Finalize();
    return 0;
}
