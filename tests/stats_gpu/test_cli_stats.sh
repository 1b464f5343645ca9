# gpureduce --op stats on synthetic data with the cpu backend: every field
# against its closed form (all ones, iota = i mod 1000), for np 1 and 3, in
# table, CSV and JSON; the misuse that is refused. Needs python3 for JSON.
. "$GR_SRC/tests/cli/lib.sh"
C="--backend cpu --bind none"

# json_field KEY: d['stats'][KEY] (or d[KEY] with a leading '.') of the last run's stdout
json_field() {
    python3 -c "import json,sys; d=json.load(open('$TMP/out')); k='$1'; print(repr(d[k[1:]] if k[0]=='.' else d['stats'][k]))"
}
expect_field() { # KEY WANT DESCRIPTION
    CHECKS=$((CHECKS + 1))
    local got
    got=$(json_field "$1" 2>&1)
    [ "$got" = "$2" ] || fail "$3: $1 = $got, expected $2"
}
# expect_num KEY WANT: the same number (JSON prints 1000.0 as 1000)
expect_num() {
    CHECKS=$((CHECKS + 1))
    python3 -c "import json,sys; d=json.load(open('$TMP/out')); g=d['stats']['$1']; sys.exit(0 if g is not None and float(g) == float('$2') else 1)" ||
        fail "$3: $1 = $(json_field "$1"), expected $2"
}
# expect_close KEY WANT: |got - want| <= 1e-12 |want|
expect_close() {
    CHECKS=$((CHECKS + 1))
    python3 -c "import json,sys; d=json.load(open('$TMP/out')); g=d['stats']['$1']; w=float('$2'); sys.exit(0 if abs(g-w) <= 1e-12*abs(w) else 1)" ||
        fail "$3: $1 = $(json_field "$1"), expected $2 within 1e-12"
}

for np in 1 3; do
    for t in f32 f64 i32 i64; do
        if [ $np = 3 ] && { [ $t = f64 ] || [ $t = i32 ]; }; then continue; fi # np 3: one float, one integer type
        # ones: n = 1000
        run $np --op stats --gen ones --n 1000 --dtype $t --format json --repeat 2 --warmup 0 $C
        expect_rc 0 "ones $t np $np"
        expect_num count 1000 "ones $t np $np"
        expect_num sum 1000.0 "ones $t np $np"
        expect_num mean 1.0 "ones $t np $np"
        expect_num var 0.0 "ones $t np $np"
        expect_num var_sample 0.0 "ones $t np $np"
        expect_num min 1.0 "ones $t np $np"
        expect_num nanmax 1.0 "ones $t np $np"
        expect_num nan 0 "ones $t np $np"
        expect_field .backend "'cpu'" "ones $t np $np"
        expect_field .repeatable True "ones $t np $np"
        # iota: n = 2500 = 2 x 1000 + 500: sum 2 x 499500 + 124750
        run $np --op stats --gen iota --n 2500 --dtype $t --format json --warmup 0 $C
        expect_rc 0 "iota $t np $np"
        expect_num count 2500 "iota $t np $np"
        expect_num sum 1123750.0 "iota $t np $np"
        expect_num mean 449.5 "iota $t np $np"
        expect_num min 0.0 "iota $t np $np"
        expect_num max 999.0 "iota $t np $np"
        # sum x^2 = 2 x 332833500 + 41541750 = 707208750; M2 = 707208750 - 1123750^2 / 2500 = 202083125
        expect_close var 80833.25 "iota $t np $np"
        expect_close var_sample 80865.5962384954 "iota $t np $np"
    done
done
run 1 --op stats --gen iota --n 2500 --dtype i64 --format json --warmup 0 $C
expect_num isum 1123750 "iota i64 isum"
expect_num imax 999 "iota i64 imax"
# text and CSV: the same printer as --input
run 3 --op stats --gen ones --n 1000 $C --repeat 2
expect_rc 0 "stats table"
expect_out "^# gpureduce .*n 1000, dtype f32, op stats, gen ones, seed .*backend cpu" "table header"
expect_out "^count +1000 \(NaN 0, \+Inf 0, -Inf 0\)" "table count"
expect_out "^var_sample " "table var_sample"
expect_out "^repeatable +yes" "table repeatable"
run 2 --op stats --gen ones --n 1000 $C --format csv
expect_rc 0 "stats csv"
expect_out "^np,n,gen,seed,dtype,backend,count,nan,pinf,ninf,sum,mean,var,var_sample,min,max,nanmin,nanmax,isum,overflow,imin,imax,local_s,total_s" "csv header"
expect_out "^2,1000,ones,[0-9]+,f32,cpu,1000,0,0,0,1000,1,0,0,1,1,1,1,,,,," "csv row (no integer fields for f32)"
# integers: the exact sum, min and max in every format (f64 rounds values beyond 2^53)
run 2 --op stats --gen stress --n 1000 --dtype i64 $C --repeat 1
expect_out "^isum +-?[0-9]+$" "table isum"; expect_out "^imin +-?[0-9]{16,}$" "table imin (exact digits)"
expect_out "^imax +[0-9]{16,}$" "table imax"
expect_out "^# +1 +" "table lists rank 1's placement"
run 2 --op stats --gen stress --n 1000 --dtype i64 $C --repeat 1 --format json
imin_json=$(json_get "d['stats']['imin']")
expect_eq "$(json_get "len(d['placement'])")" "2" "json placement, both ranks"
run 2 --op stats --gen stress --n 1000 --dtype i64 $C --repeat 1 --format csv
expect_eq "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(r[0]['imin'])" "$TMP/out")" \
    "$imin_json" "csv imin is JSON's exact imin"
# empty data: count 0, everything else NaN (null in JSON)
run 2 --op stats --gen ones --n 0 --format json $C
expect_rc 0 "stats n 0"
expect_num count 0 "n 0"
expect_field mean None "n 0"
# misuse
run 1 --op stats --gen ones --n 10 --mode exact $C
expect_rc 2 "stats with --mode"; expect_err "--mode does not apply to --op stats" "stats --mode text"
run 1 --op stats --gen ones --n 10 --verify $C
expect_rc 2 "stats with --verify"; expect_err "--verify does not apply to --op stats" "stats --verify text"
run 1 --op stats --gen uniform --n 10 --dtype i32 $C
expect_rc 2 "stats uniform i32"; expect_err "makes real numbers" "stats uniform i32 text"
run 1 --op stats --gen ones --n 10 --dtype f16 $C
expect_rc 2 "stats f16"; expect_err "takes --dtype f32, f64, i32 or i64" "stats f16 text"
echo "cli stats: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
