/*
 * test_exact_gpu.c - the GPU exact reduce (kernels/gr_exact.cuh) against the
 * CPU exact accumulator, bit for bit, through its launcher.
 *
 * The reference adds every term exactly with gr_xacc_add_double, as the cpu
 * backend's exact mode does (gr_partial_add_term), and rounds with the rules
 * of gr_partial_finish; built with the library (not GR_EXACT_TEST_STANDALONE)
 * every result is also checked against gr_partial_finish itself. A case
 * passes when the GPU's exact state (normalised limbs), its NaN/+Inf/-Inf
 * counts, its -0.0 flag and the rounded value all equal the reference.
 *
 * f16 and bf16 (2-byte elements, the f32 exact state of their values,
 * rounded once to the half type) run through the same cases as f32.
 *
 *   test_exact_gpu           generators x dtypes x ops x sizes x offsets x
 *                            expansion sizes; grids 1, 7, 132, 2^14, default and
 *                            block sizes; forced rounds; adversarial arrays
 *   test_exact_gpu --small   a few of each (for compute-sanitizer memcheck)
 *   test_exact_gpu --race    launch shapes only, small (for racecheck)
 *   test_exact_gpu --big     N > 2^31: f32 ones (known answer), f32 and f64
 *                            stress against a threaded CPU reference, grids
 *                            1, 7 and default
 *   test_exact_gpu --bench   GB/s of the exact kernel (2 and 3 terms, several
 *                            grids) against the fast kernel on the same
 *                            buffer, f32/f64 at 2^20, 2^24 and 2^30; both
 *                            with the result in device memory too; the
 *                            ablation rows (exact_ablate.cu; "cut: ..." rows
 *                            stop the kernel early: timing only)
 *   test_exact_gpu --stamps  where the time goes: the production kernel with a
 *                            %globaltimer probe at each stage (GR_XF_STAMPS),
 *                            f32/f64 at 2^20, 2^22, 2^24; per stage the time
 *                            since the first block's entry, medians of 11 runs
 *
 * Exit 77 (SKIP) where no GPU is visible; never PASS without one.
 */
#include "gr_common.h"
#include "gr_exact_kernels.h"
#include "gr_kernels.h"
#include "gr_xacc.h"
#include "test_cuda.h"

#include "exact_ablate.h"

#ifndef GR_EXACT_TEST_STANDALONE
#include "gr_internal.h"
#endif

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_checks;
static int g_sms;
static int g_cc; /* compute capability of device 0: its tuning policy */
static int g_small;

/* ---- exact states ------------------------------------------------------------- */

typedef struct xstate {
    gr_xacc_t sum;
    uint64_t count, nan, pinf, ninf, nonnegzero, adds;
} xstate_t;

static void xs_init(xstate_t *s) { memset(s, 0, sizeof(*s)); }

/* One term, exactly as gr_partial_add_term does it. */
static void xs_add(xstate_t *s, double t)
{
    if (isnan(t)) {
        s->nan++;
    } else if (isinf(t)) {
        if (t > 0)
            s->pinf++;
        else
            s->ninf++;
    } else {
        if (!(t == 0 && signbit(t)))
            s->nonnegzero++;
        gr_xacc_add_double(&s->sum, t);
        if (++s->adds >= GR_XACC_HEADROOM) {
            gr_xacc_normalize(&s->sum);
            s->adds = 0;
        }
    }
}

static void xs_merge(xstate_t *s, const xstate_t *q)
{
    gr_xacc_t a = q->sum;
    gr_xacc_normalize(&a);
    gr_xacc_normalize(&s->sum);
    gr_xacc_add(&s->sum, &a);
    gr_xacc_normalize(&s->sum);
    s->count += q->count;
    s->nan += q->nan;
    s->pinf += q->pinf;
    s->ninf += q->ninf;
    s->nonnegzero += q->nonnegzero;
}

/* The rules of gr_partial_finish for a floating sum-like op. */
static double xs_finish(const xstate_t *s, int dtype)
{
    if (s->nan > 0 || (s->pinf > 0 && s->ninf > 0))
        return NAN;
    if (s->pinf > 0)
        return INFINITY;
    if (s->ninf > 0)
        return -INFINITY;
    /* f32 / f16 / bf16: rounded once to the type; f64 */
    double r = gr_xacc_round_dtype(&s->sum, dtype);
    if (r == 0 && s->count > 0 && s->nonnegzero == 0)
        r = -0.0;
    return r;
}

#ifndef GR_EXACT_TEST_STANDALONE
/* The library's own finish, from a partial folded like the cuda backend does. */
static double lib_finish(const xstate_t *s, int dtype, int op)
{
    gr_partial_t p;
    gr_partial_init(&p);
    p.sum = s->sum;
    p.count = (int64_t)s->count;
    p.nan = (int64_t)s->nan;
    p.pinf = (int64_t)s->pinf;
    p.ninf = (int64_t)s->ninf;
    p.nonnegzero = (int64_t)s->nonnegzero;
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = (gr_dtype_t)dtype;
    d.op.kind = (gr_op_kind_t)op;
    d.op.power = 1;
    d.mode = GR_MODE_EXACT;
    gr_value_t v;
    gr_partial_finish(&p, &d, &v);
    return v.f;
}
#endif

static const char *dt_name(int dt)
{
    return dt == GR_C_F32 ? "f32" : dt == GR_C_F64 ? "f64" : dt == GR_C_F16 ? "f16" : "bf16";
}
static const char *op_name(int op)
{
    return op == GR_C_SUM ? "sum" : op == GR_C_ABSSUM ? "abssum" : op == GR_C_SUMSQ ? "sumsq" : "?";
}
static size_t esz(int dt) { return dt == GR_C_F64 ? 8 : gr_c_is_half(dt) ? 2 : 4; }

/* The floating dtypes the exact kernel reads. */
static const int DTYPES[] = {GR_C_F32, GR_C_F64, GR_C_F16, GR_C_BF16};
#define NDTYPES ((int)(sizeof(DTYPES) / sizeof(DTYPES[0])))

static double elem(const void *h, int dt, uint64_t i)
{
    if (gr_c_is_half(dt)) {
        uint16_t b;
        memcpy(&b, (const char *)h + 2 * i, 2);
        return (double)gr_half_bits_to_f32(b, dt == GR_C_BF16);
    }
    return dt == GR_C_F32 ? (double)((const float *)h)[i] : ((const double *)h)[i];
}

/* Store v as element i of dt (f32 and halves round to nearest even; the tests pass values they hold). */
static void put_elem(void *h, int dt, uint64_t i, double v)
{
    if (gr_c_is_half(dt)) {
        uint16_t b = gr_f32_to_half_bits((float)v, dt == GR_C_BF16);
        memcpy((char *)h + 2 * i, &b, 2);
    } else if (dt == GR_C_F32) {
        ((float *)h)[i] = (float)v;
    } else {
        ((double *)h)[i] = v;
    }
}

static void ref_host(const void *h, int dt, int op, uint64_t n, xstate_t *s)
{
    xs_init(s);
    s->count = n;
    for (uint64_t i = 0; i < n; ++i)
        xs_add(s, gr_term_f(op, 1, elem(h, dt, i)));
}

/* ---- the GPU side ---------------------------------------------------------------- */

typedef struct gpu {
    void *scratch;
    gr_exact_result_t *res_host, *res_dev;
    cudaStream_t stream;
    void *buf;
    size_t buf_bytes;
} gpu_t;

static gpu_t G;

