#!/bin/bash
# h200-check.sh - THE script for the GPU machines (nvidia-h200 and
# nvidia-h200-x2; run as root), one device call:
#
#   bash jobs/h200-check.sh            (from the repository root, or anywhere)
#
#   1. configure + build (Release, sm_90, every GPU target)
#   2. ctest -L gpu (CUDA vs CPU on every dtype/op/awkward N, exact mode, bench gates)
#   3. compute-sanitizer memcheck, racecheck, initcheck on the GPU test programs (small sizes)
#   4. gpureduce bench: f32 sweep 2^20..2^30 with --full, every dtype at 2^30, the small sizes
#      with --timing launch (--cache hot and cold), exact against cub-g2g (with .cccl/include)
#   4c. gpureduce-cg (docs/CG.md): time per iteration at n = 256 and 512, --dots gpureduce fast
#      and exact against cub-mpi ($OUT/cg.txt), and a memcheck of it
#   5. with 2 or more GPUs (np = every GPU): placement (--topo), exact-mode bit identity over
#      np = 1..NGPU and the cpu backend, weak/strong scaling, the distributed rows (gr, cub+mpi,
#      cub+nccl)
# Logs and CSV under $OUT (./out when unset); $OUT/summary.txt has one line per step.
# Every step has a time limit inside DEADLINE seconds (default 560), so the script
# ends, logs written, before the device tool's 600 s limit; late steps are skipped.
# GR_CHECK_SKIP="sanitizer bench" (any of: gpu sanitizer sanitizer-extra bench embed cg input multi) leaves
# parts out (sanitizer-extra: initcheck and the ladder's racecheck); finer: bench-sweep (the f32
# sweep and the all-dtype csv), bench-half, bench-exact (the exact kernel's ablation rows), bench-regimes, bench-floor,
# bench-vec (dot, argmax, batch2 against CUB),
# memcheck-backend (memcheck and racecheck of test_cuda_backend), racecheck-vec (of test_vec_gpu, ~4 min), sanitizer-core (racecheck of test_exact_gpu, memcheck and racecheck of test_stats_gpu), memcheck-exact, memcheck-floor. GR_CHECK_PREBUILT=1 reuses $BUILD
# when it holds a build (a second call on a warm machine, the tree not re-carried).
# GR_CHECK_GPU_TESTS=REGEX runs only the gpu-labelled tests whose names match.
# GR_CHECK_PROFILE=1 adds ncu (--clock-control none) of the exact and the fast kernel at 2^20
# and 2^24 f32 ($OUT/ncu.txt) and the exact kernel's stall sampling by instruction at 2^24,
# summarised by jobs/ncu-stalls.py; off by default (~60 s).
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
# the cub-g2g rows: newer CCCL headers carried beside the tree (.cccl/include, e.g. from the
# PyPI package cuda-cccl; not in git), as issue 5's comparison needs
[ -f .cccl/include/cub/device/device_reduce.cuh ] && CMAKE_ARGS+=(-DGR_CCCL_INCLUDE="$PWD/.cccl/include")
if [ -n "${GR_CHECK_PREBUILT:-}" ] && [ -x "$BUILD/gpureduce" ]; then
    # a second call on a machine still warm from the first: the build is there (same tree)
    note "build: reusing $BUILD (GR_CHECK_PREBUILT)"
else
    step configure 60 "$OUT/build.log" cmake "${CMAKE_ARGS[@]}" || { note "stopping: configure failed"; exit 1; }
    # every target: the gpu-labelled tests include the package and embedding programs
    step build 420 "$OUT/build.log" cmake --build "$BUILD" -j"$(nproc)" ||
        { note "stopping: build failed (see build.log)"; tail -30 "$OUT/build.log"; exit 1; }
fi
G=$BUILD/gpureduce
# the test programs live under $BUILD/tests (gr_test_exe)
tprog() { find "$BUILD" -name "$1" -type f -perm -u+x 2>/dev/null | head -1; }
TEST=$(tprog test_cuda_backend)
XTEST=$(tprog test_exact_gpu)
STEST=$(tprog test_stats_gpu)

# ---- 2. the gpu label ----------------------------------------------------------------
want gpu && step "ctest -L gpu" 330 "$OUT/ctest-gpu.log" ctest --test-dir "$BUILD" -L gpu ${GR_CHECK_GPU_TESTS:+-R "$GR_CHECK_GPU_TESTS"} --output-on-failure --timeout 200
grep -E "tests passed|tests failed|\*\*\*|Failed" "$OUT/ctest-gpu.log" | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- 3. compute-sanitizer ------------------------------------------------------------------
if ! want sanitizer; then
    :
