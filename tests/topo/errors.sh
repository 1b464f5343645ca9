#!/bin/bash
# Error paths of the binding: non-zero exit, one clear line naming the host,
# the counts and what to do.
. "$(dirname "$0")/lib.sh"
P=$TOPO_PROBE

run too_many env GR_TOPOLOGY_XML="$TOPO_DIR/small2.xml" GR_FAKE_GPUS=$SMALL2_GPUS $MPIRUN -np 4 "$P"
expect_rc_nonzero too_many
expect_in "$ERR" "host $HOST runs 4 ranks but has 2 GPU(s)" too_many
expect_in "$ERR" "--share-gpus" too_many
expect_in "$ERR" "start at most 2 rank(s) per node" too_many
expect_count "$ERR" "runs 4 ranks but has" 1 too_many   # one line per node, not per rank

run share env GR_TOPOLOGY_XML="$TOPO_DIR/small2.xml" GR_FAKE_GPUS=$SMALL2_GPUS $MPIRUN -np 4 "$P" --share-gpus
expect_rc0 share
expect_not_in "$ERR" ": error: " share

run h200_three env GR_TOPOLOGY_XML="$TOPO_DIR/h200pair.xml" GR_FAKE_GPUS=$H200_GPUS $MPIRUN -np 3 "$P"
expect_rc_nonzero h200_three
expect_in "$ERR" "host $HOST runs 3 ranks but has 2 GPU(s)" h200_three

run xml_missing env GR_TOPOLOGY_XML="$TOPO_DIR/no-such-file.xml" GR_FAKE_GPUS=$DGX8_GPUS $MPIRUN -np 2 "$P"
expect_rc_nonzero xml_missing
expect_in "$ERR" "GR_TOPOLOGY_XML=$TOPO_DIR/no-such-file.xml cannot be read on host $HOST" xml_missing

run xml_broken env GR_TOPOLOGY_XML="$TOPO_DIR/broken.xml" GR_FAKE_GPUS=$DGX8_GPUS $MPIRUN -np 1 "$P"
expect_rc_nonzero xml_broken
expect_in "$ERR" "GR_TOPOLOGY_XML=$TOPO_DIR/broken.xml is not an hwloc XML topology" xml_broken

run busid env GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=0000:07:00.0,0000:99:00.0 $MPIRUN -np 2 "$P"
expect_rc_nonzero busid
expect_in "$ERR" "GR_FAKE_GPUS: PCI device 0000:99:00.0 is not in the topology of $TOPO_DIR/dgx8.xml" busid

run syntax env GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=0000:07:00.0,gpu1 $MPIRUN -np 1 "$P"
expect_rc_nonzero syntax
expect_in "$ERR" "'gpu1' is not a PCI bus id" syntax

run dup env GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=0000:07:00.0,07:00.0 $MPIRUN -np 1 "$P"
expect_rc_nonzero dup
expect_in "$ERR" "lists 07:00.0 twice" dup

# Fake GPUs on the real machine's topology: bus ids of another machine.
run real_topo env GR_FAKE_GPUS=0000:e7:1f.7 $MPIRUN -np 1 "$P"
expect_rc_nonzero real_topo
expect_in "$ERR" "PCI device 0000:e7:1f.7 is not in the topology of this machine" real_topo

run launcher_bad env GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=$DGX8_GPUS \
    GR_FAKE_LAUNCHER_CPUSET=0/1 $MPIRUN -np 3 "$P"
expect_rc_nonzero launcher_bad
expect_in "$ERR" "GR_FAKE_LAUNCHER_CPUSET=0/1 has 2 mask(s) but this is local rank 2" launcher_bad

# Fake GPUs only plan placement: the cuda backend is refused.
run fake_cuda env GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=$DGX8_GPUS $MPIRUN -np 1 "$P" --backend cuda
expect_rc_nonzero fake_cuda
expect_in "$ERR" "GR_FAKE_GPUS" fake_cuda

finish
