# lib.sh - helpers for CLI test scripts: run, expect exit codes and text.
# Environment from CTest: GPUREDUCE (binary), MPIRUN (mpirun with flags).
set -u
FAILS=0
CHECKS=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run NP ARGS...: runs gpureduce under mpirun; sets RC, OUT (stdout), ERR (stderr)
run() {
    local np=$1
    shift
    if [ "$np" = 1 ] && [ -z "${GR_TEST_NO_SINGLETON:-}" ]; then
        # an MPI singleton: the same program without mpirun's start-up and
        # its ~2 s wait after a non-zero exit
        timeout 120 "$GPUREDUCE" "$@" >"$TMP/out" 2>"$TMP/err"
    else
        timeout 120 $MPIRUN -np "$np" "$GPUREDUCE" "$@" >"$TMP/out" 2>"$TMP/err"
    fi
    RC=$?
    OUT=$(cat "$TMP/out")
    ERR=$(cat "$TMP/err")
}

fail() {
    echo "FAIL: $*"
    echo "  --- stdout ---"
    sed 's/^/  /' "$TMP/out" | head -40
    echo "  --- stderr ---"
    sed 's/^/  /' "$TMP/err" | head -40
    FAILS=$((FAILS + 1))
}

# expect_rc WANT DESCRIPTION
expect_rc() {
    CHECKS=$((CHECKS + 1))
    if [ "$RC" -ne "$1" ]; then fail "$2: exit status $RC, expected $1"; fi
}

# expect_nonzero DESCRIPTION
expect_nonzero() {
    CHECKS=$((CHECKS + 1))
    if [ "$RC" -eq 0 ]; then fail "$1: exit status 0, expected non-zero"; fi
}

# expect_err REGEX DESCRIPTION: stderr matches
expect_err() {
    CHECKS=$((CHECKS + 1))
    if ! grep -Eq -- "$1" "$TMP/err"; then fail "$2: stderr does not match /$1/"; fi
}

# expect_out REGEX DESCRIPTION: stdout matches
expect_out() {
    CHECKS=$((CHECKS + 1))
    if ! grep -Eq -- "$1" "$TMP/out"; then fail "$2: stdout does not match /$1/"; fi
}

# expect_no_result DESCRIPTION: nothing that looks like a result was printed
expect_no_result() {
    CHECKS=$((CHECKS + 1))
    if grep -Eq '^result|"result"' "$TMP/out"; then fail "$1: a result was printed"; fi
}

# expect_eq A B DESCRIPTION
expect_eq() {
    CHECKS=$((CHECKS + 1))
    if [ "$1" != "$2" ]; then fail "$3: '$1' != '$2'"; fi
}

# json_get EXPR: evaluates a Python expression on the JSON document in OUT (as d)
json_get() {
    python3 -c "import json,sys; d=json.load(open('$TMP/out')); print($1)"
}

finish() {
    echo "$CHECKS checks, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}
