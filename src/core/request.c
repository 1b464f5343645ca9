/*
 * request.c - non-blocking reductions: gr_ireduce_device / gr_ireduce_host
 * start one, gr_test / gr_wait complete it (docs/LIBRARY.md).
 *
 * A request goes (NEW ->) LOCAL (the backend's kernel in flight, a token held) ->
 * READY (this rank's partial known) -> COMBINING (MPI_Ireduce or
 * MPI_Iallreduce in flight on ctx->req_comm) -> freed by gr_test / gr_wait.
 * Combines start in the order the requests were started (the context's list
 * is that order), so every rank starts the same collectives in the same order
 * however often it called gr_test; req_comm keeps them apart from the
 * context's blocking collectives. The partial and the combine are those of
 * the blocking call, so the bits are the same.
 *
 * A batch request (gr_ireduce_batch_*) holds k items: its local part is a
 * gr_batch_local_t (vecop.c: the vector items' kernels queued in one go, the
 * other items through the backend's start, one result slot each) and its
 * combine is one MPI_Ireduce / MPI_Iallreduce of k vector partials with the
 * blocking batch's operation (one rank: a copy, no MPI call). ctx->req_count counts result slots: one for a
 * single reduction, max(1, elementwise device items) for a batch.
 */
#include "gr_vec.h"

#include <stdlib.h>
#include <string.h>

enum { REQ_NEW = 0, REQ_LOCAL = 1, REQ_READY = 2, REQ_COMBINING = 3 };

struct gr_request {
    gr_ctx_t ctx;
    gr_desc_t d;
    uint64_t count;
    int state;
    int token;              /* backend token while LOCAL, else -1 */
    gr_partial_t part;      /* this rank's partial (failed set on a local failure) */
    gr_partial_t mine, all; /* the combine's send and receive buffers */
    MPI_Request mreq;
    gr_result_t mpi_r;      /* starting the combine failed */
    void *stream;
    void *result_dev;
    int ordered; /* gr_call_t.ordered: the values reach result_dev in stream order */
    int direct;  /* ordered, written by the batch's kernels themselves (gr_batch_direct_result) */
    int otok;    /* ordered, not direct: the backend's release token (order_arm), -1 when none */
    gr_result_t arm_r; /* queueing the release failed while the kernel ran: the part fails when it is done */
    gr_value_t *vals;  /* ordered, released before its gr_wait / gr_test: the values (vals_r their result) */
    gr_result_t vals_r;
    double t0, t_local;
    struct gr_request *next;
    int units;               /* counted in ctx->req_count */
    /* a batch (k > 0): the items (a copy), 3k partials (local, send, receive), the local part */
    int k;
    gr_batch_item_t *items;
    gr_vpartial_t *vp;
    gr_batch_local_t bl;
};

static void try_release(gr_request_t q, int block);

static void mark_failed(gr_request_t q, gr_result_t r)
{
    gr_partial_init(&q->part);
    q->part.failed = 1;
    q->part.failed_rank = q->ctx->rank;
    q->part.failed_code = r;
}

/* Move q from LOCAL to READY when its local result is there (block: wait for it). */
static void local_poll(gr_request_t q, int block)
{
    if (q->state != REQ_LOCAL)
        return;
    gr_ctx_t ctx = q->ctx;
    int done = 0;
    if (q->k > 0) {
        done = gr_batch_local_poll(&q->bl, block);
    } else {
        gr_result_t r = ctx->ops->poll(ctx, ctx->bstate, q->token, q->count, &q->d, block, &done, &q->part);
        if (r != GR_SUCCESS) {
            mark_failed(q, r);
            done = 1;
        }
    }
    if (!done)
        return;
    if (q->arm_r != GR_SUCCESS)
        mark_failed(q, q->arm_r);
    q->token = -1;
    q->state = REQ_READY;
    q->t_local = gr_now();
}

