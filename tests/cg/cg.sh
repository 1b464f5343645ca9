#!/usr/bin/env bash
# cg.sh MODE EXE - gpureduce-cg (examples/cg, docs/CG.md): the same bits for
# any number of ranks, and on the CPU and the GPU.
#   cpu: --backend cpu at n=26 (uneven slabs for np 3 and 4): exact mode gives
#        the same iterations, residual_hex and solution_hash for np 1..4 and
#        converges; fast mode gives the same bits twice for a fixed np; the
#        cub-mpi baseline converges too.
#   gpu: --backend cuda, exact mode, np 1 and 2 (two ranks may share one GPU)
#        against the cpu backend's exact run, with the update queued before
#        the values reach the host (--update device, the default: gpureduce's
#        ordered result) and after (--update host); fast mode twice the same
#        bits, and the same with --update host; cub-mpi converges. Exit 77
#        when no GPU is visible or the build has no CUDA.
# Environment from CTest: MPIRUN.
set -euo pipefail
mode=${1:?usage: cg.sh cpu|gpu EXE}
exe=${2:?usage: cg.sh cpu|gpu EXE}
: "${MPIRUN:?}"
n=26
tol=1e-8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# run NAME NP ARGS...: the JSON line in $tmp/NAME.json, its fields (one
# python3 per run) in $tmp/NAME.f: iterations residual_hex solution_hash converged residual backend
run() {
    local name=$1 np=$2
    shift 2
    $MPIRUN -np "$np" "$exe" --n $n --tol $tol --format json "$@" > "$tmp/$name.json" 2> "$tmp/$name.err" ||
        { cat "$tmp/$name.err" >&2; fail "$name: mpirun -np $np gpureduce-cg $*"; }
    cat "$tmp/$name.json"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["iterations"], d["residual_hex"], d["solution_hash"], d["converged"], d["residual"], d["backend"])' \
        "$tmp/$name.json" > "$tmp/$name.f" || fail "$name: the output is not the JSON expected"
}
field() { # NAME INDEX (1-based, as in run's list)
    cut -d' ' -f"$2" "$tmp/$1.f"
}
# the bits that must agree, in one line
bits() { echo "iterations=$(field "$1" 1) residual_hex=$(field "$1" 2) solution_hash=$(field "$1" 3)"; }
same() { # NAME-A NAME-B WHAT
    [ "$(bits "$1")" = "$(bits "$2")" ] || fail "$3: $1 gives $(bits "$1"), $2 gives $(bits "$2")"
}
converged() { # NAME: converged, and the true residual within 10 x tol
    [ "$(field "$1" 4)" = True ] || fail "$1 did not converge: $(cat "$tmp/$1.json")"
    awk -v r="$(field "$1" 5)" -v t=$tol 'BEGIN { exit !(r + 0 <= 10 * t) }' ||
        fail "$1: true residual $(field "$1" 5) above 10 x tol"
}
backend_is() { # NAME BACKEND
    [ "$(field "$1" 6)" = "$2" ] || fail "$1 ran on backend $(field "$1" 6), not $2"
}
# fast mode twice, and the cub-mpi baseline: BACKEND NP...
fast_and_cub() {
    local backend=$1 np
    shift
    for np in "$@"; do
        run ${backend}_fast_np${np}_a $np --backend $backend --mode fast
        run ${backend}_fast_np${np}_b $np --backend $backend --mode fast
        same ${backend}_fast_np${np}_a ${backend}_fast_np${np}_b "$backend fast mode, np $np, run to run"
        converged ${backend}_fast_np${np}_a
        backend_is ${backend}_fast_np${np}_a $backend
    done
    run ${backend}_cub_np2 2 --backend $backend --dots cub-mpi
    converged ${backend}_cub_np2
}

