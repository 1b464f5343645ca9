/* binding.c - choose this rank's GPU (first version: local rank order). */
#define _GNU_SOURCE
#include "gr_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

gr_result_t gr_bind_rank_to_gpu(gr_ctx_t ctx, int want_gpu)
{
    gr_placement_t *pl = &ctx->placement;
    memset(pl, 0, sizeof(*pl));
    MPI_Comm node;
    GR_MPI_CHECK(MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &ctx->local_rank);
    MPI_Comm_size(node, &ctx->local_size);
    MPI_Comm_free(&node);
    pl->rank = ctx->rank;
    pl->local_rank = ctx->local_rank;
    pl->local_size = ctx->local_size;
    pl->pid = (int)getpid();
    snprintf(pl->host, sizeof(pl->host), "%s", ctx->host);
    pl->gpu = -1;
    pl->numa = -1;
    snprintf(pl->bound, sizeof(pl->bound), "nothing");
    if (!want_gpu) {
        snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "none (cpu backend)");
        return GR_SUCCESS;
    }
    gr_gpu_info_t gpus[64];
    int n = gr_cuda_list_gpus(gpus, 64);
    if (n <= 0)
        GR_FAIL(GR_ERR_NO_GPU, "no CUDA GPU visible on host %s; use --backend cpu", ctx->host);
    if (ctx->local_size > n && !ctx->cfg.share_gpus)
        GR_FAIL(GR_ERR_TOO_MANY_RANKS,
                "host %s runs %d ranks but has %d GPU(s); start at most %d ranks per node or pass --share-gpus",
                ctx->host, ctx->local_size, n, n);
    int g = ctx->local_rank % n;
    ctx->device = g;
    pl->gpu = g;
    snprintf(pl->gpu_name, sizeof(pl->gpu_name), "%s", gpus[g].name);
    snprintf(pl->pci_bus_id, sizeof(pl->pci_bus_id), "%s", gpus[g].pci_bus_id);
    snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "local rank %d of %d", ctx->local_rank, ctx->local_size);
    snprintf(ctx->gpu_name, sizeof(ctx->gpu_name), "%s", gpus[g].name);
    snprintf(ctx->pci_bus_id, sizeof(ctx->pci_bus_id), "%s", gpus[g].pci_bus_id);
    gr_log_set_gpu(g);
    return GR_SUCCESS;
}
