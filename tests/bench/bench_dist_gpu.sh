#!/bin/bash
# bench_dist_gpu.sh - the distributed rows of `gpureduce bench --backend cuda`
# (label gpu): gr, cub+mpi and cub+nccl (when built) on one rank per GPU, two
# where there are two GPUs; every dtype, sizes with tails and one rotated;
# each row must pass its exact gates over global indices (#wrong 0) and print
# a time no smaller than its slowest rank's median. Exits 77 (SKIP) where no
# GPU is visible. jobs/h200-check.sh runs the measurement on 2 GPUs.
. "$(dirname "$0")/../cli/lib.sh"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIP: no GPU visible"
    exit 77
fi
if [ "${CUDA_VISIBLE_DEVICES-unset}" = "" ] || [ "${CUDA_VISIBLE_DEVICES-unset}" = "-1" ]; then
    echo "SKIP: CUDA_VISIBLE_DEVICES hides every GPU"
    exit 77
fi

rows=gr,cub+mpi
nrows=2
if $GPUREDUCE bench --help | grep -Eq "^  cub\\+nccl +cuda "; then
    rows=$rows,cub+nccl
    nrows=3
fi
np=1
[ "$(nvidia-smi -L | grep -c '^GPU ')" -ge 2 ] && np=2

# CSV: every distributed row of every group, wrong 0, ordered times
run $np bench --backend cuda --variants $rows --dtype all --min 1001 --max 1000003 --factor 999 --iters 5 \
    --warmup 1 --check 2 --format csv
expect_rc 0 "distributed rows, np $np, every dtype"
CHECKS=$((CHECKS + 1))
got=$(python3 - "$TMP/out" "$rows" "$np" <<'PY' 2>&1
import csv, sys
want = sys.argv[2].split(','); np = sys.argv[3]
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
h, body = rows[0], rows[1:]
assert all(len(r) == len(h) for r in body), 'ragged csv'
d = [dict(zip(h, r)) for r in body if r[h.index('variant')] in want]
# sizes 1001 999999 1000003, 6 dtypes (f16 and bf16 too)
assert len(d) == 3 * 6 * len(want), (len(d), 3 * 6 * len(want))
for r in d:
    t, lo, av, hi = (float(r[k]) for k in ('time_us', 'rank_min_us', 'rank_avg_us', 'rank_max_us'))
    assert r['wrong'] == '0' and r['np'] == np and 0 < lo <= av <= hi <= t, r
    assert float(r['x_mpi']) > 0, r
print('ok')
PY
)
[ "$got" = ok ] || fail "csv: $got"

# the table, and the summary of gr's ratios
run $np bench --backend cuda --variants $rows --dtype f32 --min 2^16 --max 2^20 --factor 16 --iters 10
expect_rc 0 "table, np $np"
expect_out "^# checks: every row matched" "table: checks"
expect_out "^# distributed rows \\($(echo $rows | tr , ' ' | sed 's/+/\\+/g')\\): np $np" "table: dist header"
expect_out "^# distributed: gr vs cub\\+mpi .* lowest [0-9.]+x at 2\\^(16|20) f32" "table: gr vs cub+mpi summary"
if [ $nrows = 3 ]; then
    expect_out "NCCL [0-9]+\\.[0-9]+\\.[0-9]+, NCCL_NVLS_ENABLE=0" "table: NCCL version, NVLS off"
    expect_out "^# distributed: gr vs cub\\+nccl " "table: gr vs cub+nccl summary"
fi

finish
