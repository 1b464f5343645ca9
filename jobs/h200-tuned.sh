#!/bin/bash
# h200-tuned.sh - one short call on the GPU machine (one H200, run as root)
# for issue 3's second round (the tuned kernel): the bench rows against their
# references, the GPU tests and compute-sanitizer, all inside DEADLINE seconds
# (default 180), logs under $OUT (./out when unset), one line per step in
# $OUT/summary.txt. Non-zero exit when any step failed.
#
#   bash jobs/h200-tuned.sh          (from the repository root, or anywhere)
#
# Building the CUDA sources takes minutes of a short lease, so the script uses
# a build tree made elsewhere when one travels with it: GR_PREBUILT=<dir
# relative to the root> (made by `cmake -S <root> -B <root>/<dir>` on a
# machine with the same CUDA, then `cmake --build <dir> --target
# gpureduce_cli test_cuda_backend`), GR_PREBUILT_ROOT=<the absolute root it
# was configured in> (its CTest files name that path; they are rewritten to
# this root). It is used only when its programs find every library here and
# start; otherwise the script configures and builds build-gpu itself.
#
# With the device tool, test the committed tree:
#   echo /.gpucheck/ >> .git/info/exclude
#   rm -rf .gpucheck && mkdir .gpucheck && git archive HEAD | tar -x -C .gpucheck
#   (optional) cmake -S $PWD/.gpucheck -B $PWD/.gpucheck/build-dev -DCMAKE_BUILD_TYPE=Release &&
#              cmake --build .gpucheck/build-dev --target gpureduce_cli test_cuda_backend
#   run: cd .gpucheck && GR_PREBUILT=build-dev GR_PREBUILT_ROOT=<that $PWD>/.gpucheck bash jobs/h200-tuned.sh
#        (carry: [".gpucheck"])
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-./out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
DEADLINE=${GR_TUNED_DEADLINE:-180}
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }
step() { # step NAME SECONDS LOG CMD... : run with a time limit cut to the deadline
    local name=$1 limit=$2 log=$3
    shift 3
    local t0=$SECONDS rc
    if [ $((SECONDS + limit)) -gt "$DEADLINE" ]; then
        limit=$((DEADLINE - SECONDS))
        if [ $limit -lt 10 ]; then
            note "SKIP  $name: out of time (deadline ${DEADLINE} s)"
            failed=1
            return 1
        fi
    fi
    echo "\$ $*" >>"$log"
    timeout --kill-after=5 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        note "PASS  $name ($((SECONDS - t0)) s)"
    else
        [ $rc -eq 124 ] && note "FAIL  $name: timed out after ${limit} s" || note "FAIL  $name: exit $rc ($((SECONDS - t0)) s)"
        failed=1
    fi
    return $rc
}

{
    date -u
    uname -a
    nvidia-smi || true
    nvidia-smi --query-gpu=name,pci.bus_id,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
    nvcc --version || true
    mpirun --version 2>&1 | head -1 || echo "no mpirun"
    echo "mpiexec: $(command -v mpiexec || echo missing)"
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo missing)"
    grep -E "^(NAME|VERSION)=" /etc/os-release
    nproc
} >"$OUT/system.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# ---- the programs: a build tree that travelled, or a build here ----------------------
BUILD=
if [ -n "${GR_PREBUILT:-}" ] && [ -x "$GR_PREBUILT/gpureduce" ] && [ -x "$GR_PREBUILT/tests/test_cuda_backend" ]; then
    export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
    missing=$(ldd "$GR_PREBUILT/gpureduce" "$GR_PREBUILT/tests/test_cuda_backend" 2>&1 | grep "not found" | sort -u)
    if [ -z "$missing" ] && "$GR_PREBUILT/gpureduce" --version >>"$OUT/system.txt" 2>&1; then
        BUILD=$GR_PREBUILT
        # its CTest files name the root and mpiexec of the machine that configured it
        here_mpiexec=$(command -v mpiexec || command -v mpirun)
        find "$BUILD" -name CTestTestfile.cmake -exec sed -i -e "s#${GR_PREBUILT_ROOT:-/nonexistent}#$ROOT#g" \
            -e "s#/usr/bin/mpiexec#$here_mpiexec#g" {} +
        note "programs: the prebuilt tree $BUILD (configured at ${GR_PREBUILT_ROOT:-?})"
    else
        note "programs: prebuilt tree unusable here (${missing:-does not start}); building"
    fi
