/*
 * cpu_dot.c - host kernels of the vector ops: dot, nrm2, argmin/argmax and
 * the exact f64 sum of squares, fast and exact (contract: docs/NUMERICS.md).
 *
 * The shard is cut into fixed chunks of VEC_CHUNK elements; every chunk's
 * result enters the order-free partial (exact accumulator, argext), so the
 * result does not depend on the number of threads.
 */
#define _GNU_SOURCE
#include "gr_vec.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VEC_CHUNK (1u << 16)
#define VEC_LANES 8
#define VEC_MAX_THREADS 256

/* Blue's scaling for the fast f64 nrm2 (the constants of LAPACK's dnrm2,
 * Anderson 2017): squares of |x| > TBIG are taken of x*SBIG, of |x| < TSML of
 * x*SSML, so no square overflows or underflows; the three sums enter the
 * exact accumulator with their scale undone (2^1076 and 2^-1074). */
#define TSML 0x1p-511
#define TBIG 0x1p486
#define SSML 0x1p537
#define SBIG 0x1p-538

/* Plain per-element loads (gr_load_f), no vectorised conversion tricks. */
static inline double load_f(const void *p, gr_dtype_t t, uint64_t i) { return gr_load_f(p, (int)t, i); }

static inline int64_t load_i(const void *p, gr_dtype_t t, uint64_t i)
{
    return t == GR_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static double lanes_sum(double *acc)
{
    for (int w = VEC_LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
            acc[l] += acc[l + w];
    return acc[0];
}

/* A finite exact product p of two finite factors (f32 and half: p = a*b in f64 is exact). */
static inline void add_exact_product(gr_vpartial_t *v, double a, double b, int is_f64)
{
    double p = a * b;
    if (!(p == 0 && signbit(p)))
        v->p.nonnegzero++;
    if (is_f64)
        gr_wacc_add_product(&v->w, a, b);
    else
        gr_wacc_add_double_shift(&v->w, p, 0);
    v->wadds += 2;
}

static void chunk_dot(const gr_batch_item_t *it, uint64_t first, uint64_t n, gr_vpartial_t *v)
{
    gr_dtype_t t = it->desc.dtype;
    const void *x = it->x, *y = it->y;
    if (!gr_c_is_float((int)t)) {
        for (uint64_t i = first; i < first + n; ++i) {
            __int128 p = (__int128)load_i(x, t, i) * (__int128)load_i(y, t, i);
            gr_wacc_add_i128(&v->w, (uint64_t)p, (int64_t)(p >> 64));
        }
        v->wadds += 2 * (int64_t)n;
        return;
    }
    int is_f64 = t == GR_F64;
    if (it->desc.mode == GR_MODE_EXACT) {
        for (uint64_t i = first; i < first + n; ++i) {
            double a = load_f(x, t, i), b = load_f(y, t, i);
            if (isfinite(a) && isfinite(b))
                add_exact_product(v, a, b, is_f64);
            else
                gr_vpartial_add_term(v, a * b, 0); /* NaN or Inf as IEEE: Inf * 0 is NaN */
        }
        return;
    }
    /* fast: f32 and half products are exact in f64; f64 products are rounded
     * (no FMA contraction: C11 mode), eight lanes, a fixed tree */
    double acc[VEC_LANES];
    for (int l = 0; l < VEC_LANES; ++l)
        acc[l] = -0.0;
    uint64_t i = 0;
    for (; i + VEC_LANES <= n; i += VEC_LANES)
        for (int l = 0; l < VEC_LANES; ++l)
            acc[l] += load_f(x, t, first + i + (uint64_t)l) * load_f(y, t, first + i + (uint64_t)l);
    for (int l = 0; i < n; ++i, ++l)
        acc[l] += load_f(x, t, first + i) * load_f(y, t, first + i);
    gr_vpartial_add_term(v, lanes_sum(acc), 0);
}

/* Sum of squares: nrm2 (both modes) and the exact f64 sumsq. */
static void chunk_sumsq(const gr_batch_item_t *it, uint64_t first, uint64_t n, gr_vpartial_t *v)
{
    gr_dtype_t t = it->desc.dtype;
    const void *x = it->x;
    if (!gr_c_is_float((int)t)) {
        for (uint64_t i = first; i < first + n; ++i) {
            int64_t a = load_i(x, t, i);
            __int128 p = (__int128)a * (__int128)a;
            gr_wacc_add_i128(&v->w, (uint64_t)p, (int64_t)(p >> 64));
        }
        v->wadds += 2 * (int64_t)n;
        return;
    }
    if (it->desc.mode == GR_MODE_EXACT) {
        int is_f64 = t == GR_F64;
        for (uint64_t i = first; i < first + n; ++i) {
            double a = load_f(x, t, i);
            if (isfinite(a))
                add_exact_product(v, a, a, is_f64);
            else
                gr_vpartial_add_term(v, a * a, 0);
        }
        return;
    }
    if (t != GR_F64) {
        /* squares of f32 and half values are exact in f64 and cannot overflow it */
        double acc[VEC_LANES];
        for (int l = 0; l < VEC_LANES; ++l)
            acc[l] = 0.0;
        uint64_t i = 0;
        for (; i + VEC_LANES <= n; i += VEC_LANES)
            for (int l = 0; l < VEC_LANES; ++l) {
                double a = load_f(x, t, first + i + (uint64_t)l);
                acc[l] += a * a;
            }
        for (int l = 0; i < n; ++i, ++l) {
            double a = load_f(x, t, first + i);
            acc[l] += a * a;
        }
        gr_vpartial_add_term(v, lanes_sum(acc), 0);
        return;
    }
    const double *xd = (const double *)x + first;
    double asml = 0, amed = 0, abig = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double a = fabs(xd[i]);
        if (a > TBIG) {
            a *= SBIG;
            abig += a * a;
        } else if (a < TSML) {
            a *= SSML;
            asml += a * a;
        } else {
            amed += a * a; /* NaN lands here and stays NaN */
        }
    }
    gr_vpartial_add_term(v, abig, 1076);
    gr_vpartial_add_term(v, amed, 0);
    gr_vpartial_add_term(v, asml, -1074);
}

static void chunk_argext(const gr_batch_item_t *it, uint64_t first, uint64_t n, gr_vpartial_t *v)
{
    gr_dtype_t t = it->desc.dtype;
    int64_t base = it->index_base;
    if (gr_c_is_float((int)t)) {
        for (uint64_t i = first; i < first + n; ++i)
            gr_argext_add_f(&v->a, load_f(it->x, t, i), base + (int64_t)i);
    } else {
        for (uint64_t i = first; i < first + n; ++i)
            gr_argext_add_i(&v->a, load_i(it->x, t, i), base + (int64_t)i);
    }
}

typedef struct vec_job {
    const gr_batch_item_t *it;
    uint64_t nchunks;
    int threads;
    gr_vpartial_t *parts;
} vec_job_t;

typedef struct vec_arg {
    vec_job_t *job;
    int tid;
} vec_arg_t;

static void *vec_worker(void *arg)
{
    vec_arg_t *a = (vec_arg_t *)arg;
    vec_job_t *job = a->job;
    const gr_batch_item_t *it = job->it;
    gr_vpartial_t *v = &job->parts[a->tid];
    gr_op_kind_t op = it->desc.op.kind;
    for (uint64_t c = (uint64_t)a->tid; c < job->nchunks; c += (uint64_t)job->threads) {
        uint64_t first = c * VEC_CHUNK;
        uint64_t n = it->count - first < VEC_CHUNK ? it->count - first : VEC_CHUNK;
        if (op == GR_OP_DOT)
            chunk_dot(it, first, n, v);
        else if (op == GR_OP_ARGMIN || op == GR_OP_ARGMAX)
            chunk_argext(it, first, n, v);
        else
            chunk_sumsq(it, first, n, v);
        v->p.count += (int64_t)n;
        gr_vpartial_maybe_normalize(v); /* < 2^17 additions per chunk: headroom holds */
    }
    return NULL;
}

static int threads_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

gr_result_t gr_cpu_vec_reduce(int threads, const gr_batch_item_t *it, gr_vpartial_t *out)
{
    if (threads < 1)
        threads = threads_available();
    if (threads > VEC_MAX_THREADS)
        threads = VEC_MAX_THREADS;
    vec_job_t job;
    job.it = it;
    job.nchunks = (it->count + VEC_CHUNK - 1) / VEC_CHUNK;
    if ((uint64_t)threads > job.nchunks)
        threads = job.nchunks > 0 ? (int)job.nchunks : 1;
    job.threads = threads;
    job.parts = (gr_vpartial_t *)malloc(sizeof(gr_vpartial_t) * (size_t)threads);
    if (!job.parts)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d thread partials for %s", threads, gr_op_name(it->desc.op.kind));
    pthread_t tids[VEC_MAX_THREADS];
    vec_arg_t args[VEC_MAX_THREADS];
    int started[VEC_MAX_THREADS];
    for (int t = 0; t < threads; ++t) {
        gr_vpartial_init(&job.parts[t]);
        args[t].job = &job;
        args[t].tid = t;
    }
    for (int t = 0; t < threads; ++t)
        started[t] = t > 0 && pthread_create(&tids[t], NULL, vec_worker, &args[t]) == 0;
    /* this thread does share 0 and the share of any thread that did not start */
    for (int t = 0; t < threads; ++t)
        if (!started[t])
            vec_worker(&args[t]);
    for (int t = 1; t < threads; ++t)
        if (started[t])
            pthread_join(tids[t], NULL);
    for (int t = 0; t < threads; ++t)
        gr_vpartial_merge(out, &job.parts[t]);
    free(job.parts);
    return GR_SUCCESS;
}
