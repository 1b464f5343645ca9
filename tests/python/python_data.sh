#!/usr/bin/env bash
# python_data.sh - the data and the gpureduce command's results that the
# Python tests compare against (CTest fixture python_data): adversarial .npy
# files from make_data.py, the command's exact results on them (--format
# json), and a synthetic dataset written by `gpureduce gen` with the command's
# exact sum of the same generator. Exit 77 when numpy is missing, and in a
# sanitizer build (where the Python tests skip).
# Environment from CTest: GPUREDUCE, MPIRUN, GR_SRC, GR_BUILD, GR_PYTHON.
set -euo pipefail
: "${GPUREDUCE:?}" "${MPIRUN:?}" "${GR_SRC:?}" "${GR_BUILD:?}" "${GR_PYTHON:?}"
. "$GR_SRC/tests/python/common.sh"
python_needs numpy
out=$GR_BUILD/python_data
rm -rf "$out"
mkdir -p "$out"
"$GR_PYTHON" "$GR_SRC/tests/python/make_data.py" "$out"
cli() { # name args...: the command's JSON result, exact mode, cpu backend, np 2
    local name=$1
    shift
    $MPIRUN -np 2 "$GPUREDUCE" --backend cpu --mode exact --repeat 1 --warmup 0 --format json --quiet \
        --output "$out/$name.json" "$@"
}
for op in sum nrm2 min max argmin argmax; do
    cli "adv_f64_$op" --input "$out/adv_f64.npy" --op "$op"
done
for op in sum nrm2; do
    cli "adv_f32_$op" --input "$out/adv_f32.npy" --op "$op"
done
cli dot_f64 --op dot --input "$out/dot_x.npy" --input "$out/dot_y.npy"
for f in ties nan; do
    cli "${f}_argmin" --input "$out/$f.npy" --op argmin
    cli "${f}_argmax" --input "$out/$f.npy" --op argmax
done
$MPIRUN -np 2 "$GPUREDUCE" gen --out "$out/stress_f64.npy" --n 100003 --gen stress --dtype f64 --seed 7 --quiet
cli stress_f64_sum --gen stress --n 100003 --dtype f64 --seed 7 --op sum
echo "python_data: $(ls "$out" | wc -l) files in $out"
