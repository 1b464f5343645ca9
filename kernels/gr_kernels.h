/*
 * gr_kernels.h - the extern "C" launchers of kernels/, the only way host C
 * reaches device code. Includable from C11 and from .cu files.
 *
 * Every launcher enqueues work on the given stream and returns the launch
 * status (cudaGetLastError right after the launch), never an error of the
 * kernel's execution: the caller checks that at its stream or event sync.
 * dtype, op and gen numbers are the GR_C_* values of gr_common.h.
 */
#ifndef GR_KERNELS_H
#define GR_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "gr_common.h"
#include "gr_tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of scratch the reduce kernel needs per block (one accumulator). */
#define GR_CUDA_SCRATCH_BYTES_PER_BLOCK 32
/* Most blocks one launch may use; bounds the scratch array. */
#define GR_CUDA_GRID_MAX (1 << 20)

/*
 * One launch of the single-pass reduce (kernels/gr_grid.cuh).
 *
 * in:      n elements of dtype, device-accessible, naturally aligned for the
 *          dtype (any offset from a 16-byte boundary is fine). f16 / bf16:
 *          2-byte elements read 8 per 16-byte load and widened to f32.
 * grid:    1..GR_CUDA_GRID_MAX blocks; block: a size gr_cuda_reduce_block_supported().
 * scratch: device memory of grid * GR_CUDA_SCRATCH_BYTES_PER_BLOCK bytes.
 * ticket:  device counter, 0 before the first launch; the kernel leaves it 0.
 * result:  device view of mapped pinned host memory (cudaHostAllocMapped);
 *          the last block writes the whole gr_local_t there, count = n and
 *          reserved = seq, one single-copy-atomic store per field, unordered
 *          (see gr_cuda_reduce_wait).
 * seq:     the launch's sequence number, 1..GR_CUDA_SEQ_MAX (0 when nobody
 *          polls); a caller that polls gives each launch on a slot a new one.
 * Launches on one (scratch, ticket) pair must be ordered (one stream).
 * i32 sum/abssum and i64 sum run with narrower per-thread accumulators when
 * n / (grid x block) < 2^31 (kernels/gr_ops.cuh says why that is safe).
 */
typedef struct gr_cuda_reduce_launch {
    const void *in;
    uint64_t n;
    int dtype;
    int op;
    int power; /* GR_C_POWSUM exponent 1..8; ignored for other ops */
    int grid;
    int block;
    void *scratch;
    unsigned int *ticket;
    gr_local_t *result;
    unsigned int seq;
    cudaStream_t stream;
} gr_cuda_reduce_launch_t;

cudaError_t gr_cuda_launch_reduce(const gr_cuda_reduce_launch_t *l);

/* Largest sequence number: the poison of `reserved` (-1) is never one. */
#define GR_CUDA_SEQ_MAX 0x7FFFFFFFu

/*
 * Write the poison into every field of a result slot (host view), before the
 * launch that will fill it: NaN with a signalling payload (no addition
 * produces one), 0xDEADBEEF..., INT64_MIN, UINT64_MAX, -1, -1.
 */
void gr_cuda_result_poison(gr_local_t *slot);

/*
 * Wait on the host until ready(arg) returns non-zero (a result the GPU writes
 * into mapped host memory as its last act) or the work before ev (stream when
 * ev is NULL) is done. ready is polled for spin_ns nanoseconds (a launch's own
 * time); past that the work queued before it on the stream is longer than the
 * launch, and the poll goes on, asking the event every 20 us (an error then
 * shows) and yielding the core in between, rather than sleeping in a sync whose
 * wake-up costs about 10 us (docs/CG.md "Speed"). On a device the application
 * set to cudaDeviceScheduleBlockingSync, and with spin_ns = 0, it synchronises
 * at that point instead, as asked. ready is called once more after a query or
 * a sync that ends the wait. Returns cudaSuccess when ready was seen, else the
 * query's or the sync's status.
 */
cudaError_t gr_cuda_poll_wait(int (*ready)(void *), void *arg, cudaStream_t stream, cudaEvent_t ev,
                              uint64_t spin_ns);

/*
 * Wait for the launch with sequence number seq to fill `slot` (host view)
 * and copy the result to *out. First poll: the result is taken as soon as
 * slot->reserved == seq and no field still holds its poison (each field is
 * written once by one single-copy-atomic store, so a field that differs from
 * its poison holds this launch's value). A result whose true value equals a
 * poison (a NaN input of that exact payload, say) never passes the poll; it
 * is read after the fallback. The wait is gr_cuda_poll_wait's (spin_ns = 0
 * or seq = 0: cudaEventSynchronize(ev), or cudaStreamSynchronize(stream) when
 * ev is NULL, at once), then the slot is read as it is. A successful poll returns
 * cudaSuccess with no driver call: the last block wrote the result at its end,
 * so the launch and everything before it on the stream ran (an error before
 * it would have stopped the kernel, and the poll would have timed out into
 * the sync, which reports it). Returns that status; the caller checks
 * out->count and out->reserved (== seq).
 */
cudaError_t gr_cuda_reduce_wait(gr_local_t *slot, unsigned int seq, cudaStream_t stream, cudaEvent_t ev,
                                uint64_t spin_ns, gr_local_t *out);

/* How long a host should poll for a launch over `bytes` before it sleeps in a
 * sync: 20 us + 1 ns per 2000 bytes (a read at 2 TB/s), at most 5 ms. */
uint64_t gr_cuda_reduce_spin_ns(uint64_t bytes);

/* 1 when the reduce kernel is instantiated for this block size (128, 256, 512, 1024). */
int gr_cuda_reduce_block_supported(int block);

/* Resident blocks per SM of the reduce kernel for (dtype, op, block), on the current device. */
cudaError_t gr_cuda_reduce_occupancy(int dtype, int op, int block, int *blocks_per_sm);

/* The block size and grid when the caller has none: tuning/gr_tuning.h
 * (gr_tuning_for(GR_KF_FAST, ...), gr_cuda_grid). */

/*
 * Fill out[0..n) with the synthetic generator gen for global indices
 * begin..begin+n-1 (gr_gen_float / gr_gen_int of gr_common.h, and
 * gr_gen_half_bits for f16 / bf16, stored as 2-byte bit patterns: the same
 * bits as the cpu backend). out must be naturally aligned for dtype.
 */
cudaError_t gr_cuda_launch_generate(void *out, int dtype, int gen, uint64_t seed, uint64_t begin, uint64_t n,
                                    cudaStream_t stream);

/* Most bytes gr_cuda_launch_store writes. */
#define GR_CUDA_STORE_MAX 128
/*
 * Write src[0..n) (host memory, n <= GR_CUDA_STORE_MAX) to device address dst,
 * queued on stream (kernels/store.cu). src is read before the call returns.
 */
cudaError_t gr_cuda_launch_store(void *dst, const void *src, size_t n, cudaStream_t stream);

/*
 * An ordered result's release (gr_call_t.ordered, src/backend/cuda/backend_cuda_order.c): one block
 * queued on stream that waits until the host stores seq into *flag (mapped pinned memory, device
 * view), then copies bytes [0, n) of src (mapped pinned memory, device view) to dst (device memory)
 * and stores seq into *ack (mapped) behind a system-scope fence, so the host knows src was read.
 * The stream's later work sees dst. n is a multiple of 8.
 */
cudaError_t gr_cuda_launch_release(const unsigned int *flag, unsigned int *ack, unsigned int seq, const void *src,
                                   void *dst, size_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_KERNELS_H */
