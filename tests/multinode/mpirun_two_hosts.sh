#!/bin/bash
# mpirun_two_hosts.sh - gpureduce and the library's MPI tests on two emulated
# hosts (n0, n1: UTS namespaces, see lib.sh), against one host.
#
# Each host has its own GPUs (topology fixture + GR_FAKE_GPUS per host: n0 is
# the 2x H200 machine, n1 a two-socket node with other PCI bus ids), so the
# placement shows which host's GPUs a rank took. Checks:
#   - --topo at n0:2,n1:2: both hosts listed, local ranks 0,1 on each, each
#     rank a distinct GPU of its own host (n1's bus ids only on n1);
#   - n0:3,n1:1: three ranks on n0's two GPUs are refused naming host n0 (the
#     check is per host, though the job has 4 GPUs for 4 ranks), and allowed
#     with --share-gpus;
#   - results: exact mode at 1+3 bitwise equal to np 1 on one host; fast
#     mode at 2+2 and 3+1 bitwise equal to np 4 on one host; a .npy file
#     written by `gpureduce gen` across both hosts: read at 3+1 (exact) and
#     2+2 (fast), the same bits as on one host, and as the generated data;
#   - the library's MPI tests (mpi_bits fast, mpi_all_ranks, mpi_rank_failure,
#     combine_cost's exactness check) pass across hosts, mpi_bits with the
#     same lines as on one host;
#   - no Open MPI daemon outlives its mpirun (lib.sh's teardown).
# usage: mpirun_two_hosts.sh MPI_BITS MPI_ALL_RANKS MPI_RANK_FAILURE COMBINE_COST
. "$(dirname "$0")/lib.sh"
MPI_BITS=$1 MPI_ALL_RANKS=$2 MPI_RANK_FAILURE=$3 COMBINE_COST=$4
mn_setup
TOPO=$GR_SRC/tests/topo
mn_host_env n0 "GR_TOPOLOGY_XML=$TOPO/h200pair.xml" "GR_FAKE_GPUS=0000:18:00.0,0000:2a:00.0"
mn_host_env n1 "GR_TOPOLOGY_XML=$TOPO/small2.xml" "GR_FAKE_GPUS=0000:3b:00.0,0000:d8:00.0"
G=$GPUREDUCE

# ---------------------------------------------------------------- placement
mn_run topo22 n0:2,n1:2 "$G" --topo --backend cpu
expect_rc0 "--topo on n0:2,n1:2"
check
got=$(placement "$OUT" | tr '\n' ';')
want="0 n0 0 0 0000:18:00.0;1 n0 1 1 0000:2a:00.0;2 n1 0 0 0000:3b:00.0;3 n1 1 1 0000:d8:00.0;"
[ "$got" = "$want" ] || { fail "placement on n0:2,n1:2 (rank host local gpu pci): '$got', want '$want'"; show; }
expect_in "$OUT" "^# gpureduce .* placement: np 4," "--topo n0:2,n1:2: one report for the 4 ranks"
expect_in "$OUT" "local rank 1 of 2 \(OMPI_COMM_WORLD_LOCAL_RANK\)" "--topo n0:2,n1:2: local rank from the launcher"

mn_run topo31 n0:3,n1:1 "$G" --topo --backend cpu
check
[ "$RC" -ne 0 ] || { fail "n0:3,n1:1 on two GPUs per host without --share-gpus: exit 0, expected a refusal"; show; }
expect_in "$ERR" "host n0.*3 ranks.*2 GPU|host n0.*2 GPU.*3 ranks" "n0:3,n1:1: the refusal names host n0 and its 3 ranks on 2 GPUs"
check
if grep -q "host n1.*GPU" "$ERR"; then fail "n0:3,n1:1: host n1 (1 rank, 2 GPUs) was blamed"; show; fi

mn_run topo31s n0:3,n1:1 "$G" --topo --backend cpu --share-gpus
expect_rc0 "--topo --share-gpus on n0:3,n1:1"
check
got=$(placement "$OUT" | awk '{ print $1, $2, $3, $5 }' | tr '\n' ';')
want="0 n0 0 0000:18:00.0;1 n0 1 0000:2a:00.0;2 n0 2 0000:18:00.0;3 n1 0 0000:3b:00.0;"
[ "$got" = "$want" ] || { fail "placement on n0:3,n1:1 --share-gpus (rank host local pci): '$got', want '$want'"; show; }

