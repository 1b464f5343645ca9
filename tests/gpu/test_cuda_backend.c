/*
 * test_cuda_backend.c - the cuda backend against the cpu reference backend.
 *
 * Run under mpirun (np 1 and np 3, so shards start at odd global indices).
 * Every rank compares every result (all_ranks = 1), so all ranks pass or fail
 * together. Where no GPU is visible the program prints SKIP and exits 77.
 *
 *   test_cuda_backend           the full comparison (sizes up to 1000003)
 *   test_cuda_backend --small   sizes up to 4099, fewer ops (compute-sanitizer)
 *   test_cuda_backend --big     only the N > 2^32 cases (skips where the GPU
 *                               has too little free memory)
 *
 * Gates:
 *  - integers (every op), float min/max, and float sums whose every partial
 *    sum is an integer below 2^53 (ones, iota with small enough terms):
 *    bitwise equal to the cpu backend and to an independent host reference.
 *  - other float sums: both backends accumulate in f64 in different orders.
 *    Any order of summing n terms t_i in f64 errs by at most
 *    (n-1) u sum|t_i| (u = 2^-53; Higham, Accuracy and Stability, 4.2), so two
 *    correct results differ by at most 2 (n-1) u sum|t_i|; we allow 4 n u
 *    sum|t_i| (slack for the rounding of the reference mass itself). A lost
 *    or doubled element changes the sum by |t_i|, far above that bound.
 *    The GPU result must also repeat bit for bit (the fast-mode contract).
 *  - NaN/Inf/-0.0 inputs: the IEEE/numpy answer, bitwise.
 */
#include "gpureduce.h"
#include "gr_exact_kernels.h"
#include "gr_internal.h"
#include "gr_kernels.h"
#include "test_cuda.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                                             \
    do {                                                                                     \
        gr_result_t r_ = (call);                                                             \
        if (r_ != GR_SUCCESS)                                                                \
            GR_TEST_FAIL_("%s returned %d (%s)", #call, (int)r_, gr_strerror(r_));           \
    } while (0)

/*
 * A wrong value is reported and counted, and the run goes on (every rank
 * sees the same values, so all ranks stay in step); main exits 1 at the end.
 * Errors that leave nothing sensible to compare (an API or CUDA call that
 * failed) still stop at once.
 */
static long g_failures;
#define SOFT_FAIL(...)                                                   \
    do {                                                                 \
        if (g_failures++ < 40 && g_rank == 0) {                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, "\n");                                       \
        }                                                                \
        return;                                                          \
    } while (0)
#define SOFT_FAIL_CONTINUE(...)                                          \
    do {                                                                 \
        if (g_failures++ < 40 && g_rank == 0) {                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, "\n");                                       \
        }                                                                \
    } while (0)

static int g_rank, g_size;
static int g_small;
static uint64_t g_checks;
static const uint64_t SEED = 0x5EEDF00Dull;

/* ---- helpers -------------------------------------------------------------- */

static gr_ctx_t make_ctx(gr_backend_t b, int block, int grid, gr_result_t *res)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = b;
    cfg.bind = GR_BIND_NONE; /* placement is another test's business */
    cfg.share_gpus = 1;      /* np 3 on a one-GPU machine */
    cfg.cpu_threads = 4;
    cfg.cuda_block = block;
    cfg.cuda_grid = grid;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
    if (res) {
        *res = r;
        return ctx;
    }
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("gr_ctx_create(%s, block %d, grid %d) returned %s", gr_backend_name(b), block, grid,
                      gr_strerror(r));
    return ctx;
}

static int is_half(gr_dtype_t t) { return t == GR_F16 || t == GR_BF16; }
static int is_float(gr_dtype_t t) { return t == GR_F32 || t == GR_F64 || is_half(t); }

/* A value of a half type (exactly representable: the caller's promise) as its 2 bytes at p. */
static void put_half(gr_dtype_t t, void *p, double v)
{
    uint16_t h = gr_f32_to_half_bits((float)v, t == GR_BF16);
    memcpy(p, &h, 2);
}
static int is_minmax(gr_op_kind_t k) { return k == GR_OP_MIN || k == GR_OP_MAX; }

static gr_desc_t desc(gr_dtype_t t, gr_op_kind_t k, int power)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = t;
    d.op.kind = k;
    d.op.power = power;
    d.all_ranks = 1;
    return d;
}

static void desc_name(const gr_desc_t *d, char *buf, size_t len)
{
    if (d->op.kind == GR_OP_POWSUM)
        snprintf(buf, len, "%s powsum:%d", gr_dtype_name(d->dtype), d->op.power);
    else
        snprintf(buf, len, "%s %s", gr_dtype_name(d->dtype), gr_op_name(d->op.kind));
}

static void poison_value(gr_value_t *v) { memset(v, 0xA5, sizeof(*v)); }

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof(a)) == 0; }

/* Host copy of the global synthetic dataset as doubles / int64. */
typedef struct dataset {
    gr_dtype_t dtype;
    gr_gen_t gen;
    uint64_t n;
    double *f;
    int64_t *i;
} dataset_t;

static void dataset_make(dataset_t *ds, gr_dtype_t t, gr_gen_t g, uint64_t n)
{
    gr_gen_keys_t k = gr_gen_make_keys(SEED);
    ds->dtype = t;
    ds->gen = g;
    ds->n = n;
    ds->f = NULL;
    ds->i = NULL;
    if (is_float(t)) {
        ds->f = (double *)malloc((n ? n : 1) * sizeof(double));
        ASSERT(ds->f);
        for (uint64_t j = 0; j < n; ++j) {
            double x = gr_gen_float(g, (int)t, k, j);
            ds->f[j] = t == GR_F32 ? (double)(float)x : x;
        }
    } else {
        ds->i = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
        ASSERT(ds->i);
        for (uint64_t j = 0; j < n; ++j)
            ds->i[j] = gr_gen_int(g, (int)t, k, j);
    }
}

static void dataset_free(dataset_t *ds)
{
    free(ds->f);
    free(ds->i);
}

/* This rank's shard of ds as raw dtype values (malloc'd). */
static void *dataset_shard(const dataset_t *ds, uint64_t *begin, uint64_t *count)
{
    uint64_t b, e;
    gr_shard_range(ds->n, g_size, g_rank, &b, &e);
    *begin = b;
    *count = e - b;
    size_t esz = gr_dtype_size(ds->dtype);
    char *p = (char *)malloc((size_t)((e - b) ? (e - b) : 1) * esz);
    ASSERT(p);
    for (uint64_t j = b; j < e; ++j) {
        char *dst = p + (j - b) * esz;
        switch (ds->dtype) {
        case GR_F32: {
            float v = (float)ds->f[j];
            memcpy(dst, &v, 4);
            break;
        }
        case GR_F64:
            memcpy(dst, &ds->f[j], 8);
            break;
        case GR_I32: {
            int32_t v = (int32_t)ds->i[j];
            memcpy(dst, &v, 4);
            break;
        }
        case GR_I64:
            memcpy(dst, &ds->i[j], 8);
            break;
        case GR_F16:
        case GR_BF16:
            put_half(ds->dtype, dst, ds->f[j]); /* ds->f holds the half's value (gr_gen_float) */
            break;
        }
    }
    return p;
}

