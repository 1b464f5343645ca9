/*
 * bench_cuda.c - the cuda rows of `gpureduce bench` and their timing: copy
 * ceiling, CUB baselines, the product's kernel (tuned, tuned-e2e), the seed
 * ladder and the vector rows (dot, argmax, batch2 and CUB's forms of them),
 * all on the same rotation set of input buffers (the vector rows' y: the
 * copy targets of the same set).
 *
 * Timing (GPU-timed rows): a hold kernel keeps the stream waiting while the
 * host queues BENCH_BATCH runs, each between its own pair of events; then
 * the host releases it and the GPU runs the batch back to back. So a run's
 * time is the GPU's, not the host's launch rate, even for 2^20 elements.
 * Host-timed rows (the -e2e ones) are timed by the host clock around the
 * launch and the wait for the result, which is what they are about.
 */
#ifdef GR_WITH_CUDA

#include "gr_env.h"
#include "bench.h"
#include "bench_dist.h" /* bench_cuda_input */
#include "gr_bench_kernels.h"
#include "gr_cuda_check.h"
#include "gr_exact_kernels.h"
#include "gr_stats_kernels.h"
#include "gr_kernels.h"
#include "gr_vec.h"
#include "gr_vec_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A hold kernel gives up after this long: the host was not releasing it. */
#define BENCH_HOLD_TIMEOUT_NS 5000000000ull
/* Memory kept free beside the rotation set (CUB temp, partials, the driver). */
#define BENCH_SLACK_BYTES ((uint64_t)256 << 20)
#define BENCH_SEED 1u

struct bench_cuda {
    int device;
    bench_device_info_t info;
    cudaStream_t stream;
    cudaEvent_t done;
    cudaEvent_t *ev;
    int nev;
    int copy_resident;
    int ladder_resident[GR_BENCH_LADDER_RUNGS][GR_DTYPE_COUNT];
    int tuned_block;
    int tuned_resident[GR_DTYPE_COUNT];
    /* hold kernel: the flag the host writes, the timeout the device writes */
    int *hold_host, *hold_dev;
    int *late_host, *late_dev;
    int hold_gen;
    int use_hold; /* --timing launch or GR_BENCH_HOLD=0 turns it off (tools that serialize launches) */
    int hot;      /* --cache hot: no rotation */
    /* tuned: result slot in mapped host memory, and the last launch's sequence number */
    gr_local_t *res_host, *res_dev;
    unsigned int tuned_seq;
    unsigned int *ticket;
    unsigned long long *mismatch_dev;
    void *acc_host; /* pinned, one accumulator (cub-e2e) */

    /* the current group */
    bench_group_t g;
    int in_group;
    void *in[BENCH_MAX_BUFS];
    void *out[BENCH_MAX_BUFS];
    void *partials;
    uint64_t partials_cap; /* accumulators */
    void *partials_host;
    void *acc_dev; /* one accumulator: cub, cub-g2g, v8 */
    void *cub_temp;
    size_t cub_temp_bytes;
    void *g2g_temp;
    size_t g2g_temp_bytes;
    int have_g2g;
    void *tuned_scratch;
    int tuned_grid;
    int have_tuned;
    /* exact rows: scratch (zeroed once) and a mapped result, at first use */
    void *x_scratch;
    gr_exact_result_t *x_res_host, *x_res_dev;
    /* stats row: scratch (zeroed once) and a mapped result, at first use */
    void *s_scratch;
    gr_stats_result_t *s_res_host, *s_res_dev;
    /* the vector rows (dot, dot-exact, argmax, batch2 and their CUB rows), at first use in a group:
     * two jobs' block records, fold scratches (zeroed once) and out records, CUB's temp storage, a second
     * 8-byte output (argmax index, batch2), and when the group has one buffer a second x and y (batch2) */
    void *v_rec;
    gr_vec_fold_t *v_fold;
    gr_vec_out_t *v_out, *v_out_host;
    void *v_x2, *v_y2;
    void *v_cub_temp;
    size_t v_cub_temp_bytes;
    int64_t *v_out2;
    gr_vec_jobs_t v_jobs; /* batch2's launch parameter */
};

static int is_float(gr_dtype_t t) { return gr_c_is_float((int)t); } /* f16/bf16 sum in f64 too */

int bench_cuda_have_g2g(void) { return gr_bench_cub_g2g_available(); }

gr_result_t bench_cuda_open(int device, bench_cuda_t **out, bench_device_info_t *info)
{
    *out = NULL;
    bench_cuda_t *c = calloc(1, sizeof(*c));
    if (!c)
        GR_FAIL(GR_ERR_NOMEM, "out of host memory for the bench state");
    c->device = device;
    bench_device_info_t *d = &c->info;
    gr_result_t r = GR_SUCCESS;
    GR_CUDA_CHECK_GOTO(cudaSetDevice(device), r, fail);
    struct cudaDeviceProp prop;
    GR_CUDA_CHECK_GOTO(cudaGetDeviceProperties(&prop, device), r, fail);
    snprintf(d->name, sizeof(d->name), "%s", prop.name);
    int l2 = 0;
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&d->sm_count, cudaDevAttrMultiProcessorCount, device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&d->cc_major, cudaDevAttrComputeCapabilityMajor, device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&d->cc_minor, cudaDevAttrComputeCapabilityMinor, device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&d->mem_clock_khz, cudaDevAttrMemoryClockRate, device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaDeviceGetAttribute(&d->bus_bits, cudaDevAttrGlobalMemoryBusWidth, device), r, fail);
    d->l2_bytes = (uint64_t)l2;
    /* DDR: two transfers per memory clock on every bit of the bus */
    d->peak_gbps = (double)d->mem_clock_khz * 1e3 * 2.0 * (double)d->bus_bits / 8.0 / 1e9;
    GR_CUDA_CHECK_GOTO(cudaDriverGetVersion(&d->driver), r, fail);
    GR_CUDA_CHECK_GOTO(cudaRuntimeGetVersion(&d->runtime), r, fail);
    d->cub_version = gr_bench_cub_version();
    d->cub_g2g_version = gr_bench_cub_g2g_version();

    GR_CUDA_CHECK_GOTO(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), r, fail);
    GR_CUDA_CHECK_GOTO(cudaEventCreate(&c->done), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostAlloc((void **)&c->hold_host, sizeof(int), cudaHostAllocMapped), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostGetDevicePointer((void **)&c->hold_dev, c->hold_host, 0), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostAlloc((void **)&c->late_host, sizeof(int), cudaHostAllocMapped), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostGetDevicePointer((void **)&c->late_dev, c->late_host, 0), r, fail);
    *c->hold_host = 0;
    *c->late_host = 0;
    const char *hold_env = gr_env(GR_ENV_BENCH_HOLD);
    c->use_hold = !(hold_env && !strcmp(hold_env, "0"));
    GR_CUDA_CHECK_GOTO(cudaHostAlloc((void **)&c->res_host, sizeof(gr_local_t), cudaHostAllocMapped), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostGetDevicePointer((void **)&c->res_dev, c->res_host, 0), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostAlloc(&c->acc_host, GR_BENCH_ACC_BYTES, cudaHostAllocDefault), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMalloc((void **)&c->ticket, sizeof(unsigned int)), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMemset(c->ticket, 0, sizeof(unsigned int)), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMalloc((void **)&c->mismatch_dev, sizeof(unsigned long long)), r, fail);

    int bps = 0;
    GR_CUDA_CHECK_GOTO(gr_bench_copy_occupancy(&bps), r, fail);
    c->copy_resident = (bps > 0 ? bps : 1) * d->sm_count;
    for (int rung = 0; rung < GR_BENCH_LADDER_RUNGS; ++rung)
        for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
            if (gr_c_is_half(t)) /* f16/bf16: the ladder has no 2-byte rungs (bench.c leaves them out) */
                continue;
            GR_CUDA_CHECK_GOTO(gr_bench_ladder_occupancy(rung, t, &bps), r, fail);
            c->ladder_resident[rung][t] = (bps > 0 ? bps : 1) * d->sm_count;
        }
    c->tuned_block = gr_tuning_for(GR_KF_FAST, GR_C_F32, 10 * d->cc_major + d->cc_minor).block;
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        GR_CUDA_CHECK_GOTO(gr_cuda_reduce_occupancy(t, GR_C_SUM, c->tuned_block, &bps), r, fail);
        c->tuned_resident[t] = (bps > 0 ? bps : 1) * d->sm_count;
    }
    GR_CUDA_CHECK_GOTO(cudaMemGetInfo(&d->free_bytes, &d->total_bytes), r, fail);
    *info = *d;
    *out = c;
    return GR_SUCCESS;