fi
if [ -z "$BUILD" ]; then
    BUILD=build-gpu
    CMAKE_ARGS=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release)
    if ! pkg-config --exists mpfr 2>/dev/null && [ ! -f /usr/include/mpfr.h ]; then
        CMAKE_ARGS+=(-DGR_MPFR_INCLUDE_DIR=/usr/include -DGR_MPFR_LIBRARY=mpfr-not-installed
            -DGR_GMP_LIBRARY=gmp-not-installed)
    fi
    step configure 60 "$OUT/system.txt" cmake "${CMAKE_ARGS[@]}" || { note "stopping: configure failed"; exit 1; }
    step build 150 "$OUT/system.txt" cmake --build "$BUILD" -j16 --target gpureduce_cli test_cuda_backend ||
        { note "stopping: build failed"; exit 1; }
fi
CLI=$BUILD/gpureduce
TEST_BIN=$BUILD/tests/test_cuda_backend

# ---- 1. the bench (alone on the GPU) ---------------------------------------------------
ROWS=copy,memcpy,cub,cub-e2e,tuned,tuned-e2e
step "bench all dtypes (csv)" 45 "$OUT/bench-all.csv" \
    $MPIRUN -np 1 "$CLI" bench --backend cuda --dtype all --min 2^20 --max 2^30 --factor 16 --variants $ROWS \
    --format csv
step "bench f32 --full" 25 "$OUT/bench-f32.txt" \
    $MPIRUN -np 1 "$CLI" bench --backend cuda --dtype f32 --min 2^20 --max 2^30 --factor 16 --variants $ROWS,v7,v8 \
    --full
grep -hE "^# (checks|WRONG|note)" "$OUT/bench-all.csv" "$OUT/bench-f32.txt" | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- 2. GPU tests and compute-sanitizer, side by side (correctness only) ----------------------
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        extra=()
        [ $tool = memcheck ] && extra=(--leak-check full)
        step "compute-sanitizer $tool --small" 80 "$OUT/$tool.log" \
            $MPIRUN -np 1 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 99 "$TEST_BIN" --small &
    done
fi
# the exact-mode tests are not this round's (and need MPFR, absent here)
step "ctest -L gpu -E exact" 85 "$OUT/ctest.log" ctest --test-dir "$BUILD" -L gpu -E exact -j5 -V --timeout 80
wait
grep -hE "tests passed|tests failed|Total Test time|checks passed|checks FAILED|big:|SKIP|Not Run|\*\*\*" \
    "$OUT/ctest.log" | sed 's/^/      /' | tee -a "$SUMMARY"
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|checks passed|checks FAILED" "$OUT"/memcheck.log \
    "$OUT"/racecheck.log 2>/dev/null | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- 3. block size 256 (default) against 512 at 2^30, through the backend; repeatable bits -------------
for spec in "f32 uniform 256" "f32 uniform 512" "i32 randint 256" "i32 randint 512"; do
    set -- $spec
    step "cli $1 2^30 block $3" 12 "$OUT/cli-ab.txt" \
        $MPIRUN -np 1 "$CLI" --backend cuda --bind none --dtype "$1" --gen "$2" --n 2^30 --repeat 20 --cuda-block "$3"
done
grep -E "^# gpureduce|^local|^bandwidth|^repeatable" "$OUT/cli-ab.txt" | sed 's/^/      /' | tee -a "$SUMMARY"

grep -qE "^(FAIL|SKIP) " "$SUMMARY" && failed=1 # the sanitizer steps ran in subshells
note "overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL) ($SECONDS s)"
exit $failed
