/*
 * io_pipeline.c - read a file shard in chunks (pread on the file the MPI-IO
 * open checked; gr_io.h says why not MPI_File_read_at) and reduce chunk k
 * while chunk k+1 is read (see gr_stream.h).
 *
 * The generic stream works for any backend: each chunk is reduced by
 * ctx->ops->reduce on host memory in a helper thread, so the main thread
 * (the only one that calls MPI) reads the next chunk meanwhile. Each chunk
 * gives an exact partial and the partials are merged in chunk order, so in
 * exact mode the result is independent of the chunk size.
 */
#define _POSIX_C_SOURCE 200809L
#include "gr_env.h"
#include "gr_half.h"
#include "gr_stats.h"
#include "gr_io.h"
#include "gr_stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the generic stream: a helper thread per chunk -------------------- */

typedef struct generic_slot {
    void *buf;     /* what the backend reduces */
    void *raw;     /* f16/bf16 storage: what the reader fills, widened into buf */
    pthread_t tid;
    int running;   /* a helper thread owns this slot */
    int pending;   /* begin was called and end was not */
    uint64_t count;
    gr_desc_t d;
    gr_partial_t part;
    gr_stats_part_t spart; /* stats mode */
    gr_result_t r;
    double busy;
} generic_slot_t;

typedef struct generic_stream {
    gr_ctx_t ctx;
    void *bstate;
    gr_storage_t storage;
    gr_stats_part_t *stats; /* non-NULL: stats mode, chunks fold into it in order */
    generic_slot_t slot[GR_STREAM_SLOTS];
} generic_stream_t;

typedef struct generic_job {
    generic_stream_t *s;
    int slot;
} generic_job_t;

static void generic_run(generic_stream_t *s, generic_slot_t *sl)
{
    double t0 = gr_now();
    if (s->storage != GR_STORE_NATIVE)
        gr_half_widen(sl->raw, (float *)sl->buf, sl->count, s->storage == GR_STORE_BF16);
    if (s->stats) {
        gr_stats_part_init(&sl->spart);
        gr_stats_part_add(&sl->spart, sl->buf, sl->count, sl->d.dtype);
        sl->r = GR_SUCCESS;
    } else {
        sl->r = s->ctx->ops->reduce(s->ctx, s->bstate, sl->buf, 0, sl->count, &sl->d, &sl->part);
    }
    sl->busy = gr_now() - t0;
}

static void *generic_thread(void *arg)
{
    generic_stream_t *s = ((generic_job_t *)arg)->s;
    int k = ((generic_job_t *)arg)->slot;
    free(arg);
    generic_run(s, &s->slot[k]);
    return NULL;
}

static void generic_close(void *stream)
{
    generic_stream_t *s = (generic_stream_t *)stream;
    if (!s)
        return;
    for (int k = 0; k < GR_STREAM_SLOTS; ++k) {
        if (s->slot[k].running)
            pthread_join(s->slot[k].tid, NULL);
        free(s->slot[k].buf);
        free(s->slot[k].raw);
    }
    free(s);
}

/* chunk_bytes: of the stored items (2 per item for f16/bf16 storage). */
static gr_result_t generic_open_store(gr_ctx_t ctx, void *bstate, size_t chunk_bytes, gr_storage_t storage,
                                      void **stream)
{
    generic_stream_t *s = (generic_stream_t *)calloc(1, sizeof(*s));
    if (!s)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the input pipeline state");
    s->ctx = ctx;
    s->bstate = bstate;
    s->storage = storage;
    size_t raw = storage != GR_STORE_NATIVE ? (chunk_bytes + 63) & ~(size_t)63 : 0;
    size_t wide = storage != GR_STORE_NATIVE ? chunk_bytes * 2 : chunk_bytes; /* f32 from 2-byte items */
    size_t bytes = (wide + 63) & ~(size_t)63;
    for (int k = 0; k < GR_STREAM_SLOTS; ++k) {
        s->slot[k].buf = aligned_alloc(64, bytes ? bytes : 64);
        if (raw)
            s->slot[k].raw = aligned_alloc(64, raw);
        if (!s->slot[k].buf || (raw && !s->slot[k].raw)) {
            generic_close(s);
            GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d read buffers of %zu bytes; use a smaller --chunk",
                    GR_STREAM_SLOTS, bytes);
        }
    }
    *stream = s;
    return GR_SUCCESS;
}

static gr_result_t generic_open(gr_ctx_t ctx, void *bstate, size_t chunk_bytes, void **stream)
{
    return generic_open_store(ctx, bstate, chunk_bytes, GR_STORE_NATIVE, stream);
}

static void *generic_buffer(void *stream, int slot)
{
    generic_stream_t *s = (generic_stream_t *)stream;
    return s->storage != GR_STORE_NATIVE ? s->slot[slot].raw : s->slot[slot].buf;
}