fail:
    bench_cuda_close(c);
    return r;
}

static void free_events(bench_cuda_t *c)
{
    for (int i = 0; i < c->nev; ++i)
        GR_CUDA_IGNORE(cudaEventDestroy(c->ev[i]));
    free(c->ev);
    c->ev = NULL;
    c->nev = 0;
}

void bench_cuda_close(bench_cuda_t *c)
{
    if (!c)
        return;
    if (c->in_group)
        bench_cuda_group_end(c);
    free_events(c);
    if (c->done)
        GR_CUDA_IGNORE(cudaEventDestroy(c->done));
    if (c->stream)
        GR_CUDA_IGNORE(cudaStreamDestroy(c->stream));
    if (c->hold_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->hold_host));
    if (c->late_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->late_host));
    if (c->res_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->res_host));
    if (c->acc_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->acc_host));
    if (c->ticket)
        GR_CUDA_IGNORE(cudaFree(c->ticket));
    if (c->mismatch_dev)
        GR_CUDA_IGNORE(cudaFree(c->mismatch_dev));
    if (c->x_scratch)
        GR_CUDA_IGNORE(cudaFree(c->x_scratch));
    if (c->x_res_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->x_res_host));
    if (c->s_scratch)
        GR_CUDA_IGNORE(cudaFree(c->s_scratch));
    if (c->s_res_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->s_res_host));
    free(c);
}

/* Accumulators the largest ladder rung writes for n elements (v0: one a block). */
static uint64_t partials_needed(const bench_cuda_t *c, uint64_t n, gr_dtype_t t)
{
    uint64_t most = 1;
    if (gr_c_is_half((int)t))
        return most; /* no ladder rows for halves */
    for (int rung = 0; rung < GR_BENCH_LADDER_RUNGS; ++rung) {
        uint64_t g = (uint64_t)gr_bench_ladder_grid(rung, (int)t, n, c->ladder_resident[rung][t]);
        if (g > most)
            most = g;
    }
    return most;
}

void bench_cuda_set_modes(bench_cuda_t *c, int use_hold, int hot)
{
    const char *hold_env = gr_env(GR_ENV_BENCH_HOLD);
    c->use_hold = use_hold && !(hold_env && !strcmp(hold_env, "0"));
    c->hot = hot;
}

gr_result_t bench_cuda_plan(bench_cuda_t *c, uint64_t n, gr_dtype_t t, bench_group_t *g)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
    g->dtype = t;
    g->bytes = n * (uint64_t)gr_dtype_size(t);
    const uint64_t set = 2 * c->info.l2_bytes; /* reads from HBM once the set is twice the L2 */
    uint64_t nbuf = 1;
    if (g->bytes < set && !c->hot)
        nbuf = (set + g->bytes - 1) / g->bytes;
    if (nbuf > BENCH_MAX_BUFS)
        nbuf = BENCH_MAX_BUFS;
    size_t free_b = 0, total_b = 0;
    GR_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const uint64_t fixed = partials_needed(c, n, t) * GR_BENCH_ACC_BYTES + BENCH_SLACK_BYTES;
    /* each buffer of the set has a copy target of its own, so the copy row
     * does not write into a cache-resident buffer either */
    while (nbuf > 1 && 2 * nbuf * g->bytes + fixed > (uint64_t)free_b)
        --nbuf;
    if (2 * g->bytes + fixed > (uint64_t)free_b) {
        GR_INFO(GR_SUB_BENCH, "bench: %llu elements of %s need %.2f GB on the GPU, %.2f GB free",
                (unsigned long long)n, gr_dtype_name(t), (double)(2 * g->bytes + fixed) / 1e9, (double)free_b / 1e9);
        return GR_ERR_DEVMEM;
    }
    g->nbuf = (int)nbuf;
    g->in_l2 = c->hot ? g->bytes <= c->info.l2_bytes : nbuf * g->bytes < set;
    return GR_SUCCESS;
}

