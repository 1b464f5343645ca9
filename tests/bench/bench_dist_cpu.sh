#!/bin/bash
# bench_dist_cpu.sh - the distributed row `gr` of `gpureduce bench` on the cpu
# backend (label cli), under mpirun with np 1, 2, 3: exact gates over global
# indices (#wrong 0, sizes that are not multiples of 1000), the time and
# rank columns, --iters default 50, the three formats, `all` with and without
# np > 1, the cuda-only rows refused, --help.
. "$(dirname "$0")/../cli/lib.sh"

# dist_rows_ok [WRONG_COL]: every gr row of a table has #wrong 0 and
# time >= rk-max >= rk-avg >= rk-min > 0 (the median of per-run maxima is at
# least every rank's own median); prints the number of gr rows, or BAD
dist_rows_ok() {
    awk -v c="${1:-11}" '!/^#/ && $4 == "gr" {
        n++
        t = $6; lo = $(c + 1); av = $(c + 2); hi = $(c + 3)
        if ($c != "0" || !(t + 0 > 0) || !(lo + 0 > 0) || lo + 0 > av + 0 || av + 0 > hi + 0 || hi + 0 > t + 0) {
            bad++; print "bad row: " $0 > "/dev/stderr"
        }
    } END { print (bad ? "BAD" : n + 0) }' "$TMP/out"
}

for np in 1 2 3; do
    # 1001 per rank: rank r's iota starts at 1001 r, so every shard wraps i mod 1000 elsewhere
    run $np bench --backend cpu --variants gr --dtype all --min 1001 --max 4099 --factor 4 --iters 5 --check 2
    expect_rc 0 "gr np $np"
    expect_out "^# distributed rows \\(gr\\): np $np; sizes are per rank" "dist header (np $np)"
    expect_out "median over 5 runs of the slowest rank" "dist header names --iters (np $np)"
    expect_out "rk-min\\(us\\) +rk-avg\\(us\\) +rk-max\\(us\\) +x-mpi +x-nccl" "dist column header (np $np)"
    expect_out "^# checks: every row matched" "checks line (np $np)"
    CHECKS=$((CHECKS + 1))
    # sizes 1001 4004 4099, six dtypes (f32 f64 i32 i64 f16 bf16)
    got=$(dist_rows_ok 2>>"$TMP/err")
    [ "$got" = 18 ] || fail "np $np: expected 18 gr rows, #wrong 0, ordered times; got '$got'"
    CHECKS=$((CHECKS + 1))
    grep -Eq "^ +16396 +4099 +i32 +gr +host " "$TMP/out" || fail "np $np: no i32 gr row at --max 4099"
done

# --full: min, max, p99 of the per-run maxima; #wrong moves to column 14
run 2 bench --backend cpu --variants gr --min 2^10 --max 2^10 --full --iters 4 --warmup 0
expect_rc 0 "gr --full"
CHECKS=$((CHECKS + 1))
[ "$(dist_rows_ok 14 2>>"$TMP/err")" = 1 ] || fail "gr --full: expected 1 good row"

# default: 50 runs for the distributed rows (20 for the others)
run 2 bench --backend cpu --min 2^10 --max 2^10
expect_rc 0 "default iters"
expect_out "iters 20 \\(median shown\\)" "local rows: 20 runs"
expect_out "median over 50 runs of the slowest rank" "distributed rows: 50 runs"

# `all`: gr with np > 1 only; named, it runs with np 1 too
run 1 bench --backend cpu --min 2^10 --max 2^10 --iters 3
expect_rc 0 "all, np 1"
CHECKS=$((CHECKS + 1))
grep -Eq " gr +host" "$TMP/out" && fail "all with np 1 ran the distributed row"
CHECKS=$((CHECKS + 1))
grep -q "^# distributed" "$TMP/out" && fail "all with np 1 printed the distributed header"
run 3 bench --backend cpu --min 2^10 --max 2^10 --iters 3
expect_rc 0 "all, np 3"
expect_out "^ +4096 +1024 +f32 +gr +host +[0-9.]+ " "all with np 3 has gr"

# CSV: the distributed columns after note; every line has the header's field count
run 3 bench --backend cpu --min 2^10 --max 2^11 --factor 2 --dtype f64,i64 --iters 3 --format csv
expect_rc 0 "csv np 3"
CHECKS=$((CHECKS + 1))
got=$(python3 - "$TMP/out" <<'PY' 2>&1
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
h, body = rows[0], rows[1:]
assert h[-6:] == ['np', 'rank_min_us', 'rank_avg_us', 'rank_max_us', 'x_mpi', 'x_nccl'], h
assert all(len(r) == len(h) for r in body), [len(r) for r in body]
d = [dict(zip(h, r)) for r in body]
g = [r for r in d if r['variant'] == 'gr']
assert len(g) == 4, len(g)
for r in g:
    t, lo, av, hi = (float(r[k]) for k in ('time_us', 'rank_min_us', 'rank_avg_us', 'rank_max_us'))
    assert r['np'] == '3' and r['wrong'] == '0' and 0 < lo <= av <= hi <= t, r
    assert float(r['gbps']) > 0 and r['x_mpi'] == '' and r['x_nccl'] == '', r
for r in d:
    if r['variant'] != 'gr':
        assert r['np'] == '' and r['rank_min_us'] == '', r
print('ok')
PY
)
[ "$got" = ok ] || fail "csv: $got"

# JSON: the dist key and the rows' extra fields
run 2 bench --backend cpu --min 2^10 --max 2^10 --variants gr,loop --iters 3 --format json --full
expect_rc 0 "json np 2"
CHECKS=$((CHECKS + 1))
got=$(json_get "d['dist']['rows'], d['dist']['np'], d['dist']['iters'], \
[(r['variant'], r['np'], r['wrong'], 0 < r['rank_us']['min'] <= r['rank_us']['avg'] <= r['rank_us']['max'] <= r['time_us']['median'], r['x_mpi']) for r in d['rows'] if r['variant'] == 'gr'], \
len(d['rows']), d['wrong_rows']" 2>&1)
[ "$got" = "['gr'] 2 3 [('gr', 2, 0, True, None)] 2 0" ] || fail "json: $got"

# --check 0: no gates, '-' for #wrong
run 2 bench --backend cpu --variants gr --min 2^10 --max 2^10 --iters 3 --check 0
expect_rc 0 "gr --check 0"
expect_out "^ +4096 +1024 +f32 +gr +host +[0-9.]+ +[0-9.]+ +- +- +- +- " "gr row with --check 0"

# the cuda rows on the cpu backend: refused with a message, on every rank
for np in 1 2; do
    run $np bench --backend cpu --variants gr,cub+mpi
    expect_rc 2 "cub+mpi with --backend cpu (np $np)"
    if [ "${GR_WITH_CUDA:-ON}" != OFF ]; then
        expect_err "'cub\\+mpi' is a cuda row" "cub+mpi named on the cpu backend (np $np)"
    else
        expect_err "unknown row 'cub\\+mpi'" "cub+mpi in a build without CUDA (np $np)"
    fi
done

run 1 bench --help
expect_rc 0 "--help"
expect_out "^distributed rows" "help has the distributed rows"
expect_out "^  gr +cpu +gpureduce: gr_reduce_host" "help lists gr (cpu)"
if [ "${GR_WITH_CUDA:-ON}" != OFF ]; then
    expect_out "^  cub\\+mpi +cuda " "help lists cub+mpi"
    expect_out "^  cub\\+nccl +cuda |cub\\+nccl.* is absent from this build" "help lists cub+nccl or says it is absent"
fi

finish