elif command -v compute-sanitizer >/dev/null; then
    S=$OUT/sanitizer.log
    want memcheck-backend && step "memcheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 "$TEST" --small
    want memcheck-backend && step "racecheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$TEST" --small
    want sanitizer-extra && step "initcheck test_cuda_backend" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool initcheck --error-exitcode 99 "$TEST" --small
    want memcheck-exact && step "memcheck test_exact_gpu" 90 "$S" compute-sanitizer --tool memcheck --error-exitcode 99 "$XTEST" --small
    want sanitizer-core && step "racecheck test_exact_gpu" 90 "$S" compute-sanitizer --tool racecheck --error-exitcode 99 "$XTEST" --race
    FTEST=$(tprog test_read_floor)
    want memcheck-floor && [ -n "$FTEST" ] && step "memcheck test_read_floor" 90 "$S" compute-sanitizer --tool memcheck --error-exitcode 99 "$FTEST"
    want sanitizer-core && step "memcheck test_stats_gpu" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 "$STEST" --small
    want sanitizer-core && step "racecheck test_stats_gpu" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$STEST" --race
    VTEST=$(tprog test_vec_gpu)
    if [ -n "$VTEST" ]; then   # dot, nrm2, argmin/argmax, batches (kernels/dot.cu, argext.cu)
        step "memcheck test_vec_gpu" 120 "$S" $MPIRUN -np 1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 "$VTEST" --small
        want racecheck-vec && step "racecheck test_vec_gpu" 240 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$VTEST" --small
    fi
    ETEST=$(tprog test_embed_gpu)
    [ -n "$ETEST" ] && step "memcheck test_embed_gpu" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool memcheck --error-exitcode 99 "$ETEST"
    # the ordered results' release kernel and the kernels' own value writes (test_embed_gpu part 5)
    [ -n "$ETEST" ] && step "racecheck test_embed_gpu" 90 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 "$ETEST"
    want sanitizer-extra && GR_BENCH_HOLD=0 step "racecheck bench ladder" 60 "$S" $MPIRUN -np 1 compute-sanitizer --tool racecheck --error-exitcode 99 \
        "$G" bench --backend cuda --min 4099 --max 4099 --dtype f32,i64 --variants v0,v1,v2,v3,v4,v5,v6,v7,v8 --iters 1 --warmup 0
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$S" | sort | uniq -c | sed 's/^/      /' | tee -a "$SUMMARY"
else
    note "note: compute-sanitizer not found"
fi

# ---- 4. the benchmark (one GPU) -------------------------------------------------------------
# the board's clocks, power and clock-event reasons every 200 ms while the benchmark runs:
# rows at 2^30 move by 5-10% with its power state (docs/EXACT.md), so every run records it
# (summary line below; the samples are appended to system.txt)
CLOCKS=$OUT/.clocks.csv
CLOCKS_PID=
if want bench && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv,noheader,nounits -lms 200 >"$CLOCKS" 2>/dev/null &
    CLOCKS_PID=$!
fi
B=$OUT/bench.txt
LADDER=${GR_CHECK_LADDER:-v7,v8}   # "v0,v1,...,v8" for the whole seed ladder (unchanged since 2026-11-29)
# the exact kernel's parts priced one by one (test-only ablation instances, same run, same bits)
want bench && want bench-exact && step "exact kernel ablation" 90 "$OUT/exact-ablate.txt" "$XTEST" --bench
[ -f "$OUT/exact-ablate.txt" ] && grep -E "default|abl |fast" "$OUT/exact-ablate.txt" | sed 's/^/      /' | tee -a "$SUMMARY"
# the same kernel's stages timed from inside (%globaltimer probe; docs/EXACT.md "Stage stamps")
want bench && want bench-exact && step "exact kernel stages (--stamps)" 60 "$OUT/exact-ablate.txt" "$XTEST" --stamps
want bench && want bench-sweep && step "bench f32 --full" 90 "$B" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^20 --max 2^30 --factor 16 --dtype f32 \
    --variants copy,memcpy,cub,cub-e2e,tuned,tuned-e2e,exact,exact-e2e,$LADDER --full
want bench && want bench-sweep && step "bench all dtypes 2^30 csv" 90 "$OUT/bench.csv" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^30 --max 2^30 --dtype all \
    --variants copy,memcpy,cub,cub-e2e,tuned,tuned-e2e,exact,exact-e2e --format csv
