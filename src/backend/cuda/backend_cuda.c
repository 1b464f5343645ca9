/*
 * backend_cuda.c - the cuda backend: one GPU per context, reached only
 * through the extern "C" launchers of kernels/gr_kernels.h.
 *
 * Per context: one stream (a blocking stream, so it orders after work the
 * application put on the legacy default stream; where the caller gives a
 * stream, ours waits on an event recorded on it, never on the whole device),
 * the reduce kernel's scratch
 * (one partial per block, sized for the largest grid this context launches)
 * and ticket, and GR_CUDA_SLOTS result slots in mapped pinned host memory.
 * The kernel's last block writes a gr_local_t into a slot, with no copy
 * call. Before each launch the slot is poisoned and the launch gets a new
 * sequence number, so a kernel that never wrote its result is caught, not
 * read. A device-resident reduce polls the slot (gr_cuda_reduce_wait: the
 * result is taken once the sequence number is there and no field holds its
 * poison; past the launch's own time, a stream query now and then:
 * gr_cuda_poll_wait); the staged host path, which keeps
 * two chunks in flight, waits on each slot's event.
 *
 * Host data (gr_reduce_host) is staged through two pinned buffers and two
 * device buffers of GR_CUDA_STAGE_BYTES: while the GPU copies and reduces
 * chunk k, the host packs chunk k+1. Each chunk's gr_local_t is folded into
 * the exact partial in chunk order, so the result is repeatable.
 *
 * --mode exact with f32/f64/f16/bf16 sum-like ops runs the exact kernel
 * instead (kernels/gr_exact_kernels.h): same slots and staging, a
 * gr_exact_result_t per slot, folded into the partial's exact accumulator.
 *
 * f16 / bf16 data stays 2 bytes per element on the GPU and in the staging
 * buffers: the kernels read halves and widen them in registers.
 *
 * Non-blocking requests (request.c) take result slots GR_CUDA_SLOTS.. of
 * their own, one each, and record that slot's event after their launch; the
 * caller's stream then waits on it, so its later work may reuse the input.
 * Every entry point saves and restores the caller's current device
 * (gr_cuda_enter / gr_cuda_leave).
 */
#include "gr_cuda_check.h"
#include "gr_cuda_state.h"
#include "gr_cuda_stats.h"
#include "gr_env.h"
#include "gr_stream.h"
#include "gr_vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_float(gr_dtype_t t) { return gr_c_is_float((int)t); } /* f32, f64, f16, bf16 */
static int is_minmax(gr_op_kind_t k) { return k == GR_OP_MIN || k == GR_OP_MAX; }

/* ---- discovery (no context needed) ------------------------------------- */

int gr_cuda_current_device(void)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return d;
}

gr_result_t gr_cuda_enter(int device, int *prev)
{
    *prev = gr_cuda_current_device();
    if (*prev != device)
        GR_CUDA_CHECK(cudaSetDevice(device));
    return GR_SUCCESS;
}

void gr_cuda_leave(int device, int prev)
{
    if (prev >= 0 && prev != device)
        GR_CUDA_IGNORE(cudaSetDevice(prev));
}

int gr_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no GPU: not an error here */
        return 0;
    }
    return n;
}

/* "00000000:07:00.0" or "0000:07:00.0" -> "0000:07:00.0", lowercase. */
static void normalise_bus_id(const char *in, char *out, size_t len)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(in, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
        snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return;
    }
    size_t i = 0;
    for (; in[i] && i + 1 < len; ++i)
        out[i] = (in[i] >= 'A' && in[i] <= 'F') ? (char)(in[i] - 'A' + 'a') : in[i];
    out[i] = '\0';
}

int gr_cuda_list_gpus(gr_gpu_info_t *gpus, int max)
{
    int n = gr_cuda_device_count();
    if (n > max)
        n = max;
    for (int i = 0; i < n; ++i) {
        char bus[64];
        if (cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), i) == cudaSuccess) {
            normalise_bus_id(bus, gpus[i].pci_bus_id, sizeof(gpus[i].pci_bus_id));
        } else {
            (void)cudaGetLastError();
            gpus[i].pci_bus_id[0] = '\0';
        }
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
            /* prop.name is 256 bytes; a GPU name is far shorter */
            snprintf(gpus[i].name, sizeof(gpus[i].name), "%.*s", (int)sizeof(gpus[i].name) - 1, prop.name);
        } else {
            (void)cudaGetLastError();
            snprintf(gpus[i].name, sizeof(gpus[i].name), "unknown");
        }
    }
    return n < 0 ? 0 : n;
}

