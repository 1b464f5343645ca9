#!/bin/bash
# compile_sm75.sh - the kernels build for sm_75 (Turing), the oldest GPU issue 3 names:
# every kernels/*.cu (the product's kernels) and bench/kernels/*.cu (the bench's ladder and copy), the CUB
# baseline and the read-floor probe, compiled (not linked, not run: no such GPU here)
# with the product's warnings as errors. Catches PTX that needs a newer target (an
# L2 cache hint, cp.async, ...) outside its __CUDA_ARCH__ guard. Label arch.
set -uo pipefail
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "SKIP: no nvcc ($NVCC)"; exit 77; }
S=${GR_SRC:?}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
compile() { # compile FILE [extra flags]: one object, its log kept on failure
    local f=$1
    shift
    local o
    o=$OUT/$(basename "$f").o
    if "$NVCC" -std=c++17 -arch=sm_75 -O3 $INC -I"$S/tests/bench" "$@" -c "$f" -o "$o" \
        >"$o.log" 2>&1; then
        echo "ok    $f"
    else
        echo "FAIL  $f"
        sed 's/^/      /' "$o.log" | head -20
        return 1
    fi
}
export -f compile
INC="-I$S/include -I$S/kernels -I$S/kernels/tuning -I$S/bench/kernels -I$S/src/core -I$S/src/io -I$S/src/topo -I$S/src/backend/cpu -I$S/src/backend/cuda"
export NVCC S OUT INC
JOBS=$(nproc 2>/dev/null || echo 2)
[ "$JOBS" -gt 4 ] && JOBS=4
rc=0
files=("$S"/kernels/*.cu "$S"/bench/kernels/*.cu "$S"/tests/bench/read_floor.cu)
printf '%s\n' "${files[@]}" |
    xargs -P "$JOBS" -I{} bash -c 'compile "$1" --Werror=all-warnings' _ {} || rc=1
compile "$S/bench/cub_baseline.cu" || rc=1
n=$(ls "$OUT"/*.o 2>/dev/null | wc -l)
echo "sm_75: $n objects compiled"
[ $rc -eq 0 ] && [ "$n" -eq $((${#files[@]} + 1)) ] || { echo "FAIL: not every source compiled for sm_75"; exit 1; }
