# Multi-node (label multinode): two hosts emulated on one
# machine with UTS namespaces (unshare --uts: host names n0 and n1), so the
# paths that differ across nodes run for real: node-local ranks and GPUs per
# host, the placement report over hosts, tcp between hosts, MPI-IO across
# hosts, failures on one host. Skip (77) where namespaces are not allowed.
# Serial: they start their own daemons and each runs up to 4 ranks. Not in
# the mpi label, so the sanitizer pass of CI does not run them twice (the
# code they reach runs there through the mpi and cli tests; combine_cost_np3
# is in mpi).
set(GR_MN_DIR ${GR_TEST_DIR}/multinode)
# combine_cost: the combine's cost per call (docs/MULTINODE.md's model) and a
# check that the combined exact partial equals a serial merge; timings printed only
gr_test_exe(combine_cost SOURCES ${GR_MN_DIR}/combine_cost.c)
gr_add_mpi_test(combine_cost_np3 NP 3 COMMAND $<TARGET_FILE:combine_cost> 50 LABELS "multinode;mpi" TIMEOUT 60)
gr_add_script_test(multinode_mpirun ${GR_MN_DIR}/mpirun_two_hosts.sh
  ARGS $<TARGET_FILE:mpi_bits> $<TARGET_FILE:mpi_all_ranks> $<TARGET_FILE:mpi_rank_failure>
       $<TARGET_FILE:combine_cost>
  LABELS multinode TIMEOUT 240)
gr_add_script_test(multinode_mpirun_failure ${GR_MN_DIR}/mpirun_failure.sh
  LABELS multinode TIMEOUT 180)
set_tests_properties(multinode_mpirun multinode_mpirun_failure PROPERTIES RUN_SERIAL TRUE)
# Slurm with two nodes: one slurmctld, slurmd n0 and n1 in their own UTS
# namespaces; jobs/*.sbatch with -N 2. Skips (77) without the Slurm packages
# or namespaces; starts and always stops its own daemons.
gr_add_script_test(slurm_two_nodes ${GR_TEST_DIR}/slurm/run_slurm_two_nodes.sh
  LABELS "multinode;slurm" TIMEOUT 300)
set_tests_properties(slurm_two_nodes PROPERTIES RUN_SERIAL TRUE)
# The cuda backend on two emulated hosts, one GPU each (label gpu: skips
# without a GPU). GR_MN_BACKEND=cpu runs it without one, to test the script.
gr_add_script_test(gpu_two_hosts ${GR_MN_DIR}/gpu_two_hosts.sh LABELS "gpu;multinode" TIMEOUT 300)
set_tests_properties(gpu_two_hosts PROPERTIES RUN_SERIAL TRUE)
