#!/bin/bash
# h200_exact.sh - the exact-mode GPU checks in one go on the GPU machine:
# timings first (alone on the GPU), then in parallel the full comparison, the
# N > 2^31 cases and compute-sanitizer memcheck + racecheck at small sizes,
# then (where MPI and hwloc are installed) the CLI check against --backend cpu.
#
#   OUT=out bash tests/exact_gpu/h200_exact.sh [TEST_BINARY]
#
# TEST_BINARY: a test_exact_gpu built elsewhere (default: build one here with
# nvcc, standalone, without MPI). Logs go under $OUT; $OUT/summary.txt has
# one line per step.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
S=$OUT/summary.txt
: >"$S"
export PATH=$PATH:/usr/local/cuda/bin
note() { echo "$*" | tee -a "$S"; }

{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    nvcc --version | tail -1
    command -v mpirun && mpirun --version 2>&1 | head -1
    pkg-config --modversion hwloc 2>&1
    command -v compute-sanitizer
    nproc
} >"$OUT/system.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"

BIN=${1:-}
if [ -n "$BIN" ] && ! "$BIN" --probe 2>&1 | grep -q "unknown option"; then
    note "carried binary does not run here; building"
    BIN=""
fi
if [ -z "$BIN" ]; then
    mkdir -p /tmp/xb
    t0=$SECONDS
    for f in exact exact_f32 exact_f64 generate reduce reduce_f32 reduce_f64 reduce_i32 reduce_i64; do
        nvcc -O3 -std=c++17 -arch=sm_90 -Isrc -Ikernels -c kernels/$f.cu -o /tmp/xb/$f.o &
    done
    gcc -O2 -std=c11 -Isrc -Ikernels -Itests -I/usr/local/cuda/include -DGR_EXACT_TEST_STANDALONE \
        -c tests/exact_gpu/test_exact_gpu.c -o /tmp/xb/test.o &
    gcc -O2 -std=c11 -Isrc -c src/xacc.c -o /tmp/xb/xacc.o &
    wait
    g++ -o /tmp/xb/test_exact_gpu /tmp/xb/*.o -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lpthread -lm &&
        BIN=/tmp/xb/test_exact_gpu
    note "standalone build: $([ -n "$BIN" ] && echo ok || echo FAILED) ($((SECONDS - t0)) s)"
fi

# the library and CLI, in the background, where MPI and hwloc exist
CLI_OK=0
if command -v mpirun >/dev/null && pkg-config --exists hwloc 2>/dev/null; then
    (cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DGR_BUILD_TESTS=OFF >"$OUT/cmake.log" 2>&1 &&
        cmake --build build-h200 -j10 --target gpureduce_cli >>"$OUT/cmake.log" 2>&1) &
    CMAKE_PID=$!
else
    note "no mpirun or hwloc here: the CLI check is skipped"
    CMAKE_PID=""
fi

step() { # step NAME LIMIT LOG CMD...
    local name=$1 limit=$2 log=$3 t0=$SECONDS rc
    shift 3
    timeout --kill-after=5 "$limit" "$@" >"$log" 2>&1
    rc=$?
    note "$([ $rc -eq 0 ] && echo PASS || echo "FAIL(rc $rc)")  $name ($((SECONDS - t0)) s)"
}

step bench 100 "$OUT/bench.log" "$BIN" --bench
grep "^bench:" "$OUT/bench.log" >>"$S"

step full 200 "$OUT/full.log" "$BIN" &
P1=$!
step big 200 "$OUT/big.log" "$BIN" --big &
P2=$!
step memcheck 200 "$OUT/memcheck.log" compute-sanitizer --tool memcheck --error-exitcode 99 "$BIN" --small &
P3=$!
step racecheck 200 "$OUT/racecheck.log" compute-sanitizer --tool racecheck --error-exitcode 99 "$BIN" --race &
P4=$!
wait $P1 $P2 $P3 $P4
for f in full big memcheck racecheck; do
    grep -E "checks passed|FAIL|SKIP|ERROR SUMMARY|RACECHECK SUMMARY|big:" "$OUT/$f.log" | tail -6 | sed "s/^/  $f: /" >>"$S"
done

if [ -n "$CMAKE_PID" ]; then
    wait "$CMAKE_PID"
    if [ -x build-h200/gpureduce ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
        export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
        export OMPI_MCA_rmaps_base_oversubscribe=1
        export GPUREDUCE=$PWD/build-h200/gpureduce MPIRUN="mpirun --allow-run-as-root --oversubscribe"
        step cli 150 "$OUT/cli.log" bash tests/exact_gpu/cli_exact.sh --quick
        grep -E "^ok|^FAIL|checks" "$OUT/cli.log" | tail -25 >>"$S"
        step "gpureduce bench" 120 "$OUT/gpureduce_bench.log" $MPIRUN -np 1 "$GPUREDUCE" bench --backend cuda \
            --bind none --variants tuned,tuned-e2e,exact,exact-e2e --dtype f32,f64 --min 2^24 --max 2^30 --factor 64
        cat "$OUT/gpureduce_bench.log" >>"$S"
    else
        note "CLI build failed (see cmake.log)"
        tail -20 "$OUT/cmake.log" >>"$S"
    fi
fi
cat "$S"