static void start_combine(gr_request_t q)
{
    gr_ctx_t ctx = q->ctx;
    void *mine = &q->mine, *all = &q->all;
    int n = 1;
    size_t bytes = sizeof(q->mine);
    MPI_Datatype type = ctx->partial_type;
    MPI_Op op = ctx->partial_op;
    if (q->k > 0) {
        gr_batch_combine_prepare(q->vp, q->k, q->vp + q->k);
        mine = q->vp + q->k;
        all = q->vp + 2 * q->k;
        n = q->k;
        bytes = sizeof(gr_vpartial_t) * (size_t)q->k;
        type = ctx->vpartial_type;
        op = ctx->vpartial_op;
    } else {
        gr_combine_prepare(&q->part, &q->mine);
    }
    if (ctx->size == 1) { /* the combine of one rank's partials is those partials: no MPI call */
        memcpy(all, mine, bytes);
        q->mreq = MPI_REQUEST_NULL;
        q->state = REQ_COMBINING;
        return;
    }
    int rc = q->d.all_ranks ? MPI_Iallreduce(mine, all, n, type, op, ctx->req_comm, &q->mreq)
                            : MPI_Ireduce(mine, all, n, type, op, q->d.root, ctx->req_comm, &q->mreq);
    if (rc != MPI_SUCCESS) {
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__,
               "starting the combine of a non-blocking reduction failed (MPI error %d); check the MPI "
               "installation and that every rank is alive", rc);
        q->mpi_r = GR_ERR_MPI;
        q->mreq = MPI_REQUEST_NULL;
    }
    q->state = REQ_COMBINING;
}

/* Start, in request order, the combines of every request up to and including
 * q whose local part is done (block: wait for the local parts). Returns 1 when
 * q's combine has started. */
static int advance(gr_ctx_t ctx, gr_request_t q, int block)
{
    for (gr_request_t h = ctx->req_head; h; h = h->next) {
        if (h->state != REQ_COMBINING) {
            local_poll(h, block);
            if (h->state != REQ_READY)
                return 0;
            start_combine(h);
        }
        try_release(h, block); /* an ordered result's stream may hold later requests' kernels */
        if (h == q)
            return 1;
    }
    return 0; /* not reached: q is in the list */
}

static void unlink_free(gr_request_t q)
{
    gr_ctx_t ctx = q->ctx;
    gr_request_t *pp = &ctx->req_head, prev = NULL;
    while (*pp && *pp != q) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp)
        *pp = q->next;
    if (ctx->req_tail == q)
        ctx->req_tail = prev;
    ctx->req_count -= q->units;
    free(q->items);
    free(q->vp);
    free(q->vals);
    free(q);
}

/* The values of a request whose combine has ended (nout of them), and its result. */
static gr_result_t combine_values(gr_request_t q, gr_value_t *out)
{
    gr_ctx_t ctx = q->ctx;
    gr_result_t r = q->mpi_r;
    if (r != GR_SUCCESS)
        memset(out, 0, sizeof(*out) * (size_t)(q->k > 0 ? q->k : 1));
    else if (q->k > 0)
        r = gr_batch_combine_result(ctx, q->items, q->k, q->vp + q->k, q->vp + 2 * q->k, out);
    else
        r = gr_combine_result(ctx, &q->d, &q->part, &q->all, out);
    return r;
}

/* Hand an ordered request's values to the stream that waits for them (valid 0 on failure); once. */
static void release_values(gr_request_t q, const gr_value_t *out, gr_result_t r)
{
    if (q->otok < 0)
        return;
    const int nout = q->k > 0 ? q->k : 1;
    gr_value_t none[GR_BATCH_MAX];
    if (r != GR_SUCCESS)
        memset(none, 0, sizeof(*out) * (size_t)nout);
    q->ctx->ops->order_release(q->ctx, q->otok, r == GR_SUCCESS ? (const void *)out : (const void *)none,
                               sizeof(*out) * (size_t)nout);
    q->otok = -1;
}

/* The combine's MPI request: 1 when it has ended (block: wait for it), an MPI failure recorded. */
static int combine_done(gr_request_t q, int block)
{
    if (q->mreq == MPI_REQUEST_NULL)
        return 1;
    int flag = 1;
    int rc = block ? MPI_Wait(&q->mreq, MPI_STATUS_IGNORE) : MPI_Test(&q->mreq, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__,
               "%s on the combine of a non-blocking reduction failed; check that every rank is alive",
               block ? "MPI_Wait" : "MPI_Test");
        if (q->mpi_r == GR_SUCCESS)
            q->mpi_r = GR_ERR_MPI;
        q->mreq = MPI_REQUEST_NULL;
        return 1;
    }
    return flag;
}

