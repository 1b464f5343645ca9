#!/bin/bash
# h200-check.sh - THE script for the GPU machines (nvidia-h200 and
# nvidia-h200-x2; run as root), one device call:
#
#   bash jobs/h200-check.sh            (from the repository root, or anywhere)
#
#   1. configure + build (Release, sm_90, every GPU target)
#   2. ctest -L gpu (CUDA vs CPU on every dtype/op/awkward N, exact mode, bench gates)
#   3. compute-sanitizer memcheck, racecheck, initcheck on the GPU test programs (small sizes)
#   4. gpureduce bench: f32 sweep 2^20..2^30 with --full, and every dtype at 2^30
#   5. with 2 or more GPUs: placement (--topo), exact-mode bit identity over np 1, np 2
#      and the cpu backend, weak/strong scaling, the distributed rows (gr, cub+mpi, cub+nccl)
# Logs and CSV under $OUT (./out when unset); $OUT/summary.txt has one line per step.
# Every step has a time limit inside DEADLINE seconds (default 560), so the script
# ends, logs written, before the device tool's 600 s limit; late steps are skipped.
# GR_CHECK_SKIP="sanitizer bench" (any of: gpu sanitizer bench multi) leaves parts out.
#
# With the device tool, run the committed tree (others' uncommitted edits travel with
# a call otherwise), and fetch at most 8 files back (the bulky logs are combined):
#   rm -rf .gpucheck && mkdir .gpucheck && git archive HEAD | tar -x -C .gpucheck
#   run: cd .gpucheck && bash jobs/h200-check.sh      (carry: [".gpucheck"])
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEADLINE=${DEADLINE:-560}
. jobs/device-lib.sh
BUILD=${BUILD:-build-gpu}
SKIP=" ${GR_CHECK_SKIP:-} "
want() { case "$SKIP" in *" $1 "*) note "SKIP  $1 (GR_CHECK_SKIP)"; return 1 ;; esac; return 0; }
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{
    date -u; uname -a; nvidia-smi; nvidia-smi topo -m; nvcc --version; cmake --version | head -1
    mpirun --version 2>&1 | head -1; echo "hwloc $(pkg-config --modversion hwloc 2>&1)"; nproc
} >"$OUT/system.txt" 2>&1
note "GPUs ($NGPU): $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null | tr '\n' ';')"

# ---- 1. build ----------------------------------------------------------------------
configure_args "$BUILD"
step configure 60 "$OUT/build.log" cmake "${CMAKE_ARGS[@]}" || { note "stopping: configure failed"; exit 1; }
step build 300 "$OUT/build.log" cmake --build "$BUILD" -j"$(nproc)" --target gpureduce_cli test_cuda_backend test_exact_gpu ||
    { note "stopping: build failed (see build.log)"; tail -30 "$OUT/build.log"; exit 1; }
G=$BUILD/gpureduce
TEST=$BUILD/test_cuda_backend
XTEST=$BUILD/test_exact_gpu

# ---- 2. the gpu label ----------------------------------------------------------------
want gpu && step "ctest -L gpu" 240 "$OUT/ctest-gpu.log" ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 200
grep -E "tests passed|tests failed|\*\*\*|Failed" "$OUT/ctest-gpu.log" | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- 3. compute-sanitizer ------------------------------------------------------------------
if ! want sanitizer; then
    :
elif command -v compute-sanitizer >/dev/null; then
    S=$OUT/sanitizer.log
    step "memcheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 "$TEST" --small
    step "racecheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$TEST" --small
    step "initcheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool initcheck --error-exitcode 99 "$TEST" --small
    step "memcheck test_exact_gpu" 90 "$S" compute-sanitizer --tool memcheck --error-exitcode 99 "$XTEST" --small
    step "racecheck test_exact_gpu" 90 "$S" compute-sanitizer --tool racecheck --error-exitcode 99 "$XTEST" --race
    GR_BENCH_HOLD=0 step "racecheck bench ladder" 60 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 \
        "$G" bench --backend cuda --min 4099 --max 4099 --dtype f32,i64 --variants v0,v1,v2,v3,v4,v5,v6,v7,v8 --iters 1 --warmup 0
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$S" | sort | uniq -c | sed 's/^/      /' | tee -a "$SUMMARY"
else
    note "note: compute-sanitizer not found"
fi

# ---- 4. the benchmark (one GPU) -------------------------------------------------------------
B=$OUT/bench.txt
want bench && step "bench f32 --full" 90 "$B" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^20 --max 2^30 --factor 16 --dtype f32 --variants all --full
want bench && step "bench all dtypes 2^30 csv" 90 "$OUT/bench.csv" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^30 --max 2^30 --dtype all \
    --variants copy,memcpy,cub,cub-e2e,tuned,tuned-e2e,exact,exact-e2e --format csv
grep -E " (copy|memcpy|cub|cub-e2e|tuned|tuned-e2e|exact) " "$B" | sed 's/^/      /' | head -40 | tee -a "$SUMMARY"

# ---- 5. two GPUs ------------------------------------------------------------------------------
if [ "$NGPU" -ge 2 ] && want multi; then
    M2="$MPIRUN -np 2"
    X=$OUT/multi.txt
    step "topo np2" 30 "$X" $M2 "$G" --topo
    grep -E "^#  +[0-9]" "$X" | sed 's/^/      /' | tee -a "$SUMMARY"
    for np in 1 2; do
        step "exact f64 stress 2^30 np$np" 40 "$OUT/exact-np$np.json" $MPIRUN -np $np "$G" --mode exact --gen stress --dtype f64 --n 2^30 --repeat 3 --format json
    done
    step "exact f64 stress 2^26 cpu np2" 60 "$OUT/exact-cpu.json" $M2 "$G" --backend cpu --mode exact --gen stress --dtype f64 --n 2^26 --repeat 1 --format json
    step "exact f64 stress 2^26 gpu np2" 30 "$OUT/exact-gpu26.json" $M2 "$G" --mode exact --gen stress --dtype f64 --n 2^26 --repeat 3 --format json
    for f in exact-np1 exact-np2 exact-cpu exact-gpu26; do
        note "      $f: $(grep -o '"result_hex": "[^"]*"' "$OUT/$f.json" 2>/dev/null) $(grep -o '"backend": "[^"]*"' "$OUT/$f.json" 2>/dev/null)"
    done
    rm -f "$OUT"/exact-*.json
    step "scale weak 2^30" 60 "$X" $M2 "$G" scale --weak 2^30 --dtype f32 --repeat 50
    step "scale strong 2^31" 60 "$X" $M2 "$G" scale --strong 2^31 --dtype f32 --repeat 50
    grep -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$X" | sed 's/^/      /' | tee -a "$SUMMARY"
    step "bench distributed rows" 150 "$OUT/dist.csv" $M2 "$G" bench --variants gr,cub+mpi,cub+nccl --dtype f32 \
        --min 2^16 --max 2^31 --factor 4 --iters 50 --format csv
fi

note "overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
