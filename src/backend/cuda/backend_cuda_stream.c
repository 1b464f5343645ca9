/*
 * backend_cuda_stream.c - the cuda backend's stream for the file pipeline
 * (gr_stream.h, io_pipeline.c).
 *
 * MPI-IO reads each chunk straight into a pinned host buffer (no staging
 * memcpy), then one cudaMemcpyAsync takes it to the slot's device buffer and
 * the backend's own reduce launch (gr_cuda_launch_slot: fast or exact, any
 * op and dtype the backend has) reduces it there, all on the backend's
 * stream. The pipeline reads chunk k+1 into the other slot meanwhile.
 *
 * Three events per slot time the copy and the reduce on the GPU's clock:
 * [0] before the copy, [1] after it, [2] after the reduce. end() waits on
 * [2] and folds the slot's result into the accumulator in chunk order, so
 * fast mode is repeatable and exact mode gives the cpu backend's bits.
 *
 * The buffers live in the backend state (pipe_host, pipe_dev) and stay for
 * the next file reduce of the context (a --repeat, the next file), so a run
 * does not pay cudaHostAlloc again; they grow when a larger chunk is asked
 * for and are freed with the context. Per rank that is GR_STREAM_SLOTS
 * chunks of pinned host memory and as many of GPU memory.
 *
 * One stream is enough: the reduce of a chunk takes about 1-2% of its copy
 * (HBM vs PCIe), so the copy engine idles at most that long per chunk; the
 * limit is whichever of the reader and the copy engine is slower.
 */
#include "gr_cuda_check.h"
#include "gr_cuda_state.h"
#include "gr_stream.h"

#include <stdlib.h>
#include <string.h>

/* The stream uses the backend's result slots one for one. */
_Static_assert(GR_STREAM_SLOTS <= GR_CUDA_SLOTS, "the cuda stream needs a backend result slot per pipeline slot");

enum { EV_COPY = 0, EV_REDUCE = 1, EV_DONE = 2, EV_COUNT = 3 };

typedef struct cuda_stream {
    cuda_state_t *s;
    const char *gpu_name;
    size_t bytes;                        /* capacity of each buffer */
    void **host;                         /* s->pipe_host: pinned, MPI-IO reads into these */
    void **dev;                          /* s->pipe_dev */
    cudaEvent_t ev[GR_STREAM_SLOTS][EV_COUNT];
    uint64_t count[GR_STREAM_SLOTS];
    int pending[GR_STREAM_SLOTS];        /* begun and not ended */
} cuda_stream_t;

void gr_cuda_stream_release(cuda_state_t *s)
{
    for (int k = 0; k < GR_CUDA_SLOTS; ++k) {
        if (s->pipe_host[k])
            GR_CUDA_IGNORE(cudaFreeHost(s->pipe_host[k]));
        if (s->pipe_dev[k])
            GR_CUDA_IGNORE(cudaFree(s->pipe_dev[k]));
        s->pipe_host[k] = NULL;
        s->pipe_dev[k] = NULL;
    }
    s->pipe_bytes = 0;
}

static void cs_close(void *stream)
{
    cuda_stream_t *c = (cuda_stream_t *)stream;
    if (!c)
        return;
    int prev = -1;
    if (gr_cuda_enter(c->s->device, &prev) == GR_SUCCESS) {
        /* nothing may still read or write the buffers (after a failed begin, too) */
        GR_CUDA_IGNORE(cudaStreamSynchronize(c->s->stream));
        for (int k = 0; k < GR_STREAM_SLOTS; ++k)
            for (int e = 0; e < EV_COUNT; ++e)
                if (c->ev[k][e])
                    GR_CUDA_IGNORE(cudaEventDestroy(c->ev[k][e]));
        gr_cuda_leave(c->s->device, prev);
    }
    free(c);
}

/* cudaHostAlloc / cudaMalloc of one buffer, with a message that names the budget. */
static gr_result_t alloc_buffer(cuda_stream_t *c, int pinned, void **p)
{
    cudaError_t e = pinned ? cudaHostAlloc(p, c->bytes, cudaHostAllocDefault) : cudaMalloc(p, c->bytes);
    if (e == cudaSuccess)
        return GR_SUCCESS;
    (void)cudaGetLastError();
    *p = NULL;
    if (e == cudaErrorMemoryAllocation)
        GR_FAIL(pinned ? GR_ERR_NOMEM : GR_ERR_DEVMEM,
                "input pipeline: cannot allocate %d %s buffers of %zu bytes (the --chunk budget) for GPU %d (%s); "
                "use a smaller --chunk",
                GR_STREAM_SLOTS, pinned ? "pinned host" : "GPU", c->bytes, c->s->device, c->gpu_name);
    GR_CUDA_LOG_(pinned ? "cudaHostAlloc(input pipeline buffer)" : "cudaMalloc(input pipeline buffer)", e);
    return GR_CUDA_RESULT_(e);
}