# ---------------------------------------------------------------- results
# result_of FILE: the result line (value, exact hex, backend)
result_of() { grep '^result' "$1"; }
# same_result LABEL: gpureduce CLI_ARGS on each of SPECS (the first one host,
# local:N); every result line is identical to the first
same_result() {
    local label=$1 ref spec i=0
    local args=("${CLI_ARGS[@]}")
    for spec in "${SPECS[@]}"; do
        i=$((i + 1))
        mn_run "$label-$i" "$spec" "$G" "${args[@]}"
        expect_rc0 "$label on $spec"
        result_of "$OUT" >"$MN_T/$label-$i.res"
        if [ $i -eq 1 ]; then
            ref=$MN_T/$label-1.res
            check
            [ -s "$ref" ] || { fail "$label on ${SPECS[0]}: no result line"; show; }
        else
            expect_same "$ref" "$MN_T/$label-$i.res" "$label: $spec gives other bits than ${SPECS[0]}"
        fi
    done
}
# --share-gpus: the uneven splits put 3 ranks on one host's 2 GPUs
BASE=(--backend cpu --repeat 1 --warmup 0 --share-gpus --n 3000017)
CLI_ARGS=("${BASE[@]}" --mode exact --dtype f32 --gen stress)
SPECS=(local:1 n0:1,n1:3)
same_result exact_f32
CLI_ARGS=("${BASE[@]}" --mode fast --dtype f32 --gen uniform)
SPECS=(local:4 n0:2,n1:2 n0:3,n1:1)
same_result fast_f32_np4

# ---------------------------------------------------------------- file input
NPY=$MN_T/data.npy
mn_run gen n0:2,n1:2 "$G" gen --out "$NPY" --n 200003 --dtype f64 --gen normal --seed 7 --chunk 256K
expect_rc0 "gen across n0:2,n1:2"
check
[ -s "$NPY" ] || fail "gen across hosts wrote no $NPY"
CLI_ARGS=(--backend cpu --repeat 1 --warmup 0 --share-gpus --input "$NPY" --mode exact --chunk 256K)
SPECS=(local:1 n0:3,n1:1)
same_result file_exact
CLI_ARGS=(--backend cpu --repeat 1 --warmup 0 --input "$NPY" --mode fast --chunk 256K)
SPECS=(local:4 n0:2,n1:2)
same_result file_fast
# the file written on one host holds the same numbers as generated ones
mn_run gen_ref local:1 "$G" --backend cpu --repeat 1 --warmup 0 --n 200003 --dtype f64 --gen normal --seed 7 --mode exact
expect_rc0 "generated reference"
expect_same "$MN_T/file_exact-1.res" <(result_of "$OUT") "the file written across hosts differs from the generated data"

# ---------------------------------------------------------------- library tests
# no GPUs on either host here: the library's cpu contexts, any split
rm -f "$MN_T"/host-*.env
mn_run bits_fast_ref local:4 "$MPI_BITS" fast 1
expect_rc0 "mpi_bits fast on one host"
cp "$OUT" "$MN_T/bits_fast.ref"
mn_run bits_fast n0:3,n1:1 "$MPI_BITS" fast 1
expect_rc0 "mpi_bits fast on n0:3,n1:1"
expect_same "$MN_T/bits_fast.ref" "$OUT" "mpi_bits fast: n0:3,n1:1 prints other bits than one host with np 4"
mn_run all_ranks n0:1,n1:1 "$MPI_ALL_RANKS"
expect_rc0 "mpi_all_ranks on n0:1,n1:1"
mn_run rank_failure n0:1,n1:2 "$MPI_RANK_FAILURE"
expect_rc0 "mpi_rank_failure on n0:1,n1:2"
expect_in "$OUT" "no hang" "mpi_rank_failure on n0:1,n1:2"
expect_in "$ERR" "^\[rank [0-9] host n1\] " "mpi_rank_failure: errors of n1's ranks name host n1"
mn_run combine_cost n0:2,n1:1 "$COMBINE_COST" 50
expect_rc0 "combine_cost on n0:2,n1:1"
expect_in "$OUT" "np 3, hosts 2, .* exact: ok" "combine_cost on n0:2,n1:1: exact partial across hosts"

mn_finish
