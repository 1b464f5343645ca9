/* env.c - the registry of environment variables (see gr_env.h). The only
 * file of the library and the CLI that calls getenv(). */
#include "gr_env.h"

#include <stdlib.h>
#include <string.h>

static const gr_env_var_t g_vars[GR_ENV_COUNT] = {
    [GR_ENV_DEBUG] = {"GR_DEBUG", "warn", "log level: error, warn, info, debug", 1},
    [GR_ENV_DEBUG_SUBSYS] = {"GR_DEBUG_SUBSYS", "all",
                             "comma list of subsystems to log: init, bind, cuda, cpu, mpi, io, bench, all", 1},
    [GR_ENV_TOPOLOGY_XML] = {"GR_TOPOLOGY_XML", "the real machine",
                             "plan placement on this hwloc XML topology instead of the machine's (tests, what-if)", 1},
    [GR_ENV_FAKE_GPUS] = {"GR_FAKE_GPUS", "CUDA's GPUs",
                          "comma list of PCI bus ids taken as the node's GPUs, for placement only (never runs CUDA)", 1},
    [GR_ENV_FAKE_LAUNCHER_CPUSET] = {"GR_FAKE_LAUNCHER_CPUSET", "the process's real CPU mask",
                                     "with GR_TOPOLOGY_XML: the launcher's CPU binding, one hwloc list or one per "
                                     "local rank separated by '/'", 1},
    [GR_ENV_INPUT_STREAM] = {"GR_INPUT_STREAM", "the backend's own",
                             "generic: read --input through the host-side generic stream even on the cuda backend",
                             1},
    [GR_ENV_BENCH_HOLD] = {"GR_BENCH_HOLD", "1 (on)",
                           "bench: 0 turns off the hold kernel that keeps the stream waiting while timed "
                           "launches are queued (for tools that serialize launches, like ncu)", 1},
    [GR_ENV_BENCH_STATS_BLOCK] = {"GR_BENCH_STATS_BLOCK", "the tuned block",
                                  "bench: force the stats kernel's block size", 1},
    [GR_ENV_BENCH_VEC_VPT] = {"GR_BENCH_VEC_VPT", "unset (the backend's grid)",
                              "bench: the vector rows (dot, dot-exact, argmax, batch2) with at most one block per "
                              "256 V 16-byte vectors, V = the value (tuning the small-n grid)", 1},
    [GR_ENV_PROGRESS] = {"GR_PROGRESS", "auto (by isatty(stderr))",
                         "CLI progress on stderr: off (0, no), tty (redraw one line in place), log (plain lines)",
                         1},
    [GR_ENV_PROGRESS_AFTER] = {"GR_PROGRESS_AFTER", "0.5 on a terminal, 5 elsewhere",
                               "CLI progress: seconds a phase runs before its first line (0: every phase)", 1},
    [GR_ENV_CPU_ISA] = {"GR_CPU_ISA", "auto (the best level the CPU has)",
                        "cpu backend: the instruction-set level of its loops: baseline (SSE2 on x86-64), avx2, "
                        "avx512; a level the CPU lacks gives the best one below it. Every level gives the same "
                        "bits", 1},
    [GR_ENV_CUDA_PDL] = {"GR_CUDA_PDL", "1 (on)",
                         "cuda backend: 0 launches the batched dot kernels without programmatic dependent launch "
                         "(they then start only once the stream's previous kernel has ended; the same bits)", 1},
    [GR_ENV_CUDA_VISIBLE_DEVICES] = {"CUDA_VISIBLE_DEVICES", "all GPUs", "the GPUs CUDA shows this process", 0},
    [GR_ENV_OMPI_COMM_WORLD_LOCAL_RANK] = {"OMPI_COMM_WORLD_LOCAL_RANK", "unset",
                                           "Open MPI: the node-local rank (first choice for the local rank)", 0},
    [GR_ENV_OMPI_COMM_WORLD_LOCAL_SIZE] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "unset", "Open MPI: ranks on this node", 0},
    [GR_ENV_MPI_LOCALRANKID] = {"MPI_LOCALRANKID", "unset", "MPICH/Intel MPI: the node-local rank", 0},
    [GR_ENV_MPI_LOCALNRANKS] = {"MPI_LOCALNRANKS", "unset", "MPICH/Intel MPI: ranks on this node", 0},
    [GR_ENV_SLURM_LOCALID] = {"SLURM_LOCALID", "unset", "Slurm (srun): the node-local task id", 0},
    [GR_ENV_NCCL_NVLS_ENABLE] = {"NCCL_NVLS_ENABLE", "0 when the bench sets it",
                                 "NCCL: NVLink SHARP; the bench's cub+nccl row turns it off unless set", 0},
};

const char *gr_env(gr_env_id_t id)
{
    if ((unsigned)id >= GR_ENV_COUNT)
        return NULL;
    const char *v = getenv(g_vars[id].name);
    return (v && *v) ? v : NULL;
}

int gr_env_lookup(const char *name)
{
    for (int i = 0; i < GR_ENV_COUNT; ++i)
        if (name && !strcmp(name, g_vars[i].name))
            return i;
    return -1;
}

int gr_env_count(void) { return GR_ENV_COUNT; }

const gr_env_info_t *gr_env_info(int i) { return i >= 0 && i < GR_ENV_COUNT ? &g_vars[i] : NULL; }

const char *gr_env_value(const char *name)
{
    int id = gr_env_lookup(name);
    return id < 0 ? NULL : gr_env((gr_env_id_t)id);
}
