/*
 * cg.h - what the parts of gpureduce-cg share: the problem, the solver's
 * vectors, and one table of vector operations per place the vectors live
 * (cg_cpu.c: host memory; cg_cuda.c + cg_kernels.cu: the GPU).
 */
#ifndef CG_H
#define CG_H

#include <gpureduce.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The solver's vectors. Each holds this rank's nz planes of n*n points with
 * one halo plane below and one above: (nz + 2) * n * n doubles, point
 * (i, j, kz) at (kz + 1) * n * n + j * n + i. */
enum { CG_X, CG_R, CG_P, CG_S, CG_W, CG_B, CG_NVEC };

typedef struct cg cg_t;

/* A backend's vector operations; each returns 0, or -1 with cg->err set. */
typedef struct cg_ops {
    const char *name;
    int (*init)(cg_t *cg);                 /* allocate the vectors (zeroed), b from the formula */
    void (*fini)(cg_t *cg);
    int (*halo)(cg_t *cg, double *v);      /* fill v's halo planes from the neighbours (cg_halo_mpi) */
    /* out = A v, or out = b - A v when b is not NULL (v's halos must be current) */
    int (*apply)(cg_t *cg, double *out, const double *v, const double *b);
    int (*update)(cg_t *cg, double alpha, double beta); /* cg_update_point at every point */
    /* --update device (NULL where the vectors are not on a GPU): the same update, queued before the dots'
     * values reach the host; alpha and beta from the two gr_value_t at cg->vals_dev (gpureduce's ordered
     * result), nothing when the stopping test holds (cg_point.h: cg_step, cg_recursive_residual) */
    int (*update_dev)(cg_t *cg, double gamma_prev, double alpha_prev, int first, double bnorm, double tol);
    int (*plane_to_host)(cg_t *cg, const double *v, int64_t kz, double *host); /* interior plane kz */
    int (*sync)(cg_t *cg);                 /* the vectors are up to date for a reader outside the stream */
    /* --dots cub-mpi: out[j] = this rank's sum of x[j][i] * y[j][i] over its interior points */
    int (*local_dots)(cg_t *cg, const double *const *x, const double *const *y, int k, double *out);
    /* --phases (NULL where the vectors are not on a GPU): mark point p (CG_MARK_*) of iteration it on the
     * stream; phases: after the stream's last work, the GPU time of each phase (CG_PHASES) summed over the
     * iterations 1 .. it - 1 that were marked whole, and how many those were */
    int (*mark)(cg_t *cg, int64_t it, int p);
    int (*phases)(cg_t *cg, double *t, int64_t *iters);
} cg_ops_t;

/* --phases: the marks of an iteration on the stream, and the phases between them: stencil (the halo
 * exchange and A r), dots (r.r and r.w: the GPU work queued for them, to its end), values (from there to
 * the values on the host: the host's wait and, on its side, the combine), update (alpha and beta on the
 * host, the update's launch and kernel). A mark the host records after it waited times the host. With
 * --update device nothing on the stream waits for the host: values is 0 and dots ends when the values are
 * in device memory (one rank, fast: the batch's kernel; else after this rank's combine). */
enum { CG_MARK_START, CG_MARK_STENCIL, CG_MARK_DOTS, CG_MARK_VALUES, CG_MARK_UPDATE, CG_MARKS };
enum { CG_PHASES = CG_MARKS - 1 };
/* --phases keeps the marks of at most this many iterations */
#define CG_PHASE_ITERS_MAX 4096

struct cg {
    /* the problem and this rank's slab */
    int64_t n;      /* points per dimension */
    int64_t nz, z0; /* this rank's planes [z0, z0 + nz) */
    int64_t plane;  /* n * n */
    int rank, np, below, above; /* neighbours, or MPI_PROC_NULL */
    MPI_Comm comm;
    char host[MPI_MAX_PROCESSOR_NAME];
    int gpu;        /* CUDA ordinal, -1 on the cpu backend */

    double *v[CG_NVEC];
    const cg_ops_t *ops;
    void *bs;       /* the backend's own state */

    /* gpureduce (--dots gpureduce) */
    gr_ctx_t ctx;
    gr_mode_t mode;
    void *stream;   /* the solver's CUDA stream (cudaStream_t), NULL on the cpu backend */
    void *vals_dev; /* --update device: 2 gr_value_t in device memory, the dots' ordered result */
    int64_t mark_it; /* --phases: the iteration being marked, -1 when none */

    char err[512];
};

/* MPI part of a halo exchange: send this rank's lowest and highest interior
 * planes down and up, receive the neighbours' into the halo planes (the
 * pointers are host memory). Returns 0 or -1 with cg->err set. */
int cg_halo_mpi(cg_t *cg, const double *send_lo, const double *send_hi, double *recv_lo, double *recv_hi);

/* Record an error in cg->err (printf format); returns -1. */
int cg_fail(cg_t *cg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

extern const cg_ops_t cg_cpu_ops;
#ifdef CG_WITH_CUDA
extern const cg_ops_t cg_cuda_ops;
/* Number of CUDA GPUs this process sees (0 when none, err says why). */
int cg_cuda_device_count(char *err, size_t len);
/* Make GPU `dev` current (the application's choice; the library is told GR_DEVICE_CURRENT). */
int cg_cuda_select(cg_t *cg, int dev);
#endif

#endif /* CG_H */
