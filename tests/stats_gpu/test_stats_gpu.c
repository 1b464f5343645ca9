/*
 * test_stats_gpu.c - --op stats on the GPU (kernels/stats.cu through
 * gr_stats_device, gr_stats_buffer and the backend's gr_cuda_stats_launch /
 * gr_cuda_stats_collect) against the host pass (gr_stats_host) on the same
 * values.
 *
 * Bit for bit: count, NaN/+Inf/-Inf counts, sum, mean (= sum / count),
 * min, max, nanmin, nanmax, and for integers isum, overflow, imin, imax.
 * The variances (population and sample) agree with a two-pass long double
 * reference (and so with the host) to a relative VAR_TOL, and are exactly 0
 * where the reference is. Every dtype (f32, f64, i32, i64); sizes 0, 1, 2,
 * 3, awkward n up to 2^20 + 5; element offsets 0..3 from 16 bytes; NaN, Inf,
 * -0.0, subnormal and wide-range mixes; a large common offset (|mean| >> std);
 * forced grids 1, 7, 1000 and blocks 128, 256, 512; repeated runs give the
 * same bits.
 *
 *   test_stats_gpu           everything
 *   test_stats_gpu --small   a few cases (compute-sanitizer memcheck)
 *   test_stats_gpu --race    launch shapes only, small (compute-sanitizer racecheck)
 *
 * Exit 77 (SKIP) where no GPU is visible; never PASS without one.
 */
#include "gr_cuda_stats.h"
#include "gr_internal.h"
#include "gr_stats.h"
#include "gr_stats_kernels.h"
#include "test_cuda.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative error allowed in var / var_sample against the two-pass reference.
 * The GPU's bound is ~ (n_thread + 2 log2(threads) + 4) u kappa^2 with
 * kappa^2 = 1 + (mean_t - K_t)^2 n_t / M2_t per thread (README); the data
 * below keep kappa small, so 1e-10 leaves a wide margin at n <= 2^20. */
#define VAR_TOL 1e-10

static int g_small;
static int g_race; /* implies g_small */
static uint64_t g_checks;

static gr_ctx_t make_ctx(gr_backend_t b, int block, int grid)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = b;
    cfg.bind = GR_BIND_NONE;
    cfg.share_gpus = 1;
    cfg.cpu_threads = 2;
    cfg.cuda_block = block;
    cfg.cuda_grid = grid;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_SELF, &cfg, &ctx);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("gr_ctx_create(%s, block %d, grid %d): %s", gr_backend_name(b), block, grid, gr_strerror(r));
    return ctx;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }

enum { PAT_UNIFORM, PAT_SHIFTED, PAT_SPECIAL, PAT_ZEROS, PAT_CONST, PAT_EXTREME, PAT_COUNT };
static const char *const pat_name[PAT_COUNT] = {"uniform", "shifted", "special", "negzeros", "const", "extreme"};

static double special_value(int f64)
{
    uint64_t k = rnd() % 16;
    switch (k) {
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
    case 5:
        return f64 ? 4.9406564584124654e-324 : 1.4e-45; /* smallest subnormal */
    case 6:
        return f64 ? -1e150 : -3e38;
    case 7:
        return f64 ? 1e150 : 3e38;
    case 8:
        return ldexp(unif(), -100);
    default:
        return (unif() - 0.5) * ldexp(1.0, (int)(rnd() % 60) - 30);
    }
}

/* Fill v[0..n) (type t) with pattern p. */
static void fill(void *v, uint64_t n, gr_dtype_t t, int p)
{
    for (uint64_t i = 0; i < n; ++i) {
        double x;
        int64_t ix;
        switch (p) {
        case PAT_UNIFORM:
            x = unif() * 2 - 0.5;
            ix = (int64_t)(rnd() % 2001) - 1000;
            break;
        case PAT_SHIFTED:
            x = 1e6 + (unif() - 0.5);
            ix = (t == GR_I64 ? (int64_t)1 << 40 : (int64_t)1 << 28) + (int64_t)(rnd() % 101);
            break;
        case PAT_SPECIAL:
            x = special_value(t == GR_F64);
            ix = (int64_t)(rnd() % 7) - 3;
            break;
        case PAT_ZEROS:
            x = -0.0;
            ix = 0;
            break;
        case PAT_CONST:
            x = 3.25;
            ix = -7;
            break;
        default: /* extremes of the integer types; large floats */
            x = (rnd() & 1) ? ldexp(unif(), 100) : -ldexp(unif(), 90);
            ix = (rnd() & 1) ? (t == GR_I64 ? INT64_MAX : INT32_MAX) : (t == GR_I64 ? INT64_MIN : INT32_MIN);
            break;
        }
        switch (t) {
        case GR_F32:
            ((float *)v)[i] = (float)x;
            break;
        case GR_F64:
            ((double *)v)[i] = x;
            break;
        case GR_I32:
            ((int32_t *)v)[i] = (int32_t)ix;
            break;
        default:
            ((int64_t *)v)[i] = ix;
            break;
        }
    }
}

