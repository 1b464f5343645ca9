/*
 * reduce_f32.cu - the reduce kernel instances for f32 input (every op x block
 * sizes 128/256/512/1024). One file per dtype so the instances compile in
 * parallel; kernels/reduce.cu picks among them.
 */
#include "gr_grid.cuh"

extern "C" const void *gr_cuda_reduce_kernel_f32(int op, int block, int narrow)
{
    return gr_reduce_kernel_float<float>(op, block, narrow);
}
