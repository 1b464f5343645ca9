# --op stats on input files: one pass; counts, min/max, nanmin/nanmax, the
# exact sum and mean bit for bit against Python's rationals, variances to
# 1e-12; sum and mean the same bits for any np, the variance repeatable.
. "$(dirname "$0")/lib_io.sh"
cd "$TMP" || exit 1
C="--backend cpu"
CHECK="python3 $IO_DIR/check_stats.py"

check() { # FILE NP EXTRA...: run --op stats, compare with Python
    local f=$1 np=$2
    shift 2
    run $np --input $f --op stats --format json $C "$@"
    expect_rc 0 "stats $f np $np $*"
    CHECKS=$((CHECKS + 1))
    local why
    why=$($CHECK $f "$TMP/out" 2>&1) || fail "stats $f np $np $*: $why"
}

for spec in "<f8 randexp" "<f8 specials" "<f4 rand" "<f4 infs" "<f4 nans" "<i4 randexp" "<i8 randexp" "<f2 rand" "bfloat16 randexp"; do
    set -- $spec
    f="s_$(echo "$1" | tr -d '<')_$2.npy"
    $NPYW write $f --descr "$1" --shape 5003 --values $2 --seed 9 >/dev/null
    for np in 1 2 3; do
        check $f $np --chunk 4K
    done
done
# sum and mean: the same bits for any np and chunk; everything repeatable
$NPYW write r.npy --descr '<f8' --shape 20011 --values randexp --seed 2 >/dev/null
run 1 --input r.npy --op stats --format json $C
sum1=$(json_get "d['stats']['sum_hex'] + ' ' + d['stats']['mean_hex']")
for np in 2 4; do
    run $np --input r.npy --op stats --format json $C --chunk 24K --repeat 3
    expect_eq "$(json_get "d['stats']['sum_hex'] + ' ' + d['stats']['mean_hex']")" "$sum1" "sum and mean, np $np"
    expect_eq "$(json_get "d['repeatable']")" "True" "stats repeatable, np $np"
done
# empty and one-element arrays
$NPYW write e.npy --shape 0 >/dev/null
check e.npy 2
$NPYW write one.npy --shape 1 --values ones --descr '<f8' >/dev/null
check one.npy 3
run 2 --input r.npy --op stats $C
expect_rc 0 "stats table"; expect_out "^var_sample " "table lists the sample variance"
run 2 --input r.npy --op stats $C --format csv
expect_out "^np,input,dtype,count,nan,pinf,ninf,sum,mean,var,var_sample,min,max,nanmin,nanmax,isum,overflow,imin,imax,read_s,total_s" "csv header"
# a path with a comma and a quote: CSV quotes it (RFC 4180), JSON escapes it
cp r.npy 'we,ird"name.npy'
run 2 --input 'we,ird"name.npy' --op stats $C --format csv
expect_eq "$(python3 -c "import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[0]['input'])" "$TMP/out")" \
    'we,ird"name.npy' "csv input path round trip"
run 2 --input 'we,ird"name.npy' --op stats $C --format json
expect_eq "$(json_get "d['input'] + ' ' + str(len(d['placement']))")" 'we,ird"name.npy 2' "json input path and placement"
run 2 --input 'we,ird"name.npy' $C --format csv
expect_eq "$(python3 -c "import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[0]['input'])" "$TMP/out")" \
    'we,ird"name.npy' "csv input path round trip (reduce)"
# misuse
run 2 --op stats --n 100 $C
expect_rc 0 "stats on synthetic data (tests/stats_gpu/test_cli_stats.sh checks its values)"
run 2 --input r.npy --op stats --mode exact $C
expect_rc 2 "stats with --mode"; expect_err "--mode does not apply to --op stats" "stats --mode text"
finish
