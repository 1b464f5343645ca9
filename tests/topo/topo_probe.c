/*
 * topo_probe - create a context on MPI_COMM_WORLD and check every rank's
 * placement (gr_ctx_placement) against expectations. The topology tests run
 * it under mpirun with GR_TOPOLOGY_XML / GR_FAKE_GPUS / GR_FAKE_LAUNCHER_CPUSET,
 * so binding is tested without GPUs and without the CLI.
 *
 *   topo_probe [--bind gpu|launcher|none] [--share-gpus] [--backend auto|cpu|cuda]
 *              [--expect-gpu 0,1,..] [--expect-pci 0000:07:00.0,..]
 *              [--expect-cpuset 0-7,16-23/8-15,24-31/..] [--expect-numa 0,1,..]
 *              [--expect-local-rank 0,1,..] [--expect-bound TEXT] [--expect-choice TEXT]
 *              [--expect-error GR_ERR_...] [--check-affinity] [--quiet]
 *
 * List options hold one value per rank in rank order, or one value for all
 * ranks; --expect-cpuset separates ranks with '/' because CPU lists contain
 * commas. --expect-bound and --expect-choice are substrings each rank's
 * `bound` / `gpu_choice` must contain, one for all ranks or one per rank
 * separated by '|'. --check-affinity compares each rank's
 * reported cpuset with the CPU mask the process really has (hwloc_get_cpubind).
 * Rank 0 prints one line per rank. Exit 0 when every expectation holds.
 */
#include "test.h"

#include "gpureduce.h"

#include <hwloc.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_rec {
    gr_placement_t pl;
    char actual_cpuset[512];
} probe_rec_t;

/* The idx-th field of a sep-separated list into out; a list of one field
 * holds for every idx. 0 when there is no such field. */
static int list_field(const char *list, char sep, int idx, char *out, size_t len)
{
    int n = 1;
    for (const char *p = list; *p; ++p)
        n += *p == sep;
    if (n == 1)
        idx = 0;
    if (idx >= n)
        return 0;
    const char *p = list;
    for (int i = 0; i < idx; ++i)
        p = strchr(p, sep) + 1;
    const char *e = strchr(p, sep);
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l >= len)
        l = len - 1;
    memcpy(out, p, l);
    out[l] = '\0';
    return 1;
}

static int result_by_name(const char *name, gr_result_t *out)
{
    static const struct {
        const char *name;
        gr_result_t r;
    } names[] = {
#define GR_PROBE_NAME_(n, v, m) {#n, n},
        GR_RESULT_LIST(GR_PROBE_NAME_)
#undef GR_PROBE_NAME_
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
        if (!strcmp(names[i].name, name)) {
            *out = names[i].r;
            return 1;
        }
    return 0;
}

static int check_list(const char *what, const char *list, char sep, int rank, const char *got)
{
    char want[512];
    if (!list)
        return 0;
    if (!list_field(list, sep, rank, want, sizeof(want))) {
        fprintf(stderr, "FAIL rank %d: --expect-%s has no value for this rank\n", rank, what);
        return 1;
    }
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "FAIL rank %d: %s is \"%s\", expected \"%s\"\n", rank, what, got, want);
        return 1;
    }
    return 0;
}

