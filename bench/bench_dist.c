/*
 * bench_dist.c - the distributed rows of `gpureduce bench`: gpureduce's
 * end-to-end pipeline against what a user writes by hand with CUB and MPI
 * or NCCL, on the same data, every rank at once; see bench_dist.h.
 *
 * Why the host clock with a barrier before each run: these rows end in a
 * collective, so a run is only over when the slowest rank's part is; the
 * figure a user waits for is the per-run MAX over ranks, which is what the
 * time column shows (median over runs). Each rank's own median is reduced
 * MIN, SUM and MAX over ranks besides, to show the spread without anything
 * of size np on any rank.
 *
 * Why gates over global indices: rank r holds [r n, (r+1) n) of one global
 * iota, so the global sum is a closed form in np x n that no row gets right
 * by counting one rank twice and another not at all.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "gr_env.h"
#include "bench_dist.h"
#include "gr_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef GR_WITH_CUDA
#include "gr_bench_kernels.h"
#include "gr_cuda_check.h"
#include "gr_kernels.h"
#endif
#ifdef GR_HAVE_NCCL
#include <nccl.h>
#endif

/* The seed of the harness's timed data (bench_cuda.c, bench.c's cpu_fill). */
#define BENCH_DIST_SEED 1u

#ifdef GR_HAVE_NCCL
#define BD_NCCL_CHECK(call)                                                                                  \
    do {                                                                                                     \
        ncclResult_t bd_nc_ = (call);                                                                        \
        if (bd_nc_ != ncclSuccess)                                                                           \
            GR_FAIL(GR_ERR_CUDA, "%s failed: %s; NCCL_DEBUG=WARN (or INFO) in the environment says why", #call, \
                    ncclGetErrorString(bd_nc_));                                                             \
    } while (0)
#endif

struct bench_dist {
    bench_dist_config_t cfg;
    int rank, np;
    bench_group_t g;
    void *host;           /* cpu: the rank's n elements */
    double *t, *tmax;     /* this rank's run times; the per-run maxima (rank 0) */
    /* gr's ratios over each baseline, for the summary */
    double xlo[2], xhi[2];
    bench_group_t xlo_at[2], xhi_at[2];
    int nx[2];
#ifdef GR_WITH_CUDA
    bench_cuda_t *cuda;
    int device;
    cudaStream_t stream;  /* cub+nccl */
    void *acc_dev;        /* CUB's output: one accumulator (double or int64) */
    void *recv_dev;       /* ncclReduce's output (the root's) */
    void *acc_pinned;     /* the root's copy of it in host memory */
    void *cub_temp;
    size_t cub_temp_bytes, cub_temp_cap;
#endif
#ifdef GR_HAVE_NCCL
    ncclComm_t nccl;
    int nccl_version;
    int nvls_set;         /* NCCL_NVLS_ENABLE was unset and we set it to 0 */
#endif
};

static int is_float(gr_dtype_t t) { return gr_c_is_float((int)t); } /* f16/bf16 sum in f64 too */

