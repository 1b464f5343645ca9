# jobs/: plotting, the ncu stall summary and the A/B script's checks (label jobs). The Slurm job scripts are tested in slurm.cmake.
gr_add_script_test(jobs_plot ${GR_TEST_DIR}/jobs/test_plot.sh LABELS jobs TIMEOUT 180)
gr_add_script_test(jobs_ncu_stalls ${GR_TEST_DIR}/jobs/test_ncu_stalls.sh LABELS jobs TIMEOUT 60)
gr_add_script_test(jobs_h200_ab ${GR_TEST_DIR}/jobs/test_h200_ab.sh LABELS jobs TIMEOUT 120)