/* want (the rank's field of a '|' list) must occur in got. */
static int check_substr(const char *what, const char *list, int rank, const char *got)
{
    char want[512];
    if (!list)
        return 0;
    if (!list_field(list, '|', rank, want, sizeof(want))) {
        fprintf(stderr, "FAIL rank %d: --expect-%s has no value for this rank\n", rank, what);
        return 1;
    }
    if (!strstr(got, want)) {
        fprintf(stderr, "FAIL rank %d: %s \"%s\" lacks \"%s\"\n", rank, what, got, want);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.bind = GR_BIND_GPU; /* the CLI's default, which these tests check (the library's is none) */
    const char *e_gpu = NULL, *e_pci = NULL, *e_cpuset = NULL, *e_numa = NULL, *e_lr = NULL;
    const char *e_bound = NULL, *e_choice = NULL, *e_error = NULL;
    int check_affinity = 0, quiet = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT_(name, var) else if (!strcmp(a, name) && v) { var = v; ++i; }
        if (!strcmp(a, "--share-gpus"))
            cfg.share_gpus = 1;
        else if (!strcmp(a, "--check-affinity"))
            check_affinity = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--bind") && v) {
            cfg.bind = !strcmp(v, "gpu") ? GR_BIND_GPU : !strcmp(v, "launcher") ? GR_BIND_LAUNCHER : GR_BIND_NONE;
            ++i;
        } else if (!strcmp(a, "--backend") && v) {
            cfg.backend = !strcmp(v, "cuda") ? GR_BACKEND_CUDA : !strcmp(v, "cpu") ? GR_BACKEND_CPU : GR_BACKEND_AUTO;
            ++i;
        }
        OPT_("--expect-gpu", e_gpu)
        OPT_("--expect-pci", e_pci)
        OPT_("--expect-cpuset", e_cpuset)
        OPT_("--expect-numa", e_numa)
        OPT_("--expect-local-rank", e_lr)
        OPT_("--expect-bound", e_bound)
        OPT_("--expect-choice", e_choice)
        OPT_("--expect-error", e_error)
        else {
            if (rank == 0)
                fprintf(stderr, "topo_probe: unknown or incomplete option %s\n", a);
            MPI_Finalize();
            return 2;
        }
#undef OPT_
    }

    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
    int bad = 0;
    if (e_error) {
        gr_result_t want;
        if (!result_by_name(e_error, &want)) {
            fprintf(stderr, "topo_probe: unknown result name %s\n", e_error);
            bad = 1;
        } else if (r != want) {
            fprintf(stderr, "FAIL rank %d: gr_ctx_create returned %s (%d), expected %s\n", rank, gr_strerror(r),
                    (int)r, e_error);
            bad = 1;
        } else if (rank == 0) {
            printf("gr_ctx_create failed as expected: %s (%s)\n", e_error, gr_strerror(r));
        }
    } else if (r != GR_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: gr_ctx_create: %s\n", rank, gr_strerror(r));
        bad = 1;
    }

    if (r == GR_SUCCESS) {
        probe_rec_t mine;
        memset(&mine, 0, sizeof(mine));
        mine.pl = *gr_ctx_placement(ctx);
        if (check_affinity) {
            hwloc_topology_t topo;
            hwloc_bitmap_t set = hwloc_bitmap_alloc();
            hwloc_topology_init(&topo);
            hwloc_topology_load(topo);
            if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
                hwloc_bitmap_list_snprintf(mine.actual_cpuset, sizeof(mine.actual_cpuset), set);
            else
                snprintf(mine.actual_cpuset, sizeof(mine.actual_cpuset), "?");
            hwloc_bitmap_free(set);
            hwloc_topology_destroy(topo);
        }
        probe_rec_t *all = rank == 0 ? (probe_rec_t *)calloc((size_t)size, sizeof(probe_rec_t)) : NULL;
        MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < size; ++i) {
                const gr_placement_t *p = &all[i].pl;
                char num[32];
                if (!quiet)
                    printf("rank=%d local_rank=%d/%d gpu=%d pci=%s numa=%d cpuset=%s bound=[%s] choice=[%s] "
                           "name=[%s]%s%s\n", p->rank, p->local_rank, p->local_size, p->gpu,
                           p->pci_bus_id[0] ? p->pci_bus_id : "-", p->numa, p->cpuset, p->bound, p->gpu_choice,
                           p->gpu_name, check_affinity ? " actual=" : "", check_affinity ? all[i].actual_cpuset : "");
                if (p->rank != i) {
                    fprintf(stderr, "FAIL rank %d: placement says rank %d\n", i, p->rank);
                    bad = 1;
                }
                snprintf(num, sizeof(num), "%d", p->gpu);
                bad |= check_list("gpu", e_gpu, ',', i, num);
                bad |= check_list("pci", e_pci, ',', i, p->pci_bus_id);
                bad |= check_list("cpuset", e_cpuset, '/', i, p->cpuset);
                snprintf(num, sizeof(num), "%d", p->numa);
                bad |= check_list("numa", e_numa, ',', i, num);
                snprintf(num, sizeof(num), "%d", p->local_rank);
                bad |= check_list("local-rank", e_lr, ',', i, num);
                bad |= check_substr("bound", e_bound, i, p->bound);
                bad |= check_substr("choice", e_choice, i, p->gpu_choice);
                if (check_affinity && strcmp(all[i].actual_cpuset, p->cpuset) != 0) {
                    fprintf(stderr, "FAIL rank %d: reported cpuset %s but the process runs on %s\n", i, p->cpuset,
                            all[i].actual_cpuset);
                    bad = 1;
                }
            }
            fflush(stdout);
            free(all);
        }
        gr_ctx_destroy(ctx);
    }
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_bad ? 1 : 0;
}
