# .npy forms written with Python's struct module (no numpy): versions 1-3,
# shapes, byte-order spellings, raw with --offset, and the exact sum of
# random values cross-checked against Python's exact rational arithmetic.
. "$(dirname "$0")/lib_io.sh"
cd "$TMP" || exit 1
C="--backend cpu"

# iota values = the `iota` generator: the same bits as the synthetic run
for dt in '<f4' '<f8' '<i4' '<i8' '<f2' bfloat16; do
    case $dt in '<f4') t=f32 ;; '<f8') t=f64 ;; '<i4') t=i32 ;; '<f2') t=f16 ;; bfloat16) t=bf16 ;; *) t=i64 ;; esac
    run 1 --gen iota --n 24 --dtype $t --mode exact $C --repeat 1 --warmup 0
    want=$(result_hex)
    for v in 1 2 3; do
        for shape in 24 2,3,4 1,24,1; do
            $NPYW write a.npy --descr "$dt" --shape $shape --version $v >/dev/null
            run 2 --input a.npy --mode exact $C
            expect_rc 0 "$dt v$v shape ($shape)"
            expect_eq "$(result_hex)" "$want" "$dt v$v shape ($shape)"
            expect_out "npy v$v.0, descr '$dt', shape \(" "header reported"
        done
    done
done
$NPYW write a.npy --descr '<f8' --shape 2,3,4 >/dev/null
run 1 --input a.npy $C
expect_out "shape \(2, 3, 4\)" "3-D shape text"

# 0-size and scalar arrays
$NPYW write zero.npy --shape 0 >/dev/null
run 2 --input zero.npy --mode exact $C
expect_rc 0 "shape (0,)"; expect_eq "$(result_dec)" "0" "sum of shape (0,)"
$NPYW write zero3.npy --shape 3,0,5 --descr '<i8' >/dev/null
run 3 --input zero3.npy $C
expect_rc 0 "shape (3, 0, 5)"; expect_eq "$(result_dec)" "0" "sum of shape (3, 0, 5)"
$NPYW write zero.npy --shape 0 >/dev/null
run 2 --input zero.npy --op max $C
expect_rc 0 "max of nothing"; expect_eq "$(result_dec)" "nan" "max of an empty float array is NaN"
$NPYW write scalar.npy --shape "" --descr '<f8' --values ones >/dev/null
run 2 --input scalar.npy $C --format json
expect_rc 0 "scalar"
CHECKS=$((CHECKS + 1))
json_get "d['count'] == 1 and d['result'] == 1.0 and d['input']['shape'] == '()'" | grep -q True || fail "scalar array"

# byte-order spellings that mean little-endian here
for dt in '=f4' '|f8' '|i8' '=i4'; do
    $NPYW write bo.npy --descr "$dt" --shape 100 >/dev/null
    run 1 --input bo.npy $C --mode exact
    expect_rc 0 "descr $dt"; expect_eq "$(result_dec)" "4950" "descr $dt"
done

# trailing bytes after the data: read what the header says, warn once
$NPYW write extra.npy --shape 100 --extra 7 >/dev/null
run 3 --input extra.npy $C --mode exact
expect_rc 0 "extra bytes"; expect_eq "$(result_dec)" "4950" "extra bytes ignored"
expect_err "'extra.npy': 7 bytes after the array data are ignored" "extra bytes warning"

# raw files, with and without --offset
$NPYW write raw.bin --raw --descr '<f8' --shape 1000 >/dev/null
run 3 --input raw.bin --dtype f64 --mode exact $C
expect_rc 0 "raw f64"; expect_eq "$(result_dec)" "499500" "raw f64 sum"
expect_out "input raw.bin \(raw, shape \(1000,\), data at byte 0\)" "raw reported"
$NPYW write rawoff.bin --raw --prefix 13 --descr '<i4' --shape 999 >/dev/null
run 2 --input rawoff.bin --dtype i32 --offset 13 $C
expect_rc 0 "raw i32 --offset 13"; expect_eq "$(result_dec)" "498501" "raw --offset 13 sum"
run 2 --input rawoff.bin --dtype i32 --offset 13 --op min $C
expect_eq "$(result_dec)" "0" "raw --offset 13 min"
$NPYW write rawend.bin --raw --prefix 16 --descr '<f4' --shape 0 >/dev/null
run 2 --input rawend.bin --dtype f32 --offset 16 $C --mode exact
expect_rc 0 "--offset at the end: no elements"; expect_eq "$(result_dec)" "0" "--offset at the end"
# a raw file that happens to be named .bin but holds a .npy is still read as .npy
$NPYW write isnpy.bin --shape 10 >/dev/null
run 1 --input isnpy.bin $C
expect_rc 0 ".npy by its magic"; expect_out "\(npy v1.0" ".npy by its magic"

