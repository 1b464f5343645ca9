/*
 * backend_cuda_vec.c - the vector ops (dot, nrm2, argmin/argmax, the exact
 * f64 sum of squares) on device memory: the kernels of kernels/dot.cu and
 * kernels/argext.cu for every vector item of a batch, queued together on the
 * caller's stream for a non-blocking batch given one (launch_stream), else on
 * the context's stream (ordered after the caller's stream by an event): one
 * launch per record kind (fast, exact, argmin/argmax) holding all its items
 * with the grid each would have alone (a single item takes its own kernel),
 * and one more for each of fast and exact when the batch has dot pairs
 * (two items sharing an array, read in one pass): at most five. Each launch folds every item's grid into one out record on the
 * GPU (gr_vec_kernels.h: a fixed order for fast sums, so a fixed GPU model
 * and grid give fixed bits; exact limbs and argext states are order-free);
 * the last blocks write the k out records straight into mapped pinned host
 * memory (no copy), each with its done word set last behind a system fence,
 * then an event; the poll watches the done words (no driver call when they
 * are all there, the event after a while) and adds each out record to its
 * item's vector partial. Nothing here
 * synchronises the device: the buffers are kept per request place
 * (GR_REQUEST_MAX of them, and one for the blocking calls) and grow only
 * when a batch needs more.
 *
 * An arena: GR_BATCH_MAX out records in mapped pinned host memory; device
 * memory with GR_BATCH_MAX fold scratches (zeroed once at allocation; every
 * launch leaves them zero), then the block records of the batch's fast and
 * argext items.
 */
#include "gr_cuda_check.h"
#include "gr_cuda_state.h"
#include "gr_vec.h"
#include "gr_vec_kernels.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(GR_VEC_WLIMBS == GR_WACC_LIMBS && GR_VEC_WBIAS == GR_WACC_BIAS,
               "the kernels' block limbs are gr_wacc_t's");
_Static_assert(GR_VEC_JOBS_MAX >= GR_BATCH_MAX, "a batch launch holds every item of a batch");
_Static_assert(sizeof(gr_argext_t) == sizeof(gr_vec_arg_rec_t) &&
                   offsetof(gr_argext_t, nan_i) == offsetof(gr_vec_arg_rec_t, nan_i) &&
                   offsetof(gr_argext_t, imin) == offsetof(gr_vec_arg_rec_t, imin),
               "an argmin/argmax record is a gr_argext_t, field for field");

_Static_assert(sizeof(gr_value_t) == sizeof(gr_vec_value_t) && offsetof(gr_value_t, f) == offsetof(gr_vec_value_t, f) &&
                   offsetof(gr_value_t, i) == offsetof(gr_vec_value_t, i) &&
                   offsetof(gr_value_t, count) == offsetof(gr_vec_value_t, count) &&
                   offsetof(gr_value_t, nan_count) == offsetof(gr_vec_value_t, nan_count) &&
                   offsetof(gr_value_t, dtype) == offsetof(gr_vec_value_t, dtype) &&
                   offsetof(gr_value_t, index) == offsetof(gr_vec_value_t, index) &&
                   offsetof(gr_value_t, overflow) == offsetof(gr_vec_value_t, overflow),
               "a value the kernels write is a gr_value_t, field for field");
_Static_assert((int)GR_F32 == (int)GR_C_F32 && (int)GR_F64 == (int)GR_C_F64 && (int)GR_F16 == (int)GR_C_F16 &&
                   (int)GR_BF16 == (int)GR_C_BF16,
               "a job's dtype is the gr_dtype_t a value reports");

enum { REC_NONE = 0, REC_FAST = 1, REC_EXACT = 2, REC_ARG = 3 };
#define VEC_ARENAS (GR_REQUEST_MAX + 1) /* one per request place, the last for the blocking calls */
#define VEC_ALIGN ((size_t)256)
/* The out records (host), and the fixed part of an arena's device memory: the fold scratches. */
#define VEC_OUT_BYTES (sizeof(gr_vec_out_t) * GR_BATCH_MAX)
#define VEC_FIXED_BYTES ((sizeof(gr_vec_fold_t) * GR_BATCH_MAX + VEC_ALIGN - 1) / VEC_ALIGN * VEC_ALIGN)
/* An arena's first size: the fixed part and two fast items' records on a 132-SM GPU; growing is rare. */
#define VEC_ARENA_MIN ((size_t)1 << 20)

