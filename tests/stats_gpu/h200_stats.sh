#!/bin/bash
# h200_stats.sh - one GPU-machine call for --op stats on the GPU: build the
# CLI and the gpu test, run the test, the bench rows tuned and stats (the
# issue's target), then compute-sanitizer memcheck (--small) and racecheck
# (--race). Logs under $OUT; a summary line per step in $OUT/summary.txt.
# Run from the tree's root: bash tests/stats_gpu/h200_stats.sh
set -u
OUT=${OUT:-/tmp/h200-stats}
mkdir -p "$OUT"
B=${B:-b}
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.max.sm,clocks.max.mem --format=csv >"$OUT/summary.txt" 2>&1
git log -1 --format='tree of commit %h' >>"$OUT/summary.txt" 2>/dev/null
ARGS=(-S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90)
if ! pkg-config --exists mpfr 2>/dev/null && [ ! -f /usr/include/mpfr.h ]; then
    ARGS+=(-DGR_MPFR_INCLUDE_DIR=/usr/include -DGR_MPFR_LIBRARY=mpfr-not-installed -DGR_GMP_LIBRARY=gmp-not-installed)
fi
cmake "${ARGS[@]}" >"$OUT/build.log" 2>&1 && cmake --build "$B" -j16 --target gpureduce_cli test_stats_gpu >>"$OUT/build.log" 2>&1
rc=$?
note "build rc $rc"
if [ $rc -ne 0 ]; then
    grep -E "error|Error" "$OUT/build.log" | head -30
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
MPI="mpirun --allow-run-as-root --oversubscribe -np 1"
TS=$(find "$B" -name test_stats_gpu -type f | head -1)
timeout ${T_TEST:-150} $MPI "$TS" >"$OUT/test.log" 2>&1
note "test_stats_gpu rc $? ($(tail -1 "$OUT/test.log"))"
CMD="gpureduce bench --backend cuda --variants tuned,stats --dtype all --min 2^24 --max 2^30 --factor 64"
echo "\$ $MPI $CMD" >"$OUT/bench.txt"
timeout ${T_BENCH:-150} $MPI "$B/"$CMD >>"$OUT/bench.txt" 2>&1
note "bench rc $?"
cat "$OUT/bench.txt"
# the kernel's built block sizes (128 and 512: 1024 threads/SM; 256: 768), f32 and f64 at 2^30
for blk in 128 256 512; do
    GR_BENCH_STATS_BLOCK=$blk timeout 60 $MPI "$B/gpureduce" bench --backend cuda --variants tuned,stats --dtype f32,f64 \
        --min 2^30 --max 2^30 >"$OUT/blocks-$blk.txt" 2>&1
    note "stats block $blk rc $?: $(grep -E ' (tuned|stats) ' "$OUT/blocks-$blk.txt" | awk '{printf "%s %s %s GB/s; ", $3, $4, $7}')"
done
timeout ${T_MEM:-120} $MPI compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
    "$TS" --small >"$OUT/sanitizer.log" 2>&1
note "memcheck --small rc $? ($(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1))"
timeout ${T_RACE:-120} $MPI compute-sanitizer --tool racecheck --error-exitcode 99 \
    "$TS" --race >>"$OUT/sanitizer.log" 2>&1
note "racecheck --race rc $? ($(grep -E 'RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1))"
cat "$OUT/summary.txt"
