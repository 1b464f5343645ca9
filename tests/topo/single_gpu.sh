#!/bin/bash
# One visible GPU per rank (CUDA_VISIBLE_DEVICES per rank, Slurm
# --gpus-per-task=1): each rank uses the GPU it sees, whatever its local rank.
. "$(dirname "$0")/lib.sh"
P=$TOPO_PROBE
W="$TOPO_DIR/with_rank_env.sh"
export GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml"

# The launcher hands rank 0 a GPU of socket 1 and rank 1 one of socket 0.
run per_task $MPIRUN -np 2 "$W" GR_FAKE_GPUS=0000:b7:00.0/0000:07:00.0 -- "$P" \
    --expect-gpu 0 --expect-pci 0000:b7:00.0,0000:07:00.0 --expect-numa 1,0 \
    --expect-cpuset "$DGX8_S1/$DGX8_S0" --expect-choice "the only GPU this rank sees"
expect_rc0 per_task

# 4 ranks, each with its own GPU, listed against PCI order.
run per_task4 $MPIRUN -np 4 "$W" GR_FAKE_GPUS=0000:bd:00.0/0000:90:00.0/0000:4e:00.0/0000:0f:00.0 -- "$P" \
    --expect-gpu 0 --expect-pci 0000:bd:00.0,0000:90:00.0,0000:4e:00.0,0000:0f:00.0 --expect-numa 1,1,0,0
expect_rc0 per_task4

# Two ranks see the same single GPU: more ranks than GPUs ...
run same_gpu $MPIRUN -np 2 "$W" GR_FAKE_GPUS=0000:47:00.0 -- "$P"
expect_rc_nonzero same_gpu
expect_in "$ERR" "host $HOST runs 2 ranks but has 1 GPU(s)" same_gpu

# ... unless --share-gpus.
run same_gpu_share $MPIRUN -np 2 "$W" GR_FAKE_GPUS=0000:47:00.0 -- "$P" --share-gpus \
    --expect-gpu 0 --expect-pci 0000:47:00.0 --expect-numa 0 --expect-cpuset "$DGX8_S0" \
    --expect-choice "shared by 2 ranks (--share-gpus)"
expect_rc0 same_gpu_share

# Rank 0 sees two GPUs, rank 1 only one of them: rank 1 keeps its only GPU,
# rank 0 takes the other (its CUDA ordinal 1).
run uneven $MPIRUN -np 2 "$W" GR_FAKE_GPUS=0000:07:00.0,0000:0f:00.0/0000:07:00.0 -- "$P" \
    --expect-gpu 1,0 --expect-pci 0000:0f:00.0,0000:07:00.0 --expect-choice "PCI bus order|the only GPU this rank sees"
expect_rc0 uneven

finish
