#!/bin/bash
# gpu_two_hosts.sh - the cuda backend on two emulated hosts (n0, n1; see
# lib.sh), one GPU each: n0 sees GPU 0, n1 GPU 1 (CUDA_VISIBLE_DEVICES per
# host; GPU 0 for both where the machine has one GPU).
#   - placement: rank 0 on n0, rank 1 on n1, local rank 0 and CUDA ordinal 0
#     on each, and (two GPUs) two different PCI bus ids;
#   - exact mode on the GPUs across hosts gives the bits of the cpu backend
#     on one host (f32 stress, f64 normal; 2^24 + 3 elements);
#   - a failure on n1 only (its input file hidden; needs a mount namespace)
#     ends the job with the line "[rank 1 host n1 gpu 0] ...".
# Exit 77 (skip) without a GPU or without namespaces. GR_MN_BACKEND=cpu runs
# the same checks with the cpu backend (no GPU in the error line), to test
# the script itself on a machine without GPUs.
. "$(dirname "$0")/lib.sh"
BACKEND=${GR_MN_BACKEND:-cuda}
G=$GPUREDUCE
NGPU=1
if [ "$BACKEND" = cuda ]; then
    probe=$(timeout 120 "$G" --backend cuda --n 1000 --repeat 1 --warmup 0 2>&1) ||
        mn_skip "the cuda backend does not run here: $(grep -m1 -i error <<<"$probe")"
    command -v nvidia-smi >/dev/null && NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "${NGPU:-0}" -ge 1 ] || NGPU=1
fi
mn_setup
G1=$([ "$NGPU" -ge 2 ] && echo 1 || echo 0)
mn_host_env n0 "CUDA_VISIBLE_DEVICES=0"
mn_host_env n1 "CUDA_VISIBLE_DEVICES=$G1"
note "backend $BACKEND, $NGPU GPU(s): n0 CUDA_VISIBLE_DEVICES=0, n1 CUDA_VISIBLE_DEVICES=$G1"

mn_run topo n0:1,n1:1 "$G" --topo --backend "$BACKEND"
expect_rc0 "--topo across hosts"
if [ "$BACKEND" = cuda ]; then
    check
    got=$(placement "$OUT" | awk '{ print $1, $2, $3, $4 }' | tr '\n' ';')
    [ "$got" = "0 n0 0 0;1 n1 0 0;" ] || { fail "placement (rank host local gpu): '$got', want '0 n0 0 0;1 n1 0 0;'"; show; }
    if [ "$NGPU" -ge 2 ]; then
        check
        [ "$(placement "$OUT" | awk '{ print $5 }' | sort -u | wc -l)" -eq 2 ] ||
            { fail "the two hosts' ranks report the same PCI bus id"; show; }
    fi
fi

for spec in "f32 stress" "f64 normal"; do
    set -- $spec
    ARGS=(--mode exact --dtype "$1" --gen "$2" --n 16777219)
    mn_run "ref_$1" local:1 "$G" --backend cpu "${ARGS[@]}" --repeat 1 --warmup 0
    expect_rc0 "cpu reference $1"
    want=$(awk '/^result/ { print $3 }' "$OUT")
    mn_run "two_$1" n0:1,n1:1 "$G" --backend "$BACKEND" "${ARGS[@]}" --repeat 3 --warmup 1
    expect_rc0 "exact $1 across hosts"
    got=$(awk '/^result/ { print $3 }' "$OUT")
    check
    [ -n "$want" ] && [ "$got" = "$want" ] || { fail "exact $1 $2 across hosts: $got, the cpu backend on one host: $want"; show; }
done

if [ "$MN_MOUNT_NS" = 1 ]; then
    mkdir -p "$MN_T/data" "$MN_T/empty"
    "$G" gen --out "$MN_T/data/x.npy" --n 100003 --dtype f32 >/dev/null || fail "gen of the input"
    echo "mount --bind '$MN_T/empty' '$MN_T/data'" >"$MN_T/host-n1.mount"
    MN_RUN_TIMEOUT=60
    mn_run missing n0:1,n1:1 "$G" --backend "$BACKEND" --input "$MN_T/data/x.npy" --repeat 1 --warmup 0
    check
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || { fail "input missing on n1: exit $RC, expected a failed job"; show; }
    pre="\[rank 1 host n1\]"
    [ "$BACKEND" = cuda ] && pre="\[rank 1 host n1 gpu 0\]"
    expect_in "$ERR" "^$pre [a-z_]+\.c:[0-9]+: error: input .* cannot be read on this host" "input missing on n1: the line names rank, host and GPU"
else
    note "SKIPPED (no private mount namespace): the failure on n1"
fi
mn_finish
