#!/bin/bash
# test_io_gpu.sh - `--input FILE` on the cuda backend (the cuda stream of the
# file pipeline: pinned reads, async H2D, reduce on the GPU) against the cpu
# backend: exact mode bit for bit for several --chunk sizes (ones that do not
# divide the shard too) and np 1/2/3, fast-mode closed forms (ones, iota), an
# empty shard, an empty file, and a file of many chunks (> 4 x the chunk
# budget per rank), f16 and bf16 files. Exits 77 (SKIP) where the cuda backend
# finds no GPU.
. "$(dirname "$0")/../io/lib_io.sh"
cd "$TMP" || exit 1
G="--backend cuda --bind none --share-gpus"
C="--backend cpu"

run 1 $G --n 1000
if [ "$RC" -ne 0 ]; then
    if grep -Eqi "no CUDA GPU|no GPU|not compiled|GR_ERR_NO_GPU|cuda backend" "$TMP/err"; then
        echo "SKIP: the cuda backend sees no GPU here"
        exit 77
    fi
    fail "cuda backend, n=1000"
    finish
    exit 1
fi

N=100003 # prime: no np and no chunk divides it
for spec in f32:uniform f64:stress i32:randint i64:stress; do
    dt=${spec%%:*}; g=${spec#*:}
    run 3 gen --out $dt.npy --n $N --gen $g --dtype $dt --seed 11
    expect_rc 0 "gen $dt $g"
done

# exact: the cuda stream gives the cpu backend's bits, whatever the chunk and np
for dt in f32 f64 i32 i64; do
    case $dt in f32) ops="sum abssum sumsq min max" ;; f64) ops="sum abssum max" ;; i32) ops="sum max" ;; *) ops="sum min" ;; esac
    for op in $ops; do
        run 1 --input $dt.npy --op $op --mode exact $C
        expect_rc 0 "cpu $dt $op"
        want=$(result_hex)
        cfgs=("1 4000" "2 12292" "3 64K")
        [ $dt = f64 ] && cfgs+=("1 1G") # one chunk holds the whole shard
        for cfg in "${cfgs[@]}"; do
            np=${cfg% *}; ch=${cfg#* }
            # sum everywhere; the other ops at one setting (they take the same path)
            [ $op != sum ] && [ "$cfg" != "3 64K" ] && continue
            run $np --input $dt.npy --op $op --mode exact $G --chunk $ch
            expect_rc 0 "cuda $dt $op np $np chunk $ch"
            expect_eq "$(result_hex)" "$want" "cuda $dt $op exact np $np chunk $ch: cpu bits"
        done
    done
done

# the cuda stream ran (copies timed by events) and the json has the new fields
run 2 --input f32.npy --mode exact $G --chunk 64K --format json
expect_rc 0 "json"
CHECKS=$((CHECKS + 1))
json_get "d['time']['h2d']['median'] > 0 and d['gbps']['h2d'] > 0 and d['gbps']['pipeline'] > 0 and d['gbps']['reduce'] > 0 and d['h2d_reference']['gbps'] > 0 and d['h2d_reference']['h2d_pct'] > 0" \
    | grep -q True || fail "json: time.h2d, gbps.h2d/pipeline/reduce, h2d_reference"
# the cpu backend has no copies and no reference
run 1 --input f32.npy $C --format json
CHECKS=$((CHECKS + 1))
json_get "d['time']['h2d'] is None and d['gbps']['h2d'] is None and d['h2d_reference'] is None" | grep -q True \
    || fail "json, cpu backend: no h2d figures (null) and no reference"
# the generic stream (GR_INPUT_STREAM=generic) on cuda agrees too
run 1 --input f64.npy --mode exact $C
want=$(result_hex)
export GR_INPUT_STREAM=generic
run 1 --input f64.npy --mode exact $G --chunk 4000 --format json
unset GR_INPUT_STREAM
expect_rc 0 "generic stream"
CHECKS=$((CHECKS + 1))
json_get "d['result_hex'] == '$want' and d['time']['h2d'] is None" | grep -q True \
    || fail "GR_INPUT_STREAM=generic: cpu bits, no h2d time (null)"

# fast mode: closed forms, and the same bits run after run
run 3 gen --out ones.npy --n $N --gen ones --dtype f32
run 3 gen --out iota.npy --n $N --gen iota --dtype f64
run 3 gen --out iota64.npy --n $N --gen iota --dtype i64
IOTA=$(python3 -c "n=$N; print(sum(i % 1000 for i in range(n)))")
for cfg in "1 4000" "2 12292" "3 1M"; do
    np=${cfg% *}; ch=${cfg#* }
    run $np --input ones.npy $G --chunk $ch
    expect_eq "$(result_dec)" "$N" "fast f32 ones sum np $np chunk $ch"
    run $np --input iota.npy $G --chunk $ch
    expect_eq "$(result_dec)" "$IOTA" "fast f64 iota sum np $np chunk $ch"
    run $np --input iota64.npy $G --chunk $ch
    expect_eq "$(result_dec)" "$IOTA" "fast i64 iota sum np $np chunk $ch"
    run $np --input iota64.npy $G --chunk $ch --op max
    expect_eq "$(result_dec)" "999" "fast i64 iota max np $np chunk $ch"
done
run 2 --input f32.npy $G --chunk 12292 --repeat 4
expect_rc 0 "fast repeat"; expect_out "^repeatable +yes" "fast mode repeatable on the cuda stream"

# empty shards and an empty file: ranks without data still take every read
run 3 gen --out two.npy --n 2 --gen iota --dtype i64
run 3 --input two.npy $G --op max
expect_rc 0 "2 elements over 3 ranks"; expect_eq "$(result_dec)" "1" "2 elements over 3 ranks"
run 3 --input two.npy $G --mode exact
expect_eq "$(result_dec)" "1" "2 elements over 3 ranks, sum"
run 2 gen --out zero.npy --n 0 --dtype f32 --gen ones
run 2 --input zero.npy $G --mode exact
expect_rc 0 "empty file"; expect_eq "$(result_dec)" "0" "sum of no elements"

# many chunks: 1000003 f64 (8 MB), --chunk 64K: > 60 reads per rank at np 2
run 2 gen --out big.npy --n 1000003 --gen stress --dtype f64 --seed 5
run 1 --input big.npy --mode exact $C
want=$(result_hex)
for np in 1 2; do
    run $np --input big.npy --mode exact $G --chunk 64K
    expect_rc 0 "big np $np"
    expect_eq "$(result_hex)" "$want" "8 MB f64 stress, 64K chunks, np $np: cpu bits"
done
# f16 and bf16 files: the cuda stream moves the 2-byte items as they are (h2d > 0) and
# exact mode gives the cpu backend's bits
$NPYW write h16.npy --descr '<f2' --shape $N --values rand --seed 3 >/dev/null
$NPYW write b16.npy --descr bfloat16 --shape $N --values rand --seed 4 >/dev/null
for f in h16 b16; do
    for op in sum max; do
        run 1 --input $f.npy --op $op --mode exact $C
        expect_rc 0 "cpu $f $op"
        want=$(result_hex)
        for cfg in "1 4000" "3 12290"; do
            np=${cfg% *}; ch=${cfg#* }
            run $np --input $f.npy --op $op --mode exact $G --chunk $ch --format json
            expect_rc 0 "cuda $f $op np $np chunk $ch"
            CHECKS=$((CHECKS + 1))
            json_get "d['result_hex'].split()[0] == '$want' and d['time']['h2d']['median'] > 0" | grep -q True \
                || fail "cuda $f $op exact np $np chunk $ch: cpu bits ($want) through the cuda stream"
        done
    done
done
finish
