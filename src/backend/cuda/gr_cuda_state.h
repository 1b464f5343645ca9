/*
 * gr_cuda_state.h - the cuda backend's per-context state (backend_cuda.c),
 * shared with the backend's other translation units (the file pipeline's
 * stream, stats). Library-private.
 */
#ifndef GR_CUDA_STATE_H
#define GR_CUDA_STATE_H

#include "gr_exact_kernels.h"
#include "gr_internal.h"
#include "gr_kernels.h"

#define GR_CUDA_SLOTS 2
/* Result slots: GR_CUDA_SLOTS for the blocking paths, then one per request
 * that may be outstanding (gr_ireduce_device). */
#define GR_CUDA_NSLOTS (GR_CUDA_SLOTS + GR_REQUEST_MAX)
#define GR_CUDA_STAGE_BYTES ((size_t)64 << 20)
#define GR_CUDA_STAGE_ROUND ((size_t)1 << 20)

typedef struct cuda_state {
    int device;
    int sm_count;
    int cc;                         /* compute capability, 10 major + minor: picks the tuning policy */
    int block;
    int grid_override;              /* cfg.cuda_grid, 0 = from occupancy */
    int block_forced;               /* cfg.cuda_block was given */
    int pdl;                        /* batched dots with programmatic dependent launch (GR_CUDA_PDL, default 1) */
    int scratch_blocks;             /* capacity of scratch, in blocks */
    int occ[GR_DTYPE_COUNT][GR_OP_COUNT]; /* resident blocks per SM at s->block */
    cudaStream_t stream;            /* the library's own (blocking) stream; all its kernels go here */
    cudaEvent_t in_ev;              /* recorded on the caller's stream, waited for by `stream` */
    cudaEvent_t done[GR_CUDA_NSLOTS];
    unsigned char req_busy[GR_REQUEST_MAX]; /* request slot GR_CUDA_SLOTS + i is in use */
    void *scratch;
    unsigned int *ticket;
    gr_local_t *res_host;           /* mapped pinned, GR_CUDA_NSLOTS entries */
    gr_local_t *res_dev;            /* the device's view of res_host */
    unsigned int seq[GR_CUDA_NSLOTS]; /* sequence number of each slot's last launch */
    unsigned int next_seq;          /* 1..GR_CUDA_SEQ_MAX, then 1 again */
    void *stage_host[GR_CUDA_SLOTS];
    void *stage_dev[GR_CUDA_SLOTS];
    size_t stage_bytes;
    /* exact mode (kernels/gr_exact.cuh), allocated at the first exact reduce */
    void *xscratch;                 /* zeroed once; every launch leaves it zeroed */
    gr_exact_result_t *xres_host;   /* mapped pinned, GR_CUDA_NSLOTS entries */
    gr_exact_result_t *xres_dev;
    int xocc[GR_DTYPE_COUNT][GR_OP_COUNT]; /* resident blocks per SM, 0 = not asked yet */
    void *stats;                    /* --op stats (backend_cuda_stats.c), at first use */
    void *vec;                      /* the vector ops' record buffers (backend_cuda_vec.c), at first use */
    void *order;                    /* ordered results' slots (backend_cuda_order.c), at first use */
    /* the file pipeline's buffers (backend_cuda_stream.c): pinned host and
     * GPU, kept for the next file reduce of this context, freed by fini */
    void *pipe_host[GR_CUDA_SLOTS];
    void *pipe_dev[GR_CUDA_SLOTS];
    size_t pipe_bytes;
} cuda_state_t;

/* Every entry point of the backend runs between these two: enter makes
 * `device` current and says which device was (*prev), leave makes that one
 * current again, so a call leaves the caller's current device as it was.
 * cudaSetDevice is called only where the two differ. */
gr_result_t gr_cuda_enter(int device, int *prev);
void gr_cuda_leave(int device, int prev);

/* Order s->stream after the work queued so far on the caller's stream
 * (NULL: none given), by an event: no device-wide synchronisation. */
gr_result_t gr_cuda_order_after(cuda_state_t *s, void *stream);

/* Ordered results (backend_cuda_order.c): the backend's order_arm and order_release, and the cleanup
 * (releases what is still armed, so no stream is left waiting, then frees; never fails). */
gr_result_t gr_cuda_order_arm(gr_ctx_t ctx, void *stream, void *dst, size_t n, int *token);
void gr_cuda_order_release(gr_ctx_t ctx, int token, const void *bytes, size_t n);
void gr_cuda_order_free(cuda_state_t *s);
/* Ordered results of this process armed and not yet released (their streams wait for the host): while
 * there are any, the backend makes no allocation that may wait for the device. */
int gr_cuda_order_waiting(void);

/* A caller's stream the backend queues kernels on itself: a live stream of the context's GPU (checked
 * where the runtime can say, CUDA 12.8 and later), else GR_ERR_INVALID_ARG with a message. */
gr_result_t gr_cuda_check_stream(cuda_state_t *s, void *stream);

/* Free the vector ops' state (backend_cuda_vec.c); cleanup, never fails. */
void gr_cuda_vec_release(cuda_state_t *s);

/* Free the stats state (gr_cuda_stats.h); cleanup, never fails. */
void gr_cuda_stats_release(cuda_state_t *s);

/* The backend's reduce of n elements at device pointer dptr into result slot
 * `slot` (fast or exact kernel, by d), on s->stream; records s->done[slot].
 * Returns at once. */
gr_result_t gr_cuda_launch_slot(cuda_state_t *s, const void *dptr, uint64_t n, const gr_desc_t *d, int slot);
/* Wait for slot `slot` (its event) and fold its result (n elements) into *out. */
gr_result_t gr_cuda_finish_slot(cuda_state_t *s, uint64_t n, const gr_desc_t *d, int slot, gr_partial_t *out);
/* Free the file pipeline's buffers (pipe_host, pipe_dev); cleanup, never fails. */
void gr_cuda_stream_release(cuda_state_t *s);

#endif /* GR_CUDA_STATE_H */
