/*
 * gr_vec.h - library-private: the partial of the vector ops (dot, nrm2,
 * argmin, argmax) and of batches, the host kernels that fill it, and the
 * argmin/argmax combine.
 */
#ifndef GR_VEC_H
#define GR_VEC_H

#include "gr_internal.h"

/*
 * argmin/argmax state: the best (value, global index) of each kind, the
 * lowest NaN index, all order-free: (v, i) beats (w, j) when v < w (argmin)
 * or v > w (argmax) or v == w and i < j, so any merge tree keeps the lowest
 * global index among ties. -0.0 == +0.0 (IEEE and numpy), so zeros of either
 * sign tie and the lowest index wins, with its own sign.
 */
typedef struct gr_argext {
    double fmin, fmax;        /* floating values, exact in double for every dtype */
    int64_t fmin_i, fmax_i;
    int64_t imin, imax;       /* integer values */
    int64_t imin_i, imax_i;
    int64_t nan_i;            /* lowest global index of a NaN, INT64_MAX for none */
} gr_argext_t;

void gr_argext_init(gr_argext_t *a);
void gr_argext_merge(gr_argext_t *a, const gr_argext_t *b);
/* Fold one element (global index gi). */
static inline void gr_argext_add_f(gr_argext_t *a, double v, int64_t gi)
{
    if (v != v) {
        if (gi < a->nan_i)
            a->nan_i = gi;
        return;
    }
    if (v < a->fmin || (v == a->fmin && gi < a->fmin_i)) {
        a->fmin = v;
        a->fmin_i = gi;
    }
    if (v > a->fmax || (v == a->fmax && gi < a->fmax_i)) {
        a->fmax = v;
        a->fmax_i = gi;
    }
}
static inline void gr_argext_add_i(gr_argext_t *a, int64_t v, int64_t gi)
{
    if (v < a->imin || (v == a->imin && gi < a->imin_i)) {
        a->imin = v;
        a->imin_i = gi;
    }
    if (v > a->imax || (v == a->imax && gi < a->imax_i)) {
        a->imax = v;
        a->imax_i = gi;
    }
}
/* Value and index of a combined state for descriptor d (argmin or argmax) into out. */
void gr_argext_finish(const gr_argext_t *a, const gr_desc_t *d, uint64_t count, gr_value_t *out);

/*
 * The partial of one batch item: the elementwise ops use .p exactly as
 * gr_reduce_* does (so a batched sum has the bits of a single one); dot and
 * nrm2 sum into the wide accumulator .w (finite part) with .p's count, NaN,
 * Inf, signed-zero and failure fields; argmin/argmax use .a and .p.count.
 */
typedef struct gr_vpartial {
    gr_partial_t p;
    gr_wacc_t w;
    int64_t wadds; /* additions into w since its last normalisation */
    gr_argext_t a;
} gr_vpartial_t;

void gr_vpartial_init(gr_vpartial_t *v);
void gr_vpartial_merge(gr_vpartial_t *v, const gr_vpartial_t *u);
/* Keep w within headroom; call after at most 2^29 additions. */
void gr_vpartial_maybe_normalize(gr_vpartial_t *v);
void gr_vpartial_finish(const gr_vpartial_t *v, const gr_desc_t *d, gr_value_t *out);
/* A floating term of dot or nrm2 (fast-mode chunk sum, or NaN/Inf product): NaN and Inf are
 * counted, a finite value goes to w scaled by 2^shift. */
void gr_vpartial_add_term(gr_vpartial_t *v, double t, int shift);

/* The op runs through the vector path (host kernels of cpu_dot.c): dot, nrm2, argmin, argmax. */
static inline int gr_op_is_vec(gr_op_kind_t k)
{
    return k == GR_OP_DOT || k == GR_OP_NRM2 || k == GR_OP_ARGMIN || k == GR_OP_ARGMAX;
}

/*
 * Host kernel of the vector ops: reduce count elements of x (and y for dot)
 * into *out (initialised by the caller), elements numbered from index_base.
 * threads <= 0: all cores. The result does not depend on threads.
 */
