/*
 * read_floor.h - the read-floor probe's launchers (tests/bench/read_floor.cu),
 * for tests/bench/read_floor.c. A test program, not the product.
 *
 * The probe asks how long *any* kernel takes to read n f32 values on this GPU
 * under the bench's GPU timing (a hold kernel, one event pair a launch, cold
 * data), whatever its shape: block size, blocks per SM, 16-byte loads in
 * flight per thread, grid-stride or one contiguous chunk a block, with or
 * without an L2 prefetch-size hint. Each read kernel sums in float and leaves
 * one partial a block (no finish), or, with fin, ends as the fast kernel
 * does: a ticket, and the last block folds the partials in a fixed order.
 */
#ifndef GR_READ_FLOOR_H
#define GR_READ_FLOOR_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_cfg {
    int block;  /* 128, 256, 512, 1024 */
    int unroll; /* 16-byte loads issued before the first is used: 4, 8, 16 */
    int chunk;  /* 0: grid-stride; 1: block b reads one contiguous chunk, its threads striding by block */
    int hint;   /* 1: loads carry .L2::256B (prefetch size; sm_80 and later, plain loads before) */
    int fin;    /* 1: ticket + the last block folds the partials (the fast kernel's end) */
} rf_cfg_t;

/* Resident blocks per SM of the read kernel for cfg (0 when cfg is not built). */
cudaError_t rf_read_occupancy(const rf_cfg_t *cfg, int *blocks_per_sm);

/*
 * Read v[0..nvec) (float4, 16-byte aligned) with grid blocks: partials[b] =
 * the float sum of what block b read. fin: also the sum of the partials in
 * *result, *ticket (0 before, left 0) the grid's counter. nvec < 2^28.
 */
cudaError_t rf_launch_read(const rf_cfg_t *cfg, int grid, const void *v, uint32_t nvec, float *partials,
                           unsigned int *ticket, float *result, cudaStream_t stream);

/* An empty kernel of grid x block threads: what one launch costs with nothing in it. */
cudaError_t rf_launch_empty(int grid, int block, cudaStream_t stream);

/* p[0..n) = 1.0f */
cudaError_t rf_launch_ones(float *p, uint64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_READ_FLOOR_H */
