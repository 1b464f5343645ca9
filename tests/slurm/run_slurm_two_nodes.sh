#!/bin/bash
# run_slurm_two_nodes.sh - the Slurm job scripts on a real two-node Slurm,
# both nodes on this machine.
#
# One slurmctld and two slurmd (nodes n0 and n1), each slurmd in its own UTS
# namespace (unshare --uts, host name n0 / n1: slurmd finds its NodeName by
# host name) with its own Port= and spool, PID and log files (%n in
# slurm.conf); every file in a temporary directory. n1's slurmd also gets a
# private mount namespace in which one directory ($T/nodelocal) is empty: a
# node-local path, to make a rank fail on n1 only.
#
# Jobs (cpu backend, placeholder GPUs as in run_slurm_tests.sh):
#   - sbatch -N 2 --ntasks-per-node=2 jobs/reduce.sbatch, srun --mpi=pmix and
#     GR_LAUNCHER=mpirun; -N 2 -n 3 (2 + 1); placement lists n0 and n1 with
#     local ranks 0,1 on each; results bitwise those of mpirun on one host
#     (exact: np 1; fast: the same np);
#   - jobs/scaling.sbatch (strong in exact mode: one result for 1, 2, 4
#     ranks; weak under GR_LAUNCHER=mpirun: 1, 2 ranks on n0, 4 on both) and
#     jobs/bench.sbatch on both nodes;
#   - failure: an input under n1's hidden directory: the job ends with a
#     non-zero exit code and the error line of an n1 rank, within the time
#     limit.
# Exit 77 (skip) when the Slurm or munge programs are missing or this machine
# allows no UTS namespace. Environment from CTest: GPUREDUCE, GR_SRC, MPIRUN.
# GR_SLURM_KEEP=1 keeps the temporary directory.
set -u
PATH=$PATH:/usr/sbin:/sbin
: "${GPUREDUCE:?GPUREDUCE is set by CTest}"
: "${GR_SRC:?GR_SRC is set by CTest}"
: "${MPIRUN:?MPIRUN is set by CTest}"
NGPU=2          # placeholder GPUs per node
JOB_TIMEOUT=90  # seconds for any one job
NODES="n0 n1"

missing=""
for p in munged munge slurmctld slurmd sbatch srun squeue sinfo scontrol scancel unshare; do
    command -v "$p" >/dev/null || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "SKIP: programs not installed:$missing (Debian: apt-get install slurmctld slurmd slurm-client munge, or bash jobs/install-deps.sh --with-test-deps)"
    exit 77
fi
why=$(unshare --uts /bin/sh -c 'hostname grslurm-probe && [ "$(hostname)" = grslurm-probe ]' 2>&1) || {
    echo "SKIP: no UTS namespace here (unshare --uts needs CAP_SYS_ADMIN): ${why:-host name not changed}"
    exit 77
}
MOUNT_NS=0
unshare --mount --propagation private /bin/sh -c 'mount -t tmpfs grslurm-probe /mnt' 2>/dev/null && MOUNT_NS=1

T=$(mktemp -d /tmp/grslurm2.XXXXXX)
chmod 755 "$T"
FAILS=0
CHECKS=0
T0=$(date +%s)
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
note() { echo "--- [$(($(date +%s) - T0)) s] $*"; }
check() { CHECKS=$((CHECKS + 1)); }