int bench_dist_have_nccl(void)
{
#ifdef GR_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}

/* ---------------------------------------------------------------------------
 * Set-up
 * ------------------------------------------------------------------------- */

#ifdef GR_HAVE_NCCL
static gr_result_t nccl_open(bench_dist_t *d)
{
    /* the GPU machines forbid NVLink multicast (NVLS); NCCL reads this at init */
    if (!gr_env(GR_ENV_NCCL_NVLS_ENABLE)) {
        if (setenv("NCCL_NVLS_ENABLE", "0", 0) != 0)
            GR_FAIL(GR_ERR_SYSTEM, "setenv(NCCL_NVLS_ENABLE=0) failed");
        d->nvls_set = 1;
    }
    BD_NCCL_CHECK(ncclGetVersion(&d->nccl_version));
    /* rank 0 makes the id; every rank learns whether that worked, so none waits in init alone */
    struct {
        int ok;
        ncclUniqueId id;
    } u;
    memset(&u, 0, sizeof(u));
    if (d->rank == 0) {
        ncclResult_t e = ncclGetUniqueId(&u.id);
        u.ok = e == ncclSuccess;
        if (!u.ok)
            GR_ERROR(GR_SUB_ALL, "ncclGetUniqueId failed: %s",
                   ncclGetErrorString(e));
    }
    GR_MPI_CHECK(MPI_Bcast(&u, (int)sizeof(u), MPI_BYTE, 0, MPI_COMM_WORLD));
    if (!u.ok)
        GR_FAIL(GR_ERR_CUDA, "no NCCL unique id from rank 0 (see its message); the cub+nccl row cannot run");
    GR_CUDA_CHECK(cudaSetDevice(d->device));
    BD_NCCL_CHECK(ncclCommInitRank(&d->nccl, d->np, u.id, d->rank));
    return GR_SUCCESS;
}
#endif

gr_result_t bench_dist_open(const bench_dist_config_t *cfg, bench_dist_t **out)
{
    *out = NULL;
    bench_dist_t *d = calloc(1, sizeof(*d));
    gr_result_t r = GR_SUCCESS;
    if (!d)
        GR_FAIL(GR_ERR_NOMEM, "out of host memory for the distributed rows");
    d->cfg = *cfg;
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->np);
    d->t = calloc((size_t)cfg->iters, sizeof(double));
    d->tmax = calloc((size_t)cfg->iters, sizeof(double));
    if (!d->t || !d->tmax) {
        GR_ERROR(GR_SUB_ALL, "out of host memory for %d timings", cfg->iters);
        r = GR_ERR_NOMEM;
        goto fail;
    }
    for (int k = 0; k < 2; ++k) {
        d->xlo[k] = INFINITY;
        d->xhi[k] = -INFINITY;
    }
    if (cfg->backend != GR_BACKEND_CUDA) {
        if (cfg->want[BENCH_DIST_CUB_MPI] || cfg->want[BENCH_DIST_CUB_NCCL]) {
            GR_ERROR(GR_SUB_ALL, "cub+mpi and cub+nccl are cuda rows");
            r = GR_ERR_INVALID_ARG;
            goto fail;
        }
        *out = d;
        return GR_SUCCESS;
    }
#ifdef GR_WITH_CUDA
    d->device = gr_ctx_device(cfg->ctx);
    GR_CUDA_CHECK_GOTO(cudaSetDevice(d->device), r, fail);
    GR_CUDA_CHECK_GOTO(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMalloc(&d->acc_dev, GR_BENCH_ACC_BYTES), r, fail);
    GR_CUDA_CHECK_GOTO(cudaMalloc(&d->recv_dev, GR_BENCH_ACC_BYTES), r, fail);
    GR_CUDA_CHECK_GOTO(cudaHostAlloc(&d->acc_pinned, GR_BENCH_ACC_BYTES, cudaHostAllocDefault), r, fail);
#endif
    if (cfg->want[BENCH_DIST_CUB_NCCL]) {
#ifdef GR_HAVE_NCCL
        GR_CHECK_GOTO(nccl_open(d), r, fail);
#else
        GR_ERROR(GR_SUB_ALL, "cub+nccl is not built into this gpureduce");
        r = GR_ERR_NOT_BUILT;
        goto fail;
#endif
    }
    *out = d;
    return GR_SUCCESS;
fail:
    bench_dist_close(d);
    return r;
}

void bench_dist_close(bench_dist_t *d)
{
    if (!d)
        return;
#ifdef GR_HAVE_NCCL
    if (d->nccl)
        ncclCommDestroy(d->nccl);
#endif
#ifdef GR_WITH_CUDA
    if (d->stream)
        GR_CUDA_IGNORE(cudaStreamSynchronize(d->stream));
    void **devs[] = {&d->acc_dev, &d->recv_dev, &d->cub_temp};
    for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); ++i)
        if (*devs[i])
            GR_CUDA_IGNORE(cudaFree(*devs[i]));
    if (d->acc_pinned)
        GR_CUDA_IGNORE(cudaFreeHost(d->acc_pinned));
    if (d->stream)
        GR_CUDA_IGNORE(cudaStreamDestroy(d->stream));
#endif
    free(d->t);
    free(d->tmax);
    free(d);
}

/* ---------------------------------------------------------------------------
 * Data: the gates over global indices, and the harness's timed data
 * ------------------------------------------------------------------------- */

/* cpu: the rank's n elements are gen at global indices [begin, begin + n). */
static void fill_host(bench_dist_t *d, gr_gen_t gen, uint64_t begin)
{
    const gr_gen_keys_t k = gr_gen_make_keys(BENCH_DIST_SEED);
    const uint64_t n = d->g.n;
    void *p = d->host;
    switch (d->g.dtype) {
    case GR_F32:
        for (uint64_t i = 0; i < n; ++i)
            ((float *)p)[i] = (float)gr_gen_float((int)gen, GR_C_F32, k, begin + i);
        break;
    case GR_F64:
        for (uint64_t i = 0; i < n; ++i)
            ((double *)p)[i] = gr_gen_float((int)gen, GR_C_F64, k, begin + i);
        break;
    case GR_I32:
        for (uint64_t i = 0; i < n; ++i)
            ((int32_t *)p)[i] = (int32_t)gr_gen_int((int)gen, GR_C_I32, k, begin + i);
        break;
    case GR_I64:
        for (uint64_t i = 0; i < n; ++i)
            ((int64_t *)p)[i] = gr_gen_int((int)gen, GR_C_I64, k, begin + i);
        break;
    case GR_F16:
    case GR_BF16:
        for (uint64_t i = 0; i < n; ++i)
            ((uint16_t *)p)[i] = gr_gen_half_bits((int)gen, (int)d->g.dtype, k, begin + i);
        break;
    }
}

