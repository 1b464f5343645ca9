/*
 * backend_cpu.c - multithreaded reference backend with the same numeric
 * contract as cuda. The shard is cut into fixed chunks of GR_CPU_CHUNK
 * elements; each chunk is reduced in a fixed order with GR_CPU_LANES
 * independent accumulators, and chunk results are folded into the exact
 * partial, so the result does not depend on the number of threads.
 */
#define _GNU_SOURCE
#include "gr_internal.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GR_CPU_CHUNK (1u << 16)
#define GR_CPU_LANES 8

typedef struct cpu_state {
    int threads;
} cpu_state_t;

static int threads_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static gr_result_t cpu_init(gr_ctx_t ctx, void **state)
{
    cpu_state_t *s = (cpu_state_t *)calloc(1, sizeof(*s));
    if (!s)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the cpu backend state");
    /* Counted after binding, so a rank bound to its GPU's cores uses those. */
    s->threads = ctx->cfg.cpu_threads > 0 ? ctx->cfg.cpu_threads : threads_available();
    if (s->threads > 256)
        s->threads = 256;
    GR_INFO(GR_SUB_CPU, "cpu backend: %d thread(s)", s->threads);
    *state = s;
    return GR_SUCCESS;
}

static void cpu_fini(gr_ctx_t ctx, void *state)
{
    (void)ctx;
    free(state);
}

static gr_result_t cpu_alloc(gr_ctx_t ctx, void *state, uint64_t count, gr_dtype_t t, void **ptr)
{
    (void)ctx;
    (void)state;
    const size_t esz = gr_dtype_size(t);
    *ptr = NULL;
    if (count > (uint64_t)((SIZE_MAX - 63) / esz)) /* the rounding up below must not wrap either */
        GR_FAIL(GR_ERR_INVALID_ARG, "%llu %s elements do not fit in this process's address space; use more ranks",
                (unsigned long long)count, gr_dtype_name(t));
    size_t bytes = (size_t)(count ? count : 1) * esz;
    bytes = (bytes + 63) & ~(size_t)63;
    *ptr = aligned_alloc(64, bytes);
    if (!*ptr)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %zu bytes of host memory for the shard; use fewer elements per rank "
                              "or more ranks",
                bytes);
    return GR_SUCCESS;
}

static void cpu_free(gr_ctx_t ctx, void *state, void *ptr)
{
    (void)ctx;
    (void)state;
    free(ptr);
}

/* ---- a simple fork/join over chunks ------------------------------------ */

typedef struct job job_t;
typedef void (*chunk_fn)(job_t *job, int tid, uint64_t first, uint64_t n);

struct job {
    chunk_fn fn;
    uint64_t count, nchunks;
    int threads;
    const gr_desc_t *d;
    const void *in;
    void *out;
    gr_dtype_t dtype;
    gr_gen_t gen;
    gr_gen_keys_t keys;
    uint64_t begin;
    gr_partial_t *parts; /* one per thread */
};

typedef struct worker_arg {
    job_t *job;
    int tid;
} worker_arg_t;

static void *worker(void *arg)
{
    worker_arg_t *w = (worker_arg_t *)arg;
    job_t *job = w->job;
    /* static cyclic assignment; results are order-free, so any is fine */
    for (uint64_t c = (uint64_t)w->tid; c < job->nchunks; c += (uint64_t)job->threads) {
        uint64_t first = c * GR_CPU_CHUNK;
        uint64_t n = job->count - first < GR_CPU_CHUNK ? job->count - first : GR_CPU_CHUNK;
        job->fn(job, w->tid, first, n);
    }
    return NULL;
}

static gr_result_t run_job(job_t *job, int threads)
{
    job->nchunks = (job->count + GR_CPU_CHUNK - 1) / GR_CPU_CHUNK;
    if ((uint64_t)threads > job->nchunks)
        threads = job->nchunks > 0 ? (int)job->nchunks : 1;
    job->threads = threads;
    pthread_t tids[256];
    worker_arg_t args[256];
    int started[256];
    for (int t = 0; t < threads; ++t) {
        args[t].job = job;
        args[t].tid = t;
        started[t] = t > 0 && pthread_create(&tids[t], NULL, worker, &args[t]) == 0;
    }
    /* this thread does share 0 and the share of any thread that did not start */
    for (int t = 0; t < threads; ++t)
        if (!started[t])
            worker(&args[t]);
    for (int t = 1; t < threads; ++t)
        if (started[t])
            pthread_join(tids[t], NULL);
    return GR_SUCCESS;
}

/* ---- generation -------------------------------------------------------- */