pid_of() { [ -s "$T/$1.pid" ] && cat "$T/$1.pid"; }
# stop NAME: end a daemon that this script started, by its pid file
stop() {
    local pid
    pid=$(pid_of "$1") || return 0
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
}
# kill_leftovers: a slurmstepd (or a task, an orted) that outlived its slurmd
# and still runs with this test's slurm.conf; with two slurmd a failed step
# launch has left one behind. Only processes started under $T/slurm.conf.
kill_leftovers() {
    local d pid comm sig
    for sig in TERM KILL; do
        for d in /proc/[0-9]*; do
            pid=${d#/proc/}
            [ "$pid" = $$ ] && continue
            comm=$(cat "$d/comm" 2>/dev/null) || continue
            case $comm in slurmstepd | gpureduce | orted | mpirun | srun) ;; *) continue ;; esac
            tr '\0' '\n' <"$d/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$T/slurm.conf" || continue
            [ $sig = KILL ] && echo "teardown: killing leftover $comm (pid $pid)"
            kill -$sig "$pid" 2>/dev/null
        done
        [ $sig = TERM ] && sleep 1
    done
}
teardown() {
    local rc=$? n f
    if [ -s "$T/slurmctld.pid" ]; then
        scancel --quiet --user="$(id -un)" 2>/dev/null
        for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    fi
    for n in $NODES; do stop "slurmd-$n"; done
    stop slurmctld
    stop munged
    kill_leftovers
    if [ "$FAILS" -gt 0 ] || [ "$rc" -ne 0 ]; then
        for f in slurmctld.log slurmd-n0.log slurmd-n1.log munged.log; do
            [ -s "$T/$f" ] && { echo "=== last lines of $f"; tail -n 25 "$T/$f"; }
        done
    fi
    if [ "${GR_SLURM_KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap teardown EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- munge
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge.key"
munged --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed" --force ||
    { fail "munged did not start"; exit 1; }

# ---------------------------------------------------------------- slurm.conf
HOST=$(hostname -s)
NODE_HW=$(slurmd -C 2>/dev/null | head -n 1 | sed 's/^NodeName=[^ ]* //')
[ -n "$NODE_HW" ] || { fail "slurmd -C printed nothing"; exit 1; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=$((20000 + RANDOM % 20000))
while ! port_free $PORT || ! port_free $((PORT + 1)) || ! port_free $((PORT + 2)); do PORT=$((PORT + 3)); done

mkdir -p "$T/dev" "$T/state" "$T/spool-n0" "$T/spool-n1" "$T/tmp-n0" "$T/tmp-n1" "$T/submit" "$T/results" "$T/nodelocal" "$T/empty"
FAKE_CHAR=1
for i in $(seq 0 $((NGPU - 1))); do
    mknod "$T/dev/fakegpu$i" c 1 3 2>/dev/null || { FAKE_CHAR=0; : >"$T/dev/fakegpu$i"; }
done
PLUGIN_DIR=$(dirname "$(ls /usr/lib/*/slurm-wlm/select_cons_tres.so /usr/lib*/slurm/select_cons_tres.so 2>/dev/null | head -n 1)")
MPI_DEFAULT=none
ls "$PLUGIN_DIR"/mpi_pmix*.so >/dev/null 2>&1 && MPI_DEFAULT=pmix

write_conf() { # TASK_PLUGIN
    cat >"$T/slurm.conf" <<EOF
ClusterName=grtest2
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool-%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd-%n.log
TmpFS=$T/tmp-%n
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=$1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=$MPI_DEFAULT
SchedulerType=sched/builtin
ReturnToService=2
MinJobAge=600
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=n0 NodeAddr=127.0.0.1 Port=$((PORT + 1)) $NODE_HW Gres=gpu:$NGPU State=UNKNOWN
NodeName=n1 NodeAddr=127.0.0.1 Port=$((PORT + 2)) $NODE_HW Gres=gpu:$NGPU State=UNKNOWN
PartitionName=debug Nodes=n0,n1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    echo "NodeName=n[0-1] Name=gpu File=$T/dev/fakegpu[0-$((NGPU - 1))]" >"$T/gres.conf"
}
export SLURM_CONF=$T/slurm.conf

# start_slurmd NODE: slurmd as host NODE (n1: with its node-local directory)
start_slurmd() {
    local ns=(--uts) mnt=""
    if [ "$1" = n1 ] && [ $MOUNT_NS = 1 ]; then
        ns+=(--mount --propagation private)
        mnt="mount --bind '$T/empty' '$T/nodelocal' &&"
    fi
    unshare "${ns[@]}" /bin/sh -c "hostname $1 && $mnt exec slurmd -f '$SLURM_CONF'"
}
nodes_idle() { [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | sort | tr '\n' ' ')" = "n0 idle n1 idle " ]; }
start_slurm() { # TASK_PLUGIN
    write_conf "$1"
    slurmctld -f "$SLURM_CONF" || return 1
    local n
    for n in $NODES; do start_slurmd $n || return 1; done
    for _ in $(seq 150); do nodes_idle && return 0; sleep 0.2; done
    return 1
}
note "slurmctld on $HOST + slurmd n0, n1 ($NODE_HW), gpu:$NGPU each, ports $PORT-$((PORT + 2)), MpiDefault=$MPI_DEFAULT"
TASK_PLUGIN=task/affinity
if ! start_slurm $TASK_PLUGIN; then
    note "nodes not idle with task/affinity ($(sinfo -h -N -o '%N %T' | tr '\n' ' ')); retrying with task/none"
    for n in $NODES; do stop "slurmd-$n"; done
    stop slurmctld
    rm -rf "${T:?}/state"/* "${T:?}/spool-n0"/* "${T:?}/spool-n1"/*
    TASK_PLUGIN=task/none
    start_slurm $TASK_PLUGIN || { fail "the two nodes never became idle"; sinfo -N; exit 1; }
fi
note "both nodes idle ($TASK_PLUGIN)"

# ---------------------------------------------------------------- helpers
declare -A JOB
submit() { # NAME [sbatch options] SCRIPT [args]
    local name=$1; shift
    local id
    id=$(sbatch --parsable --cpus-per-task=1 --output="$T/$name.out" "$@" 2>"$T/$name.sbatch.err") || {
        fail "$name: sbatch refused the job: $(cat "$T/$name.sbatch.err")"
        return 1
    }
    JOB[$name]=${id%%;*}
}
wait_job() { # NAME: RC = the job's exit code (124: not done in time); OUT = its output
    local name=$1 id=${JOB[$1]:-} state="" info
    OUT=$T/$name.out
    RC=124
    [ -n "$id" ] || { RC=125; return; }
    for _ in $(seq $((JOB_TIMEOUT * 5))); do
        info=$(scontrol -o show job "$id" 2>/dev/null)
        state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
        case $state in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
            RC=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<<"$info")
            note "$name: job $id $state on $(sed -n 's/.* NodeList=\([^ ]*\).*/\1/p' <<<"$info"), exit code $RC"
            return ;;
        esac
        sleep 0.2
    done
    fail "$name: job $id not done after $JOB_TIMEOUT s (state $state): a rank hangs"
    scancel "$id"
}
show() { echo "    --- $1:"; sed 's/^/    | /' "$1" | head -n 60; }
expect_rc() { check; [ "$RC" -eq "$1" ] || { fail "$2: exit code $RC, expected $1"; show "$OUT"; }; }
expect_in() { check; grep -Eq -- "$1" "$OUT" || { fail "$2: no /$1/ in the output"; show "$OUT"; }; }
world_ok() { expect_in "^# world size check: MPI world size $1 = SLURM_NTASKS $1: ok" "$2: world size check"; }
# placement_is WANT LABEL: "rank host local" of every placement row of the
# job's first (--topo) table
placement_is() {
    local got
    got=$(awk '/^#  rank/ { t++ } t == 1 && /^#[[:space:]]+[0-9]+[[:space:]]/ { print $2, $3, $5 }' "$OUT" | tr '\n' ';')
    check
    [ "$got" = "$1" ] || { fail "$2: placement (rank host local) '$got', want '$1'"; show "$OUT"; }
}
# same_bits REF LABEL: the job's result line is REF's
same_bits() {
    check
    local a b
    a=$(grep '^result' "$1" | head -n 1)
    b=$(grep '^result' "$OUT" | head -n 1)
    [ -n "$a" ] && [ "$a" = "$b" ] || { fail "$2: result '$b', one host gave '$a'"; show "$OUT"; }
}

# ---------------------------------------------------------------- one-host references
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
ARGS_EXACT=(--backend cpu --n 3000017 --mode exact --gen stress --repeat 2 --warmup 0)
ARGS_FAST=(--backend cpu --n 3000017 --mode fast --dtype f64 --gen normal --repeat 2 --warmup 0)
timeout 60 "$GPUREDUCE" "${ARGS_EXACT[@]}" >"$T/ref_exact" 2>&1 || fail "one-host exact reference: $(cat "$T/ref_exact")"
timeout 60 $MPIRUN -np 4 "$GPUREDUCE" "${ARGS_FAST[@]}" >"$T/ref_fast4" 2>&1 || fail "one-host fast reference: $(cat "$T/ref_fast4")"
"$GPUREDUCE" gen --out "$T/nodelocal/x.npy" --n 100003 --dtype f64 >/dev/null || fail "gen of the n0-only input"
unset OMPI_MCA_btl OMPI_MCA_btl_vader_single_copy_mechanism

# ---------------------------------------------------------------- jobs
J=$GR_SRC/jobs
cd "$T/submit"
N2=(-N 2 --ntasks-per-node=2)
note "submitting the two-node jobs"
# both nodes are 2x H200 machines (topology fixture, fake GPUs): each node's
# two ranks take that node's two GPUs
GR_TOPOLOGY_XML=$GR_SRC/tests/topo/h200pair.xml GR_FAKE_GPUS=0000:18:00.0,0000:2a:00.0 \
    submit reduce "${N2[@]}" "$J/reduce.sbatch" "${ARGS_EXACT[@]}"
submit reduce_fast "${N2[@]}" "$J/reduce.sbatch" "${ARGS_FAST[@]}"
GR_LAUNCHER=mpirun submit reduce_mpirun "${N2[@]}" "$J/reduce.sbatch" "${ARGS_EXACT[@]}"
submit reduce_3 -N 2 -n 3 "$J/reduce.sbatch" "${ARGS_EXACT[@]}"
GR_OUTDIR=$T/results submit scaling "${N2[@]}" "$J/scaling.sbatch" --backend cpu --strong 1M --mode exact --repeat 2 --warmup 0
GR_LAUNCHER=mpirun GR_OUTDIR=$T/results/mpirun submit scaling_mpirun "${N2[@]}" "$J/scaling.sbatch" --backend cpu --weak 64K --repeat 2 --warmup 0
submit bench "${N2[@]}" "$J/bench.sbatch" --backend cpu --min 2^10 --max 2^14 --iters 3 --format csv
[ $MOUNT_NS = 1 ] && submit fail_n1 "${N2[@]}" "$J/reduce.sbatch" --backend cpu --input "$T/nodelocal/x.npy" --repeat 1

P22="0 n0 0;1 n0 1;2 n1 0;3 n1 1;"
wait_job reduce
expect_rc 0 "reduce.sbatch -N 2"
world_ok 4 "reduce.sbatch -N 2"
expect_in "^# job [0-9]+ .* on 2 node\(s\) n\[0-1\]: 4 task\(s\), 2 per node" "reduce.sbatch -N 2: job line"
expect_in "^# launcher: srun --mpi=pmix" "reduce.sbatch -N 2: srun --mpi=pmix"
placement_is "$P22" "reduce.sbatch -N 2"
check
got=$(awk '/^#[[:space:]]+[0-9]+[[:space:]]/ { print $2, $3, $6, $7 }' "$OUT" | head -n 4 | tr '\n' ';')
want="0 n0 0 0000:18:00.0;1 n0 1 0000:2a:00.0;2 n1 0 0000:18:00.0;3 n1 1 0000:2a:00.0;"
[ "$got" = "$want" ] || { fail "reduce.sbatch -N 2: GPUs per node (rank host gpu pci) '$got', want '$want'"; show "$OUT"; }
same_bits "$T/ref_exact" "reduce.sbatch -N 2, exact"

wait_job reduce_fast
expect_rc 0 "reduce.sbatch -N 2 fast"
same_bits "$T/ref_fast4" "reduce.sbatch -N 2, fast f64 against mpirun -np 4 on one host"

wait_job reduce_mpirun
expect_rc 0 "reduce.sbatch -N 2, GR_LAUNCHER=mpirun"
world_ok 4 "GR_LAUNCHER=mpirun -N 2"
expect_in "^# launcher: mpirun -np 4" "GR_LAUNCHER=mpirun -N 2: launcher line"
placement_is "$P22" "GR_LAUNCHER=mpirun -N 2"
same_bits "$T/ref_exact" "GR_LAUNCHER=mpirun -N 2, exact"

wait_job reduce_3
expect_rc 0 "reduce.sbatch -N 2 -n 3"
world_ok 3 "-N 2 -n 3"
placement_is "0 n0 0;1 n0 1;2 n1 0;" "-N 2 -n 3"
same_bits "$T/ref_exact" "-N 2 -n 3, exact"

wait_job scaling
expect_rc 0 "scaling.sbatch -N 2 --strong"
world_ok 4 "scaling.sbatch -N 2"
CSV=$(ls "$T"/results/scale-strong-*.csv 2>/dev/null | head -n 1)
check
v=$([ -n "$CSV" ] && python3 -c "import csv; r=list(csv.DictReader(open('$CSV'))); print(' '.join(x['ranks'] for x in r), len({x['result_hex'] for x in r}))")
[ "$v" = "1 2 4 1" ] || { fail "scaling.sbatch -N 2 strong exact: ranks and distinct results '$v', want '1 2 4 1'"; show "$OUT"; }

wait_job scaling_mpirun
expect_rc 0 "scaling.sbatch -N 2 --weak, GR_LAUNCHER=mpirun"
world_ok 4 "scaling.sbatch -N 2, GR_LAUNCHER=mpirun"
expect_in "^# launcher: mpirun -np 4" "scaling.sbatch -N 2, GR_LAUNCHER=mpirun: launcher line"
placement_is "$P22" "scaling.sbatch -N 2, GR_LAUNCHER=mpirun"
CSV=$(ls "$T"/results/mpirun/scale-weak-*.csv 2>/dev/null | head -n 1)
check
v=$([ -n "$CSV" ] && python3 -c "import csv; r=list(csv.DictReader(open('$CSV'))); print(' '.join(x['ranks']+':'+x['nodes']+':'+x['n'] for x in r))")
[ "$v" = "1:1:65536 2:1:131072 4:2:262144" ] || { fail "scaling.sbatch -N 2 weak, mpirun: rows ranks:nodes:n '$v'"; show "$OUT"; }

wait_job bench
expect_rc 0 "bench.sbatch -N 2"
world_ok 4 "bench.sbatch -N 2"
placement_is "$P22" "bench.sbatch -N 2"
expect_in "^16384,4096,f32,cpu," "bench.sbatch -N 2: the cpu row at 2^12"

if [ $MOUNT_NS = 1 ]; then
    wait_job fail_n1
    check
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || { fail "input missing on n1: exit code $RC, expected a failed job"; show "$OUT"; }
    expect_in "^\[rank [23] host n1\] [a-z_]+\.c:[0-9]+: error: input '$T/nodelocal/x.npy' cannot be read on this host" \
        "input missing on n1: the error line names the rank and host n1"
    check
    if grep -q '^result' "$OUT"; then fail "input missing on n1: a result was printed"; show "$OUT"; fi
else
    note "SKIPPED (no private mount namespace): the job whose input is missing on n1"
fi

note "done: $CHECKS checks, $FAILS failed"
[ "$FAILS" -eq 0 ]
