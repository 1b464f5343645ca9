/* backend_cuda_none.c - stands in for the cuda backend in builds without CUDA. */
#include "gr_internal.h"
#include "gr_stats.h"
#include "gr_vec.h"

const gr_backend_ops_t *const gr_backend_cuda_ops_ptr = NULL;

gr_result_t (*const gr_cuda_stats_local_ptr)(gr_ctx_t, const void *, uint64_t, gr_dtype_t, gr_stats_part_t *) = NULL;

gr_result_t (*const gr_cuda_vec_start_ptr)(gr_ctx_t, const gr_batch_item_t *, int, void *, int, int *) = NULL;
gr_result_t (*const gr_cuda_vec_poll_ptr)(gr_ctx_t, int, const gr_batch_item_t *, int, int, int *, gr_vpartial_t *) = NULL;

int gr_cuda_device_count(void) { return 0; }

int gr_cuda_current_device(void) { return -1; }

int gr_cuda_list_gpus(gr_gpu_info_t *gpus, int max)
{
    (void)gpus;
    (void)max;
    return 0;
}
