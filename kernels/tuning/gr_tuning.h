/*
 * gr_tuning.h - tuning as data: one policy per GPU architecture and kernel
 * family (fast, exact, stats), each entry beside the measurement that chose
 * it, as CUB's cub/tuning/tuning_reduce.cuh does. The kernels, the backend,
 * the benchmark and the tests take their launch shape from here and from
 * nowhere else.
 *
 *   gr_tuning_sm90.h     sm_90 (H100 / H200): every entry measured on an H200
 *   gr_tuning_default.h  every other architecture (the fallback)
 *
 * Two kinds of entry:
 *   host, chosen at run time by the GPU's compute capability
 *     (gr_cuda_tuning): block size, vectors per thread of the grid sizing,
 *     resident threads per SM of the grid, expansion terms (exact);
 *   device, fixed at compile time by __CUDA_ARCH__ (GR_TUNE_*): loads in
 *     flight per thread, the exact body's batch, the minimum resident blocks
 *     of __launch_bounds__. None of them may change a template argument that
 *     host code names, so the host pass and every device pass agree.
 * Every value changes time only, never a result bit: a grid or block size
 * changes the fast mode's summation order, which is why fast mode promises
 * the same bits for the same GPU model and build (docs/NUMERICS.md).
 *
 * The instances each family is built for (dtype x op x block) are the
 * dispatch table's business (gr_dispatch.cuh); a policy may only name a block
 * size that table builds (gr_dispatch.cuh checks at compile time).
 */
#ifndef GR_TUNING_H
#define GR_TUNING_H

#include <stdint.h>

#include "gr_common.h"

/* Kernel families. */
enum { GR_KF_FAST = 0, GR_KF_EXACT = 1, GR_KF_STATS = 2, GR_KF_COUNT = 3 };

typedef struct gr_tuning {
    int block;           /* threads per block when the caller forces none */
    int vecs_per_thread; /* small n: the grid shrinks until each thread has this many 16-byte vectors */
    int threads_per_sm;  /* resident threads per SM the grid aims at (capped by occupancy);
                          * 0: every block that fits (the occupancy) */
    int terms;           /* exact: terms of the per-thread expansion (2 or 3); else 0 */
} gr_tuning_t;

/* constexpr in CUDA code, so the dispatch table can check the policies at compile time */
#if defined(__CUDACC__)
#define GR_TUNING_FN static constexpr __host__ __device__ inline
#else
#define GR_TUNING_FN static inline
#endif

#include "gr_tuning_sm90.h"
#include "gr_tuning_default.h"

/* The policy of (family, dtype) on a GPU of compute capability cc (10 major + minor). */
GR_TUNING_FN gr_tuning_t gr_tuning_for(int family, int dtype, int cc)
{
    if (cc == 90)
        return gr_tuning_sm90(family, dtype);
    return gr_tuning_default(family, dtype);
}

#ifdef __cplusplus
extern "C" {
#endif
/* 10 major + minor of GPU device, or 0 when it cannot be read. */
int gr_cuda_device_cc(int device);
/*
 * The grid of family's kernel for n elements of dtype in blocks of block
 * threads on sm_count SMs of compute capability cc, by the policy of
 * (family, dtype, cc): threads_per_sm / block blocks an SM (every resident
 * block when threads_per_sm is 0), capped by max_blocks_per_sm (the
 * occupancy); fewer when n is small, so that each thread has
 * vecs_per_thread 16-byte vectors; at most the family's grid maximum, at
 * least 1 (kernels/tuning.cu).
 */
int gr_cuda_grid(int family, int cc, uint64_t n, int dtype, int block, int sm_count, int max_blocks_per_sm);
#ifdef __cplusplus
}
#endif

/* Device-side entries of the architecture being compiled (the host pass takes sm_90's). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 900
#define GR_TUNE_FAST_LOADS GR_SM90_FAST_LOADS
#define GR_TUNE_EXACT_BATCH GR_SM90_EXACT_BATCH
#define GR_TUNE_EXACT_MINB(BLOCK) GR_SM90_EXACT_MINB(BLOCK)
#define GR_TUNE_STATS_MINB(BLOCK) GR_SM90_STATS_MINB(BLOCK)
#else
#define GR_TUNE_FAST_LOADS GR_DEFAULT_FAST_LOADS
#define GR_TUNE_EXACT_BATCH GR_DEFAULT_EXACT_BATCH
#define GR_TUNE_EXACT_MINB(BLOCK) GR_DEFAULT_EXACT_MINB(BLOCK)
#define GR_TUNE_STATS_MINB(BLOCK) GR_DEFAULT_STATS_MINB(BLOCK)
#endif

#endif /* GR_TUNING_H */