[ -f "$B" ] && grep -E " (copy|memcpy|cub|cub-e2e|tuned|tuned-e2e|exact) " "$B" | sed 's/^/      /' | head -40 | tee -a "$SUMMARY"
# --op stats against fast sum (issue 6: >= 90% at 2^30 f32), and the half types against f32
want bench && step "bench stats vs tuned" 90 "$OUT/bench-more.txt" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^24 --max 2^30 \
    --factor 64 --dtype all --variants tuned,stats
want bench && want bench-half && step "bench f16 bf16 f32" 90 "$OUT/bench-more.txt" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^24 --max 2^30 \
    --factor 64 --dtype f16,bf16,f32 --variants tuned,exact,cub
[ -f "$OUT/bench-more.txt" ] && grep -E " (tuned|stats|exact) " "$OUT/bench-more.txt" | sed 's/^/      /' | tee -a "$SUMMARY"
# the vector rows (issue 20): dot fast/exact against CUB's TransformReduce, argmax against
# cub::DeviceReduce::ArgMax, a batch of two dot products against two CUB calls
want bench && want bench-vec && step "bench vector rows" 120 "$OUT/bench-vec.txt" $MPIRUN -np 1 "$G" bench --backend cuda \
    --min 2^16 --max 2^30 --factor 16 --dtype f32,f64 --variants dot,dot-exact,cub-dot,argmax,cub-argmax,batch2,cub-batch2,tuned
[ -f "$OUT/bench-vec.txt" ] && grep -E " (dot|dot-exact|cub-dot|argmax|cub-argmax|batch2|cub-batch2) " "$OUT/bench-vec.txt" |
    sed 's/^/      /' | tee -a "$SUMMARY"
# the read floor: every kernel shape's time to read 2^20..2^24 f32, an empty launch, CUB and
# the fast kernel in one process (docs/PERFORMANCE.md, Round 7)
FTEST=$(tprog test_read_floor)
want bench && want bench-floor && [ -n "$FTEST" ] && step "read floor sweep" 90 "$OUT/read-floor.txt" "$FTEST" --sweep
[ -f "$OUT/read-floor.txt" ] && grep "summary" "$OUT/read-floor.txt" | sed 's/^/      /' | tee -a "$SUMMARY"
# the small sizes in the regime of issue 3's CUB figures (launch-bound, data in L2), same rows
BR=$OUT/bench-regimes.txt
want bench && want bench-regimes && step "bench small, --timing launch --cache hot" 60 "$BR" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^20 --max 2^24 \
    --factor 16 --dtype f32,f64 --variants cub,cub-e2e,tuned,tuned-e2e,v8 --iters 50 --timing launch --cache hot
want bench && want bench-regimes && step "bench small, --timing launch (cold)" 60 "$BR" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^20 --max 2^24 \
    --factor 16 --dtype f32,f64 --variants cub,cub-e2e,tuned,tuned-e2e,v8 --iters 50 --timing launch
# opt-in: where the exact and the fast kernel spend their time (docs/EXACT.md, "Loads in flight")
if [ "${GR_CHECK_PROFILE:-0}" = 1 ] && command -v ncu >/dev/null; then
    NCU="ncu --clock-control none --launch-skip 3 --launch-count 1"
    for pn in 2^20 2^24; do
        for k in gr_exact_kernel gr_reduce_kernel; do
            step "ncu $k $pn" 60 "$OUT/ncu.txt" $MPIRUN -np 1 $NCU -k "regex:$k" --section SpeedOfLight \
                --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
                "$G" bench --backend cuda --min "$pn" --max "$pn" --dtype f32 --variants tuned,exact --iters 5 --warmup 1
        done
    done
    step "ncu exact 2^24 by instruction" 90 "$OUT/.ncu-src.csv" $MPIRUN -np 1 $NCU -k regex:gr_exact_kernel \
        --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
        "$G" bench --backend cuda --min 2^24 --max 2^24 --dtype f32 --variants exact --iters 5 --warmup 1 &&
        python3 jobs/ncu-stalls.py "$OUT/.ncu-src.csv" 30 >>"$OUT/ncu.txt" 2>&1
    rm -f "$OUT/.ncu-src.csv"
fi