static void gpu_init(void)
{
    CU(cudaStreamCreate(&G.stream));
    CU(cudaMalloc(&G.scratch, gr_cuda_exact_scratch_bytes()));
    CU(cudaMemset(G.scratch, 0, gr_cuda_exact_scratch_bytes()));
    CU(cudaHostAlloc((void **)&G.res_host, sizeof(gr_exact_result_t), cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&G.res_dev, G.res_host, 0));
    CU(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    g_cc = gr_cuda_device_cc(0);
}

static void *gpu_buf(size_t bytes)
{
    if (bytes > G.buf_bytes) {
        if (G.buf)
            CU(cudaFree(G.buf));
        G.buf_bytes = bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes;
        CU(cudaMalloc(&G.buf, G.buf_bytes));
    }
    return G.buf;
}

typedef struct cfg {
    int terms, grid, block;
    unsigned round_vecs;
} cfg_t;

static int default_grid(uint64_t n, int dt, int op, int terms, int block)
{
    int occ = 0;
    CU(gr_cuda_exact_occupancy(dt, op, 1, terms, block, &occ));
    ASSERT(occ >= 1);
    return gr_cuda_grid(GR_KF_EXACT, g_cc, n, dt, block, g_sms, occ);
}

static void read_result(xstate_t *s, uint64_t n, int dt, int op, int grid, int block);

/* A launch of the exact kernel over n elements at d, on G's scratch, result and stream
 * (terms 0: the default; round_vecs 0: GR_EXACT_ROUND_VECS). */
static gr_cuda_exact_launch_t exact_launch(const void *d, uint64_t n, int dt, int op, int terms, int block, int grid)
{
    gr_cuda_exact_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = d;
    l.n = n;
    l.dtype = dt;
    l.op = op;
    l.power = 1;
    l.terms = terms;
    l.block = block;
    l.grid = grid;
    l.scratch = G.scratch;
    l.result = G.res_dev;
    l.stream = G.stream;
    return l;
}

/* Reduce n elements at device pointer d; fills the GPU's exact state. */
static void gpu_run(const void *d, uint64_t n, int dt, int op, cfg_t c, xstate_t *s)
{
    const int block = c.block ? c.block : gr_tuning_for(GR_KF_EXACT, dt, g_cc).block;
    gr_cuda_exact_launch_t l =
        exact_launch(d, n, dt, op, c.terms, block, c.grid ? c.grid : default_grid(n, dt, op, c.terms, block));
    l.round_vecs = c.round_vecs;
    memset(G.res_host, 0xA5, sizeof(*G.res_host));
    G.res_host->count = UINT64_MAX;
    CU(gr_cuda_launch_reduce_exact(&l));
    CU(cudaStreamSynchronize(G.stream));
    read_result(s, n, dt, op, l.grid, l.block);
}

/* The result of the last launch (synchronised) as a state. */
static void read_result(xstate_t *s, uint64_t n, int dt, int op, int grid, int block)
{
    const gr_exact_result_t *r = G.res_host;
    if (r->count != n)
        GR_TEST_FAIL_("%s %s n=%llu grid %d block %d: the kernel did not write its result (count %llu)", dt_name(dt),
                      op_name(op), (unsigned long long)n, grid, block, (unsigned long long)r->count);
    xs_init(s);
    gr_exact_result_to_xacc(r, &s->sum);
    s->count = n;
    s->nan = r->nan;
    s->pinf = r->pinf;
    s->ninf = r->ninf;
    s->nonnegzero = r->nonnegzero;
}

static void expect_same(const char *what, const xstate_t *gpu, const xstate_t *ref, int dt, int op)
{
    gr_xacc_t a = gpu->sum, b = ref->sum;
    gr_xacc_normalize(&a);
    gr_xacc_normalize(&b);
    double vg = xs_finish(gpu, dt), vr = xs_finish(ref, dt);
    int bad = memcmp(&a, &b, sizeof(a)) != 0 || gpu->nan != ref->nan || gpu->pinf != ref->pinf ||
              gpu->ninf != ref->ninf || (gpu->nonnegzero != 0) != (ref->nonnegzero != 0) ||
              memcmp(&vg, &vr, sizeof(vg)) != 0;
    if (bad) {
        fprintf(stderr, "FAIL %s: gpu %.17g (%a) nan %llu +inf %llu -inf %llu nz %llu; cpu %.17g (%a) nan %llu "
                        "+inf %llu -inf %llu nz %llu\n",
                what, vg, vg, (unsigned long long)gpu->nan, (unsigned long long)gpu->pinf,
                (unsigned long long)gpu->ninf, (unsigned long long)gpu->nonnegzero, vr, vr,
                (unsigned long long)ref->nan, (unsigned long long)ref->pinf, (unsigned long long)ref->ninf,
                (unsigned long long)ref->nonnegzero);
        for (int k = GR_XACC_LIMBS - 1; k >= 0; --k)
            if (a.limb[k] != b.limb[k])
                fprintf(stderr, "  limb %d: gpu %lld cpu %lld\n", k, (long long)a.limb[k], (long long)b.limb[k]);
        exit(1);
    }
#ifndef GR_EXACT_TEST_STANDALONE
    double vl = lib_finish(gpu, dt, op);
    if (memcmp(&vl, &vr, sizeof(vl)) != 0)
        GR_TEST_FAIL_("%s: gr_partial_finish gives %a, the test's mirror %a", what, vl, vr);
#else
    (void)op;
#endif
    g_checks++;
}

/* Upload host data at element offset off and compare every config with ref. */
static void check_host(const char *name, const void *h, int dt, int op, uint64_t n, uint64_t off, const cfg_t *cfgs,
                       int ncfg, const xstate_t *ref_in)
{
    xstate_t ref, got;
    if (ref_in)
        ref = *ref_in;
    else
        ref_host(h, dt, op, n, &ref);
    char *base = (char *)gpu_buf((n + off + 1) * esz(dt));
    void *d = base + off * esz(dt);
    if (n)
        CU(cudaMemcpy(d, h, n * esz(dt), cudaMemcpyHostToDevice));
    for (int c = 0; c < ncfg; ++c) {
        char what[256];
        snprintf(what, sizeof(what), "%s %s %s n=%llu off=%llu terms %d grid %d block %d rounds %u", name,
                 dt_name(dt), op_name(op), (unsigned long long)n, (unsigned long long)off, cfgs[c].terms,
                 cfgs[c].grid, cfgs[c].block, cfgs[c].round_vecs);
        gpu_run(d, n, dt, op, cfgs[c], &got);
        expect_same(what, &got, &ref, dt, op);
    }
}

static const cfg_t CFG_TERMS[] = {{2, 0, 0, 0}, {3, 0, 0, 0}};

/* ---- generators ------------------------------------------------------------------ */

static void *gen_host(int gen, int dt, uint64_t n, uint64_t begin)
{
    void *h = malloc((n ? n : 1) * esz(dt));
    ASSERT(h);
    gr_gen_keys_t k = gr_gen_make_keys(0x5EEDF00Dull);
    for (uint64_t i = 0; i < n; ++i)
        put_elem(h, dt, i, gr_gen_float(gen, dt, k, begin + i)); /* halves: the half's value, exact */
    return h;
}

static const char *GEN_NAMES[] = {"ones", "iota", "uniform", "normal", "randint", "stress"};

static void test_generators(void)
{
    static const uint64_t sizes[] = {0, 1, 2, 3, 5, 17, 1000, 65537, 1000003, 4194311};
    const int nsizes = g_small ? 6 : 10;
    for (int gen = 0; gen < 6; ++gen) {
        for (int di = 0; di < NDTYPES; ++di) {
            const int dt = DTYPES[di];
            for (int op = 0; op <= GR_C_SUMSQ; ++op) {
                if (op == GR_C_MIN || op == GR_C_MAX || (op == GR_C_SUMSQ && dt == GR_C_F64))
                    continue;
                if (g_small && gen != GR_C_STRESS && gen != GR_C_UNIFORM)
                    continue;
                for (int si = 0; si < nsizes; ++si) {
                    uint64_t n = sizes[si];
                    /* begin 7: the shard of a rank that starts mid-dataset */
                    void *h = gen_host(gen, dt, n, si & 1 ? 7 : 0);
                    xstate_t ref;
                    ref_host(h, dt, op, n, &ref);
                    for (uint64_t off = 0; off < 4; off += (n > 100000 ? 3 : 1))
                        check_host(GEN_NAMES[gen], h, dt, op, n, off, CFG_TERMS, 2, &ref);
                    free(h);
                }
            }
        }
    }
    printf("generators: %llu checks passed\n", (unsigned long long)g_checks);
}

/* ---- launch shapes ------------------------------------------------------------------ */

static void test_shapes(void)
{
    cfg_t cfgs[64];
    int nc = 0;
    /* GR_EXACT_GRID_MAX: the tally's block count at its largest */
    const int grids[] = {1, 7, 132, GR_EXACT_GRID_MAX, 0};
    const int blocks[] = {128, 256, 512};
    for (int t = 2; t <= 3; ++t)
        for (int gi = 0; gi < 5; ++gi)
            for (int bi = 0; bi < 3; ++bi) {
                cfg_t c = {t, grids[gi], blocks[bi], 0};
                cfgs[nc++] = c;
            }
    /* forced rounds: the per-round merge and renormalisation many times over */
    const unsigned rounds[] = {1, 2, 5};
    for (int ri = 0; ri < 3; ++ri) {
        cfg_t a = {2, 3, 128, rounds[ri]}, b = {3, 0, 256, rounds[ri]};
        cfgs[nc++] = a;
        cfgs[nc++] = b;
    }
    /* under a sanitizer: a spread of the above */
    static const cfg_t small[] = {{2, 1, 128, 0}, {3, 7, 256, 0}, {2, 0, 512, 0}, {3, 132, 256, 1}, {2, 3, 128, 2}};
    const uint64_t n = g_small ? 20011 : 3000017;
    for (int di = 0; di < NDTYPES; ++di) {
        const int dt = DTYPES[di];
        for (int gen = GR_C_UNIFORM; gen <= GR_C_STRESS; gen += GR_C_STRESS - GR_C_UNIFORM) {
            void *h = gen_host(gen, dt, n, 1);
            if (g_small)
                check_host(GEN_NAMES[gen], h, dt, GR_C_SUM, n, 1, small, (int)(sizeof(small) / sizeof(small[0])), NULL);
            else
                check_host(GEN_NAMES[gen], h, dt, GR_C_SUM, n, 1, cfgs, nc, NULL);
            free(h);
        }
    }
    printf("shapes: %llu checks passed\n", (unsigned long long)g_checks);
}

/* ---- adversarial arrays ---------------------------------------------------------------- */

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void) { return rng_state = gr_mix64(rng_state); }