/* ---- lifecycle ----------------------------------------------------------- */

static void free_staging(cuda_state_t *s)
{
    for (int i = 0; i < GR_CUDA_SLOTS; ++i) {
        if (s->stage_host[i])
            GR_CUDA_IGNORE(cudaFreeHost(s->stage_host[i]));
        if (s->stage_dev[i])
            GR_CUDA_IGNORE(cudaFree(s->stage_dev[i]));
        s->stage_host[i] = NULL;
        s->stage_dev[i] = NULL;
    }
    s->stage_bytes = 0;
}

static void fini_state(cuda_state_t *s)
{
    gr_cuda_order_free(s); /* first: it releases any stream still waiting on the host */
    if (s->stream)
        GR_CUDA_IGNORE(cudaStreamSynchronize(s->stream));
    gr_cuda_stats_release(s);
    gr_cuda_vec_release(s);
    gr_cuda_stream_release(s);
    free_staging(s);
    if (s->xscratch)
        GR_CUDA_IGNORE(cudaFree(s->xscratch));
    if (s->xres_host)
        GR_CUDA_IGNORE(cudaFreeHost(s->xres_host));
    if (s->scratch)
        GR_CUDA_IGNORE(cudaFree(s->scratch));
    if (s->ticket)
        GR_CUDA_IGNORE(cudaFree(s->ticket));
    if (s->res_host)
        GR_CUDA_IGNORE(cudaFreeHost(s->res_host));
    for (int i = 0; i < GR_CUDA_NSLOTS; ++i)
        if (s->done[i])
            GR_CUDA_IGNORE(cudaEventDestroy(s->done[i]));
    if (s->in_ev)
        GR_CUDA_IGNORE(cudaEventDestroy(s->in_ev));
    if (s->stream)
        GR_CUDA_IGNORE(cudaStreamDestroy(s->stream));
    free(s);
}

static void cuda_fini(gr_ctx_t ctx, void *state)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    if (!s)
        return;
    int prev = -1;
    if (gr_cuda_enter(s->device, &prev) != GR_SUCCESS)
        return; /* logged; leaking is all that is left to do */
    fini_state(s);
    gr_cuda_leave(s->device, prev);
}