static double elem(const void *v, uint64_t i, gr_dtype_t t)
{
    switch (t) {
    case GR_F32:
        return ((const float *)v)[i];
    case GR_F64:
        return ((const double *)v)[i];
    case GR_I32:
        return ((const int32_t *)v)[i];
    default:
        return (double)((const int64_t *)v)[i];
    }
}

/* Two-pass M2 in long double around the exact mean (finite values only). */
static long double ref_m2(const void *v, uint64_t n, gr_dtype_t t, double mean)
{
    long double m2 = 0;
    for (uint64_t i = 0; i < n; ++i) {
        long double d = (long double)elem(v, i, t) - (long double)mean;
        m2 += d * d;
    }
    return m2;
}

static void check_var(const char *what, double got, double host, long double ref, const char *ctxs)
{
    if (isnan(host) || isnan((double)ref)) {
        if (!isnan(got))
            GR_TEST_FAIL_("%s %s: GPU %.17g, host NaN", ctxs, what, got);
        return;
    }
    /* DBL_MIN: a variance below the normal range (squares of subnormal
     * spreads) has no relative accuracy in f64, on the host either */
    double tol = VAR_TOL * fabsl(ref) + DBL_MIN;
    if (fabsl((long double)got - ref) > tol || (ref == 0 && got != 0))
        GR_TEST_FAIL_("%s %s: GPU %.17g, host %.17g, two-pass %.17Lg (rel %.3g > %.1g)", ctxs, what, got, host, ref,
                      (double)(fabsl((long double)got - ref) / (ref != 0 ? fabsl(ref) : 1)), VAR_TOL);
}

static void compare(const gr_stats_t *g, const gr_stats_t *h, const char *c)
{
    if (g->count != h->count || g->nan_count != h->nan_count || g->pinf_count != h->pinf_count ||
        g->ninf_count != h->ninf_count || g->is_integer != h->is_integer)
        GR_TEST_FAIL_("%s: counts GPU %llu/%llu/%llu/%llu int %d, host %llu/%llu/%llu/%llu int %d", c,
                      (unsigned long long)g->count, (unsigned long long)g->nan_count,
                      (unsigned long long)g->pinf_count, (unsigned long long)g->ninf_count, g->is_integer,
                      (unsigned long long)h->count, (unsigned long long)h->nan_count,
                      (unsigned long long)h->pinf_count, (unsigned long long)h->ninf_count, h->is_integer);
    const double a[] = {g->sum, g->mean, g->min, g->max, g->nanmin, g->nanmax};
    const double b[] = {h->sum, h->mean, h->min, h->max, h->nanmin, h->nanmax};
    const char *nm[] = {"sum", "mean", "min", "max", "nanmin", "nanmax"};
    for (int i = 0; i < 6; ++i)
        if (memcmp(&a[i], &b[i], sizeof(double)) != 0)
            GR_TEST_FAIL_("%s: %s GPU %.17g (%a), host %.17g (%a)", c, nm[i], a[i], a[i], b[i], b[i]);
    if (g->is_integer && (g->overflow != h->overflow || g->isum != h->isum || g->imin != h->imin || g->imax != h->imax))
        GR_TEST_FAIL_("%s: integers GPU isum %lld ovf %d [%lld, %lld], host %lld ovf %d [%lld, %lld]", c,
                      (long long)g->isum, g->overflow, (long long)g->imin, (long long)g->imax, (long long)h->isum,
                      h->overflow, (long long)h->imin, (long long)h->imax);
}

static gr_desc_t desc_of(gr_dtype_t t)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = t;
    return d;
}