gr_result_t gr_cpu_vec_reduce(int threads, const gr_batch_item_t *it, gr_vpartial_t *out);

/*
 * The cuda backend's kernels for the vector items of a batch on device memory
 * (backend_cuda_vec.c; the cuda backend's vec_start / vec_poll, reached as
 * ctx->ops->vec_start / vec_poll; builds with CUDA only). start queues the kernels
 * of every item j of items[0..k) with gr_desc_is_vec and a non-zero count on
 * the context's stream, ordered after the work queued so far on `stream`
 * (NULL: none); unless `blocking`, `stream` then waits for them, so the
 * caller may reuse the inputs in stream order. It returns a token. poll folds
 * the results into part[j] (initialised by the caller) once they are there
 * (block: wait for them) and frees the token when it reports *done (also on
 * failure). The bits of each item are those of the same item alone.
 * result_dev (NULL: none): every item is a fast floating dot and this rank is
 * the only one: the kernels also write each item's gr_value_t, the value its
 * poll and combine give, to result_dev[j] (an ordered result, request.c).
 */
gr_result_t gr_cuda_vec_start(gr_ctx_t ctx, const gr_batch_item_t *items, int k, void *stream, int blocking,
                              void *result_dev, int *token);
gr_result_t gr_cuda_vec_poll(gr_ctx_t ctx, int token, const gr_batch_item_t *items, int k, int block, int *done,
                             gr_vpartial_t *part);

/*
 * The local part of a batch on this rank (vecop.c), shared by the blocking
 * batch and the non-blocking one (request.c). Host items are reduced by
 * gr_batch_local_start; device items are queued there (the vector items in
 * one go, every other item through the backend's non-blocking start, or its
 * blocking reduce when `blocking`) and folded by gr_batch_local_poll. A
 * rank-local failure marks every partial failed (rank and code), so the
 * combine still runs and reports it.
 */
typedef struct gr_batch_local {
    gr_ctx_t ctx;
    const gr_batch_item_t *items;
    int k;
    gr_vpartial_t *part;      /* k partials, the caller's */
    int vtok;                 /* the vector kernels' token, -1 for none */
    int etok[GR_BATCH_MAX];   /* item j's token of ops->start, -1 for none */
    gr_result_t r;            /* the first local failure */
} gr_batch_local_t;

/* Backend tokens (result slots) a non-blocking batch of these items takes: its elementwise device items. */
int gr_batch_local_slots(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device);
/* Check the batch's shape and descriptors (the same on every rank, so every rank fails alike). */
gr_result_t gr_batch_check(gr_ctx_t ctx, const gr_batch_item_t *items, int k);
/* Start the local part into part[0..k) (kernel_exact: the exact kernels whatever the mode). result_dev
 * (NULL: none; only where gr_batch_direct_result says so): the kernels also write the k values there. */
void gr_batch_local_start(gr_batch_local_t *b, gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device,
                          int kernel_exact, void *stream, int blocking, void *result_dev, gr_vpartial_t *part);
/* 1 when the kernels can write the batch's values themselves, in stream order (an ordered result with no
 * host step): device memory, one rank (the combine is the identity), every item a fast floating dot with
 * elements, whose value is its folded sum (gr_vpartial_finish of one term; kernels/dot.cu). */
int gr_batch_direct_result(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device);
/* 1 when the local part is complete (block: wait for it); then b->r is its result. */
int gr_batch_local_poll(gr_batch_local_t *b, int block);
/* The combine of k partials in two halves around one MPI reduce of k vpartial_type / vpartial_op
 * elements (root and all_ranks from items[0]): what to send, and the values from the reduced `all`. */
void gr_batch_combine_prepare(const gr_vpartial_t *part, int k, gr_vpartial_t *mine);
gr_result_t gr_batch_combine_result(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_vpartial_t *mine,
                                    const gr_vpartial_t *all, gr_value_t *out);

#endif /* GR_VEC_H */
