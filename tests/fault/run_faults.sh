#!/bin/bash
# run_faults.sh - fault injection for every file path (issue: a full disk must
# not produce a "wrote" line). Each case runs gpureduce under mpirun with the
# LD_PRELOAD shim tests/fault/gr_fault.c (GR_FAULT_*), bounded by a timeout,
# and checks: non-zero exit, a one-line error naming the file and the cause,
# no partial output left, input files unmodified, no rank hangs.
#   run_faults.sh SHIM [--gpu]
# --gpu: only the read cases, on the cuda backend's stream path (exit 77
# without a GPU). Needs GPUREDUCE and MPIRUN (set by CTest).
set -u
SHIM=$1
MODE=${2:-cpu}
: "${GPUREDUCE:?}" "${MPIRUN:?}"
T=$(mktemp -d /tmp/gr_fault.XXXXXX)
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
BACKEND=cpu
if [ "$MODE" = --gpu ]; then
    command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU || { echo "SKIP: no GPU visible"; exit 77; }
    BACKEND=cuda
fi
# several ranks on the one GPU of a test machine (the cpu backend ignores it)
SHARE=$([ "$BACKEND" = cuda ] && echo --share-gpus)

bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME NP [GR_FAULT_VAR=value ...] -- gpureduce args: runs it, sets $rc and $err.
run() {
    local name=$1 np=$2; shift 2
    local envs=(-x LD_PRELOAD="$SHIM")
    while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done
    shift
    echo "--- $name"
    rm -f "$T/out.npy"
    timeout 90 $MPIRUN -np "$np" "${envs[@]}" "$GPUREDUCE" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    err=$(grep -v '^--\|^ *$\|^Primary job\|^a non-zero\|^mpirun detected\|^the job to be\|^  Process name\|^  Exit code\|^Per user' "$T/err")
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then bad "$name: timed out (a rank hangs?)"; fi
}

# expect_fail NAME FILE CAUSE: non-zero exit, an error line naming FILE and CAUSE, no "wrote" line
expect_fail() {
    local name=$1 file=$2 cause=$3
    [ $rc -ne 0 ] || bad "$name: exit status 0"
    grep -q '^wrote' "$T/out" && bad "$name: printed a 'wrote' line"
    echo "$err" | grep 'error' | grep -F "$file" | grep -q -- "$cause" ||
        bad "$name: no error line naming '$file' and '$cause'; stderr was: $err"
    echo "$err" | grep 'error' | head -2 | sed 's/^/    /'
}

gen() { echo gen --out "$1" --n 2^20 --dtype f32 --chunk 1M --backend "$BACKEND" $SHARE; }

if [ "$MODE" != --gpu ]; then
    O=$T/out.npy
    # disk full while the header is written (rank 0, first bytes)
    run header-full 2 GR_FAULT_OP=write GR_FAULT_PATH=$O GR_FAULT_RANK=0 GR_FAULT_AFTER=0 -- $(gen $O)
    expect_fail header-full "$O" ENOSPC; [ -e "$O" ] && bad "header-full: partial file left"
    # disk full in the first chunk of rank 1
    run first-chunk-rank1 2 GR_FAULT_OP=write GR_FAULT_PATH=$O GR_FAULT_RANK=1 GR_FAULT_AFTER=0 -- $(gen $O)
    expect_fail first-chunk-rank1 "$O" "rank 1 (host"; [ -e "$O" ] && bad "first-chunk-rank1: partial file left"
    # disk full in a middle chunk of rank 0, and of rank 2 of 3
    run middle-chunk-rank0 2 GR_FAULT_OP=write GR_FAULT_PATH=$O GR_FAULT_RANK=0 GR_FAULT_AFTER=1500000 -- $(gen $O)
    expect_fail middle-chunk-rank0 "$O" ENOSPC; [ -e "$O" ] && bad "middle-chunk-rank0: partial file left"
    # np 3: which ranks write is MPI-IO's choice (collective buffering), so every rank's disk is full
    run middle-chunk-np3 3 GR_FAULT_OP=write GR_FAULT_PATH=$O GR_FAULT_AFTER=1048576 -- $(gen $O)
    expect_fail middle-chunk-np3 "$O" ENOSPC; [ -e "$O" ] && bad "middle-chunk-np3: partial file left"
    # quota exceeded; an I/O error at sync
    run quota 2 GR_FAULT_OP=write GR_FAULT_ERRNO=EDQUOT GR_FAULT_PATH=$O GR_FAULT_RANK=1 GR_FAULT_AFTER=2000000 -- $(gen $O)
    expect_fail quota "$O" EDQUOT; [ -e "$O" ] && bad "quota: partial file left"
    run sync-eio 2 GR_FAULT_OP=fsync GR_FAULT_ERRNO=EIO GR_FAULT_PATH=$O -- $(gen $O)
    expect_fail sync-eio "$O" EIO; [ -e "$O" ] && bad "sync-eio: partial file left"
    # permission denied at open
    run open-eacces 2 GR_FAULT_OP=open GR_FAULT_ERRNO=EACCES GR_FAULT_PATH=$O -- $(gen $O)
    expect_fail open-eacces "$O" "ermission denied"; [ -e "$O" ] && bad "open-eacces: file left"
    # the output directory removed mid-write
    mkdir -p "$T/sub"
    run dir-removed 2 GR_FAULT_OP=rmdir GR_FAULT_PATH=$T/sub/ GR_FAULT_RANK=0 GR_FAULT_AFTER=1500000 -- $(gen "$T/sub/o.npy")
    expect_fail dir-removed "$T/sub/o.npy" ENOENT
    # a real full file system, where the machine lets us mount one
    mkdir -p "$T/small"
    if mount -t tmpfs -o size=2m tmpfs "$T/small" 2>/dev/null; then
        echo "--- tmpfs-2MiB"
        timeout 90 $MPIRUN -np 2 "$GPUREDUCE" $(gen "$T/small/x.npy") >"$T/out" 2>"$T/err"
        rc=$?
        err=$(cat "$T/err")
        expect_fail tmpfs-2MiB "$T/small/x.npy" ENOSPC; [ -e "$T/small/x.npy" ] && bad "tmpfs: partial file left"
    else
        echo "--- tmpfs-2MiB: not run (mount not permitted here); the shim cases cover the paths"
    fi
    # results: stdout on a full device, and --output (checked, atomic)
    echo "--- stdout-full"
    timeout 60 "$GPUREDUCE" --n 1000 --backend cpu >/dev/full 2>"$T/err"
    rc=$?; err=$(cat "$T/err")
    [ $rc -ne 0 ] || bad "stdout-full: exit status 0"
    echo "$err" | grep -q "standard output failed" || bad "stdout-full: no error line; stderr: $err"
    # --output on a full file system (stdio's writes bypass the shim, so a real one)
    R=$T/small/res.csv
    if mountpoint -q "$T/small"; then
        rm -f "$T/small/"*
        dd if=/dev/zero of="$T/small/fill" bs=64k 2>/dev/null
        echo "--- output-full"
        timeout 60 $MPIRUN -np 2 "$GPUREDUCE" --n 1000 --backend cpu --format csv --output "$R" >"$T/out" 2>"$T/err"
        rc=$?; err=$(cat "$T/err")
        [ $rc -ne 0 ] || bad "output-full: exit status 0"
        echo "$err" | grep -F "$R" | grep -q "failed" || bad "output-full: no error naming $R; stderr: $err"
        ls "$T/small" | grep -q 'res.csv' && bad "output-full: a result file was left: $(ls "$T/small")"
        echo "$err" | grep -F "$R" | sed 's/^/    /'
    else
        echo "--- output-full: not run (mount not permitted here)"
    fi
    R=$T/res.csv
    run output-ok 2 -- --n 1000 --backend cpu --format csv --output "$R"
    [ $rc -eq 0 ] && grep -q ',sum,' "$R" && [ ! -s "$T/out" ] || bad "output-ok: rc $rc, no complete result file, or results on stdout"
    ls "$T" | grep -q 'res.csv.tmp' && bad "output-ok: a temporary file was left"
