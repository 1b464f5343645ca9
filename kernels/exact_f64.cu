/*
 * exact_f64.cu - exact reduce instances for f64 input: sum and abssum (the
 * square of an f64 is not exact in f64, so sumsq is not offered).
 * kernels/exact.cu picks among them.
 */
#include "gr_exact_instances.cuh"

extern "C" const void *gr_cuda_exact_kernel_f64(int op, int terms, int block)
{
    switch (op) {
    case GR_C_SUM:
        return gr_exact_kernel_for_terms<double, GR_C_SUM>(terms, block);
    case GR_C_ABSSUM:
        return gr_exact_kernel_for_terms<double, GR_C_ABSSUM>(terms, block);
    default:
        return 0;
    }
}
