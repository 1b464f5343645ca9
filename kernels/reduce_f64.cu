/*
 * reduce_f64.cu - the reduce kernel instances for f64 input (every op x block
 * sizes 128/256/512/1024). One file per dtype so the instances compile in
 * parallel; kernels/reduce.cu picks among them through
 * the instance table (gr_dispatch.cuh).
 */
#include "gr_grid.cuh"

GR_INSTANCES(fast, f64, GR_C_F64)
