/*
 * vecop.c - dot, nrm2, argmin, argmax and batches: the vector partial, its
 * exact combine (one MPI collective for a whole batch) and the entry points.
 */
#include "gr_vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gr_batch_item_init(gr_batch_item_t *it)
{
    memset(it, 0, sizeof(*it));
    gr_desc_init(&it->desc);
}

void gr_batch_item_of(gr_batch_item_t *it, const gr_desc_t *d, const void *x, const void *y, uint64_t count,
                      int64_t index_base)
{
    gr_batch_item_init(it);
    it->desc = *d;
    it->x = x;
    it->y = y;
    it->count = count;
    it->index_base = index_base;
}

void gr_vpartial_init(gr_vpartial_t *v)
{
    gr_partial_init(&v->p);
    gr_wacc_zero(&v->w);
    v->wadds = 0;
    gr_argext_init(&v->a);
}

void gr_vpartial_maybe_normalize(gr_vpartial_t *v)
{
    if (v->wadds >= (int64_t)GR_XACC_HEADROOM) {
        gr_wacc_normalize(&v->w);
        v->wadds = 0;
    }
}

void gr_vpartial_add_term(gr_vpartial_t *v, double t, int shift)
{
    if (isnan(t)) {
        v->p.nan++;
    } else if (isinf(t)) {
        if (t > 0)
            v->p.pinf++;
        else
            v->p.ninf++;
    } else {
        if (!(t == 0 && signbit(t)))
            v->p.nonnegzero++;
        gr_wacc_add_double_shift(&v->w, t, shift);
        v->wadds++;
        gr_vpartial_maybe_normalize(v);
    }
}

void gr_vpartial_merge(gr_vpartial_t *v, const gr_vpartial_t *u)
{
    gr_partial_merge(&v->p, &u->p);
    gr_wacc_add(&v->w, &u->w);
    v->wadds += u->wadds + 1;
    gr_vpartial_maybe_normalize(v);
    gr_argext_merge(&v->a, &u->a);
}

/* f64 sumsq / powsum 2 in exact mode: the squares are summed exactly in w. */
static int is_exact_f64_square(const gr_desc_t *d)
{
    return d->mode == GR_MODE_EXACT && d->dtype == GR_F64 &&
           (d->op.kind == GR_OP_SUMSQ || (d->op.kind == GR_OP_POWSUM && d->op.power == 2));
}

int gr_desc_is_vec(const gr_desc_t *d) { return gr_op_is_vec(d->op.kind) || is_exact_f64_square(d); }

void gr_vpartial_finish(const gr_vpartial_t *v, const gr_desc_t *d, gr_value_t *out)
{
    if (!gr_desc_is_vec(d)) {
        gr_partial_finish(&v->p, d, out);
        out->index = -1;
        return;
    }
    const gr_partial_t *p = &v->p;
    memset(out, 0, sizeof(*out));
    out->valid = 1;
    out->dtype = (int)d->dtype;
    out->count = (uint64_t)p->count;
    out->nan_count = (uint64_t)p->nan;
    out->index = -1;
    int is_float = gr_c_is_float((int)d->dtype);
    if (d->op.kind == GR_OP_ARGMIN || d->op.kind == GR_OP_ARGMAX) {
        gr_argext_finish(&v->a, d, out->count, out);
        return;
    }
    if (d->op.kind == GR_OP_NRM2) {
        if (p->nan > 0)
            out->f = NAN;
        else if (p->pinf > 0 || p->ninf > 0)
            out->f = INFINITY;
        else if (d->mode == GR_MODE_EXACT && is_float)
            out->f = gr_wacc_sqrt_round_dtype(&v->w, (int)d->dtype);
        else
            out->f = gr_wacc_sqrt_round(&v->w, 53, -1074, 1023);
        return;
    }
    /* dot, and the exact f64 sum of squares */
    if (!is_float) {
        out->is_integer = 1;
        int64_t iv = 0;
        int fits = gr_wacc_to_i64(&v->w, &iv);
        out->overflow = !fits;
        out->i = fits ? iv : 0;
        out->f = gr_wacc_round(&v->w, 53, -1074, 1023);
        return;
    }
    if (p->nan > 0 || (p->pinf > 0 && p->ninf > 0))
        out->f = NAN;
    else if (p->pinf > 0)
        out->f = INFINITY;
    else if (p->ninf > 0)
        out->f = -INFINITY;
    else {
        double r = d->mode == GR_MODE_EXACT ? gr_wacc_round_dtype(&v->w, (int)d->dtype)
                                            : gr_wacc_round(&v->w, 53, -1074, 1023);
        if (r == 0 && p->count > 0 && p->nonnegzero == 0)
            r = -0.0; /* IEEE: a sum of only -0.0 products is -0.0 */
        out->f = r;
    }
}

