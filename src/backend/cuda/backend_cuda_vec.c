/*
 * backend_cuda_vec.c - the vector ops (dot, nrm2, argmin/argmax, the exact
 * f64 sum of squares) on device memory: one launch of kernels/dot.cu or
 * kernels/argext.cu per item on the context's stream, one record per block
 * copied back and folded into the vector partial on the host (exact limbs
 * and argext states are order-free; fast block sums enter the exact
 * accumulator one by one, so a fixed GPU model gives fixed bits).
 */
#include "gr_cuda_check.h"
#include "gr_cuda_state.h"
#include "gr_vec.h"
#include "gr_vec_kernels.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(GR_VEC_WLIMBS == GR_WACC_LIMBS && GR_VEC_WBIAS == GR_WACC_BIAS,
               "the kernels' block limbs are gr_wacc_t's");

/* Blocks: 4 per SM (or --cuda-grid), no more than the elements need, and enough that no exact
 * block takes more than GR_VEC_EXACT_PER_BLOCK elements. */
static int vec_grid(const cuda_state_t *s, uint64_t n, int exact)
{
    uint64_t g = s->grid_override > 0 ? (uint64_t)s->grid_override : (uint64_t)s->sm_count * 4u;
    uint64_t need = (n + GR_VEC_BLOCK - 1) / GR_VEC_BLOCK;
    if (g > need)
        g = need;
    if (exact) {
        uint64_t min = (n + GR_VEC_EXACT_PER_BLOCK - 1) / GR_VEC_EXACT_PER_BLOCK;
        if (g < min)
            g = min;
    }
    if (g < 1)
        g = 1;
    if (g > (uint64_t)1 << 20)
        g = (uint64_t)1 << 20;
    return (int)g;
}

static gr_result_t device_ptr(const cuda_state_t *s, const void *p, const char *name)
{
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof(a));
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_ERR_INVALID_ARG, "%s: cannot query pointer %p (%s); pass memory from cudaMalloc", name, p,
                cudaGetErrorString(e));
    }
    if (a.type == cudaMemoryTypeUnregistered || !a.devicePointer)
        GR_FAIL(GR_ERR_INVALID_ARG, "%s: %p is host memory the GPU cannot read; pass device memory or use the "
                                    "host entry points", name, p);
    if (a.type == cudaMemoryTypeDevice && a.device != s->device)
        GR_FAIL(GR_ERR_INVALID_ARG, "%s: %p is memory of GPU %d, but this rank's context runs on GPU %d", name, p,
                a.device, s->device);
    return GR_SUCCESS;
}

static void fold_records(const gr_batch_item_t *it, const void *host, int grid, int exact_recs, gr_vpartial_t *out)
{
    gr_op_kind_t op = it->desc.op.kind;
    if (op == GR_OP_ARGMIN || op == GR_OP_ARGMAX) {
        const gr_vec_arg_rec_t *r = (const gr_vec_arg_rec_t *)host;
        for (int b = 0; b < grid; ++b) {
            gr_argext_t a;
            a.fmin = r[b].fmin;
            a.fmax = r[b].fmax;
            a.fmin_i = r[b].fmin_i;
            a.fmax_i = r[b].fmax_i;
            a.imin = r[b].imin;
            a.imax = r[b].imax;
            a.imin_i = r[b].imin_i;
            a.imax_i = r[b].imax_i;
            a.nan_i = r[b].nan_i;
            gr_argext_merge(&out->a, &a);
        }
        return;
    }
    if (exact_recs) {
        const gr_vec_exact_rec_t *r = (const gr_vec_exact_rec_t *)host;
        gr_wacc_t t;
        for (int b = 0; b < grid; ++b) {
            memcpy(t.limb, r[b].limb, sizeof(t.limb));
            gr_wacc_normalize(&t); /* block limbs < 2^62: the carry pass cannot overflow */
            gr_wacc_add(&out->w, &t);
            out->wadds++;
            gr_vpartial_maybe_normalize(out);
            out->p.nan += (int64_t)r[b].nan;
            out->p.pinf += (int64_t)r[b].pinf;
            out->p.ninf += (int64_t)r[b].ninf;
            out->p.nonnegzero += (int64_t)r[b].nonnegzero;
        }
        return;
    }
    const gr_vec_fast_rec_t *r = (const gr_vec_fast_rec_t *)host;
    int blue = op != GR_OP_DOT && it->desc.dtype == GR_F64;
    for (int b = 0; b < grid; ++b) {
        gr_vpartial_add_term(out, r[b].s[0], 0);
        if (blue) {
            gr_vpartial_add_term(out, r[b].s[1], 1076);
            gr_vpartial_add_term(out, r[b].s[2], -1074);
        }
    }
}

static gr_result_t vec_reduce(gr_ctx_t ctx, const gr_batch_item_t *it, gr_vpartial_t *out)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    uint64_t n = it->count;
    if (n == 0)
        return GR_SUCCESS;
    GR_CUDA_CHECK(cudaSetDevice(s->device));
    gr_op_kind_t op = it->desc.op.kind;
    int is_arg = op == GR_OP_ARGMIN || op == GR_OP_ARGMAX;
    int is_int = it->desc.dtype == GR_I32 || it->desc.dtype == GR_I64;
    int exact_recs = !is_arg && (it->desc.mode == GR_MODE_EXACT || is_int);
    GR_CHECK(device_ptr(s, it->x, "x"));
    if (op == GR_OP_DOT)
        GR_CHECK(device_ptr(s, it->y, "y"));
    /* after the work queued on the caller's stream, as gr_reduce_device is */
    GR_CHECK(gr_cuda_order_after(s, ctx->cfg.stream));
    int grid = vec_grid(s, n, exact_recs);
    size_t rsz = is_arg ? sizeof(gr_vec_arg_rec_t) : exact_recs ? sizeof(gr_vec_exact_rec_t) : sizeof(gr_vec_fast_rec_t);
    void *rec_dev = NULL, *rec_host = malloc(rsz * (size_t)grid);
    if (!rec_host)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d block records", grid);
    gr_result_t r = GR_SUCCESS;
    GR_CUDA_CHECK_GOTO(cudaMalloc(&rec_dev, rsz * (size_t)grid), r, done);
    if (is_arg)
        GR_CUDA_CHECK_GOTO(gr_cuda_launch_argext(it->x, n, (int)it->desc.dtype, it->index_base, grid,
                                                 (gr_vec_arg_rec_t *)rec_dev, s->stream),
                           r, done);
    else
        GR_CUDA_CHECK_GOTO(gr_cuda_launch_dot(it->x, op == GR_OP_DOT ? it->y : NULL, n, (int)it->desc.dtype,
                                              exact_recs, grid, rec_dev, s->stream),
                           r, done);
    GR_CUDA_CHECK_GOTO(cudaMemcpyAsync(rec_host, rec_dev, rsz * (size_t)grid, cudaMemcpyDeviceToHost, s->stream), r,
                       done);
    GR_CUDA_CHECK_GOTO(cudaStreamSynchronize(s->stream), r, done);
    fold_records(it, rec_host, grid, exact_recs, out);
    out->p.count += (int64_t)n;
done:
    if (r != GR_SUCCESS)
        GR_CUDA_IGNORE(cudaStreamSynchronize(s->stream));
    if (rec_dev)
        GR_CUDA_IGNORE(cudaFree(rec_dev));
    free(rec_host);
    return r;
}

gr_result_t (*const gr_cuda_vec_reduce_ptr)(gr_ctx_t, const gr_batch_item_t *, gr_vpartial_t *) = vec_reduce;
