# device-lib.sh - shared by the GPU-machine scripts (jobs/h200*.sh): the
# environment, a summary file, and `step`, which runs one command with its own
# time limit inside an overall deadline and records PASS/FAIL in $SUMMARY.
# Source it after `cd` to the repository root; set DEADLINE (seconds) first.
OUT=${OUT:-./out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export PATH=$PATH:/usr/local/cuda/bin
# NVLink multicast must stay off on the shared machines (KINDS.md).
export NCCL_NVLS_ENABLE=0
# Open MPI as root, local only (no network, not CUDA-aware)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
DEADLINE=${DEADLINE:-540}
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }

step() { # step NAME SECONDS LOG CMD... : run with a time limit, record the outcome
    local name=$1 limit=$2 log=$3
    shift 3
    local t0=$SECONDS rc
    if [ $((SECONDS + limit)) -gt "$DEADLINE" ]; then
        limit=$((DEADLINE - SECONDS))
        if [ $limit -lt 15 ]; then
            note "SKIP  $name: out of time (deadline ${DEADLINE} s)"
            failed=1
            return 1
        fi
    fi
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        note "PASS  $name ($((SECONDS - t0)) s)"
    else
        if [ $rc -eq 124 ]; then note "FAIL  $name: timed out after ${limit} s"; else note "FAIL  $name: exit $rc ($((SECONDS - t0)) s)"; fi
        failed=1
    fi
    return $rc
}

# configure with or without MPFR (the GPU machines have none and no network:
# the exact-mode MPFR tests then run in CI only)
configure_args() {
    CMAKE_ARGS=(-S . -B "$1" -DCMAKE_BUILD_TYPE=Release)
    if ! pkg-config --exists mpfr 2>/dev/null && [ ! -f /usr/include/mpfr.h ]; then
        CMAKE_ARGS+=(-DGR_MPFR_TESTS=OFF)
    fi
}

# clocks_summary CSV: one line from `nvidia-smi --query-gpu=timestamp,index,clocks.sm,
# clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader,
# nounits` samples: SM clock and power range, and how many samples had the software power
# cap (0x4), a hardware slowdown (0x8, 0x40, 0x80) or the thermal limit (0x20) active.
clocks_summary() {
    awk -F', *' '
        NF >= 7 && $3 ~ /^[0-9]+$/ {
            n++; sm = $3 + 0; w = $5 + 0
            h = toupper($7); r = 16 * (index("0123456789ABCDEF", substr(h, length(h) - 1, 1)) - 1) + \
                index("0123456789ABCDEF", substr(h, length(h), 1)) - 1 # low byte of the reasons (POSIX awk)
            if (n == 1 || sm < smin) smin = sm; if (sm > smax) smax = sm
            if (n == 1 || w < wmin) wmin = w; if (w > wmax) wmax = w
            if (int(r / 4) % 2) cap++
            if (int(r / 8) % 2 || int(r / 64) % 2 || int(r / 128) % 2) hw++
            if (int(r / 32) % 2) th++
        }
        END {
            if (n == 0) { print "      clocks: no samples"; exit }
            printf "      clocks: %d samples, SM %d-%d MHz, %.0f-%.0f W; power cap active in %d, hw slowdown in %d, thermal in %d\n", n, smin, smax, wmin, wmax, cap, hw, th
        }' "$1"
}