/* Shuffle n elements of size sz (Fisher-Yates with the test's generator). */
static void shuffle(void *a, uint64_t n, size_t sz)
{
    char tmp[8];
    for (uint64_t i = n; i > 1; --i) {
        uint64_t j = rng() % i;
        memcpy(tmp, (char *)a + (i - 1) * sz, sz);
        memcpy((char *)a + (i - 1) * sz, (char *)a + j * sz, sz);
        memcpy((char *)a + j * sz, tmp, sz);
    }
}

/* An array of doubles (converted to dt); checked for every op, offsets 0 and 1, terms 2 and 3. */
static void check_doubles(const char *name, const double *v, uint64_t n, int dt, double expect_sum, int has_expect)
{
    void *h = malloc((n ? n : 1) * esz(dt));
    ASSERT(h);
    for (uint64_t i = 0; i < n; ++i)
        put_elem(h, dt, i, v[i]);
    for (int op = 0; op <= GR_C_SUMSQ; ++op) {
        if (op == GR_C_MIN || op == GR_C_MAX || (op == GR_C_SUMSQ && dt == GR_C_F64))
            continue;
        xstate_t ref;
        ref_host(h, dt, op, n, &ref);
        if (op == GR_C_SUM && has_expect) {
            double r = xs_finish(&ref, dt);
            if (memcmp(&r, &expect_sum, sizeof(r)) != 0)
                GR_TEST_FAIL_("%s %s: the cpu reference gives %a, the known answer is %a", name, dt_name(dt), r,
                              expect_sum);
        }
        for (uint64_t off = 0; off < 2; ++off)
            check_host(name, h, dt, op, n, off, CFG_TERMS, 2, &ref);
        if (!g_small) {
            /* the widest grid: most blocks add zeros, a few add large values of
             * either sign, so the tally's partial sums go negative under its counts */
            cfg_t c[] = {{2, 1, 128, 1}, {3, 7, 512, 3}, {3, GR_EXACT_GRID_MAX, 128, 0}};
            check_host(name, h, dt, op, n, 3, c, 3, &ref);
        }
    }
    free(h);
}

static double *dalloc(uint64_t n)
{
    double *v = (double *)calloc(n ? n : 1, sizeof(double));
    ASSERT(v);
    return v;
}

/* Random finite double (dt f64) or float (dt f32) over the whole exponent range, subnormals included. */
static double any_finite(int dt)
{
    for (;;) {
        uint64_t b = rng();
        if (dt == GR_C_F32) {
            uint32_t u = (uint32_t)b;
            float f;
            memcpy(&f, &u, sizeof(f));
            if (isfinite(f))
                return (double)f;
        } else {
            double d;
            memcpy(&d, &b, sizeof(d));
            if (isfinite(d))
                return d;
        }
    }
}

