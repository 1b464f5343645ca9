/*
 * gr_exact_instances.cuh - the table from (op, terms, block) to an instance
 * of gr_exact_kernel, shared by exact_f32.cu and exact_f64.cu.
 */
#ifndef GR_EXACT_INSTANCES_CUH
#define GR_EXACT_INSTANCES_CUH

#include "gr_exact.cuh"

#if defined(__CUDA_FTZ) && __CUDA_FTZ
#error "the exact kernels must not be built with -ftz=true or fast-math: they need IEEE subnormals"
#endif

template <typename T, int OP, int K>
static const void *gr_exact_kernel_for_block(int block)
{
    switch (block) {
    case 128:
        return (const void *)gr_exact_kernel<128, T, OP, K>;
    case 256:
        return (const void *)gr_exact_kernel<256, T, OP, K>;
    case 512:
        return (const void *)gr_exact_kernel<512, T, OP, K>;
    default:
        return 0;
    }
}

template <typename T, int OP>
static const void *gr_exact_kernel_for_terms(int terms, int block)
{
    switch (terms) {
    case 2:
        return gr_exact_kernel_for_block<T, OP, 2>(block);
    case 3:
        return gr_exact_kernel_for_block<T, OP, 3>(block);
    default:
        return 0;
    }
}

#endif /* GR_EXACT_INSTANCES_CUH */
