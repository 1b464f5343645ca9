#!/bin/bash
# bench_cpu.sh - `gpureduce bench --backend cpu`: the harness itself, on any
# machine (label cli). Header, placement, one row per (size, dtype, row) with
# #wrong 0, the three formats, bad options (exit 2), and --backend cuda where
# the build or the machine has no GPU (a clear failure, not a hang).
. "$(dirname "$0")/../cli/lib.sh"

# table_rows_ok [COL]: every data row of a table has #wrong (column COL: 11,
# or 14 with --full) == 0; prints the number of data rows, or BAD
table_rows_ok() {
    awk -v c="${1:-11}" '!/^#/ && NF > 10 { n++; if ($c != "0") bad++ } END { print (bad ? "BAD" : n + 0) }' "$TMP/out"
}

for np in 1 2; do
    run $np bench --backend cpu --min 2^10 --max 2^14
    expect_rc 0 "cpu bench np $np"
    expect_out "^# gpureduce [0-9.]+ bench: np $np, backend cpu" "header (np $np)"
    expect_out "^#  +rank +host" "placement header (np $np)"
    expect_out "^# +$((np - 1)) " "placement row of the last rank (np $np)"
    expect_out "size\\(B\\) +count +dtype +variant" "column header (np $np)"
    expect_out "^# checks: every row matched" "checks line (np $np)"
    CHECKS=$((CHECKS + 1))
    rows=$(table_rows_ok)
    # sizes 2^10 2^12 2^14, rows cpu and loop, and with np > 1 the distributed row gr (in `all`)
    want=$((np > 1 ? 9 : 6))
    [ "$rows" = $want ] || fail "np $np: expected $want data rows with #wrong 0, got '$rows'"
    CHECKS=$((CHECKS + 1))
    n=$(grep -Ec "^ +[0-9]+ +[0-9]+ +f32 +gr +host +[0-9.]+ " "$TMP/out")
    [ "$n" = $((np > 1 ? 3 : 0)) ] || fail "np $np: $n timed gr rows (in all only when np > 1)"
    for v in cpu loop; do
        for n in 1024 4096 16384; do
            CHECKS=$((CHECKS + 1))
            grep -Eq "^ +$((n * 4)) +$n +f32 +$v +host +[0-9.]+ +[0-9.]+ " "$TMP/out" ||
                fail "np $np: no timed f32 $v row for n=$n"
        done
    done
done

# every dtype, a size that is not a power of two, and --max always measured
run 1 bench --backend cpu --dtype all --min 1000 --max 3001 --factor 3 --full
expect_rc 0 "all dtypes"
CHECKS=$((CHECKS + 1))
[ "$(table_rows_ok 14)" = 36 ] || fail "all dtypes: expected 3 sizes x 6 dtypes (f16, bf16 too) x 2 rows with #wrong 0"
expect_out "^ +24008 +3001 +i64 +loop" "--max 3001 measured after 1000, 3000"
expect_out "min\\(us\\) +max\\(us\\) +p99\\(us\\)" "--full columns"

run 1 bench --backend cpu --variants loop --dtype i32,f64 --min 2^12 --max 2^12 --iters 3 --warmup 0
expect_rc 0 "--variants loop"
CHECKS=$((CHECKS + 1))
[ "$(table_rows_ok)" = 2 ] || fail "--variants loop: expected 2 rows"
CHECKS=$((CHECKS + 1))
grep -Eq " cpu +host" "$TMP/out" && fail "--variants loop ran the cpu row"

# CSV: '#' preamble, then one header and the rows; the note is quoted
run 2 bench --backend cpu --min 2^10 --max 2^11 --factor 2 --format csv
expect_rc 0 "csv"
CHECKS=$((CHECKS + 1))
hdr=$(grep -v '^#' "$TMP/out" | head -1)
# (np 2: `all` has the distributed row gr, which adds its columns after note)
[ "$hdr" = "size_bytes,count,dtype,variant,mem,time_us,gbps,pct_copy,pct_peak,x_cub,wrong,note,np,rank_min_us,rank_avg_us,rank_max_us,x_mpi,x_nccl" ] ||
    fail "csv header: '$hdr'"
