/*
 * tuning.cu - the host side of the tuning policies (tuning/gr_tuning.h):
 * the launch grid of every kernel family, from one rule.
 */
#include "gr_exact_kernels.h"
#include "gr_kernels.h"
#include "gr_stats_kernels.h"
#include "gr_tuning.h"

extern "C" int gr_cuda_device_cc(int device)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
        return 0;
    return 10 * major + minor;
}

/* The most blocks one launch of the family may use (the size of its scratch's per-block parts). */
static uint64_t grid_max(int family)
{
    return family == GR_KF_EXACT ? GR_EXACT_GRID_MAX : family == GR_KF_STATS ? GR_STATS_GRID_MAX : GR_CUDA_GRID_MAX;
}

extern "C" int gr_cuda_grid(int family, int cc, uint64_t n, int dtype, int block, int sm_count, int max_blocks_per_sm)
{
    const gr_tuning_t tp = gr_tuning_for(family, dtype, cc);
    uint64_t g;
    if (tp.threads_per_sm > 0) {
        int per_sm = tp.threads_per_sm / block;
        if (per_sm < 1)
            per_sm = 1;
        if (max_blocks_per_sm > 0 && per_sm > max_blocks_per_sm)
            per_sm = max_blocks_per_sm;
        g = (uint64_t)per_sm * (uint64_t)(sm_count > 0 ? sm_count : 1);
    } else {
        g = (uint64_t)(max_blocks_per_sm > 0 ? max_blocks_per_sm : 0) * (uint64_t)(sm_count > 0 ? sm_count : 0);
    }
    /* a whole round of vectors per thread; more blocks would only add partials */
    const uint64_t per_block = (uint64_t)block * (uint64_t)tp.vecs_per_thread * (16u / gr_c_elem_size(dtype));
    const uint64_t want = (n + per_block - 1) / per_block;
    if (g > want)
        g = want;
    if (g > grid_max(family))
        g = grid_max(family);
    return g < 1 ? 1 : (int)g;
}
