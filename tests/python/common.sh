# common.sh - sourced by the Python tests' scripts (tests/python/*.sh).

# python_needs MODULE...: exit 77 (SKIP) in a sanitizer build (its library
# cannot be loaded into an uninstrumented python) and when $GR_PYTHON cannot
# import every MODULE.
python_needs() {
    if grep -q '^GR_SANITIZE:[A-Z]*=.' "$GR_BUILD/CMakeCache.txt"; then
        echo "SKIP: a sanitizer build's library cannot be loaded into an uninstrumented python"
        exit 77
    fi
    local mods
    mods=$(IFS=,; echo "$*")
    if ! "$GR_PYTHON" -c "import $mods" 2> /dev/null; then
        echo "SKIP: $GR_PYTHON cannot import $mods (bash jobs/install-deps.sh --with-test-deps installs them)"
        exit 77
    fi
}