static gr_result_t init_state(gr_ctx_t ctx, cuda_state_t *s)
{
    s->cc = gr_cuda_device_cc(s->device);
    /* the fast family has one block for every dtype (one scratch, one occupancy table) */
    const int block_default = gr_tuning_for(GR_KF_FAST, GR_C_F32, s->cc).block;
    int block = ctx->cfg.cuda_block;
    if (block == 0)
        block = block_default;
    if (!gr_cuda_reduce_block_supported(block))
        GR_FAIL(GR_ERR_INVALID_ARG, "cuda block size %d is not built into this gpureduce; use 128, 256, 512 or 1024, "
                                    "or 0 for the default (%d)", block, block_default);
    if (ctx->cfg.cuda_grid < 0 || ctx->cfg.cuda_grid > GR_CUDA_GRID_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "cuda grid size %d is out of range; use 1..%d blocks, or 0 to size the grid "
                                    "from occupancy", ctx->cfg.cuda_grid, GR_CUDA_GRID_MAX);
    s->block = block;
    const char *pdl = gr_env(GR_ENV_CUDA_PDL);
    s->pdl = !(pdl && strcmp(pdl, "0") == 0);
    s->grid_override = ctx->cfg.cuda_grid;
    s->block_forced = ctx->cfg.cuda_block != 0;

    GR_CUDA_CHECK(cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, s->device));
    GR_CUDA_CHECK(cudaStreamCreate(&s->stream));
    GR_CUDA_CHECK(cudaEventCreateWithFlags(&s->in_ev, cudaEventDisableTiming));
    for (int i = 0; i < GR_CUDA_NSLOTS; ++i)
        GR_CUDA_CHECK(cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming));
    GR_CUDA_CHECK(cudaHostAlloc((void **)&s->res_host, GR_CUDA_NSLOTS * sizeof(gr_local_t), cudaHostAllocMapped));
    GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&s->res_dev, s->res_host, 0));
    memset(s->res_host, 0, GR_CUDA_NSLOTS * sizeof(gr_local_t));

    int max_grid = 1;
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        for (int k = 0; k < GR_OP_COUNT; ++k) {
            GR_CUDA_CHECK(gr_cuda_reduce_occupancy(t, k, block, &s->occ[t][k]));
            if (s->occ[t][k] < 1)
                GR_FAIL(GR_ERR_CUDA, "the %s %s reduce kernel cannot run with %d threads per block on GPU %d "
                                     "(occupancy 0); choose a smaller --cuda-block",
                        gr_dtype_name((gr_dtype_t)t), gr_op_name((gr_op_kind_t)k), block, s->device);
            if (s->occ[t][k] * s->sm_count > max_grid)
                max_grid = s->occ[t][k] * s->sm_count;
        }
    }
    s->scratch_blocks = max_grid > s->grid_override ? max_grid : s->grid_override;
    GR_CUDA_CHECK(cudaMalloc(&s->scratch, (size_t)s->scratch_blocks * GR_CUDA_SCRATCH_BYTES_PER_BLOCK));
    GR_CUDA_CHECK(cudaMalloc((void **)&s->ticket, sizeof(unsigned int)));
    GR_CUDA_CHECK(cudaMemsetAsync(s->ticket, 0, sizeof(unsigned int), s->stream));
    GR_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    GR_INFO(GR_SUB_CUDA, "cuda backend: GPU %d (%s, %s), %d SMs, block %d, grid %s (f32 sum: %d blocks/SM)",
            s->device, ctx->gpu_name, ctx->pci_bus_id, s->sm_count, s->block,
            s->grid_override ? "forced" : "from occupancy", s->occ[GR_F32][GR_OP_SUM]);
    return GR_SUCCESS;
}

static gr_result_t cuda_init(gr_ctx_t ctx, void **state)
{
    cuda_state_t *s = (cuda_state_t *)calloc(1, sizeof(*s));
    if (!s)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the cuda backend state");
    s->device = ctx->device;
    if (s->device < 0) {
        free(s);
        GR_FAIL(GR_ERR_INTERNAL, "cuda backend started without a bound GPU; report this as a bug");
    }
    int prev = -1;
    gr_result_t r = gr_cuda_enter(s->device, &prev);
    if (r != GR_SUCCESS) {
        free(s);
        return r;
    }
    r = init_state(ctx, s);
    if (r != GR_SUCCESS)
        fini_state(s);
    else
        *state = s;
    gr_cuda_leave(s->device, prev);
    return r;
}

/* ---- memory and generation ---------------------------------------------- */

static gr_result_t cuda_alloc(gr_ctx_t ctx, void *state, uint64_t count, gr_dtype_t t, void **ptr)
{
    cuda_state_t *s = (cuda_state_t *)state;
    size_t esz = gr_dtype_size(t);
    *ptr = NULL;
    if (count > (uint64_t)(SIZE_MAX / esz))
        GR_FAIL(GR_ERR_INVALID_ARG, "%llu %s elements do not fit in this process's address space; use more ranks",
                (unsigned long long)count, gr_dtype_name(t));
    size_t bytes = (size_t)(count ? count : 1) * esz;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
            (void)cudaGetLastError();
        (void)cudaGetLastError();
        *ptr = NULL;
        gr_cuda_leave(s->device, prev);
        GR_FAIL(GR_ERR_DEVMEM, "cannot allocate %zu bytes (%.2f GiB) of GPU memory on GPU %d (%s) for %llu %s "
                               "elements: %.2f GiB free of %.2f GiB; use fewer elements per rank, more ranks "
                               "or GPUs, or a GPU with more memory",
                bytes, (double)bytes / 1073741824.0, s->device, ctx->gpu_name, (unsigned long long)count,
                gr_dtype_name(t), (double)free_b / 1073741824.0, (double)total_b / 1073741824.0);
    }
    gr_cuda_leave(s->device, prev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *ptr = NULL;
        GR_CUDA_LOG_("cudaMalloc(ptr, bytes)", e);
        return GR_ERR_CUDA;
    }
    return GR_SUCCESS;
}