/* MPI user operation over arrays of vector partials: exact and order-free. */
static void vpartial_mpi_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const gr_vpartial_t *a = (const gr_vpartial_t *)in;
    gr_vpartial_t *b = (gr_vpartial_t *)inout;
    for (int i = 0; i < *len; ++i)
        gr_vpartial_merge(&b[i], &a[i]);
}

gr_result_t gr_vec_combine_setup(gr_ctx_t ctx)
{
    GR_MPI_CHECK(MPI_Type_contiguous((int)sizeof(gr_vpartial_t), MPI_BYTE, &ctx->vpartial_type));
    GR_MPI_CHECK(MPI_Type_commit(&ctx->vpartial_type));
    GR_MPI_CHECK(MPI_Op_create(vpartial_mpi_op, 1, &ctx->vpartial_op));
    return GR_SUCCESS;
}

void gr_vec_combine_teardown(gr_ctx_t ctx)
{
    if (ctx->vpartial_op != MPI_OP_NULL)
        MPI_Op_free(&ctx->vpartial_op);
    if (ctx->vpartial_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&ctx->vpartial_type);
}

void gr_batch_combine_prepare(const gr_vpartial_t *part, int k, gr_vpartial_t *mine)
{
    for (int j = 0; j < k; ++j) {
        mine[j] = part[j];
        gr_xacc_normalize(&mine[j].p.sum); /* headroom for up to 2^31 ranks */
        mine[j].p.adds = 0;
        gr_wacc_normalize(&mine[j].w);
        mine[j].wadds = 0;
    }
}

gr_result_t gr_batch_combine_result(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_vpartial_t *mine,
                                    const gr_vpartial_t *all, gr_value_t *out)
{
    const gr_desc_t *d0 = &items[0].desc;
    gr_result_t mine_r = mine[0].p.failed ? (gr_result_t)mine[0].p.failed_code : GR_SUCCESS;
    if (!d0->all_ranks && ctx->rank != d0->root) {
        memset(out, 0, sizeof(*out) * (size_t)k);
        return mine_r;
    }
    if (all[0].p.failed > 0) {
        memset(out, 0, sizeof(*out) * (size_t)k);
        if (mine_r != GR_SUCCESS)
            return mine_r;
        GR_FAIL((gr_result_t)all[0].p.failed_code,
                "%lld rank(s) failed their local reduction, first rank %lld (%s); see that rank's message above",
                (long long)all[0].p.failed, (long long)all[0].p.failed_rank,
                gr_strerror((gr_result_t)all[0].p.failed_code));
    }
    for (int j = 0; j < k; ++j)
        gr_vpartial_finish(&all[j], &items[j].desc, &out[j]);
    return mine_r;
}

/* One blocking collective over k partials; results at items[0]'s root (or everywhere). */
static gr_result_t batch_mpi(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_vpartial_t *mine,
                             gr_vpartial_t *all)
{
    const gr_desc_t *d0 = &items[0].desc;
    if (ctx->size == 1) /* one rank's partials are the combine */
        memcpy(all, mine, sizeof(gr_vpartial_t) * (size_t)k);
    else if (d0->all_ranks)
        GR_MPI_CHECK(MPI_Allreduce(mine, all, k, ctx->vpartial_type, ctx->vpartial_op, ctx->comm));
    else
        GR_MPI_CHECK(MPI_Reduce(mine, all, k, ctx->vpartial_type, ctx->vpartial_op, d0->root, ctx->comm));
    return GR_SUCCESS;
}

