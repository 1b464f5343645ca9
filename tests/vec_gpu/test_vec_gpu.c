/*
 * test_vec_gpu.c - dot, nrm2, argmin/argmax, exact f64 sumsq and batches on
 * the GPU (kernels/dot.cu, kernels/argext.cu) against the cpu kernels on the
 * same values: exact mode and argmin/argmax bit for bit (value and global
 * index), fast mode repeatable and within rounding of the exact value, for
 * every dtype, awkward n and shards (np 1 and 3), and forced grids; the
 * non-blocking batch (gr_ireduce_batch_device) with the blocking bits; batch
 * launches (many items in one kernel) with the bits of each item's own call,
 * every dtype, mixed counts 0 .. 1000003, fast and exact; adversarial exact
 * dots (check_exact_adversarial: every branch of the exact dot's batch and
 * slow path) in batches and single calls against the cpu; argmin/argmax on
 * built arrays (ties across lanes, blocks and ranks, NaN first / last /
 * several, signed zeros, all-equal and all-limit arrays, misaligned starts)
 * against the cpu backend and a plain scan. Exits 77 (SKIP) where no GPU is
 * visible.
 */
#include "gpureduce.h"
#include "gr_half.h"
#include "test.h"
#include "test_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, np;
static long checks;

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Element i of p (dtype t): f for floating types (rounded once), iv for integers. */
static void put_val(gr_dtype_t t, void *p, uint64_t i, double f, int64_t iv)
{
    switch (t) {
    case GR_F64:
        ((double *)p)[i] = f;
        break;
    case GR_F32:
        ((float *)p)[i] = (float)f;
        break;
    case GR_F16:
    case GR_BF16:
        ((uint16_t *)p)[i] = gr_f32_to_half_bits((float)f, t == GR_BF16);
        break;
    case GR_I32:
        ((int32_t *)p)[i] = (int32_t)iv;
        break;
    case GR_I64:
        ((int64_t *)p)[i] = iv;
        break;
    }
}

/* A value of dtype t as bytes at p[i]: wide exponent range, cancellation, ties, zeros of both signs. */
static void fill(gr_dtype_t t, void *p, uint64_t n, uint64_t seed, int specials)
{
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t h = rnd(&s);
        double m = 1.0 + (double)(h >> 12) * 0x1p-52;
        int e;
        switch (t) {
        case GR_F64:
            e = (int)(rnd(&s) % 2000) - 1000;
            break;
        case GR_F32:
            e = (int)(rnd(&s) % 200) - 100;
            break;
        default:
            e = (int)(rnd(&s) % 24) - 12;
            break;
        }
        double v = ldexp(m, e) * ((h & 1) ? -1.0 : 1.0);
        if (h % 97 == 0)
            v = (h & 2) ? -0.0 : 0.0;
        if (h % 13 == 0)
            v = 3.0; /* repeated extremes tie */
        if (specials && h % 1009 == 0)
            v = NAN;
        put_val(t, p, i, v,
                t == GR_I32 ? (int64_t)((int32_t)(h >> 33) - (1 << 30)) : (int64_t)(h >> 1) * ((h & 1) ? -1 : 1));
    }
}

static int same(const gr_value_t *a, const gr_value_t *b)
{
    return a->index == b->index && a->is_integer == b->is_integer && a->overflow == b->overflow &&
           a->i == b->i && (memcmp(&a->f, &b->f, 8) == 0 || (isnan(a->f) && isnan(b->f))) && a->count == b->count;
}

