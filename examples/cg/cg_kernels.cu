/*
 * cg_kernels.cu - gpureduce-cg's kernels: the right-hand side, the stencil
 * and the fused vector update, one thread per point, each a call of
 * cg_point.h's per-point arithmetic. No atomics and no reductions: every
 * point's value depends on its neighbours alone. Compiled with -fmad=false
 * (examples/cg/CMakeLists.txt), so the results are the host loops' bits.
 */
#include "cg_kernels.h"
#include "cg_point.h"

#define CG_BLOCK_X 128

/* Grid (ceil(n / CG_BLOCK_X), n, nz): thread (i, j, kz), no division per point. */
static dim3 plane_grid(int64_t n, int64_t nz)
{
    return dim3((unsigned)((n + CG_BLOCK_X - 1) / CG_BLOCK_X), (unsigned)n, (unsigned)nz);
}

__global__ void cg_rhs_kernel(double *b, int64_t n, int64_t z0)
{
    const int64_t i = (int64_t)blockIdx.x * CG_BLOCK_X + threadIdx.x, j = blockIdx.y, kz = blockIdx.z;
    if (i < n)
        b[(kz * n + j) * n + i] = cg_rhs(i, j, z0 + kz, n);
}

__global__ void cg_apply_kernel(double *__restrict__ out, const double *__restrict__ v,
                                const double *__restrict__ b, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * CG_BLOCK_X + threadIdx.x, j = blockIdx.y, kz = blockIdx.z;
    if (i >= n)
        return;
    const int64_t pl = n * n, c = (kz + 1) * pl + j * n + i;
    const double a = cg_stencil(v[c], i > 0 ? v[c - 1] : 0.0, i + 1 < n ? v[c + 1] : 0.0, j > 0 ? v[c - n] : 0.0,
                                j + 1 < n ? v[c + n] : 0.0, v[c - pl], v[c + pl]);
    out[c] = b ? b[c] - a : a;
}

/* cg_update_point at this thread's points of count, grid-stride. */
__device__ __forceinline__ void cg_update_range(double alpha, double beta, const double *__restrict__ w,
                                                double *__restrict__ x, double *__restrict__ r,
                                                double *__restrict__ p, double *__restrict__ s, int64_t count)
{
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < count; c += (int64_t)gridDim.x * blockDim.x) {
        double xc = x[c], rc = r[c], pc = p[c], sc = s[c];
        cg_update_point(alpha, beta, w[c], &xc, &rc, &pc, &sc);
        x[c] = xc;
        r[c] = rc;
        p[c] = pc;
        s[c] = sc;
    }
}

__global__ void cg_update_kernel(double alpha, double beta, const double *__restrict__ w, double *__restrict__ x,
                                 double *__restrict__ r, double *__restrict__ p, double *__restrict__ s, int64_t count)
{
    cg_update_range(alpha, beta, w, x, r, p, s, count);
}

/* The update of an iteration whose dot products are still on their way: alpha and beta from gamma and delta
 * (device memory, written in stream order by gpureduce's ordered result), nothing when the stopping test
 * holds (the host stops there too: the same arithmetic) or a value is not valid (the host reports that). */
__global__ void cg_update_dev_kernel(const double *__restrict__ gamma, const double *__restrict__ delta,
                                     const int *__restrict__ valid0, const int *__restrict__ valid1,
                                     double gamma_prev, double alpha_prev, int first, double bnorm, double tol,
                                     const double *__restrict__ w, double *__restrict__ x, double *__restrict__ r,
                                     double *__restrict__ p, double *__restrict__ s, int64_t count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory"); /* launched early (PDL): the dots' grid done first */
#endif
    if (!*valid0 || !*valid1)
        return;
    const double g = *gamma, d = *delta, res = cg_recursive_residual(g, bnorm);
    if (res <= tol || !isfinite(res))
        return;
    double alpha, beta;
    cg_step(g, d, gamma_prev, alpha_prev, first, &alpha, &beta);
    cg_update_range(alpha, beta, w, x, r, p, s, count);
}

/* The update's grid: 256 threads a block, at most 65536 blocks (grid-stride beyond). */
static unsigned update_grid(int64_t count)
{
    int64_t grid = (count + 255) / 256;
    if (grid > 65536)
        grid = 65536;
    return (unsigned)(grid < 1 ? 1 : grid);
}

extern "C" cudaError_t cg_launch_rhs(double *b, int64_t n, int64_t nz, int64_t z0, cudaStream_t stream)
{
    cg_rhs_kernel<<<plane_grid(n, nz), CG_BLOCK_X, 0, stream>>>(b, n, z0);
    return cudaGetLastError();
}

extern "C" cudaError_t cg_launch_apply(double *out, const double *v, const double *b, int64_t n, int64_t nz,
                                       cudaStream_t stream)
{
    cg_apply_kernel<<<plane_grid(n, nz), CG_BLOCK_X, 0, stream>>>(out, v, b, n);
    return cudaGetLastError();
}

extern "C" cudaError_t cg_launch_update(double alpha, double beta, const double *w, double *x, double *r, double *p,
                                        double *s, int64_t count, cudaStream_t stream)
{
    cg_update_kernel<<<update_grid(count), 256, 0, stream>>>(alpha, beta, w, x, r, p, s, count);
    return cudaGetLastError();
}

extern "C" cudaError_t cg_launch_update_dev(const double *gamma, const double *delta, const int *valid0,
                                            const int *valid1, double gamma_prev, double alpha_prev, int first,
                                            double bnorm, double tol, const double *w, double *x, double *r,
                                            double *p, double *s, int64_t count, cudaStream_t stream)
{
    /* programmatic dependent launch: its blocks may be placed while the dots' last block folds (the
     * kernel waits for that grid's end before it reads anything: griddepcontrol.wait) */
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(update_grid(count));
    cfg.blockDim = dim3(256);
    cfg.stream = stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, cg_update_dev_kernel, gamma, delta, valid0, valid1, gamma_prev, alpha_prev, first,
                              bnorm, tol, w, x, r, p, s, count);
}
