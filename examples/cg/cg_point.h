/*
 * cg_point.h - the per-point arithmetic of gpureduce-cg, written once for
 * the host loops (cg_cpu.c) and the CUDA kernels (cg_kernels.cu).
 *
 * Every value a point gets depends on that point and its six neighbours
 * only, through the IEEE operations below, each rounded on its own: the
 * host code is compiled with -ffp-contract=off and the kernels with
 * -fmad=false, so no multiply-add is fused on either side and the CPU and
 * the GPU give the same bits. The dot products are the only place where
 * the number of ranks could enter, and they go through gpureduce.
 */
#ifndef CG_POINT_H
#define CG_POINT_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CG_HD __host__ __device__ static inline
#else
#define CG_HD static inline
#endif

/*
 * Right-hand side at interior point (i, j, k) of the global n^3 grid
 * (0-based), mesh width h = 1/(n+1): b = h^2 f(x, y, z) with
 * f = 1 + x (1 - y) + 2 y z^2 - 3 x z, a fixed polynomial with no symmetry
 * that a wrong index could hide behind.
 */
CG_HD double cg_rhs(int64_t i, int64_t j, int64_t k, int64_t n)
{
    const double h = 1.0 / (double)(n + 1);
    const double x = (double)(i + 1) * h;
    const double y = (double)(j + 1) * h;
    const double z = (double)(k + 1) * h;
    const double f = 1.0 + x * (1.0 - y) + 2.0 * y * (z * z) - 3.0 * x * z;
    return (h * h) * f;
}

/* (A v) at a point: the 7-point Laplacian times h^2, neighbours outside the
 * domain are 0 (zero Dirichlet boundary). The neighbours are added in one
 * fixed order. */
CG_HD double cg_stencil(double c, double xm, double xp, double ym, double yp, double zm, double zp)
{
    return 6.0 * c - (((((xm + xp) + ym) + yp) + zm) + zp);
}

/*
 * One point of a Chronopoulos-Gear CG iteration (docs/CG.md):
 *   p = r + beta p;  s = w + beta s;  x = x + alpha p;  r = r - alpha s
 * where w = A r and s = A p.
 */
CG_HD void cg_update_point(double alpha, double beta, double w, double *x, double *r, double *p, double *s)
{
    const double pn = *r + beta * *p;
    const double sn = w + beta * *s;
    *x = *x + alpha * pn;
    *r = *r - alpha * sn;
    *p = pn;
    *s = sn;
}

/*
 * An iteration's step from its two dot products gamma = r.r and delta = r.w
 * (Chronopoulos-Gear; first: the first iteration, beta = 0): alpha and beta
 * from the previous iteration's gamma and alpha. The host (cg.c) and, when
 * the update is queued before the values reach the host, the update kernel
 * (cg_kernels.cu) both take them from here: the same bits.
 */
CG_HD void cg_step(double gamma, double delta, double gamma_prev, double alpha_prev, int first, double *alpha,
                   double *beta)
{
    const double b = first ? 0.0 : gamma / gamma_prev;
    const double eta = first ? delta : delta - b * gamma / alpha_prev; /* = p.Ap */
    *alpha = gamma / eta;
    *beta = b;
}

/* The stopping test's residual, sqrt(r.r) / ||b||; the solver stops when it is <= tol or not finite. */
CG_HD double cg_recursive_residual(double gamma, double bnorm) { return sqrt(gamma) / bnorm; }

#endif /* CG_POINT_H */
