#!/bin/bash
# with_rank_env.sh [-u VAR]... VAR=v0/v1/... [VAR=...]... -- CMD...
# Run CMD with VAR set to the value for this rank's OMPI_COMM_WORLD_RANK
# (one value for all ranks when the list has one entry), as a launcher
# would set a per-task variable (CUDA_VISIBLE_DEVICES, SLURM_LOCALID).
# -u VAR unsets VAR first (to hide a launcher variable).
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    if [ "$1" = "-u" ]; then
        unset "$2"
        shift 2
        continue
    fi
    var=${1%%=*}
    IFS=/ read -r -a vals <<<"${1#*=}"
    if [ ${#vals[@]} -eq 1 ]; then v=${vals[0]}; else v=${vals[$rank]:-}; fi
    export "$var=$v"
    shift
done
shift
exec "$@"