gr_result_t bench_cuda_group_begin(bench_cuda_t *c, const bench_group_t *g, int want_g2g, int want_tuned)
{
    gr_result_t r = GR_SUCCESS;
    if (c->in_group)
        bench_cuda_group_end(c);
    c->g = *g;
    c->in_group = 1;
    for (int k = 0; k < g->nbuf; ++k) {
        GR_CUDA_CHECK_GOTO(cudaMalloc(&c->in[k], g->bytes), r, fail);
        GR_CUDA_CHECK_GOTO(cudaMalloc(&c->out[k], g->bytes), r, fail);
    }
    c->partials_cap = partials_needed(c, g->n, g->dtype);
    GR_CUDA_CHECK_GOTO(cudaMalloc(&c->partials, c->partials_cap * GR_BENCH_ACC_BYTES), r, fail);
    c->partials_host = malloc(c->partials_cap * GR_BENCH_ACC_BYTES);
    if (!c->partials_host) {
        GR_ERROR(GR_SUB_ALL, "out of host memory for %llu partials",
               (unsigned long long)c->partials_cap);
        r = GR_ERR_NOMEM;
        goto fail;
    }
    GR_CUDA_CHECK_GOTO(cudaMalloc(&c->acc_dev, GR_BENCH_ACC_BYTES), r, fail);

    /* CUB's temp storage: sized and allocated here, never inside timing */
    c->cub_temp_bytes = 0;
    GR_CUDA_CHECK_GOTO(gr_bench_cub_sum((int)g->dtype, c->in[0], g->n, c->acc_dev, NULL, &c->cub_temp_bytes,
                                        c->stream), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMalloc(&c->cub_temp, c->cub_temp_bytes ? c->cub_temp_bytes : 1), r, fail);
    c->have_g2g = want_g2g && gr_bench_cub_g2g_available() && !gr_c_is_half((int)g->dtype); /* no half form */
    if (c->have_g2g) {
        c->g2g_temp_bytes = 0;
        size_t same_bytes = 0; /* the float-output instance (cub-g2g-f32) may ask for another size */
        GR_CUDA_CHECK_GOTO(gr_bench_cub_g2g_sum((int)g->dtype, c->in[0], g->n, c->acc_dev, NULL,
                                                &c->g2g_temp_bytes, c->stream), r, fail);
        GR_CUDA_CHECK_GOTO(gr_bench_cub_g2g_sum_same((int)g->dtype, c->in[0], g->n, c->acc_dev, NULL,
                                                     &same_bytes, c->stream), r, fail);
        if (same_bytes > c->g2g_temp_bytes)
            c->g2g_temp_bytes = same_bytes;
        GR_CUDA_CHECK_GOTO(cudaMalloc(&c->g2g_temp, c->g2g_temp_bytes), r, fail);
    }
    c->have_tuned = want_tuned;
    if (want_tuned) {
        c->tuned_grid = gr_cuda_grid(GR_KF_FAST, 10 * c->info.cc_major + c->info.cc_minor, g->n, (int)g->dtype,
                                     c->tuned_block, c->info.sm_count, c->tuned_resident[g->dtype] / c->info.sm_count);
        GR_CUDA_CHECK_GOTO(cudaMalloc(&c->tuned_scratch,
                                      (size_t)c->tuned_grid * GR_CUDA_SCRATCH_BYTES_PER_BLOCK), r, fail);
    }
    GR_CUDA_CHECK_GOTO(cudaStreamSynchronize(c->stream), r, fail);
    return GR_SUCCESS;
fail:
    bench_cuda_group_end(c);
    return r;
}

void bench_cuda_group_end(bench_cuda_t *c)
{
    GR_CUDA_IGNORE(cudaStreamSynchronize(c->stream));
    for (int k = 0; k < BENCH_MAX_BUFS; ++k) {
        if (c->in[k])
            GR_CUDA_IGNORE(cudaFree(c->in[k]));
        if (c->out[k])
            GR_CUDA_IGNORE(cudaFree(c->out[k]));
        c->in[k] = c->out[k] = NULL;
    }
    void **devs[] = {&c->partials, &c->acc_dev, &c->cub_temp, &c->g2g_temp, &c->tuned_scratch,
                     &c->v_rec, &c->v_cub_temp, (void **)&c->v_out2, (void **)&c->v_fold, (void **)&c->v_out,
                     &c->v_x2, &c->v_y2};
    for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); ++i) {
        if (*devs[i])
            GR_CUDA_IGNORE(cudaFree(*devs[i]));
        *devs[i] = NULL;
    }
    free(c->partials_host);
    c->partials_host = NULL;
    if (c->v_out_host)
        GR_CUDA_IGNORE(cudaFreeHost(c->v_out_host));
    c->v_out_host = NULL;
    c->v_cub_temp_bytes = 0;
    c->in_group = 0;
}

gr_result_t bench_cuda_fill(bench_cuda_t *c, gr_gen_t gen, int all_buffers)
{
    const int nb = all_buffers ? c->g.nbuf : 1;
    /* buffer k holds global indices [k n, (k+1) n): every buffer differs. Timing data goes to the copy
     * targets too: they are the y of the vector rows (the copy rows overwrite them with copies) */
    for (int k = 0; k < nb; ++k) {
        GR_CUDA_CHECK(gr_cuda_launch_generate(c->in[k], (int)c->g.dtype, (int)gen, BENCH_SEED,
                                              all_buffers ? (uint64_t)k * c->g.n : 0, c->g.n, c->stream));
        if (all_buffers)
            GR_CUDA_CHECK(gr_cuda_launch_generate(c->out[k], (int)c->g.dtype, (int)gen, BENCH_SEED + 1,
                                                  (uint64_t)k * c->g.n, c->g.n, c->stream));
    }
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    return GR_SUCCESS;
}