static void check_case(gr_ctx_t gpu, gr_dtype_t t, uint64_t n, uint64_t seed, int specials)
{
    size_t esz = gr_dtype_size(t);
    uint64_t b, e;
    gr_shard_range(n, np, rank, &b, &e);
    uint64_t m = e - b;
    void *hx = malloc((size_t)(n ? n : 1) * esz), *hy = malloc((size_t)(n ? n : 1) * esz);
    ASSERT(hx && hy);
    fill(t, hx, n, seed, specials);
    fill(t, hy, n, seed + 1, specials);
    void *dx = NULL, *dy = NULL;
    CU(cudaMalloc(&dx, (size_t)(m ? m : 1) * esz));
    CU(cudaMalloc(&dy, (size_t)(m ? m : 1) * esz));
    CU(cudaMemcpy(dx, (char *)hx + b * esz, (size_t)m * esz, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dy, (char *)hy + b * esz, (size_t)m * esz, cudaMemcpyHostToDevice));
    enum { K = 5 };
    gr_op_kind_t ops[K] = {GR_OP_DOT, GR_OP_NRM2, GR_OP_ARGMIN, GR_OP_ARGMAX, GR_OP_SUMSQ};
    for (int mode = 0; mode < 2; ++mode) {
        gr_batch_item_t hit[K], dit[K];
        for (int j = 0; j < K; ++j) {
            gr_batch_item_init(&hit[j]);
            hit[j].desc.dtype = t;
            hit[j].desc.op.kind = ops[j];
            hit[j].desc.op.power = 2;
            hit[j].desc.mode = (gr_mode_t)mode;
            hit[j].count = m;
            hit[j].index_base = (int64_t)b;
            dit[j] = hit[j];
            hit[j].x = (char *)hx + b * esz;
            hit[j].y = (char *)hy + b * esz;
            dit[j].x = dx;
            dit[j].y = dy;
        }
        /* sumsq stays on the GPU only where it is a vector op: exact f64 */
        int k = (mode == 1 && t == GR_F64) ? K : K - 1;
        gr_value_t hv[K], dv[K], dv2[K];
        ASSERT_EQ_I(gr_reduce_batch_host(gpu, hit, k, hv, NULL), GR_SUCCESS);
        ASSERT_EQ_I(gr_reduce_batch_device(gpu, dit, k, dv, NULL), GR_SUCCESS);
        ASSERT_EQ_I(gr_reduce_batch_device(gpu, dit, k, dv2, NULL), GR_SUCCESS);
        gr_value_t nb[K];
        gr_request_t q = NULL;
        ASSERT_EQ_I(gr_ireduce_batch_device(gpu, dit, k, NULL, &q), GR_SUCCESS);
        ASSERT_EQ_I(gr_wait(&q, nb, NULL), GR_SUCCESS);
        if (rank != 0)
            continue;
        for (int j = 0; j < k; ++j) {
            ++checks;
            int must = mode == 1 || ops[j] == GR_OP_ARGMIN || ops[j] == GR_OP_ARGMAX || t == GR_I32 || t == GR_I64;
            if (!same(&dv[j], &nb[j]))
                GR_TEST_FAIL_("%s %s %s n=%llu: non-blocking batch %a (index %lld) != blocking %a (index %lld)",
                              gr_dtype_name(t), gr_op_name(ops[j]), gr_mode_name((gr_mode_t)mode),
                              (unsigned long long)n, nb[j].f, (long long)nb[j].index, dv[j].f, (long long)dv[j].index);
            if (!same(&dv[j], &dv2[j]))
                GR_TEST_FAIL_("%s %s %s n=%llu: two GPU runs differ: %a / %a", gr_dtype_name(t),
                              gr_op_name(ops[j]), gr_mode_name((gr_mode_t)mode), (unsigned long long)n, dv[j].f,
                              dv2[j].f);
            if (must && !same(&dv[j], &hv[j]))
                GR_TEST_FAIL_("%s %s %s n=%llu np=%d: GPU (%a, i %lld, index %lld) != cpu (%a, i %lld, index %lld)",
                              gr_dtype_name(t), gr_op_name(ops[j]), gr_mode_name((gr_mode_t)mode),
                              (unsigned long long)n, np, dv[j].f, (long long)dv[j].i, (long long)dv[j].index,
                              hv[j].f, (long long)hv[j].i, (long long)hv[j].index);
            if (!must) {
                /* fast float dot/nrm2: within rounding of the cpu's (itself within rounding of exact) */
                /* f64 fast dot may overflow to Inf in one summation order and not another: only
                 * the other types (products exact in f64, no overflow) must agree on NaN */
                if (t != GR_F64 && isnan(hv[j].f) != isnan(dv[j].f))
                    GR_TEST_FAIL_("%s %s fast: NaN on one side only", gr_dtype_name(t), gr_op_name(ops[j]));
                if (!isnan(hv[j].f) && isfinite(hv[j].f) && ops[j] == GR_OP_NRM2)
                    ASSERT_NEAR(dv[j].f, hv[j].f, 1e-12);
            }
        }
    }
    CU(cudaFree(dx));
    CU(cudaFree(dy));
    free(hx);
    free(hy);
}

/* Items it[0..k) three ways: each alone (sep), as one blocking batch (bat) and one non-blocking batch (nb). */
static void run_batch_3ways(gr_ctx_t gpu, const gr_batch_item_t *it, int k, gr_value_t *sep, gr_value_t *bat,
                            gr_value_t *nb)
{
    for (int j = 0; j < k; ++j)
        ASSERT_EQ_I(gr_reduce_batch_device(gpu, &it[j], 1, &sep[j], NULL), GR_SUCCESS);
    ASSERT_EQ_I(gr_reduce_batch_device(gpu, it, k, bat, NULL), GR_SUCCESS);
    gr_request_t q = NULL;
    ASSERT_EQ_I(gr_ireduce_batch_device(gpu, it, k, NULL, &q), GR_SUCCESS);
    ASSERT_EQ_I(gr_wait(&q, nb, NULL), GR_SUCCESS);
}

/*
 * A batch launch against the items' own calls: for each mode, one batch per dtype (dot, nrm2, argmin,
 * argmax at every count of `counts`, plus a sum, and exact f64 sumsq) and one batch of dot of every dtype
 * at every count; each value and index must have the bits of gr_reduce_batch_device with that item alone
 * (its single-call kernel), blocking and non-blocking, fast mode included.
 */
