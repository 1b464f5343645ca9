/*
 * gr_vec_kernels.h - extern "C" launchers of the vector-op kernels (dot.cu,
 * argext.cu): dot and sum of squares (fast and exact), argmin/argmax. Plain
 * C, included by the cuda backend (src/backend/cuda/backend_cuda_vec.c).
 *
 * Every launcher writes one record per block to rec (device memory, grid
 * records) on stream; the host copies them back and folds them in any order:
 * exact limbs and argext states are order-free, fast block sums enter the
 * exact accumulator one by one (so a fixed grid gives fixed bits).
 */
#ifndef GR_VEC_KERNELS_H
#define GR_VEC_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Wide accumulator geometry, equal to gr_wacc_t's (static-asserted on the host). */
#define GR_VEC_WLIMBS 144
#define GR_VEC_WBIAS 2240
/* Threads per block of every vector kernel. */
#define GR_VEC_BLOCK 256
/* At most this many elements per block per launch keep an exact block's int64 limbs
 * from overflowing (each element adds < 2^33 to a limb). */
#define GR_VEC_EXACT_PER_BLOCK ((uint64_t)1 << 29)

/* Fast dot / sum of squares: s[0] the plain sum, s[1] the sum of (x 2^-538)^2 for |x| > 2^486, s[2]
 * the sum of (x 2^537)^2 for |x| < 2^-511 (f64 nrm2 only: Blue's scaling); each a block's fixed tree. */
typedef struct gr_vec_fast_rec {
    double s[3];
} gr_vec_fast_rec_t;

/* Exact dot / sum of squares: a block's wide-accumulator limbs (unnormalised int64 sums) and counts. */
typedef struct gr_vec_exact_rec {
    int64_t limb[GR_VEC_WLIMBS];
    uint64_t nan, pinf, ninf, nonnegzero;
} gr_vec_exact_rec_t;

/* argmin/argmax: the order-free state of gr_argext_t (src/core/gr_vec.h), field for field. */
typedef struct gr_vec_arg_rec {
    double fmin, fmax;
    int64_t fmin_i, fmax_i;
    int64_t imin, imax;
    int64_t imin_i, imax_i;
    int64_t nan_i;
} gr_vec_arg_rec_t;

/*
 * dot(x, y) (y == NULL: sum of squares of x) of n elements of dtype (GR_C_*).
 * exact != 0: exact records (integers always take this path), else fast records. grid blocks of
 * GR_VEC_BLOCK threads; exact needs n <= grid * GR_VEC_EXACT_PER_BLOCK.
 */
cudaError_t gr_cuda_launch_dot(const void *x, const void *y, uint64_t n, int dtype, int exact, int grid, void *rec,
                               cudaStream_t stream);

/* argmin and argmax state of n elements of dtype, global indices base + i. */
cudaError_t gr_cuda_launch_argext(const void *x, uint64_t n, int dtype, int64_t base, int grid, gr_vec_arg_rec_t *rec,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_VEC_KERNELS_H */
