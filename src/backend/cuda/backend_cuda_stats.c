/*
 * backend_cuda_stats.c - --op stats on the cuda backend: launches of the
 * one-pass statistics kernel (kernels/gr_stats_kernels.h) into per-slot
 * scratch and mapped results, and their conversion into the host's
 * gr_stats_part_t (src/gr_stats.h), so GPU partials merge with host, file
 * and other ranks' partials by the same gr_stats_part_merge.
 *
 * Allocated at the first launch, per context: GR_CUDA_SLOTS device scratch
 * areas (zeroed once; every launch leaves its scratch zeroed), one mapped
 * pinned gr_stats_result_t per slot and one event per slot. Each result's
 * count is poisoned before its launch and checked after the event.
 */
#include "gr_cuda_check.h"
#include "gr_cuda_stats.h"
#include "gr_stats_kernels.h"

#include <stdlib.h>
#include <string.h>

typedef struct cuda_stats_state {
    void *scratch[GR_CUDA_SLOTS];
    gr_stats_result_t *res_host; /* mapped pinned, GR_CUDA_SLOTS entries */
    gr_stats_result_t *res_dev;
    cudaEvent_t done[GR_CUDA_SLOTS];
    uint64_t n[GR_CUDA_SLOTS];
    gr_dtype_t dtype[GR_CUDA_SLOTS];
    int pending[GR_CUDA_SLOTS];
    int occ[4];   /* resident blocks per SM by dtype at block[dtype], 0 = not asked */
    int block[4]; /* by dtype */
} cuda_stats_state_t;

void gr_cuda_stats_release(cuda_state_t *s)
{
    cuda_stats_state_t *st = (cuda_stats_state_t *)s->stats;
    if (!st)
        return;
    for (int i = 0; i < GR_CUDA_SLOTS; ++i) {
        if (st->done[i])
            GR_CUDA_IGNORE(cudaEventSynchronize(st->done[i]));
        if (st->scratch[i])
            GR_CUDA_IGNORE(cudaFree(st->scratch[i]));
        if (st->done[i])
            GR_CUDA_IGNORE(cudaEventDestroy(st->done[i]));
    }
    if (st->res_host)
        GR_CUDA_IGNORE(cudaFreeHost(st->res_host));
    free(st);
    s->stats = NULL;
}

static gr_result_t alloc_state(cuda_state_t *s, cuda_stats_state_t *st)
{
    /* the kernel is built for 128..512 threads */
    for (int t = 0; t < 4; ++t)
        st->block[t] = !s->block_forced ? gr_tuning_for(GR_KF_STATS, t, s->cc).block : s->block <= 512 ? s->block : 512;
    const size_t sb = gr_cuda_stats_scratch_bytes();
    for (int i = 0; i < GR_CUDA_SLOTS; ++i) {
        GR_CUDA_CHECK(cudaMalloc(&st->scratch[i], sb));
        GR_CUDA_CHECK(cudaMemsetAsync(st->scratch[i], 0, sb, s->stream));
        GR_CUDA_CHECK(cudaEventCreateWithFlags(&st->done[i], cudaEventDisableTiming));
    }
    GR_CUDA_CHECK(cudaHostAlloc((void **)&st->res_host, GR_CUDA_SLOTS * sizeof(gr_stats_result_t),
                                cudaHostAllocMapped));
    GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&st->res_dev, st->res_host, 0));
    /* the scratch is zero before any launch reads it (launches go on s->stream,
     * or on a pipeline stream after this sync); no device-wide sync */
    GR_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    return GR_SUCCESS;
}

static gr_result_t stats_state(cuda_state_t *s, cuda_stats_state_t **out)
{
    if (!s->stats) {
        cuda_stats_state_t *st = (cuda_stats_state_t *)calloc(1, sizeof(*st));
        if (!st)
            GR_FAIL(GR_ERR_NOMEM, "cannot allocate the cuda stats state");
        s->stats = st; /* gr_cuda_stats_release frees whatever exists */
        gr_result_t r = alloc_state(s, st);
        if (r != GR_SUCCESS) {
            gr_cuda_stats_release(s);
            return r;
        }
    }
    *out = (cuda_stats_state_t *)s->stats;
    return GR_SUCCESS;
}

