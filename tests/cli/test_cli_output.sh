# Output formats and what they must contain (issue: CLI contract).
. "$(dirname "$0")/lib.sh"

# JSON: exactly one valid document with the required keys
run 2 --backend cpu --n 1M --gen ones --format json --repeat 3 --verify
expect_rc 0 "json run"
CHECKS=$((CHECKS + 1))
keys=$(json_get "','.join(k for k in ['np','n','dtype','op','mode','backend','result','result_hex','time','gbps','placement'] if k not in d)" 2>&1)
if [ -n "$keys" ]; then fail "json keys missing: $keys"; fi
CHECKS=$((CHECKS + 1))
v=$(json_get "d['result'], d['result_hex'], d['np'], d['n'], d['backend'], len(d['placement']), d['verify']['ok']")
if [ "$v" != "1048576 0x1p+20 2 1048576 cpu 2 True" ]; then fail "json values: $v"; fi
CHECKS=$((CHECKS + 1))
t=$(json_get "all(d['time'][p][s] >= 0 for p in ('local','combine','total') for s in ('median','min','max'))")
if [ "$t" != "True" ]; then fail "json time block: $t"; fi

# integer results print as integers; hex is exact
run 3 --backend cpu --n 1000 --gen iota --dtype i32 --format json --repeat 2
expect_rc 0 "iota i32 json"
CHECKS=$((CHECKS + 1))
v=$(json_get "d['result'], d['result_hex']")
if [ "$v" != "499500 0x79f2c" ]; then fail "iota sum: $v"; fi

# seed 002: sum of cubes of integers 0..9
run 2 --backend cpu --n 1M --dtype i32 --gen randint --op powsum:3 --verify --format json --repeat 2
expect_rc 0 "powsum:3 randint verify"
CHECKS=$((CHECKS + 1))
v=$(json_get "d['verify']['ok'] and d['verify']['must_be_exact'] and d['result'] == d['verify']['reference']")
if [ "$v" != "True" ]; then fail "powsum:3 verify: $v"; fi

# table: header with context, result in decimal and hex, timings, bandwidth, backend on the result line
run 2 --backend cpu --n 2^20 --gen ones --repeat 3
expect_rc 0 "table run"
expect_out "^# gpureduce .*np 2, n 1048576, dtype f32, op sum, mode fast" "table header"
expect_out "^result +1048576 +0x1p\+20 +backend cpu" "table result line"
expect_out "^local +[0-9.]+ +[0-9.]+ +[0-9.]+" "local timing row"
expect_out "^combine " "combine timing row"
expect_out "^total " "total timing row"
expect_out "aggregate [0-9.]+ GB/s, per rank [0-9.]+ GB/s" "bandwidth row"
expect_out "^#  +0 +" "placement row rank 0"
expect_out "^#  +1 +" "placement row rank 1"

# csv: a header and one row per run
run 2 --backend cpu --n 4096 --format csv --repeat 4
expect_rc 0 "csv run"
CHECKS=$((CHECKS + 1))
if [ "$(grep -c . "$TMP/out")" -ne 5 ]; then fail "csv: expected header + 4 rows"; fi
expect_out "^np,n,dtype,op,mode,backend,gen,seed,run,result,result_hex" "csv header"
# csv with --verify: the reference and the verdict in every row
run 2 --backend cpu --n 4096 --gen ones --format csv --repeat 2 --verify
expect_rc 0 "csv --verify run"
expect_eq "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), r[0]['verify_ok'], r[1]['reference_hex'], r[1]['must_be_exact'])" "$TMP/out")" \
    "2 1 0x1p+12 1" "csv --verify columns"

# --per-rank multiplies by np
run 3 --backend cpu --per-rank 1000 --gen ones --format json --repeat 1
CHECKS=$((CHECKS + 1))
if [ "$(json_get "d['n'], d['result']")" != "3000 3000" ]; then fail "--per-rank"; fi

# empty shards: np > N
run 5 --backend cpu --n 3 --gen ones --format json --repeat 1 --verify
expect_rc 0 "np > N"
CHECKS=$((CHECKS + 1))
if [ "$(json_get "d['result']")" != "3" ]; then fail "np > N result"; fi

# N = 0
run 2 --backend cpu --n 0 --format json --repeat 1
expect_rc 0 "N = 0"
CHECKS=$((CHECKS + 1))
if [ "$(json_get "float(d['result']), d['count']")" != "0.0 0" ]; then fail "N = 0"; fi

# integer overflow is reported, not wrapped
run 2 --backend cpu --n 3000 --dtype i64 --gen stress --op sumsq --format json --repeat 1
expect_rc 0 "i64 sumsq overflow run"
CHECKS=$((CHECKS + 1))
if [ "$(json_get "d['overflow']")" != "True" ]; then fail "i64 sumsq of 2^62-sized values must overflow"; fi

# --all-ranks and --root give the same value
run 3 --backend cpu --n 10000 --gen normal --dtype f64 --root 2 --format json --repeat 2
a=$(json_get "d['result_hex']")
run 3 --backend cpu --n 10000 --gen normal --dtype f64 --all-ranks --format json --repeat 2
b=$(json_get "d['result_hex']")
CHECKS=$((CHECKS + 1))
if [ "$a" != "$b" ]; then fail "--root 2 ($a) and --all-ranks ($b) differ"; fi

# verify catches exactness classes: exact mode must match bit for bit
run 3 --backend cpu --n 100003 --gen stress --dtype f32 --mode exact --verify --format json --repeat 2
expect_rc 0 "exact stress verify"
CHECKS=$((CHECKS + 1))
if [ "$(json_get "d['verify']['must_be_exact'] and d['verify']['ok']")" != "True" ]; then fail "exact stress verify"; fi

finish