/*
 * Independent host reference over the global data: for floats the mass
 * sum|t_i| (for the tolerance) and whether every partial sum is an exact
 * integer; for integers the exact value (and overflow) in __int128.
 */
typedef struct reference {
    double mass;     /* sum |t_i| */
    long double sum; /* float sum-like: extended-precision sum */
    int exact_float; /* every term and partial sum an integer < 2^53 */
    double fext;     /* float min/max */
    int any_nan;
    __int128 isum;
    int iovf;
    int64_t iext;
} reference_t;

static double fmin_total(double a, double b)
{
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

static double fmax_total(double a, double b)
{
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

static reference_t reference(const dataset_t *ds, const gr_desc_t *d)
{
    reference_t r;
    memset(&r, 0, sizeof(r));
    int op = (int)d->op.kind, pw = d->op.power;
    if (is_float(ds->dtype)) {
        r.exact_float = 1;
        r.fext = op == GR_OP_MIN ? INFINITY : -INFINITY;
        for (uint64_t j = 0; j < ds->n; ++j) {
            double x = ds->f[j];
            if (isnan(x))
                r.any_nan = 1;
            if (is_minmax(d->op.kind)) {
                if (!isnan(x))
                    r.fext = op == GR_OP_MIN ? fmin_total(r.fext, x) : fmax_total(r.fext, x);
                continue;
            }
            double t = gr_term_f(op, pw, x);
            r.mass += fabs(t);
            r.sum += (long double)t;
            if (t != floor(t) || r.mass >= 9007199254740992.0)
                r.exact_float = 0;
        }
        return r;
    }
    r.iext = op == GR_OP_MIN ? INT64_MAX : INT64_MIN;
    for (uint64_t j = 0; j < ds->n; ++j) {
        int64_t x = ds->i[j];
        if (op == GR_OP_MIN) {
            if (x < r.iext)
                r.iext = x;
        } else if (op == GR_OP_MAX) {
            if (x > r.iext)
                r.iext = x;
        } else {
            int32_t ovf = 0;
            r.isum += (__int128)gr_term_i(op, pw, x, &ovf);
            r.iovf |= ovf;
        }
    }
    return r;
}

/* GPU result g against cpu result c and the reference. */
static void check_value(const char *where, const gr_desc_t *d, uint64_t n, const reference_t *ref,
                        const gr_value_t *g, const gr_value_t *c)
{
    char dn[64];
    desc_name(d, dn, sizeof(dn));
    ++g_checks;
    if (!g->valid || !c->valid || g->count != n || c->count != n)
        SOFT_FAIL("%s %s n=%llu: valid %d/%d count gpu %llu cpu %llu", where, dn, (unsigned long long)n, g->valid,
                      c->valid, (unsigned long long)g->count, (unsigned long long)c->count);
    if (!is_float(d->dtype)) {
        if (g->is_integer != 1 || c->is_integer != 1 || g->overflow != c->overflow || g->i != c->i ||
            !same_bits(g->f, c->f))
            SOFT_FAIL("%s %s n=%llu: gpu (i %lld ovf %d f %.17g) != cpu (i %lld ovf %d f %.17g)", where, dn,
                          (unsigned long long)n, (long long)g->i, g->overflow, g->f, (long long)c->i, c->overflow,
                          c->f);
        if (ref) {
            if (is_minmax(d->op.kind)) {
                if (n > 0 && g->i != ref->iext)
                    SOFT_FAIL("%s %s n=%llu: %lld != reference %lld", where, dn, (unsigned long long)n,
                                  (long long)g->i, (long long)ref->iext);
            } else {
                int fits = ref->isum >= (__int128)INT64_MIN && ref->isum <= (__int128)INT64_MAX;
                int ovf = ref->iovf || !fits;
                if (g->overflow != ovf || (!ovf && g->i != (int64_t)ref->isum))
                    SOFT_FAIL("%s %s n=%llu: gpu i %lld ovf %d, reference ovf %d", where, dn,
                                  (unsigned long long)n, (long long)g->i, g->overflow, ovf);
            }
        }
        return;
    }
    if (is_minmax(d->op.kind)) {
        int ok = (isnan(g->f) && isnan(c->f)) || same_bits(g->f, c->f);
        if (!ok)
            SOFT_FAIL("%s %s n=%llu: gpu %.17g (%a) != cpu %.17g (%a)", where, dn, (unsigned long long)n, g->f,
                          g->f, c->f, c->f);
        if (ref && n > 0 && !ref->any_nan && !same_bits(g->f, ref->fext))
            SOFT_FAIL("%s %s n=%llu: gpu %a != reference %a", where, dn, (unsigned long long)n, g->f, ref->fext);
        return;
    }
    if (isnan(g->f) || isnan(c->f) || isinf(g->f) || isinf(c->f)) {
        if (!((isnan(g->f) && isnan(c->f)) || g->f == c->f))
            SOFT_FAIL("%s %s n=%llu: gpu %g cpu %g", where, dn, (unsigned long long)n, g->f, c->f);
        return;
    }
    if (ref && ref->exact_float) {
        if (!same_bits(g->f, c->f) || (n > 0 && g->f != (double)ref->sum))
            SOFT_FAIL("%s %s n=%llu (exact gate): gpu %.17g cpu %.17g reference %.17Lg", where, dn,
                          (unsigned long long)n, g->f, c->f, ref->sum);
        return;
    }
    if (ref) {
        double tol = 4.0 * (double)(n + 1) * 0x1p-53 * ref->mass;
        if (!(fabs(g->f - c->f) <= tol) || !(fabs(g->f - (double)ref->sum) <= tol))
            SOFT_FAIL("%s %s n=%llu: gpu %.17g cpu %.17g reference %.17Lg, tolerance %.3g (mass %.6g)", where,
                          dn, (unsigned long long)n, g->f, c->f, ref->sum, tol, ref->mass);
    }
}

/* ---- the cases -------------------------------------------------------------- */

typedef struct opcase {
    gr_op_kind_t kind;
    int power;
} opcase_t;

static const opcase_t OPS_FULL[] = {
    {GR_OP_SUM, 1},    {GR_OP_MIN, 1},    {GR_OP_MAX, 1},    {GR_OP_ABSSUM, 1}, {GR_OP_SUMSQ, 1},
    {GR_OP_POWSUM, 1}, {GR_OP_POWSUM, 2}, {GR_OP_POWSUM, 3}, {GR_OP_POWSUM, 4}, {GR_OP_POWSUM, 5},
    {GR_OP_POWSUM, 6}, {GR_OP_POWSUM, 7}, {GR_OP_POWSUM, 8}};
static const opcase_t OPS_SMALL[] = {{GR_OP_SUM, 1}, {GR_OP_MIN, 1}, {GR_OP_MAX, 1}, {GR_OP_POWSUM, 3}};

static const uint64_t SIZES_FULL[] = {0,    1,    3,     5,     15,    16,     17,     1023,   1024,
                                      1025, 4099, 65535, 65536, 65537, 262143, 262144, 262145, 1000003};
static const uint64_t SIZES_SMALL[] = {0, 1, 3, 5, 15, 16, 17, 1023, 1024, 1025, 4099};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int gen_valid(gr_dtype_t t, gr_gen_t g)
{
    return is_float(t) || (g != GR_GEN_UNIFORM && g != GR_GEN_NORMAL);
}

/* Synthetic data through gr_buffer_create_synthetic on both backends, every op. */
static void test_synthetic(gr_ctx_t gpu, gr_ctx_t cpu)
{
    const uint64_t *sizes = g_small ? SIZES_SMALL : SIZES_FULL;
    size_t nsizes = g_small ? COUNT(SIZES_SMALL) : COUNT(SIZES_FULL);
    const opcase_t *ops = g_small ? OPS_SMALL : OPS_FULL;
    size_t nops = g_small ? COUNT(OPS_SMALL) : COUNT(OPS_FULL);
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        for (int g = 0; g < GR_GEN_COUNT; ++g) {
            if (!gen_valid((gr_dtype_t)t, (gr_gen_t)g))
                continue;
            if (g_small && g != GR_GEN_STRESS && g != GR_GEN_IOTA && g != GR_GEN_NORMAL)
                continue;
            for (size_t si = 0; si < nsizes; ++si) {
                uint64_t n = sizes[si];
                dataset_t ds;
                dataset_make(&ds, (gr_dtype_t)t, (gr_gen_t)g, n);
                gr_buffer_t bg = NULL, bc = NULL;
                OK(gr_buffer_create_synthetic(gpu, (gr_dtype_t)t, (gr_gen_t)g, SEED, n, &bg));
                OK(gr_buffer_create_synthetic(cpu, (gr_dtype_t)t, (gr_gen_t)g, SEED, n, &bc));
                for (size_t oi = 0; oi < nops; ++oi) {
                    gr_desc_t d = desc((gr_dtype_t)t, ops[oi].kind, ops[oi].power);
                    reference_t ref = reference(&ds, &d);
                    gr_value_t vg, vc, vg2;
                    poison_value(&vg);
                    poison_value(&vc);
                    poison_value(&vg2);
                    OK(gr_reduce_buffer(gpu, bg, &d, &vg, NULL));
                    OK(gr_reduce_buffer(cpu, bc, &d, &vc, NULL));
                    char where[96];
                    snprintf(where, sizeof(where), "synthetic %s", gr_gen_name((gr_gen_t)g));
                    check_value(where, &d, n, &ref, &vg, &vc);
                    /* fast mode repeats bit for bit on the same GPU and np */
                    OK(gr_reduce_buffer(gpu, bg, &d, &vg2, NULL));
                    if (!same_bits(vg.f, vg2.f) || vg.i != vg2.i)
                        SOFT_FAIL_CONTINUE("%s n=%llu: two GPU runs differ: %a vs %a", where, (unsigned long long)n, vg.f,
                                      vg2.f);
                }
                gr_buffer_destroy(bg);
                gr_buffer_destroy(bc);
                dataset_free(&ds);
            }
        }
    }
}

/*
 * gr_reduce_device on a cudaMalloc'd buffer whose shard starts 0..3 elements
 * past the allocation (so never 16-byte aligned for off 1..3), surrounded by
 * poison that would change any result it leaked into; and gr_reduce_host on
 * both backends over the same shard.
 */
static void test_device_and_host(gr_ctx_t gpu, gr_ctx_t cpu)
{
    static const opcase_t ops[] = {{GR_OP_SUM, 1}, {GR_OP_MIN, 1}, {GR_OP_MAX, 1}, {GR_OP_SUMSQ, 1},
                                   {GR_OP_POWSUM, 3}};
    const uint64_t *sizes = g_small ? SIZES_SMALL : SIZES_FULL;
    size_t nsizes = g_small ? COUNT(SIZES_SMALL) : COUNT(SIZES_FULL);
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        gr_gen_t gens[2] = {GR_GEN_STRESS, is_float((gr_dtype_t)t) ? GR_GEN_NORMAL : GR_GEN_IOTA};
        for (int gi = 0; gi < 2; ++gi) {
            for (size_t si = 0; si < nsizes; ++si) {
                uint64_t n = sizes[si];
                dataset_t ds;
                dataset_make(&ds, (gr_dtype_t)t, gens[gi], n);
                uint64_t begin, count;
                void *shard = dataset_shard(&ds, &begin, &count);
                size_t esz = gr_dtype_size((gr_dtype_t)t);
                size_t bytes = (size_t)(count + 8) * esz;
                char *dbuf = NULL;
                CU(cudaMalloc((void **)&dbuf, bytes));
                for (size_t oi = 0; oi < COUNT(ops); ++oi) {
                    gr_desc_t d = desc((gr_dtype_t)t, ops[oi].kind, ops[oi].power);
                    reference_t ref = reference(&ds, &d);
                    gr_value_t vc, vh;
                    poison_value(&vc);
                    poison_value(&vh);
                    OK(gr_reduce_host(cpu, shard, count, &d, &vc, NULL));
                    OK(gr_reduce_host(gpu, shard, count, &d, &vh, NULL));
                    check_value("gr_reduce_host(cuda)", &d, n, &ref, &vh, &vc);
                    for (int off = 0; off <= 3; ++off) {
                        /* floats: 0xFF bytes are NaN; ints: 0x80 bytes are hugely negative */
                        CU(cudaMemset(dbuf, is_float((gr_dtype_t)t) ? 0xFF : 0x80, bytes));
                        if (count)
                            CU(cudaMemcpy(dbuf + (size_t)off * esz, shard, (size_t)count * esz,
                                          cudaMemcpyHostToDevice));
                        gr_value_t vd;
                        poison_value(&vd);
                        OK(gr_reduce_device(gpu, dbuf + (size_t)off * esz, count, &d, &vd, NULL));
                        char where[64];
                        snprintf(where, sizeof(where), "gr_reduce_device(offset %d, %s)", off,
                                 gr_gen_name(gens[gi]));
                        check_value(where, &d, n, &ref, &vd, &vc);
                    }
                }
                CU(cudaFree(dbuf));
                free(shard);
                dataset_free(&ds);
            }
        }
    }
}

