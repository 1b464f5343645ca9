/*
 * backend_cpu.c - multithreaded reference backend with the same numeric
 * contract as cuda. The shard is cut into fixed chunks of GR_CPU_CHUNK
 * elements; each chunk is reduced by the loops of cpu_kernels.c and its
 * result folded into a thread's exact partial, so the result does not depend
 * on the number of threads or on which thread took which chunk (threads
 * claim chunks from a shared counter). The threads are a persistent pool
 * (cpu_pool.h says why not OpenMP); a call of one chunk or less runs on the
 * calling thread straight into the output partial.
 */
#define _GNU_SOURCE
#include "cpu_kernels.h"
#include "cpu_pool.h"
#include "gr_env.h"
#include "gr_internal.h"
#include "gr_stats.h"
#include "gr_stream.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each thread's partial on its own cache lines. */
#define GR_CPU_PART_STRIDE ((sizeof(gr_partial_t) + 63) & ~(size_t)63)

typedef struct cpu_state {
    int threads;
    const gr_cpu_kernels_t *k; /* the loops of one instruction-set level, chosen at init */
    gr_cpu_pool_t *pool;
    unsigned char *parts;  /* threads x GR_CPU_PART_STRIDE */
    pthread_mutex_t parts_mu; /* parts belong to one multithreaded call at a time */
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
    /* workers inherit this thread's affinity: the cores binding gave the rank */
    s->pool = gr_cpu_pool_create(s->threads);
    s->parts = (unsigned char *)aligned_alloc(64, GR_CPU_PART_STRIDE * (size_t)s->threads);
    if (!s->pool || !s->parts) {
        int want = s->threads;
        gr_cpu_pool_destroy(s->pool);
        free(s->parts);
        free(s);
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the cpu backend's thread pool for %d threads", want);
    }
    s->threads = gr_cpu_pool_size(s->pool);
    s->k = gr_cpu_kernels_select(gr_env(GR_ENV_CPU_ISA));
    pthread_mutex_init(&s->parts_mu, NULL);
    GR_INFO(GR_SUB_CPU, "cpu backend: %d thread(s), %s loops", s->threads, gr_cpu_isa_name(s->k->isa));
    *state = s;
    return GR_SUCCESS;
}