gr_result_t bench_cuda_poison(bench_cuda_t *c)
{
    /* all-ones bytes: NaN as a double, -1 as an integer; no gate gives either */
    GR_CUDA_CHECK(cudaMemsetAsync(c->partials, 0xFF, c->partials_cap * GR_BENCH_ACC_BYTES, c->stream));
    GR_CUDA_CHECK(cudaMemsetAsync(c->acc_dev, 0xFF, GR_BENCH_ACC_BYTES, c->stream));
    GR_CUDA_CHECK(cudaMemsetAsync(c->out[0], 0xFF, c->g.bytes, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    memset(c->res_host, 0xFF, sizeof(gr_local_t));
    memset(c->acc_host, 0xFF, GR_BENCH_ACC_BYTES);
    return GR_SUCCESS;
}

static gr_result_t ensure_events(bench_cuda_t *c, int n)
{
    if (c->nev >= n)
        return GR_SUCCESS;
    free_events(c);
    c->ev = calloc((size_t)n, sizeof(cudaEvent_t));
    if (!c->ev)
        GR_FAIL(GR_ERR_NOMEM, "out of host memory for %d events", n);
    for (; c->nev < n; ++c->nev)
        GR_CUDA_CHECK(cudaEventCreate(&c->ev[c->nev]));
    return GR_SUCCESS;
}

gr_result_t bench_cuda_time(bench_cuda_t *c, bench_run_fn run, int arg, int iters, int warmup, double *t, int *late)
{
    int rc;
    *late = 0;
    /* at least one untimed run: with lazy module loading a kernel's first
     * launch loads it, which must not happen behind a spinning hold kernel */
    if (warmup < 1)
        warmup = 1;
    for (int w = 0; w < warmup; ++w)
        if ((rc = run(c, arg, w % c->g.nbuf, NULL, NULL)) != 0)
            return (gr_result_t)rc;
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    GR_CHECK(ensure_events(c, 2 * iters));
    for (int k0 = 0; k0 < iters; k0 += BENCH_BATCH) {
        const int k1 = k0 + BENCH_BATCH < iters ? k0 + BENCH_BATCH : iters;
        const int gen = ++c->hold_gen;
        *c->late_host = 0;
        if (c->use_hold)
            GR_CUDA_CHECK(gr_bench_launch_hold(c->hold_dev, gen, BENCH_HOLD_TIMEOUT_NS, c->late_dev, c->stream));
        for (int k = k0; k < k1; ++k) {
            GR_CUDA_CHECK(cudaEventRecord(c->ev[2 * k], c->stream));
            /* the next buffer of the set each run: no run reads what the last one left in L2 */
            if ((rc = run(c, arg, (warmup + k) % c->g.nbuf, NULL, NULL)) != 0) {
                __atomic_store_n(c->hold_host, gen, __ATOMIC_SEQ_CST);
                return (gr_result_t)rc;
            }
            GR_CUDA_CHECK(cudaEventRecord(c->ev[2 * k + 1], c->stream));
        }
        __atomic_store_n(c->hold_host, gen, __ATOMIC_SEQ_CST);
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        if (__atomic_load_n(c->late_host, __ATOMIC_SEQ_CST))
            ++*late;
    }
    for (int k = 0; k < iters; ++k) {
        float ms = 0;
        GR_CUDA_CHECK(cudaEventElapsedTime(&ms, c->ev[2 * k], c->ev[2 * k + 1]));
        t[k] = (double)ms * 1e-3;
    }
    return GR_SUCCESS;
}

/* ---- reading results ------------------------------------------------------------ */

static void set_acc(bench_result_t *res, gr_dtype_t t, const void *acc)
{
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    if (is_float(t)) {
        memcpy(&res->f, acc, sizeof(double));
    } else {
        res->is_int = 1;
        memcpy(&res->i, acc, sizeof(int64_t));
    }
}

static gr_result_t read_acc_dev(bench_cuda_t *c, const void *dev, bench_result_t *res)
{
    unsigned char acc[GR_BENCH_ACC_BYTES];
    GR_CUDA_CHECK(cudaMemcpyAsync(acc, dev, sizeof(acc), cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    set_acc(res, c->g.dtype, acc);
    return GR_SUCCESS;
}

/* A gr_local_t as a value; a wrong count or a 128-bit value outside int64
 * becomes a value no gate has (NaN or INT64_MIN). */
static void read_local(const bench_cuda_t *c, bench_result_t *res)
{
    gr_local_t loc;
    memcpy(&loc, (const void *)c->res_host, sizeof(loc));
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    const int count_ok = loc.count == c->g.n && loc.overflow == 0;
    if (is_float(c->g.dtype)) {
        res->f = count_ok ? loc.f : (double)NAN;
    } else {
        res->is_int = 1;
        const int fits = (loc.hi == 0 && loc.lo <= (uint64_t)INT64_MAX) || (loc.hi == -1 && loc.lo > (uint64_t)INT64_MAX);
        res->i = count_ok && fits ? (int64_t)loc.lo : INT64_MIN;
    }
}

/* ---- rows ------------------------------------------------------------------------ */

int bench_cuda_run_copy(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    GR_CUDA_CHECK(gr_bench_launch_copy(c->in[buf], c->out[buf], c->g.bytes, c->copy_resident, c->stream));
    if (res) {
        unsigned long long bad = 0;
        GR_CUDA_CHECK(cudaMemsetAsync(c->mismatch_dev, 0, sizeof(bad), c->stream));
        GR_CUDA_CHECK(gr_bench_launch_compare(c->in[buf], c->out[buf], c->g.bytes, c->mismatch_dev, c->stream));
        GR_CUDA_CHECK(cudaMemcpyAsync(&bad, c->mismatch_dev, sizeof(bad), cudaMemcpyDeviceToHost, c->stream));
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        memset(res, 0, sizeof(*res));
        res->kind = BENCH_RES_MISMATCH;
        res->mismatches = bad;
    }
    return 0;
}

/* The driver's device-to-device copy, beside the copy kernel: counted read + write too. */
int bench_cuda_run_memcpy(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    GR_CUDA_CHECK(cudaMemcpyAsync(c->out[buf], c->in[buf], c->g.bytes, cudaMemcpyDeviceToDevice, c->stream));
    if (res) {
        unsigned long long bad = 0;
        GR_CUDA_CHECK(cudaMemsetAsync(c->mismatch_dev, 0, sizeof(bad), c->stream));
        GR_CUDA_CHECK(gr_bench_launch_compare(c->in[buf], c->out[buf], c->g.bytes, c->mismatch_dev, c->stream));
        GR_CUDA_CHECK(cudaMemcpyAsync(&bad, c->mismatch_dev, sizeof(bad), cudaMemcpyDeviceToHost, c->stream));
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        memset(res, 0, sizeof(*res));
        res->kind = BENCH_RES_MISMATCH;
        res->mismatches = bad;
    }
    return 0;
}

int bench_cuda_run_cub(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    GR_CUDA_CHECK(gr_bench_cub_sum((int)c->g.dtype, c->in[buf], c->g.n, c->acc_dev, c->cub_temp, &c->cub_temp_bytes,
                                   c->stream));
    if (res)
        GR_CHECK(read_acc_dev(c, c->acc_dev, res));
    return 0;
}

int bench_cuda_run_cub_g2g(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    if (!c->have_g2g)
        GR_FAIL(GR_ERR_NOT_BUILT, "the cub-g2g row is not built in: configure with -DGR_CCCL_INCLUDE=<dir>");
    if (arg == 1 && c->g.dtype == GR_F32) {
        /* the sum in float: what a CUB user summing f32 data gets */
        GR_CUDA_CHECK(gr_bench_cub_g2g_sum_same((int)c->g.dtype, c->in[buf], c->g.n, c->acc_dev, c->g2g_temp,
                                                &c->g2g_temp_bytes, c->stream));
        if (res) {
            float v;
            GR_CUDA_CHECK(cudaMemcpyAsync(&v, c->acc_dev, sizeof(v), cudaMemcpyDeviceToHost, c->stream));
            GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
            memset(res, 0, sizeof(*res));
            res->kind = BENCH_RES_VALUE;
            res->f = (double)v;
            res->f32_out = 1;
        }
        return 0;
    }
    GR_CUDA_CHECK(gr_bench_cub_g2g_sum((int)c->g.dtype, c->in[buf], c->g.n, c->acc_dev, c->g2g_temp,
                                       &c->g2g_temp_bytes, c->stream));
    if (res)
        GR_CHECK(read_acc_dev(c, c->acc_dev, res));
    return 0;
}

/* What a CUB user waits for: the sum, then a copy of it to the host. */
int bench_cuda_run_cub_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    GR_CUDA_CHECK(gr_bench_cub_sum((int)c->g.dtype, c->in[buf], c->g.n, c->acc_dev, c->cub_temp, &c->cub_temp_bytes,
                                   c->stream));
    GR_CUDA_CHECK(cudaMemcpyAsync(c->acc_host, c->acc_dev, GR_BENCH_ACC_BYTES, cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    if (res)
        set_acc(res, c->g.dtype, c->acc_host);
    return 0;
}

static gr_result_t launch_tuned(bench_cuda_t *c, int buf)
{
    if (!c->have_tuned)
        GR_FAIL(GR_ERR_NOT_BUILT, "the tuned rows were not set up");
    gr_cuda_reduce_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = c->in[buf];
    l.n = c->g.n;
    l.dtype = (int)c->g.dtype;
    l.op = GR_C_SUM;
    l.power = 1;
    l.grid = c->tuned_grid;
    l.block = c->tuned_block;
    l.scratch = c->tuned_scratch;
    l.ticket = c->ticket;
    l.result = c->res_dev;
    c->tuned_seq = c->tuned_seq >= GR_CUDA_SEQ_MAX ? 1u : c->tuned_seq + 1u;
    l.seq = c->tuned_seq;
    l.stream = c->stream;
    GR_CUDA_CHECK(gr_cuda_launch_reduce(&l));
    return GR_SUCCESS;
}

int bench_cuda_run_tuned(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    GR_CHECK(launch_tuned(c, buf));
    if (res) {
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        read_local(c, res);
    }
    return 0;
}

/* What a gpureduce user waits for: launch, then the result readable in host
 * memory, the backend's way for device data: poison the slot, launch, poll
 * the slot until the launch's sequence number and every field are there
 * (past the launch's own time, a stream query now and then), no copy call
 * (gr_cuda_reduce_wait). */
int bench_cuda_run_tuned_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    gr_cuda_result_poison(c->res_host);
    GR_CHECK(launch_tuned(c, buf));
    gr_local_t loc;
    GR_CUDA_CHECK(gr_cuda_reduce_wait(c->res_host, c->tuned_seq, c->stream, NULL, gr_cuda_reduce_spin_ns(c->g.bytes),
                                      &loc));
    if (res) {
        read_local(c, res);
        if (loc.reserved != (int32_t)c->tuned_seq) { /* not this launch's result: a value no gate has */
            res->f = (double)NAN;
            res->i = INT64_MIN;
        }
    }
    return 0;
}

/* gpureduce exact mode (kernels/gr_exact_kernels.h) as the cuda backend runs it. Integer
 * dtypes are exact in the tuned kernel already, so their exact rows run that. */
static gr_result_t launch_exact(bench_cuda_t *c, int buf)
{
    if (!is_float(c->g.dtype))
        return launch_tuned(c, buf);
    if (!c->x_scratch) {
        GR_CUDA_CHECK(cudaMalloc(&c->x_scratch, gr_cuda_exact_scratch_bytes()));
        GR_CUDA_CHECK(cudaMemset(c->x_scratch, 0, gr_cuda_exact_scratch_bytes()));
        GR_CUDA_CHECK(cudaHostAlloc((void **)&c->x_res_host, sizeof(gr_exact_result_t), cudaHostAllocMapped));
        GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&c->x_res_dev, c->x_res_host, 0));
    }
    gr_cuda_exact_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = c->in[buf];
    l.n = c->g.n;
    l.dtype = (int)c->g.dtype;
    l.op = GR_C_SUM;
    l.power = 1;
    const int cc = 10 * c->info.cc_major + c->info.cc_minor;
    const gr_tuning_t tp = gr_tuning_for(GR_KF_EXACT, l.dtype, cc);
    l.terms = tp.terms;
    l.block = tp.block;
    int bps = 0;
    GR_CUDA_CHECK(gr_cuda_exact_occupancy(l.dtype, GR_C_SUM, 1, l.terms, l.block, &bps));
    l.grid = gr_cuda_grid(GR_KF_EXACT, cc, c->g.n, l.dtype, l.block, c->info.sm_count, bps);
    l.scratch = c->x_scratch;
    l.result = c->x_res_dev;
    l.stream = c->stream;
    GR_CUDA_CHECK(gr_cuda_launch_reduce_exact(&l));
    return GR_SUCCESS;
}

/* The exact state rounded to f64 (the gates' sums are integers below 2^53). */
static void read_exact(const bench_cuda_t *c, bench_result_t *res)
{
    if (!is_float(c->g.dtype)) {
        read_local(c, res);
        return;
    }
    gr_exact_result_t r;
    memcpy(&r, (const void *)c->x_res_host, sizeof(r));
    gr_xacc_t x;
    gr_exact_result_to_xacc(&r, &x);
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->f = r.count == c->g.n && r.nan == 0 && r.pinf == 0 && r.ninf == 0 ? gr_xacc_to_double(&x) : (double)NAN;
}

int bench_cuda_run_exact(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    if (res && c->x_res_host)
        c->x_res_host->count = UINT64_MAX;
    GR_CHECK(launch_exact(c, buf));
    if (res) {
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        read_exact(c, res);
    }
    return 0;
}

int bench_cuda_run_exact_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    if (res && c->x_res_host)
        c->x_res_host->count = UINT64_MAX;
    GR_CHECK(launch_exact(c, buf));
    GR_CUDA_CHECK(cudaEventRecord(c->done, c->stream));
    GR_CUDA_CHECK(cudaEventSynchronize(c->done));
    if (res)
        read_exact(c, res);
    return 0;
}

/* --op stats on the GPU (kernels/gr_stats_kernels.h) as the cuda backend runs it:
 * one pass for count, NaN/Inf counts, exact sum, min/max and the variance. */
static gr_result_t launch_stats(bench_cuda_t *c, int buf)
{
    if (!c->s_scratch) {
        GR_CUDA_CHECK(cudaMalloc(&c->s_scratch, gr_cuda_stats_scratch_bytes()));
        GR_CUDA_CHECK(cudaMemset(c->s_scratch, 0, gr_cuda_stats_scratch_bytes()));
        GR_CUDA_CHECK(cudaHostAlloc((void **)&c->s_res_host, sizeof(gr_stats_result_t), cudaHostAllocMapped));
        GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&c->s_res_dev, c->s_res_host, 0));
    }
    gr_cuda_stats_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = c->in[buf];
    l.n = c->g.n;
    l.dtype = (int)c->g.dtype;
    /* GR_BENCH_STATS_BLOCK (tuning): another built block size, 128, 256 or 512 */
    const char *eb = gr_env(GR_ENV_BENCH_STATS_BLOCK);
    const int cc = 10 * c->info.cc_major + c->info.cc_minor;
    l.block = eb && atoi(eb) > 0 ? atoi(eb) : gr_tuning_for(GR_KF_STATS, l.dtype, cc).block;
    int bps = 0;
    GR_CUDA_CHECK(gr_cuda_stats_occupancy(l.dtype, l.block, &bps));
    l.grid = gr_cuda_grid(GR_KF_STATS, cc, c->g.n, l.dtype, l.block, c->info.sm_count, bps);
    l.scratch = c->s_scratch;
    l.result = c->s_res_dev;
    l.stream = c->stream;
    GR_CUDA_CHECK(gr_cuda_launch_stats(&l));
    return GR_SUCCESS;
}