/* Hand-made arrays with NaN, Inf, -0.0 at the head, body and tail of a shard. */
static void fill_f(gr_dtype_t t, void *p, size_t j, double v)
{
    if (is_half(t)) {
        put_half(t, (char *)p + j * 2, v);
    } else if (t == GR_F32) {
        float f = (float)v;
        memcpy((char *)p + j * 4, &f, 4);
    } else {
        memcpy((char *)p + j * 8, &v, 8);
    }
}

static void run_three(gr_ctx_t gpu, gr_ctx_t cpu, const void *host, size_t n, int off, const gr_desc_t *d,
                      gr_value_t *vd, gr_value_t *vh, gr_value_t *vc)
{
    size_t esz = gr_dtype_size(d->dtype);
    char *dbuf = NULL;
    CU(cudaMalloc((void **)&dbuf, (n + 4) * esz));
    CU(cudaMemset(dbuf, 0xFF, (n + 4) * esz));
    CU(cudaMemcpy(dbuf + (size_t)off * esz, host, n * esz, cudaMemcpyHostToDevice));
    poison_value(vd);
    poison_value(vh);
    poison_value(vc);
    OK(gr_reduce_device(gpu, dbuf + (size_t)off * esz, n, d, vd, NULL));
    OK(gr_reduce_host(gpu, host, n, d, vh, NULL));
    OK(gr_reduce_host(cpu, host, n, d, vc, NULL));
    CU(cudaFree(dbuf));
}

