/*
 * exact_ablate.h - the test-only ablation instances of the exact kernel
 * (exact_ablate.cu): variant i (0 <= i < count) puts back the earlier design
 * of one part; f32 and f64 sum, 3 terms, blocks of 512 threads.
 */
#ifndef GR_TEST_EXACT_ABLATE_H
#define GR_TEST_EXACT_ABLATE_H

#include "gr_exact_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

int gr_test_exact_ablate_count(void);
const char *gr_test_exact_ablate_name(int i);
/* 1 for the variants that stop early (cut_*, no_counts): timing only */
int gr_test_exact_ablate_timing_only(int i);
cudaError_t gr_test_exact_ablate_occupancy(int i, int dtype, int *blocks_per_sm);
/* l: as for gr_cuda_launch_reduce_exact, with op GR_C_SUM and block 512 */
cudaError_t gr_test_exact_ablate_launch(int i, const gr_cuda_exact_launch_t *l);

/* The stage-stamp variant (GR_XF_STAMPS, exact_ablate.cu): its index,
 * the buffer's length in u64 (GR_TEST_STAMP_BLOCKS x 16 warps x 2 x GR_TEST_NSTAMP),
 * zeroing it (stream-ordered) and reading it (synchronises s). */
#define GR_TEST_NSTAMP 12         /* stamp slots a warp */
#define GR_TEST_STAMP_BLOCKS 1024 /* blocks that record stamps */
int gr_test_exact_stamps_variant(int which); /* 0: production + stamps; 1: + the ticket end; 2: body only */
size_t gr_test_exact_stamps_count(void);
cudaError_t gr_test_exact_stamps_clear(cudaStream_t s);
cudaError_t gr_test_exact_stamps_read(unsigned long long *h, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* GR_TEST_EXACT_ABLATE_H */