static void cpu_fini(gr_ctx_t ctx, void *state)
{
    (void)ctx;
    cpu_state_t *s = (cpu_state_t *)state;
    if (!s)
        return;
    gr_cpu_pool_destroy(s->pool);
    pthread_mutex_destroy(&s->parts_mu);
    free(s->parts);
    free(s);
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

/* ---- jobs: chunks split over the pool's threads ----------------------- */

typedef struct job job_t;
typedef void (*chunk_fn)(const job_t *job, gr_partial_t *p, uint64_t first, uint64_t n);

struct job {
    chunk_fn fn;
    const gr_cpu_kernels_t *k; /* reduce: the loops */
    uint64_t count, nchunks;
    atomic_uint_fast64_t next_chunk; /* the next chunk nobody has claimed */
    const gr_desc_t *d;
    const void *in;
    void *out;
    gr_dtype_t dtype;
    gr_gen_t gen;
    gr_gen_keys_t keys;
    uint64_t begin;
    unsigned char *parts; /* thread t's partial at t * GR_CPU_PART_STRIDE; NULL: no partials */
};

static gr_partial_t *job_part(const job_t *job, int tid)
{
    return job->parts ? (gr_partial_t *)(void *)(job->parts + (size_t)tid * GR_CPU_PART_STRIDE) : NULL;
}

/*
 * Thread tid: claims chunks one at a time until none is left. Which thread
 * reduces which chunk does not change the result (each chunk's value enters
 * the exact partial, and partials merge exactly), so the threads may share
 * the work dynamically: a thread the OS delays (a loaded node, a noisy
 * neighbour) holds up no one, where a fixed split would wait for it.
 */
static void job_thread(void *arg, int tid, int nt)
{
    (void)nt;
    job_t *job = (job_t *)arg;
    gr_partial_t *p = job_part(job, tid);
    for (;;) {
        uint64_t c = atomic_fetch_add_explicit(&job->next_chunk, 1, memory_order_relaxed);
        if (c >= job->nchunks)
            break;
        uint64_t first = c * GR_CPU_CHUNK;
        uint64_t n = job->count - first < GR_CPU_CHUNK ? job->count - first : GR_CPU_CHUNK;
        job->fn(job, p, first, n);
    }
}

/* Threads a job of count elements uses: no more than it has chunks. */
static int job_threads(job_t *job, int threads)
{
    job->nchunks = (job->count + GR_CPU_CHUNK - 1) / GR_CPU_CHUNK;
    atomic_init(&job->next_chunk, 0);
    if ((uint64_t)threads > job->nchunks)
        threads = job->nchunks > 0 ? (int)job->nchunks : 1;
    return threads;
}

/* Run a job that fills partials and merge them into out (initialised here).
 * One thread: straight into out, no pool, no lock. */
static void run_reduce_job(gr_cpu_pool_t *pool, unsigned char *parts, pthread_mutex_t *mu, job_t *job,
                           int threads, gr_partial_t *out)
{
    int nt = job_threads(job, threads);
    gr_partial_init(out);
    if (nt <= 1 || gr_cpu_pool_size(pool) <= 1) {
        job->parts = (unsigned char *)out;
        job_thread(job, 0, 1);
        return;
    }
    if (nt > gr_cpu_pool_size(pool))
        nt = gr_cpu_pool_size(pool);
    if (mu)
        pthread_mutex_lock(mu);
    job->parts = parts;
    for (int t = 0; t < nt; ++t)
        gr_partial_init(job_part(job, t));
    gr_cpu_pool_run(pool, nt, job_thread, job);
    for (int t = 0; t < nt; ++t)
        gr_partial_merge(out, job_part(job, t));
    if (mu)
        pthread_mutex_unlock(mu);
}

/* ---- generation -------------------------------------------------------- */

static void gen_chunk(const job_t *job, gr_partial_t *p, uint64_t first, uint64_t n)
{
    (void)p;
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
    gr_cpu_pool_run(s->pool, job_threads(&job, s->threads), job_thread, &job);
    return GR_SUCCESS;
}

/* ---- reduction --------------------------------------------------------- */

static void reduce_chunk(const job_t *job, gr_partial_t *p, uint64_t first, uint64_t n)
{
    const gr_desc_t *d = job->d;
    const int dt = (int)d->dtype, op = (int)d->op.kind, pw = d->op.power;
    const void *in = (const char *)job->in + first * gr_dtype_size(d->dtype);
    gr_local_t loc;
    memset(&loc, 0, sizeof(loc));
    loc.count = n;
    if (!gr_c_is_float(dt)) {
        job->k->int_local(in, dt, op, pw, n, &loc);
    } else if (op == GR_C_MIN || op == GR_C_MAX) {
        loc.f = job->k->minmax_f(in, dt, op, n);
    } else if (d->mode == GR_MODE_EXACT) {
        (void)job->k->exact_f(p, in, dt, op, pw, n);
        p->count += (int64_t)n;
        return;
    } else {
        loc.f = job->k->fast_sum_f(in, dt, op, pw, n);
    }
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
    job.k = s->k;
    job.count = count;
    job.in = ptr;
    job.d = d;
    run_reduce_job(s->pool, s->parts, &s->parts_mu, &job, s->threads, out);
    return GR_SUCCESS;
}

static gr_result_t cpu_stats(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                             gr_dtype_t t, gr_stats_part_t *out)
{
    (void)ctx, (void)state, (void)on_device; /* host memory only: gr_stats_* refuse device memory here */
    gr_stats_part_add(out, ptr, count, t);
    return GR_SUCCESS;
}

const gr_backend_ops_t gr_backend_cpu_ops = {
    "cpu", 1, cpu_init, cpu_fini, cpu_alloc, cpu_free, cpu_generate, cpu_reduce,
    NULL, NULL, NULL, /* no non-blocking device form, no device delivery: host work is eager */
    cpu_stats, NULL, NULL, /* vector items: host memory only, the host kernels (vecop.c) */
    &gr_stream_generic_ops,
    NULL, NULL, /* no ordered device results */
};

/* ---- reference: regenerate on the fly and sum exactly ------------------ */

static void reference_chunk(const job_t *job, gr_partial_t *p, uint64_t first, uint64_t n)
{
    const gr_desc_t *d = job->d;
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
    /* a pool of its own: the reference is a test and check path, not timed */
    gr_cpu_pool_t *pool = gr_cpu_pool_create(job_threads(&job, threads));
    unsigned char *parts = (unsigned char *)aligned_alloc(64, GR_CPU_PART_STRIDE * (size_t)threads);
    if (!pool || !parts) {
        gr_cpu_pool_destroy(pool);
        free(parts);
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the reference's %d thread partials", threads);
    }
    run_reduce_job(pool, parts, NULL, &job, threads, out);
    gr_cpu_pool_destroy(pool);
    free(parts);
    return GR_SUCCESS;
}