static void expect_f(const char *what, const gr_desc_t *d, const gr_value_t *v, double want)
{
    char dn[64];
    desc_name(d, dn, sizeof(dn));
    ++g_checks;
    int ok = isnan(want) ? isnan(v->f) : same_bits(v->f, want);
    if (!ok)
        SOFT_FAIL("%s %s: got %.17g (%a), want %.17g (%a)", what, dn, v->f, v->f, want, want);
}

static void test_special_values(gr_ctx_t gpu, gr_ctx_t cpu)
{
    enum { N = 37 };
    static const size_t pos[] = {0, 1, 17, 36};
    gr_dtype_t types[4] = {GR_F32, GR_F64, GR_F16, GR_BF16};
    for (int ti = 0; ti < 4; ++ti) {
        gr_dtype_t t = types[ti];
        /* the largest finite value of the type (f64: FLT_MAX, as for f32) */
        const double big = t == GR_F16 ? 65504.0 : t == GR_BF16 ? 0x1.FEp127 : FLT_MAX;
        double buf[N];
        for (int scenario = 0; scenario < 6; ++scenario) {
            for (size_t pi = 0; pi < COUNT(pos); ++pi) {
                size_t p = pos[pi];
                for (int j = 0; j < N; ++j)
                    fill_f(t, buf, (size_t)j, (double)(j % 7) - 3.0);
                /* wanted: sum, min, max, sumsq */
                double want[4];
                const char *name = "";
                switch (scenario) {
                case 0:
                    name = "one NaN";
                    fill_f(t, buf, p, NAN);
                    want[0] = want[1] = want[2] = want[3] = NAN;
                    break;
                case 1:
                    name = "one +Inf";
                    fill_f(t, buf, p, INFINITY);
                    want[0] = INFINITY;
                    want[1] = -3.0;
                    want[2] = INFINITY;
                    want[3] = INFINITY;
                    break;
                case 2:
                    name = "+Inf and -Inf";
                    fill_f(t, buf, p, INFINITY);
                    fill_f(t, buf, (p + 5) % N, -INFINITY);
                    want[0] = NAN;
                    want[1] = -INFINITY;
                    want[2] = INFINITY;
                    want[3] = INFINITY;
                    break;
                case 3:
                    name = "all -0.0";
                    for (int j = 0; j < N; ++j)
                        fill_f(t, buf, (size_t)j, -0.0);
                    want[0] = -0.0;
                    want[1] = -0.0;
                    want[2] = -0.0;
                    want[3] = 0.0;
                    break;
                case 4:
                    name = "-0.0 and +0.0";
                    for (int j = 0; j < N; ++j)
                        fill_f(t, buf, (size_t)j, -0.0);
                    fill_f(t, buf, p, 0.0);
                    want[0] = 0.0;
                    want[1] = -0.0;
                    want[2] = 0.0;
                    want[3] = 0.0;
                    break;
                default:
                    /* f32 and half input accumulates in f64: N * FLT_MAX does not overflow */
                    name = "largest finite";
                    for (int j = 0; j < N; ++j)
                        fill_f(t, buf, (size_t)j, big);
                    /* every rank holds this array; np*N*big is exact (at most 31 bits) */
                    want[0] = (double)N * (double)g_size * big;
                    want[1] = big;
                    want[2] = big;
                    want[3] = NAN; /* FLT_MAX^2 has 48 bits: sums round, so no bitwise answer */
                    break;
                }
                static const gr_op_kind_t kinds[4] = {GR_OP_SUM, GR_OP_MIN, GR_OP_MAX, GR_OP_SUMSQ};
                for (int k = 0; k < 4; ++k) {
                    if (scenario == 5 && k == 3)
                        continue;
                    gr_desc_t d = desc(t, kinds[k], 1);
                    for (int off = 0; off <= 3; off += 3) {
                        gr_value_t vd, vh, vc;
                        run_three(gpu, cpu, buf, N, off, &d, &vd, &vh, &vc);
                        char what[96];
                        snprintf(what, sizeof(what), "%s at %zu (offset %d): device", name, p, off);
                        expect_f(what, &d, &vd, want[k]);
                        snprintf(what, sizeof(what), "%s at %zu: cuda host", name, p);
                        expect_f(what, &d, &vh, want[k]);
                        snprintf(what, sizeof(what), "%s at %zu: cpu", name, p);
                        expect_f(what, &d, &vc, want[k]);
                    }
                }
                if (scenario == 0 && pi == 0) {
                    /* an abssum of a NaN is NaN too */
                    gr_desc_t d = desc(t, GR_OP_ABSSUM, 1);
                    gr_value_t vd, vh, vc;
                    run_three(gpu, cpu, buf, N, 1, &d, &vd, &vh, &vc);
                    expect_f("one NaN abssum device", &d, &vd, NAN);
                    expect_f("one NaN abssum cpu", &d, &vc, NAN);
                }
            }
        }
    }
    /* Integer extremes: 128-bit accumulation and the overflow flag. */
    for (int ti = 0; ti < 2; ++ti) {
        gr_dtype_t t = ti == 0 ? GR_I32 : GR_I64;
        int64_t vals[N];
        int64_t big = t == GR_I32 ? INT32_MAX : INT64_MAX;
        int64_t small = t == GR_I32 ? INT32_MIN : INT64_MIN;
        for (int j = 0; j < N; ++j)
            vals[j] = (j % 3 == 0) ? small : big;
        char raw[N * 8];
        for (int j = 0; j < N; ++j) {
            if (t == GR_I32) {
                int32_t v = (int32_t)vals[j];
                memcpy(raw + j * 4, &v, 4);
            } else {
                memcpy(raw + j * 8, &vals[j], 8);
            }
        }
        static const opcase_t ops[] = {{GR_OP_SUM, 1}, {GR_OP_ABSSUM, 1}, {GR_OP_SUMSQ, 1}, {GR_OP_MIN, 1},
                                       {GR_OP_MAX, 1}, {GR_OP_POWSUM, 3}};
        for (size_t oi = 0; oi < COUNT(ops); ++oi) {
            gr_desc_t d = desc(t, ops[oi].kind, ops[oi].power);
            gr_value_t vd, vh, vc;
            run_three(gpu, cpu, raw, N, 1, &d, &vd, &vh, &vc);
            dataset_t ds;
            memset(&ds, 0, sizeof(ds));
            ds.dtype = t;
            ds.n = N;
            ds.i = vals;
            reference_t ref = reference(&ds, &d);
            uint64_t n_all = (uint64_t)N * (uint64_t)g_size;
            /* the reference covers one rank's array; every rank holds the same */
            if (!is_minmax(d.op.kind))
                ref.isum *= g_size;
            check_value("integer extremes device", &d, n_all, &ref, &vd, &vc);
            check_value("integer extremes cuda host", &d, n_all, &ref, &vh, &vc);
            if (t == GR_I64 && d.op.kind != GR_OP_MIN && d.op.kind != GR_OP_MAX && !vd.overflow)
                SOFT_FAIL_CONTINUE("i64 extremes %s: expected the overflow flag", gr_op_name(d.op.kind));
        }
    }
}