static void check_batch_vs_separate(gr_ctx_t gpu, const uint64_t *counts, int ncounts)
{
    static const gr_dtype_t types[] = {GR_F32, GR_F64, GR_F16, GR_BF16, GR_I32, GR_I64};
    enum { NT = 6, MAXK = 64 };
    uint64_t nmax = 0;
    for (int c = 0; c < ncounts; ++c)
        nmax = counts[c] > nmax ? counts[c] : nmax;
    void *dx[NT], *dy[NT];
    for (int ti = 0; ti < NT; ++ti) {
        size_t bytes = (size_t)(nmax + 8) * gr_dtype_size(types[ti]);
        void *h = malloc(bytes);
        ASSERT(h);
        CU(cudaMalloc(&dx[ti], bytes));
        CU(cudaMalloc(&dy[ti], bytes));
        fill(types[ti], h, nmax + 8, 7000 + (uint64_t)ti * 11 + (uint64_t)rank, 1);
        CU(cudaMemcpy(dx[ti], h, bytes, cudaMemcpyHostToDevice));
        fill(types[ti], h, nmax + 8, 9000 + (uint64_t)ti * 13 + (uint64_t)rank, 1);
        CU(cudaMemcpy(dy[ti], h, bytes, cudaMemcpyHostToDevice));
        free(h);
    }
    gr_batch_item_t it[MAXK];
    gr_value_t sep[MAXK], bat[MAXK], nb[MAXK];
    for (int mode = 0; mode < 2; ++mode) {
        for (int b = 0; b <= NT; ++b) { /* b < NT: the batch of dtype b; b == NT: dot of every dtype */
            int k = 0;
            for (int c = 0; c < ncounts; ++c) {
                static const gr_op_kind_t ops[4] = {GR_OP_DOT, GR_OP_NRM2, GR_OP_ARGMIN, GR_OP_ARGMAX};
                for (int o = 0; o < (b < NT ? 4 : NT); ++o) {
                    int ti = b < NT ? b : o;
                    gr_batch_item_t *x = &it[k++];
                    gr_batch_item_init(x);
                    x->desc.dtype = types[ti];
                    x->desc.op.kind = b < NT ? ops[o] : GR_OP_DOT;
                    x->desc.mode = (gr_mode_t)mode;
                    x->desc.all_ranks = 1;
                    /* items of one array start at different elements: other data, other alignment */
                    size_t off = (size_t)(c + o) % 8 * gr_dtype_size(types[ti]);
                    x->x = (char *)dx[ti] + off;
                    x->y = (char *)dy[ti] + off;
                    x->count = counts[c];
                    x->index_base = (int64_t)rank * 3000000 + c;
                }
            }
            if (b < NT) { /* an elementwise item and (exact f64) the vector sum of squares ride along */
                gr_batch_item_init(&it[k]);
                it[k].desc.dtype = types[b];
                it[k].desc.op.kind = GR_OP_SUM;
                it[k].desc.mode = (gr_mode_t)mode;
                it[k].desc.all_ranks = 1;
                it[k].x = dx[b];
                it[k].count = counts[ncounts - 1];
                ++k;
                it[k] = it[k - 1];
                it[k].desc.op.kind = GR_OP_SUMSQ;
                it[k].desc.op.power = 2;
                ++k;
            }
            ASSERT(k <= MAXK);
            run_batch_3ways(gpu, it, k, sep, bat, nb);
            for (int j = 0; j < k; ++j) {
                ++checks;
                if (!same(&bat[j], &sep[j]) || !same(&nb[j], &sep[j]))
                    GR_TEST_FAIL_("batch of %d (%s) item %d: %s %s %s n=%llu: batch %a (index %lld), non-blocking "
                                  "%a (index %lld), own call %a (index %lld)",
                                  k, b < NT ? gr_dtype_name(types[b]) : "dot of every dtype", j,
                                  gr_dtype_name(it[j].desc.dtype), gr_op_name(it[j].desc.op.kind),
                                  gr_mode_name((gr_mode_t)mode), (unsigned long long)it[j].count, bat[j].f,
                                  (long long)bat[j].index, nb[j].f, (long long)nb[j].index, sep[j].f,
                                  (long long)sep[j].index);
            }
        }
    }
    for (int ti = 0; ti < NT; ++ti) {
        CU(cudaFree(dx[ti]));
        CU(cudaFree(dy[ti]));
    }
}

/*
 * argmin / argmax on built arrays, against the cpu backend and the test's own scan (numpy: the first NaN,
 * else the lowest index of the extreme; -0.0 == +0.0). Kinds of array (global, sharded over the ranks):
 */
enum {
    A_EQUAL, /* every element 1.5 (integers 7) */
    A_EXT,   /* values -1 .. 1 in steps of 1/8 (ties everywhere), the extreme at the positions S (see ext_pos) */
    A_ZERO,  /* values of one sign, zeros of both signs (alternating) at S: the first zero wins, with its sign */
    A_NAN,   /* values -1 .. 1, +-3 before p0, NaN at S (integers: as A_EXT) */
    A_LIMIT, /* every element the dtype's lowest (side max) or highest (side min): -Inf / +Inf, INT_MIN / INT_MAX */
    A_ZEROS, /* only zeros, signs at random */
    A_KINDS
};

/* The i-th tied position after p0: neighbours in one vector and across vectors, thread and block boundaries. */
static const uint64_t ext_step[] = {1, 2, 3, 4, 5, 7, 8, 255, 256, 257, 1023, 1024, 1025, 4096, 65536, 262144};

/* Array kind of n elements for side (1 min, 2 max) with its first special position p0, and S: p0, p0 + each
 * ext_step, the shard boundaries after p0 and n - 1 (kind A_NAN with p0 == n - 1: NaN only last). */
