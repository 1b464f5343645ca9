/*
 * gr_cuda_state.h - the cuda backend's per-context state (backend_cuda.c),
 * shared with the backend's other translation units (the file pipeline's
 * stream, stats). Library-private.
 */
#ifndef GR_CUDA_STATE_H
#define GR_CUDA_STATE_H

#include "gr_exact_kernels.h"
#include "gr_internal.h"
#include "gr_kernels.h"

#define GR_CUDA_SLOTS 2
#define GR_CUDA_STAGE_BYTES ((size_t)64 << 20)
#define GR_CUDA_STAGE_ROUND ((size_t)1 << 20)

typedef struct cuda_state {
    int device;
    int sm_count;
    int block;
    int grid_override;              /* cfg.cuda_grid, 0 = from occupancy */
    int block_forced;               /* cfg.cuda_block was given */
    int scratch_blocks;             /* capacity of scratch, in blocks */
    int occ[GR_DTYPE_COUNT][GR_OP_COUNT]; /* resident blocks per SM at s->block */
    cudaStream_t stream;
    cudaEvent_t done[GR_CUDA_SLOTS];
    void *scratch;
    unsigned int *ticket;
    gr_local_t *res_host;           /* mapped pinned, GR_CUDA_SLOTS entries */
    gr_local_t *res_dev;            /* the device's view of res_host */
    unsigned int seq[GR_CUDA_SLOTS]; /* sequence number of each slot's last launch */
    unsigned int next_seq;          /* 1..GR_CUDA_SEQ_MAX, then 1 again */
    void *stage_host[GR_CUDA_SLOTS];
    void *stage_dev[GR_CUDA_SLOTS];
    size_t stage_bytes;
    /* exact mode (kernels/gr_exact.cuh), allocated at the first exact reduce */
    void *xscratch;                 /* zeroed once; every launch leaves it zeroed */
    gr_exact_result_t *xres_host;   /* mapped pinned, GR_CUDA_SLOTS entries */
    gr_exact_result_t *xres_dev;
    int xocc[2][GR_OP_COUNT];       /* resident blocks per SM, 0 = not asked yet */
} cuda_state_t;

#endif /* GR_CUDA_STATE_H */
