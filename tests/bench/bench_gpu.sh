#!/bin/bash
# bench_gpu.sh - a short `gpureduce bench --backend cuda` (label gpu): every
# row, every dtype, sizes with tails (not multiples of 4, 256 or 1000) and one
# that is rotated; each row must pass its exact gates (#wrong 0) and print a
# time. Exits 77 (SKIP) where no GPU is visible.
. "$(dirname "$0")/../cli/lib.sh"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIP: no GPU visible"
    exit 77
fi
if [ "${CUDA_VISIBLE_DEVICES-unset}" = "" ] || [ "${CUDA_VISIBLE_DEVICES-unset}" = "-1" ]; then
    echo "SKIP: CUDA_VISIBLE_DEVICES hides every GPU"
    exit 77
fi

expect_rows() { # expect_rows N DESCRIPTION: N csv rows, each with wrong 0 and a time
    CHECKS=$((CHECKS + 1))
    local bad n
    n=$(grep -v '^#' "$TMP/out" | tail -n +2 | wc -l)
    bad=$(grep -v '^#' "$TMP/out" | tail -n +2 | awk -F, '$11 != "0" || !($6 + 0 > 0)' | head -5)
    [ "$n" = "$1" ] && [ -z "$bad" ] || fail "$2: $n rows (want $1); rows not right: $bad"
}

# the local rows of --help (`all` has the distributed rows only when np > 1; bench_dist_gpu.sh checks those)
rows_per_group=$($GPUREDUCE bench --help | awk '/^rows/ {on = 1; next} /^distributed rows/ {on = 0}
    on && /^  [a-z0-9-]+ +cuda / {n++} END {print n}')
# f16 / bf16 groups leave out the rows with no 2-byte form: the ladder, cub-g2g*, stats, argmax, cub-argmax
rows_per_half_group=$($GPUREDUCE bench --help | awk '/^rows/ {on = 1; next} /^distributed rows/ {on = 0}
    on && /^  [a-z0-9-]+ +cuda / && !/^  (v[0-9]|cub-g2g|stats|argmax|cub-argmax) / {n++} END {print n}')
run 1 bench --backend cuda --variants all --dtype all --min 1001 --max 1000003 --factor 999 --iters 3 \
    --warmup 1 --check 2 --format csv
expect_rc 0 "cuda bench, every row and dtype"
# sizes 1001 999999 1000003 (--max is always measured), 4 dtypes with every row, f16 and bf16
expect_rows $((3 * 4 * rows_per_group + 3 * 2 * rows_per_half_group)) "every row of every group"
for v in dot dot-exact argmax batch2; do # compared with their own CUB form: an xCUB in every group
    CHECKS=$((CHECKS + 1))
    bad=$(grep -v '^#' "$TMP/out" | awk -F, -v v="$v" '$4 == v && !($10 + 0 > 0)' | head -3)
    [ -z "$bad" ] || fail "$v rows without an xCUB: $bad"
done
for v in copy cub tuned tuned-e2e cub-e2e v0 v1 v2 v3 v4 v5 v6 v7 v8 dot dot-exact cub-dot argmax cub-argmax \
    batch2 cub-batch2; do
    CHECKS=$((CHECKS + 1))
    grep -q ",f64,$v," "$TMP/out" || fail "no f64 $v row"
done

# the table form; 2 ranks where there are 2 GPUs (max over ranks, #wrong summed)
np=1
[ "$(nvidia-smi -L | grep -c '^GPU ')" -ge 2 ] && np=2
run $np bench --backend cuda --dtype i32 --min 2^16 --max 2^16 --iters 3 --warmup 1
expect_rc 0 "table, np $np"
expect_out "^# checks: every row matched" "table, np $np: checks"
expect_out "^# rank 0 GPU: " "table: device line"

finish
