# jobs/: plotting and the ncu stall summary (label jobs). The Slurm job scripts are tested in slurm.cmake.
gr_add_script_test(jobs_plot ${GR_TEST_DIR}/jobs/test_plot.sh LABELS jobs TIMEOUT 180)
gr_add_script_test(jobs_ncu_stalls ${GR_TEST_DIR}/jobs/test_ncu_stalls.sh LABELS jobs TIMEOUT 60)