/* The buffers of one batch in flight, and where each item's block records lie. */
typedef struct vec_arena {
    void *dev;                   /* fold scratches, block records: device memory */
    gr_vec_out_t *host, *host_d; /* the out records: mapped pinned host memory, and its device address */
    size_t cap;
    cudaEvent_t ev;   /* recorded after the batch's kernels (not with no_ev) */
    cudaStream_t stream; /* the stream the kernels went on */
    int no_ev;        /* a one-rank ordered result on the caller's stream: no event after the kernels, so the
                       * consumer the caller queues next (launched with PDL) follows them at once; the poll
                       * asks the stream instead (never with blocking sync: that would sleep on the stream) */
    uint64_t spin_ns; /* the batch's own read time: a blocking poll asks ev only past it (poll_in) */
    int busy;
    unsigned char kind[GR_BATCH_MAX];
    int grid[GR_BATCH_MAX];
    size_t off[GR_BATCH_MAX];
    int partner[GR_BATCH_MAX]; /* a pair's first item: its second's index; the second: -2; else -1 */
} vec_arena_t;

typedef struct vec_state {
    vec_arena_t a[VEC_ARENAS];
    gr_vec_jobs_t jobs; /* a batch launch's parameter, filled per launch (3.6 KB: not on the stack) */
} vec_state_t;

void gr_cuda_vec_release(cuda_state_t *s)
{
    vec_state_t *v = (vec_state_t *)s->vec;
    if (!v)
        return;
    for (int i = 0; i < VEC_ARENAS; ++i) {
        if (v->a[i].dev)
            GR_CUDA_IGNORE(cudaFree(v->a[i].dev));
        if (v->a[i].host)
            GR_CUDA_IGNORE(cudaFreeHost(v->a[i].host));
        if (v->a[i].ev)
            GR_CUDA_IGNORE(cudaEventDestroy(v->a[i].ev));
    }
    free(v);
    s->vec = NULL;
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

/* An item's out record (the grid folded on the GPU) into its vector partial. */
static void add_out(const gr_batch_item_t *it, const gr_vec_out_t *o, int kind, gr_vpartial_t *out)
{
    gr_op_kind_t op = it->desc.op.kind;
    if (kind == REC_ARG) {
        gr_argext_t a;
        memcpy(&a, &o->arg, sizeof(a)); /* field for field */
        gr_argext_merge(&out->a, &a);
        return;
    }
    if (kind == REC_EXACT) {
        gr_wacc_t t;
        memcpy(t.limb, o->exact.limb, sizeof(t.limb));
        gr_wacc_normalize(&t); /* carried limbs of <= 2^20 blocks, < 2^53: the carry pass cannot overflow */
        gr_wacc_add(&out->w, &t);
        out->wadds++;
        gr_vpartial_maybe_normalize(out);
        out->p.nan += (int64_t)o->exact.nan;
        out->p.pinf += (int64_t)o->exact.pinf;
        out->p.ninf += (int64_t)o->exact.ninf;
        out->p.nonnegzero += (int64_t)o->exact.nonnegzero;
        return;
    }
    gr_vpartial_add_term(out, o->fast.s[0], 0);
    if (op != GR_OP_DOT && it->desc.dtype == GR_F64) { /* Blue's scaled sums of f64 squares */
        gr_vpartial_add_term(out, o->fast.s[1], 1076);
        gr_vpartial_add_term(out, o->fast.s[2], -1074);
    }
}

/* Bytes of block records an item of this kind needs per block (exact blocks use the fold scratch). */
static size_t rec_size(int kind)
{
    return kind == REC_ARG ? sizeof(gr_vec_arg_rec_t) : kind == REC_FAST ? sizeof(gr_vec_fast_rec_t) : 0;
}

static int item_kind(const gr_batch_item_t *it)
{
    if (!gr_desc_is_vec(&it->desc) || it->count == 0)
        return REC_NONE;
    gr_op_kind_t op = it->desc.op.kind;
    if (op == GR_OP_ARGMIN || op == GR_OP_ARGMAX)
        return REC_ARG;
    int is_int = it->desc.dtype == GR_I32 || it->desc.dtype == GR_I64;
    return it->desc.mode == GR_MODE_EXACT || is_int ? REC_EXACT : REC_FAST;
}

/* Room for `bytes` of records in arena a; a grows only while it is idle (not busy). */
static gr_result_t arena_reserve(vec_arena_t *a, size_t bytes, cudaStream_t stream)
{
    if (!a->ev)
        GR_CUDA_CHECK(cudaEventCreateWithFlags(&a->ev, cudaEventDisableTiming));
    if (a->cap >= bytes)
        return GR_SUCCESS;
    if (gr_cuda_order_waiting() > 0) /* cudaFree / cudaMalloc may wait for the device, which waits for the host */
        GR_FAIL(GR_ERR_INVALID_ARG, "this batch needs larger buffers (%zu bytes), and %d ordered result(s) of this "
                                    "process still wait for their rank's combine (gr_call_t.ordered): allocating now "
                                    "could wait for the GPU, whose streams wait for those; complete them first "
                                    "(gr_wait / gr_test), or start a batch of this shape once before", bytes,
                gr_cuda_order_waiting());
    size_t want = a->cap * 2 > bytes ? a->cap * 2 : bytes;
    if (want < VEC_ARENA_MIN)
        want = VEC_ARENA_MIN;
    if (a->dev)
        GR_CUDA_CHECK(cudaFree(a->dev));
    a->dev = NULL;
    a->cap = 0;
    GR_CUDA_CHECK(cudaMalloc(&a->dev, want));
    if (!a->host) {
        GR_CUDA_CHECK(cudaHostAlloc((void **)&a->host, VEC_OUT_BYTES, cudaHostAllocMapped));
        GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&a->host_d, a->host, 0));
    }
    /* the fold scratches start zero; every launch leaves them so (queued before any kernel that uses them) */
    GR_CUDA_CHECK(cudaMemsetAsync(a->dev, 0, sizeof(gr_vec_fold_t) * GR_BATCH_MAX, stream));
    a->cap = want;
    return GR_SUCCESS;
}

