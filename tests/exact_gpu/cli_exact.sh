#!/bin/bash
# cli_exact.sh - `gpureduce --mode exact` on the GPU gives the bits of the cpu
# backend and of the exact CPU reference (--verify), for np 1 and 2, forced
# grid sizes and block sizes, f32 and f64, sum/abssum/sumsq.
#
#   GPUREDUCE=build/gpureduce MPIRUN="mpirun --oversubscribe" bash cli_exact.sh [--quick]
#
# --quick: four specs at 2^18, np 1 and 2 only. GR_EXACT_CLI_BIG=0 leaves out
# the 2^28 case (about a minute of CPU for its reference).
# Exit 77 (SKIP) where the cuda backend finds no GPU. Sizes: the cuda runs go
# to 2^28 (the brief's stress f64 case); the cpu backend runs at 2^24.
. "$(dirname "$0")/../cli/lib.sh"

QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
COMMON=(--mode exact --format json --bind none --share-gpus --repeat 2 --warmup 1)

run 1 --backend cuda --mode exact --n 1000 --format json --bind none
if [ "$RC" -ne 0 ]; then
    if grep -Eqi "no CUDA GPU|no GPU|not compiled|GR_ERR_NO_GPU" "$TMP/err"; then
        echo "SKIP: the cuda backend sees no GPU here"
        exit 77
    fi
    fail "cuda backend, --mode exact, n=1000"
    finish
    exit 1
fi

# hex NP ARGS...: run and print result_hex (empty on failure, which is recorded)
hex() {
    local np=$1
    shift
    run "$np" "${COMMON[@]}" "$@"
    if [ "$RC" -ne 0 ]; then
        fail "np $np $*: exit $RC"
        echo ""
        return
    fi
    json_get "d['result_hex']"
}

# same DESC A B: the two hex strings are equal and non-empty
same() {
    CHECKS=$((CHECKS + 1))
    if [ -z "$2" ] || [ "$2" != "$3" ]; then
        echo "FAIL: $1: '$2' != '$3'"
        FAILS=$((FAILS + 1))
    else
        echo "ok: $1: $2"
    fi
}

# cpu vs cuda (np 1, 2; grids 1, 7, 132; block 512) on the same data
N=2^22
[ $QUICK -eq 1 ] && N=2^18
SPECS=("f64 stress sum" "f64 uniform sum" "f64 normal abssum" "f32 stress sum" "f32 uniform sum" "f32 normal sumsq"
    "f32 iota abssum" "f32 ones sum")
[ $QUICK -eq 1 ] && SPECS=("f64 stress sum" "f64 normal abssum" "f32 stress sum" "f32 normal sumsq")
for spec in "${SPECS[@]}"; do
    set -- $spec
    args=(--dtype "$1" --gen "$2" --op "$3" --n $N --seed 7)
    cpu=$(hex 1 --backend cpu "${args[@]}")
    same "$spec n=$N cpu vs cuda np1" "$cpu" "$(hex 1 --backend cuda "${args[@]}")"
    same "$spec n=$N cpu vs cuda np2" "$cpu" "$(hex 2 --backend cuda "${args[@]}")"
    if [ $QUICK -eq 0 ]; then
        for g in 1 7 132; do
            same "$spec n=$N cpu vs cuda grid $g" "$cpu" "$(hex 1 --backend cuda --cuda-grid $g "${args[@]}")"
        done
        same "$spec n=$N cpu vs cuda np2 block 512" "$cpu" \
            "$(hex 2 --backend cuda --cuda-block 512 "${args[@]}")"
    fi
done

# the brief's case: stress f64 at 2^28 on the GPU, np 1 and 2, against the exact
# CPU reference (--verify); the cpu backend itself at 2^24 against cuda at 2^24
if [ "${GR_EXACT_CLI_BIG:-1}" = 1 ]; then
    big=(--dtype f64 --gen stress --n 2^28)
    g1=$(hex 1 --backend cuda "${big[@]}" --verify)
    CHECKS=$((CHECKS + 1))
    json_get "d['verify']['ok']" | grep -q True || { FAILS=$((FAILS + 1)); echo "FAIL: stress f64 2^28 --verify"; }
    g2=$(hex 2 --backend cuda "${big[@]}")
    same "stress f64 n=2^28 cuda np1 vs np2" "$g1" "$g2"
    c24=$(hex 1 --backend cpu --dtype f64 --gen stress --n 2^24)
    same "stress f64 n=2^24 cpu vs cuda" "$c24" "$(hex 1 --backend cuda --dtype f64 --gen stress --n 2^24)"
    c24=$(hex 1 --backend cpu --dtype f32 --gen stress --n 2^24)
    same "stress f32 n=2^24 cpu vs cuda np2" "$c24" "$(hex 2 --backend cuda --dtype f32 --gen stress --n 2^24)"
fi

# f64 sumsq in exact mode (issue 20: every square exact by TwoProduct): the GPU's bits are the cpu's
for g in stress uniform; do
    c=$(hex 1 --backend cpu --dtype f64 --op sumsq --gen $g --n 1000003)
    same "f64 sumsq $g n=1000003 cpu vs cuda np2" "$c" "$(hex 2 --backend cuda --dtype f64 --op sumsq --gen $g --n 1000003)"
done

finish