/* Rank-local problems of one item (this rank's pointers and backend). */
static gr_result_t check_item(gr_ctx_t ctx, const gr_batch_item_t *it, int j, int on_device)
{
    if (it->count > 0 && (!it->x || (it->desc.op.kind == GR_OP_DOT && !it->y)))
        GR_FAIL(GR_ERR_INVALID_ARG, "batch item %d (%s): NULL %s with count %llu", j,
                gr_op_name(it->desc.op.kind), it->x ? "y" : "x", (unsigned long long)it->count);
    if (it->index_base < 0 || (uint64_t)it->index_base > (uint64_t)INT64_MAX - it->count)
        GR_FAIL(GR_ERR_INVALID_ARG, "batch item %d: index_base %lld + count %llu does not fit int64", j,
                (long long)it->index_base, (unsigned long long)it->count);
    if (on_device && ctx->backend != GR_BACKEND_CUDA)
        GR_FAIL(GR_ERR_INVALID_ARG, "batch item %d: device memory needs the cuda backend; reduce host memory "
                                    "(gr_reduce_batch_host, gr_ireduce_batch_host, gr_dot_host) with the cpu backend",
                j);
    if (on_device && gr_desc_is_vec(&it->desc) && !ctx->ops->vec_start)
        GR_FAIL(GR_ERR_NOT_BUILT,
                "batch item %d: %s of %s on device memory needs the CUDA build; reduce host memory "
                "(gr_reduce_batch_host, gr_dot_host) or use --backend cpu",
                j, gr_op_name(it->desc.op.kind), gr_dtype_name(it->desc.dtype));
    return GR_SUCCESS;
}

gr_result_t gr_batch_check(gr_ctx_t ctx, const gr_batch_item_t *items, int k)
{
    if (!ctx || !items)
        GR_FAIL(GR_ERR_INVALID_ARG, "batch: ctx and items must not be NULL");
    if (k < 1 || k > GR_BATCH_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "batch of %d items: use 1..%d", k, GR_BATCH_MAX);
    if (items[0].desc.root < 0 || items[0].desc.root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", items[0].desc.root,
                ctx->size);
    for (int j = 0; j < k; ++j) {
        char msg[256];
        gr_result_t r = gr_desc_check(&items[j].desc, msg, sizeof(msg));
        if (r != GR_SUCCESS)
            GR_FAIL(r, "batch item %d: %s", j, msg);
    }
    return GR_SUCCESS;
}

int gr_batch_local_slots(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device)
{
    if (!on_device || ctx->backend != GR_BACKEND_CUDA || !ctx->ops->start)
        return 0;
    int n = 0;
    for (int j = 0; j < k; ++j)
        n += !gr_desc_is_vec(&items[j].desc);
    return n;
}

int gr_batch_direct_result(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device)
{
    if (!on_device || ctx->size != 1 || !ctx->ops->vec_start)
        return 0;
    for (int j = 0; j < k; ++j) {
        const gr_desc_t *d = &items[j].desc;
        if (d->op.kind != GR_OP_DOT || d->mode != GR_MODE_FAST || !gr_c_is_float((int)d->dtype) ||
            items[j].count == 0)
            return 0;
    }
    return 1;
}

void gr_batch_local_start(gr_batch_local_t *b, gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device,
                          int kernel_exact, void *stream, int blocking, void *result_dev, gr_vpartial_t *part)
{
    b->ctx = ctx;
    b->items = items;
    b->k = k;
    b->part = part;
    b->vtok = -1;
    b->r = GR_SUCCESS;
    for (int j = 0; j < k; ++j) {
        b->etok[j] = -1;
        gr_vpartial_init(&part[j]);
    }
    int device_vec = 0;
    for (int j = 0; j < k && b->r == GR_SUCCESS; ++j) {
        b->r = check_item(ctx, &items[j], j, on_device);
        device_vec |= on_device && !kernel_exact && gr_desc_is_vec(&items[j].desc) && items[j].count > 0;
    }
    if (b->r == GR_SUCCESS && device_vec) /* every vector item's kernels queued in one go */
        b->r = ctx->ops->vec_start(ctx, items, k, stream, blocking, result_dev, &b->vtok);
    for (int j = 0; j < k && b->r == GR_SUCCESS; ++j) {
        const gr_batch_item_t *it = &items[j];
        if (gr_desc_is_vec(&it->desc) && kernel_exact) {
            gr_batch_item_t ex = *it;
            ex.desc.mode = GR_MODE_EXACT;
            b->r = gr_cpu_vec_reduce(ctx->cfg.cpu_threads, &ex, &part[j]);
        } else if (gr_desc_is_vec(&it->desc) && on_device) {
            continue; /* queued above */
        } else if (gr_desc_is_vec(&it->desc)) {
            b->r = gr_cpu_vec_reduce(ctx->cfg.cpu_threads, it, &part[j]);
        } else if (on_device && !blocking && ctx->ops->start) {
            b->r = ctx->ops->start(ctx, ctx->bstate, it->x, it->count, &it->desc, stream, &b->etok[j]);
            if (b->r != GR_SUCCESS)
                b->etok[j] = -1;
        } else {
            b->r = ctx->ops->reduce(ctx, ctx->bstate, it->x, on_device, it->count, &it->desc, &part[j].p);
        }
    }
    /* a failure still leaves the tokens already taken to gr_batch_local_poll */
}