/* One case on every GPU context: host stats, two-pass reference, GPU stats twice. */
static void run_case(gr_ctx_t *gctx, const char *const *gname, int ng, gr_ctx_t host, gr_dtype_t t, uint64_t n,
                     int off, int pat)
{
    const size_t esz = gr_dtype_size(t);
    char *h = (char *)malloc((n + 4) * esz);
    ASSERT(h);
    fill(h, n + 4, t, pat);
    void *dv = NULL;
    CU(cudaMalloc(&dv, (n + 4) * esz));
    CU(cudaMemcpy(dv, h, (n + 4) * esz, cudaMemcpyHostToDevice));
    const void *hp = h + (size_t)off * esz;
    const void *dp = (const char *)dv + (size_t)off * esz;
    gr_desc_t d = desc_of(t);
    gr_stats_t ref;
    if (gr_stats_host(host, hp, n, &d, &ref, NULL) != GR_SUCCESS)
        GR_TEST_FAIL_("gr_stats_host failed");
    long double m2 = ref.nan_count + ref.pinf_count + ref.ninf_count == 0 && n > 0 ? ref_m2(hp, n, t, ref.mean) : NAN;
    long double rv = n > 0 ? m2 / (long double)n : NAN, rs = n > 1 ? m2 / (long double)(n - 1) : NAN;
    for (int k = 0; k < ng; ++k) {
        char c[200];
        snprintf(c, sizeof(c), "%s n=%llu off=%d %s [%s]", gr_dtype_name(t), (unsigned long long)n, off, pat_name[pat],
                 gname[k]);
        gr_stats_t g1, g2;
        memset(&g1, 0x5A, sizeof(g1)); /* poison */
        memset(&g2, 0xA5, sizeof(g2));
        gr_result_t r = gr_stats_device(gctx[k], dp, n, &d, &g1, NULL);
        if (r != GR_SUCCESS)
            GR_TEST_FAIL_("%s: gr_stats_device: %s", c, gr_strerror(r));
        r = gr_stats_device(gctx[k], dp, n, &d, &g2, NULL);
        if (r != GR_SUCCESS)
            GR_TEST_FAIL_("%s: gr_stats_device (again): %s", c, gr_strerror(r));
        compare(&g1, &ref, c);
        check_var("var", g1.var, ref.var, rv, c);
        check_var("var_sample", g1.var_sample, ref.var_sample, rs, c);
        if (memcmp(&g1.var, &g2.var, sizeof(double)) || memcmp(&g1.var_sample, &g2.var_sample, sizeof(double)))
            GR_TEST_FAIL_("%s: repeated runs differ: var %a vs %a", c, g1.var, g2.var);
        compare(&g2, &g1, c);
        ++g_checks;
    }
    CU(cudaFree(dv));
    free(h);
}

/* gr_cuda_stats_launch / _collect, the file pipeline's interface: two
 * slots in flight on the context's stream, merged, against the host. */
static void test_slots(gr_ctx_t gpu, gr_ctx_t host)
{
    const gr_dtype_t types[] = {GR_F32, GR_F64, GR_I32, GR_I64};
    const uint64_t n = g_small ? 1001 : 300007;
    for (int ti = 0; ti < 4; ++ti) {
        gr_dtype_t t = types[ti];
        size_t esz = gr_dtype_size(t);
        char *h = (char *)malloc(n * esz);
        ASSERT(h);
        fill(h, n, t, PAT_SPECIAL);
        void *dv = NULL;
        CU(cudaMalloc(&dv, n * esz));
        CU(cudaMemcpy(dv, h, n * esz, cudaMemcpyHostToDevice));
        cuda_state_t *s = (cuda_state_t *)gpu->bstate;
        gr_stats_part_t part;
        gr_stats_part_init(&part);
        const uint64_t a = n / 3;
        ASSERT(gr_cuda_stats_launch(s, dv, a, t, 0, s->stream) == GR_SUCCESS);
        ASSERT(gr_cuda_stats_launch(s, (char *)dv + a * esz, n - a, t, 1, s->stream) == GR_SUCCESS);
        ASSERT(gr_cuda_stats_collect(s, 0, &part) == GR_SUCCESS);
        ASSERT(gr_cuda_stats_collect(s, 1, &part) == GR_SUCCESS);
        gr_desc_t d = desc_of(t);
        gr_stats_t g, ref;
        ASSERT(gr_stats_combine(gpu, &d, &part, &g) == GR_SUCCESS);
        ASSERT(gr_stats_host(host, h, n, &d, &ref, NULL) == GR_SUCCESS);
        char c[96];
        snprintf(c, sizeof(c), "slots %s n=%llu", gr_dtype_name(t), (unsigned long long)n);
        compare(&g, &ref, c);
        ++g_checks;
        CU(cudaFree(dv));
        free(h);
    }
}