static gr_vec_out_t *arena_out(const vec_arena_t *a) { return a->host_d; }
static gr_vec_fold_t *arena_fold(const vec_arena_t *a) { return (gr_vec_fold_t *)a->dev; }

/* argext: the side an item asks for */
static int arg_which(const gr_batch_item_t *it)
{
    return it->desc.op.kind == GR_OP_ARGMIN ? GR_VEC_ARG_MIN : GR_VEC_ARG_MAX;
}

/*
 * Two dot items that one pass can read (a pair job, gr_vec_kernels.h): the same floating dtype, count
 * and record kind, sharing an array (pointer-equal), all three arrays at one offset from 16 bytes. The
 * shared array into *a, p's other into *b0, q's other into *b1 (products commute, bit for bit).
 */
static int pair_arrays(const gr_batch_item_t *p, const gr_batch_item_t *q, const void **a, const void **b0,
                       const void **b1)
{
    gr_dtype_t t = p->desc.dtype;
    if (p->desc.op.kind != GR_OP_DOT || q->desc.op.kind != GR_OP_DOT || q->desc.dtype != t ||
        p->count != q->count || !(t == GR_F32 || t == GR_F64 || t == GR_F16 || t == GR_BF16))
        return 0;
    const void *pv[2] = {p->x, p->y}, *qv[2] = {q->x, q->y};
    for (int u = 0; u < 2; ++u)
        for (int w = 0; w < 2; ++w) {
            if (pv[u] != qv[w])
                continue;
            const uintptr_t off = (uintptr_t)pv[u] & 15u;
            if (((uintptr_t)pv[1 - u] & 15u) != off || ((uintptr_t)qv[1 - w] & 15u) != off)
                return 0;
            *a = pv[u];
            *b0 = pv[1 - u];
            *b1 = qv[1 - w];
            return 1;
        }
    return 0;
}

/* The record kinds whose kernels read pairs in one pass. */
static int pairs_kind(int kind) { return kind == REC_FAST || kind == REC_EXACT; }

/* Pair the batch's dot items greedily, in item order (a->kind and a->grid set). */
static void find_pairs(vec_arena_t *a, const gr_batch_item_t *items, int k)
{
    for (int j = 0; j < k; ++j)
        a->partner[j] = -1;
    for (int j = 0; j < k; ++j) {
        if (a->partner[j] != -1 || !pairs_kind(a->kind[j]))
            continue;
        for (int q = j + 1; q < k; ++q) {
            const void *x, *y0, *y1;
            if (a->partner[q] == -1 && a->kind[q] == a->kind[j] && pair_arrays(&items[j], &items[q], &x, &y0, &y1)) {
                a->partner[j] = q;
                a->partner[q] = -2;
                break;
            }
        }
    }
}

