/*
 * cg_kernels.h - the launchers of gpureduce-cg's CUDA kernels (cg_kernels.cu,
 * cg_cub.cu), callable from C. Each queues its work on `stream` and returns
 * the launch's error.
 */
#ifndef CG_KERNELS_H
#define CG_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* b at the nz planes of the slab starting at global plane z0 (interior pointer). */
cudaError_t cg_launch_rhs(double *b, int64_t n, int64_t nz, int64_t z0, cudaStream_t stream);
/* out = A v, or b - A v when b is not NULL; all three are whole vectors with halo planes. */
cudaError_t cg_launch_apply(double *out, const double *v, const double *b, int64_t n, int64_t nz,
                            cudaStream_t stream);
/* cg_update_point at count points (interior pointers). */
cudaError_t cg_launch_update(double alpha, double beta, const double *w, double *x, double *r, double *p, double *s,
                             int64_t count, cudaStream_t stream);
/* The same, queued before the iteration's dot products reach the host: alpha and beta from *gamma and
 * *delta (device memory; cg_step), nothing when the stopping test holds (cg_recursive_residual <= tol or not
 * finite) or *valid0 / *valid1 is 0. */
cudaError_t cg_launch_update_dev(const double *gamma, const double *delta, const int *valid0, const int *valid1,
                                 double gamma_prev, double alpha_prev, int first, double bnorm, double tol,
                                 const double *w, double *x, double *r, double *p, double *s, int64_t count,
                                 cudaStream_t stream);

/* --dots cub-mpi: bytes of CUB temporary storage for one dot of count elements. */
cudaError_t cg_cub_dot_temp_bytes(int64_t count, size_t *bytes);
/* out[j] = sum of x[j][i] * y[j][i], i < count, by cub::DeviceReduce::TransformReduce, one call per dot
 * (out is device memory of k doubles, temp of cg_cub_dot_temp_bytes). */
cudaError_t cg_cub_dots(const double *const *x, const double *const *y, int k, int64_t count, double *out,
                        void *temp, size_t temp_bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CG_KERNELS_H */
