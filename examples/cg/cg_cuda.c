/*
 * cg_cuda.c - gpureduce-cg's vectors on the GPU: one non-blocking stream of
 * the solver's own, on which every kernel, copy and (through gr_call_t /
 * gr_config_t.stream) every gpureduce reduction is queued. The MPI library
 * is not assumed CUDA-aware: halo planes travel through pinned host buffers.
 */
#include "cg.h"
#include "cg_kernels.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cuda_bs {
    cudaStream_t stream;
    double *stage;     /* pinned: send lo, send hi, recv lo, recv hi; one plane each */
    void *cub_temp;    /* --dots cub-mpi: CUB's temporary storage */
    size_t cub_bytes;
    double *cub_out;   /* device: the k local sums */
    cudaEvent_t *ev;   /* --phases: CG_MARKS timing events per iteration, created at the first mark */
    int64_t ev_iters;  /* iterations with events: min(maxit + 1, CG_PHASE_ITERS_MAX) */
    int64_t ev_last;   /* the last iteration marked */
    unsigned char *ev_set; /* per iteration, a bit per mark recorded */
} cuda_bs_t;

#define CUDA_TRY(cg, call)                                                                                   \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess)                                                                               \
            return cg_fail(cg, "%s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)

int cg_cuda_device_count(char *err, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(err, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return 0;
    }
    if (n == 0)
        snprintf(err, len, "cudaGetDeviceCount: 0 devices");
    return n;
}

int cg_cuda_select(cg_t *cg, int dev)
{
    CUDA_TRY(cg, cudaSetDevice(dev));
    cg->gpu = dev;
    return 0;
}

static int cuda_init(cg_t *cg)
{
    cuda_bs_t *bs = (cuda_bs_t *)calloc(1, sizeof(*bs));
    if (!bs)
        return cg_fail(cg, "out of host memory");
    cg->bs = bs;
    CUDA_TRY(cg, cudaStreamCreateWithFlags(&bs->stream, cudaStreamNonBlocking));
    cg->stream = (void *)bs->stream;
    const size_t bytes = (size_t)((cg->nz + 2) * cg->plane) * sizeof(double);
    for (int j = 0; j < CG_NVEC; ++j) {
        cudaError_t e = cudaMalloc((void **)&cg->v[j], bytes);
        if (e != cudaSuccess)
            return cg_fail(cg, "cudaMalloc of %zu bytes for a vector: %s; use a smaller --n or more ranks (GPUs)",
                           bytes, cudaGetErrorString(e));
        CUDA_TRY(cg, cudaMemsetAsync(cg->v[j], 0, bytes, bs->stream));
    }
    CUDA_TRY(cg, cudaMallocHost((void **)&bs->stage, 4 * (size_t)cg->plane * sizeof(double)));
    CUDA_TRY(cg, cg_launch_rhs(cg->v[CG_B] + cg->plane, cg->n, cg->nz, cg->z0, bs->stream));
    /* x = 0, r = b, p = s = 0: the first iteration's beta is 0 */
    CUDA_TRY(cg, cudaMemcpyAsync(cg->v[CG_R], cg->v[CG_B], bytes, cudaMemcpyDeviceToDevice, bs->stream));
    CUDA_TRY(cg, cg_cub_dot_temp_bytes(cg->nz * cg->plane, &bs->cub_bytes));
    CUDA_TRY(cg, cudaMalloc(&bs->cub_temp, bs->cub_bytes ? bs->cub_bytes : 1));
    CUDA_TRY(cg, cudaMalloc((void **)&bs->cub_out, 4 * sizeof(double)));
    CUDA_TRY(cg, cudaMalloc(&cg->vals_dev, 2 * sizeof(gr_value_t)));
    CUDA_TRY(cg, cudaMemsetAsync(cg->vals_dev, 0, 2 * sizeof(gr_value_t), bs->stream));
    CUDA_TRY(cg, cudaStreamSynchronize(bs->stream));
    return 0;
}

static void cuda_fini(cg_t *cg)
{
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    if (bs && bs->stream)
        (void)cudaStreamSynchronize(bs->stream);
    for (int j = 0; j < CG_NVEC; ++j) {
        if (cg->v[j])
            (void)cudaFree(cg->v[j]);
        cg->v[j] = NULL;
    }
    if (bs) {
        if (bs->stage)
            (void)cudaFreeHost(bs->stage);
        if (bs->cub_temp)
            (void)cudaFree(bs->cub_temp);
        if (bs->cub_out)
            (void)cudaFree(bs->cub_out);
        if (cg->vals_dev)
            (void)cudaFree(cg->vals_dev);
        cg->vals_dev = NULL;
        for (int64_t j = 0; bs->ev && j < bs->ev_iters * CG_MARKS; ++j)
            if (bs->ev[j])
                (void)cudaEventDestroy(bs->ev[j]);
        free(bs->ev);
        free(bs->ev_set);
        if (bs->stream)
            (void)cudaStreamDestroy(bs->stream);
        free(bs);
    }
    cg->bs = NULL;
    cg->stream = NULL;
}

/* Interior planes to pinned buffers, MPI, pinned buffers to the halo planes. */
static int cuda_halo(cg_t *cg, double *v)
{
    if (cg->below == MPI_PROC_NULL && cg->above == MPI_PROC_NULL)
        return 0;
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    const size_t pb = (size_t)cg->plane * sizeof(double);
    double *send_lo = bs->stage, *send_hi = send_lo + cg->plane;
    double *recv_lo = send_hi + cg->plane, *recv_hi = recv_lo + cg->plane;
    if (cg->below != MPI_PROC_NULL)
        CUDA_TRY(cg, cudaMemcpyAsync(send_lo, v + cg->plane, pb, cudaMemcpyDeviceToHost, bs->stream));
    if (cg->above != MPI_PROC_NULL)
        CUDA_TRY(cg, cudaMemcpyAsync(send_hi, v + cg->nz * cg->plane, pb, cudaMemcpyDeviceToHost, bs->stream));
    CUDA_TRY(cg, cudaStreamSynchronize(bs->stream));
    if (cg_halo_mpi(cg, send_lo, send_hi, recv_lo, recv_hi) != 0)
        return -1;
    if (cg->below != MPI_PROC_NULL)
        CUDA_TRY(cg, cudaMemcpyAsync(v, recv_lo, pb, cudaMemcpyHostToDevice, bs->stream));
    if (cg->above != MPI_PROC_NULL)
        CUDA_TRY(cg, cudaMemcpyAsync(v + (cg->nz + 1) * cg->plane, recv_hi, pb, cudaMemcpyHostToDevice, bs->stream));
    return 0;
}

static int cuda_apply(cg_t *cg, double *out, const double *v, const double *b)
{
    CUDA_TRY(cg, cg_launch_apply(out, v, b, cg->n, cg->nz, ((cuda_bs_t *)cg->bs)->stream));
    return 0;
}

static int cuda_update(cg_t *cg, double alpha, double beta)
{
    const int64_t o = cg->plane;
    CUDA_TRY(cg, cg_launch_update(alpha, beta, cg->v[CG_W] + o, cg->v[CG_X] + o, cg->v[CG_R] + o, cg->v[CG_P] + o,
                                  cg->v[CG_S] + o, cg->nz * cg->plane, ((cuda_bs_t *)cg->bs)->stream));
    return 0;
}

static int cuda_update_dev(cg_t *cg, double gamma_prev, double alpha_prev, int first, double bnorm, double tol)
{
    const int64_t o = cg->plane;
    const gr_value_t *v = (const gr_value_t *)cg->vals_dev;
    CUDA_TRY(cg, cg_launch_update_dev(&v[0].f, &v[1].f, &v[0].valid, &v[1].valid, gamma_prev, alpha_prev, first,
                                      bnorm, tol, cg->v[CG_W] + o, cg->v[CG_X] + o, cg->v[CG_R] + o,
                                      cg->v[CG_P] + o, cg->v[CG_S] + o, cg->nz * cg->plane,
                                      ((cuda_bs_t *)cg->bs)->stream));
    return 0;
}

static int cuda_plane_to_host(cg_t *cg, const double *v, int64_t kz, double *host)
{
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    CUDA_TRY(cg, cudaMemcpyAsync(host, v + (kz + 1) * cg->plane, (size_t)cg->plane * sizeof(double),
                                 cudaMemcpyDeviceToHost, bs->stream));
    CUDA_TRY(cg, cudaStreamSynchronize(bs->stream));
    return 0;
}

static int cuda_sync(cg_t *cg)
{
    CUDA_TRY(cg, cudaStreamSynchronize(((cuda_bs_t *)cg->bs)->stream));
    return 0;
}

static int cuda_mark(cg_t *cg, int64_t it, int p);

/* --dots cub-mpi: CUB on the stream, then the k sums to the host (cg.c MPI_Allreduces them). */
static int cuda_local_dots(cg_t *cg, const double *const *x, const double *const *y, int k, double *out)
{
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    if (k > 4)
        return cg_fail(cg, "internal: %d dots at once, at most 4", k);
    const double *xi[4], *yi[4];
    for (int j = 0; j < k; ++j) {
        xi[j] = x[j] + cg->plane;
        yi[j] = y[j] + cg->plane;
    }
    CUDA_TRY(cg, cg_cub_dots(xi, yi, k, cg->nz * cg->plane, bs->cub_out, bs->cub_temp, bs->cub_bytes, bs->stream));
    CUDA_TRY(cg, cudaMemcpyAsync(out, bs->cub_out, (size_t)k * sizeof(double), cudaMemcpyDeviceToHost, bs->stream));
    if (cg->mark_it >= 0 && cuda_mark(cg, cg->mark_it, CG_MARK_DOTS) != 0)
        return -1;
    CUDA_TRY(cg, cudaStreamSynchronize(bs->stream));
    return 0;
}

/* --phases: an event per mark and iteration (the first CG_PHASE_ITERS_MAX iterations), created up front
 * so that recording one costs a cudaEventRecord and nothing else. */
static int cuda_mark(cg_t *cg, int64_t it, int p)
{
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    if (!bs->ev) {
        bs->ev_iters = CG_PHASE_ITERS_MAX;
        bs->ev = (cudaEvent_t *)calloc((size_t)(bs->ev_iters * CG_MARKS), sizeof(cudaEvent_t));
        bs->ev_set = (unsigned char *)calloc((size_t)bs->ev_iters, 1);
        if (!bs->ev || !bs->ev_set)
            return cg_fail(cg, "out of host memory for the --phases events");
        for (int64_t j = 0; j < bs->ev_iters * CG_MARKS; ++j)
            CUDA_TRY(cg, cudaEventCreate(&bs->ev[j]));
    }
    if (it < 0 || it >= bs->ev_iters)
        return 0;
    CUDA_TRY(cg, cudaEventRecord(bs->ev[it * CG_MARKS + p], bs->stream));
    bs->ev_set[it] |= (unsigned char)(1u << p);
    bs->ev_last = it;
    return 0;
}

static int cuda_phases(cg_t *cg, double *t, int64_t *iters)
{
    cuda_bs_t *bs = (cuda_bs_t *)cg->bs;
    for (int p = 0; p < CG_PHASES; ++p)
        t[p] = 0.0;
    *iters = 0;
    if (!bs->ev)
        return 0;
    CUDA_TRY(cg, cudaStreamSynchronize(bs->stream));
    /* iteration 0 (its calls allocate) and the last (it ends after the dots) are left out */
    for (int64_t it = 1; it < bs->ev_last && it < bs->ev_iters; ++it) {
        if (bs->ev_set[it] != (1u << CG_MARKS) - 1u)
            continue;
        for (int p = 0; p < CG_PHASES; ++p) {
            float ms = 0.0f;
            CUDA_TRY(cg, cudaEventElapsedTime(&ms, bs->ev[it * CG_MARKS + p], bs->ev[it * CG_MARKS + p + 1]));
            t[p] += 1e-3 * (double)ms;
        }
        ++*iters;
    }
    return 0;
}

const cg_ops_t cg_cuda_ops = {.name = "cuda", .init = cuda_init, .fini = cuda_fini, .halo = cuda_halo,
                              .apply = cuda_apply, .update = cuda_update, .update_dev = cuda_update_dev,
                              .plane_to_host = cuda_plane_to_host,
                              .sync = cuda_sync, .local_dots = cuda_local_dots, .mark = cuda_mark,
                              .phases = cuda_phases};