static void cuda_free(gr_ctx_t ctx, void *state, void *ptr)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    if (!ptr)
        return;
    int prev = -1;
    if (gr_cuda_enter(s->device, &prev) != GR_SUCCESS)
        return;
    GR_CUDA_IGNORE(cudaFree(ptr));
    gr_cuda_leave(s->device, prev);
}

static gr_result_t cuda_generate(gr_ctx_t ctx, void *state, void *ptr, gr_dtype_t t, gr_gen_t g, uint64_t seed,
                                 uint64_t begin, uint64_t count)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = GR_SUCCESS;
    GR_CUDA_CHECK_GOTO(gr_cuda_launch_generate(ptr, (int)t, (int)g, seed, begin, count, s->stream), r, out);
    GR_CUDA_CHECK_GOTO(cudaStreamSynchronize(s->stream), r, out);
out:
    gr_cuda_leave(s->device, prev);
    return r;
}

/* ---- reduction ------------------------------------------------------------ */

static int pick_grid(const cuda_state_t *s, const gr_desc_t *d, uint64_t n)
{
    if (s->grid_override > 0)
        return s->grid_override;
    return gr_cuda_grid(GR_KF_FAST, s->cc, n, (int)d->dtype, s->block, s->sm_count, s->occ[d->dtype][d->op.kind]);
}

/* ---- exact mode: f32/f64 sum-like ops (the exact kernel of gr_exact.cuh) ---- */

static int is_exact_float(const gr_desc_t *d)
{
    return d->mode == GR_MODE_EXACT && is_float(d->dtype) && !is_minmax(d->op.kind);
}

static gr_result_t launch_exact(cuda_state_t *s, const void *dptr, uint64_t n, const gr_desc_t *d, int slot)
{
    int power = d->op.kind == GR_OP_POWSUM ? d->op.power : 1;
    if (!gr_cuda_exact_supported((int)d->dtype, (int)d->op.kind, power))
        GR_FAIL(GR_ERR_UNSUPPORTED, "--mode exact has no GPU kernel for %s %s; use --mode fast", gr_dtype_name(d->dtype),
                gr_op_name(d->op.kind));
    if (!s->xscratch) {
        GR_CUDA_CHECK(cudaMalloc(&s->xscratch, gr_cuda_exact_scratch_bytes()));
        GR_CUDA_CHECK(cudaMemsetAsync(s->xscratch, 0, gr_cuda_exact_scratch_bytes(), s->stream));
        GR_CUDA_CHECK(cudaHostAlloc((void **)&s->xres_host, GR_CUDA_NSLOTS * sizeof(gr_exact_result_t),
                                    cudaHostAllocMapped));
        GR_CUDA_CHECK(cudaHostGetDevicePointer((void **)&s->xres_dev, s->xres_host, 0));
    }
    if (s->grid_override > GR_EXACT_GRID_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "--mode exact on the GPU takes at most %d blocks, but the grid is forced to %d; "
                                    "use a smaller --cuda-grid or 0 (occupancy)",
                GR_EXACT_GRID_MAX, s->grid_override);
    if (n >= GR_EXACT_LAUNCH_MAX_N)
        GR_FAIL(GR_ERR_INVALID_ARG, "--mode exact on the GPU takes fewer than 2^41 elements per launch, got %llu; "
                                    "use more ranks, so that each GPU reduces a smaller shard",
                (unsigned long long)n);
    /* the exact kernel is built for 128..512 threads and has its own policy (tuning/gr_tuning.h) */
    const gr_tuning_t tp = gr_tuning_for(GR_KF_EXACT, (int)d->dtype, s->cc);
    int block = !s->block_forced ? tp.block : s->block <= 512 ? s->block : 512;
    int *occ = &s->xocc[d->dtype][d->op.kind];
    if (*occ == 0)
        GR_CUDA_CHECK(gr_cuda_exact_occupancy((int)d->dtype, (int)d->op.kind, power, tp.terms, block, occ));
    gr_cuda_exact_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = dptr;
    l.n = n;
    l.dtype = (int)d->dtype;
    l.op = (int)d->op.kind;
    l.power = power;
    l.terms = tp.terms;
    l.block = block;
    l.grid = s->grid_override > 0 ? s->grid_override
                                  : gr_cuda_grid(GR_KF_EXACT, s->cc, n, l.dtype, block, s->sm_count, *occ);
    l.scratch = s->xscratch;
    l.result = &s->xres_dev[slot];
    l.stream = s->stream;
    s->xres_host[slot].count = UINT64_MAX; /* poison: the kernel writes n with limb 0 */
    GR_DEBUGLOG(GR_SUB_CUDA, "exact reduce %s %s n=%llu grid %d block %d", gr_dtype_name(d->dtype),
                gr_op_name(d->op.kind), (unsigned long long)n, l.grid, l.block);
    GR_CUDA_CHECK(gr_cuda_launch_reduce_exact(&l));
    GR_CUDA_CHECK(cudaEventRecord(s->done[slot], s->stream));
    return GR_SUCCESS;
}

