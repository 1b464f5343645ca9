#!/usr/bin/env bash
# Fast mode does not depend on the collective algorithm Open MPI picks:
# every coll_tuned reduce algorithm 0..7 gives the same bits at np = 4 and 5,
# every allreduce algorithm 0..6 (all_ranks=1) at np = 5 gives those bits too.
# usage: test_reduce_algorithms.sh MPI_BITS_EXE
set -u
exe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! $MPIRUN --version 2>&1 | grep -qiE "open ?mpi|openrte|open-mpi"; then
    echo "SKIP: the algorithm sweep needs Open MPI's coll_tuned"; exit 77
fi
fail=0
run() { # out np what coll-param k
    local out=$1 np=$2 what=$3 param=$4 k=$5
    if ! $MPIRUN --mca coll_tuned_use_dynamic_rules 1 --mca "$param" "$k" \
        -np "$np" "$exe" "$what" 2 >"$out" 2>"$out.err"; then
        echo "FAIL: np=$np $param=$k ($what) exited non-zero"; cat "$out.err" "$out"; fail=1
    fi
}
for np in 4 5; do
    for k in 0 1 2 3 4 5 6 7; do
        out="$tmp/reduce.np$np.k$k"
        run "$out" "$np" fast coll_tuned_reduce_algorithm "$k"
        if ! diff -u "$tmp/reduce.np$np.k0" "$out"; then
            echo "FAIL: np=$np: reduce algorithm $k differs from algorithm 0"; fail=1
        fi
    done
    n=$(wc -l <"$tmp/reduce.np$np.k0")
    [ "$n" -ge 20 ] || { echo "FAIL: np=$np printed $n results"; fail=1; }
done
for k in 0 1 2 3 4 5 6; do
    out="$tmp/allreduce.np5.k$k"
    run "$out" 5 fast-all coll_tuned_allreduce_algorithm "$k"
    if ! diff -u "$tmp/reduce.np5.k0" "$out"; then
        echo "FAIL: np=5: all_ranks with allreduce algorithm $k differs from the reduce to the root"; fail=1
    fi
done
[ $fail -eq 0 ] && echo "reduce algorithms 0..7 (np 4, 5) and allreduce algorithms 0..6 (np 5): identical bits"
exit $fail