int gr_batch_local_poll(gr_batch_local_t *b, int block)
{
    gr_ctx_t ctx = b->ctx;
    int all_done = 1;
    if (b->vtok >= 0) {
        int done = 0;
        gr_result_t r = ctx->ops->vec_poll(ctx, b->vtok, b->items, b->k, block, &done, b->part);
        if (r != GR_SUCCESS) {
            done = 1;
            if (b->r == GR_SUCCESS)
                b->r = r;
        }
        if (done)
            b->vtok = -1;
        else
            all_done = 0;
    }
    for (int j = 0; j < b->k; ++j) {
        if (b->etok[j] < 0)
            continue;
        const gr_batch_item_t *it = &b->items[j];
        gr_partial_t p;
        int done = 0;
        gr_result_t r = ctx->ops->poll(ctx, ctx->bstate, b->etok[j], it->count, &it->desc, block, &done, &p);
        if (r != GR_SUCCESS) {
            done = 1;
            if (b->r == GR_SUCCESS)
                b->r = r;
        } else if (done) {
            b->part[j].p = p;
        }
        if (done)
            b->etok[j] = -1;
        else
            all_done = 0;
    }
    if (!all_done)
        return 0;
    if (b->r != GR_SUCCESS) {
        /* still take part in the collective so no peer waits forever */
        for (int j = 0; j < b->k; ++j) {
            gr_vpartial_init(&b->part[j]);
            b->part[j].p.failed = 1;
            b->part[j].p.failed_rank = b->ctx->rank;
            b->part[j].p.failed_code = b->r;
        }
    }
    return 1;
}

/* kernel_exact: run the exact kernels whatever the items' mode (the reference), finish by the mode. */
static gr_result_t batch_run(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device, int kernel_exact,
                             gr_value_t *out, gr_timing_t *timing)
{
    if (!out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_batch_*: out must not be NULL");
    /* The descriptors are the same on every rank, so these fail alike everywhere. */
    GR_CHECK(gr_batch_check(ctx, items, k));
    gr_vpartial_t *part = (gr_vpartial_t *)malloc(sizeof(gr_vpartial_t) * 3 * (size_t)k);
    if (!part)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d batch partials", k);
    gr_vpartial_t *mine = part + k, *all = part + 2 * k;
    double t0 = gr_now();
    gr_batch_local_t b;
    gr_batch_local_start(&b, ctx, items, k, on_device, kernel_exact, ctx->cfg.stream, 1, NULL, part);
    (void)gr_batch_local_poll(&b, 1);
    double t1 = gr_now();
    gr_batch_combine_prepare(part, k, mine);
    gr_result_t rc = batch_mpi(ctx, items, k, mine, all);
    if (rc == GR_SUCCESS)
        rc = gr_batch_combine_result(ctx, items, k, mine, all, out);
    double t2 = gr_now();
    free(part);
    if (timing) {
        timing->local = t1 - t0;
        timing->combine = t2 - t1;
        timing->total = t2 - t0;
    }
    return b.r != GR_SUCCESS ? b.r : rc;
}

gr_result_t gr_vec_batch_run(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device, gr_value_t *out,
                             gr_timing_t *timing)
{
    return batch_run(ctx, items, k, on_device, 0, out, timing);
}

/* This rank's shard of a synthetic array in host memory (the generator formulas, one thread). */
static void *host_synthetic(gr_dtype_t t, gr_gen_t g, uint64_t seed, uint64_t b, uint64_t n)
{
    size_t esz = gr_dtype_size(t);
    if (n > SIZE_MAX / esz - 1)
        return NULL;
    void *p = malloc((size_t)(n ? n : 1) * esz);
    if (!p)
        return NULL;
    gr_gen_keys_t keys = gr_gen_make_keys(seed);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t gi = b + i;
        switch (t) {
        case GR_F32:
            ((float *)p)[i] = (float)gr_gen_float((int)g, GR_C_F32, keys, gi);
            break;
        case GR_F64:
            ((double *)p)[i] = gr_gen_float((int)g, GR_C_F64, keys, gi);
            break;
        case GR_I32:
            ((int32_t *)p)[i] = (int32_t)gr_gen_int((int)g, GR_C_I32, keys, gi);
            break;
        case GR_I64:
            ((int64_t *)p)[i] = gr_gen_int((int)g, GR_C_I64, keys, gi);
            break;
        default:
            ((uint16_t *)p)[i] = gr_gen_half_bits((int)g, (int)t, keys, gi);
            break;
        }
    }
    return p;
}