/* One item alone: its single-call kernel (the path of a single dot, nrm2, argmin or argmax). */
static cudaError_t launch_one(const vec_arena_t *a, const gr_batch_item_t *it, int j, cudaStream_t stream)
{
    void *rec = (char *)a->dev + a->off[j];
    if (a->kind[j] == REC_ARG)
        return gr_cuda_launch_argext(it->x, it->count, (int)it->desc.dtype, it->index_base, arg_which(it),
                                     a->grid[j], (gr_vec_arg_rec_t *)rec, arena_fold(a) + j, arena_out(a) + j,
                                     stream);
    return gr_cuda_launch_dot(it->x, it->desc.op.kind == GR_OP_DOT ? it->y : NULL, it->count, (int)it->desc.dtype,
                              a->kind[j] == REC_EXACT, a->grid[j], rec, arena_fold(a) + j, arena_out(a) + j,
                              stream);
}

/* Queue the kernels of every vector item into arena a (its layout already set): one launch per record
 * kind (fast, exact, argext) holding all its single items, each with the grid of its single launch (a
 * kind with one item takes that item's single-call kernel), and one more per kind for its pairs. */
static cudaError_t launch_items(cuda_state_t *s, const vec_arena_t *a, const gr_batch_item_t *items, int k,
                                void *result_dev, cudaStream_t stream)
{
    gr_vec_jobs_t *jobs = &((vec_state_t *)s->vec)->jobs;
    jobs->fold = arena_fold(a);
    jobs->out = arena_out(a);
    jobs->result = (gr_vec_value_t *)result_dev;
    for (int pass = 0; pass < 2 * (REC_ARG - REC_FAST + 1); ++pass) {
        const int kind = REC_FAST + pass / 2, pairs = pass % 2; /* each kind: its single jobs, then its pairs */
        jobs->njobs = 0;
        unsigned blocks = 0;
        int last = -1;
        for (int j = 0; j < k; ++j) {
            if (a->kind[j] != kind || a->partner[j] == -2 || (a->partner[j] >= 0) != pairs)
                continue;
            const gr_batch_item_t *it = &items[j];
            gr_vec_job_t *J = &jobs->job[jobs->njobs++];
            J->x = it->x;
            J->y = it->desc.op.kind == GR_OP_DOT ? it->y : NULL;
            J->n = it->count;
            J->base = it->index_base;
            J->rec = (char *)a->dev + a->off[j];
            J->dtype = (int)it->desc.dtype;
            J->grid = a->grid[j];
            J->first_block = blocks;
            J->slot = (unsigned short)j;
            J->which = (unsigned short)(kind == REC_ARG ? arg_which(it) : 0);
            if (a->partner[j] >= 0) { /* x.y and x.y2 in one pass: batch launches only */
                const void *x, *y0, *y1;
                (void)pair_arrays(it, &items[a->partner[j]], &x, &y0, &y1);
                J->x = x;
                J->y = y0;
                J->y2 = y1;
                J->pair = (unsigned short)(1 + a->partner[j]);
            }
            blocks += (unsigned)a->grid[j];
            last = j;
        }
        cudaError_t e = cudaSuccess;
        if (jobs->njobs == 1 && !pairs && !result_dev) /* the batch kernel writes result_dev, the single one not */
            e = launch_one(a, &items[last], last, stream);
        else if (jobs->njobs >= 1 && kind == REC_ARG)
            e = gr_cuda_launch_argext_batch(jobs, stream);
        else if (jobs->njobs >= 1)
            e = gr_cuda_launch_dot_batch(jobs, kind == REC_EXACT, s->pdl, stream);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/*
 * The stream a batch's kernels go on. A non-blocking batch with a stream of the caller's: that stream
 * itself (the kernels queue behind the caller's work and the caller's later work behind them, with no
 * event between two streams; the arena is the request's own, so requests on other streams share no
 * scratch with it), once it is known to be a stream of our GPU. Else our stream, ordered after the
 * caller's (gr_cuda_order_after); the blocking calls' arena is always used on our stream.
 */
gr_result_t gr_cuda_check_stream(cuda_state_t *s, void *stream)
{
#if CUDART_VERSION >= 12080
    int dev = -1;
    cudaError_t e = cudaStreamGetDevice((cudaStream_t)stream, &dev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_ERR_INVALID_ARG, "the call's stream %p is not a live CUDA stream (%s): pass a live stream of the "
                                    "context's GPU %d", stream, cudaGetErrorString(e), s->device);
    }
    if (dev != s->device)
        GR_FAIL(GR_ERR_INVALID_ARG, "the call's stream %p belongs to GPU %d, the context's GPU is %d: pass a stream "
                                    "created on GPU %d", stream, dev, s->device, s->device);
#else
    (void)s;
    (void)stream;
#endif
    return GR_SUCCESS;
}

static gr_result_t launch_stream(cuda_state_t *s, void *stream, int blocking, cudaStream_t *ls)
{
    *ls = s->stream;
    if (blocking || !stream || (cudaStream_t)stream == s->stream)
        return gr_cuda_order_after(s, stream);
    GR_CHECK(gr_cuda_check_stream(s, stream));
    *ls = (cudaStream_t)stream;
    return GR_SUCCESS;
}

static gr_result_t start_in(cuda_state_t *s, const gr_batch_item_t *items, int k, void *stream, int blocking,
                            void *result_dev, int *token)
{
    if (!s->vec) {
        s->vec = calloc(1, sizeof(vec_state_t));
        if (!s->vec)
            GR_FAIL(GR_ERR_NOMEM, "cannot allocate the vector ops' state");
    }
    vec_state_t *v = (vec_state_t *)s->vec;
    int ai = VEC_ARENAS - 1;
    if (!blocking) {
        ai = 0;
        while (ai < GR_REQUEST_MAX && v->a[ai].busy)
            ++ai;
        if (ai == GR_REQUEST_MAX) /* request.c keeps at most GR_REQUEST_MAX outstanding */
            GR_FAIL(GR_ERR_INTERNAL, "no free record buffer with fewer than %d requests outstanding; report this "
                                     "as a bug", GR_REQUEST_MAX);
    }
    vec_arena_t *a = &v->a[ai];
    size_t bytes = VEC_FIXED_BYTES;
    for (int j = 0; j < k; ++j) {
        const gr_batch_item_t *it = &items[j];
        a->kind[j] = (unsigned char)item_kind(it);
        a->grid[j] = 0;
        if (a->kind[j] == REC_NONE)
            continue;
        GR_CHECK(device_ptr(s, it->x, "x"));
        if (it->desc.op.kind == GR_OP_DOT)
            GR_CHECK(device_ptr(s, it->y, "y"));
        a->grid[j] = gr_vec_grid(s->sm_count, s->grid_override, it->count, (unsigned)gr_dtype_size(it->desc.dtype),
                                 a->kind[j] == REC_EXACT ? GR_VEC_GRID_EXACT
                                 : a->kind[j] == REC_ARG ? GR_VEC_GRID_ARG
                                                         : GR_VEC_GRID_DOT);
    }
    find_pairs(a, items, k);
    if (result_dev) {
        GR_CHECK(device_ptr(s, result_dev, "gr_call_t.result_dev"));
        for (int j = 0; j < k; ++j)
            if (a->kind[j] != REC_FAST || items[j].desc.op.kind != GR_OP_DOT)
                GR_FAIL(GR_ERR_INTERNAL, "an ordered result written by the kernels needs fast dot items only; "
                                         "report this as a bug");
    }
    for (int j = 0; j < k; ++j) { /* block records: a pair's first item holds both products' */
        a->off[j] = bytes;
        const size_t recs = (size_t)a->grid[j] * (a->partner[j] >= 0 ? 2u : a->partner[j] == -2 ? 0u : 1u);
        bytes += (rec_size(a->kind[j]) * recs + VEC_ALIGN - 1) / VEC_ALIGN * VEC_ALIGN;
    }
    cudaStream_t ls;
    GR_CHECK(launch_stream(s, stream, blocking, &ls));
    GR_CHECK(arena_reserve(a, bytes, ls));
    /* the done words the last blocks set (poll_in); no launch of this arena is in flight (busy was 0) */
    uint64_t in_bytes = 0;
    for (int j = 0; j < k; ++j) {
        if (a->kind[j] == REC_NONE)
            continue;
        __atomic_store_n(&a->host[j].done, 0u, __ATOMIC_RELAXED);
        in_bytes += items[j].count * (uint64_t)gr_dtype_size(items[j].desc.dtype) *
                    (items[j].desc.op.kind == GR_OP_DOT ? 2u : 1u);
    }
    a->spin_ns = gr_cuda_reduce_spin_ns(in_bytes);
    gr_result_t r = GR_SUCCESS;
    a->stream = ls;
    a->no_ev = 0;
    if (result_dev && !blocking && ls == (cudaStream_t)stream) {
        unsigned int flags = 0;
        GR_CUDA_CHECK(cudaGetDeviceFlags(&flags));
        a->no_ev = (flags & cudaDeviceScheduleMask) != cudaDeviceScheduleBlockingSync;
    }
    GR_CUDA_CHECK_GOTO(launch_items(s, a, items, k, result_dev, ls), r, fail);
    if (!a->no_ev)
        GR_CUDA_CHECK_GOTO(cudaEventRecord(a->ev, ls), r, fail);
    /* on our stream: the caller's later work on its stream (reusing the inputs) waits for our reads */
    if (!blocking && stream && (cudaStream_t)stream != ls)
        GR_CUDA_CHECK_GOTO(cudaStreamWaitEvent((cudaStream_t)stream, a->ev, 0), r, fail);
    a->busy = 1;
    *token = ai;
    return GR_SUCCESS;
fail:
    GR_CUDA_IGNORE(cudaStreamSynchronize(ls));
    return r;
}

gr_result_t gr_cuda_vec_start(gr_ctx_t ctx, const gr_batch_item_t *items, int k, void *stream, int blocking,
                             void *result_dev, int *token)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = start_in(s, items, k, stream, blocking, result_dev, token);
    gr_cuda_leave(s->device, prev);
    return r;
}

