/*
 * exact_f64.cu - exact reduce instances for f64 input: sum and abssum (the
 * square of an f64 is not exact in f64, so sumsq is not offered).
 * kernels/exact.cu picks among
 * them through the instance table (gr_dispatch.cuh).
 */
#include "gr_exact.cuh"

GR_INSTANCES(exact, f64, GR_C_F64)