/* Fold the exact result of slot `slot` (n elements) into out: exact limbs and counts. */
static gr_result_t finish_exact(cuda_state_t *s, uint64_t n, int slot, gr_partial_t *out)
{
    GR_CUDA_CHECK(cudaEventSynchronize(s->done[slot]));
    gr_exact_result_t r = *(const volatile gr_exact_result_t *)&s->xres_host[slot];
    if (r.count != n)
        GR_FAIL(GR_ERR_INTERNAL, "the exact reduce kernel completed without writing its result (count %llu, "
                                 "expected %llu); rerun under compute-sanitizer and report it",
                (unsigned long long)r.count, (unsigned long long)n);
    gr_xacc_t x;
    gr_exact_result_to_xacc(&r, &x);
    gr_xacc_add(&out->sum, &x);
    out->adds += 1;
    gr_partial_maybe_normalize(out);
    out->count += (int64_t)n;
    out->nan += (int64_t)r.nan;
    out->pinf += (int64_t)r.pinf;
    out->ninf += (int64_t)r.ninf;
    out->nonnegzero += (int64_t)r.nonnegzero;
    return GR_SUCCESS;
}

/* Poison result slot `slot`, then launch the reduce of n elements at dptr into it
 * under a new sequence number; record the slot's event when another launch may
 * follow before this one is waited for (the staged host path). */
static gr_result_t launch_slot(cuda_state_t *s, const void *dptr, uint64_t n, const gr_desc_t *d, int slot,
                               int record_event)
{
    if (is_exact_float(d))
        return launch_exact(s, dptr, n, d, slot);
    gr_cuda_result_poison(&s->res_host[slot]);
    s->next_seq = s->next_seq >= GR_CUDA_SEQ_MAX ? 1u : s->next_seq + 1u;
    s->seq[slot] = s->next_seq;
    gr_cuda_reduce_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = dptr;
    l.n = n;
    l.dtype = (int)d->dtype;
    l.op = (int)d->op.kind;
    l.power = d->op.kind == GR_OP_POWSUM ? d->op.power : 1;
    l.grid = pick_grid(s, d, n);
    l.block = s->block;
    l.scratch = s->scratch;
    l.ticket = s->ticket;
    l.result = &s->res_dev[slot];
    l.seq = s->seq[slot];
    l.stream = s->stream;
    GR_DEBUGLOG(GR_SUB_CUDA, "reduce %s %s n=%llu grid %d block %d seq %u", gr_dtype_name(d->dtype),
                gr_op_name(d->op.kind), (unsigned long long)n, l.grid, l.block, l.seq);
    GR_CUDA_CHECK(gr_cuda_launch_reduce(&l));
    if (record_event)
        GR_CUDA_CHECK(cudaEventRecord(s->done[slot], s->stream));
    return GR_SUCCESS;
}

