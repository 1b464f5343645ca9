/*
 * reduce_f16.cu - the reduce kernel instances for f16 input (every op x block
 * sizes 128/256/512/1024): 8 elements per 16-byte load, widened to f32 in
 * registers (gr_vec.cuh) and reduced as f32 is (sums in f64; min and max
 * with a per-thread f32 extreme, gr_ops.cuh). One file per dtype so the
 * instances compile in parallel; kernels/reduce.cu picks among them through
 * the instance table (gr_dispatch.cuh).
 */
#include "gr_grid.cuh"

GR_INSTANCES(fast, f16, GR_C_F16)
