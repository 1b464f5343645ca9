#!/bin/bash
# h200x2-dist.sh - the distributed rows of `gpureduce bench` (gr, cub+mpi,
# cub+nccl) on the 2-GPU H200 machine, one rank per GPU, run as root:
#
#   bash jobs/h200x2-dist.sh          (from the repository root, or anywhere)
#
# Builds build-gpu (Release, the CLI only, -j32), then runs
#   1. mpirun -np 2 gpureduce bench --variants gr,cub+mpi,cub+nccl --dtype f32
#      --min 2^16 --max 2^31 --factor 4 --iters 50 --format csv   -> $OUT/dist.csv
#   2. the same as a table                                         -> $OUT/dist.txt
#   3. the gpu test of these rows (ctest -R gpu_bench_dist), when time is left.
# Logs under $OUT (./out when unset); $OUT/summary.txt has one line per step and
# the rows' own summary lines (gr's ratios over each baseline). Every step has
# its own time limit, and all of them together stay under 4 minutes.
#
# NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is exported here, and
# gpureduce sets it before ncclCommInitRank when it is unset anyway.
#
# With the device tool (kind nvidia-h200-x2), run the committed tree:
#   echo /.benchrun/ >> .git/info/exclude
#   rm -rf .benchrun && mkdir .benchrun && git archive HEAD | tar -x -C .benchrun
#   run: cd .benchrun && bash jobs/h200x2-dist.sh      (carry: [".benchrun"])
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-./out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export PATH=$PATH:/usr/local/cuda/bin
export NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none
MPIRUN="mpirun --allow-run-as-root"
BUILD=build-gpu
BUDGET=230 # seconds for every step together (the job's limit is 4 minutes)
START=$SECONDS
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }
step() { # step NAME SECONDS LOG CMD...: at most SECONDS, and never past the budget
    local name=$1 limit=$2 log=$3
    shift 3
    local left=$((BUDGET - (SECONDS - START)))
    [ $left -lt $limit ] && limit=$left
    if [ $limit -lt 5 ]; then
        note "SKIP  $name: the ${BUDGET} s budget is spent"
        failed=1
        return 124
    fi
    local t0=$SECONDS rc
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
    nvidia-smi topo -m || true
    nvidia-smi --query-gpu=name,pci.bus_id,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
    nvcc --version || true
    cmake --version | head -1
    mpirun --version 2>&1 | head -1 || echo "no mpirun"
    grep -E "define NCCL_(MAJOR|MINOR|PATCH)" /usr/local/cuda/include/nccl.h || echo "no nccl.h in /usr/local/cuda"
    env | grep -E "^NCCL_|^TORCH_SYMM|^NVSHMEM_" || true
    nproc
} >"$OUT/system.txt" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -2 | paste -sd';')"

CMAKE_ARGS=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release)
if ! pkg-config --exists mpfr 2>/dev/null && [ ! -f /usr/include/mpfr.h ]; then
    # only the exact-mode tests need MPFR; let configure pass without it
    CMAKE_ARGS+=(-DGR_MPFR_INCLUDE_DIR=/usr/include -DGR_MPFR_LIBRARY=mpfr-not-installed
        -DGR_GMP_LIBRARY=gmp-not-installed)
fi
step configure 40 "$OUT/build.log" cmake "${CMAKE_ARGS[@]}" || { note "stopping: configure failed"; exit 1; }
grep -E "bench: (cub\+nccl|no cub\+nccl)" "$OUT/build.log" | sed 's/^-- /      /' | tee -a "$SUMMARY"
step build 130 "$OUT/build.log" cmake --build "$BUILD" -j32 --target gpureduce_cli ||
    { note "stopping: build failed (see build.log)"; exit 1; }
CLI=$BUILD/gpureduce
$CLI bench --help | grep -E "^  (gr|cub\+mpi|cub\+nccl) +cuda|cub\+nccl.*absent" | sed 's/^/      /' >>"$SUMMARY"

ARGS=(bench --backend cuda --variants gr,cub+mpi,cub+nccl --dtype f32 --min 2^16 --max 2^31 --factor 4 --iters 50)
# 1. CSV (jobs/plot reads it), 2. the same as a table
step "bench dist csv" 30 "$OUT/dist.csv" $MPIRUN -np 2 "$CLI" "${ARGS[@]}" --format csv
step "bench dist table" 30 "$OUT/dist.txt" $MPIRUN -np 2 "$CLI" "${ARGS[@]}"
grep -E "^# (checks|WRONG|distributed:)|NCCL_NVLS" "$OUT/dist.txt" | cut -c1-220 | sed 's/^/      /' | tee -a "$SUMMARY"
# the gr rows of the table, for a quick look
grep -E "^ +[0-9]+ +[0-9]+ +f32 +gr " "$OUT/dist.txt" | awk '{print "      gr " $2 ": " $6 " us, x-mpi " $15 ", x-nccl " $16}' |
    tee -a "$SUMMARY"
# 3. the gpu test, with what time is left
step "ctest gpu_bench_dist" 40 "$OUT/ctest.log" ctest --test-dir "$BUILD" -R gpu_bench_dist -V --timeout 35

note "total $((SECONDS - START)) s; overall: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