/* gr_stats_buffer: a synthetic buffer on cuda against the same on cpu. */
static void test_buffers(gr_ctx_t gpu, gr_ctx_t cpu)
{
    const gr_dtype_t types[] = {GR_F32, GR_F64, GR_I32, GR_I64};
    const uint64_t n = g_small ? 5003 : (1u << 20) + 7;
    for (int ti = 0; ti < 4; ++ti) {
        gr_dtype_t t = types[ti];
        const gr_gen_t gens[] = {GR_GEN_ONES, GR_GEN_IOTA, t <= GR_F64 ? GR_GEN_NORMAL : GR_GEN_RANDINT, GR_GEN_STRESS};
        for (int gi = 0; gi < 4; ++gi) {
            gr_buffer_t bg = NULL, bc = NULL;
            ASSERT(gr_buffer_create_synthetic(gpu, t, gens[gi], 42, n, &bg) == GR_SUCCESS);
            ASSERT(gr_buffer_create_synthetic(cpu, t, gens[gi], 42, n, &bc) == GR_SUCCESS);
            gr_desc_t d = desc_of(t);
            gr_stats_t g, h;
            ASSERT(gr_stats_buffer(gpu, bg, &d, &g, NULL) == GR_SUCCESS);
            ASSERT(gr_stats_buffer(cpu, bc, &d, &h, NULL) == GR_SUCCESS);
            char c[96];
            snprintf(c, sizeof(c), "buffer %s gen %s n=%llu", gr_dtype_name(t), gr_gen_name(gens[gi]),
                     (unsigned long long)n);
            compare(&g, &h, c);
            if (!isnan(h.var) && fabs(g.var - h.var) > 1e-9 * fabs(h.var))
                GR_TEST_FAIL_("%s: var GPU %.17g host %.17g", c, g.var, h.var);
            if (gens[gi] == GR_GEN_ONES && (g.var != 0 || g.mean != 1 || g.sum != (double)n))
                GR_TEST_FAIL_("%s: ones: var %.17g mean %.17g sum %.17g", c, g.var, g.mean, g.sum);
            ++g_checks;
            gr_buffer_destroy(bg);
            gr_buffer_destroy(bc);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--small"))
            g_small = 1;
        else if (!strcmp(argv[i], "--race"))
            g_small = g_race = 1;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        (void)cudaGetLastError();
        printf("SKIP: no CUDA GPU is visible; the GPU stats tests need one\n");
        fflush(stdout);
        MPI_Finalize();
        return GR_TEST_SKIP_CODE;
    }
    gr_ctx_t host = make_ctx(GR_BACKEND_CPU, 0, 0);
    gr_ctx_t g[5];
    const char *gname[5] = {"default", "grid 1", "grid 7 block 128", "grid 1000 block 512", "grid 133 block 256"};
    g[0] = make_ctx(GR_BACKEND_CUDA, 0, 0);
    g[1] = make_ctx(GR_BACKEND_CUDA, 0, 1);
    g[2] = make_ctx(GR_BACKEND_CUDA, 128, 7);
    g[3] = make_ctx(GR_BACKEND_CUDA, 512, 1000);
    g[4] = make_ctx(GR_BACKEND_CUDA, 256, 133);
    const int ng = g_small ? 3 : 5;
    const gr_dtype_t types[] = {GR_F32, GR_F64, GR_I32, GR_I64};
    const uint64_t sizes_full[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4099, 65537, 100003, (1u << 20) + 5};
    const uint64_t sizes_small[] = {0, 1, 2, 3, 17, 1000, 4099};
    const uint64_t sizes_race[] = {0, 17, 4099};
    const uint64_t *sizes = g_race ? sizes_race : g_small ? sizes_small : sizes_full;
    const int nsizes = g_race ? 3 : g_small ? 7 : (int)(sizeof(sizes_full) / sizeof(sizes_full[0]));
    for (int ti = 0; ti < 4; ++ti)
        for (int si = 0; si < nsizes; ++si)
            for (int off = 0; off < 4; ++off) {
                if ((g_small && off == 2) || (g_race && off != 1))
                    continue;
                for (int p = 0; p < PAT_COUNT; ++p) {
                    if (g_race && p != PAT_UNIFORM && p != PAT_SPECIAL)
                        continue;
                    if (sizes[si] > 100003 && (off == 1 || off == 2) && p != PAT_SPECIAL)
                        continue; /* keep the run short: big sizes at offsets 0 and 3 */
                    run_case(g, gname, ng, host, types[ti], sizes[si], off, p);
                }
            }
    /* an invalid forced grid is refused with a message, not launched */
    gr_ctx_t bad = make_ctx(GR_BACKEND_CUDA, 0, GR_STATS_GRID_MAX + 1);
    {
        float one = 1.0f;
        void *dv = NULL;
        CU(cudaMalloc(&dv, sizeof(one)));
        CU(cudaMemcpy(dv, &one, sizeof(one), cudaMemcpyHostToDevice));
        gr_desc_t d = desc_of(GR_F32);
        gr_stats_t st;
        ASSERT(gr_stats_device(bad, dv, 1, &d, &st, NULL) == GR_ERR_INVALID_ARG);
        CU(cudaFree(dv));
    }
    gr_ctx_destroy(bad);
    test_slots(g[0], host);
    if (!g_race)
        test_buffers(g[0], host);
    for (int k = 0; k < 5; ++k)
        gr_ctx_destroy(g[k]);
    gr_ctx_destroy(host);
    printf("PASS: %llu GPU stats cases match the host (sum, counts, min/max bit for bit; variance within %.0e)\n",
           (unsigned long long)g_checks, VAR_TOL);
    MPI_Finalize();
    return 0;
}