/* Block and grid overrides give the same integer bits and close float sums. */
static void test_launch_shapes(gr_ctx_t cpu)
{
    static const int shapes[][2] = {{128, 0}, {512, 0}, {1024, 0}, {256, 1}, {256, 3}, {1024, 2}, {128, 1000}};
    static const uint64_t sizes[] = {0, 1, 5, 1025, 65537};
    static const opcase_t ops[] = {{GR_OP_SUM, 1}, {GR_OP_MIN, 1}, {GR_OP_MAX, 1}, {GR_OP_POWSUM, 2}};
    for (size_t s = 0; s < COUNT(shapes); ++s) {
        gr_ctx_t gpu = make_ctx(GR_BACKEND_CUDA, shapes[s][0], shapes[s][1], NULL);
        for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
            for (size_t si = 0; si < COUNT(sizes); ++si) {
                dataset_t ds;
                dataset_make(&ds, (gr_dtype_t)t, GR_GEN_STRESS, sizes[si]);
                for (size_t oi = 0; oi < COUNT(ops); ++oi) {
                    gr_desc_t d = desc((gr_dtype_t)t, ops[oi].kind, ops[oi].power);
                    reference_t ref = reference(&ds, &d);
                    gr_value_t vg, vc;
                    poison_value(&vg);
                    poison_value(&vc);
                    OK(gr_reduce_synthetic(gpu, GR_GEN_STRESS, SEED, sizes[si], &d, &vg, NULL));
                    OK(gr_reduce_synthetic(cpu, GR_GEN_STRESS, SEED, sizes[si], &d, &vc, NULL));
                    char where[64];
                    snprintf(where, sizeof(where), "block %d grid %d", shapes[s][0], shapes[s][1]);
                    check_value(where, &d, sizes[si], &ref, &vg, &vc);
                }
                dataset_free(&ds);
            }
        }
        OK(gr_ctx_destroy(gpu));
    }
    /* sizes not built are refused with a clear error (logged by every rank) */
    gr_result_t r;
    gr_ctx_t bad = make_ctx(GR_BACKEND_CUDA, 100, 0, &r);
    ASSERT(bad == NULL);
    ASSERT_EQ_I(r, GR_ERR_INVALID_ARG);
    bad = make_ctx(GR_BACKEND_CUDA, 256, GR_CUDA_GRID_MAX + 1, &r);
    ASSERT(bad == NULL);
    ASSERT_EQ_I(r, GR_ERR_INVALID_ARG);
    g_checks += 2;
}

/* Exact mode: floats run the exact kernel (bitwise the cpu backend's; the full
 * suite is tests/exact_gpu), integers are served by the reduce kernel (exact). */
static void test_exact_mode(gr_ctx_t gpu, gr_ctx_t cpu)
{
    for (int t = GR_F32; t <= GR_F64; ++t) {
        gr_desc_t d = desc((gr_dtype_t)t, GR_OP_SUM, 1);
        d.mode = GR_MODE_EXACT;
        gr_value_t v, vc;
        poison_value(&v);
        poison_value(&vc);
        OK(gr_reduce_synthetic(gpu, GR_GEN_STRESS, SEED, 100003, &d, &v, NULL));
        OK(gr_reduce_synthetic(cpu, GR_GEN_STRESS, SEED, 100003, &d, &vc, NULL));
        ASSERT_BITS_EQ(v.f, vc.f);
    }
    for (int t = GR_I32; t <= GR_I64; ++t) {
        gr_desc_t di = desc((gr_dtype_t)t, GR_OP_SUMSQ, 1);
        di.mode = GR_MODE_EXACT;
        gr_value_t vg, vc;
        poison_value(&vg);
        poison_value(&vc);
        OK(gr_reduce_synthetic(gpu, GR_GEN_STRESS, SEED, 100003, &di, &vg, NULL));
        OK(gr_reduce_synthetic(cpu, GR_GEN_STRESS, SEED, 100003, &di, &vc, NULL));
        check_value("exact mode", &di, 100003, NULL, &vg, &vc);
    }
    /* a grid forced past the exact kernel's limit is refused with a clear error, not launched */
    gr_result_t r;
    gr_ctx_t wide = make_ctx(GR_BACKEND_CUDA, 0, GR_EXACT_GRID_MAX + 1, &r);
    ASSERT(wide != NULL);
    gr_desc_t d = desc(GR_F32, GR_OP_SUM, 1);
    d.mode = GR_MODE_EXACT;
    gr_value_t v;
    ASSERT_EQ_I(gr_reduce_synthetic(wide, GR_GEN_STRESS, SEED, 1000, &d, &v, NULL), GR_ERR_INVALID_ARG);
    OK(gr_ctx_destroy(wide));
    g_checks += 2;
}

