# CLI: bad input and output formats (label cli).
gr_add_script_test(cli_errors ${GR_TEST_DIR}/cli/test_cli_errors.sh LABELS cli TIMEOUT 600)
gr_add_script_test(cli_output ${GR_TEST_DIR}/cli/test_cli_output.sh LABELS cli TIMEOUT 600)
gr_add_script_test(cli_vec ${GR_TEST_DIR}/cli/test_cli_vec.sh LABELS cli TIMEOUT 600)
