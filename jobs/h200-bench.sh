#!/bin/bash
# h200-bench.sh - the benchmark run behind docs/PERFORMANCE.md, on the GPU
# machine (one H200, run as root):
#
#   bash jobs/h200-bench.sh          (from the repository root, or anywhere)
#
# Builds build-gpu (Release, the CLI only), then runs
#   1. gpureduce bench --min 2^20 --max 2^30 --factor 16 --dtype all --variants all,
#   2. the f32 sweep 2^20 2^24 2^28 2^30 with --full,
#   3. compute-sanitizer racecheck over the ladder at a small size,
#   4. the bench's gpu test (ctest -R gpu_bench).
# Logs under $OUT (./out when unset); $OUT/summary.txt has one line per step.
# With -DGR_CCCL_INCLUDE: when .cccl/include exists (newer CCCL headers, e.g.
# the include/ of the PyPI package cuda-cccl), the cub-g2g row is built too.
#
# With the device tool, run the committed tree with the headers beside it:
#   echo /.benchrun/ >> .git/info/exclude
#   rm -rf .benchrun && mkdir .benchrun && git archive HEAD | tar -x -C .benchrun
#   cp -r <cccl>/include .benchrun/.cccl/       (optional)
#   run: cd .benchrun && bash jobs/h200-bench.sh      (carry: [".benchrun"])
set -uo pipefail
cd "$(dirname "$0")/.."
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
BUILD=build-gpu
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }
step() { # step NAME SECONDS LOG CMD...
    local name=$1 limit=$2 log=$3
    shift 3
    local t0=$SECONDS rc
    echo "\$ $*" >>"$log"
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
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
    cmake --version | head -1
    mpirun --version 2>&1 | head -1 || echo "no mpirun"
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo missing)"
    nproc
} >"$OUT/system.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

CMAKE_ARGS=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release)
if ! pkg-config --exists mpfr 2>/dev/null && [ ! -f /usr/include/mpfr.h ]; then
    # only the exact-mode tests need MPFR; let configure pass without it
    CMAKE_ARGS+=(-DGR_MPFR_INCLUDE_DIR=/usr/include -DGR_MPFR_LIBRARY=mpfr-not-installed
        -DGR_GMP_LIBRARY=gmp-not-installed)
fi
[ -f .cccl/include/cub/device/device_reduce.cuh ] && CMAKE_ARGS+=(-DGR_CCCL_INCLUDE="$PWD/.cccl/include")
step configure 120 "$OUT/build.log" cmake "${CMAKE_ARGS[@]}" || { note "stopping: configure failed"; exit 1; }
if ! step build 300 "$OUT/build.log" cmake --build "$BUILD" -j16 --target gpureduce_cli; then
    # the optional cub-g2g row is the only part that needs other headers: drop it and retry
    step "build without cub-g2g" 200 "$OUT/build.log" bash -c "cmake ${CMAKE_ARGS[*]} -DGR_CCCL_INCLUDE= &&
        cmake --build $BUILD -j16 --target gpureduce_cli" || { note "stopping: build failed (see build.log)"; exit 1; }
fi
CLI=$BUILD/gpureduce

# 1. every dtype and row at 2^20 2^24 2^28 2^30 (--max is always measured)
step "bench all dtypes" 200 "$OUT/bench-all.txt" \
    $MPIRUN -np 1 "$CLI" bench --backend cuda --min 2^20 --max 2^30 --factor 16 --dtype all --variants all
grep -E "^# (checks|WRONG|note)" "$OUT/bench-all.txt" | sed 's/^/      /' | tee -a "$SUMMARY"
# 2. f32 with min, max, p99
step "bench f32 --full" 100 "$OUT/bench-f32-full.txt" \
    $MPIRUN -np 1 "$CLI" bench --backend cuda --min 2^20 --max 2^30 --factor 16 --dtype f32 --variants all --full
# 3. the ladder's shared-memory tails under racecheck (v4's __syncwarp steps),
#    small sizes; the hold kernel is off because the tool serializes launches
if command -v compute-sanitizer >/dev/null; then
    GR_BENCH_HOLD=0 step "compute-sanitizer racecheck" 90 "$OUT/sanitizer.log" \
        $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$CLI" bench --backend cuda \
        --min 4099 --max 4099 --dtype f32,i64 --variants v0,v1,v2,v3,v4,v5,v6,v7,v8 --iters 1 --warmup 0
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^# checks|^# WRONG" "$OUT/sanitizer.log" | sed 's/^/      /' |
        tee -a "$SUMMARY"
fi
# 4. the bench's gpu test
step "ctest gpu_bench" 120 "$OUT/ctest.log" ctest --test-dir "$BUILD" -R gpu_bench -V --timeout 110

note "overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
