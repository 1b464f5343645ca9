/* partial.c - the exact cross-rank partial and its MPI combine. */
#include "gr_internal.h"

#include <math.h>
#include <string.h>

static int is_float(gr_dtype_t t) { return gr_c_is_float((int)t); }
static int is_minmax(gr_op_kind_t k) { return k == GR_OP_MIN || k == GR_OP_MAX; }

double gr_fmin_total(double a, double b)
{
    if (a == b)
        return signbit(a) ? a : b; /* -0.0 below +0.0 */
    return a < b ? a : b;
}

double gr_fmax_total(double a, double b)
{
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

void gr_partial_init(gr_partial_t *p)
{
    memset(p, 0, sizeof(*p));
    p->fmin = INFINITY;
    p->fmax = -INFINITY;
    p->imin = INT64_MAX;
    p->imax = INT64_MIN;
    p->failed_rank = INT64_MAX;
}

void gr_partial_maybe_normalize(gr_partial_t *p)
{
    if (p->adds >= (int64_t)GR_XACC_HEADROOM) {
        gr_xacc_normalize(&p->sum);
        p->adds = 0;
    }
}

void gr_partial_add_term(gr_partial_t *p, double t)
{
    if (isnan(t)) {
        p->nan++;
    } else if (isinf(t)) {
        if (t > 0)
            p->pinf++;
        else
            p->ninf++;
    } else {
        if (!(t == 0 && signbit(t)))
            p->nonnegzero++;
        gr_xacc_add_double(&p->sum, t);
        p->adds++;
        gr_partial_maybe_normalize(p);
    }
}

void gr_partial_add_local(gr_partial_t *p, const gr_desc_t *d, const gr_local_t *loc)
{
    if (loc->count == 0)
        return;
    p->count += (int64_t)loc->count;
    if (is_float(d->dtype)) {
        if (is_minmax(d->op.kind)) {
            if (isnan(loc->f))
                p->nan++;
            else if (d->op.kind == GR_OP_MIN)
                p->fmin = gr_fmin_total(p->fmin, loc->f);
            else
                p->fmax = gr_fmax_total(p->fmax, loc->f);
        } else {
            gr_partial_add_term(p, loc->f);
        }
        return;
    }
    if (is_minmax(d->op.kind)) {
        int64_t v = (int64_t)loc->lo;
        if (v < p->imin)
            p->imin = v;
        if (v > p->imax)
            p->imax = v;
        return;
    }
    p->overflow += loc->overflow;
    gr_xacc_add_i128(&p->sum, loc->lo, loc->hi);
    p->adds += 2; /* one i128 adds up to 2^32 twice over to a limb */
    gr_partial_maybe_normalize(p);
}

void gr_partial_merge(gr_partial_t *p, const gr_partial_t *q)
{
    gr_xacc_add(&p->sum, &q->sum);
    p->adds += q->adds + 1;
    gr_partial_maybe_normalize(p);
    p->count += q->count;
    p->nan += q->nan;
    p->pinf += q->pinf;
    p->ninf += q->ninf;
    p->nonnegzero += q->nonnegzero;
    p->overflow += q->overflow;
    p->failed += q->failed;
    if (q->failed_rank < p->failed_rank) {
        p->failed_rank = q->failed_rank;
        p->failed_code = q->failed_code;
    }
    p->fmin = gr_fmin_total(p->fmin, q->fmin);
    p->fmax = gr_fmax_total(p->fmax, q->fmax);
    if (q->imin < p->imin)
        p->imin = q->imin;
    if (q->imax > p->imax)
        p->imax = q->imax;
}

void gr_partial_finish(const gr_partial_t *p, const gr_desc_t *d, gr_value_t *out)
{
    memset(out, 0, sizeof(*out));
    out->valid = 1;
    out->index = -1;
    out->dtype = (int)d->dtype;
    out->count = (uint64_t)p->count;
    out->nan_count = (uint64_t)p->nan;
    if (is_float(d->dtype)) {
        if (is_minmax(d->op.kind)) {
            if (p->nan > 0 || p->count == 0)
                out->f = NAN;
            else
                out->f = d->op.kind == GR_OP_MIN ? p->fmin : p->fmax;
            return;
        }
        if (p->nan > 0 || (p->pinf > 0 && p->ninf > 0))
            out->f = NAN;
        else if (p->pinf > 0)
            out->f = INFINITY;
        else if (p->ninf > 0)
            out->f = -INFINITY;
        else {
            /* exact: rounded once to the input type; fast: f64 (as for f32) */
            double r = d->mode == GR_MODE_EXACT ? gr_xacc_round_dtype(&p->sum, (int)d->dtype) : gr_xacc_to_double(&p->sum);
            /* IEEE: a sum of only -0.0 is -0.0; an exact cancellation is +0.0 */
            if (r == 0 && p->count > 0 && p->nonnegzero == 0)
                r = -0.0;
            out->f = r;
        }
        return;
    }
    out->is_integer = 1;
    if (is_minmax(d->op.kind)) {
        out->i = d->op.kind == GR_OP_MIN ? p->imin : p->imax;
        out->f = (double)out->i;
        return;
    }
    int64_t v = 0;
    int fits = gr_xacc_to_i64(&p->sum, &v);
    out->overflow = (!fits || p->overflow > 0) ? 1 : 0;
    out->i = fits ? v : 0;
    /* A term that did not fit int64 was not added: no value can be shown then. */
    out->f = p->overflow > 0 ? NAN : gr_xacc_to_double(&p->sum);
}

/* MPI user operation: exact and order-free, so MPI may apply it in any tree. */
static void partial_mpi_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const gr_partial_t *a = (const gr_partial_t *)in;
    gr_partial_t *b = (gr_partial_t *)inout;
    for (int i = 0; i < *len; ++i)
        gr_partial_merge(&b[i], &a[i]);
}