static void test_adversarial(void)
{
    const uint64_t rep = g_small ? 3001 : 200003;
    for (int dt = GR_C_F32; dt <= GR_C_F64; ++dt) {
        /* massive cancellation: (x, 1, -x) shuffled; the sum is the count of ones */
        const double bigs[] = {1e30, dt == GR_C_F32 ? 3e38 : 1e300};
        for (int b = 0; b < 2; ++b) {
            uint64_t n = 3 * rep;
            double *v = dalloc(n);
            double x = dt == GR_C_F32 ? (double)(float)bigs[b] : bigs[b];
            for (uint64_t i = 0; i < rep; ++i) {
                v[3 * i] = x;
                v[3 * i + 1] = 1.0;
                v[3 * i + 2] = -x;
            }
            check_doubles("cancel-ordered", v, n, dt, (double)rep, 1);
            shuffle(v, n, sizeof(double));
            check_doubles("cancel-shuffled", v, n, dt, dt == GR_C_F32 ? (double)(float)rep : (double)rep, 1);
            free(v);
        }
        /* full exponent range with subnormals; and the same with each value's negation (sum 0) */
        {
            uint64_t n = rep;
            double *v = dalloc(2 * n);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = any_finite(dt);
            check_doubles("full-range", v, n, dt, 0, 0);
            for (uint64_t i = 0; i < n; ++i)
                v[n + i] = -v[i];
            shuffle(v, 2 * n, sizeof(double));
            check_doubles("full-range-cancel", v, 2 * n, dt, 0.0, 1);
            /* subnormals only */
            for (uint64_t i = 0; i < n; ++i) {
                uint64_t m = rng();
                v[i] = dt == GR_C_F32 ? (double)((float)(m & 0x7FFFFF) * 0x1p-149f) * ((m >> 40) & 1 ? -1 : 1)
                                      : ldexp((double)(m & 0xFFFFFFFFFFFFFull), -1074) * ((m >> 60) & 1 ? -1 : 1);
            }
            check_doubles("subnormal", v, n, dt, 0, 0);
            free(v);
        }
        /* near overflow: max, max, -max ... stays finite; all +max overflows to +Inf, all -max to -Inf */
        {
            const double mx = dt == GR_C_F32 ? (double)FLT_MAX : DBL_MAX;
            uint64_t n = rep;
            double *v = dalloc(n);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = (i % 3 == 2) ? -mx : mx;
            check_doubles("near-overflow-mixed", v, n, dt, 0, 0);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = mx * (1.0 - (double)(i % 7) * 0x1p-20);
            check_doubles("overflow-pos", v, n, dt, INFINITY, 1);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = -v[i];
            check_doubles("overflow-neg", v, n, dt, -INFINITY, 1);
            /* exactly at the edge: max + ulp/2 rounds to +Inf (tie to even, beyond range) */
            double ulp = dt == GR_C_F32 ? 0x1p104 : 0x1p971;
            double e1[] = {mx, ulp / 2};
            check_doubles("overflow-tie", e1, 2, dt, INFINITY, 1);
            double e2[] = {mx, ulp / 4};
            check_doubles("overflow-below-tie", e2, 2, dt, mx, 1);
            free(v);
        }
        /* signed zeros */
        {
            uint64_t n = rep;
            double *v = dalloc(n);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = -0.0;
            check_doubles("all-neg-zero", v, n, dt, -0.0, 1);
            v[n / 2] = 0.0;
            check_doubles("neg-zeros-one-pos", v, n, dt, 0.0, 1);
            v[n / 2] = -0.0;
            v[n / 3] = 1.5;
            v[n / 4] = -1.5;
            check_doubles("neg-zeros-cancel", v, n, dt, 0.0, 1);
            check_doubles("one-neg-zero", v + n / 2, 1, dt, -0.0, 1);
            free(v);
        }
        /* NaN and Inf mixes among finite values */
        {
            uint64_t n = rep;
            double *v = dalloc(n);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = any_finite(dt) * (dt == GR_C_F64 ? 0x1p-900 : 1.0);
            v[n - 1] = INFINITY;
            check_doubles("pinf", v, n, dt, INFINITY, 1);
            v[n / 3] = -INFINITY;
            check_doubles("pinf-ninf", v, n, dt, NAN, 0);
            v[n - 1] = 1.0;
            check_doubles("ninf", v, n, dt, -INFINITY, 1);
            v[n / 2] = NAN;
            check_doubles("ninf-nan", v, n, dt, NAN, 0);
            for (uint64_t i = 0; i < n; i += 5)
                v[i] = (i / 5) % 3 == 0 ? NAN : (i / 5) % 3 == 1 ? INFINITY : -INFINITY;
            check_doubles("many-nonfinite", v, n, dt, NAN, 0);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = (i & 1) ? DBL_MAX : INFINITY;
            if (dt == GR_C_F64)
                check_doubles("inf-and-huge", v, n, dt, INFINITY, 1);
            free(v);
        }
        /* ties: the exact sum lies halfway between two neighbours of the target format */
        if (dt == GR_C_F64) {
            double t1[] = {1.0, 0x1p-54, 0x1p-54};                /* 1 + 2^-53: tie -> even (1) */
            check_doubles("tie-even-down", t1, 3, dt, 1.0, 1);
            double t2[] = {1.0 + 0x1p-52, 0x1p-54, 0x1p-54};      /* tie -> even (up) */
            check_doubles("tie-even-up", t2, 3, dt, 1.0 + 0x1p-51, 1);
            double t3[] = {1.0, 0x1p-54, 0x1p-54, 0x1p-1074};     /* just above the tie */
            check_doubles("tie-above", t3, 4, dt, 1.0 + 0x1p-52, 1);
            double t4[] = {1.0, 0x1p-53, -0x1p-1074};             /* just below the tie */
            check_doubles("tie-below", t4, 3, dt, 1.0, 1);
            double t5[] = {0x1p-1074, 0.0, 0x1p-1074}; /* subnormal sums are exact */
            check_doubles("subnormal-sum", t5, 3, dt, 0x1p-1073, 1);
        } else {
            double t1[] = {1.0, 0x1p-25, 0x1p-25};                /* 1 + 2^-24: tie -> 1 */
            check_doubles("f32-tie-even-down", t1, 3, dt, 1.0, 1);
            double t2[] = {1.0 + 0x1p-23, 0x1p-25, 0x1p-25};
            check_doubles("f32-tie-even-up", t2, 3, dt, 1.0 + 0x1p-22, 1);
            /* double rounding trap: 1 + 2^-24 + 2^-60 rounds to 1 + 2^-23 in one step,
             * but to 1 + 2^-24 (f64) and then 1 (f32) in two */
            double t3[] = {1.0, 0x1p-25, 0x1p-25, 0x1p-61, 0x1p-61};
            check_doubles("f32-double-rounding", t3, 5, dt, 1.0 + 0x1p-23, 1);
            double t4[] = {0x1p-149, 0x1p-149, 0x1p-149};
            check_doubles("f32-subnormal-sum", t4, 3, dt, 0x1.8p-148, 1);
            double t5[] = {(double)FLT_MAX, 0x1p103};              /* FLT_MAX + ulp/2: tie beyond range -> Inf */
            check_doubles("f32-overflow-tie", t5, 2, dt, INFINITY, 1);
        }
        /* long sums whose true value is tiny: big values that cancel in pairs, plus one tiny term */
        {
            uint64_t n = rep * 2 + 1;
            double *v = dalloc(n);
            for (uint64_t i = 0; i < rep; ++i) {
                double m = (double)(1 + (rng() & 0xFFFFF)) * (dt == GR_C_F32 ? 0x1p60 : 0x1p900);
                v[2 * i] = (rng() & 1) ? m : -m;
                v[2 * i + 1] = -v[2 * i];
            }
            v[n - 1] = dt == GR_C_F32 ? 0x1p-149 : 0x1p-1074;
            shuffle(v, n, sizeof(double));
            check_doubles("tiny-result", v, n, dt, dt == GR_C_F32 ? 0x1p-149 : 0x1p-1074, 1);
            free(v);
        }
    }
    printf("adversarial: %llu checks passed\n", (unsigned long long)g_checks);
}

/* A random finite f16 / bf16 value (every bit pattern but Inf/NaN: subnormals included). */
static double any_finite_half(int dt)
{
    for (;;) {
        uint16_t b = (uint16_t)rng();
        double v = (double)gr_half_bits_to_f32(b, dt == GR_C_BF16);
        if (isfinite(v))
            return v;
    }
}

/*
 * f16 / bf16: the kernel reads halves and keeps the f32 exact state of their
 * values; the host rounds that once to the half type. Cancellation, the whole
 * range with subnormals, overflow on rounding (also at the tie), ties to even
 * and the double-rounding trap at the half's precision, signed zeros, NaN/Inf.
 */
static void test_adversarial_halves(void)
{
    const uint64_t rep = g_small ? 3001 : 200003;
    for (int dt = GR_C_F16; dt <= GR_C_BF16; ++dt) {
        const int f16 = dt == GR_C_F16;
        const double mx = f16 ? 65504.0 : 0x1.FEp127;         /* largest finite */
        const double half_ulp_top = f16 ? 16.0 : 0x1p119;     /* half the spacing just below mx */
        const double tiny = f16 ? 0x1p-24 : 0x1p-133;         /* smallest subnormal */
        const double one_ulp = f16 ? 0x1p-10 : 0x1p-7;        /* spacing of [1, 2) */
        {
            uint64_t n = 3 * rep;
            double *v = dalloc(n);
            const double x = f16 ? 60000.0 : 0x1.8p100;
            for (uint64_t i = 0; i < rep; ++i) {
                v[3 * i] = x;
                v[3 * i + 1] = 1.0;
                v[3 * i + 2] = -x;
            }
            shuffle(v, n, sizeof(double));
            check_doubles("half-cancel-shuffled", v, n, dt, 0, 0);
            free(v);
        }
        {
            uint64_t n = rep;
            double *v = dalloc(2 * n);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = any_finite_half(dt);
            check_doubles("half-full-range", v, n, dt, 0, 0);
            for (uint64_t i = 0; i < n; ++i)
                v[n + i] = -v[i];
            shuffle(v, 2 * n, sizeof(double));
            check_doubles("half-full-range-cancel", v, 2 * n, dt, 0.0, 1);
            for (uint64_t i = 0; i < n; ++i) {
                uint64_t m = rng();
                v[i] = (double)(m & (f16 ? 0x3FFu : 0x7Fu)) * tiny * ((m >> 40) & 1 ? -1 : 1);
            }
            check_doubles("half-subnormal", v, n, dt, 0, 0);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = mx;
            check_doubles("half-overflow-pos", v, n, dt, INFINITY, 1);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = (i % 3 == 2) ? mx : -mx;
            check_doubles("half-overflow-neg", v, n, dt, -INFINITY, 1);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = -0.0;
            check_doubles("half-all-neg-zero", v, n, dt, -0.0, 1);
            v[n / 2] = 0.0;
            check_doubles("half-neg-zeros-one-pos", v, n, dt, 0.0, 1);
            for (uint64_t i = 0; i < n; ++i)
                v[i] = any_finite_half(dt);
            v[n - 1] = INFINITY;
            check_doubles("half-pinf", v, n, dt, INFINITY, 1);
            v[n / 3] = -INFINITY;
            check_doubles("half-pinf-ninf", v, n, dt, NAN, 0);
            v[n / 2] = NAN;
            check_doubles("half-nan", v, n, dt, NAN, 0);
            free(v);
        }
        /* rounding at the half's precision: 1 + ulp/2 ties to 1; 1 + ulp + ulp/2 ties up to 1 + 2 ulp */
        double t1[] = {1.0, one_ulp / 4, one_ulp / 4};
        check_doubles("half-tie-even-down", t1, 3, dt, 1.0, 1);
        double t2[] = {1.0 + one_ulp, one_ulp / 4, one_ulp / 4};
        check_doubles("half-tie-even-up", t2, 3, dt, 1.0 + 2 * one_ulp, 1);
        /* 1 + ulp/2 + tiny: one rounding gives 1 + ulp; rounding to f32 first (tiny is at most half
         * an f32 ulp of 1: it vanishes, ties to even) and then to the half would give 1 */
        double t3[] = {1.0, one_ulp / 4, one_ulp / 4, tiny};
        check_doubles("half-double-rounding", t3, 5, dt, 1.0 + one_ulp, 1);
        double t4[] = {mx, half_ulp_top}; /* a tie beyond the range: Inf */
        check_doubles("half-overflow-tie", t4, 2, dt, INFINITY, 1);
        double t5[] = {mx, half_ulp_top / 2};
        check_doubles("half-overflow-below-tie", t5, 2, dt, mx, 1);
        double t6[] = {tiny, tiny, tiny};
        check_doubles("half-subnormal-sum", t6, 3, dt, 3 * tiny, 1);
        {
            uint64_t n = rep * 2 + 1;
            double *v = dalloc(n);
            for (uint64_t i = 0; i < rep; ++i) {
                double m = (double)(1 + (rng() & 0x7F)) * (f16 ? 0x1p8 : 0x1p100);
                v[2 * i] = (rng() & 1) ? m : -m;
                v[2 * i + 1] = -v[2 * i];
            }
            v[n - 1] = tiny;
            shuffle(v, n, sizeof(double));
            check_doubles("half-tiny-result", v, n, dt, tiny, 1);
            free(v);
        }
    }
    printf("adversarial halves: %llu checks passed\n", (unsigned long long)g_checks);
}

