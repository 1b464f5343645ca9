/*
 * backend_cuda_none.c - stands in for the cuda backend in builds without CUDA:
 * the same interface (gr_backend_ops_t), marked not built. ctx.c never picks
 * it (it says so to the user instead), so only init is reachable by design;
 * every other entry fails the same way, should a caller ever get past that.
 */
#include "gr_internal.h"
#include "gr_stream.h"

static gr_result_t not_built(void)
{
    GR_FAIL(GR_ERR_NOT_BUILT, "this gpureduce was built without CUDA; rebuild with the CUDA toolkit or use "
                              "--backend cpu");
}

static gr_result_t none_init(gr_ctx_t ctx, void **state)
{
    (void)ctx, (void)state;
    return not_built();
}

static void none_fini(gr_ctx_t ctx, void *state) { (void)ctx, (void)state; }

static gr_result_t none_alloc(gr_ctx_t ctx, void *state, uint64_t count, gr_dtype_t t, void **ptr)
{
    (void)ctx, (void)state, (void)count, (void)t, (void)ptr;
    return not_built();
}

static void none_free(gr_ctx_t ctx, void *state, void *ptr) { (void)ctx, (void)state, (void)ptr; }

static gr_result_t none_generate(gr_ctx_t ctx, void *state, void *ptr, gr_dtype_t t, gr_gen_t g, uint64_t seed,
                                 uint64_t begin, uint64_t count)
{
    (void)ctx, (void)state, (void)ptr, (void)t, (void)g, (void)seed, (void)begin, (void)count;
    return not_built();
}

static gr_result_t none_reduce(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                               const gr_desc_t *d, gr_partial_t *out)
{
    (void)ctx, (void)state, (void)ptr, (void)on_device, (void)count, (void)d, (void)out;
    return not_built();
}

static gr_result_t none_stats(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count,
                              gr_dtype_t t, struct gr_stats_part *out)
{
    (void)ctx, (void)state, (void)ptr, (void)on_device, (void)count, (void)t, (void)out;
    return not_built();
}

const gr_backend_ops_t gr_backend_cuda_ops = {
    "cuda", 0, none_init, none_fini, none_alloc, none_free, none_generate, none_reduce,
    NULL, NULL, NULL, /* no non-blocking form, no delivery: as the cpu backend */
    none_stats, NULL, NULL, /* no device memory: as the cpu backend */
    &gr_stream_generic_ops,
    NULL, NULL, /* no ordered device results */
};

int gr_cuda_device_count(void) { return 0; }

int gr_cuda_current_device(void) { return -1; }

int gr_cuda_list_gpus(gr_gpu_info_t *gpus, int max)
{
    (void)gpus;
    (void)max;
    return 0;
}
