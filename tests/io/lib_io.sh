# lib_io.sh - helpers for the io tests, on top of tests/cli/lib.sh.
# Environment from CTest: GPUREDUCE, MPIRUN, GR_OPEN_GUARD (the LD_PRELOAD shim).
. "$(dirname "$0")/../cli/lib.sh"
# -q: mpirun's own banner about a non-zero exit stays out of stderr, so the
# checks below can count the lines gpureduce itself printed.
MPIRUN="$MPIRUN -q"
IO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # tests/io, also when sourced from another folder
NPYW="python3 $IO_DIR/npyw.py"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0:verify_asan_link_order=0"

# expect_one_error REGEX DESCRIPTION: stderr is one line, from rank 0, matching REGEX
expect_one_error() {
    CHECKS=$((CHECKS + 1))
    local lines
    lines=$(grep -c . "$TMP/err")
    if [ "$lines" -ne 1 ]; then
        fail "$2: $lines lines on stderr, expected exactly 1"
    elif ! grep -Eq -- "^\[rank 0 .*$1" "$TMP/err"; then
        fail "$2: stderr is not one rank-0 line matching /$1/"
    fi
}

# result_hex / result_dec: fields of the table's result line
result_hex() { awk '$1 == "result" {print $3; exit}' "$TMP/out"; }
result_dec() { awk '$1 == "result" {print $2; exit}' "$TMP/out"; }

# expect_same_float HEX1 HEX2 DESCRIPTION: the same double (C %a vs Python hex)
expect_same_float() {
    CHECKS=$((CHECKS + 1))
    if ! python3 -c "import sys; a, b = float.fromhex('$1'), float.fromhex('$2'); sys.exit(0 if a.hex() == b.hex() else 1)" 2>/dev/null; then
        fail "$3: $1 != $2"
    fi
}

# json_field JSON KEY: a field of npyw.py's output
json_field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
