# The registry of environment variables (src/core/env.c, docs/ENVIRONMENT.md).
gr_add_script_test(env_registry ${GR_TEST_DIR}/env/test_env_registry.sh LABELS cli TIMEOUT 60)