/* How finish_slot waits for a launch. */
enum {
    WAIT_EVENT = 0,      /* the slot's event (staged path: two launches in flight) */
    WAIT_POLL_STREAM = 1,/* poll the slot, then a sync of our stream (blocking device path) */
    WAIT_POLL_EVENT = 2  /* poll the slot, then its event (requests: later launches may be queued) */
};

/* Wait for slot `slot` and fold its result (n elements) into out. */
static gr_result_t finish_slot(cuda_state_t *s, uint64_t n, const gr_desc_t *d, int slot, int how,
                               gr_partial_t *out)
{
    if (is_exact_float(d)) /* the exact launch always records its event */
        return finish_exact(s, n, slot, out);
    gr_local_t loc;
    const uint64_t spin = how == WAIT_EVENT ? 0 : gr_cuda_reduce_spin_ns(n * (uint64_t)gr_dtype_size(d->dtype));
    GR_CUDA_CHECK(gr_cuda_reduce_wait(&s->res_host[slot], s->seq[slot], s->stream,
                                      how == WAIT_POLL_STREAM ? NULL : s->done[slot], spin, &loc));
    if (loc.count != n || loc.reserved != (int32_t)s->seq[slot])
        GR_FAIL(GR_ERR_INTERNAL, "the reduce kernel completed without writing its result (count %llu, expected "
                                 "%llu; sequence %d, expected %u); rerun under compute-sanitizer and report it",
                (unsigned long long)loc.count, (unsigned long long)n, (int)loc.reserved, s->seq[slot]);
    loc.reserved = 0;
    gr_partial_add_local(out, d, &loc);
    return GR_SUCCESS;
}

/* For the backend's other translation units (gr_cuda_state.h): the staged form, by events. */
gr_result_t gr_cuda_launch_slot(cuda_state_t *s, const void *dptr, uint64_t n, const gr_desc_t *d, int slot)
{
    return launch_slot(s, dptr, n, d, slot, 1);
}

gr_result_t gr_cuda_finish_slot(cuda_state_t *s, uint64_t n, const gr_desc_t *d, int slot, gr_partial_t *out)
{
    return finish_slot(s, n, d, slot, WAIT_EVENT, out);
}

/* Order our stream after the work queued so far on the caller's stream
 * (NULL: none given): an event on it, waited for by our stream alone. */
gr_result_t gr_cuda_order_after(cuda_state_t *s, void *stream)
{
    if (!stream || (cudaStream_t)stream == s->stream)
        return GR_SUCCESS;
    cudaError_t e = cudaEventRecord(s->in_ev, (cudaStream_t)stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_ERR_INVALID_ARG, "cannot record an event on the caller's stream %p (%s): pass a live stream of "
                                    "the context's GPU %d", stream, cudaGetErrorString(e), s->device);
    }
    GR_CUDA_CHECK(cudaStreamWaitEvent(s->stream, s->in_ev, 0));
    return GR_SUCCESS;
}

static gr_result_t device_view(cuda_state_t *s, const void *ptr, const void **dptr)
{
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof(a));
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_device: cannot query pointer %p (%s); pass memory from cudaMalloc",
                ptr, cudaGetErrorString(e));
    }
    if (a.type == cudaMemoryTypeUnregistered || !a.devicePointer)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_device: %p is host memory the GPU cannot read; pass device memory "
                                    "(cudaMalloc) or call gr_reduce_host", ptr);
    if (a.type == cudaMemoryTypeDevice && a.device != s->device)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_device: %p is memory of GPU %d, but this rank's context runs on GPU "
                                    "%d; reduce it on the GPU that owns it, or copy it", ptr, a.device, s->device);
    *dptr = a.devicePointer;
    return GR_SUCCESS;
}

static gr_result_t ensure_staging(cuda_state_t *s, size_t bytes)
{
    size_t want = bytes > GR_CUDA_STAGE_BYTES ? GR_CUDA_STAGE_BYTES : bytes;
    want = (want + GR_CUDA_STAGE_ROUND - 1) / GR_CUDA_STAGE_ROUND * GR_CUDA_STAGE_ROUND;
    if (s->stage_bytes >= want)
        return GR_SUCCESS;
    GR_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    free_staging(s);
    for (int i = 0; i < GR_CUDA_SLOTS; ++i) {
        GR_CUDA_CHECK(cudaHostAlloc(&s->stage_host[i], want, cudaHostAllocDefault));
        GR_CUDA_CHECK(cudaMalloc(&s->stage_dev[i], want));
    }
    s->stage_bytes = want;
    return GR_SUCCESS;
}

