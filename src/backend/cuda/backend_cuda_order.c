/*
 * backend_cuda_order.c - ordered results (gr_call_t.ordered, docs/LIBRARY.md)
 * whose values need this rank's combine: the cuda backend's order_arm and
 * order_release.
 *
 * order_arm queues, on the caller's stream after the request's kernels, one
 * block (kernels/store.cu, gr_cuda_launch_release) that waits until a slot's
 * flag in mapped pinned host memory holds the slot's sequence number, copies
 * the slot's values to result_dev and acknowledges; order_release (request.c,
 * when gr_wait / gr_test has the values) writes the values and then the flag.
 * A slot is taken again only once its kernel acknowledged (it read the
 * values), so a later request never overwrites values still to be read. The
 * slots come in slabs of ORDER_SLAB, a new slab when every slot is in use (a
 * stream far behind its host), at most ORDER_SLABS_MAX.
 *
 * While a slot is armed and not released, a stream waits for this host: a
 * call that may wait for the whole device (cudaHostAlloc, cudaFree) would
 * then never return. g_waiting counts those slots in the process (every
 * context), and the library's allocations that can happen while requests are
 * outstanding (a new slab here, a larger vector arena) fail with a message
 * instead (gr_cuda_order_waiting).
 *
 * The one-rank fast dots do not come here: their kernels write the values
 * (gr_batch_direct_result, kernels/dot.cu).
 */
#include "gr_cuda_check.h"
#include "gr_cuda_state.h"
#include "gr_kernels.h"

#include <stdlib.h>
#include <string.h>

#define ORDER_SLAB 64
#define ORDER_SLABS_MAX 64

/* One slot, mapped pinned host memory (a cache line for the two words, then the values). */
typedef struct order_slot {
    unsigned int flag; /* the host stores seq once the values are in v */
    unsigned int ack;  /* the kernel stores seq once it has read v */
    unsigned int pad[14];
    gr_value_t v[GR_BATCH_MAX];
} order_slot_t;

typedef struct order_state {
    order_slot_t *host[ORDER_SLABS_MAX]; /* slab i: ORDER_SLAB slots */
    order_slot_t *dev[ORDER_SLABS_MAX];  /* their device view */
    unsigned int seq[ORDER_SLABS_MAX * ORDER_SLAB]; /* each slot's last sequence number, 0: never armed */
    unsigned char armed[ORDER_SLABS_MAX * ORDER_SLAB]; /* armed, not released yet */
    int nslabs;
    unsigned int next_seq; /* 1, 2, ...; never 0 */
} order_state_t;

/* Armed slots not yet released, in the whole process (all contexts). */
static int g_waiting;

int gr_cuda_order_waiting(void) { return __atomic_load_n(&g_waiting, __ATOMIC_RELAXED); }

static order_slot_t *slot_host(order_state_t *o, int t) { return &o->host[t / ORDER_SLAB][t % ORDER_SLAB]; }
static order_slot_t *slot_dev(order_state_t *o, int t) { return &o->dev[t / ORDER_SLAB][t % ORDER_SLAB]; }

/* A slot no kernel will read any more: released and acknowledged (or never armed). */
static int slot_free(order_state_t *o, int t)
{
    if (o->armed[t])
        return 0;
    return o->seq[t] == 0 || __atomic_load_n(&slot_host(o, t)->ack, __ATOMIC_ACQUIRE) == o->seq[t];
}

static gr_result_t take_slot(cuda_state_t *s, order_state_t *o, int *t)
{
    for (int i = 0; i < o->nslabs * ORDER_SLAB; ++i)
        if (slot_free(o, i)) {
            *t = i;
            return GR_SUCCESS;
        }
    if (o->nslabs == ORDER_SLABS_MAX)
        GR_FAIL(GR_ERR_INVALID_ARG, "%d ordered results on GPU %d are queued and not yet delivered (their streams "
                                    "are that far behind the host); let the streams catch up (synchronise them "
                                    "after gr_wait) now and then", ORDER_SLABS_MAX * ORDER_SLAB, s->device);
    if (gr_cuda_order_waiting() > 0)
        GR_FAIL(GR_ERR_INVALID_ARG, "an ordered result needs %s slots, and %d ordered result(s) of this process "
                                    "still wait for their rank's combine: the pinned allocation could wait for the GPU, "
                                    "whose streams wait for those; complete the outstanding ordered requests first "
                                    "(gr_wait / gr_test)", o->nslabs ? "more" : "its first", gr_cuda_order_waiting());
    const int b = o->nslabs;
    GR_CUDA_CHECK(cudaHostAlloc((void **)&o->host[b], sizeof(order_slot_t) * ORDER_SLAB, cudaHostAllocMapped));
    memset(o->host[b], 0, sizeof(order_slot_t) * ORDER_SLAB);
    cudaError_t e = cudaHostGetDevicePointer((void **)&o->dev[b], o->host[b], 0);
    if (e != cudaSuccess) {
        GR_CUDA_IGNORE(cudaFreeHost(o->host[b]));
        o->host[b] = NULL;
        GR_CUDA_CHECK(e);
    }
    o->nslabs = b + 1;
    *t = b * ORDER_SLAB;
    return GR_SUCCESS;
}

