# The input file is never opened for writing: every open of it is logged by
# the open_guard shim (which also refuses write opens), and its bytes and
# mtime are unchanged after reductions on 1 and 3 ranks.
. "$(dirname "$0")/lib_io.sh"
cd "$TMP" || exit 1
C="--backend cpu"

run 2 gen --out in.npy --n 100000 --gen uniform --dtype f64
expect_rc 0 "gen"
touch -d '2001-02-03 04:05:06' in.npy
sum0=$(sha256sum in.npy | cut -d' ' -f1)
mtime0=$(stat -c %y in.npy)
for np in 1 3; do
    rm -f guard.log
    GR_GUARD_PATH="$TMP/in.npy" GR_GUARD_LOG="$TMP/guard.log" LD_PRELOAD="$GR_OPEN_GUARD" \
        run $np --input in.npy $C --mode exact --chunk 64K --repeat 2
    expect_rc 0 "reduce under the guard (np $np)"
    CHECKS=$((CHECKS + 1))
    opens=$(grep -c rdonly guard.log 2>/dev/null || true)
    writes=$(grep -c WRITE guard.log 2>/dev/null || true)
    # rank 0's probe, then MPI_File_open on every rank
    [ "$opens" -ge $((np + 1)) ] || fail "np $np: expected at least $((np + 1)) read-only opens of the input, saw $opens"
    CHECKS=$((CHECKS + 1))
    [ "$writes" -eq 0 ] || fail "np $np: the input was opened for writing ($writes times): $(cat guard.log)"
done
# the guard does refuse a write open (so a pass above means something)
GR_GUARD_PATH="$TMP/in.npy" GR_GUARD_LOG="$TMP/guard.log" LD_PRELOAD="$GR_OPEN_GUARD" \
    run 1 gen --out in.npy --n 10 --force
expect_nonzero "gen --force over a guarded file"
CHECKS=$((CHECKS + 1))
grep -q WRITE guard.log || fail "the guard did not see the write open"
CHECKS=$((CHECKS + 1))
[ "$(sha256sum in.npy | cut -d' ' -f1)" = "$sum0" ] || fail "the input's bytes changed"
CHECKS=$((CHECKS + 1))
[ "$(stat -c %y in.npy)" = "$mtime0" ] || fail "the input's mtime changed: $(stat -c %y in.npy) != $mtime0"
finish
