/*
 * reduce_f32.cu - the reduce kernel instances for f32 input (every op x block
 * sizes 128/256/512/1024). One file per dtype so the instances compile in
 * parallel; kernels/reduce.cu picks among them through
 * the instance table (gr_dispatch.cuh).
 */
#include "gr_grid.cuh"

GR_INSTANCES(fast, f32, GR_C_F32)