static void test_unsupported(void)
{
    ASSERT(!gr_cuda_exact_supported(GR_C_F64, GR_C_SUMSQ, 1));
    ASSERT(!gr_cuda_exact_supported(GR_C_F64, GR_C_POWSUM, 2));
    ASSERT(!gr_cuda_exact_supported(GR_C_F32, GR_C_POWSUM, 3));
    ASSERT(!gr_cuda_exact_supported(GR_C_I32, GR_C_SUM, 1));
    ASSERT(!gr_cuda_exact_supported(GR_C_F32, GR_C_MIN, 1));
    ASSERT(gr_cuda_exact_supported(GR_C_F32, GR_C_POWSUM, 2));
    ASSERT(gr_cuda_exact_supported(GR_C_F64, GR_C_POWSUM, 1));
    ASSERT(gr_cuda_exact_supported(GR_C_F16, GR_C_SUMSQ, 1));
    ASSERT(gr_cuda_exact_supported(GR_C_BF16, GR_C_POWSUM, 2));
    ASSERT(!gr_cuda_exact_supported(GR_C_BF16, GR_C_POWSUM, 3));
    ASSERT(!gr_cuda_exact_supported(GR_C_F16, GR_C_MAX, 1));
    gr_cuda_exact_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = gpu_buf(64);
    l.n = 4;
    l.dtype = GR_C_F64;
    l.op = GR_C_SUMSQ;
    l.power = 1;
    l.grid = 1;
    l.block = 256;
    l.scratch = G.scratch;
    l.result = G.res_dev;
    l.stream = G.stream;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorInvalidValue);
    l.op = GR_C_SUM;
    l.block = 96;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorInvalidValue);
    l.block = 256;
    /* the tally's words hold a block count below 2^15 over a sum below 2^47 */
    l.grid = GR_EXACT_GRID_MAX + 1;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorInvalidValue);
    l.grid = 1;
    l.n = GR_EXACT_LAUNCH_MAX_N;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorInvalidValue);
    l.n = 4;
    l.in = (const char *)G.buf + 4;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorMisalignedAddress);
    l.dtype = GR_C_F16; /* 2-byte elements: an odd address is misaligned, an even one is fine */
    l.in = (const char *)G.buf + 1;
    ASSERT(gr_cuda_launch_reduce_exact(&l) == cudaErrorMisalignedAddress);
    l.dtype = GR_C_F64;
    /* powsum:1 and powsum:2 (f32) are sum and sumsq */
    float h[5] = {1.5f, -2.0f, 3.0f, 0.25f, -0.5f};
    CU(cudaMemcpy(G.buf, h, sizeof(h), cudaMemcpyHostToDevice));
    l.in = G.buf;
    l.n = 5;
    l.dtype = GR_C_F32;
    l.op = GR_C_POWSUM;
    l.power = 2;
    G.res_host->count = UINT64_MAX;
    CU(gr_cuda_launch_reduce_exact(&l));
    CU(cudaStreamSynchronize(G.stream));
    gr_xacc_t x;
    gr_exact_result_to_xacc(G.res_host, &x);
    ASSERT_BITS_EQ(gr_xacc_to_double(&x), 2.25 + 4.0 + 9.0 + 0.0625 + 0.25);
    g_checks += 14;
    printf("unsupported/powsum: %llu checks passed\n", (unsigned long long)g_checks);
}

/* ---- N > 2^31 ----------------------------------------------------------------------- */

typedef struct refjob {
    int gen, dt;
    uint64_t begin, end;
    xstate_t s;
} refjob_t;

static void *ref_worker(void *arg)
{
    refjob_t *j = (refjob_t *)arg;
    gr_gen_keys_t k = gr_gen_make_keys(0x5EEDF00Dull);
    xs_init(&j->s);
    for (uint64_t i = j->begin; i < j->end; ++i) {
        double v = gr_gen_float(j->gen, j->dt, k, i);
        if (j->dt == GR_C_F32)
            v = (double)(float)v;
        xs_add(&j->s, v);
    }
    j->s.count = j->end - j->begin;
    return NULL;
}

/* Exact reference of generator values [0, n), computed chunk-wise on all cores. */
static void ref_generated(int gen, int dt, uint64_t n, xstate_t *out)
{
    enum { NT = 64 };
    pthread_t th[NT];
    refjob_t *jobs = (refjob_t *)calloc(NT, sizeof(refjob_t));
    ASSERT(jobs);
    for (int t = 0; t < NT; ++t) {
        jobs[t].gen = gen;
        jobs[t].dt = dt;
        jobs[t].begin = n / NT * (uint64_t)t;
        jobs[t].end = t == NT - 1 ? n : n / NT * (uint64_t)(t + 1);
        ASSERT(pthread_create(&th[t], NULL, ref_worker, &jobs[t]) == 0);
    }
    xs_init(out);
    for (int t = 0; t < NT; ++t) {
        pthread_join(th[t], NULL);
        xs_merge(out, &jobs[t].s);
    }
    free(jobs);
}

