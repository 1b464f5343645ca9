# lib.sh - helpers for the topo test scripts (sourced).
# Environment from CTest: MPIRUN, GPUREDUCE, TOPO_PROBE, TOPO_DIR.
set -u

: "${MPIRUN:?MPIRUN is set by CTest}"
: "${TOPO_DIR:?TOPO_DIR is set by CTest}"

TOPO_TMP=$(mktemp -d)
trap 'rm -rf "$TOPO_TMP"' EXIT
TOPO_FAILS=0
HOST=$(hostname)

# Fixture bus ids (tests/topo/gen_fixtures.py), PCI order.
DGX8_GPUS=0000:07:00.0,0000:0f:00.0,0000:47:00.0,0000:4e:00.0,0000:87:00.0,0000:90:00.0,0000:b7:00.0,0000:bd:00.0
SMALL2_GPUS=0000:3b:00.0,0000:d8:00.0
H200_GPUS=0000:18:00.0,0000:2a:00.0
DGX8_S0=0-7,16-23
DGX8_S1=8-15,24-31

fail() { echo "FAIL: $*" >&2; TOPO_FAILS=$((TOPO_FAILS + 1)); }
note() { echo "--- $*"; }

# run NAME CMD...: runs CMD, keeps stdout/stderr in $TOPO_TMP/NAME.{out,err}, sets RC.
run() {
    local name=$1; shift
    note "$name: $*"
    "$@" >"$TOPO_TMP/$name.out" 2>"$TOPO_TMP/$name.err"
    RC=$?
    OUT="$TOPO_TMP/$name.out"
    ERR="$TOPO_TMP/$name.err"
    return 0
}

show() { sed 's/^/    out| /' "$OUT"; sed 's/^/    err| /' "$ERR"; }

expect_rc0() { [ "$RC" -eq 0 ] || { fail "$1: exit status $RC, expected 0"; show; }; }
expect_rc_nonzero() { [ "$RC" -ne 0 ] || { fail "$1: exit status 0, expected non-zero"; show; }; }
# expect_in FILE TEXT LABEL: fixed-string TEXT must occur in FILE.
expect_in() { grep -qF -- "$2" "$1" || { fail "$3: no \"$2\" in $(basename "$1")"; show; }; }
expect_not_in() { ! grep -qF -- "$2" "$1" || { fail "$3: unexpected \"$2\" in $(basename "$1")"; show; }; }
# expect_count FILE TEXT N LABEL
expect_count() {
    local n; n=$(grep -cF -- "$2" "$1")
    [ "$n" -eq "$3" ] || { fail "$4: \"$2\" occurs $n time(s), expected $3"; show; }
}

finish() {
    if [ "$TOPO_FAILS" -ne 0 ]; then
        echo "$TOPO_FAILS check(s) failed" >&2
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