static gr_result_t cs_open(gr_ctx_t ctx, void *bstate, size_t chunk_bytes, void **stream)
{
    *stream = NULL;
    cuda_stream_t *c = (cuda_stream_t *)calloc(1, sizeof(*c));
    if (!c)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the input pipeline state");
    cuda_state_t *s = (cuda_state_t *)bstate;
    c->s = s;
    c->gpu_name = ctx->gpu_name;
    c->host = s->pipe_host;
    c->dev = s->pipe_dev;
    int prev = -1;
    gr_result_t r = gr_cuda_enter(s->device, &prev);
    if (r != GR_SUCCESS) {
        free(c);
        return r;
    }
    if (s->pipe_bytes < chunk_bytes) { /* grow: the stream is idle between file reduces */
        GR_CUDA_CHECK_GOTO(cudaStreamSynchronize(s->stream), r, fail);
        gr_cuda_stream_release(s);
    }
    c->bytes = s->pipe_bytes ? s->pipe_bytes : chunk_bytes ? chunk_bytes : 1;
    for (int k = 0; k < GR_STREAM_SLOTS; ++k) {
        if (!c->host[k])
            r = alloc_buffer(c, 1, &c->host[k]);
        if (r == GR_SUCCESS && !c->dev[k])
            r = alloc_buffer(c, 0, &c->dev[k]);
        if (r != GR_SUCCESS) {
            gr_cuda_stream_release(s); /* all slots the same size, or none */
            goto fail;
        }
    }
    s->pipe_bytes = c->bytes;
    for (int k = 0; k < GR_STREAM_SLOTS; ++k) {
        for (int e = 0; e < EV_COUNT; ++e)
            GR_CUDA_CHECK_GOTO(cudaEventCreate(&c->ev[k][e]), r, fail);
    }
    GR_DEBUGLOG(GR_SUB_IO, "cuda input stream: %d slots of %zu bytes (pinned host + GPU) on GPU %d", GR_STREAM_SLOTS,
                c->bytes, c->s->device);
    *stream = c;
    gr_cuda_leave(s->device, prev);
    return GR_SUCCESS;
fail:
    cs_close(c);
    gr_cuda_leave(s->device, prev);
    return r;
}

static void *cs_buffer(void *stream, int slot) { return ((cuda_stream_t *)stream)->host[slot]; }

static gr_result_t cs_begin_in(void *stream, int slot, uint64_t count, const gr_desc_t *d)
{
    cuda_stream_t *c = (cuda_stream_t *)stream;
    cuda_state_t *s = c->s;
    if (c->pending[slot])
        GR_FAIL(GR_ERR_INTERNAL, "input pipeline: slot %d reused before its chunk finished; report this as a bug",
                slot);
    size_t esz = gr_dtype_size(d->dtype);
    if (count == 0 || count > c->bytes / esz)
        GR_FAIL(GR_ERR_INTERNAL, "input pipeline: chunk of %llu %s elements for buffers of %zu bytes; report this "
                                 "as a bug", (unsigned long long)count, gr_dtype_name(d->dtype), c->bytes);
    size_t bytes = (size_t)count * esz;
    GR_CUDA_CHECK(cudaEventRecord(c->ev[slot][EV_COPY], s->stream));
    GR_CUDA_CHECK(cudaMemcpyAsync(c->dev[slot], c->host[slot], bytes, cudaMemcpyHostToDevice, s->stream));
    GR_CUDA_CHECK(cudaEventRecord(c->ev[slot][EV_REDUCE], s->stream));
    GR_CHECK(gr_cuda_launch_slot(s, c->dev[slot], count, d, slot));
    GR_CUDA_CHECK(cudaEventRecord(c->ev[slot][EV_DONE], s->stream));
    c->count[slot] = count;
    c->pending[slot] = 1;
    return GR_SUCCESS;
}

