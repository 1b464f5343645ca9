/*
 * reduce_i64.cu - the reduce kernel instances for i64 input (every op x block
 * sizes 128/256/512/1024; sum twice: with the per-thread 32-bit halves of
 * gr_ops.cuh, and the 128-bit accumulator for n too large for them). One file
 * per dtype so the instances compile in parallel; kernels/reduce.cu picks
 * among them through the instance table (gr_dispatch.cuh).
 */
#include "gr_grid.cuh"

GR_INSTANCES(fast, i64, GR_C_I64)