# exact sums of random values against Python's exact rationals
for dt in '<f8' '<f4'; do
    for vals in rand randexp; do
        js=$($NPYW write r.npy --descr "$dt" --shape 3001 --values $vals --seed 11)
        want=$(json_field "$js" sum_hex)
        for np in 1 3; do
            run $np --input r.npy --mode exact $C --chunk 1000
            expect_rc 0 "$dt $vals np $np"
            expect_same_float "$(result_hex)" "$want" "$dt $vals exact sum np $np vs Python"
        done
        run 2 --input r.npy --op max $C
        expect_same_float "$(result_hex)" "$(python3 -c "print(float($(json_field "$js" max)).hex())")" "$dt $vals max"
    done
done
# f16 and bfloat16 are dtypes: exact mode rounds the exact sum once to the
# half type, fast mode accumulates in f64
for dt in '<f2' bfloat16; do
    for vals in rand randexp; do
        [ "$dt" = '<f2' ] && [ $vals = randexp ] && continue # beyond f16's range
        js=$($NPYW write h.npy --descr "$dt" --shape 2999 --values $vals --seed 5)
        for np in 1 3; do
            run $np --input h.npy --mode exact $C --chunk 1000
            expect_rc 0 "$dt $vals np $np"
            expect_same_float "$(result_hex)" "$(json_field "$js" sum_hex)" "$dt $vals exact sum np $np (rounded to $dt)"
        done
        expect_out "dtype (f16|bf16)," "$dt dtype reported"
        run 2 --input h.npy $C --op min
        expect_same_float "$(result_hex)" "$(python3 -c "print(float($(json_field "$js" min)).hex())")" "$dt $vals min"
    done
done
# rand f16 in [-1, 1]: 2999 terms on a 2^-24 grid, so the f64 sum is exact
js=$($NPYW write h.npy --descr '<f2' --shape 2999 --values rand --seed 5)
run 2 --input h.npy $C --chunk 4K
expect_same_float "$(result_hex)" "$(json_field "$js" sum64_hex)" "f16 fast sum accumulated in f64"
$NPYW write hv.npy --descr '<V2' >/dev/null
run 1 --input hv.npy $C
expect_rc 1 "<V2 without a storage choice"; expect_one_error "'hv.npy': descr '<V2' is 2 opaque bytes per item" "<V2 text"
# ... which --dtype bf16 reads as bfloat16 (npyw writes zero bytes for '<V2')
$NPYW write hv.npy --descr '<V2' --shape 100 >/dev/null
run 2 --input hv.npy --dtype bf16 --mode exact $C
expect_rc 0 "<V2 as bf16"; expect_eq "$(result_dec)" "0" "<V2 read as bf16"
expect_out "dtype bf16," "<V2 as bf16 reported"
$NPYW write hb.npy --descr bfloat16 --shape 100 >/dev/null
run 2 --input hb.npy --dtype f16 $C
expect_rc 1 "bfloat16 file with --dtype f16"; expect_err "does not match the file's descr" "dtype mismatch text"
# raw f16 / bf16 files take --dtype f16 / bf16: iota 0..199 sums to 19900, which
# exact mode rounds once to the half type (f16: ulp 16 there, bf16: ulp 128)
for t in f16 bf16; do
    $NPYW write hr.bin --raw --descr "$([ $t = f16 ] && echo '<f2' || echo bfloat16)" --shape 200 >/dev/null
    run 3 --input hr.bin --dtype $t --mode exact $C
    expect_rc 0 "raw $t"
    expect_eq "$(result_dec)" "$([ $t = f16 ] && echo 19904 || echo 19840)" "raw $t exact sum rounded to $t"
    run 3 --input hr.bin --dtype $t $C
    expect_eq "$(result_dec)" "19900" "raw $t fast sum in f64"
done

js=$($NPYW write ri.npy --descr '<i8' --shape 5000 --values randexp --seed 3)
run 4 --input ri.npy $C
expect_eq "$(result_dec)" "$(json_field "$js" sum_int)" "i64 sum vs Python"
run 4 --input ri.npy --op min $C
expect_eq "$(result_dec)" "$(json_field "$js" min)" "i64 min vs Python"
finish