static gr_result_t cs_end_in(void *stream, int slot, const gr_desc_t *d, gr_partial_t *acc, double *busy_s,
                             double *h2d_s)
{
    cuda_stream_t *c = (cuda_stream_t *)stream;
    cuda_state_t *s = c->s;
    if (busy_s)
        *busy_s = 0;
    if (h2d_s)
        *h2d_s = 0;
    if (!c->pending[slot])
        return GR_SUCCESS;
    c->pending[slot] = 0;
    GR_CUDA_CHECK(cudaEventSynchronize(c->ev[slot][EV_DONE]));
    GR_CHECK(gr_cuda_finish_slot(s, c->count[slot], d, slot, acc));
    float copy_ms = 0, reduce_ms = 0;
    GR_CUDA_CHECK(cudaEventElapsedTime(&copy_ms, c->ev[slot][EV_COPY], c->ev[slot][EV_REDUCE]));
    GR_CUDA_CHECK(cudaEventElapsedTime(&reduce_ms, c->ev[slot][EV_REDUCE], c->ev[slot][EV_DONE]));
    if (h2d_s)
        *h2d_s = copy_ms * 1e-3;
    if (busy_s)
        *busy_s = reduce_ms * 1e-3;
    return GR_SUCCESS;
}

/* The entry points: the caller's current device as it was on return. */
static gr_result_t cs_begin(void *stream, int slot, uint64_t count, const gr_desc_t *d)
{
    const int dev = ((cuda_stream_t *)stream)->s->device;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(dev, &prev));
    gr_result_t r = cs_begin_in(stream, slot, count, d);
    gr_cuda_leave(dev, prev);
    return r;
}

static gr_result_t cs_end(void *stream, int slot, const gr_desc_t *d, gr_partial_t *acc, double *busy_s,
                          double *h2d_s)
{
    const int dev = ((cuda_stream_t *)stream)->s->device;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(dev, &prev));
    gr_result_t r = cs_end_in(stream, slot, d, acc, busy_s, h2d_s);
    gr_cuda_leave(dev, prev);
    return r;
}

/* Timed copies of the H2D reference (after one untimed); the median counts. */
#define H2D_REF_COPIES 7

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Pinned host-to-device cudaMemcpyAsync of `bytes`, timed by events on a
 * stream of its own: GB/s of the median copy (gr_file_h2d_reference). */
static gr_result_t h2d_reference_in(size_t bytes, double *gbps)
{
    void *h = NULL, *dv = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double ms[H2D_REF_COPIES];
    gr_result_t r = GR_SUCCESS;
    *gbps = 0;
    GR_CUDA_CHECK_GOTO(cudaHostAlloc(&h, bytes, cudaHostAllocDefault), r, out);
    GR_CUDA_CHECK_GOTO(cudaMalloc(&dv, bytes), r, out);
    memset(h, 0x3c, bytes); /* resident before the first copy */
    GR_CUDA_CHECK_GOTO(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), r, out);
    GR_CUDA_CHECK_GOTO(cudaEventCreate(&e0), r, out);
    GR_CUDA_CHECK_GOTO(cudaEventCreate(&e1), r, out);
    for (int i = -1; i < H2D_REF_COPIES; ++i) {
        float t = 0;
        GR_CUDA_CHECK_GOTO(cudaEventRecord(e0, st), r, out);
        GR_CUDA_CHECK_GOTO(cudaMemcpyAsync(dv, h, bytes, cudaMemcpyHostToDevice, st), r, out);
        GR_CUDA_CHECK_GOTO(cudaEventRecord(e1, st), r, out);
        GR_CUDA_CHECK_GOTO(cudaEventSynchronize(e1), r, out);
        GR_CUDA_CHECK_GOTO(cudaEventElapsedTime(&t, e0, e1), r, out);
        if (i >= 0)
            ms[i] = t;
    }
    qsort(ms, H2D_REF_COPIES, sizeof(double), cmp_double);
    if (ms[H2D_REF_COPIES / 2] > 0)
        *gbps = (double)bytes / (ms[H2D_REF_COPIES / 2] * 1e-3) / 1e9;
out:
    if (e0)
        GR_CUDA_IGNORE(cudaEventDestroy(e0));
    if (e1)
        GR_CUDA_IGNORE(cudaEventDestroy(e1));
    if (st)
        GR_CUDA_IGNORE(cudaStreamDestroy(st));
    if (dv)
        GR_CUDA_IGNORE(cudaFree(dv));
    if (h)
        GR_CUDA_IGNORE(cudaFreeHost(h));
    return r;
}

static gr_result_t cs_h2d_reference(void *bstate, size_t bytes, double *gbps)
{
    const int dev = ((cuda_state_t *)bstate)->device;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(dev, &prev));
    gr_result_t r = h2d_reference_in(bytes, gbps);
    gr_cuda_leave(dev, prev);
    return r;
}

const gr_stream_ops_t gr_backend_cuda_stream_ops = {
    "cuda", cs_open, cs_buffer, cs_begin, cs_end, cs_close, cs_h2d_reference,
};