static void gen_chunk(job_t *job, int tid, uint64_t first, uint64_t n)
{
    (void)tid;
    uint64_t g0 = job->begin + first;
    switch (job->dtype) {
    case GR_F32: {
        float *o = (float *)job->out + first;
        for (uint64_t i = 0; i < n; ++i)
            o[i] = (float)gr_gen_float(job->gen, GR_C_F32, job->keys, g0 + i);
        break;
    }
    case GR_F64: {
        double *o = (double *)job->out + first;
        for (uint64_t i = 0; i < n; ++i)
            o[i] = gr_gen_float(job->gen, GR_C_F64, job->keys, g0 + i);
        break;
    }
    case GR_I32: {
        int32_t *o = (int32_t *)job->out + first;
        for (uint64_t i = 0; i < n; ++i)
            o[i] = (int32_t)gr_gen_int(job->gen, GR_C_I32, job->keys, g0 + i);
        break;
    }
    case GR_I64: {
        int64_t *o = (int64_t *)job->out + first;
        for (uint64_t i = 0; i < n; ++i)
            o[i] = gr_gen_int(job->gen, GR_C_I64, job->keys, g0 + i);
        break;
    }
    case GR_F16:
    case GR_BF16: {
        uint16_t *o = (uint16_t *)job->out + first;
        for (uint64_t i = 0; i < n; ++i)
            o[i] = gr_gen_half_bits(job->gen, (int)job->dtype, job->keys, g0 + i);
        break;
    }
    }
}

static gr_result_t cpu_generate(gr_ctx_t ctx, void *state, void *ptr, gr_dtype_t t, gr_gen_t g, uint64_t seed,
                                uint64_t begin, uint64_t count)
{
    (void)ctx;
    cpu_state_t *s = (cpu_state_t *)state;
    job_t job;
    memset(&job, 0, sizeof(job));
    job.fn = gen_chunk;
    job.count = count;
    job.out = ptr;
    job.dtype = t;
    job.gen = g;
    job.keys = gr_gen_make_keys(seed);
    job.begin = begin;
    return run_job(&job, s->threads);
}

/* ---- reduction --------------------------------------------------------- */

static double load_f(const void *in, gr_dtype_t t, uint64_t i)
{
    switch (t) {
    case GR_F32:
        return (double)((const float *)in)[i];
    case GR_F16:
        return (double)gr_f16_bits_to_f32(((const uint16_t *)in)[i]);
    case GR_BF16:
        return (double)gr_bf16_bits_to_f32(((const uint16_t *)in)[i]);
    default:
        return ((const double *)in)[i];
    }
}

static int64_t load_i(const void *in, gr_dtype_t t, uint64_t i)
{
    return t == GR_I32 ? (int64_t)((const int32_t *)in)[i] : ((const int64_t *)in)[i];
}

static void reduce_chunk(job_t *job, int tid, uint64_t first, uint64_t n)
{
    const gr_desc_t *d = job->d;
    gr_partial_t *p = &job->parts[tid];
    gr_dtype_t t = d->dtype;
    int op = (int)d->op.kind, pw = d->op.power;
    gr_local_t loc;
    memset(&loc, 0, sizeof(loc));
    loc.count = n;
    if (gr_c_is_float((int)t)) {
        if (op == GR_C_MIN || op == GR_C_MAX) {
            double m = op == GR_C_MIN ? INFINITY : -INFINITY;
            int nan = 0;
            for (uint64_t i = 0; i < n; ++i) {
                double x = load_f(job->in, t, first + i);
                if (isnan(x))
                    nan = 1;
                else
                    m = op == GR_C_MIN ? gr_fmin_total(m, x) : gr_fmax_total(m, x);
            }
            loc.f = nan ? NAN : m;
            gr_partial_add_local(p, d, &loc);
        } else if (d->mode == GR_MODE_EXACT) {
            for (uint64_t i = 0; i < n; ++i)
                gr_partial_add_term(p, gr_term_f(op, pw, load_f(job->in, t, first + i)));
            p->count += (int64_t)n;
        } else {
            /* -0.0 is the additive identity: an all -0.0 chunk stays -0.0 */
            double acc[GR_CPU_LANES];
            for (int l = 0; l < GR_CPU_LANES; ++l)
                acc[l] = -0.0;
            uint64_t i = 0;
            for (; i + GR_CPU_LANES <= n; i += GR_CPU_LANES)
                for (int l = 0; l < GR_CPU_LANES; ++l)
                    acc[l] += gr_term_f(op, pw, load_f(job->in, t, first + i + (uint64_t)l));
            for (int l = 0; i < n; ++i, ++l)
                acc[l] += gr_term_f(op, pw, load_f(job->in, t, first + i));
            for (int w = GR_CPU_LANES / 2; w > 0; w /= 2)
                for (int l = 0; l < w; ++l)
                    acc[l] += acc[l + w];
            loc.f = acc[0];
            gr_partial_add_local(p, d, &loc);
        }
        return;
    }
    if (op == GR_C_MIN || op == GR_C_MAX) {
        int64_t m = op == GR_C_MIN ? INT64_MAX : INT64_MIN;
        for (uint64_t i = 0; i < n; ++i) {
            int64_t x = load_i(job->in, t, first + i);
            if (op == GR_C_MIN ? x < m : x > m)
                m = x;
        }
        loc.lo = (uint64_t)m;
        gr_partial_add_local(p, d, &loc);
        return;
    }
    int32_t ovf = 0;
    for (uint64_t i = 0; i < n; ++i)
        gr_acc128_add(&loc.lo, &loc.hi, gr_term_i(op, pw, load_i(job->in, t, first + i), &ovf));
    loc.overflow = ovf;
    gr_partial_add_local(p, d, &loc);
}