fi

# --- reads: a file made without faults, then read with them
I=$T/in.npy
timeout 60 $MPIRUN -np 2 "$GPUREDUCE" gen --out "$I" --n 2^20 --dtype f32 --backend cpu >/dev/null 2>&1 || bad "making the input"
cp "$I" "$T/other.npy"
sum0=$(md5sum <"$I")
hexof() { tail -1 "$1" | grep -o '0x[0-9a-fp.+-]*' | head -1; }
timeout 60 $MPIRUN -np 2 "$GPUREDUCE" --input "$I" --backend "$BACKEND" $SHARE --format csv --chunk 1M >"$T/ref" 2>/dev/null
ref=$(hexof "$T/ref")
[ -n "$ref" ] || bad "no reference result for the input"
run read-eio 2 GR_FAULT_OP=read GR_FAULT_ERRNO=EIO GR_FAULT_PATH=$I GR_FAULT_RANK=1 GR_FAULT_AFTER=1000000 -- --input "$I" --backend "$BACKEND" $SHARE --chunk 1M
expect_fail read-eio "$I" EIO
# np 3 with every rank's reads failing: Open MPI's collective read hung here; no rank may hang
run read-eio-np3 3 GR_FAULT_OP=read GR_FAULT_ERRNO=EIO GR_FAULT_PATH=$I GR_FAULT_AFTER=1000000 -- --input "$I" --backend "$BACKEND" $SHARE --chunk 1M
expect_fail read-eio-np3 "$I" EIO
run read-truncated 2 GR_FAULT_OP=truncate GR_FAULT_SIZE=3000000 GR_FAULT_PATH=$I GR_FAULT_RANK=1 GR_FAULT_AFTER=500000 -- --input "$I" --backend "$BACKEND" $SHARE --chunk 1M
expect_fail read-truncated "$I" "ended early"
cp "$T/other.npy" "$I"; sum0=$(md5sum <"$I")
cp "$I" "$T/with.npy"; timeout 60 $MPIRUN -np 1 "$GPUREDUCE" gen --out "$T/with.npy" --n 2^20 --seed 9 --force --backend cpu >/dev/null 2>&1
run read-replaced 2 GR_FAULT_OP=replace GR_FAULT_WITH=$T/with.npy GR_FAULT_PATH=$I GR_FAULT_RANK=0 GR_FAULT_AFTER=500000 -- --input "$I" --backend "$BACKEND" $SHARE --format csv --chunk 1M
# the open file is read to its end: the result is the original file's
[ $rc -eq 0 ] && [ "$(hexof "$T/out")" = "$ref" ] || bad "read-replaced: rc $rc, result '$(hexof "$T/out")' != '$ref'"
run open-input-eacces 2 GR_FAULT_OP=open GR_FAULT_ERRNO=EACCES GR_FAULT_PATH=$T/other.npy -- --input "$T/other.npy" --backend "$BACKEND" $SHARE
expect_fail open-input-eacces "$T/other.npy" "ermission denied"
[ "$(md5sum <"$T/other.npy")" = "$sum0" ] || bad "an input file was modified"

if [ $fails -ne 0 ]; then
    echo "$fails fault case(s) FAILED"
    exit 1
fi
echo "all fault cases passed"
