# gpureduce scale (labels mpi, cli): steps, formulas, formats, usage errors.
gr_add_script_test(scale_cli ${GR_TEST_DIR}/scale/test_scale.sh LABELS "mpi;cli" TIMEOUT 300)