static void test_big(void)
{
    size_t free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b));
    const uint64_t n32 = (1ull << 31) + (1ull << 20) + 3;
    const uint64_t n64 = (1ull << 31) + 5;
    if (free_b < n64 * 8 + ((size_t)1 << 30))
        GR_TEST_SKIP("--big needs %.1f GiB of free GPU memory, %.1f GiB free", (double)(n64 * 8) / 1073741824.0 + 1,
                     (double)free_b / 1073741824.0);
    /* f32 ones: the exact sum is n, an integer; the f32 result is n rounded once */
    void *d = gpu_buf(n64 * 8);
    CU(gr_cuda_launch_generate(d, GR_C_F32, GR_C_ONES, 0x5EEDF00Dull, 0, n32, G.stream));
    const cfg_t cfgs[] = {{0, 0, 0, 0}, {2, 7, 256, 0}, {3, 1, 512, 0}};
    for (int c = 0; c < 3; ++c) {
        xstate_t got;
        gpu_run(d, n32, GR_C_F32, GR_C_SUM, cfgs[c], &got);
        int64_t iv = 0;
        ASSERT(gr_xacc_to_i64(&got.sum, &iv));
        ASSERT_EQ_U((uint64_t)iv, n32);
        ASSERT_BITS_EQ(xs_finish(&got, GR_C_F32), (double)(float)n32);
        g_checks++;
    }
    printf("big: f32 ones n=%llu exact\n", (unsigned long long)n32);
    /* stress, f32 and f64, against the threaded CPU reference; grid 1 runs >= 128 rounds in one block */
    for (int dt = GR_C_F32; dt <= GR_C_F64; ++dt) {
        const uint64_t n = dt == GR_C_F32 ? n32 : n64;
        CU(gr_cuda_launch_generate(d, dt, GR_C_STRESS, 0x5EEDF00Dull, 0, n, G.stream));
        xstate_t ref;
        ref_generated(GR_C_STRESS, dt, n, &ref);
        for (int c = 0; c < 3; ++c) {
            char what[128];
            snprintf(what, sizeof(what), "big stress %s n=%llu terms %d grid %d block %d", dt_name(dt),
                     (unsigned long long)n, cfgs[c].terms, cfgs[c].grid, cfgs[c].block);
            xstate_t got;
            gpu_run(d, n, dt, GR_C_SUM, cfgs[c], &got);
            expect_same(what, &got, &ref, dt, GR_C_SUM);
        }
        printf("big: stress %s n=%llu = %a\n", dt_name(dt), (unsigned long long)n, xs_finish(&ref, dt));
    }
    printf("big: %llu checks passed\n", (unsigned long long)g_checks);
}

/* ---- timing -------------------------------------------------------------------------- */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

#define NREP 15

/* Median seconds of NREP launches of fn (one event pair each, after 3 warm-ups). */
typedef void (*launch_fn)(void *arg);
static double time_median(launch_fn fn, void *arg)
{
    cudaEvent_t ev[NREP + 1];
    for (int i = 0; i <= NREP; ++i)
        CU(cudaEventCreate(&ev[i]));
    for (int i = 0; i < 3; ++i)
        fn(arg);
    CU(cudaEventRecord(ev[0], G.stream));
    for (int i = 0; i < NREP; ++i) {
        fn(arg);
        CU(cudaEventRecord(ev[i + 1], G.stream));
    }
    CU(cudaStreamSynchronize(G.stream));
    float ms[NREP];
    for (int i = 0; i < NREP; ++i)
        CU(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
    for (int i = 0; i <= NREP; ++i)
        CU(cudaEventDestroy(ev[i]));
    qsort(ms, NREP, sizeof(float), cmp_float);
    return ms[NREP / 2] * 1e-3;
}

typedef struct bench_arg {
    gr_cuda_exact_launch_t x;
    gr_cuda_reduce_launch_t f;
    int i; /* ablation variant */
} bench_arg_t;

static void run_exact(void *a) { CU(gr_cuda_launch_reduce_exact(&((bench_arg_t *)a)->x)); }
static void run_ablate(void *a) { CU(gr_test_exact_ablate_launch(((bench_arg_t *)a)->i, &((bench_arg_t *)a)->x)); }
static void run_fast(void *a) { CU(gr_cuda_launch_reduce(&((bench_arg_t *)a)->f)); }

static void test_bench(void)
{
    void *fscratch;
    unsigned int *ticket;
    gr_local_t *fres_h, *fres_d;
    CU(cudaMalloc(&fscratch, (size_t)GR_CUDA_GRID_MAX * GR_CUDA_SCRATCH_BYTES_PER_BLOCK));
    CU(cudaMalloc((void **)&ticket, sizeof(unsigned int)));
    CU(cudaMemset(ticket, 0, sizeof(unsigned int)));
    CU(cudaHostAlloc((void **)&fres_h, sizeof(gr_local_t), cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&fres_d, fres_h, 0));
    const int lg[] = {20, 24, 30};
    const int NN = (int)(sizeof(lg) / sizeof(lg[0]));
    /* results in device memory, against the mapped host memory the backend uses */
    gr_local_t *fres_dm;
    gr_exact_result_t *xres_dm;
    CU(cudaMalloc((void **)&fres_dm, sizeof(gr_local_t)));
    CU(cudaMalloc((void **)&xres_dm, sizeof(gr_exact_result_t)));
    printf("bench: GPU with %d SMs; GB/s = bytes read / median kernel time of %d launches\n", g_sms, NREP);
    printf("bench: %-4s %-8s %-11s %-22s %10s %10s %8s %12s\n", "dt", "gen", "n", "variant", "time_us", "GB/s",
           "vs_fast", "flushes");
    for (int dt = GR_C_F32; dt <= GR_C_F64; ++dt) {
        for (int ni = 0; ni < NN; ++ni) {
            const uint64_t n = 1ull << lg[ni];
            void *d = gpu_buf(n * esz(dt));
            for (int gen = GR_C_UNIFORM; gen <= GR_C_STRESS; gen += GR_C_STRESS - GR_C_UNIFORM) {
                CU(gr_cuda_launch_generate(d, dt, gen, 0x5EEDF00Dull, 0, n, G.stream));
                const double bytes = (double)n * (double)esz(dt);
                bench_arg_t a;
                memset(&a, 0, sizeof(a));
                int occ = 0;
                CU(gr_cuda_reduce_occupancy(dt, GR_C_SUM, 256, &occ));
                a.f.in = d;
                a.f.n = n;
                a.f.dtype = dt;
                a.f.op = GR_C_SUM;
                a.f.power = 1;
                a.f.block = 256;
                a.f.grid = gr_cuda_grid(GR_KF_FAST, g_cc, n, dt, 256, g_sms, occ);
                a.f.scratch = fscratch;
                a.f.ticket = ticket;
                a.f.result = fres_d;
                a.f.stream = G.stream;
                double tf = time_median(run_fast, &a);
                printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12s\n", dt_name(dt), GEN_NAMES[gen],
                       lg[ni], "fast", tf * 1e6, bytes / tf * 1e-9, 1.0, "-");
                a.f.result = fres_dm;
                const double tfd = time_median(run_fast, &a);
                a.f.result = fres_d;
                printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12s\n", dt_name(dt), GEN_NAMES[gen],
                       lg[ni], "fast, result in dev mem", tfd * 1e6, bytes / tfd * 1e-9, tf / tfd, "-");
                const int tpsm[] = {512, 1024, 2048};
                for (int terms = 2; terms <= 3; ++terms) {
                    for (int ti = 0; ti < 3; ++ti) {
                        for (int block = 256; block <= 512; block += 256) {
                            if (block == 512 && tpsm[ti] != 1024)
                                continue;
                            int xocc = 0;
                            CU(gr_cuda_exact_occupancy(dt, GR_C_SUM, 1, terms, block, &xocc));
                            int per_sm = tpsm[ti] / block;
                            if (per_sm > xocc)
                                continue;
                            a.x = exact_launch(d, n, dt, GR_C_SUM, terms, block, per_sm * g_sms);
                            double tx = time_median(run_exact, &a);
                            char var[64];
                            snprintf(var, sizeof(var), "exact t%d b%d g%dx%d", terms, block, g_sms, per_sm);
                            printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12llu\n", dt_name(dt),
                                   GEN_NAMES[gen], lg[ni], var, tx * 1e6, bytes / tx * 1e-9, tf / tx,
                                   (unsigned long long)G.res_host->flushes);
                        }
                    }
                }
                /* the default launch (what the backend uses) */
                const int xblock = gr_tuning_for(GR_KF_EXACT, dt, g_cc).block;
                a.x = exact_launch(d, n, dt, GR_C_SUM, 0, xblock, default_grid(n, dt, GR_C_SUM, 0, xblock));
                double tx = time_median(run_exact, &a);
                char var[64];
                snprintf(var, sizeof(var), "exact default g%d", a.x.grid);
                printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12llu\n", dt_name(dt), GEN_NAMES[gen],
                       lg[ni], var, tx * 1e6, bytes / tx * 1e-9, tf / tx,
                       (unsigned long long)G.res_host->flushes);
                xstate_t want, got;
                read_result(&want, n, dt, GR_C_SUM, a.x.grid, a.x.block);
                a.x.result = xres_dm;
                const double txd = time_median(run_exact, &a);
                a.x.result = G.res_dev;
                printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12s  vs_default %.3f\n", dt_name(dt),
                       GEN_NAMES[gen], lg[ni], "exact, result in dev mem", txd * 1e6, bytes / txd * 1e-9, tf / txd,
                       "-", txd / tx);
                /* ablation (exact_ablate.cu): each row puts back one part of the earlier
                 * design; vs_default > 1 means that part of the current kernel is a gain */
                for (int v = 0; v < gr_test_exact_ablate_count(); ++v) {
                    int vocc = 0;
                    CU(gr_test_exact_ablate_occupancy(v, dt, &vocc));
                    ASSERT(vocc >= 1);
                    a.x.grid = gr_cuda_grid(GR_KF_EXACT, g_cc, n, dt, 512, g_sms, vocc);
                    a.i = v;
                    memset(G.res_host, 0xA5, sizeof(*G.res_host));
                    const double tv = time_median(run_ablate, &a);
                    snprintf(var, sizeof(var), "abl %s g%d", gr_test_exact_ablate_name(v), a.x.grid);
                    char fl[32] = "-"; /* a cut variant leaves no result */
                    if (gr_test_exact_ablate_timing_only(v)) {
                        /* it left the grid accumulator and the ticket as they were mid-launch */
                        CU(cudaMemsetAsync(G.scratch, 0, gr_cuda_exact_scratch_bytes(), G.stream));
                        CU(cudaStreamSynchronize(G.stream));
                    } else {
                        read_result(&got, n, dt, GR_C_SUM, a.x.grid, a.x.block);
                        expect_same(var, &got, &want, dt, GR_C_SUM);
                        snprintf(fl, sizeof(fl), "%llu", (unsigned long long)G.res_host->flushes);
                    }
                    printf("bench: %-4s %-8s 2^%-9d %-22s %10.1f %10.1f %8.3f %12s  vs_default %.3f\n", dt_name(dt),
                           GEN_NAMES[gen], lg[ni], var, tv * 1e6, bytes / tv * 1e-9, tf / tv, fl, tv / tx);
                }
                fflush(stdout);
            }
        }
    }
    CU(cudaFree(fscratch));
    CU(cudaFree(ticket));
    CU(cudaFreeHost(fres_h));
    CU(cudaFree(fres_dm));
    CU(cudaFree(xres_dm));
}