CHECKS=$((CHECKS + 1))
n=$(grep -v '^#' "$TMP/out" | tail -n +2 | awk -F, '$11 == "0" && $6 + 0 > 0' | wc -l)
[ "$n" = 6 ] || fail "csv: expected 6 rows (cpu, loop, gr x 2 sizes) with wrong 0 and a time, got $n"
run 1 bench --backend cpu --min 2^10 --max 2^11 --factor 2 --format csv
CHECKS=$((CHECKS + 1))
hdr=$(grep -v '^#' "$TMP/out" | head -1)
[ "$hdr" = "size_bytes,count,dtype,variant,mem,time_us,gbps,pct_copy,pct_peak,x_cub,wrong,note" ] ||
    fail "csv header, np 1 (no distributed row): '$hdr'"

# JSON: parses, placement of both ranks, rows with wrong 0
run 2 bench --backend cpu --min 2^10 --max 2^10 --format json --full
expect_rc 0 "json"
CHECKS=$((CHECKS + 1))
got=$(json_get "len(d['placement']), len(d['rows']), sum(r['wrong'] for r in d['rows']), d['wrong_rows'], \
all(r['time_us']['median'] > 0 for r in d['rows'])" 2>&1)
[ "$got" = "2 3 0 0 True" ] || fail "json: placement, rows (cpu, loop, gr), wrong: $got"

# --check 0: no gate, '-' for #wrong
run 1 bench --backend cpu --min 2^10 --max 2^10 --check 0
expect_rc 0 "--check 0"
expect_out "^# checks: skipped" "--check 0 line"

# bad options: exit 2 with a message (all on 1 rank, a few on 2)
for args in "--frobnicate" "--min 0" "--min 12Q" "--max -3" "--factor 1" "--factor x" "--dtype f8" \
    "--dtype f32,f128" "--variants nope" "--variants v3" "--iters 0" "--warmup -1" "--check x" \
    "--format xml" "--backend tpu" "--min 2^20 --max 2^10" "--full=1" "--iters"; do
    # shellcheck disable=SC2086
    run 1 bench --backend cpu $args
    expect_rc 2 "bench --backend cpu $args"
    expect_err "gpureduce bench: |--" "message for $args"
done
for args in "--frobnicate" "--variants nope" "--min 2^20 --max 2^10"; do
    # shellcheck disable=SC2086
    run 2 bench --backend cpu $args
    expect_rc 2 "bench --backend cpu $args (np 2)"
done
run 1 bench --backend cpu --max 2^5
expect_rc 2 "--max below the default --min"
expect_err "--min 1024 \(the default\) is larger than --max 32" "the message says which bound is a default"
run 1 bench --help
expect_rc 0 "--help"
expect_out "--variants LIST" "help lists --variants"
expect_out "^  loop " "help lists the cpu rows"
if [ "${GR_WITH_CUDA:-ON}" != OFF ]; then
    expect_out "^  v7 " "help lists the ladder"
    run 1 bench --backend cpu --variants v3
    expect_err "'v3' is a cuda row" "cuda row named on the cpu backend"
else
    expect_out "built without CUDA" "help says the cuda rows are absent"
fi

# --backend cuda without CUDA or without a GPU: fails, says why, no hang
if [ "${GR_WITH_CUDA:-ON}" = OFF ]; then
    run 1 bench --backend cuda --min 2^10 --max 2^10
    expect_rc 1 "--backend cuda in a build without CUDA"
    expect_err "built without CUDA" "no-CUDA message"
else
    CUDA_VISIBLE_DEVICES= run 1 bench --backend cuda --min 2^10 --max 2^10
    expect_nonzero "--backend cuda with no GPU visible"
    expect_err "GPU" "no-GPU message"
fi

finish
