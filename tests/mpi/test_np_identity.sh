#!/usr/bin/env bash
# The contract's np-invariant results (exact mode f32/f64, integers, ones,
# iota, min/max) are bit-identical for np = 1..5 and 8 and for cpu thread
# counts; np=1 and np=3 also check every value against a serial reference.
# usage: test_np_identity.sh MPI_BITS_EXE
set -u
exe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # name np threads [check]
    local name=$1 np=$2
    shift 2
    if ! $MPIRUN -np "$np" "$exe" invariant "$@" >"$tmp/$name" 2>"$tmp/$name.err"; then
        echo "FAIL: np=$np mpi_bits invariant $* exited non-zero"
        cat "$tmp/$name.err" "$tmp/$name"
        fail=1
    fi
}
run np1 1 2 check
lines=$(wc -l <"$tmp/np1")
if [ "$lines" -lt 90 ]; then
    echo "FAIL: np=1 printed $lines result lines"; cat "$tmp/np1" "$tmp/np1.err"; exit 1
fi
run np3 3 1 check
for np in 2 4 5 8; do run "np$np" "$np" 2; done
run np2t3 2 3
run np5t1 5 1
for f in np2 np3 np4 np5 np8 np2t3 np5t1; do
    if ! diff -u "$tmp/np1" "$tmp/$f" >"$tmp/diff"; then
        echo "FAIL: results differ between np=1 and $f:"
        cat "$tmp/diff"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "np identity: $lines results identical over np = 1 2 3 4 5 8 and thread counts"
exit $fail
