# gen -> --input: the file holds the synthetic dataset, so reducing it gives
# the bits of the synthetic run in exact mode, for any np and any --chunk;
# gen itself writes the same bytes for any np.
. "$(dirname "$0")/lib_io.sh"
cd "$TMP" || exit 1
C="--backend cpu"
N=10007 # prime: no np or chunk divides it

for dt in f32 f64 i32 i64 f16 bf16; do
    case $dt in f*) gens="uniform stress" ;; *) gens="stress randint" ;; esac
    for g in $gens; do
        f=$dt-$g.npy
        run 2 gen --out $f --n $N --gen $g --dtype $dt --seed 7 --chunk 4K
        expect_rc 0 "gen $f"; expect_out "^wrote $f: n $N, dtype $dt, gen $g, seed 7, np 2" "gen summary"
        # the same bytes whatever np wrote them
        for np in 1 3; do
            run $np gen --out w$np.npy --n $N --gen $g --dtype $dt --seed 7 $([ $np = 3 ] && echo --chunk 100)
            CHECKS=$((CHECKS + 1))
            cmp -s $f w$np.npy || fail "gen $dt $g: np $np wrote different bytes than np 2"
            rm -f w$np.npy
        done
        CHECKS=$((CHECKS + 1))
        python3 "$IO_DIR/npyw.py" check-header $f --descr "$(case $dt in f32) echo '<f4';; f64) echo '<f8';; i32) echo '<i4';; i64) echo '<i8';; f16) echo '<f2';; bf16) echo bfloat16;; esac)" --shape $N \
            || fail "gen $f: header bytes differ from numpy's"
        for op in sum min max abssum; do
            run 1 --gen $g --n $N --dtype $dt --seed 7 --op $op --mode exact $C --repeat 1 --warmup 0
            expect_rc 0 "synthetic $dt $g $op"
            want=$(result_hex)
            nps="3"
            [ $op = sum ] && nps="1 2 3 4"
            for np in $nps; do
                run $np --input $f --op $op --mode exact $C
                expect_rc 0 "input $f $op np $np"
                expect_eq "$(result_hex)" "$want" "input $f $op np $np: same bits as --gen $g"
            done
        done
    done
done

# exact mode: the bits do not depend on the chunk (in bytes; not a multiple
# of the item size rounds down to whole items), nor on np
run 1 --input f64-stress.npy --mode exact $C
want=$(result_hex)
for chunk in 1 8 13 24 1000 4K 8191 64K 1G; do
    for np in 1 3; do
        run $np --input f64-stress.npy --mode exact $C --chunk $chunk
        expect_rc 0 "chunk $chunk np $np"
        expect_eq "$(result_hex)" "$want" "f64 stress, --chunk $chunk, np $np"
    done
done
run 2 --input f32-uniform.npy --mode exact $C --chunk 4
want=$(result_hex)
run 2 --input f32-uniform.npy --mode exact $C --chunk 40000
expect_eq "$(result_hex)" "$want" "f32 uniform: 1-element and whole-shard chunks"
# reads per rank: ceil(ceil(N/np) * 8 / chunk) = ceil(3336 * 8 / 8000)
run 3 --input f64-stress.npy --mode exact $C --chunk 8000
expect_out "chunk 8000 bytes \(4 reads per rank\)" "reads per rank reported"

# fast mode: the same bits for the same np and chunk, run after run
run 3 --input f64-uniform.npy $C --chunk 8K --repeat 4
expect_rc 0 "fast repeat"; expect_out "^repeatable +yes" "fast mode repeatable"

# json: read and reduce GB/s are separate fields
run 2 --input f32-uniform.npy --mode exact $C --format json
expect_rc 0 "json"
CHECKS=$((CHECKS + 1))
json_get "d['gbps']['read'] > 0 and d['gbps']['reduce'] > 0 and d['input']['format'] == 'npy' and d['n'] == $N" \
    | grep -q True || fail "json: gbps.read, gbps.reduce, input.format, n"
run 2 --input f32-uniform.npy $C --format csv --repeat 2
expect_rc 0 "csv"; expect_out "^np,input,format,n,dtype,op,mode,backend,chunk_bytes,run,result" "csv header"

# --force overwrites (and a smaller file is truncated to its new size)
run 2 gen --out f64-stress.npy --n 5 --gen ones --dtype f64 --force
expect_rc 0 "gen --force"
CHECKS=$((CHECKS + 1))
[ "$(stat -c %s f64-stress.npy)" -eq $((128 + 5 * 8)) ] || fail "gen --force: size $(stat -c %s f64-stress.npy)"
run 2 --input f64-stress.npy $C
expect_eq "$(result_dec)" "5" "overwritten file reduces to its new values"
# n = 0 and n < np: ranks without data still take part
run 3 gen --out zero.npy --n 0 --dtype i32 --gen ones
expect_rc 0 "gen n 0"
run 3 --input zero.npy $C --mode exact
expect_rc 0 "empty array"; expect_eq "$(result_dec)" "0" "sum of no elements"
run 4 gen --out two.npy --n 2 --gen iota --dtype i64
run 4 --input two.npy $C --op max
expect_eq "$(result_dec)" "1" "2 elements over 4 ranks"
finish
