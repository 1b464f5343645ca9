/*
 * gr_kernels.h - the extern "C" launchers of kernels/, the only way host C
 * reaches device code. Includable from C11 and from .cu files.
 *
 * Every launcher enqueues work on the given stream and returns the launch
 * status (cudaGetLastError right after the launch), never an error of the
 * kernel's execution: the caller checks that at its stream or event sync.
 * dtype, op and gen numbers are the GR_C_* values of gr_common.h.
 */
#ifndef GR_KERNELS_H
#define GR_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "gr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of scratch the reduce kernel needs per block (one accumulator). */
#define GR_CUDA_SCRATCH_BYTES_PER_BLOCK 32
/* Block size used when the caller has no preference (a later issue tunes it). */
#define GR_CUDA_BLOCK_DEFAULT 256
/* Most blocks one launch may use; bounds the scratch array. */
#define GR_CUDA_GRID_MAX (1 << 20)

/*
 * One launch of the single-pass reduce (kernels/gr_grid.cuh).
 *
 * in:      n elements of dtype, device-accessible, naturally aligned for the
 *          dtype (any offset from a 16-byte boundary is fine).
 * grid:    1..GR_CUDA_GRID_MAX blocks; block: a size gr_cuda_reduce_block_supported().
 * scratch: device memory of grid * GR_CUDA_SCRATCH_BYTES_PER_BLOCK bytes.
 * ticket:  device counter, 0 before the first launch; the kernel leaves it 0.
 * result:  device view of mapped pinned host memory (cudaHostAllocMapped);
 *          the last block writes the whole gr_local_t there, count = n.
 * Launches on one (scratch, ticket) pair must be ordered (one stream).
 */
typedef struct gr_cuda_reduce_launch {
    const void *in;
    uint64_t n;
    int dtype;
    int op;
    int power; /* GR_C_POWSUM exponent 1..8; ignored for other ops */
    int grid;
    int block;
    void *scratch;
    unsigned int *ticket;
    gr_local_t *result;
    cudaStream_t stream;
} gr_cuda_reduce_launch_t;

cudaError_t gr_cuda_launch_reduce(const gr_cuda_reduce_launch_t *l);

/* 1 when the reduce kernel is instantiated for this block size (128, 256, 512, 1024). */
int gr_cuda_reduce_block_supported(int block);

/* Resident blocks per SM of the reduce kernel for (dtype, op, block), on the current device. */
cudaError_t gr_cuda_reduce_occupancy(int dtype, int op, int block, int *blocks_per_sm);

/*
 * Grid for n elements: enough blocks that each thread gets at least one
 * 16-byte vector, at most max_grid (the resident-block count), at least 1.
 */
int gr_cuda_reduce_grid(uint64_t n, int dtype, int block, int max_grid);

/*
 * Fill out[0..n) with the synthetic generator gen for global indices
 * begin..begin+n-1 (gr_gen_float / gr_gen_int of gr_common.h: the same
 * bits as the cpu backend). out must be naturally aligned for dtype.
 */
cudaError_t gr_cuda_launch_generate(void *out, int dtype, int gen, uint64_t seed, uint64_t begin, uint64_t n,
                                    cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_KERNELS_H */
