# jobs/: plotting (label jobs). The Slurm job scripts are tested in slurm.cmake.
gr_add_script_test(jobs_plot ${GR_TEST_DIR}/jobs/test_plot.sh LABELS jobs TIMEOUT 180)