/* Exact-mode values: the same bits (NaN: both NaN) and counts on both backends. */
static void check_exact_same(const char *where, const gr_desc_t *d, uint64_t n, const gr_value_t *g,
                             const gr_value_t *c)
{
    char dn[64];
    desc_name(d, dn, sizeof(dn));
    ++g_checks;
    if (!g->valid || !c->valid || g->count != n || c->count != n)
        SOFT_FAIL("%s exact %s n=%llu: valid %d/%d count gpu %llu cpu %llu", where, dn, (unsigned long long)n,
                  g->valid, c->valid, (unsigned long long)g->count, (unsigned long long)c->count);
    if (!(same_bits(g->f, c->f) || (isnan(g->f) && isnan(c->f))))
        SOFT_FAIL("%s exact %s n=%llu: gpu %.17g (%a) != cpu %.17g (%a)", where, dn, (unsigned long long)n, g->f,
                  g->f, c->f, c->f);
}

/*
 * Exact mode for f16 / bf16: the GPU's exact kernel reads the halves as f32
 * values and the host rounds the exact state once to the half type; the cpu
 * backend does the same from its own accumulator. Bitwise equal for every
 * generator, exact op and size; through gr_reduce_device at element offsets
 * 0..7 (never 16-byte aligned but for 0) inside NaN poison; sums beyond the
 * half's range round to Inf, ties to even.
 */
static void test_exact_halves(gr_ctx_t gpu, gr_ctx_t cpu)
{
    static const opcase_t ops[] = {{GR_OP_SUM, 1},    {GR_OP_ABSSUM, 1}, {GR_OP_SUMSQ, 1}, {GR_OP_POWSUM, 1},
                                   {GR_OP_POWSUM, 2}, {GR_OP_MIN, 1},    {GR_OP_MAX, 1}};
    static const uint64_t sizes_full[] = {0, 1, 3, 7, 8, 9, 15, 17, 1023, 4099, 65537, 1000003};
    static const uint64_t sizes_small[] = {0, 1, 3, 9, 17, 4099};
    const uint64_t *sizes = g_small ? sizes_small : sizes_full;
    size_t nsizes = g_small ? COUNT(sizes_small) : COUNT(sizes_full);
    const gr_dtype_t types[2] = {GR_F16, GR_BF16};
    for (int ti = 0; ti < 2; ++ti) {
        gr_dtype_t t = types[ti];
        for (int g = 0; g < GR_GEN_COUNT; ++g) {
            if (g_small && g != GR_GEN_STRESS && g != GR_GEN_NORMAL)
                continue;
            for (size_t si = 0; si < nsizes; ++si) {
                uint64_t n = sizes[si];
                gr_buffer_t bg = NULL, bc = NULL;
                OK(gr_buffer_create_synthetic(gpu, t, (gr_gen_t)g, SEED, n, &bg));
                OK(gr_buffer_create_synthetic(cpu, t, (gr_gen_t)g, SEED, n, &bc));
                const int offsets = (g == GR_GEN_STRESS || g == GR_GEN_NORMAL) && n <= 65537;
                dataset_t ds;
                uint64_t begin = 0, count = 0;
                void *shard = NULL;
                char *dbuf = NULL;
                if (offsets) {
                    dataset_make(&ds, t, (gr_gen_t)g, n);
                    shard = dataset_shard(&ds, &begin, &count);
                    CU(cudaMalloc((void **)&dbuf, (size_t)(count + 16) * 2));
                }
                for (size_t oi = 0; oi < COUNT(ops); ++oi) {
                    gr_desc_t d = desc(t, ops[oi].kind, ops[oi].power);
                    d.mode = GR_MODE_EXACT;
                    gr_value_t vg, vc;
                    poison_value(&vg);
                    poison_value(&vc);
                    OK(gr_reduce_buffer(gpu, bg, &d, &vg, NULL));
                    OK(gr_reduce_buffer(cpu, bc, &d, &vc, NULL));
                    char where[64];
                    snprintf(where, sizeof(where), "synthetic %s", gr_gen_name((gr_gen_t)g));
                    check_exact_same(where, &d, n, &vg, &vc);
                    for (int off = 0; offsets && off < 8; off += g_small ? 3 : 1) {
                        CU(cudaMemset(dbuf, 0xFF, (size_t)(count + 16) * 2)); /* 0xFFFF: NaN in f16 and bf16 */
                        if (count)
                            CU(cudaMemcpy(dbuf + off * 2, shard, (size_t)count * 2, cudaMemcpyHostToDevice));
                        gr_value_t vd;
                        poison_value(&vd);
                        OK(gr_reduce_device(gpu, dbuf + off * 2, count, &d, &vd, NULL));
                        snprintf(where, sizeof(where), "gr_reduce_device(offset %d, %s)", off,
                                 gr_gen_name((gr_gen_t)g));
                        check_exact_same(where, &d, n, &vd, &vc);
                    }
                }
                if (offsets) {
                    CU(cudaFree(dbuf));
                    free(shard);
                    dataset_free(&ds);
                }
                gr_buffer_destroy(bg);
                gr_buffer_destroy(bc);
            }
        }
        /* hand-made: NaN, Inf, signed zeros, overflow on rounding, a tie */
        enum { N = 37 };
        const double big = t == GR_F16 ? 65504.0 : 0x1.FEp127;
        const double tie_hi = t == GR_F16 ? 2048.0 : 256.0; /* tie_hi + 1: halfway between two halves */
        for (int scenario = 0; scenario < 6; ++scenario) {
            double buf[N]; /* room for any dtype: fill_f writes 2-byte halves here */
            double want;
            const char *name;
            for (int j = 0; j < N; ++j)
                fill_f(t, buf, (size_t)j, 0.0);
            switch (scenario) {
            case 0:
                name = "all -0.0";
                for (int j = 0; j < N; ++j)
                    fill_f(t, buf, (size_t)j, -0.0);
                want = -0.0;
                break;
            case 1:
                name = "-0.0 and +0.0";
                for (int j = 0; j < N; ++j)
                    fill_f(t, buf, (size_t)j, j == 17 ? 0.0 : -0.0);
                want = 0.0;
                break;
            case 2:
                name = "one NaN";
                fill_f(t, buf, 36, NAN);
                want = NAN;
                break;
            case 3:
                name = "+Inf and -Inf";
                fill_f(t, buf, 0, INFINITY);
                fill_f(t, buf, 9, -INFINITY);
                want = NAN;
                break;
            case 4:
                name = "largest finite x N: rounds to Inf";
                for (int j = 0; j < N; ++j)
                    fill_f(t, buf, (size_t)j, big);
                want = INFINITY;
                break;
            default: {
                name = "tie";
                fill_f(t, buf, 3, tie_hi);
                fill_f(t, buf, 30, 1.0);
                /* np x (tie_hi + 1) is exact in f32; the f32 -> half rounding is the reference */
                uint16_t h = gr_f32_to_half_bits((float)((tie_hi + 1.0) * g_size), t == GR_BF16);
                want = (double)gr_half_bits_to_f32(h, t == GR_BF16);
                break;
            }
            }
            gr_desc_t d = desc(t, GR_OP_SUM, 1);
            d.mode = GR_MODE_EXACT;
            for (int off = 0; off <= 3; off += 3) { /* run_three leaves room for 4 */
                gr_value_t vd, vh, vc;
                run_three(gpu, cpu, buf, N, off, &d, &vd, &vh, &vc);
                char what[96];
                snprintf(what, sizeof(what), "exact %s (offset %d): device", name, off);
                expect_f(what, &d, &vd, want);
                snprintf(what, sizeof(what), "exact %s: cuda host", name);
                expect_f(what, &d, &vh, want);
                snprintf(what, sizeof(what), "exact %s: cpu", name);
                expect_f(what, &d, &vc, want);
            }
        }
    }
}

