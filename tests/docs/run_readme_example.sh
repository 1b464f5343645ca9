#!/bin/bash
# run_readme_example.sh EXE: README.md's library program on 2 ranks must exit 0
# and print the exact sum of 2 x 10^6 doubles 0.1 (200000.0000000000111...,
# which rounds to 200000) with the backend that auto chose.
set -u
EXE=${1:?usage: run_readme_example.sh EXE}
out=$($MPIRUN -np 2 "$EXE" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
    echo "FAIL: README example exited with status $rc"
    exit 1
fi
if ! grep -Eq '^sum of 2000000 values: 200000 \(0x1\.86ap\+17\), backend (cpu|cuda)$' <<<"$out"; then
    echo "FAIL: README example did not print 'sum of 2000000 values: 200000 (0x1.86ap+17), backend cpu|cuda'"
    exit 1
fi
echo "ok"