gr_result_t gr_vec_reference_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n,
                                       const gr_desc_t *d, gr_value_t *out)
{
    uint64_t b, e;
    gr_shard_range(global_n, ctx->size, ctx->rank, &b, &e);
    void *x = host_synthetic(d->dtype, gen, seed, b, e - b);
    void *y = d->op.kind == GR_OP_DOT ? host_synthetic(d->dtype, gen, seed + 1, b, e - b) : NULL;
    gr_batch_item_t it;
    gr_batch_item_of(&it, d, x, y, e - b, (int64_t)b);
    if (!x || (d->op.kind == GR_OP_DOT && !y)) {
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__,
               "cannot allocate the reference's copy of %llu %s elements; use more ranks",
               (unsigned long long)(e - b), gr_dtype_name(d->dtype));
        it.x = it.y = NULL;
        it.count = 0;
    }
    gr_result_t r = batch_run(ctx, &it, 1, 0, 1, out, NULL);
    int failed = it.count != e - b;
    free(x);
    free(y);
    return gr_agree(ctx->comm, failed ? GR_ERR_NOMEM : r);
}

gr_result_t gr_reduce_batch_host(gr_ctx_t ctx, const gr_batch_item_t *items, int k, gr_value_t *out,
                                 gr_timing_t *timing)
{
    return gr_vec_batch_run(ctx, items, k, 0, out, timing);
}

gr_result_t gr_reduce_batch_device(gr_ctx_t ctx, const gr_batch_item_t *items, int k, gr_value_t *out,
                                   gr_timing_t *timing)
{
    return gr_vec_batch_run(ctx, items, k, 1, out, timing);
}

static gr_result_t dot_ptrs(gr_ctx_t ctx, const void *x, const void *y, uint64_t count, const gr_desc_t *d,
                            int on_device, gr_value_t *out, gr_timing_t *timing)
{
    if (!d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_dot_*: desc must not be NULL");
    gr_batch_item_t it;
    gr_batch_item_of(&it, d, x, y, count, 0);
    it.desc.op.kind = GR_OP_DOT;
    return gr_vec_batch_run(ctx, &it, 1, on_device, out, timing);
}

gr_result_t gr_dot_device(gr_ctx_t ctx, const void *x, const void *y, uint64_t count, const gr_desc_t *d,
                          gr_value_t *out, gr_timing_t *timing)
{
    return dot_ptrs(ctx, x, y, count, d, 1, out, timing);
}

gr_result_t gr_dot_host(gr_ctx_t ctx, const void *x, const void *y, uint64_t count, const gr_desc_t *d,
                        gr_value_t *out, gr_timing_t *timing)
{
    return dot_ptrs(ctx, x, y, count, d, 0, out, timing);
}

gr_result_t gr_dot_buffer(gr_ctx_t ctx, gr_buffer_t x, gr_buffer_t y, const gr_desc_t *d, gr_value_t *out,
                          gr_timing_t *timing)
{
    if (!ctx || !x || !y || !d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_dot_buffer: ctx, buffers and desc must not be NULL");
    if (x->dtype != y->dtype || x->begin != y->begin || x->end != y->end || d->dtype != x->dtype)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_dot_buffer: x (%s, %llu elements), y (%s, %llu) and the descriptor (%s) "
                                    "must have one dtype and one shape",
                gr_dtype_name(x->dtype), (unsigned long long)(x->end - x->begin), gr_dtype_name(y->dtype),
                (unsigned long long)(y->end - y->begin), gr_dtype_name(d->dtype));
    gr_batch_item_t it;
    gr_batch_item_of(&it, d, x->ptr, y->ptr, x->end - x->begin, (int64_t)x->begin);
    it.desc.op.kind = GR_OP_DOT;
    return gr_vec_batch_run(ctx, &it, 1, x->on_device, out, timing);
}
