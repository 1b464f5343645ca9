/*
 * exact_bf16.cu - exact reduce instances for bf16 input: sum, abssum and
 * sumsq. Each element is widened to its f32 value (exact) and takes the f32
 * path, so the state is the f32 exact state of the same values; the host
 * rounds it once to bf16. kernels/exact.cu picks among
 * them through the instance table (gr_dispatch.cuh).
 */
#include "gr_exact.cuh"

GR_INSTANCES(exact, bf16, GR_C_BF16)