static void fill_arg(gr_dtype_t t, void *p, uint64_t n, int kind, int side, uint64_t p0, uint64_t seed)
{
    const int is_int = t == GR_I32 || t == GR_I64;
    const int64_t ilo = t == GR_I32 ? INT32_MIN : INT64_MIN, ihi = t == GR_I32 ? INT32_MAX : INT64_MAX;
    uint64_t s = seed;
    if (is_int && kind == A_NAN)
        kind = A_EXT;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t r = (int64_t)(rnd(&s) % 17) - 8;
        double f = (double)r / 8.0;
        int64_t iv = r;
        switch (kind) {
        case A_EQUAL:
            f = 1.5;
            iv = 7;
            break;
        case A_ZERO:
            f = side == 1 ? 2.0 + f : -2.0 + f;
            iv = side == 1 ? 10 + r : -10 + r;
            break;
        case A_LIMIT:
            f = side == 1 ? INFINITY : -INFINITY;
            iv = side == 1 ? ihi : ilo;
            break;
        case A_ZEROS:
            f = (r & 1) ? -0.0 : 0.0;
            iv = 0;
            break;
        default:
            break;
        }
        put_val(t, p, i, f, iv);
    }
    if (kind != A_EXT && kind != A_ZERO && kind != A_NAN)
        return;
    if (kind == A_NAN) { /* extremes before the first NaN lose to it */
        put_val(t, p, p0 / 2, 3.0, 0);
        put_val(t, p, p0 / 3, -3.0, 0);
    }
    uint64_t pos[sizeof(ext_step) / sizeof(ext_step[0]) + 2 + 2 * 8];
    int npos = 0;
    pos[npos++] = p0;
    if (!(kind == A_NAN && p0 == n - 1)) {
        for (size_t k = 0; k < sizeof(ext_step) / sizeof(ext_step[0]); ++k)
            pos[npos++] = p0 + ext_step[k];
        for (int r = 1; r < np && r <= 8; ++r) {
            uint64_t b, e;
            gr_shard_range(n, np, r, &b, &e);
            pos[npos++] = b - 1;
            pos[npos++] = b;
        }
        pos[npos++] = n - 1;
    }
    int zsign = (int)(seed & 1);
    for (int k = 0; k < npos; ++k) {
        if (pos[k] < p0 || pos[k] >= n)
            continue;
        double f = kind == A_NAN ? NAN : kind == A_ZERO ? ((zsign ^ k) & 1 ? -0.0 : 0.0) : side == 1 ? -3.0 : 3.0;
        int64_t iv = kind == A_ZERO ? 0 : side == 1 ? ilo : ihi;
        put_val(t, p, pos[k], f, iv);
    }
}

/* Element i as the cpu compares it: halves widened, integers in iv. */
static double get_f(gr_dtype_t t, const void *p, uint64_t i, int64_t *iv)
{
    switch (t) {
    case GR_F64:
        return ((const double *)p)[i];
    case GR_F32:
        return ((const float *)p)[i];
    case GR_F16:
    case GR_BF16:
        return gr_half_bits_to_f32(((const uint16_t *)p)[i], t == GR_BF16);
    case GR_I32:
        *iv = ((const int32_t *)p)[i];
        return 0.0;
    default:
        *iv = ((const int64_t *)p)[i];
        return 0.0;
    }
}

/* numpy's argmin (is_min) / argmax of p[0..n): the first NaN, else the first extreme. */
static int64_t ref_arg(gr_dtype_t t, const void *p, uint64_t n, int is_min)
{
    const int is_int = t == GR_I32 || t == GR_I64;
    int64_t best = 0, bi = 0;
    double bf = 0.0;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t iv = 0;
        double f = get_f(t, p, i, &iv);
        if (!is_int && isnan(f))
            return (int64_t)i;
        if (i == 0 || (is_int ? (is_min ? iv < best : iv > best) : (is_min ? f < bf : f > bf))) {
            best = iv;
            bf = f;
            bi = (int64_t)i;
        }
    }
    return bi;
}

/*
 * Every kind of array, side and first position p0 (0, n - 1, the last shard's start and the element before it,
 * lane 3 of a vector in the middle) at awkward counts: one batch of four argext jobs (argmin and argmax of a
 * copy at a 16-byte-aligned start and of a copy one element later) per array, each result equal to the cpu backend's (value bits,
 * index), to the job's own call and, for the index, to ref_arg.
 */