/* 1 when every out record of the batch has its done word set (its job's last block ran to its end). */
static int outs_done(const vec_arena_t *a, int k)
{
    for (int j = 0; j < k; ++j)
        if (a->kind[j] != REC_NONE && __atomic_load_n(&a->host[j].done, __ATOMIC_ACQUIRE) == 0u)
            return 0;
    return 1;
}

typedef struct {
    const vec_arena_t *a;
    int k;
} outs_wait_t;

static int outs_ready(void *p)
{
    const outs_wait_t *w = (const outs_wait_t *)p;
    return outs_done(w->a, w->k);
}

/*
 * The batch is done when every out record's done word is set: each job's last block sets it behind a
 * system-scope fence after writing its record, as its last act, so the records are whole and every
 * kernel of the batch (and all work before it on the stream) ran: no driver call is needed. A blocking
 * poll is gr_cuda_poll_wait's on the words (spin: the batch's own read time; past it the event asked
 * now and then); a non-blocking one asks the event when the words are not all there yet (an error of
 * the stream then shows).
 */
static gr_result_t poll_in(cuda_state_t *s, vec_arena_t *a, const gr_batch_item_t *items, int k, int block,
                           int *done, gr_vpartial_t *part)
{
    cudaError_t e = cudaSuccess;
    if (block) {
        outs_wait_t w = {a, k};
        e = gr_cuda_poll_wait(outs_ready, &w, a->stream, a->no_ev ? NULL : a->ev, a->spin_ns);
    } else if (!outs_done(a, k)) {
        e = a->no_ev ? cudaStreamQuery(a->stream) : cudaEventQuery(a->ev);
    }
    if (e == cudaErrorNotReady)
        return GR_SUCCESS;
    *done = 1;
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_CUDA_RESULT_(e), "CUDA error while waiting for the vector-op kernels on GPU %d: %s; a kernel "
                                    "on the GPU failed (a bad pointer?), see compute-sanitizer",
                s->device, cudaGetErrorString(e));
    }
    for (int j = 0; j < k; ++j) {
        if (a->kind[j] == REC_NONE)
            continue;
        add_out(&items[j], &a->host[j], a->kind[j], &part[j]);
        part[j].p.count += (int64_t)items[j].count;
    }
    return GR_SUCCESS;
}

gr_result_t gr_cuda_vec_poll(gr_ctx_t ctx, int token, const gr_batch_item_t *items, int k, int block, int *done,
                            gr_vpartial_t *part)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    vec_arena_t *a = &((vec_state_t *)s->vec)->a[token];
    *done = 0;
    int prev = -1;
    gr_result_t r = gr_cuda_enter(s->device, &prev);
    if (r == GR_SUCCESS) {
        r = poll_in(s, a, items, k, block, done, part);
        gr_cuda_leave(s->device, prev);
    }
    if (r != GR_SUCCESS)
        *done = 1;
    if (*done)
        a->busy = 0;
    return r;
}