/* The gate: every statistic against the closed form of all ones or of iota
 * (i mod 1000); the sum (exact state rounded to f64) goes to the harness's
 * sum gate, or NaN when count, counts, min, max, mean or variance is off. */
static void read_stats(const bench_cuda_t *c, bench_result_t *res)
{
    gr_stats_result_t r;
    memcpy(&r, (const void *)c->s_res_host, sizeof(r));
    gr_xacc_t x;
    for (int k = 0; k < GR_EXACT_LIMBS; ++k)
        x.limb[k] = r.limb[k];
    gr_xacc_normalize(&x);
    const uint64_t n = c->g.n;
    const double sum = gr_xacc_to_double(&x);
    const int is_int = !is_float(c->g.dtype);
    const double mn = is_int ? (double)r.imin : r.min, mx = is_int ? (double)r.imax : r.max;
    /* ones */
    int ok1 = sum == (double)n && mn == 1 && mx == 1 && r.m2 == 0 && r.mean == 1;
    /* iota: n = 1000 q + m */
    const uint64_t q = n / 1000u, m = n % 1000u;
    long double s1 = (long double)q * 499500.0L + (long double)m * (long double)(m ? m - 1 : 0) / 2.0L;
    long double s2 = (long double)q * 332833500.0L + (m ? (long double)(m - 1) * m * (2.0L * m - 1) / 6.0L : 0.0L);
    long double m2 = s2 - s1 * s1 / (long double)n;
    int ok2 = sum == (double)s1 && mn == 0 && mx == (n >= 1000 ? 999.0 : (double)(n - 1)) &&
              fabsl((long double)r.m2 - m2) <= 1e-9L * m2 && fabsl((long double)r.mean - s1 / n) <= 1e-12L * (s1 / n);
    int ok = r.count == n && r.nf == n && r.nan == 0 && r.pinf == 0 && r.ninf == 0 && (ok1 || ok2);
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->f = ok ? sum : (double)NAN;
}

