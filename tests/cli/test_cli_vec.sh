#!/bin/bash
# test_cli_vec.sh - --op dot|nrm2|argmin|argmax in every format, synthetic and
# files (--input twice for dot), --verify, np 1..5 identity, usage errors.
. "$(dirname "$0")/lib.sh"
B="--backend cpu --repeat 2 --warmup 0"

# exact dot and nrm2, argmin/argmax: the same bits and index for several np, --verify ok
# (exact_vec_mpfr_np1..5 cover every np through the library; here the CLI path)
for op in dot nrm2 argmin argmax; do
    want=""
    nps="1 3 5"
    case $op in nrm2 | argmin) nps="1 4" ;; esac
    for np in $nps; do
        run $np --op $op --dtype f64 --gen normal --n 10007 --mode exact --verify $B --format json
        expect_rc 0 "$op np $np"
        got=$(json_get "d['result_hex'] + ' ' + str(d.get('index', '-')) + ' ' + str(d['verify']['ok'])")
        [ -z "$want" ] && want=$got
        expect_eq "$got" "$want" "$op exact: np $np same bits as np 1"
        expect_eq "${got##* }" "True" "$op np $np verify"
    done
done

# argmin/argmax: table line, JSON integer key, CSV column
run 2 --op argmax --dtype i32 --gen randint --n 1000 $B
expect_rc 0 "argmax table"; expect_out '^index +[0-9]+ ' "argmax table index line"
run 2 --op argmin --dtype i32 --gen randint --n 1000 $B --format json
expect_rc 0 "argmin json"
expect_eq "$(json_get "type(d['index']).__name__ + ' ' + str(d['result'])")" "int 0" "argmin json index is an int, value 0"
# randint 0..9: the first 0 decides; the index is that of the lowest one
idx=$(json_get "d['index']")
run 3 --op argmin --dtype i32 --gen randint --n 1000 $B --format csv
expect_rc 0 "argmin csv"
expect_out '^np,n,dtype,op,mode,backend,source,seed,run,result,result_hex,index,' "csv header has index"
expect_eq "$(sed -n 2p "$TMP/out" | cut -d, -f12)" "$idx" "csv index column equals np 2's JSON index"
run 2 --op dot --dtype f32 --gen uniform --n 1000 $B --format csv
expect_rc 0 "dot csv"
if grep -q ',index,' "$TMP/out"; then fail "dot csv has no index column"; fi

# fast dot/nrm2 verify (rounding expected) passes; i64 dot is exact
run 2 --op dot --dtype f32 --n 100000 --verify $B
expect_rc 0 "fast f32 dot verify"; expect_out 'rounding expected: ok' "fast dot verify text"
run 3 --op dot --dtype i64 --gen stress --n 3000 --verify $B
expect_rc 0 "i64 dot verify"; expect_out 'must be exact: ok' "i64 dot exact"
run 2 --op nrm2 --dtype bf16 --gen normal --n 5000 --mode exact --verify $B
expect_rc 0 "bf16 exact nrm2 verify"; expect_out 'bf16 0x' "bf16 result bits printed"

# exact f64 sumsq: accepted now, and verified
run 3 --op sumsq --dtype f64 --gen stress --n 3000 --mode exact --verify $B
expect_rc 0 "exact f64 sumsq verify"; expect_out 'must be exact: ok' "exact f64 sumsq text"

# files: dot of two files equals the synthetic dot with seeds S and S+1
run 2 gen --out "$TMP/x.npy" --n 4099 --dtype f64 --gen normal --seed 5 --backend cpu
expect_rc 0 "gen x"
run 2 gen --out "$TMP/y.npy" --n 4099 --dtype f64 --gen normal --seed 6 --backend cpu
expect_rc 0 "gen y"
run 3 --op dot --mode exact --input "$TMP/x.npy" --input "$TMP/y.npy" --backend cpu --format json
expect_rc 0 "dot of files"
fdot=$(json_get "d['result_hex']")
run 2 --op dot --mode exact --dtype f64 --gen normal --n 4099 --seed 5 $B --format json
expect_eq "$(json_get "d['result_hex']")" "$fdot" "file dot == synthetic dot (y from seed + 1)"
run 2 --op argmax --input "$TMP/x.npy" --backend cpu --format json
expect_rc 0 "argmax of a file"; fidx=$(json_get "d['index']")
run 4 --op argmax --dtype f64 --gen normal --n 4099 --seed 5 $B --format json
expect_eq "$(json_get "d['index']")" "$fidx" "file argmax index == synthetic"
run 2 --op nrm2 --mode exact --dtype f64 --input "$TMP/x.npy" --chunk 1K --backend cpu
expect_rc 0 "nrm2 of a file in 1K reads"

# usage errors
run 2 --op dot --input "$TMP/x.npy" --backend cpu
expect_rc 2 "dot with one file"; expect_err 'needs two' "dot one file text"
run 2 --op nrm2 --input "$TMP/x.npy" --input "$TMP/y.npy" --backend cpu
expect_rc 2 "nrm2 with two files"; expect_err 'only --op dot' "two files text"
run 2 --op sum --input "$TMP/x.npy" --input "$TMP/y.npy" --backend cpu
expect_rc 2 "sum with two files"
run 1 --op dot --input a --input b --input c
expect_rc 2 "three inputs"; expect_err 'third time' "three inputs text"
run 1 --op argmax --dtype f64 --n 100 --root 3
expect_rc 2 "root out of range"
run 1 scale --weak 1K --op dot
expect_rc 2 "scale with dot"
run 1 --op dotx
expect_rc 2 "unknown op"; expect_err 'argmax' "unknown op lists the new ops"
finish
