/*
 * stats.c - --op stats on the host: count, exact sum, mean, population and
 * sample variance, min/max (numpy: NaN propagates) and nanmin/nanmax, NaN and
 * +-Inf counts, in one pass over the data.
 *
 * Variance: Welford's update within blocks of GR_STATS_BLOCK elements, and
 * Chan, Golub and LeVeque's pairwise formula to merge blocks, chunks and
 * ranks: for parts (na, ma, Ma) and (nb, mb, Mb), d = mb - ma,
 *   n = na + nb,  m = ma + d nb / n,  M = Ma + Mb + d^2 na nb / n.
 * Ranks are merged in rank order after a gather (not in an MPI reduction
 * tree), so the variance is repeatable for a fixed np whatever algorithm MPI
 * picks. The sum is exact, so sum and mean do not depend on np at all.
 *
 * Device memory (gr_stats_device, gr_stats_buffer on the cuda backend) gets
 * its rank's part from the GPU kernel (backend_cuda_stats.c, kernels/stats.cu:
 * per-thread shifted sums instead of Welford, the same exact sum), merged here
 * with the same gr_stats_part_merge and combine.
 */
#include "gr_stats.h"
#include "gr_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gr_stats_part_init(gr_stats_part_t *p)
{
    memset(p, 0, sizeof(*p));
    p->min = INFINITY;
    p->max = -INFINITY;
    p->imin = INT64_MAX;
    p->imax = INT64_MIN;
}

/* (na, ma, Ma) += (nb, mb, Mb) */
static void chan(uint64_t *na, double *ma, double *m2a, uint64_t nb, double mb, double m2b)
{
    if (nb == 0)
        return;
    if (*na == 0) {
        *na = nb;
        *ma = mb;
        *m2a = m2b;
        return;
    }
    double n = (double)(*na + nb);
    double d = mb - *ma;
    *ma += d * ((double)nb / n);
    *m2a += m2b + d * d * ((double)*na * (double)nb / n);
    *na += nb;
}

static void add_block_f(gr_stats_part_t *p, const void *buf, uint64_t n, int f64)
{
    uint64_t nf = 0;
    double mean = 0, m2 = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double x = f64 ? ((const double *)buf)[i] : (double)((const float *)buf)[i];
        if (isnan(x)) {
            p->nan++;
            continue;
        }
        p->min = gr_fmin_total(p->min, x);
        p->max = gr_fmax_total(p->max, x);
        if (isinf(x)) {
            if (x > 0)
                p->pinf++;
            else
                p->ninf++;
            continue;
        }
        if (!(x == 0 && signbit(x)))
            p->nonnegzero++;
        gr_xacc_add_double(&p->sum, x);
        if (++p->adds >= (int64_t)GR_XACC_HEADROOM) {
            gr_xacc_normalize(&p->sum);
            p->adds = 0;
        }
        ++nf;
        double dlt = x - mean;
        mean += dlt / (double)nf;
        m2 += dlt * (x - mean);
    }
    p->count += n;
    chan(&p->nf, &p->mean, &p->m2, nf, mean, m2);
}

static void add_block_i(gr_stats_part_t *p, const void *buf, uint64_t n, int i64)
{
    uint64_t lo = 0;
    int64_t hi = 0;
    double mean = 0, m2 = 0;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t v = i64 ? ((const int64_t *)buf)[i] : (int64_t)((const int32_t *)buf)[i];
        gr_acc128_add(&lo, &hi, v);
        if (v < p->imin)
            p->imin = v;
        if (v > p->imax)
            p->imax = v;
        double x = (double)v, dlt = x - mean;
        mean += dlt / (double)(i + 1);
        m2 += dlt * (x - mean);
    }
    gr_xacc_add_i128(&p->sum, lo, hi);
    p->adds += 2;
    if (p->adds >= (int64_t)GR_XACC_HEADROOM) {
        gr_xacc_normalize(&p->sum);
        p->adds = 0;
    }
    p->count += n;
    p->nonnegzero += n;
    chan(&p->nf, &p->mean, &p->m2, n, mean, m2);
}

void gr_stats_part_add(gr_stats_part_t *p, const void *buf, uint64_t n, gr_dtype_t t)
{
    size_t esz = gr_dtype_size(t);
    for (uint64_t first = 0; first < n; first += GR_STATS_BLOCK) {
        uint64_t k = n - first < GR_STATS_BLOCK ? n - first : GR_STATS_BLOCK;
        const char *b = (const char *)buf + first * esz;
        if (t == GR_F32 || t == GR_F64)
            add_block_f(p, b, k, t == GR_F64);
        else
            add_block_i(p, b, k, t == GR_I64);
    }
}