/*
 * An ordered request's values go to its stream as soon as this rank has them, from any call that
 * progresses the context (the start of another request, gr_wait / gr_test of this or a later one), not
 * only from its own gr_wait: a later request's kernels queued behind the waiting stream need it (they
 * could not run, and a gr_wait of theirs would wait forever). block: wait for the combine.
 */
static void try_release(gr_request_t q, int block)
{
    if (q->otok < 0 || q->state != REQ_COMBINING || !combine_done(q, block))
        return;
    const int nout = q->k > 0 ? q->k : 1;
    q->vals = (gr_value_t *)malloc(sizeof(gr_value_t) * (size_t)nout);
    if (!q->vals) { /* the stream must not wait forever: zeros, and the request reports it */
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__, "cannot allocate %d values of an ordered result", nout);
        release_values(q, NULL, GR_ERR_NOMEM);
        q->mpi_r = GR_ERR_NOMEM;
        return;
    }
    q->vals_r = combine_values(q, q->vals);
    release_values(q, q->vals, q->vals_r);
}

/* The combine has ended: the value, the device delivery, the timing. */
static gr_result_t finish(gr_request_t q, gr_value_t *out, gr_timing_t *timing)
{
    gr_ctx_t ctx = q->ctx;
    const int nout = q->k > 0 ? q->k : 1;
    gr_result_t r;
    if (q->vals) { /* released already */
        memcpy(out, q->vals, sizeof(*out) * (size_t)nout);
        r = q->vals_r;
    } else {
        r = combine_values(q, out);
        release_values(q, out, r);
    }
    /* one value per store: a kernel parameter carries it (GR_CUDA_STORE_MAX); ordered results are queued */
    for (int j = 0; j < nout && r == GR_SUCCESS && out->valid && q->result_dev && !q->ordered; ++j)
        r = ctx->ops->deliver(ctx, ctx->bstate, q->stream, (char *)q->result_dev + sizeof(*out) * (size_t)j, &out[j],
                              sizeof(*out));
    double t2 = gr_now();
    if (timing) {
        timing->local = q->t_local - q->t0;
        timing->combine = t2 - q->t_local;
        timing->total = t2 - q->t0;
    }
    return r;
}

/* A new request of `units` result slots with the call's options (the checks every start makes). */
static gr_result_t new_request(gr_ctx_t ctx, const gr_call_t *call, int units, gr_request_t *out)
{
    if (call && (call->size == 0 || call->size > sizeof(gr_call_t)))
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ireduce_*: gr_call_t.size is %zu; fill the options with gr_call_init() "
                                    "before setting fields", call->size);
    if (units > GR_REQUEST_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "a non-blocking batch of %d reductions other than dot, nrm2, argmin and argmax on "
                                    "device memory needs %d result slots, more than a context has (GR_REQUEST_MAX "
                                    "%d); split it", units, units, GR_REQUEST_MAX);
    if (ctx->req_count + units > GR_REQUEST_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "%d non-blocking reductions of this context are outstanding, the most there "
                                    "may be (GR_REQUEST_MAX, counting one per item of a batch other than dot, nrm2, "
                                    "argmin and argmax on device memory); complete some with gr_wait or gr_test first",
                ctx->req_count);
    gr_call_t c;
    gr_call_init(&c);
    if (call)
        memcpy(&c, call, call->size); /* an older, shorter gr_call_t keeps the defaults of the rest */
    if (c.ordered && !c.result_dev)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_call_t.ordered asks for the values in stream order at result_dev, which is "
                                    "NULL; set result_dev to device memory for the values, or ordered to 0");
    if (c.ordered && !c.stream && !ctx->cfg.stream)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_call_t.ordered orders the values on a stream, and none is given; set "
                                    "gr_call_t.stream or the context's stream (gr_config_t.stream, "
                                    "gr_ctx_set_stream)");
    gr_request_t q = (gr_request_t)calloc(1, sizeof(*q));
    if (!q)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate a request");
    q->ctx = ctx;
    q->units = units;
    q->token = -1;
    q->mreq = MPI_REQUEST_NULL;
    q->stream = c.stream ? c.stream : ctx->cfg.stream;
    q->result_dev = c.result_dev;
    q->ordered = c.ordered != 0;
    q->otok = -1;
    q->t0 = gr_now();
    gr_partial_init(&q->part);
    *out = q;
    return GR_SUCCESS;
}