# exact mode against CUB's reproducible sum (issue 5), when the cub-g2g rows are built
if $MPIRUN -np 1 "$G" bench --help 2>&1 | grep -q "cub-g2g-f32"; then
    want bench && step "bench exact vs cub-g2g" 90 "$BR" $MPIRUN -np 1 "$G" bench --backend cuda --min 2^20 --max 2^30 --factor 4 \
        --dtype f32,f64 --variants cub,cub-g2g,cub-g2g-f32,tuned,exact
else
    note "note: cub-g2g rows not built (no .cccl/include carried)"
fi

if [ -n "$CLOCKS_PID" ]; then
    kill "$CLOCKS_PID" 2>/dev/null; wait "$CLOCKS_PID" 2>/dev/null
    clocks_summary "$CLOCKS" | tee -a "$SUMMARY"
    { echo "== clocks during the benchmark (timestamp, gpu, sm MHz, mem MHz, W, C, reasons)"; cat "$CLOCKS"; } >>"$OUT/system.txt"
    rm -f "$CLOCKS"
fi

# ---- 4a. embedding cost and the solver reductions on the GPU (issues 19, 20) ----------------------
E=$OUT/embed.txt
EC=$(tprog gr_embed_cost)
if want embed; then
    [ -n "$EC" ] && step "embed cost" 90 "$E" $MPIRUN -np 1 "$EC" --sizes 2^16,2^20,2^24 --iters 200 --warmup 20
    for op in dot nrm2 argmin argmax sumsq; do
        for dt in f32 f64; do
            step "cli --op $op $dt exact --verify" 30 "$E" $MPIRUN -np 1 "$G" --backend cuda --op $op --mode exact --dtype $dt --gen stress --n 16777223 --verify --repeat 3
        done
    done
    step "cli --op dot f32 fast np2 --verify" 30 "$E" $MPIRUN -np 2 "$G" --backend cuda --share-gpus --op dot --dtype f32 --n 2^26 --verify --repeat 5
    grep -E "^(embed|size|  *2\^|#)|start|overlap|verify" "$E" | head -40 | sed 's/^/      /' | tee -a "$SUMMARY"
fi

# ---- 4b. the input pipeline (issue 6): a 4 GiB f32 .npy in the page cache (/dev/shm) ----------------
IN=$OUT/input.txt
F=/dev/shm/gr-check-f32.npy
if want input; then
    step "gen 4 GiB f32 .npy" 90 "$IN" $MPIRUN -np 8 "$G" gen --out "$F" --n 2^30 --gen ones --dtype f32 --force
    for c in 8M 64M; do
        step "input np1 --chunk $c" 60 "$IN" $MPIRUN -np 1 "$G" --input "$F" --bind none --repeat 3 --warmup 1 --chunk "$c"
    done
    # several readers on the one GPU, collective buffering off (ompio's individual fcoll)
    for np in 4 8; do
        OMPI_MCA_fcoll=individual step "input np$np --share-gpus, fcoll individual" 60 "$IN" $MPIRUN -np $np "$G" --input "$F" \
            --bind none --share-gpus --repeat 3 --warmup 1 --chunk 64M
    done
    grep -E "bandwidth|h2d ref" "$IN" | sed 's/^/      /' | tee -a "$SUMMARY"
    rm -f "$F"
fi

# ---- 4c. gpureduce-cg (issue 21): time per iteration, --dots gpureduce against cub-mpi, one rank ---------
# docs/CG.md "Speed": targets fast <= 0.9x and exact <= 1.0x cub-mpi at n = 256 and 512; 200 iterations each.
CGO=$OUT/cg.txt
CGX=$(tprog gpureduce-cg)
if want cg && [ -n "$CGX" ]; then
    # gpureduce: the update queued before the values reach the host (--update device, the default: the
    # ordered result) and after (--update host); cub-mpi twice, first and last (the machine drifts)
    CG_RUNS=("--dots cub-mpi --mode fast" "--dots gpureduce --mode fast" "--dots gpureduce --mode fast --update host"
        "--dots gpureduce --mode exact" "--dots gpureduce --mode exact --update host" "--dots cub-mpi --mode fast")
    for n in 256 512; do
        for run in "${CG_RUNS[@]}"; do
            # shellcheck disable=SC2086 # $run is several options
            step "cg n=$n $run" 60 "$CGO" $MPIRUN -np 1 "$CGX" --backend cuda --n $n --tol 0 --maxit 200 $run --format json
        done
        # the dots' own time (synchronised before them): what faster dots can buy at most (CG.md "Speed")
        for run in "--dots cub-mpi --mode fast" "--dots gpureduce --mode fast" "--dots gpureduce --mode exact"; do
            # shellcheck disable=SC2086
            step "cg n=$n $run --time-dots" 60 "$CGO" $MPIRUN -np 1 "$CGX" --backend cuda --n $n --tol 0 --maxit 100 $run --time-dots --format json
        done
        # where an iteration's time goes (stencil, dots, values to the host, update; CG.md "Speed")
        for run in "${CG_RUNS[@]:0:5}"; do
            # shellcheck disable=SC2086
            step "cg n=$n $run --phases" 60 "$CGO" $MPIRUN -np 1 "$CGX" --backend cuda --n $n --tol 0 --maxit 100 $run --phases --format json
        done
    done
    for mode in exact fast; do # --update device: exact through the release, fast written by the dots' kernel
        command -v compute-sanitizer >/dev/null && step "memcheck gpureduce-cg $mode" 60 "$CGO" $MPIRUN -np 1 \
            compute-sanitizer --tool memcheck --error-exitcode 99 "$CGX" --backend cuda --n 20 --mode $mode --format json
    done
    grep '^{' "$CGO" | sed 's/^/      /' | tee -a "$SUMMARY"
