# Progress on stderr and output lines that apply to the run (issue 26; label cli).
# cli_progress exits 77 (SKIP) for its terminal checks where no pseudo-terminal works.
gr_add_script_test(cli_progress ${GR_TEST_DIR}/cli/test_progress.sh LABELS cli TIMEOUT 300)
gr_add_script_test(cli_applies ${GR_TEST_DIR}/cli/test_cli_applies.sh LABELS cli TIMEOUT 300)
