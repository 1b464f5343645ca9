#!/bin/bash
# GR_DEBUG=info logs every binding decision; the default level logs none.
. "$(dirname "$0")/lib.sh"
P=$TOPO_PROBE
export GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=$DGX8_GPUS

run info env GR_DEBUG=info $MPIRUN -np 2 "$P"
expect_rc0 info
expect_in "$ERR" "[rank 0 host $HOST]" info
expect_in "$ERR" "local rank 0 of 2 on host $HOST (from OMPI_COMM_WORLD_LOCAL_RANK)" info
expect_in "$ERR" "topology: $TOPO_DIR/dgx8.xml" info
expect_in "$ERR" "8 GPU(s) from GR_FAKE_GPUS" info
expect_in "$ERR" "GPU 4 0000:87:00.0: local to Package L#1, cores $DGX8_S1, NUMA 1" info
expect_in "$ERR" "launcher CPU mask 0-31 (the whole machine)" info
expect_in "$ERR" "GPU 1 (0000:0f:00.0, GH100 [H100 SXM5 80GB] (fake)): local rank 1 of 2" info
expect_in "$ERR" "bound: cpu+mem by gpureduce (--bind gpu), simulated (GR_TOPOLOGY_XML); cores $DGX8_S0, NUMA 0" info

run subsys env GR_DEBUG=info GR_DEBUG_SUBSYS=bind GR_FAKE_LAUNCHER_CPUSET=8/0 $MPIRUN -np 2 "$P"
expect_rc0 subsys
expect_in "$ERR" "launcher CPU mask 8 from GR_FAKE_LAUNCHER_CPUSET (narrower than the machine" subsys
expect_in "$ERR" "nearest free GPU to the launcher's cores" subsys

run quiet $MPIRUN -np 2 "$P"
expect_rc0 quiet
expect_not_in "$ERR" "binding.c" quiet

# The launcher's core is far from the only free GPU: a warning, not an error.
run far env GR_FAKE_LAUNCHER_CPUSET=0/1 GR_FAKE_GPUS=0000:07:00.0,0000:87:00.0 $MPIRUN -np 2 "$P" \
    --expect-gpu 0,1 --expect-cpuset 0/1 --expect-bound "cpu by launcher, mem by gpureduce|cpu by launcher (--bind gpu: GPU's cores are outside the launcher mask)" \
    --expect-choice "nearest free GPU|no free GPU near the launcher's cores"
expect_rc0 far
expect_in "$ERR" "warn: GPU 1 (0000:87:00.0) is local to cores $DGX8_S1, none of which the launcher's mask 1 allows" far

finish