gr_result_t gr_cuda_stats_launch(cuda_state_t *s, const void *dptr, uint64_t n, gr_dtype_t t, int slot,
                                 cudaStream_t stream)
{
    if (slot < 0 || slot >= GR_CUDA_SLOTS)
        GR_FAIL(GR_ERR_INTERNAL, "stats slot %d out of range 0..%d; report this as a bug", slot, GR_CUDA_SLOTS - 1);
    if (!gr_cuda_stats_supported((int)t))
        GR_FAIL(GR_ERR_UNSUPPORTED, "--op stats has no GPU kernel for dtype %s; use f32, f64, i32 or i64 (widen "
                                    "f16/bf16 data to f32), or --backend cpu",
                gr_dtype_name(t));
    cuda_stats_state_t *st = NULL;
    GR_CHECK(stats_state(s, &st));
    if (st->pending[slot])
        GR_FAIL(GR_ERR_INTERNAL, "stats slot %d launched again before it was collected; report this as a bug", slot);
    if (s->grid_override > GR_STATS_GRID_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "--op stats on the GPU takes at most %d blocks, but the grid is forced to %d; "
                                    "use a smaller --cuda-grid or 0 (occupancy)",
                GR_STATS_GRID_MAX, s->grid_override);
    int *occ = &st->occ[t];
    if (*occ == 0)
        GR_CUDA_CHECK(gr_cuda_stats_occupancy((int)t, st->block[t], occ));
    if (*occ < 1)
        GR_FAIL(GR_ERR_CUDA, "the %s stats kernel cannot run with %d threads per block on GPU %d (occupancy 0); "
                             "choose a smaller --cuda-block",
                gr_dtype_name(t), st->block[t], s->device);
    gr_cuda_stats_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = dptr;
    l.n = n;
    l.dtype = (int)t;
    l.block = st->block[t];
    l.grid = s->grid_override > 0 ? s->grid_override
                                  : gr_cuda_grid(GR_KF_STATS, s->cc, n, l.dtype, l.block, s->sm_count, *occ);
    l.scratch = st->scratch[slot];
    l.result = &st->res_dev[slot];
    l.stream = stream;
    memset(&st->res_host[slot], 0xFF, sizeof(gr_stats_result_t)); /* poison: count = UINT64_MAX */
    GR_DEBUGLOG(GR_SUB_CUDA, "stats %s n=%llu grid %d block %d slot %d", gr_dtype_name(t), (unsigned long long)n,
                l.grid, l.block, slot);
    GR_CUDA_CHECK(gr_cuda_launch_stats(&l));
    GR_CUDA_CHECK(cudaEventRecord(st->done[slot], stream));
    st->n[slot] = n;
    st->dtype[slot] = t;
    st->pending[slot] = 1;
    return GR_SUCCESS;
}

gr_result_t gr_cuda_stats_collect(cuda_state_t *s, int slot, gr_stats_part_t *p)
{
    cuda_stats_state_t *st = (cuda_stats_state_t *)s->stats;
    if (slot < 0 || slot >= GR_CUDA_SLOTS || !st || !st->pending[slot])
        GR_FAIL(GR_ERR_INTERNAL, "stats slot %d collected without a launch; report this as a bug", slot);
    st->pending[slot] = 0;
    GR_CUDA_CHECK(cudaEventSynchronize(st->done[slot]));
    gr_stats_result_t r;
    memcpy(&r, (const void *)&st->res_host[slot], sizeof(r));
    if (r.count != st->n[slot])
        GR_FAIL(GR_ERR_INTERNAL, "the stats kernel completed without writing its result (count %llu, expected "
                                 "%llu); rerun under compute-sanitizer and report it",
                (unsigned long long)r.count, (unsigned long long)st->n[slot]);
    gr_stats_part_t q;
    gr_stats_part_init(&q);
    for (int k = 0; k < GR_EXACT_LIMBS; ++k)
        q.sum.limb[k] = r.limb[k];
    gr_xacc_normalize(&q.sum);
    q.adds = 0;
    q.count = r.count;
    q.nan = r.nan;
    q.pinf = r.pinf;
    q.ninf = r.ninf;
    const int is_int = st->dtype[slot] == GR_I32 || st->dtype[slot] == GR_I64;
    q.nonnegzero = is_int ? r.count : r.nonnegzero; /* floats: only > 0 matters (the sign of a zero sum) */
    q.nf = r.nf;
    q.mean = r.mean;
    q.m2 = r.m2;
    q.min = r.min;
    q.max = r.max;
    q.imin = r.imin;
    q.imax = r.imax;
    gr_stats_part_merge(p, &q);
    return GR_SUCCESS;
}

/* gr_stats_device / gr_stats_buffer on this backend: slot 0 on the context's stream. */
static gr_result_t stats_local_in(gr_ctx_t ctx, cuda_state_t *s, const void *ptr, uint64_t count, gr_dtype_t t,
                                  gr_stats_part_t *p)
{
    const void *dptr = ptr;
    if (count > 0) {
        struct cudaPointerAttributes a;
        memset(&a, 0, sizeof(a));
        cudaError_t e = cudaPointerGetAttributes(&a, ptr);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_device: cannot query pointer %p (%s); pass memory from cudaMalloc",
                    ptr, cudaGetErrorString(e));
        }
        if (a.type == cudaMemoryTypeUnregistered || !a.devicePointer)
            GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_device: %p is host memory the GPU cannot read; pass device memory "
                                        "(cudaMalloc) or call gr_stats_host", ptr);
        if (a.type == cudaMemoryTypeDevice && a.device != s->device)
            GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_device: %p is memory of GPU %d, but this rank's context runs on "
                                        "GPU %d; compute on the GPU that owns it, or copy it",
                    ptr, a.device, s->device);
        dptr = a.devicePointer;
        if ((uintptr_t)dptr % gr_dtype_size(t) != 0)
            GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_device: %p is not aligned to the %zu-byte %s elements", ptr,
                    gr_dtype_size(t), gr_dtype_name(t));
    }
    GR_CHECK(gr_cuda_order_after(s, ctx->cfg.stream));
    gr_result_t r = gr_cuda_stats_launch(s, dptr, count, t, 0, s->stream);
    if (r == GR_SUCCESS)
        r = gr_cuda_stats_collect(s, 0, p);
    if (r != GR_SUCCESS)
        GR_CUDA_IGNORE(cudaStreamSynchronize(s->stream));
    return r;
}

gr_result_t gr_cuda_stats_local(gr_ctx_t ctx, const void *ptr, uint64_t count, gr_dtype_t t, gr_stats_part_t *p)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = stats_local_in(ctx, s, ptr, count, t, p);
    gr_cuda_leave(s->device, prev);
    return r;
}