static void check_arg_patterns(gr_ctx_t gpu, int small)
{
    static const gr_dtype_t types[] = {GR_F32, GR_F64, GR_F16, GR_BF16, GR_I32, GR_I64};
    static const uint64_t counts_full[] = {1, 2, 3, 5, 17, 1023, 4097, 65543, 1000003};
    static const uint64_t counts_small[] = {1, 5, 4097}; /* --small (compute-sanitizer): fewer launches */
    const uint64_t *counts = small ? counts_small : counts_full;
    const int ncounts = small ? 3 : 9;
    const uint64_t nmax = counts[ncounts - 1];
    void *h = malloc((size_t)nmax * 8);
    void *d = NULL;
    ASSERT(h);
    /* two copies of a shard: at d (16-byte aligned) and one element past d2 (its own region: the copies
     * must not overlap) */
    const size_t region = ((size_t)(nmax + 1) * 8 + 255) / 256 * 256;
    CU(cudaMalloc(&d, 2 * region));
    char *const d2 = (char *)d + region;
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ++ti) {
        const gr_dtype_t t = types[ti];
        const size_t esz = gr_dtype_size(t);
        for (int c = 0; c < ncounts; ++c) {
            const uint64_t n = counts[c];
            uint64_t b, e, blast, elast;
            gr_shard_range(n, np, rank, &b, &e);
            gr_shard_range(n, np, np - 1, &blast, &elast);
            const uint64_t m = e - b;
            const uint64_t where[5] = {0, n - 1, blast ? blast - 1 : 0, blast, (n / 2) | 3};
            for (int kind = 0; kind < A_KINDS; ++kind)
                for (int side = 1; side <= 2; ++side)
                    for (int w = 0; w < 5; ++w) {
                        if ((kind == A_EQUAL || kind == A_LIMIT || kind == A_ZEROS) && w > 0)
                            continue; /* p0 unused */
                        if (small && w != 0 && w != 3)
                            continue;
                        if (n > 65543 && (ti > 1 || (w != 2 && w != 3)))
                            continue; /* the large count: f32 / f64, around the last shard boundary */
                        const uint64_t p0 = where[w] < n ? where[w] : n - 1;
                        const uint64_t seed = 77 + 1000 * ti + 100 * (uint64_t)c + 10 * (uint64_t)kind + (uint64_t)w;
                        fill_arg(t, h, n, kind, side, p0, seed);
                        /* this rank's shard at d (16-byte aligned) and at d + 1 element */
                        gr_batch_item_t it[4], hit[4];
                        for (int j = 0; j < 4; ++j) {
                            gr_batch_item_init(&it[j]);
                            it[j].desc.dtype = t;
                            it[j].desc.op.kind = j % 2 ? GR_OP_ARGMAX : GR_OP_ARGMIN;
                            it[j].desc.all_ranks = 1;
                            it[j].count = m;
                            it[j].index_base = (int64_t)b;
                            it[j].x = j / 2 ? d2 + esz : (char *)d;
                            hit[j] = it[j];
                            hit[j].x = (char *)h + b * esz;
                        }
                        CU(cudaMemcpy(d, (char *)h + b * esz, (size_t)m * esz, cudaMemcpyHostToDevice));
                        CU(cudaMemcpy(d2 + esz, (char *)h + b * esz, (size_t)m * esz, cudaMemcpyHostToDevice));
                        gr_value_t dv[4], hv[4], sv[4];
                        ASSERT_EQ_I(gr_reduce_batch_device(gpu, it, 4, dv, NULL), GR_SUCCESS);
                        ASSERT_EQ_I(gr_reduce_batch_host(gpu, hit, 4, hv, NULL), GR_SUCCESS);
                        for (int j = 0; j < 4; ++j)
                            ASSERT_EQ_I(gr_reduce_batch_device(gpu, &it[j], 1, &sv[j], NULL), GR_SUCCESS);
                        for (int j = 0; j < 4; ++j) {
                            ++checks;
                            const int64_t want = ref_arg(t, h, n, j % 2 == 0);
                            if (!same(&dv[j], &hv[j]) || !same(&sv[j], &hv[j]) || dv[j].index != want)
                                GR_TEST_FAIL_("%s %s kind %d side %d p0=%llu n=%llu offset %d np=%d: batch (%a, i %lld, "
                                              "index %lld), own call (%a, index %lld), cpu (%a, i %lld, index %lld), "
                                              "expected index %lld",
                                              gr_dtype_name(t), gr_op_name(it[j].desc.op.kind), kind, side,
                                              (unsigned long long)p0, (unsigned long long)n, j / 2, np, dv[j].f,
                                              (long long)dv[j].i, (long long)dv[j].index, sv[j].f,
                                              (long long)sv[j].index, hv[j].f, (long long)hv[j].i,
                                              (long long)hv[j].index, (long long)want);
                        }
                    }
        }
    }
    CU(cudaFree(d));
    free(h);
}

/*
 * Adversarial exact dots (kernels/dot.cu: every branch of the batch and the slow path). Element i of
 * pattern pat of n as a pair (x, y) exact in dtype t; pair k = i / 2 shares its magnitudes where the
 * pattern cancels (x of odd i negated), so the exact sum keeps only what does not cancel.
 *   0 edges: by pair class: ordinary products; p < 2^-968 (f64) / subnormal factors; p >= 2^960 and
 *     p > 2^1020 (f64: Inf in f64, both cancelling pairwise); a zero factor; a subnormal factor with p
 *     in the window; products that underflow to +-0; ordinary again.
 *   1 cancel: pairs that cancel exactly (products up to 2^600 in f64), every 61st pair a small
 *     remainder (f64: below 2^-968 or inside the window) and a +0 partner; an odd n's last is +0.
 *   2 negzero: every product -0.0 (result -0.0). 3 mixzero: the same with one +0.0 at n / 2 (+0.0).
 *   4 zeros: zero factors of both signs among ordinary products (f64: the batch's zero check).
 *   5 specials: ordinary products and, by seed, a NaN, +Inf, -Inf, Inf * 0, or +Inf and -Inf.
 *   6 underflow: f64 every product below 2^-1074 (p = +-0, exact sum nonzero); others subnormal pairs.
 */