static gr_result_t reduce_host(cuda_state_t *s, const void *ptr, uint64_t count, const gr_desc_t *d,
                               gr_partial_t *out)
{
    size_t esz = gr_dtype_size(d->dtype);
    if (count == 0)
        return GR_SUCCESS;
    if (count > (uint64_t)(SIZE_MAX / esz))
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_host: %llu elements overflow the address space",
                (unsigned long long)count);
    GR_CHECK(ensure_staging(s, (size_t)count * esz));
    const uint64_t chunk = s->stage_bytes / esz;
    const uint64_t nchunks = (count + chunk - 1) / chunk;
    uint64_t pending[GR_CUDA_SLOTS] = {0, 0};
    for (uint64_t k = 0; k < nchunks; ++k) {
        int b = (int)(k % GR_CUDA_SLOTS);
        if (k >= GR_CUDA_SLOTS) /* slot b's buffers are free once chunk k-2 is done */
            GR_CHECK(finish_slot(s, pending[b], d, b, WAIT_EVENT, out));
        uint64_t first = k * chunk;
        uint64_t nk = count - first < chunk ? count - first : chunk;
        memcpy(s->stage_host[b], (const char *)ptr + first * esz, (size_t)nk * esz);
        GR_CUDA_CHECK(cudaMemcpyAsync(s->stage_dev[b], s->stage_host[b], (size_t)nk * esz, cudaMemcpyHostToDevice,
                                      s->stream));
        GR_CHECK(launch_slot(s, s->stage_dev[b], nk, d, b, 1));
        pending[b] = nk;
    }
    uint64_t k0 = nchunks > GR_CUDA_SLOTS ? nchunks - GR_CUDA_SLOTS : 0;
    for (uint64_t k = k0; k < nchunks; ++k)
        GR_CHECK(finish_slot(s, pending[k % GR_CUDA_SLOTS], d, (int)(k % GR_CUDA_SLOTS), WAIT_EVENT, out));
    return GR_SUCCESS;
}

static gr_result_t reduce_in(gr_ctx_t ctx, cuda_state_t *s, const void *ptr, int on_device, uint64_t count,
                             const gr_desc_t *d, gr_partial_t *out)
{
    gr_result_t r;
    if (on_device) {
        const void *dptr = ptr;
        if (count > 0)
            GR_CHECK(device_view(s, ptr, &dptr));
        GR_CHECK(gr_cuda_order_after(s, ctx->cfg.stream));
        r = launch_slot(s, dptr, count, d, 0, 0);
        if (r == GR_SUCCESS)
            r = finish_slot(s, count, d, 0, WAIT_POLL_STREAM, out);
    } else {
        r = reduce_host(s, ptr, count, d, out);
    }
    if (r != GR_SUCCESS) /* leave nothing in flight on the buffers we own */
        GR_CUDA_IGNORE(cudaStreamSynchronize(s->stream));
    return r;
}

static gr_result_t cuda_reduce(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                               const gr_desc_t *d, gr_partial_t *out)
{
    cuda_state_t *s = (cuda_state_t *)state;
    gr_partial_init(out);
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = reduce_in(ctx, s, ptr, on_device, count, d, out);
    gr_cuda_leave(s->device, prev);
    return r;
}

/* ---- non-blocking requests (request.c) ------------------------------------ */