void gr_stats_part_merge(gr_stats_part_t *p, const gr_stats_part_t *q)
{
    gr_xacc_add(&p->sum, &q->sum);
    p->adds += q->adds + 1;
    if (p->adds >= (int64_t)GR_XACC_HEADROOM) {
        gr_xacc_normalize(&p->sum);
        p->adds = 0;
    }
    p->count += q->count;
    p->nan += q->nan;
    p->pinf += q->pinf;
    p->ninf += q->ninf;
    p->nonnegzero += q->nonnegzero;
    chan(&p->nf, &p->mean, &p->m2, q->nf, q->mean, q->m2);
    p->min = gr_fmin_total(p->min, q->min);
    p->max = gr_fmax_total(p->max, q->max);
    if (q->imin < p->imin)
        p->imin = q->imin;
    if (q->imax > p->imax)
        p->imax = q->imax;
    if (!p->failed_code)
        p->failed_code = q->failed_code;
}

static void finish(const gr_stats_part_t *p, gr_dtype_t t, gr_stats_t *o)
{
    memset(o, 0, sizeof(*o));
    o->valid = 1;
    o->count = p->count;
    o->nan_count = p->nan;
    o->pinf_count = p->pinf;
    o->ninf_count = p->ninf;
    gr_xacc_t x = p->sum;
    gr_xacc_normalize(&x);
    double nanv = NAN;
    if (t == GR_I32 || t == GR_I64) {
        o->is_integer = 1;
        int64_t v = 0;
        o->overflow = !gr_xacc_to_i64(&x, &v);
        o->isum = o->overflow ? 0 : v;
        o->sum = gr_xacc_to_double(&x);
        o->imin = p->imin;
        o->imax = p->imax;
        o->min = o->nanmin = p->count ? (double)p->imin : nanv;
        o->max = o->nanmax = p->count ? (double)p->imax : nanv;
    } else {
        if (p->nan > 0 || (p->pinf > 0 && p->ninf > 0))
            o->sum = nanv;
        else if (p->pinf > 0)
            o->sum = INFINITY;
        else if (p->ninf > 0)
            o->sum = -INFINITY;
        else {
            o->sum = gr_xacc_to_double(&x);
            if (o->sum == 0 && p->count > 0 && p->nonnegzero == 0)
                o->sum = -0.0;
        }
        int numbers = p->count > p->nan;
        o->nanmin = numbers ? p->min : nanv;
        o->nanmax = numbers ? p->max : nanv;
        o->min = p->nan == 0 && numbers ? p->min : nanv;
        o->max = p->nan == 0 && numbers ? p->max : nanv;
    }
    o->mean = p->count ? o->sum / (double)p->count : nanv;
    int clean = p->nan == 0 && p->pinf == 0 && p->ninf == 0 && p->nf == p->count;
    o->var = clean && p->nf > 0 ? p->m2 / (double)p->nf : nanv;
    o->var_sample = clean && p->nf > 1 ? p->m2 / (double)(p->nf - 1) : nanv;
}

gr_result_t gr_stats_combine(gr_ctx_t ctx, const gr_desc_t *d, const gr_stats_part_t *p, gr_stats_t *out)
{
    gr_stats_part_t mine = *p;
    gr_xacc_normalize(&mine.sum); /* headroom for the merges below */
    mine.adds = 0;
    int here = d->all_ranks || ctx->rank == d->root;
    gr_stats_part_t *all = here ? (gr_stats_part_t *)malloc(sizeof(*all) * (size_t)ctx->size) : NULL;
    if (here && !all)
        GR_ERROR(GR_SUB_ALL, "cannot allocate %d stats partials", ctx->size);
    gr_result_t ok = gr_agree(ctx->comm, here && !all ? GR_ERR_NOMEM : GR_SUCCESS);
    if (ok != GR_SUCCESS) {
        free(all);
        memset(out, 0, sizeof(*out));
        return ok;
    }
    int bytes = (int)sizeof(mine);
    int rc = d->all_ranks ? MPI_Allgather(&mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, ctx->comm)
                          : MPI_Gather(&mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, d->root, ctx->comm);
    memset(out, 0, sizeof(*out));
    if (rc != MPI_SUCCESS) {
        free(all);
        GR_FAIL(GR_ERR_MPI, "gathering the stats partials failed; check that every rank is alive");
    }
    if (!here)
        return p->failed_code ? (gr_result_t)p->failed_code : GR_SUCCESS;
    gr_stats_part_t acc;
    gr_stats_part_init(&acc);
    int bad_rank = -1;
    for (int r = 0; r < ctx->size; ++r) {
        if (all[r].failed_code && bad_rank < 0)
            bad_rank = r;
        gr_stats_part_merge(&acc, &all[r]);
        if ((r & 1023) == 1023)
            gr_xacc_normalize(&acc.sum);
    }
    free(all);
    if (bad_rank >= 0) {
        if (p->failed_code)
            return (gr_result_t)p->failed_code;
        GR_FAIL((gr_result_t)acc.failed_code, "rank %d could not compute its statistics (%s); see its message above",
                bad_rank, gr_strerror((gr_result_t)acc.failed_code));
    }
    finish(&acc, d->dtype, out);
    return GR_SUCCESS;
}

