#!/bin/bash
# h200x2-check.sh - the 2-GPU run (kind nvidia-h200-x2), one rank per GPU:
#   placement (--topo), the gpu test label at np 2, exact-mode bit identity over
#   np 1 and 2 and the cpu backend, weak and strong scaling, and the distributed
#   bench rows (gr, cub+mpi, cub+nccl). Logs and CSV under $OUT.
#
#   bash jobs/h200x2-check.sh
#
# With the device tool, run the committed tree (others' uncommitted edits
# travel with a call otherwise):
#   rm -rf .gpucheck && mkdir .gpucheck && git archive HEAD | tar -x -C .gpucheck
#   run: cd .gpucheck && bash jobs/h200x2-check.sh      (carry: [".gpucheck"])
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEADLINE=${DEADLINE:-560}
. jobs/device-lib.sh
BUILD=build-gpu
{ date -u; nvidia-smi; nvidia-smi topo -m; nproc; mpirun --version | head -1; } >"$OUT/system.txt" 2>&1
note "GPUs: $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader 2>/dev/null | tr '\n' ';')"

configure_args "$BUILD"
step configure 60 "$OUT/build.log" cmake "${CMAKE_ARGS[@]}" || exit 1
step build 300 "$OUT/build.log" cmake --build "$BUILD" -j32 --target gpureduce_cli test_cuda_backend test_exact_gpu ||
    { note "stopping: build failed"; tail -30 "$OUT/build.log"; exit 1; }
G=$BUILD/gpureduce

# placement: two ranks on two GPUs with bus ids and bound cpusets
step "topo np2" 30 "$OUT/topo.txt" $MPIRUN -np 2 "$G" --topo
step "topo np2 json" 30 "$OUT/topo.json" $MPIRUN -np 2 "$G" --topo --format json
sed 's/^/      /' "$OUT/topo.txt" | tee -a "$SUMMARY"

# the whole gpu label on the 2-GPU machine
step "ctest -L gpu" 200 "$OUT/ctest-gpu.log" ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 150
grep -E "tests passed|tests failed|Failed|\*\*\*" "$OUT/ctest-gpu.log" | sed 's/^/      /' | tee -a "$SUMMARY"

# exact mode: the same bits for np 1, np 2 (GPU) and the cpu backend
for np in 1 2; do
    step "exact f64 stress 2^30 np$np" 40 "$OUT/exact-np$np.json" \
        $MPIRUN -np $np "$G" --mode exact --gen stress --dtype f64 --n 2^30 --repeat 3 --format json
    step "exact f32 normal 2^30 np$np" 40 "$OUT/exact32-np$np.json" \
        $MPIRUN -np $np "$G" --mode exact --gen normal --dtype f32 --n 2^30 --repeat 3 --format json
done
step "exact f64 stress 2^26 cpu np2" 60 "$OUT/exact-cpu.json" \
    $MPIRUN -np 2 "$G" --backend cpu --mode exact --gen stress --dtype f64 --n 2^26 --repeat 1 --format json
step "exact f64 stress 2^26 gpu np2" 30 "$OUT/exact-gpu26.json" \
    $MPIRUN -np 2 "$G" --mode exact --gen stress --dtype f64 --n 2^26 --repeat 3 --format json
for f in exact-np1 exact-np2 exact32-np1 exact32-np2 exact-cpu exact-gpu26; do
    note "      $f: $(grep -o '"result_hex": "[^"]*"' "$OUT/$f.json" 2>/dev/null) $(grep -o '"backend": "[^"]*"' "$OUT/$f.json" 2>/dev/null)"
done

# scaling on 1 and 2 GPUs (issue 7 targets: weak >= 99% at 2^30 f32 per rank, strong >= 1.97x at 2^31)
step "scale weak 2^30" 60 "$OUT/scale-weak.csv" $MPIRUN -np 2 "$G" scale --weak 2^30 --dtype f32 --repeat 20 --format csv
step "scale strong 2^31" 60 "$OUT/scale-strong.csv" $MPIRUN -np 2 "$G" scale --strong 2^31 --dtype f32 --repeat 20 --format csv
sed 's/^/      /' "$OUT/scale-weak.csv" "$OUT/scale-strong.csv" | tee -a "$SUMMARY"

# distributed rows, per-rank sizes 2^16 .. 2^31
step "bench dist csv" 150 "$OUT/dist.csv" $MPIRUN -np 2 "$G" bench --variants gr,cub+mpi,cub+nccl --dtype f32 \
    --min 2^16 --max 2^31 --factor 4 --iters 50 --format csv
step "bench dist table" 100 "$OUT/dist.txt" $MPIRUN -np 2 "$G" bench --variants gr,cub+mpi,cub+nccl --dtype f32 \
    --min 2^16 --max 2^31 --factor 4 --iters 50
grep -vE "^#  " "$OUT/dist.txt" | sed 's/^/      /' | tee -a "$SUMMARY"

note "overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
