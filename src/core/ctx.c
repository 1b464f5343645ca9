/* ctx.c - context lifecycle: MPI, backend choice, binding, agreement. */
#define _GNU_SOURCE
#include "gr_env.h"
#include "gr_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(GR_HAVE_MPI_EXT)
#include <mpi-ext.h>
#endif

/* Every rank learns the worst local result, so no rank goes on into a
 * collective that a failed peer will never enter. */
static gr_result_t agree(MPI_Comm comm, gr_result_t local)
{
    int mine = (int)local, worst = 0;
    int rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        GR_FAIL(GR_ERR_MPI, "MPI_Allreduce failed while ranks agreed on a result");
    if (local == GR_SUCCESS && worst != GR_SUCCESS)
        GR_INFO(GR_SUB_INIT, "another rank failed (%s); stopping too", gr_strerror((gr_result_t)worst));
    return local != GR_SUCCESS ? local : (gr_result_t)worst;
}

gr_result_t gr_agree(MPI_Comm comm, gr_result_t local) { return agree(comm, local); }

int gr_mpi_cuda_aware_compiled(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return 1;
#else
    return 0;
#endif
}

static gr_result_t choose_backend(gr_ctx_t ctx)
{
    int ngpu = gr_cuda_device_count();
    gr_backend_t want = ctx->cfg.backend;
    /* GR_FAKE_GPUS plans placement on GPUs that are not real: never run CUDA then */
    const char *fake = gr_env(GR_ENV_FAKE_GPUS);
    if (fake && *fake) {
        if (want == GR_BACKEND_CUDA)
            GR_FAIL(GR_ERR_INVALID_ARG, "--backend cuda with GR_FAKE_GPUS set: fake GPUs only plan placement; "
                                        "unset GR_FAKE_GPUS to run on real GPUs, or use --backend cpu");
        ngpu = 0;
    }
    if (want == GR_BACKEND_AUTO)
        want = (gr_backend_cuda_ops_ptr && ngpu > 0) ? GR_BACKEND_CUDA : GR_BACKEND_CPU;
    if (want == GR_BACKEND_CUDA) {
        if (!gr_backend_cuda_ops_ptr)
            GR_FAIL(GR_ERR_NOT_BUILT, "--backend cuda: this gpureduce was built without CUDA; "
                                      "rebuild with the CUDA toolkit or use --backend cpu");
        if (ngpu <= 0) {
            const char *cvd = gr_env(GR_ENV_CUDA_VISIBLE_DEVICES);
            GR_FAIL(GR_ERR_NO_GPU, "--backend cuda: no CUDA GPU is visible to this rank (CUDA_VISIBLE_DEVICES=%s); "
                                   "run on a GPU node, check the job's GPU request, or use --backend cpu",
                    cvd ? cvd : "unset");
        }
        ctx->ops = gr_backend_cuda_ops_ptr;
    } else {
        ctx->ops = &gr_backend_cpu_ops;
    }
    ctx->backend = want;
    GR_INFO(GR_SUB_INIT, "backend %s (requested %s, %d CUDA device(s) visible)", gr_backend_name(want),
            gr_backend_name(ctx->cfg.backend), ngpu);
    return GR_SUCCESS;
}

gr_result_t gr_ctx_create(MPI_Comm comm, const gr_config_t *cfg, gr_ctx_t *out)
{
    if (!out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ctx_create: out is NULL");
    *out = NULL;
    if (cfg && (cfg->size == 0 || cfg->size > sizeof(gr_config_t)))
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ctx_create: gr_config_t.size is %zu; fill the configuration with "
                                    "gr_config_init() before setting fields", cfg->size);
    if (cfg && cfg->size >= offsetof(gr_config_t, device) + sizeof(int) && cfg->device < GR_DEVICE_CURRENT)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ctx_create: gr_config_t.device %d is neither a CUDA ordinal, "
                                    "GR_DEVICE_AUTO nor GR_DEVICE_CURRENT", cfg->device);
    gr_ctx_t ctx = (gr_ctx_t)calloc(1, sizeof(*ctx));
    if (!ctx)
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate a context");
    gr_config_init(&ctx->cfg);
    if (cfg) /* an older, shorter gr_config_t keeps the defaults of the fields it lacks */
        memcpy(&ctx->cfg, cfg, cfg->size);
    ctx->cfg.size = sizeof(gr_config_t);
    ctx->comm = MPI_COMM_NULL;
    ctx->req_comm = MPI_COMM_NULL;
    ctx->partial_type = MPI_DATATYPE_NULL;
    ctx->partial_op = MPI_OP_NULL;
    ctx->vpartial_type = MPI_DATATYPE_NULL;
    ctx->vpartial_op = MPI_OP_NULL;
    ctx->device = -1;
    gr_result_t r = GR_SUCCESS;
    if (MPI_Comm_dup(comm, &ctx->comm) != MPI_SUCCESS) {
        free(ctx);
        GR_FAIL(GR_ERR_MPI, "MPI_Comm_dup failed; is MPI initialised?");
    }
    /* the non-blocking requests' combines, apart from the blocking collectives */
    if (MPI_Comm_dup(ctx->comm, &ctx->req_comm) != MPI_SUCCESS) {
        MPI_Comm_free(&ctx->comm);
        free(ctx);
        GR_FAIL(GR_ERR_MPI, "MPI_Comm_dup failed; is MPI initialised?");
    }
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    gr_log_set_rank(world_rank);
    snprintf(ctx->host, sizeof(ctx->host), "%s", gr_log_host());

    r = choose_backend(ctx);
    /* Binding is collective: every rank enters it whatever happened above. */
    gr_result_t rb = gr_bind_rank_to_gpu(ctx, r == GR_SUCCESS && ctx->backend == GR_BACKEND_CUDA);
    if (r == GR_SUCCESS)
        r = rb;
    if (r == GR_SUCCESS)
        r = ctx->ops->init(ctx, &ctx->bstate);
    if (r == GR_SUCCESS)
        r = gr_combine_setup(ctx);
    r = agree(ctx->comm, r);
    if (r != GR_SUCCESS) {
        if (ctx->bstate && ctx->ops)
            ctx->ops->fini(ctx, ctx->bstate);
        gr_combine_teardown(ctx);
        MPI_Comm_free(&ctx->req_comm);
        MPI_Comm_free(&ctx->comm);
        free(ctx);
        return r;
    }
    *out = ctx;
    return GR_SUCCESS;
}

gr_result_t gr_ctx_destroy(gr_ctx_t ctx)
{
    if (!ctx)
        return GR_SUCCESS;
    gr_requests_drain(ctx);
    if (ctx->ops && ctx->bstate)
        ctx->ops->fini(ctx, ctx->bstate);
    gr_combine_teardown(ctx);
    if (ctx->req_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->req_comm);
    if (ctx->comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->comm);
    free(ctx);
    return GR_SUCCESS;
}

gr_result_t gr_ctx_set_stream(gr_ctx_t ctx, gr_stream_t stream)
{
    if (!ctx)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_ctx_set_stream: ctx is NULL");
    ctx->cfg.stream = stream;
    return GR_SUCCESS;
}

gr_backend_t gr_ctx_backend(gr_ctx_t ctx) { return ctx->backend; }
int gr_ctx_device(gr_ctx_t ctx) { return ctx->device; }
const gr_placement_t *gr_ctx_placement(gr_ctx_t ctx) { return &ctx->placement; }

int gr_mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}
