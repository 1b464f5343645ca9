/*
 * test_cpu_threads.c - the cpu backend's result does not depend on its
 * thread count: cpu_threads = 1, 2, 3, 7 give the same bits in fast and in
 * exact mode, for every dtype, op and generator, on synthetic and host data.
 */
#include "cpu_ctx.h"
#include "gr_common.h"

static const int threads[] = {1, 2, 3, 7, 1000}; /* 1000: capped by the backend */
#define NT (sizeof(threads) / sizeof(threads[0]))

typedef struct {
    gr_gen_t gen;
    gr_dtype_t t;
    gr_op_kind_t k;
    int power;
    gr_mode_t m;
} combo_t;

static int allowed(gr_gen_t g, gr_dtype_t t, gr_op_kind_t k, int p, gr_mode_t m)
{
    int fl = t == GR_F32 || t == GR_F64;
    if (!fl && (g == GR_GEN_UNIFORM || g == GR_GEN_NORMAL))
        return 0;
    gr_desc_t d = test_desc(t, k, p, m);
    if (m == GR_MODE_EXACT && fl && (k == GR_OP_POWSUM || (k == GR_OP_SUMSQ && t == GR_F64)))
        return 0;
    return gr_desc_validate(&d) == GR_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    gr_ctx_t ctx[NT];
    for (size_t i = 0; i < NT; ++i)
        ctx[i] = test_cpu_ctx(threads[i]);

    /* 7 full chunks and a short one: every thread count splits them differently */
    const uint64_t sizes[] = {7 * 65536 + 4321, 3};
    int checked = 0;
    for (size_t s = 0; s < 2; ++s)
        for (int g = 0; g < GR_GEN_COUNT; ++g)
            for (int t = 0; t < GR_DTYPE_COUNT; ++t)
                for (int k = 0; k < GR_OP_COUNT; ++k)
                    for (int m = 0; m < 2; ++m) {
                        int p = k == GR_OP_POWSUM ? 3 : 1;
                        if (g == GR_GEN_ONES || g == GR_GEN_IOTA)
                            if (k != GR_OP_SUM)
                                continue; /* closed forms cover them */
                        if (!allowed((gr_gen_t)g, (gr_dtype_t)t, (gr_op_kind_t)k, p, (gr_mode_t)m))
                            continue;
                        gr_value_t ref = test_syn(ctx[0], (gr_gen_t)g, 123, sizes[s], (gr_dtype_t)t,
                                                  (gr_op_kind_t)k, p, (gr_mode_t)m);
                        for (size_t i = 1; i < NT; ++i) {
                            gr_value_t v = test_syn(ctx[i], (gr_gen_t)g, 123, sizes[s], (gr_dtype_t)t,
                                                    (gr_op_kind_t)k, p, (gr_mode_t)m);
                            if (!test_value_same(&v, &ref))
                                GR_TEST_FAIL_("%s %s %s:%d %s n=%llu: %d threads give %a (i %lld ovf %d), 1 "
                                              "thread %a (i %lld ovf %d)",
                                              gr_gen_name((gr_gen_t)g), gr_dtype_name((gr_dtype_t)t),
                                              gr_op_name((gr_op_kind_t)k), p, gr_mode_name((gr_mode_t)m),
                                              (unsigned long long)sizes[s], threads[i], v.f, (long long)v.i,
                                              v.overflow, ref.f, (long long)ref.i, ref.overflow);
                        }
                        ++checked;
                    }
    ASSERT(checked > 100);

    /* host data with wide exponents and a 7-element odd tail */
    const uint64_t n = 5 * 65536 + 7;
    double *x = (double *)malloc(n * sizeof(double));
    ASSERT(x);
    gr_gen_keys_t key = gr_gen_make_keys(99);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t h = gr_hash(key.k0, i);
        x[i] = ldexp((double)(h >> 11) * 0x1p-53 + 0.5, (int)(h % 200) - 100) * ((h >> 8) & 1 ? -1 : 1);
    }
    for (int m = 0; m < 2; ++m) {
        gr_value_t ref = test_host(ctx[0], x, n, GR_F64, GR_OP_SUM, 1, (gr_mode_t)m);
        for (size_t i = 1; i < NT; ++i) {
            gr_value_t v = test_host(ctx[i], x, n, GR_F64, GR_OP_SUM, 1, (gr_mode_t)m);
            if (!test_value_same(&v, &ref))
                GR_TEST_FAIL_("host f64 %s: %d threads %a, 1 thread %a", gr_mode_name((gr_mode_t)m), threads[i],
                              v.f, ref.f);
        }
    }
    free(x);
    for (size_t i = 0; i < NT; ++i)
        gr_ctx_destroy(ctx[i]);
    MPI_Finalize();
    printf("cpu_threads: ok (%d combinations)\n", checked);
    return 0;
}
