#!/bin/bash
# Node-local rank: from the launcher's variable when all ranks of the node
# agree on it, in the order OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
# SLURM_LOCALID; else MPI_Comm_split_type. Never the global rank.
. "$(dirname "$0")/lib.sh"
P=$TOPO_PROBE
W="$TOPO_DIR/with_rank_env.sh"
export GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=$DGX8_GPUS
HIDE_OMPI="-u OMPI_COMM_WORLD_LOCAL_RANK -u OMPI_COMM_WORLD_LOCAL_SIZE -u MPI_LOCALRANKID -u MPI_LOCALNRANKS"

run ompi $MPIRUN -np 4 "$P" --expect-local-rank 0,1,2,3 --expect-choice "(OMPI_COMM_WORLD_LOCAL_RANK)"
expect_rc0 ompi

# Slurm numbers the tasks of a node its own way: follow SLURM_LOCALID.
run slurm $MPIRUN -np 4 "$W" $HIDE_OMPI SLURM_LOCALID=3/2/1/0 -- "$P" \
    --expect-local-rank 3,2,1,0 --expect-gpu 3,2,1,0 --expect-pci 0000:4e:00.0,0000:47:00.0,0000:0f:00.0,0000:07:00.0 \
    --expect-choice "(SLURM_LOCALID)"
expect_rc0 slurm

# mpirun inside an sbatch script: every rank inherits SLURM_LOCALID=0. Not a
# permutation, so it is ignored in favour of MPI_Comm_split_type.
run stale $MPIRUN -np 4 "$W" $HIDE_OMPI SLURM_LOCALID=0 -- "$P" \
    --expect-local-rank 0,1,2,3 --expect-gpu 0,1,2,3 --expect-choice "(MPI_Comm_split_type)"
expect_rc0 stale

# MPICH's hydra variable wins over a (stale) Slurm one.
run hydra $MPIRUN -np 4 "$W" $HIDE_OMPI MPI_LOCALRANKID=1/0/3/2 MPI_LOCALNRANKS=4 SLURM_LOCALID=0 -- "$P" \
    --expect-local-rank 1,0,3,2 --expect-gpu 1,0,3,2 --expect-choice "(MPI_LOCALRANKID)"
expect_rc0 hydra

# A local size that disagrees with the node (a launcher that counted other
# ranks): ignored.
run bad_size $MPIRUN -np 2 "$W" $HIDE_OMPI MPI_LOCALRANKID=1/0 MPI_LOCALNRANKS=8 -- "$P" \
    --expect-local-rank 0,1 --expect-choice "(MPI_Comm_split_type)"
expect_rc0 bad_size

finish
