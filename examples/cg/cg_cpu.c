/*
 * cg_cpu.c - gpureduce-cg's vectors in host memory (--backend cpu, or no
 * GPU): plain loops over cg_point.h's per-point arithmetic. Compiled with
 * -ffp-contract=off so every operation rounds as in the CUDA kernels.
 */
#include "cg.h"
#include "cg_point.h"

#include <stdlib.h>
#include <string.h>

static int cpu_init(cg_t *cg)
{
    const size_t len = (size_t)((cg->nz + 2) * cg->plane);
    for (int j = 0; j < CG_NVEC; ++j) {
        cg->v[j] = (double *)calloc(len, sizeof(double));
        if (!cg->v[j])
            return cg_fail(cg, "cannot allocate %zu bytes of host memory for a vector; use a smaller --n or more ranks",
                           len * sizeof(double));
    }
    double *b = cg->v[CG_B] + cg->plane;
    for (int64_t kz = 0; kz < cg->nz; ++kz)
        for (int64_t j = 0; j < cg->n; ++j)
            for (int64_t i = 0; i < cg->n; ++i)
                b[(kz * cg->n + j) * cg->n + i] = cg_rhs(i, j, cg->z0 + kz, cg->n);
    /* x = 0, r = b, p = s = 0: the first iteration's beta is 0 */
    memcpy(cg->v[CG_R], cg->v[CG_B], len * sizeof(double));
    return 0;
}

static void cpu_fini(cg_t *cg)
{
    for (int j = 0; j < CG_NVEC; ++j) {
        free(cg->v[j]);
        cg->v[j] = NULL;
    }
}

/* Host memory: MPI reads and writes the planes in place. */
static int cpu_halo(cg_t *cg, double *v)
{
    return cg_halo_mpi(cg, v + cg->plane, v + cg->nz * cg->plane, v, v + (cg->nz + 1) * cg->plane);
}

static int cpu_apply(cg_t *cg, double *out, const double *v, const double *b)
{
    const int64_t n = cg->n, pl = cg->plane;
    for (int64_t kz = 0; kz < cg->nz; ++kz)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) {
                const int64_t c = (kz + 1) * pl + j * n + i;
                const double a = cg_stencil(v[c], i > 0 ? v[c - 1] : 0.0, i + 1 < n ? v[c + 1] : 0.0,
                                            j > 0 ? v[c - n] : 0.0, j + 1 < n ? v[c + n] : 0.0, v[c - pl], v[c + pl]);
                out[c] = b ? b[c] - a : a;
            }
    return 0;
}

static int cpu_update(cg_t *cg, double alpha, double beta)
{
    const int64_t first = cg->plane, end = (cg->nz + 1) * cg->plane;
    double *x = cg->v[CG_X], *r = cg->v[CG_R], *p = cg->v[CG_P], *s = cg->v[CG_S];
    const double *w = cg->v[CG_W];
    for (int64_t c = first; c < end; ++c)
        cg_update_point(alpha, beta, w[c], &x[c], &r[c], &p[c], &s[c]);
    return 0;
}

static int cpu_plane_to_host(cg_t *cg, const double *v, int64_t kz, double *host)
{
    memcpy(host, v + (kz + 1) * cg->plane, (size_t)cg->plane * sizeof(double));
    return 0;
}

static int cpu_sync(cg_t *cg)
{
    (void)cg;
    return 0;
}

/* --dots cub-mpi on the host: the loop a user writes, then MPI_Allreduce (in cg.c). */
static int cpu_local_dots(cg_t *cg, const double *const *x, const double *const *y, int k, double *out)
{
    const int64_t first = cg->plane, end = (cg->nz + 1) * cg->plane;
    for (int j = 0; j < k; ++j) {
        double s = 0.0;
        for (int64_t c = first; c < end; ++c)
            s += x[j][c] * y[j][c];
        out[j] = s;
    }
    return 0;
}

const cg_ops_t cg_cpu_ops = {.name = "cpu", .init = cpu_init, .fini = cpu_fini, .halo = cpu_halo,
                             .apply = cpu_apply, .update = cpu_update, .plane_to_host = cpu_plane_to_host,
                             .sync = cpu_sync, .local_dots = cpu_local_dots};