/* An ordered request whose kernels do not write the values: queue the wait for this rank's release (finish)
 * and the delivery of n values after it. A failure fails this rank's part (logged by the backend). */
static gr_result_t arm(gr_request_t q, int n)
{
    gr_ctx_t ctx = q->ctx;
    if (!q->ordered || q->direct || !ctx->ops->order_arm)
        return GR_SUCCESS; /* no backend to order on: the result_dev check has failed the part already */
    gr_result_t r = ctx->ops->order_arm(ctx, q->stream, q->result_dev, sizeof(gr_value_t) * (size_t)n, &q->otok);
    if (r != GR_SUCCESS)
        q->otok = -1;
    return r;
}

/* Append q to the context's requests and start what can start: the combine overlaps the caller's work. */
static void enqueue(gr_ctx_t ctx, gr_request_t q)
{
    if (ctx->req_tail)
        ctx->req_tail->next = q;
    else
        ctx->req_head = q;
    ctx->req_tail = q;
    ctx->req_count += q->units;
    (void)advance(ctx, q, 0);
}

static gr_result_t ibatch(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device, const gr_call_t *call,
                          gr_request_t *req)
{
    if (!req)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ireduce_batch_*: req must not be NULL");
    *req = NULL;
    GR_CHECK(gr_batch_check(ctx, items, k)); /* the same descriptors on every rank: all fail alike */
    int units = gr_batch_local_slots(ctx, items, k, on_device);
    gr_request_t q = NULL;
    GR_CHECK(new_request(ctx, call, units > 1 ? units : 1, &q));
    q->k = k;
    q->d = items[0].desc; /* root and all_ranks */
    q->items = (gr_batch_item_t *)malloc(sizeof(*items) * (size_t)k);
    q->vp = (gr_vpartial_t *)malloc(sizeof(gr_vpartial_t) * 3 * (size_t)k);
    if (!q->items || !q->vp) {
        free(q->items);
        free(q->vp);
        free(q);
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate a batch request of %d items", k);
    }
    memcpy(q->items, items, sizeof(*items) * (size_t)k);
    /* ordered, one rank, fast dots: the kernels write the values (no host step in the stream) */
    const int direct = q->ordered && ctx->ops->deliver && gr_batch_direct_result(ctx, q->items, k, on_device);
    gr_batch_local_start(&q->bl, ctx, q->items, k, on_device, 0, q->stream, 0, direct ? q->result_dev : NULL,
                         q->vp);
    q->direct = direct && q->bl.r == GR_SUCCESS; /* else the release delivers (valid 0 on failure) */
    if (q->result_dev && !ctx->ops->deliver && q->bl.r == GR_SUCCESS) { /* fails this rank's part */
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__, "gr_call_t.result_dev needs the cuda backend (a device "
                                                             "address); leave it NULL on the cpu backend");
        q->bl.r = GR_ERR_INVALID_ARG;
    }
    gr_result_t ra = arm(q, k);
    if (ra != GR_SUCCESS && q->bl.r == GR_SUCCESS)
        q->bl.r = ra;
    q->state = REQ_LOCAL; /* host items are done already: the first poll says so */
    enqueue(ctx, q);
    *req = q;
    return GR_SUCCESS;
}