static gr_result_t start_in(cuda_state_t *s, const void *ptr, uint64_t count, const gr_desc_t *d, void *stream,
                            int *token)
{
    int k = 0;
    while (k < GR_REQUEST_MAX && s->req_busy[k])
        ++k;
    if (k == GR_REQUEST_MAX) /* request.c keeps at most GR_REQUEST_MAX outstanding */
        GR_FAIL(GR_ERR_INTERNAL, "no free request slot with fewer than %d requests outstanding; report this as a bug",
                GR_REQUEST_MAX);
    const void *dptr = ptr;
    if (count > 0)
        GR_CHECK(device_view(s, ptr, &dptr));
    GR_CHECK(gr_cuda_order_after(s, stream));
    const int slot = GR_CUDA_SLOTS + k;
    gr_result_t r = launch_slot(s, dptr, count, d, slot, 1);
    /* the caller's later work on its stream (reusing the input) waits for our read */
    if (r == GR_SUCCESS && stream && (cudaStream_t)stream != s->stream)
        GR_CUDA_CHECK_GOTO(cudaStreamWaitEvent((cudaStream_t)stream, s->done[slot], 0), r, fail);
    if (r != GR_SUCCESS)
        goto fail;
    s->req_busy[k] = 1;
    *token = k;
    return GR_SUCCESS;
fail:
    GR_CUDA_IGNORE(cudaStreamSynchronize(s->stream));
    return r;
}

static gr_result_t cuda_start(gr_ctx_t ctx, void *state, const void *ptr, uint64_t count, const gr_desc_t *d,
                              void *stream, int *token)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = start_in(s, ptr, count, d, stream, token);
    gr_cuda_leave(s->device, prev);
    return r;
}

static gr_result_t poll_in(cuda_state_t *s, int k, uint64_t count, const gr_desc_t *d, int block, int *done,
                           gr_partial_t *out)
{
    const int slot = GR_CUDA_SLOTS + k;
    if (!block) {
        cudaError_t e = cudaEventQuery(s->done[slot]);
        if (e == cudaErrorNotReady)
            return GR_SUCCESS;
        if (e != cudaSuccess) {
            s->req_busy[k] = 0;
            *done = 1;
            (void)cudaGetLastError();
            GR_FAIL(GR_CUDA_RESULT_(e), "CUDA error while testing a non-blocking reduction on GPU %d: %s; an "
                                        "earlier kernel on the GPU failed, see compute-sanitizer",
                    s->device, cudaGetErrorString(e));
        }
    }
    gr_partial_init(out);
    gr_result_t r = finish_slot(s, count, d, slot, WAIT_POLL_EVENT, out);
    s->req_busy[k] = 0;
    *done = 1;
    return r;
}

static gr_result_t cuda_poll(gr_ctx_t ctx, void *state, int token, uint64_t count, const gr_desc_t *d, int block,
                             int *done, gr_partial_t *out)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    *done = 0;
    int prev = -1;
    gr_result_t r = gr_cuda_enter(s->device, &prev);
    if (r != GR_SUCCESS) {
        s->req_busy[token] = 0;
        *done = 1;
        return r;
    }
    r = poll_in(s, token, count, d, block, done, out);
    gr_cuda_leave(s->device, prev);
    return r;
}

static gr_result_t cuda_deliver(gr_ctx_t ctx, void *state, void *stream, void *dst, const void *bytes, size_t n)
{
    (void)ctx;
    cuda_state_t *s = (cuda_state_t *)state;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    const void *ddst = NULL;
    gr_result_t r = device_view(s, dst, &ddst);
    if (r == GR_SUCCESS)
        GR_CUDA_CHECK_GOTO(gr_cuda_launch_store((void *)ddst, bytes, n, stream ? (cudaStream_t)stream : s->stream),
                           r, out);
out:
    gr_cuda_leave(s->device, prev);
    return r;
}

/* Host memory takes the host kernels, as the cpu backend's; device memory the GPU's. */
static gr_result_t cuda_stats(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                              gr_dtype_t t, gr_stats_part_t *out)
{
    (void)state;
    if (!on_device) {
        gr_stats_part_add(out, ptr, count, t);
        return GR_SUCCESS;
    }
    return gr_cuda_stats_local(ctx, ptr, count, t, out);
}

const gr_backend_ops_t gr_backend_cuda_ops = {
    "cuda", 1, cuda_init, cuda_fini, cuda_alloc, cuda_free, cuda_generate, cuda_reduce,
    cuda_start, cuda_poll, cuda_deliver, cuda_stats, gr_cuda_vec_start, gr_cuda_vec_poll, &gr_backend_cuda_stream_ops,
    gr_cuda_order_arm, gr_cuda_order_release,
};