/* ---- stage stamps ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n ? v[n / 2] : 0.0;
}

enum { ST_ENTRY, ST_BODY_MIN, ST_BODY_MED, ST_BODY_MAX, ST_MERGED, ST_MERGE_MED, ST_MERGE_MAX, ST_PRE_MED,
       ST_TREE_MED, ST_CNT_MED, ST_ROUND, ST_GRID, ST_TICKET, ST_TICKET_RT, ST_DONE, ST_TAKE, ST_MHZ, ST_N };
static const char *const ST_NAMES[ST_N] = {
    "entry (last warp)", "body done (first warp)", "body done (median warp)", "body done (last warp)",
    "merged (last warp)", "merge, per warp (median)", "merge, per warp (max)", "  a[2..K) flushes (median)",
    "  the merge proper (median)", "  counters (median)", "round end passed (last)",
    "block's words ready (last)", "grid answered (last)", "grid round trip, per block", "result written",
    "answer -> result written", "SM clock (MHz)"};

/* One launch's stage times in us since the first warp's entry (see ST_NAMES);
 * body_only: a kernel stopped after the body (GR_XF_CUT_BODY): its body stages
 * only, the rest 0; ticket: the ticket end (GR_XF_TICKET), whose last block
 * alone writes the result (the tally's result is written by the warps that
 * complete its words: at least one). */
static void stamps_stats(const unsigned long long *h, int blocks, int body_only, int ticket_end, double *out)
{
    if (body_only) {
        const int NS = GR_TEST_NSTAMP, nw = blocks * 16;
        double *body = malloc(sizeof(double) * (size_t)nw);
        ASSERT(body != NULL);
        unsigned long long t0 = ~0ull;
        for (int w = 0; w < nw; ++w) {
            const unsigned long long *p = h + (size_t)w * 2 * NS;
            ASSERT(p[0] != 0 && p[1] >= p[0] && p[2] == 0 && p[6] == 0);
            t0 = p[0] < t0 ? p[0] : t0;
        }
        for (int k = 0; k < ST_N; ++k)
            out[k] = 0.0;
        for (int w = 0; w < nw; ++w) {
            const unsigned long long *p = h + (size_t)w * 2 * NS;
            const double e = (double)(p[0] - t0) * 1e-3;
            out[ST_ENTRY] = e > out[ST_ENTRY] ? e : out[ST_ENTRY];
            body[w] = (double)(p[1] - t0) * 1e-3;
        }
        qsort(body, (size_t)nw, sizeof(double), cmp_double);
        out[ST_BODY_MIN] = body[0];
        out[ST_BODY_MED] = body[nw / 2];
        out[ST_BODY_MAX] = body[nw - 1];
        free(body);
        return;
    }
    const int NW = 16, NS = GR_TEST_NSTAMP;
    const int nw = blocks * NW;
    double *body = malloc(sizeof(double) * (size_t)nw), *merge = malloc(sizeof(double) * (size_t)nw);
    double *tick = malloc(sizeof(double) * (size_t)blocks), *mhz = malloc(sizeof(double) * (size_t)nw);
    double *pre = malloc(sizeof(double) * (size_t)nw), *tree = malloc(sizeof(double) * (size_t)nw),
           *cnt = malloc(sizeof(double) * (size_t)nw);
    ASSERT(body && merge && tick && mhz && pre && tree && cnt);
    unsigned long long t0 = ~0ull;
    for (int w = 0; w < nw; ++w) {
        const unsigned long long *p = h + (size_t)w * 2 * NS;
        ASSERT(p[0] != 0 && p[1] >= p[0] && p[2] >= p[1] && p[3] >= p[2] && p[4] >= p[3] && p[5] >= p[4]);
        if (p[0] < t0)
            t0 = p[0];
    }
    double entry = 0, merged = 0, round = 0, grid = 0, ticket = 0, done = 0, take = 0;
    int last = 0;
    for (int w = 0; w < nw; ++w) {
        const unsigned long long *p = h + (size_t)w * 2 * NS, *c = p + NS;
#define GR_T(s) ((double)(p[s] - t0) * 1e-3)
        entry = GR_T(0) > entry ? GR_T(0) : entry;
        body[w] = GR_T(1);
        merged = GR_T(2) > merged ? GR_T(2) : merged;
        round = GR_T(3) > round ? GR_T(3) : round;
        grid = GR_T(4) > grid ? GR_T(4) : grid;
        ticket = GR_T(5) > ticket ? GR_T(5) : ticket;
        /* the SM clock from this warp's own two clocks over its lifetime */
        mhz[w] = p[4] > p[0] ? (double)(c[4] - c[0]) / (double)(p[4] - p[0]) * 1e3 : 0.0;
        merge[w] = (double)(c[2] - c[1]); /* clocks, scaled below */
        /* inside it: 1 -> 8 the a[2..K) flushes, 8 -> 7 the merge, 7 -> 2 the counters */
        ASSERT(c[8] >= c[1] && c[7] >= c[8] && c[2] >= c[7]);
        pre[w] = (double)(c[8] - c[1]);
        tree[w] = (double)(c[7] - c[8]);
        cnt[w] = (double)(c[2] - c[7]);
        if (w % NW == 0)
            tick[w / NW] = (double)(c[5] - c[4]);
        if (p[6]) {
            ASSERT(p[6] >= p[5]);
            ++last;
            if (GR_T(6) > done) {
                done = GR_T(6);
                take = (double)(c[6] - c[5]);
            }
        }
#undef GR_T
    }
    if (ticket_end)
        ASSERT(last == NW); /* exactly one block took the last ticket */
    else
        ASSERT(last >= 1 && last <= 3 * blocks); /* warps 0..2 hold the tally's 75 threads */
    out[ST_MHZ] = median_of(mhz, nw);
    const double us_per_clk = 1.0 / out[ST_MHZ];
    out[ST_ENTRY] = entry;
    out[ST_MERGED] = merged;
    out[ST_ROUND] = round;
    out[ST_GRID] = grid;
    out[ST_TICKET] = ticket;
    out[ST_DONE] = done;
    out[ST_TAKE] = take * us_per_clk;
    out[ST_TICKET_RT] = median_of(tick, blocks) * us_per_clk;
    out[ST_MERGE_MAX] = 0;
    for (int w = 0; w < nw; ++w)
        out[ST_MERGE_MAX] = merge[w] > out[ST_MERGE_MAX] ? merge[w] : out[ST_MERGE_MAX];
    out[ST_MERGE_MAX] *= us_per_clk;
    out[ST_MERGE_MED] = median_of(merge, nw) * us_per_clk;
    out[ST_PRE_MED] = median_of(pre, nw) * us_per_clk;
    out[ST_TREE_MED] = median_of(tree, nw) * us_per_clk;
    out[ST_CNT_MED] = median_of(cnt, nw) * us_per_clk;
    free(pre);
    free(tree);
    free(cnt);
    qsort(body, (size_t)nw, sizeof(double), cmp_double);
    out[ST_BODY_MIN] = body[0];
    out[ST_BODY_MED] = body[nw / 2];
    out[ST_BODY_MAX] = body[nw - 1];
    free(body);
    free(merge);
    free(tick);
    free(mhz);
}

