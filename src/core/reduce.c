/* reduce.c - public reduction entry points: local reduce, then combine. */
#include "gr_internal.h"

#include <stdlib.h>
#include <string.h>

/* Elements generated between two progress reports (2^24: 64 MB of f32). */
#define GR_PROGRESS_GEN_PIECE ((uint64_t)1 << 24)

static gr_result_t run(gr_ctx_t ctx, const void *ptr, int on_device, uint64_t count, const gr_desc_t *d,
                       gr_value_t *out, gr_timing_t *timing, uint64_t index_base)
{
    if (!ctx || !d || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_*: ctx, desc and out must not be NULL");
    GR_CHECK(gr_desc_validate(d)); /* same descriptor on every rank: all fail alike */
    if (d->op.kind == GR_OP_DOT)
        GR_FAIL(GR_ERR_INVALID_ARG, "dot needs two arrays: use gr_dot_host, gr_dot_buffer or gr_reduce_batch_host");
    if (gr_desc_is_vec(d)) {
        /* nrm2, argmin, argmax, the exact f64 sum of squares: a batch of one */
        gr_batch_item_t it;
        gr_batch_item_of(&it, d, ptr, NULL, count, (int64_t)index_base);
        return gr_vec_batch_run(ctx, &it, 1, on_device, out, timing);
    }
    if (d->root < 0 || d->root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d->root, ctx->size);
    gr_partial_t part;
    gr_partial_init(&part);
    double t0 = gr_now();
    gr_result_t r = GR_SUCCESS;
    if (count > 0 && !ptr)
        r = GR_ERR_INVALID_ARG;
    else if (on_device && ctx->backend != GR_BACKEND_CUDA)
        r = GR_ERR_INVALID_ARG;
    if (r != GR_SUCCESS)
        GR_ERROR(GR_SUB_ALL, "%s", on_device && ctx->backend != GR_BACKEND_CUDA
                         ? "gr_reduce_device needs the cuda backend; use gr_reduce_host with the cpu backend"
                         : "NULL data pointer with a non-zero count");
    if (r == GR_SUCCESS)
        r = ctx->ops->reduce(ctx, ctx->bstate, ptr, on_device, count, d, &part);
    if (r != GR_SUCCESS) {
        /* Still take part in the combine so no peer waits for us forever. */
        gr_partial_init(&part);
        part.failed = 1;
        part.failed_rank = ctx->rank;
        part.failed_code = r;
    }
    double t1 = gr_now();
    gr_result_t rc = gr_combine(ctx, d, &part, out);
    double t2 = gr_now();
    if (timing) {
        timing->local = t1 - t0;
        timing->combine = t2 - t1;
        timing->total = t2 - t0;
    }
    return r != GR_SUCCESS ? r : rc;
}

gr_result_t gr_reduce_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count, const gr_desc_t *d,
                             gr_value_t *out, gr_timing_t *timing)
{
    return run(ctx, dev_ptr, 1, count, d, out, timing, 0);
}

gr_result_t gr_reduce_host(gr_ctx_t ctx, const void *host_ptr, uint64_t count, const gr_desc_t *d,
                           gr_value_t *out, gr_timing_t *timing)
{
    return run(ctx, host_ptr, 0, count, d, out, timing, 0);
}

