/*
 * reduce.cu - extern "C" launchers of the single-pass reduce (gr_grid.cuh).
 *
 * The kernel instances live in reduce_{f32,f64,i32,i64,f16,bf16}.cu; every instance
 * has the same parameter list, so one lookup in the instance table
 * (gr_dispatch.cuh) and cudaLaunchKernel serve all of them. The grid is the
 * tuning policy's (gr_cuda_grid, kernels/tuning.cu).
 */
#include "gr_dispatch.cuh"
#include "gr_kernels.h"

#include <sched.h>
#include <string.h>
#include <time.h>

/* gr_fast_kernel_for(dtype, op, narrow, block): the instance table's walk
 * (gr_dispatch.cuh); narrow: per-thread accumulators of gr_thread_op allowed
 * (bound checked by the caller) */
GR_DISPATCH(fast)

extern "C" int gr_cuda_reduce_block_supported(int block)
{
    return gr_in(block, gr_family<GR_KF_FAST>::blocks());
}

extern "C" cudaError_t gr_cuda_reduce_occupancy(int dtype, int op, int block, int *blocks_per_sm)
{
    /* the instance launches use for any n below 2^31 x the grid's threads */
    const void *k = gr_fast_kernel_for(dtype, op, 1, block);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, block, 0);
}

extern "C" cudaError_t gr_cuda_launch_reduce(const gr_cuda_reduce_launch_t *l)
{
    if (!gr_cuda_reduce_block_supported(l->block) || l->grid < 1 || l->grid > GR_CUDA_GRID_MAX ||
        l->seq > GR_CUDA_SEQ_MAX)
        return cudaErrorInvalidValue;
    /* per-thread accumulators of gr_thread_op: no thread may fold 2^32
     * elements; a thread folds at most n / threads + 6 (gr_thread.cuh) */
    const int narrow = l->n / ((uint64_t)l->grid * (uint64_t)l->block) < ((uint64_t)1 << 31);
    const void *k = gr_fast_kernel_for(l->dtype, l->op, narrow, l->block);
    if (!k || !l->scratch || !l->ticket || !l->result)
        return cudaErrorInvalidValue;
    const void *in = l->in;
    uint64_t n = l->n;
    int power = l->power;
    void *scratch = l->scratch;
    unsigned int *ticket = l->ticket;
    gr_local_t *result = l->result;
    unsigned int seq = l->seq;
    void *args[] = {(void *)&in,     (void *)&n,      (void *)&power, (void *)&scratch,
                    (void *)&ticket, (void *)&result, (void *)&seq};
    cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)l->grid), dim3((unsigned)l->block), args, 0, l->stream);
    if (e != cudaSuccess)
        return e;
    return cudaGetLastError();
}

/* ---- the host side of the result slot ---------------------------------------------- */

#define GR_POISON_F_BITS 0x7FF4DEADBEEF0000ull /* a signalling NaN: additions only make quiet ones */
#define GR_POISON_LO 0xDEADBEEFDEADBEEFull

extern "C" void gr_cuda_result_poison(gr_local_t *slot)
{
    volatile gr_local_t *r = slot;
    double f;
    const unsigned long long bits = GR_POISON_F_BITS;
    memcpy(&f, &bits, sizeof(f));
    r->f = f;
    r->lo = GR_POISON_LO;
    r->hi = INT64_MIN; /* |sum| < 2^127 for n < 2^64: never a real high word */
    r->count = UINT64_MAX;
    r->overflow = -1;
    r->reserved = -1;
}

/* One read of every field; 1 when none holds its poison and reserved == seq. */
static int read_slot(const gr_local_t *slot, unsigned int seq, gr_local_t *out)
{
    out->reserved = __atomic_load_n(&slot->reserved, __ATOMIC_ACQUIRE);
    uint64_t fbits = __atomic_load_n((const uint64_t *)&slot->f, __ATOMIC_RELAXED);
    memcpy(&out->f, &fbits, sizeof(fbits));
    out->lo = __atomic_load_n(&slot->lo, __ATOMIC_RELAXED);
    out->hi = __atomic_load_n(&slot->hi, __ATOMIC_RELAXED);
    out->count = __atomic_load_n(&slot->count, __ATOMIC_RELAXED);
    out->overflow = __atomic_load_n(&slot->overflow, __ATOMIC_RELAXED);
    return out->reserved == (int32_t)seq && fbits != GR_POISON_F_BITS && out->lo != GR_POISON_LO &&
           out->hi != INT64_MIN && out->count != UINT64_MAX && out->overflow != -1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the application set blocking sync on the current device (cudaDeviceScheduleBlockingSync):
 * then a long wait sleeps in the driver, as it asked. */
static int blocking_sync(void)
{
    unsigned int f = 0;
    return cudaGetDeviceFlags(&f) == cudaSuccess && (f & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync;
}

extern "C" cudaError_t gr_cuda_poll_wait(int (*ready)(void *), void *arg, cudaStream_t stream, cudaEvent_t ev,
                                         uint64_t spin_ns)
{
    if (spin_ns > 0) {
        if (ready(arg))
            return cudaSuccess;
        uint64_t ask = now_ns() + spin_ns;
        int sleep = -1;
        for (unsigned int k = 1;; ++k) {
            if ((k & 63u) == 0) {
                const uint64_t t = now_ns();
                if (t > ask) {
                    if (sleep < 0)
                        sleep = blocking_sync();
                    if (sleep)
                        break;
                    const cudaError_t e = ev ? cudaEventQuery(ev) : cudaStreamQuery(stream);
                    if (e != cudaErrorNotReady) { /* done (the result is there by now) or failed */
                        (void)ready(arg);
                        return e;
                    }
                    ask = t + 20000u;
                    (void)sched_yield();
                }
            }
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (ready(arg))
                /* The result is whole: the launch's last block ran to its
                 * end, so neither it nor any work before it on the stream
                 * failed (a failed or faulted context runs no later kernel).
                 * No stream query: it would cost a driver call per reduce. */
                return cudaSuccess;
        }
    }
    const cudaError_t e = ev ? cudaEventSynchronize(ev) : cudaStreamSynchronize(stream);
    (void)ready(arg);
    return e;
}

typedef struct {
    gr_local_t *slot, *out;
    unsigned int seq;
} slot_wait_t;

static int slot_ready(void *p)
{
    const slot_wait_t *w = (const slot_wait_t *)p;
    return read_slot(w->slot, w->seq, w->out);
}

extern "C" cudaError_t gr_cuda_reduce_wait(gr_local_t *slot, unsigned int seq, cudaStream_t stream, cudaEvent_t ev,
                                           uint64_t spin_ns, gr_local_t *out)
{
    slot_wait_t w = {slot, out, seq};
    return gr_cuda_poll_wait(slot_ready, &w, stream, ev, seq > 0 ? spin_ns : 0);
}

extern "C" uint64_t gr_cuda_reduce_spin_ns(uint64_t bytes)
{
    uint64_t ns = 20000u + bytes / 2000u;
    return ns < 5000000u ? ns : 5000000u;
}
