/*
 * gr_stream.h - the backend side of the chunked input pipeline
 * (io_pipeline.c): the reader fills a slot's host buffer with chunk k+1
 * while the backend reduces chunk k from the other slot.
 *
 * Every backend names its stream in its ops (gr_backend_ops_t.stream): the
 * cpu backend the generic one (a helper thread per chunk calling
 * ctx->ops->reduce on host memory), the cuda backend its own,
 * gr_backend_cuda_stream_ops (backend_cuda_stream.c). The pipeline uses the
 * backend's for every dtype (f16/bf16 move as 2-byte items), not for the
 * widening storage alias or --op stats, which take the generic one. The
 * cuda stream:
 *
 *   open   cudaHostAlloc GR_STREAM_SLOTS pinned host buffers and
 *          cudaMalloc as many device buffers of chunk_bytes on the context's
 *          GPU, and three timing events per slot; the result slots and the
 *          stream are the backend's own (gr_cuda_state.h).
 *   buffer the pinned host buffer of a slot (MPI-IO reads straight into it).
 *   begin  cudaMemcpyAsync(dev[slot], host[slot], count * size, H2D, stream)
 *          between two events, the backend's reduce launch of count
 *          elements into result slot `slot` (gr_cuda_launch_slot, fast or
 *          exact), a third event; returns at once.
 *   end    wait for the third event; fold the slot's result into *acc
 *          (gr_cuda_finish_slot); *h2d_s = the copy, *busy_s = the reduce,
 *          both from the events (the GPU's clock).
 *   close  synchronize, free everything; safe after any error.
 *
 * Memory per rank: GR_STREAM_SLOTS chunks of pinned host memory and as many
 * of GPU memory (plus the backend's fixed scratch), whatever the file size.
 *
 * Only one chunk per slot is in flight; the pipeline calls end(slot) before
 * it refills that slot's buffer, and calls begin/end in chunk order, so a
 * result that folds chunks in order stays repeatable in fast mode.
 *
 * GR_INPUT_STREAM=generic in the environment forces the generic stream (to
 * compare the two; see docs/INPUT.md); it is read once, at context creation.
 */
#ifndef GR_STREAM_H
#define GR_STREAM_H

#include "gr_internal.h"

/* Double buffering: read chunk k+1 while chunk k is reduced. */
#define GR_STREAM_SLOTS 2

typedef struct gr_stream_ops {
    const char *name;
    /* Everything a chunk needs, for chunks of up to chunk_bytes bytes. */
    gr_result_t (*open)(gr_ctx_t ctx, void *bstate, size_t chunk_bytes, void **stream);
    /* The host buffer (chunk_bytes) of slot 0..GR_STREAM_SLOTS-1. */
    void *(*buffer)(void *stream, int slot);
    /* Start reducing count elements of d->dtype from slot's buffer; may return before it is done. */
    gr_result_t (*begin)(void *stream, int slot, uint64_t count, const gr_desc_t *d);
    /* Wait for slot's chunk, fold its result into *acc; *busy_s: seconds the backend reduced it,
     * *h2d_s: seconds it was copied to the GPU (0 where the reduce itself copies, as in the generic one). */
    gr_result_t (*end)(void *stream, int slot, const gr_desc_t *d, gr_partial_t *acc, double *busy_s,
                       double *h2d_s);
    /* Wait for anything in flight and free; NULL is accepted. */
    void (*close)(void *stream);
    /* GB/s of one host-to-device copy of bytes, as gr_file_h2d_reference says
     * (GR_ERR_UNSUPPORTED for a stream that copies nothing). */
    gr_result_t (*h2d_reference)(void *bstate, size_t bytes, double *gbps);
} gr_stream_ops_t;

/* The cuda backend's (backend_cuda_stream.c; only in builds with CUDA). */
extern const gr_stream_ops_t gr_backend_cuda_stream_ops;

/* The generic implementation: the cpu backend's, and the one every backend
 * takes for host-side work; exposed for tests. */
extern const gr_stream_ops_t gr_stream_generic_ops;

/*
 * Reduce count elements of esz bytes that start at byte byte_off of fh, in
 * nchunks collective reads of at most chunk_elems elements (nchunks must be
 * the same on every rank of fh's communicator: ranks with less data read 0
 * bytes). storage f16/bf16: items of 2 bytes, widened to f32 on the host
 * (by the generic stream, whatever the backend) before d (f32) reduces them.
 * The result goes into *acc (initialised here). Every rank makes all
 * nchunks reads even after a local failure, so no peer waits forever.
 */
gr_result_t gr_pipeline_reduce_file(gr_ctx_t ctx, MPI_File fh, int fd, const char *path, uint64_t byte_off, uint64_t count, size_t esz,
                                    uint64_t chunk_elems, uint64_t nchunks, gr_storage_t storage, const gr_desc_t *d,
                                    gr_partial_t *acc, gr_io_timing_t *t);

/* The same read loop for --op stats: chunks go through gr_stats_part_add
 * (on the host, in a helper thread) into *stats (initialised here). */
struct gr_stats_part;
gr_result_t gr_pipeline_stats_file(gr_ctx_t ctx, MPI_File fh, int fd, const char *path, uint64_t byte_off, uint64_t count, size_t esz,
                                   uint64_t chunk_elems, uint64_t nchunks, gr_storage_t storage, const gr_desc_t *d,
                                   struct gr_stats_part *stats, gr_io_timing_t *t);

#endif /* GR_STREAM_H */