static gr_result_t check_target(cuda_state_t *s, void *stream, void *dst)
{
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof(a));
    cudaError_t e = cudaPointerGetAttributes(&a, dst);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_call_t.result_dev: cannot query pointer %p (%s); pass memory from "
                                    "cudaMalloc", dst, cudaGetErrorString(e));
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_call_t.result_dev: %p is not device memory; pass memory from cudaMalloc "
                                    "on GPU %d", dst, s->device);
    if (a.type == cudaMemoryTypeDevice && a.device != s->device)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_call_t.result_dev: %p is memory of GPU %d, the context's GPU is %d", dst,
                a.device, s->device);
    return gr_cuda_check_stream(s, stream);
}

static gr_result_t arm_in(cuda_state_t *s, void *stream, void *dst, size_t n, int *token)
{
    if (n == 0 || n > sizeof(((order_slot_t *)0)->v) || n % 8u != 0)
        GR_FAIL(GR_ERR_INTERNAL, "an ordered result of %zu bytes; report this as a bug", n);
    GR_CHECK(check_target(s, stream, dst));
    if (!s->order) {
        s->order = calloc(1, sizeof(order_state_t));
        if (!s->order)
            GR_FAIL(GR_ERR_NOMEM, "cannot allocate the ordered results' state");
    }
    order_state_t *o = (order_state_t *)s->order;
    int t = -1;
    GR_CHECK(take_slot(s, o, &t));
    unsigned int seq = ++o->next_seq;
    if (seq == 0)
        seq = ++o->next_seq;
    order_slot_t *d = slot_dev(o, t);
    GR_CUDA_CHECK(gr_cuda_launch_release(&d->flag, &d->ack, seq, d->v, dst, n, (cudaStream_t)stream));
    o->seq[t] = seq;
    o->armed[t] = 1;
    __atomic_add_fetch(&g_waiting, 1, __ATOMIC_RELAXED);
    *token = t;
    return GR_SUCCESS;
}

gr_result_t gr_cuda_order_arm(gr_ctx_t ctx, void *stream, void *dst, size_t n, int *token)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    int prev = -1;
    GR_CHECK(gr_cuda_enter(s->device, &prev));
    gr_result_t r = arm_in(s, stream, dst, n, token);
    gr_cuda_leave(s->device, prev);
    return r;
}

static void release(order_state_t *o, int t, const void *bytes, size_t n)
{
    order_slot_t *h = slot_host(o, t);
    if (bytes)
        memcpy(h->v, bytes, n);
    else
        memset(h->v, 0, n);
    __atomic_store_n(&h->flag, o->seq[t], __ATOMIC_RELEASE); /* the values, then the flag the kernel waits for */
    o->armed[t] = 0;
    __atomic_sub_fetch(&g_waiting, 1, __ATOMIC_RELAXED);
}

void gr_cuda_order_release(gr_ctx_t ctx, int token, const void *bytes, size_t n)
{
    cuda_state_t *s = (cuda_state_t *)ctx->bstate;
    order_state_t *o = (order_state_t *)s->order;
    if (!o || token < 0 || token >= o->nslabs * ORDER_SLAB || !o->armed[token])
        return;
    release(o, token, bytes, n);
}

void gr_cuda_order_free(cuda_state_t *s)
{
    order_state_t *o = (order_state_t *)s->order;
    if (!o)
        return;
    /* no stream may be left waiting on a slot: release any still armed (valid 0) before the memory goes */
    for (int t = 0; t < o->nslabs * ORDER_SLAB; ++t)
        if (o->armed[t])
            release(o, t, NULL, sizeof(slot_host(o, t)->v));
    for (int b = 0; b < o->nslabs; ++b)
        GR_CUDA_IGNORE(cudaFreeHost(o->host[b])); /* waits for the device: every release kernel has ended */
    free(o);
    s->order = NULL;
}