if [ "$mode" = cpu ]; then
    for np in 1 2 3 4; do
        run exact_np$np $np --backend cpu --mode exact
        backend_is exact_np$np cpu
    done
    converged exact_np1
    for np in 2 3 4; do
        same exact_np1 exact_np$np "exact mode, np 1 vs $np"
    done
    fast_and_cub cpu 1 3
    # --time-dots synchronises before the dots: the same bits, and a positive dots time
    run exact_np2_timed 2 --backend cpu --mode exact --time-dots
    same exact_np1 exact_np2_timed "exact mode, np 1 vs np 2 with --time-dots"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["dots_time_per_iteration"] > 0)' \
        "$tmp/exact_np2_timed.json" || fail "--time-dots: no positive dots_time_per_iteration"
    # --phases needs the GPU's events: a usage error naming the fix on the cpu backend
    if $MPIRUN -np 1 "$exe" --n $n --backend cpu --phases > "$tmp/phases_cpu.out" 2>&1; then
        fail "--phases on the cpu backend succeeded"
    fi
    grep -q -- "--phases times the GPU's work" "$tmp/phases_cpu.out" ||
        fail "--phases on the cpu backend: no message saying why: $(head -3 "$tmp/phases_cpu.out")"
    # --update device needs gpureduce's ordered result on the GPU: a usage error naming the fix
    if $MPIRUN -np 1 "$exe" --n $n --backend cpu --update device > "$tmp/update_cpu.out" 2>&1; then
        fail "--update device on the cpu backend succeeded"
    fi
    grep -q -- "use --update host" "$tmp/update_cpu.out" ||
        fail "--update device on the cpu backend: no message saying why: $(head -3 "$tmp/update_cpu.out")"
    run exact_np1_host 1 --backend cpu --mode exact --update host
    same exact_np1 exact_np1_host "exact mode, np 1, --update auto vs host (the cpu backend: both host)"
    echo "cg: ok (cpu): exact np 1..4 agree ($(bits exact_np1)); fast repeatable for np 1 and 3"
    exit 0
fi

# gpu: is there one?
run probe 1 --backend auto --maxit 1
if [ "$(field probe 6)" != cuda ]; then
    echo "SKIP: gpureduce-cg sees no GPU (or was built without CUDA): --backend auto chose $(field probe 6)"
    exit 77
fi
run ref_cpu 1 --backend cpu --mode exact
converged ref_cpu
for np in 1 2; do
    for upd in device host; do
        run gpu_exact_np${np}_$upd $np --backend cuda --mode exact --update $upd
        backend_is gpu_exact_np${np}_$upd cuda
        same ref_cpu gpu_exact_np${np}_$upd "exact mode, cpu np 1 vs cuda np $np --update $upd"
    done
done
fast_and_cub cuda 1 2
# the fast runs above use --update device (auto): the update queued before the host has the values, from
# gpureduce's ordered result (one rank: written by the dots' kernel). --update host must give the same bits.
for np in 1 2; do
    run cuda_fast_np${np}_host $np --backend cuda --mode fast --update host
    same cuda_fast_np${np}_a cuda_fast_np${np}_host "fast mode, np $np, --update device vs host"
done
# --phases: the same bits, and four phases whose sum is the iteration's time (events on the stream); with
# --update device nothing on the stream waits for the host, so values is (about) 0
for run_ in gpureduce:host gpureduce:device cub-mpi:host; do
    dots=${run_%:*}
    upd=${run_#*:}
    mode=exact
    [ $dots = cub-mpi ] && mode=fast
    run gpu_phases_${dots}_$upd 2 --backend cuda --dots $dots --mode $mode --update $upd --phases
    [ $dots = gpureduce ] && same ref_cpu gpu_phases_${dots}_$upd "exact mode, cpu np 1 vs cuda np 2 with --phases"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["phases"]; t=d["time_per_iteration"]
s=p["stencil"]+p["dots"]+p["values"]+p["update"]
need=("stencil","dots","update") if d["update"]=="device" else ("stencil","dots","values","update")
ok=p["iterations"]>=1 and all(p[k]>0 for k in need) and p["values"]>=0 and 0.5*t<=s<=1.5*t
sys.exit(not ok)' "$tmp/gpu_phases_${dots}_$upd.json" ||
        fail "--phases ($dots, --update $upd): phases missing, not positive, or not adding up to time_per_iteration: $(cat "$tmp/gpu_phases_${dots}_$upd.json")"
done
echo "cg: ok (gpu): cuda exact np 1 and 2 = cpu exact ($(bits ref_cpu)); cuda fast repeatable; --phases adds up"