/* The generate launcher alone: bits, odd begin, 64-bit begin, no stray writes. */
static void test_generate_kernel(void)
{
    static const uint64_t begins[] = {0, 1, (1ull << 32) + 7};
    static const uint64_t ns[] = {0, 1, 5, 1000, 70001};
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        size_t esz = gr_dtype_size((gr_dtype_t)t);
        for (int g = 0; g < GR_GEN_COUNT; ++g) {
            if (!gen_valid((gr_dtype_t)t, (gr_gen_t)g))
                continue;
            for (size_t bi = 0; bi < COUNT(begins); ++bi) {
                for (size_t ni = 0; ni < COUNT(ns); ++ni) {
                    uint64_t n = ns[ni];
                    size_t bytes = (size_t)(n + 8) * esz;
                    char *d = NULL, *h = (char *)malloc(bytes), *want = (char *)malloc(bytes);
                    ASSERT(h && want);
                    CU(cudaMalloc((void **)&d, bytes));
                    CU(cudaMemset(d, 0xCD, bytes));
                    memset(want, 0xCD, bytes);
                    gr_gen_keys_t k = gr_gen_make_keys(SEED);
                    for (uint64_t j = 0; j < n; ++j) {
                        char *dst = want + (3 + j) * esz;
                        uint64_t gi = begins[bi] + j;
                        if (t == GR_F32) {
                            float v = (float)gr_gen_float(g, GR_C_F32, k, gi);
                            memcpy(dst, &v, 4);
                        } else if (t == GR_F64) {
                            double v = gr_gen_float(g, GR_C_F64, k, gi);
                            memcpy(dst, &v, 8);
                        } else if (t == GR_I32) {
                            int32_t v = (int32_t)gr_gen_int(g, GR_C_I32, k, gi);
                            memcpy(dst, &v, 4);
                        } else if (is_half((gr_dtype_t)t)) {
                            uint16_t v = gr_gen_half_bits(g, t, k, gi);
                            memcpy(dst, &v, 2);
                        } else {
                            int64_t v = gr_gen_int(g, GR_C_I64, k, gi);
                            memcpy(dst, &v, 8);
                        }
                    }
                    CU(gr_cuda_launch_generate(d + 3 * esz, t, g, SEED, begins[bi], n, 0));
                    CU(cudaDeviceSynchronize());
                    CU(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
                    if (memcmp(h, want, bytes) != 0)
                        SOFT_FAIL("generate %s %s begin %llu n %llu: device bits differ from the host's",
                                      gr_dtype_name((gr_dtype_t)t), gr_gen_name((gr_gen_t)g),
                                      (unsigned long long)begins[bi], (unsigned long long)n);
                    ++g_checks;
                    CU(cudaFree(d));
                    free(h);
                    free(want);
                }
            }
        }
    }
}

/*
 * gr_reduce_host on the cuda backend with more data than one staging buffer
 * (64 MiB), so the double-buffered pipeline runs several chunks. iota data
 * has an exact sum, so the gate is exact. Every rank holds the same array.
 */
static void test_host_chunks(gr_ctx_t gpu)
{
    static const struct {
        gr_dtype_t t;
        uint64_t n;
    } cases[] = {{GR_I32, 50000003}, {GR_F64, 20000001}, {GR_I64, 9000001}, {GR_F16, 40000003}, {GR_BF16, 40000001}};
    for (size_t c = 0; c < COUNT(cases); ++c) {
        gr_dtype_t t = cases[c].t;
        uint64_t n = cases[c].n;
        size_t esz = gr_dtype_size(t);
        char *h = (char *)malloc((size_t)n * esz);
        ASSERT(h);
        /* iota mod m: every value exact in the type (bf16 holds the integers up to 256) */
        const uint64_t m = t == GR_BF16 ? 256u : 1000u;
        for (uint64_t j = 0; j < n; ++j) {
            int64_t v = (int64_t)(j % m);
            if (is_half(t)) {
                put_half(t, h + j * 2, (double)v);
            } else if (t == GR_I32) {
                int32_t x = (int32_t)v;
                memcpy(h + j * 4, &x, 4);
            } else if (t == GR_I64) {
                memcpy(h + j * 8, &v, 8);
            } else {
                double x = (double)v;
                memcpy(h + j * 8, &x, 8);
            }
        }
        uint64_t q = n / m, r = n % m;
        int64_t want = (int64_t)(q * (m * (m - 1) / 2) + r * (r - 1) / 2) * g_size;
        static const gr_op_kind_t kinds[3] = {GR_OP_SUM, GR_OP_MIN, GR_OP_MAX};
        for (int k = 0; k < 3; ++k) {
            gr_desc_t d = desc(t, kinds[k], 1);
            gr_value_t v;
            poison_value(&v);
            OK(gr_reduce_host(gpu, h, n, &d, &v, NULL));
            int64_t w = kinds[k] == GR_OP_SUM ? want : kinds[k] == GR_OP_MIN ? 0 : (int64_t)m - 1;
            ASSERT_EQ_U(v.count, n * (uint64_t)g_size);
            if (is_float(t))
                ASSERT_BITS_EQ(v.f, (double)w);
            else
                ASSERT_EQ_I(v.i, w);
            ++g_checks;
        }
        free(h);
    }
}