/* Input buffer 0 holds the gate at this rank's global indices. */
static gr_result_t fill_gate(bench_dist_t *d, gr_gen_t gate)
{
    const uint64_t begin = (uint64_t)d->rank * d->g.n;
    if (d->cfg.backend == GR_BACKEND_CPU) {
        fill_host(d, gate, begin);
        return GR_SUCCESS;
    }
#ifdef GR_WITH_CUDA
    GR_CUDA_CHECK(gr_cuda_launch_generate(bench_cuda_input(d->cuda, 0), (int)d->g.dtype, (int)gate, BENCH_DIST_SEED,
                                          begin, d->g.n, d->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
    return GR_SUCCESS;
#else
    return GR_ERR_NOT_BUILT;
#endif
}

/* Back to the data the harness times every row on (bench_cuda_fill, cpu_fill). */
static gr_result_t refill_timed(bench_dist_t *d)
{
    const gr_gen_t gen = is_float(d->g.dtype) ? GR_GEN_UNIFORM : GR_GEN_RANDINT;
    if (d->cfg.backend == GR_BACKEND_CPU) {
        fill_host(d, gen, 0);
        return GR_SUCCESS;
    }
#ifdef GR_WITH_CUDA
    return bench_cuda_fill(d->cuda, gen, 1);
#else
    return GR_ERR_NOT_BUILT;
#endif
}

/* ---------------------------------------------------------------------------
 * The rows. One run each; res != NULL: a checked run, the sum in *res on rank 0.
 * ------------------------------------------------------------------------- */

static void res_float(bench_result_t *res, double f)
{
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->f = f;
}

static void res_int(bench_result_t *res, int64_t i)
{
    memset(res, 0, sizeof(*res));
    res->kind = BENCH_RES_VALUE;
    res->is_int = 1;
    res->i = i;
}

/* gpureduce as a user calls it: one call, the exact partials combined at root 0. */
static gr_result_t run_gr(bench_dist_t *d, int buf, bench_result_t *res)
{
    gr_desc_t desc;
    gr_desc_init(&desc);
    desc.dtype = d->g.dtype;
    desc.root = 0;
    desc.all_ranks = 0;
    gr_value_t v;
    memset(&v, 0xFF, sizeof(v)); /* poison: a value the call did not write is caught */
    if (d->cfg.backend == GR_BACKEND_CPU) {
        GR_CHECK(gr_reduce_host(d->cfg.ctx, d->host, d->g.n, &desc, &v, NULL));
    } else {
#ifdef GR_WITH_CUDA
        GR_CHECK(gr_reduce_device(d->cfg.ctx, bench_cuda_input(d->cuda, buf), d->g.n, &desc, &v, NULL));
#else
        return GR_ERR_NOT_BUILT;
#endif
    }
    if (!res)
        return GR_SUCCESS;
    const int ok = v.valid == 1 && v.count == (uint64_t)d->np * d->g.n;
    if (v.is_integer == 1)
        res_int(res, ok && !v.overflow ? v.i : INT64_MIN);
    else
        res_float(res, ok ? v.f : (double)NAN);
    return GR_SUCCESS;
}

#ifdef GR_WITH_CUDA
/* CUB's temp storage for the group, allocated outside timing (two-phase protocol). */
static gr_result_t cub_prepare(bench_dist_t *d)
{
    size_t bytes = 0;
    GR_CUDA_CHECK(gr_bench_cub_sum((int)d->g.dtype, bench_cuda_input(d->cuda, 0), d->g.n, d->acc_dev, NULL, &bytes,
                                   d->stream));
    if (bytes > d->cub_temp_cap || !d->cub_temp) {
        if (d->cub_temp)
            GR_CUDA_CHECK(cudaFree(d->cub_temp));
        d->cub_temp = NULL;
        d->cub_temp_cap = 0;
        GR_CUDA_CHECK(cudaMalloc(&d->cub_temp, bytes ? bytes : 1));
        d->cub_temp_cap = bytes;
    }
    d->cub_temp_bytes = bytes;
    return GR_SUCCESS;
}

/*
 * What a user writes by hand with CUB and MPI: the sum on the default stream,
 * cudaMemcpy of the 8-byte result into a host variable (it waits for the
 * kernel), MPI_Reduce to rank 0. f32 and f64 are summed in f64, i32 and i64
 * in int64, as in every row of the bench.
 */
static gr_result_t run_cub_mpi(bench_dist_t *d, int buf, bench_result_t *res)
{
    const int fl = is_float(d->g.dtype);
    double f = NAN, fsum = NAN;
    int64_t i = INT64_MIN, isum = INT64_MIN;
    if (res)
        GR_CUDA_CHECK(cudaMemset(d->acc_dev, 0xFF, GR_BENCH_ACC_BYTES));
    GR_CUDA_CHECK(gr_bench_cub_sum((int)d->g.dtype, bench_cuda_input(d->cuda, buf), d->g.n, d->acc_dev, d->cub_temp,
                                   &d->cub_temp_bytes, (cudaStream_t)0));
    GR_CUDA_CHECK(cudaMemcpy(fl ? (void *)&f : (void *)&i, d->acc_dev, GR_BENCH_ACC_BYTES, cudaMemcpyDeviceToHost));
    if (fl)
        GR_MPI_CHECK(MPI_Reduce(&f, &fsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    else
        GR_MPI_CHECK(MPI_Reduce(&i, &isum, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
    if (res) {
        if (fl)
            res_float(res, fsum);
        else
            res_int(res, isum);
    }
    return GR_SUCCESS;
}
#endif

#ifdef GR_HAVE_NCCL
/*
 * The same with NCCL: the sum, ncclReduce of the accumulator to rank 0 on the
 * same stream, the root's copy of it to host memory, and a stream sync (every
 * rank: before it may reuse its buffers; the root: the result is on the host).
 */
static gr_result_t run_cub_nccl(bench_dist_t *d, int buf, bench_result_t *res)
{
    const int fl = is_float(d->g.dtype);
    if (res) {
        GR_CUDA_CHECK(cudaMemsetAsync(d->acc_dev, 0xFF, GR_BENCH_ACC_BYTES, d->stream));
        GR_CUDA_CHECK(cudaMemsetAsync(d->recv_dev, 0xFF, GR_BENCH_ACC_BYTES, d->stream));
        GR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
        memset(d->acc_pinned, 0xFF, GR_BENCH_ACC_BYTES);
    }
    GR_CUDA_CHECK(gr_bench_cub_sum((int)d->g.dtype, bench_cuda_input(d->cuda, buf), d->g.n, d->acc_dev, d->cub_temp,
                                   &d->cub_temp_bytes, d->stream));
    BD_NCCL_CHECK(ncclReduce(d->acc_dev, d->recv_dev, 1, fl ? ncclFloat64 : ncclInt64, ncclSum, 0, d->nccl,
                             d->stream));
    if (d->rank == 0)
        GR_CUDA_CHECK(cudaMemcpyAsync(d->acc_pinned, d->recv_dev, GR_BENCH_ACC_BYTES, cudaMemcpyDeviceToHost,
                                      d->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
    if (res) {
        if (fl) {
            double f;
            memcpy(&f, d->acc_pinned, sizeof(f));
            res_float(res, f);
        } else {
            int64_t i;
            memcpy(&i, d->acc_pinned, sizeof(i));
            res_int(res, i);
        }
    }
    return GR_SUCCESS;
}
#endif

static gr_result_t run_row(bench_dist_t *d, int kind, int buf, bench_result_t *res)
{
    switch (kind) {
    case BENCH_DIST_GR:
        return run_gr(d, buf, res);
#ifdef GR_WITH_CUDA
    case BENCH_DIST_CUB_MPI:
        return run_cub_mpi(d, buf, res);
#endif
#ifdef GR_HAVE_NCCL
    case BENCH_DIST_CUB_NCCL:
        return run_cub_nccl(d, buf, res);
#endif
    default:
        GR_FAIL(GR_ERR_NOT_BUILT, "distributed row %d is not built into this gpureduce", kind);
    }
}

/* ---------------------------------------------------------------------------
 * Checks, timing, output
 * ------------------------------------------------------------------------- */

static int dist_result_ok(const bench_result_t *res, uint64_t want)
{
    if (res->is_int)
        return res->i == (int64_t)want;
    return res->f == (double)want; /* exact: every partial sum is an integer below 2^53 */
}

/* warm-up, then the timed runs of row `kind` into d->t, each after a barrier */
static gr_result_t time_dist_row(bench_dist_t *d, int kind)
{
    const int W = d->cfg.warmup < 1 ? 1 : d->cfg.warmup; /* the first run loads kernels, NCCL connects */
    const int nbuf = d->g.nbuf > 0 ? d->g.nbuf : 1;
    for (int w = 0; w < W; ++w) {
        GR_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        GR_CHECK(run_row(d, kind, w % nbuf, NULL));
    }
    for (int k = 0; k < d->cfg.iters; ++k) {
        GR_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        const double t0 = gr_now();
        /* the next buffer of the rotation set each run, as for the other rows */
        GR_CHECK(run_row(d, kind, (W + k) % nbuf, NULL));
        d->t[k] = gr_now() - t0;
    }
    return GR_SUCCESS;
}

typedef struct dist_row {
    int kind;
    long long wrong;
    int timed;
    double st[4];   /* median, min, max, p99 of the per-run maxima (rank 0), seconds */
    double rk[3];   /* MIN, average, MAX over ranks of each rank's median */
} dist_row_t;

static void csv_num(FILE *f, int ok, double x)
{
    if (ok && isfinite(x))
        fprintf(f, "%.4f", x);
}

static const char *mem_label(const bench_dist_t *d)
{
    if (d->cfg.backend == GR_BACKEND_CPU)
        return "host";
    return d->g.in_l2 ? "L2" : "hbm";
}

/* A time in us for JSON: "%.4f" with --full (as time_us's median, min, max, p99), else as bench_json_num. */
static void json_us(FILE *f, int ok, int full, double us)
{
    if (ok && full && isfinite(us))
        fprintf(f, "%.4f", us);
    else
        bench_json_num(f, ok, us);
}

static void print_rows(bench_dist_t *d, const dist_row_t *rows, int nrows)
{
    FILE *f = d->cfg.out;
    const bench_group_t *g = &d->g;
    double t_ref[2] = {NAN, NAN}; /* cub+mpi, cub+nccl */
    for (int r = 0; r < nrows; ++r)
        if (rows[r].timed && rows[r].kind != BENCH_DIST_GR)
            t_ref[rows[r].kind - 1] = rows[r].st[0];
    if (d->cfg.format == CLI_FMT_TABLE) {
        FILE *o = f; /* the columns of the local rows, then the distributed ones before the note */
        fprintf(o, "#%13s %12s %5s  %-10s %-4s %11s", "size(B)", "count", "dtype", "variant", "mem", "time(us)");
        if (d->cfg.full)
            fprintf(o, " %10s %10s %10s", "min(us)", "max(us)", "p99(us)");
        fprintf(o, " %9s %7s %7s %7s %7s %10s %10s %10s %7s %7s  %s\n", "GB/s", "%copy", "%peak", "xCUB", "#wrong",
                "rk-min(us)", "rk-avg(us)", "rk-max(us)", "x-mpi", "x-nccl", "note (distributed rows)");
    }
    for (int r = 0; r < nrows; ++r) {
        const dist_row_t *ro = &rows[r];
        const int ok = ro->timed;
        const double t = ro->st[0];
        const double gbps = ok ? (double)g->bytes / t / 1e9 : NAN;
        const double pct_peak = d->cfg.backend == GR_BACKEND_CUDA && d->cfg.peak_gbps > 0
                                    ? 100.0 * gbps / d->cfg.peak_gbps
                                    : NAN;
        const double x_mpi = t_ref[0] / t, x_nccl = t_ref[1] / t;
        if (ok && ro->kind == BENCH_DIST_GR)
            for (int k = 0; k < 2; ++k) {
                const double x = k ? x_nccl : x_mpi;
                if (!isfinite(x))
                    continue;
                d->nx[k]++;
                if (x < d->xlo[k]) {
                    d->xlo[k] = x;
                    d->xlo_at[k] = *g;
                }
                if (x > d->xhi[k]) {
                    d->xhi[k] = x;
                    d->xhi_at[k] = *g;
                }
            }
        char wrong[24];
        if (d->cfg.check > 0)
            snprintf(wrong, sizeof(wrong), "%lld", ro->wrong);
        else
            snprintf(wrong, sizeof(wrong), "-");
        char note[320];
        snprintf(note, sizeof(note), "%s%s", ro->wrong ? "WRONG: not timed; " : "", d->cfg.note[ro->kind]);
        const char *name = d->cfg.name[ro->kind];

        if (d->cfg.format == CLI_FMT_TABLE) {
            char c_t[32], c_min[32], c_max[32], c_p99[32], c_gb[32], c_pp[32], c_r0[32], c_r1[32], c_r2[32],
                c_xm[32], c_xn[32];
            bench_fmt_num(c_t, sizeof(c_t), ok, "%.2f", t * 1e6);
            bench_fmt_num(c_min, sizeof(c_min), ok, "%.2f", ro->st[1] * 1e6);
            bench_fmt_num(c_max, sizeof(c_max), ok, "%.2f", ro->st[2] * 1e6);
            bench_fmt_num(c_p99, sizeof(c_p99), ok, "%.2f", ro->st[3] * 1e6);
            bench_fmt_num(c_gb, sizeof(c_gb), ok, "%.1f", gbps);
            bench_fmt_num(c_pp, sizeof(c_pp), ok, "%.1f", pct_peak);
            bench_fmt_num(c_r0, sizeof(c_r0), ok, "%.2f", ro->rk[0] * 1e6);
            bench_fmt_num(c_r1, sizeof(c_r1), ok, "%.2f", ro->rk[1] * 1e6);
            bench_fmt_num(c_r2, sizeof(c_r2), ok, "%.2f", ro->rk[2] * 1e6);
            bench_fmt_num(c_xm, sizeof(c_xm), ok, "%.2f", x_mpi);
            bench_fmt_num(c_xn, sizeof(c_xn), ok, "%.2f", x_nccl);
            fprintf(f, "%14llu %12llu %5s  %-10s %-4s %11s", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), name, mem_label(d), c_t);
            if (d->cfg.full)
                fprintf(f, " %10s %10s %10s", c_min, c_max, c_p99);
            fprintf(f, " %9s %7s %7s %7s %7s %10s %10s %10s %7s %7s  %s\n", c_gb, "-", c_pp, "-", wrong, c_r0, c_r1,
                    c_r2, c_xm, c_xn, note);
        } else if (d->cfg.format == CLI_FMT_CSV) {
            fprintf(f, "%llu,%llu,%s,%s,%s,", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), name, mem_label(d));
            const double cols[4] = {t * 1e6, ro->st[1] * 1e6, ro->st[2] * 1e6, ro->st[3] * 1e6};
            for (int k = 0; k < (d->cfg.full ? 4 : 1); ++k) {
                csv_num(f, ok, cols[k]);
                fputc(',', f);
            }
            /* gbps, pct_copy (none: the copy is another row's), pct_peak, x_cub (none) */
            csv_num(f, ok, gbps);
            fputs(",,", f);
            csv_num(f, ok, pct_peak);
            fputs(",,", f);
            fprintf(f, "%s,\"%s\",%d,", d->cfg.check > 0 ? wrong : "", note, d->np);
            for (int k = 0; k < 3; ++k) {
                csv_num(f, ok, ro->rk[k] * 1e6);
                fputc(',', f);
            }
            csv_num(f, ok, x_mpi);
            fputc(',', f);
            csv_num(f, ok, x_nccl);
            fputc('\n', f);
        } else {
            fprintf(f, "%s\n    {\"size_bytes\": %llu, \"count\": %llu, \"dtype\": \"%s\", \"variant\": \"%s\", "
                       "\"mem\": \"%s\", \"time_us\": ",
                    *d->cfg.rows_printed ? "," : "", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), name, mem_label(d));
            if (ok && d->cfg.full)
                fprintf(f, "{\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"p99\": %.4f}", t * 1e6,
                        ro->st[1] * 1e6, ro->st[2] * 1e6, ro->st[3] * 1e6);
            else
                bench_json_num(f, ok, t * 1e6);
            fprintf(f, ", \"gbps\": ");
            bench_json_num(f, ok, gbps);
            fprintf(f, ", \"pct_copy\": null, \"pct_peak\": ");
            bench_json_num(f, ok, pct_peak);
            fprintf(f, ", \"x_cub\": null, \"wrong\": ");
            if (d->cfg.check > 0)
                fprintf(f, "%lld", ro->wrong);
            else
                fprintf(f, "null");
            fprintf(f, ", \"note\": ");
            json_string(f, note);
            /* the rank times in time_us's own format, so that max <= median holds as printed */
            fprintf(f, ", \"np\": %d, \"rank_us\": {\"min\": ", d->np);
            json_us(f, ok, d->cfg.full, ro->rk[0] * 1e6);
            fprintf(f, ", \"avg\": ");
            json_us(f, ok, d->cfg.full, ro->rk[1] * 1e6);
            fprintf(f, ", \"max\": ");
            json_us(f, ok, d->cfg.full, ro->rk[2] * 1e6);
            fprintf(f, "}, \"x_mpi\": ");
            bench_json_num(f, ok, x_mpi);
            fprintf(f, ", \"x_nccl\": ");
            bench_json_num(f, ok, x_nccl);
            fprintf(f, "}");
        }
        (*d->cfg.rows_printed)++;
    }
    if (d->cfg.format == CLI_FMT_TABLE && nrows > 0)
        fprintf(f, "\n");
    fflush(f);
}

void bench_dist_group(bench_dist_t *d, const bench_group_t *g, void *host, bench_cuda_t *cuda)
{
    d->g = *g;
    d->host = host;
#ifdef GR_WITH_CUDA
    d->cuda = cuda;
#else
    (void)cuda;
#endif
    dist_row_t rows[BENCH_DIST_KINDS];
    int nrows = 0;
    for (int k = 0; k < BENCH_DIST_KINDS; ++k)
        if (d->cfg.want[k]) {
            memset(&rows[nrows], 0, sizeof(rows[nrows]));
            rows[nrows++].kind = k;
        }
    if (nrows == 0)
        return;
    gr_result_t r = GR_SUCCESS;
#ifdef GR_WITH_CUDA
    if (d->cfg.backend == GR_BACKEND_CUDA && (d->cfg.want[BENCH_DIST_CUB_MPI] || d->cfg.want[BENCH_DIST_CUB_NCCL]))
        r = cub_prepare(d);
#endif
    /* every rank must be ready before the first collective run */
    int ok = r == GR_SUCCESS, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok)
        cli_die("gpureduce bench", ok ? GR_ERR_DEVMEM : r, "setting up the distributed rows (CUB temp storage)");

    /* exact gates over global indices; rank 0 counts what it got wrong, then tells every rank */
    long long wrong[BENCH_DIST_KINDS] = {0};
    if (d->cfg.check > 0) {
        const gr_gen_t gates[2] = {GR_GEN_ONES, GR_GEN_IOTA};
        const uint64_t global_n = (uint64_t)d->np * g->n;
        for (int gi = 0; gi < 2; ++gi) {
            if ((r = fill_gate(d, gates[gi])) != GR_SUCCESS)
                cli_die("gpureduce bench", r, "filling a gate of the distributed rows");
            const uint64_t want = bench_gate_sum(gates[gi], g->dtype, global_n);
            for (int k = 0; k < nrows; ++k)
                for (int c = 0; c < d->cfg.check; ++c) {
                    bench_result_t res;
                    memset(&res, 0, sizeof(res));
                    if ((r = run_row(d, rows[k].kind, 0, &res)) != GR_SUCCESS)
                        cli_die("gpureduce bench", r, d->cfg.name[rows[k].kind]);
                    if (d->rank == 0 && !dist_result_ok(&res, want)) {
                        wrong[k]++;
                        GR_INFO(GR_SUB_BENCH, "bench: %s %s n=%llu x %d ranks, gate %s: got %.17g / %lld, want %llu",
                                d->cfg.name[rows[k].kind], gr_dtype_name(g->dtype), (unsigned long long)g->n, d->np,
                                gr_gen_name(gates[gi]), res.f, (long long)res.i, (unsigned long long)want);
                    }
                }
        }
        if ((r = refill_timed(d)) != GR_SUCCESS)
            cli_die("gpureduce bench", r, "refilling the timed data");
    }
    if (MPI_Bcast(wrong, nrows, MPI_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce bench", GR_ERR_MPI, "MPI_Bcast of #wrong");

    /* time; then the per-run maxima to rank 0, and each rank's median MIN, SUM, MAX */
    const int R = d->cfg.iters;
    double med[BENCH_DIST_KINDS] = {0}, rk_min[BENCH_DIST_KINDS], rk_sum[BENCH_DIST_KINDS], rk_max[BENCH_DIST_KINDS];
    for (int k = 0; k < nrows; ++k) {
        rows[k].wrong = wrong[k];
        if (wrong[k])
            continue; /* never a speed for a wrong row */
        if ((r = time_dist_row(d, rows[k].kind)) != GR_SUCCESS)
            cli_die("gpureduce bench", r, d->cfg.name[rows[k].kind]);
        if (MPI_Reduce(d->t, d->tmax, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce bench", GR_ERR_MPI, "MPI_Reduce of the run times");
        double lo, hi;
        stats3(d->t, R, &med[k], &lo, &hi); /* this rank's own median (d->t is reordered) */
        if (d->rank == 0) {
            stats3(d->tmax, R, &rows[k].st[0], &rows[k].st[1], &rows[k].st[2]); /* sorted now */
            int p = (int)ceil(0.99 * R) - 1;
            rows[k].st[3] = d->tmax[p < 0 ? 0 : p];
            rows[k].timed = 1;
        }
    }
    if (MPI_Reduce(med, rk_min, nrows, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(med, rk_sum, nrows, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(med, rk_max, nrows, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce bench", GR_ERR_MPI, "MPI_Reduce of the per-rank medians");
    if (d->rank != 0)
        return;
    for (int k = 0; k < nrows; ++k) {
        rows[k].rk[0] = rk_min[k];
        rows[k].rk[1] = fmin(fmax(rk_sum[k] / d->np, rk_min[k]), rk_max[k]); /* no rounding past the ends */
        rows[k].rk[2] = rk_max[k];
        if (rows[k].wrong)
            (*d->cfg.wrong_rows)++;
    }
    print_rows(d, rows, nrows);
}

/* ---------------------------------------------------------------------------
 * Header and summary
 * ------------------------------------------------------------------------- */

static void selected_names(const bench_dist_t *d, char *buf, size_t len, const char *sep, const char *quote)
{
    buf[0] = '\0';
    for (int k = 0; k < BENCH_DIST_KINDS; ++k)
        if (d->cfg.want[k]) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s%s%s", used ? sep : "", quote, d->cfg.name[k], quote);
        }
}

void bench_dist_header(const bench_dist_t *d)
{
    if (d->rank != 0)
        return;
    FILE *f = d->cfg.out;
    char names[128];
    char nccl[96] = "";
    const char *nvls = gr_env(GR_ENV_NCCL_NVLS_ENABLE);
    int nvls_by_us = 0;
    if (!nvls)
        nvls = "";
#ifdef GR_HAVE_NCCL
    if (d->cfg.want[BENCH_DIST_CUB_NCCL])
        snprintf(nccl, sizeof(nccl), "%d.%d.%d", d->nccl_version / 10000, d->nccl_version / 100 % 100,
                 d->nccl_version % 100);
    nvls_by_us = d->nvls_set;
#endif
    if (d->cfg.format == CLI_FMT_JSON) {
        selected_names(d, names, sizeof(names), ", ", "\"");
        fprintf(f, "  \"dist\": {\"rows\": [%s], \"np\": %d, \"iters\": %d, \"warmup\": %d, \"check\": %d, "
                   "\"sizes_per_rank\": true, \"time\": \"median over runs of the MAX over ranks\", \"nccl\": ",
                names, d->np, d->cfg.iters, d->cfg.warmup < 1 ? 1 : d->cfg.warmup, d->cfg.check);
        if (nccl[0])
            fprintf(f, "\"%s\", \"nccl_nvls_enable\": \"%s\"},\n", nccl, nvls);
        else
            fprintf(f, "null},\n");
        return;
    }
    selected_names(d, names, sizeof(names), " ", "");
    fprintf(f, "# distributed rows (%s): np %d; sizes are per rank: each rank reduces count elements of its own, "
               "the global sum covers np x count;\n"
               "#   end to end, the global sum in rank 0's host memory; host clock, MPI_Barrier before each run; "
               "time = median over %d runs of the slowest rank (per-run MAX over ranks);\n"
               "#   rk-min/avg/max = MIN/average/MAX over ranks of each rank's own median; x-mpi, x-nccl = cub+mpi, "
               "cub+nccl time / row time; GB/s = one rank's bytes / time;\n"
               "#   gates: all ones and iota over global indices (rank r holds [r count, (r+1) count)), the exact "
               "global sum checked on rank 0",
            names, d->np, d->cfg.iters);
    if (nccl[0])
        fprintf(f, "; NCCL %s, NCCL_NVLS_ENABLE=%s%s", nccl, nvls, nvls_by_us ? " (set by gpureduce)" : "");
    else if (d->cfg.backend == GR_BACKEND_CUDA && !bench_dist_have_nccl())
        fprintf(f, "; cub+nccl not built (NCCL not found at configure time)");
    fprintf(f, "\n");
}

static void size_text(const bench_group_t *g, char *buf, size_t len)
{
    uint64_t s = g->n;
    if (s && !(s & (s - 1))) {
        int e = 0;
        while ((1ull << e) != s)
            ++e;
        snprintf(buf, len, "2^%d %s", e, gr_dtype_name(g->dtype));
    } else {
        snprintf(buf, len, "%llu %s", (unsigned long long)s, gr_dtype_name(g->dtype));
    }
}

void bench_dist_summary(const bench_dist_t *d)
{
    if (d->rank != 0 || d->cfg.format == CLI_FMT_JSON || !d->cfg.want[BENCH_DIST_GR])
        return;
    static const char *const base[2] = {"cub+mpi", "cub+nccl"};
    for (int k = 0; k < 2; ++k) {
        if (!d->nx[k])
            continue;
        char lo[64], hi[64];
        size_text(&d->xlo_at[k], lo, sizeof(lo));
        size_text(&d->xhi_at[k], hi, sizeof(hi));
        fprintf(d->cfg.out, "# distributed: gr vs %s (%s time / gr time), np %d, %d group(s): lowest %.2fx at %s, "
                            "highest %.2fx at %s\n",
                base[k], base[k], d->np, d->nx[k], d->xlo[k], lo, d->xhi[k], hi);
    }
    fflush(d->cfg.out);
}