/* A dtype the stats paths know (f16/bf16 in memory: widen to f32 first). */
static int stats_dtype_ok(gr_dtype_t t) { return t == GR_F32 || t == GR_F64 || t == GR_I32 || t == GR_I64; }

/* One rank's part (host loop, or the cuda kernel for device memory), then
 * the rank-ordered combine. Every rank takes part in the combine even when
 * its own part failed, so no peer waits forever. */
static gr_result_t stats_run(gr_ctx_t ctx, const void *ptr, int on_device, uint64_t count, const gr_desc_t *d,
                             gr_stats_t *out, gr_timing_t *timing, const char *who)
{
    if (!ctx || !d || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "%s: ctx, desc and out must not be NULL", who);
    if ((unsigned)d->dtype >= GR_DTYPE_COUNT)
        GR_FAIL(GR_ERR_INVALID_ARG, "%s: unknown dtype %d", who, (int)d->dtype);
    if (!stats_dtype_ok(d->dtype))
        GR_FAIL(GR_ERR_UNSUPPORTED, "%s: --op stats takes f32, f64, i32 or i64 values, not %s; widen the data to f32 "
                                    "(input files are widened for you)", who, gr_dtype_name(d->dtype));
    if (d->root < 0 || d->root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d->root, ctx->size);
    double t0 = gr_now();
    gr_stats_part_t part;
    gr_stats_part_init(&part);
    gr_result_t r = GR_SUCCESS;
    if (count > 0 && !ptr) {
        GR_ERROR(GR_SUB_ALL, "%s: NULL data pointer with a non-zero count", who);
        r = GR_ERR_INVALID_ARG;
    } else if (on_device && ctx->backend != GR_BACKEND_CUDA) {
        GR_ERROR(GR_SUB_ALL, "%s: device memory needs the cuda backend; use gr_stats_host with the cpu backend", who);
        r = GR_ERR_INVALID_ARG;
    } else {
        r = ctx->ops->stats(ctx, ctx->bstate, ptr, on_device, count, d->dtype, &part);
    }
    if (r != GR_SUCCESS) {
        gr_stats_part_init(&part);
        part.failed_code = r;
    }
    double t1 = gr_now();
    gr_result_t rc = gr_stats_combine(ctx, d, &part, out);
    double t2 = gr_now();
    if (timing) {
        timing->local = t1 - t0;
        timing->combine = t2 - t1;
        timing->total = t2 - t0;
    }
    return gr_agree(ctx->comm, r != GR_SUCCESS ? r : rc);
}

gr_result_t gr_stats_host(gr_ctx_t ctx, const void *ptr, uint64_t count, const gr_desc_t *d, gr_stats_t *out,
                          gr_timing_t *timing)
{
    return stats_run(ctx, ptr, 0, count, d, out, timing, "gr_stats_host");
}

gr_result_t gr_stats_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count, const gr_desc_t *d, gr_stats_t *out,
                            gr_timing_t *timing)
{
    return stats_run(ctx, dev_ptr, 1, count, d, out, timing, "gr_stats_device");
}

gr_result_t gr_stats_buffer(gr_ctx_t ctx, gr_buffer_t b, const gr_desc_t *d, gr_stats_t *out, gr_timing_t *timing)
{
    if (!b || !d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_buffer: buffer and desc must not be NULL");
    if (d->dtype != b->dtype)
        GR_FAIL(GR_ERR_INVALID_ARG, "descriptor dtype %s differs from the buffer's %s", gr_dtype_name(d->dtype),
                gr_dtype_name(b->dtype));
    return stats_run(ctx, b->ptr, b->on_device, b->end - b->begin, d, out, timing, "gr_stats_buffer");
}