gr_result_t gr_combine_setup(gr_ctx_t ctx)
{
    GR_MPI_CHECK(MPI_Type_contiguous((int)sizeof(gr_partial_t), MPI_BYTE, &ctx->partial_type));
    GR_MPI_CHECK(MPI_Type_commit(&ctx->partial_type));
    GR_MPI_CHECK(MPI_Op_create(partial_mpi_op, 1, &ctx->partial_op));
    return gr_vec_combine_setup(ctx);
}

void gr_combine_teardown(gr_ctx_t ctx)
{
    gr_vec_combine_teardown(ctx);
    if (ctx->partial_op != MPI_OP_NULL)
        MPI_Op_free(&ctx->partial_op);
    if (ctx->partial_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&ctx->partial_type);
}

void gr_combine_prepare(const gr_partial_t *p, gr_partial_t *mine)
{
    *mine = *p;
    gr_xacc_normalize(&mine->sum); /* headroom for up to 2^31 ranks */
    mine->adds = 0;
}

gr_result_t gr_combine_result(gr_ctx_t ctx, const gr_desc_t *d, const gr_partial_t *p, const gr_partial_t *all,
                              gr_value_t *out)
{
    if (d->all_ranks || ctx->rank == d->root) {
        if (all->failed > 0) {
            memset(out, 0, sizeof(*out));
            if (p->failed)
                return (gr_result_t)p->failed_code;
            GR_FAIL((gr_result_t)all->failed_code,
                    "%lld rank(s) failed their local reduction, first rank %lld (%s); see that rank's "
                    "message above", (long long)all->failed, (long long)all->failed_rank,
                    gr_strerror((gr_result_t)all->failed_code));
        }
        gr_partial_finish(all, d, out);
    } else {
        memset(out, 0, sizeof(*out));
    }
    return p->failed ? (gr_result_t)p->failed_code : GR_SUCCESS;
}

gr_result_t gr_combine(gr_ctx_t ctx, const gr_desc_t *d, const gr_partial_t *p, gr_value_t *out)
{
    gr_partial_t mine, all;
    gr_combine_prepare(p, &mine);
    if (d->all_ranks) {
        GR_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, ctx->partial_type, ctx->partial_op, ctx->comm));
    } else {
        GR_MPI_CHECK(MPI_Reduce(&mine, &all, 1, ctx->partial_type, ctx->partial_op, d->root, ctx->comm));
    }
    return gr_combine_result(ctx, d, p, &all, out);
}