static gr_result_t generic_begin(void *stream, int slot, uint64_t count, const gr_desc_t *d)
{
    generic_stream_t *s = (generic_stream_t *)stream;
    generic_slot_t *sl = &s->slot[slot];
    if (sl->pending)
        GR_FAIL(GR_ERR_INTERNAL, "input pipeline: slot %d reused before its chunk finished; report this as a bug",
                slot);
    sl->count = count;
    sl->d = *d;
    sl->r = GR_SUCCESS;
    sl->busy = 0;
    sl->pending = 1;
    generic_job_t *job = (generic_job_t *)malloc(sizeof(*job));
    if (job) {
        job->s = s;
        job->slot = slot;
        if (pthread_create(&sl->tid, NULL, generic_thread, job) == 0) {
            sl->running = 1;
            return GR_SUCCESS;
        }
        free(job);
    }
    /* no thread to spare: reduce now, without overlap but correctly */
    GR_DEBUGLOG(GR_SUB_IO, "input pipeline: no helper thread, reducing chunk in line");
    generic_run(s, sl);
    return GR_SUCCESS;
}

static gr_result_t generic_end(void *stream, int slot, const gr_desc_t *d, gr_partial_t *acc, double *busy_s,
                               double *h2d_s)
{
    (void)d;
    generic_stream_t *s = (generic_stream_t *)stream;
    generic_slot_t *sl = &s->slot[slot];
    if (!sl->pending)
        return GR_SUCCESS;
    if (sl->running) {
        pthread_join(sl->tid, NULL);
        sl->running = 0;
    }
    sl->pending = 0;
    if (busy_s)
        *busy_s = sl->busy;
    if (h2d_s)
        *h2d_s = 0; /* a cuda reduce of host memory copies inside reduce: its time is in busy */
    if (sl->r != GR_SUCCESS)
        return sl->r; /* the backend logged why */
    if (s->stats)
        gr_stats_part_merge(s->stats, &sl->spart);
    else
        gr_partial_merge(acc, &sl->part);
    return GR_SUCCESS;
}

static gr_result_t generic_h2d_reference(void *bstate, size_t bytes, double *gbps)
{
    (void)bstate, (void)bytes;
    *gbps = 0;
    return GR_ERR_UNSUPPORTED; /* host memory is reduced where it lies: no copy to measure */
}

const gr_stream_ops_t gr_stream_generic_ops = {
    "generic", generic_open, generic_buffer, generic_begin, generic_end, generic_close, generic_h2d_reference,
};

gr_result_t gr_file_h2d_reference(gr_ctx_t ctx, size_t bytes, double *gbps)
{
    if (!ctx || !gbps || bytes == 0)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_file_h2d_reference: ctx and gbps must not be NULL, bytes not 0");
    return ctx->ops->stream->h2d_reference(ctx->bstate, bytes, gbps);
}

/* ---- the read loop ------------------------------------------------------ */

/* The state of one file reduction: what to read and the first error. */
typedef struct pipe {
    MPI_File fh;
    int fd; /* the same file, opened for pread with the MPI handle (gr_io.h says why) */
    const char *path;
    uint64_t byte_off, count, chunk_elems;
    size_t esz;
    const gr_stream_ops_t *so;
    void *stream;
    gr_result_t r;
    gr_io_timing_t *t;
} pipe_t;

/* Elements in chunk k of this rank (0 past the end of its shard). */
static uint64_t chunk_count(const pipe_t *p, uint64_t k)
{
    uint64_t first = k * p->chunk_elems;
    if (first >= p->count)
        return 0;
    return p->count - first < p->chunk_elems ? p->count - first : p->chunk_elems;
}

/* Read chunk k into its slot. Independent, not collective I/O: each rank's
 * shard is one contiguous range, so collective buffering buys nothing, and
 * Open MPI 4.1's collective read hangs the other ranks when an aggregator
 * gets an I/O error (seen with np 3 and EIO; tests/fault). After a failure
 * this rank reads 0 bytes and the ranks agree at the end. */
static void read_chunk(pipe_t *p, uint64_t k)
{
    static char dummy[64]; /* target of 0-byte reads */
    uint64_t n = p->r == GR_SUCCESS ? chunk_count(p, k) : 0;
    void *buf = n ? p->so->buffer(p->stream, (int)(k % GR_STREAM_SLOTS)) : dummy;
    int want = (int)(n * p->esz);
    MPI_Offset off = (MPI_Offset)(p->byte_off + k * p->chunk_elems * p->esz);
    /* POSIX pread, not MPI_File_read_at: its return value is the truth (gr_io.h) */
    gr_io_fault_t f;
    memset(&f, 0, sizeof(f));
    double t0 = gr_now();
    int bad = want > 0 && p->r == GR_SUCCESS ? gr_io_pread(p->fd, (uint64_t)off, buf, (size_t)want, &f) : 0;
    p->t->read += gr_now() - t0;
    p->t->chunks++;
    if (p->r != GR_SUCCESS)
        return;
    if (bad) {
        char line[768];
        gr_io_fault_text(&f, line, sizeof(line));
        GR_ERROR(GR_SUB_IO, "input '%s': %s", p->path, line);
        p->r = GR_ERR_IO;
        return;
    }
    p->t->bytes += (uint64_t)want;
}