/* GR_STAMPS_DUMP=dir: every warp's raw stamps of the last launch of each size
 * (configuration 0) into dir/stamps-DT-2^LG.txt, one warp a line */
static void stamps_dump(const unsigned long long *h, int blocks, int dt, int lg)
{
    const char *dir = getenv("GR_STAMPS_DUMP");
    if (!dir || !*dir)
        return;
    char path[512];
    snprintf(path, sizeof(path), "%s/stamps-%s-2^%d.txt", dir, dt_name(dt), lg);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fprintf(f, "# block warp sm  globaltimer ns at stages 0..8  clock64 at stages 0..8 (0: not reached)\n");
    const int NS = GR_TEST_NSTAMP;
    for (int w = 0; w < blocks * 16; ++w) {
        const unsigned long long *p = h + (size_t)w * 2 * NS;
        fprintf(f, "%d %d %llu", w / 16, w % 16, p[11]);
        for (int k = 0; k < 9; ++k)
            fprintf(f, " %llu", p[k]);
        for (int k = 0; k < 9; ++k)
            fprintf(f, " %llu", p[NS + k]);
        fprintf(f, "\n");
    }
    ASSERT(fclose(f) == 0);
}

static void test_stamps(void)
{
    /* configurations: the production kernel with stamps, the same with its result in device
     * memory instead of mapped host memory, with the ticket end it replaced (GR_XF_TICKET),
     * and the kernel stopped after its body (GR_XF_CUT_BODY, timing only: no result) */
    enum { NCFG = 4, TICKET_END = 2, BODY_ONLY = 3 };
    static const char *const CFG[NCFG] = {"production", "result in dev mem", "ticket end", "body only"};
    int vi[NCFG];
    vi[0] = vi[1] = gr_test_exact_stamps_variant(0);
    vi[2] = gr_test_exact_stamps_variant(1);
    vi[3] = gr_test_exact_stamps_variant(2);
    ASSERT(vi[0] >= 0 && vi[2] >= 0 && vi[3] >= 0);
    const size_t cnt = gr_test_exact_stamps_count();
    unsigned long long *h = malloc(cnt * sizeof(unsigned long long));
    ASSERT(h != NULL);
    gr_exact_result_t *res_dm;
    CU(cudaMalloc((void **)&res_dm, sizeof(gr_exact_result_t)));
    const int lg[] = {20, 22, 24};
    enum { RUNS = 11 };
    printf("stamps: us since the first warp's entry (%%globaltimer), medians of %d launches; the input\n"
           "stamps: read again each launch; durations per warp or block from its SM's clock64\n", RUNS);
    for (int dt = GR_C_F32; dt <= GR_C_F64; ++dt) {
        for (int ni = 0; ni < (int)(sizeof(lg) / sizeof(lg[0])); ++ni) {
            const uint64_t n = 1ull << lg[ni];
            void *d = gpu_buf(n * esz(dt));
            CU(gr_cuda_launch_generate(d, dt, GR_C_UNIFORM, 0x5EEDF00Dull, 0, n, G.stream));
            bench_arg_t a;
            memset(&a, 0, sizeof(a));
            int vocc = 0;
            CU(gr_test_exact_ablate_occupancy(vi[0], dt, &vocc));
            a.x = exact_launch(d, n, dt, GR_C_SUM, 0, 512, gr_cuda_grid(GR_KF_EXACT, g_cc, n, dt, 512, g_sms, vocc));
            ASSERT(a.x.grid <= GR_TEST_STAMP_BLOCKS);
            const double tprod = time_median(run_exact, &a);
            xstate_t want, got;
            read_result(&want, n, dt, GR_C_SUM, a.x.grid, a.x.block);
            double st[NCFG][ST_N][RUNS], tev[NCFG];
            for (int c = 0; c < NCFG; ++c) {
                a.i = vi[c];
                a.x.result = c == 1 ? res_dm : G.res_dev;
                tev[c] = time_median(run_ablate, &a);
                for (int r = 0; r < RUNS; ++r) {
                    CU(gr_test_exact_stamps_clear(G.stream));
                    run_ablate(&a);
                    CU(gr_test_exact_stamps_read(h, G.stream));
                    double one[ST_N];
                    stamps_stats(h, a.x.grid, c == BODY_ONLY, c == TICKET_END, one);
                    for (int k = 0; k < ST_N; ++k)
                        st[c][k][r] = one[k];
                }
                if (c == 0)
                    stamps_dump(h, a.x.grid, dt, lg[ni]);
                if (c != 1 && c != BODY_ONLY) { /* the stamped kernels give the production result */
                    memset(G.res_host, 0xA5, sizeof(*G.res_host));
                    run_ablate(&a);
                    CU(cudaStreamSynchronize(G.stream));
                    read_result(&got, n, dt, GR_C_SUM, a.x.grid, a.x.block);
                    expect_same(CFG[c], &got, &want, dt, GR_C_SUM);
                }
            }
            printf("stamps: %s 2^%d, grid %d x 512; the production kernel without stamps: %.2f us\n",
                   dt_name(dt), lg[ni], a.x.grid, tprod * 1e6);
            printf("stamps:   %-28s", "");
            for (int c = 0; c < NCFG; ++c)
                printf(" %18s", CFG[c]);
            printf("\nstamps:   %-28s", "event time (us)");
            for (int c = 0; c < NCFG; ++c)
                printf(" %18.2f", tev[c] * 1e6);
            printf("\n");
            for (int k = 0; k < ST_N; ++k) {
                printf("stamps:   %-28s", ST_NAMES[k]);
                for (int c = 0; c < NCFG; ++c)
                    printf(" %18.2f", median_of(st[c][k], RUNS));
                printf("\n");
            }
            fflush(stdout);
        }
    }
    CU(cudaFree(res_dm));
    free(h);
}

int main(int argc, char **argv)
{
    int big = 0, bench = 0, race = 0, stamps = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--small"))
            g_small = 1;
        else if (!strcmp(argv[i], "--race"))
            race = g_small = 1;
        else if (!strcmp(argv[i], "--big"))
            big = 1;
        else if (!strcmp(argv[i], "--bench"))
            bench = 1;
        else if (!strcmp(argv[i], "--stamps"))
            stamps = 1;
        else
            GR_TEST_FAIL_("unknown option %s (use --small, --race, --big, --bench or --stamps)", argv[i]);
    }
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1)
        GR_TEST_SKIP("no CUDA GPU visible (%s)", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    CU(cudaSetDevice(0));
    gpu_init();
    if (bench) {
        test_bench();
    } else if (stamps) {
        test_stamps();
    } else if (big) {
        test_big();
    } else if (race) {
        test_unsupported();
        test_shapes();
    } else {
        test_unsupported();
        test_adversarial();
        test_adversarial_halves();
        test_shapes();
        test_generators();
    }
    printf("%llu checks passed\n", (unsigned long long)g_checks);
    return 0;
}