fi

# ---- 5. several GPUs (every GPU of the machine: 2 on nvidia-h200-x2, 4 or 8 on the wider kinds) ---------
# One rank per GPU, np = NGPU; exact-mode identity over np = 1..NGPU; weak and strong scaling
# (strong: 2^31 elements on 2 GPUs, 2^33 on 4 or more, as issue 8 asks; GR_STRONG overrides);
# the distributed rows at np = NGPU. On the wide kinds run it alone:
#   GR_CHECK_SKIP="gpu sanitizer bench" bash jobs/h200-check.sh
if [ "$NGPU" -ge 2 ] && want multi; then
    MN="$MPIRUN -np $NGPU"
    X=$OUT/multi.txt
    step "topo np$NGPU" 30 "$X" $MN "$G" --topo
    grep -E "^#  +[0-9]" "$X" | sed 's/^/      /' | tee -a "$SUMMARY"
    XN=${GR_EXACT_N:-2^30}
    for np in $(seq 1 "$NGPU"); do
        step "exact f64 stress $XN np$np" 40 "$OUT/exact-np$np.json" $MPIRUN -np $np "$G" --mode exact --gen stress --dtype f64 --n "$XN" --repeat 3 --format json
        note "      np$np: $(grep -o '"result_hex": "[^"]*"' "$OUT/exact-np$np.json" 2>/dev/null)"
    done
    hexes=$(cat "$OUT"/exact-np*.json 2>/dev/null | grep -o '"result_hex": "[^"]*"' | sort -u | wc -l)
    if [ "$hexes" -eq 1 ]; then note "PASS  exact identity over np 1..$NGPU (one result_hex)"; else note "FAIL  exact identity over np 1..$NGPU: $hexes different results"; failed=1; fi
    step "exact f64 stress 2^26 cpu np$NGPU" 60 "$OUT/exact-cpu.json" $MN "$G" --backend cpu --mode exact --gen stress --dtype f64 --n 2^26 --repeat 1 --format json
    step "exact f64 stress 2^26 gpu np$NGPU" 30 "$OUT/exact-gpu26.json" $MN "$G" --mode exact --gen stress --dtype f64 --n 2^26 --repeat 3 --format json
    for f in exact-cpu exact-gpu26; do
        note "      $f: $(grep -o '"result_hex": "[^"]*"' "$OUT/$f.json" 2>/dev/null) $(grep -o '"backend": "[^"]*"' "$OUT/$f.json" 2>/dev/null)"
    done
    rm -f "$OUT"/exact-*.json
    STRONG=${GR_STRONG:-$([ "$NGPU" -ge 4 ] && echo 2^33 || echo 2^31)}
    step "scale weak 2^30" 90 "$X" $MN "$G" scale --weak 2^30 --dtype f32 --repeat 50
    step "scale strong $STRONG" 120 "$X" $MN "$G" scale --strong "$STRONG" --dtype f32 --repeat 50
    grep -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$X" | sed 's/^/      /' | tee -a "$SUMMARY"
    step "bench distributed rows np$NGPU" 150 "$OUT/dist.csv" $MN "$G" bench --variants gr,cub+mpi,cub+nccl --dtype f32 \
        --min 2^16 --max 2^31 --factor 4 --iters 50 --format csv
fi

note "overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
