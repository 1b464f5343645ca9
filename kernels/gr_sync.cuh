/*
 * gr_sync.cuh - the grid-level ticket shared by the single-launch kernels
 * (gr_grid.cuh, gr_exact.cuh): the last block to take it finishes the reduce.
 */
#ifndef GR_SYNC_CUH
#define GR_SYNC_CUH

/*
 * fetch_add with acq_rel semantics at device scope, taken by one thread of the
 * block after a __syncthreads. The release is cumulative: it publishes what
 * this thread wrote and what the rest of the block wrote before the barrier
 * (the barrier orders those before it). The block that draws the last ticket
 * acquires every other block's writes (the RMWs on the ticket form one release
 * sequence), and a __syncthreads after the ticket passes that on to its other
 * threads.
 */
__device__ __forceinline__ unsigned int gr_ticket_take(unsigned int *ticket)
{
    unsigned int prev;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(prev) : "l"(ticket) : "memory");
    return prev;
}

#endif /* GR_SYNC_CUH */