enum { ADV_PATTERNS = 7 };
static void adv_pair(gr_dtype_t t, int pat, uint64_t i, uint64_t n, uint64_t seed, double *xv, double *yv)
{
    const int f64 = t == GR_F64;
    const int emax = t == GR_F64 ? 1023 : t == GR_F16 ? 15 : 127;      /* largest exponent */
    const int esub = t == GR_F64 ? -1074 : t == GR_F16 ? -24 : t == GR_F32 ? -149 : -133; /* smallest subnormal */
    uint64_t sp = seed * 1000003u + (i >> 1), si = seed * 7919u + i;
    const uint64_t hp = rnd(&sp), h2 = rnd(&sp), hi = rnd(&si);
    const double m1 = 1.0 + (double)(hp >> 12) * 0x1p-52, m2 = 1.0 + (double)(h2 >> 12) * 0x1p-52;
    const double sgn = (i & 1) ? -1.0 : 1.0, rs = (hi & 1) ? -1.0 : 1.0;
    const double sub = ldexp((double)(1 + (hp >> 40) % 255), esub); /* a subnormal of t (f16 / bf16: widened) */
    /* ordinary exponents: -spread .. spread (f16: -7 .. 1, so that 65539 products stay below 65504) */
    const int spread = t == GR_F16 ? 4 : 20, shift = t == GR_F16 ? -3 : 0;
    const int eo = (int)(hp % (uint64_t)(2 * spread + 1)) - spread + shift;
    const int eo2 = (int)(h2 % (uint64_t)(2 * spread + 1)) - spread + shift;
    double x = rs * m1 * ldexp(1.0, eo), y = m2 * ldexp(1.0, eo2);
    switch (pat) {
    case 0:
        switch (hp % 8) {
        case 1: x = f64 ? rs * ldexp(m1, -490) : rs * sub; y = f64 ? ldexp(m2, -490) : m2; break;
        case 2: x = sgn * ldexp(m1, f64 ? 480 : emax - 1); y = ldexp(m2, f64 ? 481 : emax - 2); break;
        case 3: x = sgn * ldexp(m1, f64 ? 520 : emax - 1); y = ldexp(m2, f64 ? 510 : emax - 1); break;
        case 4: x = (hi & 2) ? -0.0 : 0.0; break;
        case 5: x = rs * sub; y = ldexp(m2, f64 ? 900 : emax - 2); break;
        case 6: x = f64 ? rs * ldexp(m1, -600) : rs * sub; y = f64 ? ldexp(m2, -600) : sub; break;
        default: break;
        }
        if ((n & 1) && i == n - 1 && (hp % 8 == 2 || hp % 8 == 3))
            x = 0.0; /* a huge product without its partner: +0 */
        break;
    case 1:
        if ((n & 1) && i == n - 1) { /* no partner: +0 */
            x = 0.0;
        } else if (hp % 61 == 7) { /* a remainder and its +0 partner */
            x = (i & 1) ? 0.0 : rs * (f64 ? ldexp(m1, (hp & 64) ? -1000 : -500) : sub);
            y = f64 ? ldexp(m2, (hp & 64) ? -40 : -300) : m2;
        } else {
            x = sgn * ldexp(m1, f64 ? (int)(hp % 601) - 300 : eo);
            y = ldexp(m2, f64 ? (int)(h2 % 601) - 300 : eo2);
        }
        break;
    case 2:
    case 3:
        if (pat == 3 && i == n / 2) {
            x = 0.0;
        } else if (hi & 2) {
            x = -0.0;
        } else {
            x = 0.0;
            y = -y;
        }
        break;
    case 4:
        if (hi % 3 == 0)
            x = (hi & 4) ? -0.0 : 0.0;
        if (hi % 3 == 1)
            y = -y;
        break;
    case 5:
        if (n > 0 && i == seed % n) {
            switch ((seed / 7) % 5) {
            case 0: x = NAN; break;
            case 1: x = INFINITY; break;
            case 2: x = -INFINITY; break;
            case 3: x = INFINITY; y = 0.0; break;
            default: x = INFINITY; break;
            }
        } else if ((seed / 7) % 5 == 4 && n > 1 && i == (seed % n + n / 2) % n) {
            x = -INFINITY; /* with the +Inf above: NaN */
        }
        break;
    default:
        x = f64 ? rs * ldexp(m1, -600) : rs * sub;
        y = f64 ? ldexp(m2, -600) : sub;
        break;
    }
    *xv = x;
    *yv = y;
}

/*
 * Every pattern, with x and y at element offsets (0, 0), (1, 1), (1, 2), (3, 0) (the same or different
 * alignments from 16 bytes), sharded over the ranks, as one batch (dot_exact_batch) and as single
 * calls (dot_exact), each bit for bit against the cpu backend.
 */
