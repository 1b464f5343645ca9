# gpureduce scale: steps, columns, speedup/efficiency formulas, formats, errors.
. "$(dirname "$0")/../cli/lib.sh"

# csv_check PYTHON-EXPR: evaluates EXPR with rows = list of dicts from the CSV in OUT
csv_check() {
    python3 -c "import csv; rows=list(csv.DictReader(open('$TMP/out'))); print($1)"
}

# strong, exact, np 5 (not a power of two): steps 1 2 4 5, same bits on every step
run 5 scale --strong 1M --backend cpu --mode exact --repeat 3 --warmup 1 --format csv
expect_rc 0 "strong csv np 5"
CHECKS=$((CHECKS + 1))
v=$(csv_check "' '.join(r['ranks'] for r in rows)")
[ "$v" = "1 2 4 5" ] || fail "strong steps: '$v', expected '1 2 4 5'"
CHECKS=$((CHECKS + 1))
v=$(csv_check "len({r['result_hex'] for r in rows}), {r['n'] for r in rows}, {r['nodes'] for r in rows}, {r['study'] for r in rows}")
[ "$v" = "1 {'1048576'} {'1'} {'strong'}" ] || fail "strong: one exact result, constant n, one node: $v"
CHECKS=$((CHECKS + 1))
v=$(csv_check "all(abs(float(r['speedup']) - float(rows[0]['time_median_s'])/float(r['time_median_s'])) <= 1e-4*float(r['speedup']) and abs(float(r['efficiency']) - float(r['speedup'])/int(r['ranks'])) <= 1e-4*float(r['efficiency']) for r in rows)")
[ "$v" = "True" ] || fail "strong: speedup = t1/tp and efficiency = speedup/p: $v"
CHECKS=$((CHECKS + 1))
v=$(csv_check "all(float(r['time_min_s']) <= float(r['time_median_s']) <= float(r['time_max_s']) and abs(float(r['gbps']) - int(r['bytes'])/float(r['time_median_s'])/1e9) <= 1e-4*float(r['gbps']) for r in rows)")
[ "$v" = "True" ] || fail "min <= median <= max and GB/s = bytes/median: $v"

# weak, np 3: steps 1 2 3, n = SIZE * ranks, efficiency = t1/tp, speedup = p * efficiency
run 3 scale --weak 2^18 --backend cpu --dtype i64 --gen iota --repeat 2 --format csv
expect_rc 0 "weak csv np 3"
CHECKS=$((CHECKS + 1))
v=$(csv_check "' '.join(r['ranks'] + ':' + r['n'] for r in rows)")
[ "$v" = "1:262144 2:524288 3:786432" ] || fail "weak steps and sizes: '$v'"
CHECKS=$((CHECKS + 1))
v=$(csv_check "all(abs(float(r['efficiency']) - float(rows[0]['time_median_s'])/float(r['time_median_s'])) <= 1e-4*float(r['efficiency']) and abs(float(r['speedup']) - int(r['ranks'])*float(r['efficiency'])) <= 1e-4*float(r['speedup']) for r in rows)")
[ "$v" = "True" ] || fail "weak: efficiency = t1/tp and speedup = p*t1/tp: $v"
CHECKS=$((CHECKS + 1))
# iota: element i is i mod 1000, so the sums are known
v=$(csv_check "' '.join(r['result'] for r in rows)")
exp=$(python3 -c "print(' '.join(str(sum(i % 1000 for i in range(n))) for n in (262144, 524288, 786432)))")
[ "$v" = "$exp" ] || fail "weak iota results: '$v', expected '$exp'"

# JSON: one document, the study's keys and a row per step; placement of the world
run 4 scale --weak 64K --backend cpu --repeat 2 --format json
expect_rc 0 "weak json np 4"
CHECKS=$((CHECKS + 1))
v=$(json_get "d['command'], d['study'], d['size_per_rank'], d['np'], len(d['placement']), [r['ranks'] for r in d['rows']], sorted(d['rows'][0].keys())")
[ "$v" = "scale weak 65536 4 4 [1, 2, 4] ['bytes', 'combine_median', 'efficiency', 'gbps', 'gpus', 'local_median', 'n', 'nodes', 'ranks', 'repeatable', 'result_hex', 'result_str', 'speedup', 'time']" ] ||
    fail "json document: $v"

# table (default): context header, placement, one row per step, 1-rank speedup 1
run 2 scale --strong 2^20 --backend cpu --gen ones --repeat 2
expect_rc 0 "table np 2"
expect_out "^# gpureduce .* scale: strong, 1048576 elements in total, dtype f32, op sum" "table header"
expect_out "^#  +0 +" "placement row"
expect_out "^ +ranks +nodes +gpus +elements +median\(us\)" "column header"
expect_out "^ +1 +1 +0 +1048576 .* 1\.000 +100\.0 +1048576$" "1-rank row"
expect_out "^ +2 +1 +0 +1048576 " "2-rank row"

# a single rank is a one-row study
run 1 scale --strong 1000 --backend cpu --repeat 1 --format csv
expect_rc 0 "np 1"
CHECKS=$((CHECKS + 1))
[ "$(grep -c '^strong,' "$TMP/out")" = 1 ] || fail "np 1: one row expected"

# fake GPUs (hwloc fixture): the placement shows them, the cpu backend uses none
GR_TOPOLOGY_XML="$GR_SRC/tests/topo/dgx8.xml" GR_FAKE_GPUS=0000:07:00.0,0000:0f:00.0,0000:47:00.0,0000:4e:00.0 \
    run 4 scale --strong 64K --backend cpu --repeat 1
expect_rc 0 "fake GPUs"
expect_out "^# +3 .*0000:4e:00.0" "placement of rank 3 on the fourth fake GPU"
expect_out "^ +4 +1 +0 +65536 " "4-rank row, no GPU used by the cpu backend"
CHECKS=$((CHECKS + 1))
if grep -q "got another GPU" "$TMP/err"; then fail "sub-communicators kept the world's GPUs"; fi

# usage errors: exit 2 with a message that says what to do
run 1 scale --backend cpu
expect_rc 2 "scale without a study"
expect_err "give the study: --weak SIZE .* or --strong SIZE" "missing study message"
run 1 scale --weak 1M --strong 1M
expect_rc 2 "weak and strong"
expect_err "exclude each other" "weak+strong message"
run 1 scale --weak 1M --n 1M
expect_rc 2 "scale with --n"
expect_err "scale takes --strong TOTAL or --weak PER_RANK" "--n message"
run 1 scale --weak 1M --verify
expect_rc 2 "scale with --verify"
run 1 scale --weak 1M --input /dev/null
expect_rc 2 "scale with --input"
expect_err "--input is for a single reduction" "--input message"
run 1 scale --weak nonsense
expect_rc 2 "bad size"
expect_err "--weak: cannot parse size 'nonsense'" "bad size message"
run 1 --weak 1M
expect_rc 2 "--weak without scale"
expect_err "belong to the scale command" "--weak without scale message"
run 1 scale --strong 1M --dtype i32 --gen uniform
expect_rc 2 "integer with uniform"
run 1 scale --help
expect_rc 0 "scale --help"
expect_out "gpureduce scale --weak SIZE \| --strong SIZE" "usage names scale"

finish
