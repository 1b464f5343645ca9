/*
 * gr_env.h - the one registry of environment variables.
 *
 * Every variable gpureduce reads is listed in env.c with its default and
 * meaning, and read only through gr_env(); `gpureduce --help-env` prints the
 * table and docs/ENVIRONMENT.md lists it (a test checks both: no getenv()
 * outside env.c, every name documented).
 */
#ifndef GR_ENV_H
#define GR_ENV_H

#include "gpureduce.h"

typedef enum gr_env_id {
    /* ours */
    GR_ENV_DEBUG,
    GR_ENV_DEBUG_SUBSYS,
    GR_ENV_TOPOLOGY_XML,
    GR_ENV_FAKE_GPUS,
    GR_ENV_FAKE_LAUNCHER_CPUSET,
    GR_ENV_INPUT_STREAM,
    GR_ENV_BENCH_HOLD,
    GR_ENV_BENCH_STATS_BLOCK,
    GR_ENV_BENCH_VEC_VPT,
    GR_ENV_PROGRESS,
    GR_ENV_PROGRESS_AFTER,
    GR_ENV_CPU_ISA,
    GR_ENV_CUDA_PDL,
    /* set by others, read by us */
    GR_ENV_CUDA_VISIBLE_DEVICES,
    GR_ENV_OMPI_COMM_WORLD_LOCAL_RANK,
    GR_ENV_OMPI_COMM_WORLD_LOCAL_SIZE,
    GR_ENV_MPI_LOCALRANKID,
    GR_ENV_MPI_LOCALNRANKS,
    GR_ENV_SLURM_LOCALID,
    GR_ENV_NCCL_NVLS_ENABLE,
    GR_ENV_COUNT
} gr_env_id_t;

/* An entry: name, default, meaning, ours (the public gr_env_info_t; gr_env_info()
 * and gr_env_value() give the registry to the CLI and applications). */
typedef gr_env_info_t gr_env_var_t;

/* The value of a registered variable, or NULL when it is unset or empty. */
const char *gr_env(gr_env_id_t id);
/* The id of a registered name, or -1. */
int gr_env_lookup(const char *name);

#endif
