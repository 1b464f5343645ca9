# Slurm (label slurm): a real single-node Slurm from Debian's packages runs
# jobs/*.sbatch with the cpu backend, mpirun under salloc and srun --mpi=pmix.
# Skips (77) where the Slurm packages are not installed; CI installs them
# (jobs/install-deps.sh --with-test-deps). Serial: it starts its own daemons.
gr_add_script_test(slurm_jobs ${GR_TEST_DIR}/slurm/run_slurm_tests.sh LABELS slurm TIMEOUT 300)
set_tests_properties(slurm_jobs PROPERTIES RUN_SERIAL TRUE)