static gr_result_t cpu_reduce(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                              const gr_desc_t *d, gr_partial_t *out)
{
    (void)ctx;
    cpu_state_t *s = (cpu_state_t *)state;
    if (on_device)
        GR_FAIL(GR_ERR_INVALID_ARG, "the cpu backend cannot read device memory");
    job_t job;
    memset(&job, 0, sizeof(job));
    job.fn = reduce_chunk;
    job.count = count;
    job.in = ptr;
    job.d = d;
    job.parts = (gr_partial_t *)malloc(sizeof(gr_partial_t) * (size_t)s->threads);
    if (!job.parts)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d thread partials", s->threads);
    for (int t = 0; t < s->threads; ++t)
        gr_partial_init(&job.parts[t]);
    gr_result_t r = run_job(&job, s->threads);
    gr_partial_init(out);
    for (int t = 0; t < s->threads; ++t)
        gr_partial_merge(out, &job.parts[t]);
    free(job.parts);
    return r;
}

const gr_backend_ops_t gr_backend_cpu_ops = {
    "cpu", cpu_init, cpu_fini, cpu_alloc, cpu_free, cpu_generate, cpu_reduce,
    NULL, NULL, NULL, /* no non-blocking device form, no device delivery: host work is eager */
};

/* ---- reference: regenerate on the fly and sum exactly ------------------ */

static void reference_chunk(job_t *job, int tid, uint64_t first, uint64_t n)
{
    const gr_desc_t *d = job->d;
    gr_partial_t *p = &job->parts[tid];
    int op = (int)d->op.kind, pw = d->op.power;
    uint64_t g0 = job->begin + first;
    gr_local_t loc;
    memset(&loc, 0, sizeof(loc));
    if (gr_c_is_float((int)d->dtype)) {
        int dt = (int)d->dtype; /* GR_C_F32, F64, F16, BF16: the same numbers */
        if (op == GR_C_MIN || op == GR_C_MAX) {
            for (uint64_t i = 0; i < n; ++i) {
                loc.count = 1;
                loc.f = gr_gen_float(job->gen, dt, job->keys, g0 + i);
                gr_partial_add_local(p, d, &loc);
            }
            return;
        }
        for (uint64_t i = 0; i < n; ++i)
            gr_partial_add_term(p, gr_term_f(op, pw, gr_gen_float(job->gen, dt, job->keys, g0 + i)));
        p->count += (int64_t)n;
        return;
    }
    int dt = d->dtype == GR_I32 ? GR_C_I32 : GR_C_I64;
    if (op == GR_C_MIN || op == GR_C_MAX) {
        for (uint64_t i = 0; i < n; ++i) {
            loc.count = 1;
            loc.lo = (uint64_t)gr_gen_int(job->gen, dt, job->keys, g0 + i);
            gr_partial_add_local(p, d, &loc);
        }
        return;
    }
    int32_t ovf = 0;
    loc.count = n;
    for (uint64_t i = 0; i < n; ++i)
        gr_acc128_add(&loc.lo, &loc.hi, gr_term_i(op, pw, gr_gen_int(job->gen, dt, job->keys, g0 + i), &ovf));
    loc.overflow = ovf;
    gr_partial_add_local(p, d, &loc);
}

gr_result_t gr_cpu_reference(int threads, gr_gen_t g, uint64_t seed, uint64_t begin, uint64_t count,
                             const gr_desc_t *d, gr_partial_t *out)
{
    if (threads < 1)
        threads = threads_available();
    if (threads > 256)
        threads = 256;
    job_t job;
    memset(&job, 0, sizeof(job));
    job.fn = reference_chunk;
    job.count = count;
    job.d = d;
    job.gen = g;
    job.keys = gr_gen_make_keys(seed);
    job.begin = begin;
    job.parts = (gr_partial_t *)malloc(sizeof(gr_partial_t) * (size_t)threads);
    if (!job.parts)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d thread partials", threads);
    for (int t = 0; t < threads; ++t)
        gr_partial_init(&job.parts[t]);
    gr_result_t r = run_job(&job, threads);
    gr_partial_init(out);
    for (int t = 0; t < threads; ++t)
        gr_partial_merge(out, &job.parts[t]);
    free(job.parts);
    return r;
}
