/*
 * reduce_i32.cu - the reduce kernel instances for i32 input (every op x block
 * sizes 128/256/512/1024; sum and abssum twice: with the int64 per-thread
 * accumulator of gr_ops.cuh, and the 128-bit one for n too large for it). One
 * file per dtype so the instances compile in parallel; kernels/reduce.cu picks
 * among them through the instance table (gr_dispatch.cuh).
 */
#include "gr_grid.cuh"

GR_INSTANCES(fast, i32, GR_C_I32)
