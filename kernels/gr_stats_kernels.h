/*
 * gr_stats_kernels.h - extern "C" launcher of the one-pass statistics kernel
 * (kernels/stats.cu, --op stats on the GPU). Includable from C11 and .cu files.
 *
 * One read of the data gives: the element count, NaN / +Inf / -Inf counts,
 * min and max over the non-NaN values (-0.0 orders below +0.0; integers
 * exactly), the EXACT sum (floats: the exact-mode machinery of
 * kernels/gr_exact.cuh, i.e. the same integer limbs as the exact reduce, so
 * the rounded sum is the correctly rounded exact sum; integers: 128-bit
 * per thread, added to the same limbs), and (nf, mean, M2) of the finite
 * values for the variance.
 *
 * Variance method: each thread keeps shifted sums S1 = sum(x - K),
 * S2 = sum((x - K)^2) in f64, K = the thread's first finite element, and
 * turns them into (n, mean = K + S1/n, M2 = S2 - S1^2/n) at the end; threads,
 * warps, blocks and the per-block partials are merged by Chan, Golub and
 * LeVeque's formula in a fixed order (a shuffle tree in a warp, warps in
 * order, blocks in order by the last block). No float atomics: the result is
 * bitwise repeatable for a given (n, dtype, grid, block, data alignment).
 * Error bound: docs/STATS.md.
 *
 * Like every launcher in kernels/, it enqueues on the given stream and
 * returns the launch status, never an error of the kernel's execution.
 */
#ifndef GR_STATS_KERNELS_H
#define GR_STATS_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_common.h"
#include "gr_exact_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What one launch leaves in mapped pinned host memory, written by the last
 * block; `count` (= n) is written last, so a host that poisons it before the
 * launch can tell a result that was never written.
 */
typedef struct gr_stats_result {
    int64_t limb[GR_EXACT_LIMBS]; /* exact sum (gr_xacc_t layout, not normalised) */
    uint64_t count;               /* n */
    uint64_t nan, pinf, ninf;     /* floats */
    uint64_t nonnegzero;          /* floats: 1 when some finite value was not -0.0 */
    uint64_t nf;                  /* values in mean and m2 (finite ones; all for integers) */
    double mean, m2;              /* their mean and sum of squared deviations */
    double min, max;              /* floats: over non-NaN values; +Inf / -Inf when there are none */
    int64_t imin, imax;           /* integers: INT64_MAX / INT64_MIN when n = 0 */
    uint64_t flushes;             /* diagnostics: values added to the integer limbs */
} gr_stats_result_t;

/* Most blocks one launch may use (bounds the per-block partials of the scratch). */
#define GR_STATS_GRID_MAX 4096
/* Block size and grid when the caller has none: tuning/gr_tuning.h
 * (gr_tuning_for(GR_KF_STATS, ...), gr_cuda_grid). */

/*
 * One launch.
 * in:         n elements of dtype (GR_C_F32, F64, I32, I64), device-accessible,
 *             aligned to the element size; any offset from 16 bytes is fine.
 * grid:       1..GR_STATS_GRID_MAX; block: 128, 256 or 512.
 * round_vecs: debug: 16-byte vectors per thread between two normalisations
 *             of the float limbs, 1..GR_EXACT_ROUND_VECS; 0 = the maximum.
 * scratch:    gr_cuda_stats_scratch_bytes() of device memory, zeroed once;
 *             every launch leaves it zeroed. Launches sharing a scratch must
 *             be ordered (one stream).
 * result:     device view of mapped pinned host memory.
 */
typedef struct gr_cuda_stats_launch {
    const void *in;
    uint64_t n;
    int dtype;
    int grid;
    int block;
    unsigned int round_vecs;
    void *scratch;
    gr_stats_result_t *result;
    cudaStream_t stream;
} gr_cuda_stats_launch_t;

cudaError_t gr_cuda_launch_stats(const gr_cuda_stats_launch_t *l);
size_t gr_cuda_stats_scratch_bytes(void);
/* 1 when dtype has a stats kernel (f32, f64, i32, i64). */
int gr_cuda_stats_supported(int dtype);
cudaError_t gr_cuda_stats_occupancy(int dtype, int block, int *blocks_per_sm);

#ifdef __cplusplus
}
#endif

#endif /* GR_STATS_KERNELS_H */