gr_result_t gr_buffer_create_synthetic(gr_ctx_t ctx, gr_dtype_t dtype, gr_gen_t gen, uint64_t seed,
                                       uint64_t global_n, gr_buffer_t *out)
{
    if (!ctx || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_buffer_create_synthetic: ctx and out must not be NULL");
    *out = NULL;
    gr_result_t r = GR_SUCCESS;
    if ((unsigned)dtype >= GR_DTYPE_COUNT || (unsigned)gen >= GR_GEN_COUNT) {
        GR_ERROR(GR_SUB_ALL, "unknown dtype %d or generator %d", (int)dtype,
               (int)gen);
        r = GR_ERR_INVALID_ARG;
    } else if ((dtype == GR_I32 || dtype == GR_I64) && (gen == GR_GEN_UNIFORM || gen == GR_GEN_NORMAL)) {
        GR_ERROR(GR_SUB_ALL, "generator %s makes real numbers; use it with f32 or f64, or use ones, iota, randint "
               "or stress with %s",
               gr_gen_name(gen), gr_dtype_name(dtype));
        r = GR_ERR_UNSUPPORTED;
    }
    gr_buffer_t b = NULL;
    if (r == GR_SUCCESS) {
        b = (gr_buffer_t)calloc(1, sizeof(*b));
        if (!b)
            r = GR_ERR_NOMEM;
    }
    if (r == GR_SUCCESS) {
        b->ctx = ctx;
        b->dtype = dtype;
        b->on_device = ctx->backend == GR_BACKEND_CUDA;
        gr_shard_range(global_n, ctx->size, ctx->rank, &b->begin, &b->end);
        uint64_t n = b->end - b->begin;
        r = ctx->ops->alloc(ctx, ctx->bstate, n, dtype, &b->ptr);
        /* values are a function of the global index, so pieces give the same data; in one
         * piece unless someone watches the progress */
        const uint64_t piece = ctx->cfg.progress && ctx->rank == 0 ? GR_PROGRESS_GEN_PIECE : n;
        const size_t esz = gr_dtype_size(dtype);
        for (uint64_t first = 0; r == GR_SUCCESS && first < n; first += piece) {
            uint64_t cnt = n - first < piece ? n - first : piece;
            r = ctx->ops->generate(ctx, ctx->bstate, (char *)b->ptr + first * esz, dtype, gen, seed,
                                   b->begin + first, cnt);
            if (r == GR_SUCCESS)
                gr_progress(ctx, GR_PROGRESS_GENERATE, (first + cnt) * esz, n * esz);
        }
    }
    r = gr_agree(ctx->comm, r);
    if (r != GR_SUCCESS) {
        gr_buffer_destroy(b);
        return r;
    }
    *out = b;
    return GR_SUCCESS;
}

gr_result_t gr_buffer_destroy(gr_buffer_t b)
{
    if (!b)
        return GR_SUCCESS;
    if (b->ptr)
        b->ctx->ops->free(b->ctx, b->ctx->bstate, b->ptr);
    free(b);
    return GR_SUCCESS;
}

void gr_buffer_range(gr_buffer_t b, uint64_t *begin, uint64_t *end)
{
    *begin = b->begin;
    *end = b->end;
}

gr_dtype_t gr_buffer_dtype(gr_buffer_t b) { return b->dtype; }

gr_result_t gr_reduce_buffer(gr_ctx_t ctx, gr_buffer_t b, const gr_desc_t *d, gr_value_t *out,
                             gr_timing_t *timing)
{
    if (!b || !d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_buffer: buffer and desc must not be NULL");
    if (d->dtype != b->dtype)
        GR_FAIL(GR_ERR_INVALID_ARG, "descriptor dtype %s differs from the buffer's %s", gr_dtype_name(d->dtype),
                gr_dtype_name(b->dtype));
    return run(ctx, b->ptr, b->on_device, b->end - b->begin, d, out, timing, b->begin);
}

gr_result_t gr_reduce_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n, const gr_desc_t *d,
                                gr_value_t *out, gr_timing_t *timing)
{
    if (!d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_synthetic: desc must not be NULL");
    gr_buffer_t b = NULL;
    GR_CHECK(gr_buffer_create_synthetic(ctx, d->dtype, gen, seed, global_n, &b));
    gr_result_t r = gr_reduce_buffer(ctx, b, d, out, timing);
    gr_buffer_destroy(b);
    return r;
}

gr_result_t gr_reference_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n,
                                   const gr_desc_t *d_in, gr_value_t *out)
{
    if (!ctx || !d_in || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reference_synthetic: ctx, desc and out must not be NULL");
    GR_CHECK(gr_desc_validate(d_in));
    if (gr_desc_is_vec(d_in))
        return gr_vec_reference_synthetic(ctx, gen, seed, global_n, d_in, out);
    /* The reference is always the exactly rounded value of the exact sum of
     * the f64 terms, whatever mode the checked run used. */
    gr_desc_t d = *d_in;
    d.mode = GR_MODE_EXACT;
    uint64_t b, e;
    gr_shard_range(global_n, ctx->size, ctx->rank, &b, &e);
    gr_partial_t part;
    gr_result_t r = gr_cpu_reference(ctx->cfg.cpu_threads, gen, seed, b, e - b, &d, &part);
    if (r != GR_SUCCESS) {
        gr_partial_init(&part);
        part.failed = 1;
        part.failed_rank = ctx->rank;
        part.failed_code = r;
    }
    /* f32 fast-mode results are reported in f64: compare against the f64 rounding */
    d.mode = d_in->mode;
    if (d.mode != GR_MODE_EXACT)
        d.mode = GR_MODE_FAST;
    gr_result_t rc = gr_combine(ctx, &d, &part, out);
    return r != GR_SUCCESS ? r : rc;
}
