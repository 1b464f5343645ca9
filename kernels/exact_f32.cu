/*
 * exact_f32.cu - exact reduce instances for f32 input: sum, abssum and sumsq
 * (the square of an f32 is exact in f64). kernels/exact.cu picks among them.
 */
#include "gr_exact_instances.cuh"

extern "C" const void *gr_cuda_exact_kernel_f32(int op, int terms, int block)
{
    switch (op) {
    case GR_C_SUM:
        return gr_exact_kernel_for_terms<float, GR_C_SUM>(terms, block);
    case GR_C_ABSSUM:
        return gr_exact_kernel_for_terms<float, GR_C_ABSSUM>(terms, block);
    case GR_C_SUMSQ:
        return gr_exact_kernel_for_terms<float, GR_C_SUMSQ>(terms, block);
    default:
        return 0;
    }
}