/* N > 2^32: the answer is known exactly; needs ~17 GB free per rank. */
static void test_big(gr_ctx_t gpu)
{
    const uint64_t n = (1ull << 32) + 3;
    size_t free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b));
    uint64_t begin, end;
    gr_shard_range(n, g_size, g_rank, &begin, &end);
    int enough = (double)free_b > (double)(end - begin) * 4.0 * 1.05 + (1ull << 30);
    int all_enough = 0;
    MPI_Allreduce(&enough, &all_enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_enough) {
        if (g_rank == 0)
            printf("big: skipped, %.1f GiB free on the GPU is too little for 2^32+3 four-byte elements\n",
                   (double)free_b / 1073741824.0);
        return;
    }
    /* i32 ones: sum n, min = max = 1 */
    gr_buffer_t b = NULL;
    double t0 = MPI_Wtime();
    OK(gr_buffer_create_synthetic(gpu, GR_I32, GR_GEN_ONES, SEED, n, &b));
    double t1 = MPI_Wtime();
    gr_desc_t d = desc(GR_I32, GR_OP_SUM, 1);
    gr_value_t v;
    gr_timing_t tm;
    poison_value(&v);
    OK(gr_reduce_buffer(gpu, b, &d, &v, &tm)); /* first launch loads the kernel: time the second */
    poison_value(&v);
    OK(gr_reduce_buffer(gpu, b, &d, &v, &tm));
    ASSERT_EQ_U(v.count, n);
    ASSERT_EQ_I(v.overflow, 0);
    ASSERT_EQ_I(v.i, (int64_t)n);
    if (g_rank == 0)
        printf("big: i32 ones n=2^32+3 sum %lld (generate %.1f ms, reduce local %.2f ms = %.0f GB/s)\n",
               (long long)v.i, (t1 - t0) * 1e3, tm.local * 1e3,
               (double)(end - begin) * 4.0 / tm.local * 1e-9);
    d = desc(GR_I32, GR_OP_MAX, 1);
    poison_value(&v);
    OK(gr_reduce_buffer(gpu, b, &d, &v, NULL));
    ASSERT_EQ_I(v.i, 1);
    gr_buffer_destroy(b);

    /* i32 iota: sum of (i mod 1000) catches any 32-bit index wrap */
    OK(gr_buffer_create_synthetic(gpu, GR_I32, GR_GEN_IOTA, SEED, n, &b));
    d = desc(GR_I32, GR_OP_SUM, 1);
    poison_value(&v);
    OK(gr_reduce_buffer(gpu, b, &d, &v, NULL));
    uint64_t q = n / 1000, r = n % 1000;
    int64_t want = (int64_t)(q * 499500u + r * (r - 1) / 2);
    ASSERT_EQ_I(v.i, want);
    gr_buffer_destroy(b);

    /* f32 ones: f64 accumulation of 2^32+3 ones is exact */
    OK(gr_buffer_create_synthetic(gpu, GR_F32, GR_GEN_ONES, SEED, n, &b));
    d = desc(GR_F32, GR_OP_SUM, 1);
    OK(gr_reduce_buffer(gpu, b, &d, &v, &tm));
    poison_value(&v);
    OK(gr_reduce_buffer(gpu, b, &d, &v, &tm));
    ASSERT_BITS_EQ(v.f, (double)n);
    ASSERT_EQ_U(v.count, n);
    if (g_rank == 0)
        printf("big: f32 ones n=2^32+3 sum %.1f (reduce local %.2f ms = %.0f GB/s)\n", v.f, tm.local * 1e3,
               (double)(end - begin) * 4.0 / tm.local * 1e-9);
    gr_buffer_destroy(b);
    g_checks += 6;
}

static void test_gpu_list(void)
{
    gr_gpu_info_t gpus[16];
    int n = gr_cuda_list_gpus(gpus, 16);
    ASSERT(n >= 1);
    for (int i = 0; i < n; ++i) {
        unsigned a, b, c, e;
        char back[32];
        ASSERT(sscanf(gpus[i].pci_bus_id, "%x:%x:%x.%x", &a, &b, &c, &e) == 4);
        snprintf(back, sizeof(back), "%04x:%02x:%02x.%x", a, b, c, e);
        ASSERT_STREQ(gpus[i].pci_bus_id, back);
        if (g_rank == 0)
            printf("gpu %d: %s %s\n", i, gpus[i].pci_bus_id, gpus[i].name);
    }
    ASSERT_EQ_I(gr_cuda_device_count(), n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int big = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--small"))
            g_small = 1;
        else if (!strcmp(argv[i], "--big"))
            big = 1;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        (void)cudaGetLastError();
        if (g_rank == 0)
            printf("SKIP: no CUDA GPU is visible; the cuda backend tests need one\n");
        fflush(stdout);
        MPI_Finalize();
        return GR_TEST_SKIP_CODE;
    }
    double t0 = MPI_Wtime();
    test_gpu_list();
    gr_ctx_t gpu = make_ctx(GR_BACKEND_CUDA, 0, 0, NULL);
    ASSERT_EQ_I(gr_ctx_backend(gpu), GR_BACKEND_CUDA);
    if (big) {
        test_big(gpu);
    } else {
        gr_ctx_t cpu = make_ctx(GR_BACKEND_CPU, 0, 0, NULL);
        test_generate_kernel();
        test_special_values(gpu, cpu);
        test_synthetic(gpu, cpu);
        test_device_and_host(gpu, cpu);
        if (!g_small)
            test_host_chunks(gpu);
        test_exact_mode(gpu, cpu);
        test_exact_halves(gpu, cpu);
        test_launch_shapes(cpu);
        OK(gr_ctx_destroy(cpu));
    }
    OK(gr_ctx_destroy(gpu));
    if (g_rank == 0) {
        if (g_failures)
            printf("test_cuda_backend np=%d%s%s: %ld of %llu checks FAILED (%.1f s)\n", g_size,
                   g_small ? " --small" : "", big ? " --big" : "", g_failures, (unsigned long long)g_checks,
                   MPI_Wtime() - t0);
        else
            printf("test_cuda_backend np=%d%s%s: %llu checks passed in %.1f s\n", g_size, g_small ? " --small" : "",
                   big ? " --big" : "", (unsigned long long)g_checks, MPI_Wtime() - t0);
    }
    MPI_Finalize();
    return g_failures ? 1 : 0;
}