int bench_cuda_run_stats(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)arg;
    (void)self_s;
    if (res && c->s_res_host)
        memset(c->s_res_host, 0xFF, sizeof(*c->s_res_host)); /* poison: count = UINT64_MAX */
    GR_CHECK(launch_stats(c, buf));
    if (res) {
        GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        read_stats(c, res);
    }
    return 0;
}

int bench_cuda_run_ladder(void *env, int rung, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    gr_bench_ladder_launch_t l;
    memset(&l, 0, sizeof(l));
    l.rung = rung;
    l.dtype = (int)c->g.dtype;
    l.in = c->in[buf];
    l.n = c->g.n;
    l.grid = gr_bench_ladder_grid(rung, l.dtype, c->g.n, c->ladder_resident[rung][c->g.dtype]);
    l.partials = c->partials;
    l.result = c->acc_dev;
    l.stream = c->stream;
    GR_CUDA_CHECK(gr_bench_launch_ladder(&l));
    if (!res)
        return 0;
    if (rung == 8)
        return (int)read_acc_dev(c, c->acc_dev, res);
    /* v0..v7 leave one accumulator a block: the check sums them here, exactly
     * (integers; doubles holding integers below 2^53 add exactly too) */
    const size_t nb = (size_t)l.grid * GR_BENCH_ACC_BYTES;
    GR_CUDA_CHECK(cudaMemcpyAsync(c->partials_host, c->partials, nb, cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    if (is_float(c->g.dtype)) {
        const double *p = c->partials_host;
        double s = 0;
        for (int b = 0; b < l.grid; ++b)
            s += p[b];
        res->f = s;
    } else {
        const int64_t *p = c->partials_host;
        uint64_t s = 0; /* wraps instead of overflowing; a wrong sum stays wrong */
        for (int b = 0; b < l.grid; ++b)
            s += (uint64_t)p[b];
        res->is_int = 1;
        res->i = (int64_t)s;
    }
    return 0;
}

/* ---- the vector rows: dot, argmax, a batch of two dot products, and CUB's ---------- */

/* The grid of a vector row: the backend's (gr_vec_grid), or, for tuning, with GR_BENCH_VEC_VPT=V at most
 * one block per 256 V 16-byte vectors (the small-n rule of the tuned sum kernel; bits of fast rows
 * change with the grid, the gates do not). */
static int vec_grid(const bench_cuda_t *c, int what)
{
    int g = gr_vec_grid(c->info.sm_count, 0, c->g.n, (unsigned)gr_dtype_size(c->g.dtype), what);
    const char *e = gr_env(GR_ENV_BENCH_VEC_VPT);
    const long vpt = e ? strtol(e, NULL, 10) : 0;
    if (vpt > 0 && vpt <= 1024) {
        const uint64_t per = (uint64_t)GR_VEC_BLOCK * (uint64_t)vpt * (16u / gr_dtype_size(c->g.dtype));
        const uint64_t cap = (c->g.n + per - 1) / per;
        if ((uint64_t)g > cap)
            g = cap > 0 ? (int)cap : 1;
    }
    return g;
}

/* Records for two jobs of the largest kind, CUB's temp storage (dot; argmax where it has a form) and a
 * second output; allocated by the first (untimed) run of a group. */
static gr_result_t vec_rows_ready(bench_cuda_t *c)
{
    if (c->v_rec)
        return GR_SUCCESS;
    /* the fast dot's grid is the largest of the three (gr_vec_grid) */
    const int grid = gr_vec_grid(c->info.sm_count, 0, c->g.n, (unsigned)gr_dtype_size(c->g.dtype), GR_VEC_GRID_DOT);
    GR_CUDA_CHECK(cudaMalloc(&c->v_rec, 2 * (size_t)grid * sizeof(gr_vec_arg_rec_t)));
    GR_CUDA_CHECK(cudaMalloc((void **)&c->v_fold, 2 * sizeof(gr_vec_fold_t)));
    GR_CUDA_CHECK(cudaMemset(c->v_fold, 0, 2 * sizeof(gr_vec_fold_t)));
    GR_CUDA_CHECK(cudaMalloc((void **)&c->v_out, 2 * sizeof(gr_vec_out_t)));
    GR_CUDA_CHECK(cudaMallocHost((void **)&c->v_out_host, 2 * sizeof(gr_vec_out_t)));
    GR_CUDA_CHECK(cudaMalloc((void **)&c->v_out2, GR_BENCH_ACC_BYTES));
    if (c->g.nbuf == 1) { /* batch2's timed runs read a second x and y, not x and y again */
        GR_CUDA_CHECK(cudaMalloc(&c->v_x2, c->g.bytes));
        GR_CUDA_CHECK(cudaMalloc(&c->v_y2, c->g.bytes));
        GR_CUDA_CHECK(cudaMemcpyAsync(c->v_x2, c->in[0], c->g.bytes, cudaMemcpyDeviceToDevice, c->stream));
        GR_CUDA_CHECK(cudaMemcpyAsync(c->v_y2, c->out[0], c->g.bytes, cudaMemcpyDeviceToDevice, c->stream));
    }
    size_t dot_b = 0, arg_b = 0;
    GR_CUDA_CHECK(gr_bench_cub_dot((int)c->g.dtype, c->in[0], c->out[0], c->g.n, c->acc_dev, NULL, &dot_b,
                                   c->stream));
    if (!gr_c_is_half((int)c->g.dtype))
        GR_CUDA_CHECK(gr_bench_cub_argmax((int)c->g.dtype, c->in[0], c->g.n, c->acc_dev, c->v_out2, NULL, &arg_b,
                                          c->stream));
    c->v_cub_temp_bytes = dot_b > arg_b ? dot_b : arg_b;
    GR_CUDA_CHECK(cudaMalloc(&c->v_cub_temp, c->v_cub_temp_bytes ? c->v_cub_temp_bytes : 1));
    return GR_SUCCESS;
}

/* y of the dot rows for buffer buf: out[buf] (timing data from bench_cuda_fill); a checked run first fills
 * it with ones, so dot(x, y) is the gate's sum of x. */
static gr_result_t vec_y(bench_cuda_t *c, int buf, const bench_result_t *res, void **y)
{
    if (res)
        GR_CUDA_CHECK(gr_cuda_launch_generate(c->out[buf], (int)c->g.dtype, GR_GEN_ONES, BENCH_SEED, 0, c->g.n,
                                              c->stream));
    *y = c->out[buf];
    return GR_SUCCESS;
}

/* The second x and y of batch2 (and of its CUB row): another buffer of the group, or the copies made for
 * a group of one buffer; a checked run reads x and y again, so both products are the gate's. */
static void second_pair(const bench_cuda_t *c, int buf, const bench_result_t *res, const void **x2,
                        const void **y2)
{
    if (res || c->g.nbuf > 1) {
        const int b2 = res ? buf : (buf + 1) % c->g.nbuf;
        *x2 = c->in[b2];
        *y2 = c->out[b2];
    } else {
        *x2 = c->v_x2;
        *y2 = c->v_y2;
    }
}

/* The value of njobs dot jobs' out records (exact or fast), all equal, or a value no gate has. Exact limbs
 * go through the wide accumulator; the fast sums of the gates are integers below 2^53: exact. */
static gr_result_t read_dots(bench_cuda_t *c, int exact, int njobs, bench_result_t *res)
{
    GR_CUDA_CHECK(cudaMemcpyAsync(c->v_out_host, c->v_out, sizeof(gr_vec_out_t) * (size_t)njobs,
                                  cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->is_int = !is_float(c->g.dtype);
    for (int j = 0; j < njobs; ++j) {
        double f = 0;
        int64_t i = INT64_MIN;
        const gr_vec_out_t *o = &c->v_out_host[j];
        if (exact) {
            gr_wacc_t w;
            memcpy(w.limb, o->exact.limb, sizeof(w.limb));
            gr_wacc_normalize(&w);
            const int specials = o->exact.nan || o->exact.pinf || o->exact.ninf;
            f = specials ? (double)NAN : gr_wacc_round(&w, 53, -1074, 1023);
            if (!specials && !gr_wacc_to_i64(&w, &i))
                i = INT64_MIN;
        } else {
            f = o->fast.s[0];
        }
        if (j > 0 && (f != res->f || i != res->i)) { /* the two dot products of batch2 differ */
            res->f = (double)NAN;
            res->i = INT64_MIN;
            return GR_SUCCESS;
        }
        res->f = f;
        res->i = i;
    }
    return GR_SUCCESS;
}

/* dot(x, y), gpureduce's kernel (kernels/dot.cu) as the cuda backend launches it; arg 1: exact mode
 * (integers are always exact). The grid is folded on the GPU into one out record, in the time. */
int bench_cuda_run_dot(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)self_s;
    GR_CHECK(vec_rows_ready(c));
    void *y = NULL;
    GR_CHECK(vec_y(c, buf, res, &y));
    const int exact = arg == 1 || !is_float(c->g.dtype);
    const int grid = vec_grid(c, exact ? GR_VEC_GRID_EXACT : GR_VEC_GRID_DOT);
    GR_CUDA_CHECK(gr_cuda_launch_dot(c->in[buf], y, c->g.n, (int)c->g.dtype, exact, grid, c->v_rec, c->v_fold,
                                     c->v_out, c->stream));
    if (res)
        GR_CHECK(read_dots(c, exact, 1, res));
    return 0;
}

/* Two dot products in one batch launch (gr_cuda_launch_dot_batch), as gr_reduce_batch_device sends them:
 * x1.y1 and x2.y2, four arrays of n elements (checked: both x.ones). */
int bench_cuda_run_batch2(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)arg;
    (void)self_s;
    GR_CHECK(vec_rows_ready(c));
    const int exact = !is_float(c->g.dtype);
    const int grid = vec_grid(c, exact ? GR_VEC_GRID_EXACT : GR_VEC_GRID_DOT);
    const void *x2 = NULL, *y2 = NULL;
    second_pair(c, buf, res, &x2, &y2);
    void *y = NULL;
    GR_CHECK(vec_y(c, buf, res, &y));
    gr_vec_jobs_t *jobs = &c->v_jobs;
    memset(jobs, 0, sizeof(*jobs));
    jobs->njobs = 2;
    jobs->fold = c->v_fold;
    jobs->out = c->v_out;
    for (int j = 0; j < 2; ++j) {
        gr_vec_job_t *J = &jobs->job[j];
        J->x = j ? x2 : c->in[buf];
        J->y = j ? y2 : y;
        J->n = c->g.n;
        J->rec = (char *)c->v_rec + (size_t)j * (size_t)grid * sizeof(gr_vec_fast_rec_t);
        J->dtype = (int)c->g.dtype;
        J->grid = grid;
        J->first_block = (unsigned)(j * grid);
        J->slot = (unsigned short)j;
    }
    jobs->result = NULL;
    GR_CUDA_CHECK(gr_cuda_launch_dot_batch(jobs, exact, 0, c->stream)); /* the kernel alone: no PDL */
    if (res)
        GR_CHECK(read_dots(c, exact, 2, res));
    return 0;
}

/* CUB's dot: TransformReduce over a zip of x and y; arg 2: two of them (the batch2 baseline) */
int bench_cuda_run_cub_dot(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)self_s;
    GR_CHECK(vec_rows_ready(c));
    void *y = NULL;
    GR_CHECK(vec_y(c, buf, res, &y));
    GR_CUDA_CHECK(gr_bench_cub_dot((int)c->g.dtype, c->in[buf], y, c->g.n, c->acc_dev, c->v_cub_temp,
                                   &c->v_cub_temp_bytes, c->stream));
    if (arg == 2) {
        const void *x2 = NULL, *y2 = NULL;
        second_pair(c, buf, res, &x2, &y2);
        GR_CUDA_CHECK(gr_bench_cub_dot((int)c->g.dtype, x2, y2, c->g.n, c->v_out2, c->v_cub_temp,
                                       &c->v_cub_temp_bytes, c->stream));
    }
    if (res) {
        GR_CHECK(read_acc_dev(c, c->acc_dev, res));
        if (arg == 2) {
            bench_result_t second;
            GR_CHECK(read_acc_dev(c, c->v_out2, &second));
            if (second.f != res->f || second.i != res->i) {
                res->f = (double)NAN;
                res->i = INT64_MIN;
            }
        }
    }
    return 0;
}

/* (value, index) of an argmax against the gates' answers: all ones (1 at 0) or iota (the top of the first
 * period at its own index); the gate's sum when it is one of them, else a value no gate has. */
static void argmax_result(const bench_cuda_t *c, double v, int64_t idx, bench_result_t *res)
{
    const uint64_t n = c->g.n, m = c->g.dtype == GR_BF16 ? 256u : 1000u;
    const uint64_t top = (n < m ? n : m) - 1u;
    uint64_t want = UINT64_MAX;
    if (v == 1.0 && idx == 0)
        want = bench_gate_sum(GR_GEN_ONES, c->g.dtype, n);
    else if (v == (double)top && idx == (int64_t)top)
        want = bench_gate_sum(GR_GEN_IOTA, c->g.dtype, n);
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->is_int = !is_float(c->g.dtype);
    res->f = want != UINT64_MAX ? (double)want : (double)NAN;
    res->i = want != UINT64_MAX ? (int64_t)want : INT64_MIN;
}

/* argmax, gpureduce's kernel (kernels/argext.cu, which finds argmin too) as the backend launches it */
int bench_cuda_run_argmax(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)arg;
    (void)self_s;
    GR_CHECK(vec_rows_ready(c));
    const int grid = vec_grid(c, GR_VEC_GRID_ARG);
    GR_CUDA_CHECK(gr_cuda_launch_argext(c->in[buf], c->g.n, (int)c->g.dtype, 0, GR_VEC_ARG_MAX, grid,
                                        (gr_vec_arg_rec_t *)c->v_rec, c->v_fold, c->v_out, c->stream));
    if (!res)
        return 0;
    GR_CUDA_CHECK(cudaMemcpyAsync(c->v_out_host, c->v_out, sizeof(gr_vec_out_t), cudaMemcpyDeviceToHost,
                                  c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    gr_argext_t a;
    memcpy(&a, &c->v_out_host->arg, sizeof(a)); /* field for field */
    if (is_float(c->g.dtype))
        argmax_result(c, a.nan_i != INT64_MAX ? (double)NAN : a.fmax, a.fmax_i, res);
    else
        argmax_result(c, (double)a.imax, a.imax_i, res);
    return 0;
}

/* cub::DeviceReduce::ArgMax: the maximum and its index */
int bench_cuda_run_cub_argmax(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cuda_t *c = env;
    (void)arg;
    (void)self_s;
    GR_CHECK(vec_rows_ready(c));
    GR_CUDA_CHECK(gr_bench_cub_argmax((int)c->g.dtype, c->in[buf], c->g.n, c->acc_dev, c->v_out2, c->v_cub_temp,
                                      &c->v_cub_temp_bytes, c->stream));
    if (!res)
        return 0;
    unsigned char v[GR_BENCH_ACC_BYTES];
    int64_t idx = -1;
    GR_CUDA_CHECK(cudaMemcpyAsync(v, c->acc_dev, sizeof(v), cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaMemcpyAsync(&idx, c->v_out2, sizeof(idx), cudaMemcpyDeviceToHost, c->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    double val = (double)NAN;
    switch (c->g.dtype) {
    case GR_F32: {
        float f;
        memcpy(&f, v, sizeof(f));
        val = (double)f;
        break;
    }
    case GR_F64:
        memcpy(&val, v, sizeof(val));
        break;
    case GR_I32: {
        int32_t i;
        memcpy(&i, v, sizeof(i));
        val = (double)i;
        break;
    }
    default: {
        int64_t i;
        memcpy(&i, v, sizeof(i));
        val = (double)i;
        break;
    }
    }
    argmax_result(c, val, idx, res);
    return 0;
}

/* ---- for the distributed rows (bench_dist.c) ---------------------------------- */

void *bench_cuda_input(bench_cuda_t *c, int k) { return k >= 0 && k < c->g.nbuf ? c->in[k] : NULL; }

#else
/* ISO C wants at least one declaration per file */
typedef int bench_cuda_not_built_t;
#endif /* GR_WITH_CUDA */