static gr_result_t istart(gr_ctx_t ctx, const void *ptr, int on_device, uint64_t count, const gr_desc_t *d,
                          const gr_call_t *call, gr_request_t *req)
{
    if (!req)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ireduce_*: req must not be NULL");
    *req = NULL;
    if (!ctx || !d)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ireduce_*: ctx and desc must not be NULL");
    GR_CHECK(gr_desc_validate(d));
    if (d->root < 0 || d->root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d->root, ctx->size);
    if (d->op.kind == GR_OP_DOT)
        GR_FAIL(GR_ERR_INVALID_ARG, "dot needs two arrays: use gr_ireduce_batch_device or gr_ireduce_batch_host");
    if (gr_desc_is_vec(d)) {
        /* nrm2, argmin, argmax, the exact f64 sum of squares: a batch of one (index base 0, as gr_reduce_host) */
        gr_batch_item_t it;
        gr_batch_item_of(&it, d, ptr, NULL, count, 0);
        return ibatch(ctx, &it, 1, on_device, call, req);
    }
    gr_request_t q = NULL;
    GR_CHECK(new_request(ctx, call, 1, &q));
    q->d = *d;
    q->count = count;

    /* Rank-local problems fail this rank's part only: the request still takes
     * part in the combine, so no peer waits for it forever. */
    gr_result_t r = GR_SUCCESS;
    const char *why = NULL;
    if (count > 0 && !ptr) {
        r = GR_ERR_INVALID_ARG;
        why = "NULL data pointer with a non-zero count";
    } else if (on_device && ctx->backend != GR_BACKEND_CUDA) {
        r = GR_ERR_INVALID_ARG;
        why = "gr_ireduce_device needs the cuda backend; use gr_ireduce_host with the cpu backend";
    } else if (q->result_dev && !ctx->ops->deliver) {
        r = GR_ERR_INVALID_ARG;
        why = "gr_call_t.result_dev needs the cuda backend (a device address); leave it NULL on the cpu backend";
    }
    if (r != GR_SUCCESS)
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__, "%s", why);
    if (r == GR_SUCCESS && on_device && ctx->ops->start) {
        r = ctx->ops->start(ctx, ctx->bstate, ptr, count, d, q->stream, &q->token);
        if (r == GR_SUCCESS)
            q->state = REQ_LOCAL;
    } else if (r == GR_SUCCESS) {
        r = ctx->ops->reduce(ctx, ctx->bstate, ptr, on_device, count, d, &q->part);
    }
    gr_result_t ra = arm(q, 1); /* after the start: the release waits for the host, which waits for the kernel */
    if (ra != GR_SUCCESS && q->state == REQ_LOCAL)
        q->arm_r = ra; /* the kernel's token is still polled; the part fails once it is done */
    else if (ra != GR_SUCCESS && r == GR_SUCCESS)
        r = ra;
    if (r != GR_SUCCESS || q->state != REQ_LOCAL) {
        if (r != GR_SUCCESS)
            mark_failed(q, r);
        q->state = REQ_READY;
        q->t_local = gr_now();
    }
    enqueue(ctx, q);
    *req = q;
    return GR_SUCCESS;
}

gr_result_t gr_ireduce_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count, const gr_desc_t *d,
                              const gr_call_t *call, gr_request_t *req)
{
    return istart(ctx, dev_ptr, 1, count, d, call, req);
}

gr_result_t gr_ireduce_host(gr_ctx_t ctx, const void *host_ptr, uint64_t count, const gr_desc_t *d,
                            const gr_call_t *call, gr_request_t *req)
{
    return istart(ctx, host_ptr, 0, count, d, call, req);
}

gr_result_t gr_ireduce_batch_device(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_call_t *call,
                                    gr_request_t *req)
{
    return ibatch(ctx, items, k, 1, call, req);
}

gr_result_t gr_ireduce_batch_host(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_call_t *call,
                                  gr_request_t *req)
{
    return ibatch(ctx, items, k, 0, call, req);
}

gr_result_t gr_wait(gr_request_t *req, gr_value_t *out, gr_timing_t *timing)
{
    if (!req || !*req || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_wait: req, *req and out must not be NULL");
    gr_request_t q = *req;
    (void)advance(q->ctx, q, 1);
    (void)combine_done(q, 1);
    gr_result_t r = finish(q, out, timing);
    unlink_free(q);
    *req = NULL;
    return r;
}

gr_result_t gr_test(gr_request_t *req, int *done, gr_value_t *out, gr_timing_t *timing)
{
    if (!req || !*req || !done || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_test: req, *req, done and out must not be NULL");
    gr_request_t q = *req;
    *done = 0;
    if (!advance(q->ctx, q, 0) || !combine_done(q, 0))
        return GR_SUCCESS;
    gr_result_t r = finish(q, out, timing);
    unlink_free(q);
    *req = NULL;
    *done = 1;
    return r;
}

void gr_requests_drain(gr_ctx_t ctx)
{
    while (ctx->req_head) {
        gr_value_t v[GR_BATCH_MAX];
        gr_request_t h = ctx->req_head;
        (void)gr_wait(&h, v, NULL);
    }
}
