/*
 * exact_f32.cu - exact reduce instances for f32 input: sum, abssum and sumsq
 * (the square of an f32 is exact in f64). kernels/exact.cu picks among
 * them through the instance table (gr_dispatch.cuh).
 */
#include "gr_exact.cuh"

GR_INSTANCES(exact, f32, GR_C_F32)
