/*
 * exact_bf16.cu - exact reduce instances for bf16 input: sum, abssum and
 * sumsq. Each element is widened to its f32 value (exact) and takes the f32
 * path, so the state is the f32 exact state of the same values; the host
 * rounds it once to bf16. kernels/exact.cu picks among them.
 */
#include "gr_exact_instances.cuh"

extern "C" const void *gr_cuda_exact_kernel_bf16(int op, int terms, int block)
{
    switch (op) {
    case GR_C_SUM:
        return gr_exact_kernel_for_terms<__nv_bfloat16, GR_C_SUM>(terms, block);
    case GR_C_ABSSUM:
        return gr_exact_kernel_for_terms<__nv_bfloat16, GR_C_ABSSUM>(terms, block);
    case GR_C_SUMSQ:
        return gr_exact_kernel_for_terms<__nv_bfloat16, GR_C_SUMSQ>(terms, block);
    default:
        return 0;
    }
}