static gr_result_t pipeline(gr_ctx_t ctx, MPI_File fh, int fd, const char *path, uint64_t byte_off, uint64_t count, size_t esz,
                            uint64_t chunk_elems, uint64_t nchunks, gr_storage_t storage, const gr_desc_t *d,
                            gr_partial_t *acc, gr_stats_part_t *stats, gr_io_timing_t *t)
{
    pipe_t p;
    memset(&p, 0, sizeof(p));
    p.fh = fh;
    p.path = path;
    p.byte_off = byte_off;
    p.count = count;
    p.chunk_elems = chunk_elems;
    p.esz = esz;
    /* widening and stats run on the host: the generic stream does them, for any backend.
     * A backend's own stream launches its kernels directly, so it takes the dtypes the
     * backends have kernels for (all six: f16/bf16 items cross PCIe as 2 bytes and are
     * widened in the kernel); a dtype added later goes through ctx->ops->reduce until
     * it is listed here. */
    int native_dtype = d->dtype == GR_F32 || d->dtype == GR_F64 || d->dtype == GR_I32 || d->dtype == GR_I64 ||
                       d->dtype == GR_F16 || d->dtype == GR_BF16;
    int host_work = storage != GR_STORE_NATIVE || stats || !native_dtype;
    /* the backend's own stream, unless GR_INPUT_STREAM=generic (read at context creation) */
    p.so = host_work || ctx->stream_generic ? &gr_stream_generic_ops : ctx->ops->stream;
    p.r = GR_SUCCESS;
    p.t = t;
    if (count > 0) {
        uint64_t cap = chunk_elems < count ? chunk_elems : count; /* small shards need small buffers */
        p.r = host_work ? generic_open_store(ctx, ctx->bstate, (size_t)(cap * esz), storage, &p.stream)
                        : p.so->open(ctx, ctx->bstate, (size_t)(cap * esz), &p.stream);
        if (p.r == GR_SUCCESS && stats)
            ((generic_stream_t *)p.stream)->stats = stats;
        if (p.r != GR_SUCCESS)
            p.stream = NULL;
    }
    GR_DEBUGLOG(GR_SUB_IO, "pipeline (%s stream): %llu elements at byte %llu, %llu reads of <= %llu elements",
                p.so->name, (unsigned long long)count, (unsigned long long)byte_off, (unsigned long long)nchunks,
                (unsigned long long)chunk_elems);
    p.fd = fd;
    if (nchunks > 0)
        read_chunk(&p, 0);
    for (uint64_t k = 0; k < nchunks; ++k) {
        int slot = (int)(k % GR_STREAM_SLOTS);
        uint64_t n = chunk_count(&p, k);
        int began = 0;
        if (p.r == GR_SUCCESS && n > 0) {
            p.r = p.so->begin(p.stream, slot, n, d);
            began = p.r == GR_SUCCESS;
        }
        if (k + 1 < nchunks)
            read_chunk(&p, k + 1); /* overlaps the reduction of chunk k */
        if (began) {
            double busy = 0, h2d = 0, t0 = gr_now();
            gr_result_t re = p.so->end(p.stream, slot, d, acc, &busy, &h2d);
            t->stall += gr_now() - t0;
            t->reduce += busy;
            t->h2d += h2d;
            if (re != GR_SUCCESS && p.r == GR_SUCCESS)
                p.r = re;
        }
        if (p.r == GR_SUCCESS && n > 0) /* chunk k is read and reduced */
            gr_progress(ctx, GR_PROGRESS_READ, (k * chunk_elems + n) * esz, count * esz);
    }
    if (p.stream)
        p.so->close(p.stream);
    return p.r;
}

gr_result_t gr_pipeline_reduce_file(gr_ctx_t ctx, MPI_File fh, int fd, const char *path, uint64_t byte_off, uint64_t count, size_t esz,
                                    uint64_t chunk_elems, uint64_t nchunks, gr_storage_t storage, const gr_desc_t *d,
                                    gr_partial_t *acc, gr_io_timing_t *t)
{
    gr_partial_init(acc);
    return pipeline(ctx, fh, fd, path, byte_off, count, esz, chunk_elems, nchunks, storage, d, acc, NULL, t);
}

gr_result_t gr_pipeline_stats_file(gr_ctx_t ctx, MPI_File fh, int fd, const char *path, uint64_t byte_off, uint64_t count, size_t esz,
                                   uint64_t chunk_elems, uint64_t nchunks, gr_storage_t storage, const gr_desc_t *d,
                                   gr_stats_part_t *stats, gr_io_timing_t *t)
{
    gr_partial_t unused;
    gr_partial_init(&unused);
    gr_stats_part_init(stats);
    return pipeline(ctx, fh, fd, path, byte_off, count, esz, chunk_elems, nchunks, storage, d, &unused, stats, t);
}