static void check_exact_adversarial(gr_ctx_t gpu, gr_dtype_t t, uint64_t n, uint64_t seed)
{
    enum { NOFF = 4, K = ADV_PATTERNS * NOFF };
    static const int xo[NOFF] = {0, 1, 1, 3}, yo[NOFF] = {0, 1, 2, 0};
    const size_t esz = gr_dtype_size(t);
    uint64_t b, e;
    gr_shard_range(n, np, rank, &b, &e);
    const uint64_t m = e - b;
    const size_t bytes = (size_t)(n + 4) * esz;
    gr_batch_item_t hit[K], dit[K];
    gr_value_t hv[K], dv[K], sv[K];
    void *hx[K], *hy[K], *dx[K], *dy[K];
    for (int j = 0; j < K; ++j) {
        const int pat = j / NOFF, o = j % NOFF;
        hx[j] = calloc(1, bytes);
        hy[j] = calloc(1, bytes);
        ASSERT(hx[j] && hy[j]);
        for (uint64_t i = 0; i < n; ++i) {
            double xv, yv;
            adv_pair(t, pat, i, n, seed + (uint64_t)j, &xv, &yv);
            put_val(t, hx[j], i + (uint64_t)xo[o], xv, 0);
            put_val(t, hy[j], i + (uint64_t)yo[o], yv, 0);
        }
        CU(cudaMalloc(&dx[j], bytes));
        CU(cudaMalloc(&dy[j], bytes));
        CU(cudaMemcpy(dx[j], hx[j], bytes, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(dy[j], hy[j], bytes, cudaMemcpyHostToDevice));
        gr_batch_item_init(&hit[j]);
        hit[j].desc.dtype = t;
        hit[j].desc.op.kind = GR_OP_DOT;
        hit[j].desc.mode = GR_MODE_EXACT;
        hit[j].count = m;
        dit[j] = hit[j];
        hit[j].x = (char *)hx[j] + (b + (uint64_t)xo[o]) * esz;
        hit[j].y = (char *)hy[j] + (b + (uint64_t)yo[o]) * esz;
        dit[j].x = (char *)dx[j] + (b + (uint64_t)xo[o]) * esz;
        dit[j].y = (char *)dy[j] + (b + (uint64_t)yo[o]) * esz;
    }
    ASSERT_EQ_I(gr_reduce_batch_host(gpu, hit, K, hv, NULL), GR_SUCCESS);
    ASSERT_EQ_I(gr_reduce_batch_device(gpu, dit, K, dv, NULL), GR_SUCCESS);
    for (int j = 0; j < K; ++j)
        ASSERT_EQ_I(gr_reduce_batch_device(gpu, &dit[j], 1, &sv[j], NULL), GR_SUCCESS);
    for (int j = 0; j < K && rank == 0; ++j) {
        ++checks;
        if (!same(&dv[j], &hv[j]) || !same(&sv[j], &hv[j]))
            GR_TEST_FAIL_("exact dot %s pattern %d offsets (%d, %d) n=%llu np=%d: GPU batch %a, single %a != cpu %a",
                          gr_dtype_name(t), j / NOFF, xo[j % NOFF], yo[j % NOFF], (unsigned long long)n, np,
                          dv[j].f, sv[j].f, hv[j].f);
    }
    for (int j = 0; j < K; ++j) {
        CU(cudaFree(dx[j]));
        CU(cudaFree(dy[j]));
        free(hx[j]);
        free(hy[j]);
    }
}

/*
 * Batches whose dot products share an array (the backend reads such a pair in one pass: CG's r.r with
 * r.Ar, x.y with x.z, x.y with z.x), and near misses it must not pair (another offset from 16 bytes):
 * every item must have the bits of its own call, blocking and non-blocking, fast and exact.
 */
static void check_pairs(gr_ctx_t gpu, const uint64_t *counts, int ncounts)
{
    static const gr_dtype_t types[] = {GR_F32, GR_F64, GR_F16, GR_BF16};
    enum { NT = 4, NPAT = 6, K = 3 };
    uint64_t nmax = 0;
    for (int c = 0; c < ncounts; ++c)
        nmax = counts[c] > nmax ? counts[c] : nmax;
    for (int ti = 0; ti < NT; ++ti) {
        const size_t es = gr_dtype_size(types[ti]), bytes = (size_t)(nmax + 16) * es;
        char *d[3];
        void *h = malloc(bytes);
        ASSERT(h);
        for (int a = 0; a < 3; ++a) {
            CU(cudaMalloc((void **)&d[a], bytes));
            fill(types[ti], h, nmax + 16, 5100 + (uint64_t)ti * 7 + (uint64_t)a * 3 + (uint64_t)rank, a == 2);
            CU(cudaMemcpy(d[a], h, bytes, cudaMemcpyHostToDevice));
        }
        free(h);
        for (int mode = 0; mode < 2; ++mode)
            for (int c = 0; c < ncounts; ++c)
                for (int pat = 0; pat < NPAT; ++pat) {
                    /* (x, y) of items 0..2 and what the backend pairs (greedy, in item order); the
                     * two-item batch {0, 2} below pairs wherever 0 and 2 share an array */
                    char *r = d[0] + es, *w = d[1] + es, *z = d[2] + es;
                    const void *xy[NPAT][K][2] = {
                        {{r, r}, {z, w}, {w, r}},           /* CG's r.r and w.r: 0 + 2 (x.x) */
                        {{r, w}, {w, z}, {r, z}},           /* 0 + 1 through w */
                        {{r, w}, {r, z}, {z, r}},           /* 0 + 1 through r; {0, 2}: y.x */
                        {{w, r}, {z, z}, {z, w}},           /* 0 + 2 through w */
                        {{r, w + es}, {w, z}, {r, z}},      /* 0 at another offset: not 0 + 2; 1 + 2 */
                        {{r - es, w - es}, {z, w}, {r, z}}, /* nothing shared with 0; 1 + 2 */
                    };
                    gr_batch_item_t it[K];
                    for (int j = 0; j < K; ++j) {
                        gr_batch_item_init(&it[j]);
                        it[j].desc.dtype = types[ti];
                        it[j].desc.op.kind = GR_OP_DOT;
                        it[j].desc.mode = (gr_mode_t)mode;
                        it[j].desc.all_ranks = 1;
                        it[j].x = xy[pat][j][0];
                        it[j].y = xy[pat][j][1];
                        it[j].count = counts[c];
                    }
                    gr_value_t sep[K], bat[K], nb[K], two[2];
                    run_batch_3ways(gpu, it, K, sep, bat, nb);
                    gr_batch_item_t pair[2] = {it[0], it[2]}; /* the pair alone: its own launch */
                    ASSERT_EQ_I(gr_reduce_batch_device(gpu, pair, 2, two, NULL), GR_SUCCESS);
                    for (int j = 0; j < K; ++j) {
                        ++checks;
                        const gr_value_t *alone = j == 0 ? &two[0] : j == 2 ? &two[1] : &sep[j];
                        if (!same(&bat[j], &sep[j]) || !same(&nb[j], &sep[j]) || !same(alone, &sep[j]))
                            GR_TEST_FAIL_("shared-array batch, pattern %d item %d: %s dot %s n=%llu: batch %a, "
                                          "non-blocking %a, two-item batch %a, own call %a",
                                          pat, j, gr_dtype_name(types[ti]), gr_mode_name((gr_mode_t)mode),
                                          (unsigned long long)counts[c], bat[j].f, nb[j].f, alone->f, sep[j].f);
                    }
                }
        for (int a = 0; a < 3; ++a)
            CU(cudaFree(d[a]));
    }
}

static gr_ctx_t make_gpu(int grid)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CUDA;
    cfg.bind = GR_BIND_NONE;
    cfg.share_gpus = 1;
    cfg.cuda_grid = grid;
    gr_ctx_t c = NULL;
    ASSERT_EQ_I(gr_ctx_create(MPI_COMM_WORLD, &cfg, &c), GR_SUCCESS);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        (void)cudaGetLastError();
        if (rank == 0)
            printf("SKIP: no CUDA GPU is visible; the vector-op GPU tests need one\n");
        fflush(stdout);
        MPI_Finalize();
        return GR_TEST_SKIP_CODE;
    }
    /* --small: sizes that compute-sanitizer gets through in seconds (jobs/h200-check.sh) */
    int small = argc > 1 && !strcmp(argv[1], "--small");
    static const uint64_t sizes_full[] = {0, 1, 7, 255, 256, 1000003, (1u << 20) + 17};
    static const uint64_t sizes_small[] = {0, 1, 7, 255, 256, 4099};
    const uint64_t *sizes = small ? sizes_small : sizes_full;
    size_t nsizes = small ? sizeof(sizes_small) / sizeof(sizes_small[0]) : sizeof(sizes_full) / sizeof(sizes_full[0]);
    static const gr_dtype_t types[] = {GR_F32, GR_F64, GR_F16, GR_BF16, GR_I32, GR_I64};
    for (int g = 0; g < 3; ++g) {
        gr_ctx_t gpu = make_gpu(g == 0 ? 0 : g == 1 ? 1 : 37); /* occupancy grid, one block, an odd grid */
        for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ++ti)
            for (size_t si = 0; si < nsizes; ++si)
                check_case(gpu, types[ti], sizes[si], 1000 * ti + si, (int)(si & 1));
        static const uint64_t adv_sizes[] = {1, 3, 5, 17, 1001, 4099, 65539};
        static const gr_dtype_t ftypes[] = {GR_F32, GR_F64, GR_F16, GR_BF16};
        for (size_t ti = 0; ti < 4; ++ti)
            for (size_t si = 0; si < (small ? 5u : 7u); ++si)
                check_exact_adversarial(gpu, ftypes[ti], adv_sizes[si], 100u * (uint64_t)g + 10u * ti + si);
        static const uint64_t bcounts_full[] = {0, 1, 7, 4099, 1000003};
        check_batch_vs_separate(gpu, bcounts_full, small ? 4 : 5);
        check_arg_patterns(gpu, small);
        check_pairs(gpu, bcounts_full, small ? 4 : 5);
        ASSERT_EQ_I(gr_ctx_destroy(gpu), GR_SUCCESS);
    }
    if (rank == 0)
        printf("test_vec_gpu np=%d: %ld checks passed\n", np, checks);
    MPI_Finalize();
    return 0;
}
