#!/bin/bash
# run_slurm_tests.sh - the Slurm job scripts on a real single-node Slurm.
#
# Starts munged, slurmctld and slurmd from Debian's packages (slurm-wlm
# 22.05, munge) with every file in a temporary directory, submits
# jobs/reduce.sbatch, bench.sbatch and scaling.sbatch with the cpu backend,
# runs mpirun under salloc and srun --mpi=pmix, checks the results, and tears
# everything down on the way out, failed or not.
#
# GPUs: slurm.conf declares Gres=gpu:N and gres.conf points the GPUs at
# placeholder character devices (mknod c 1 3, like /dev/null), so GPU
# directives (--gpus-per-task, --gpus-per-node, --gpu-bind) schedule and
# bind CUDA_VISIBLE_DEVICES on a machine without GPUs. slurmd 22.05 rejects
# regular files ("is not a valid character or block device, fix your
# gres.conf"): the node still gets Gres=gpu:N, so jobs schedule, but no task
# gets CUDA_VISIBLE_DEVICES; where mknod is not allowed that is what we use,
# and the binding checks are skipped.
#
# Exit 77 (skip) only when the Slurm or munge programs are not installed
# (Debian: slurmctld slurmd slurm-client munge; `jobs/install-deps.sh
# --with-test-deps` installs them). Environment from CTest: GPUREDUCE, GR_SRC.
# GR_SLURM_KEEP=1 keeps the temporary directory (logs, job output).
set -u
PATH=$PATH:/usr/sbin:/sbin
: "${GPUREDUCE:?GPUREDUCE is set by CTest}"
: "${GR_SRC:?GR_SRC is set by CTest}"
NGPU=2          # fake GPUs on the node
JOB_TIMEOUT=90  # seconds for any one job

missing=""
for p in munged munge slurmctld slurmd sbatch srun salloc squeue sinfo scontrol scancel; do
    command -v "$p" >/dev/null || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "SKIP: Slurm/munge programs not installed:$missing (Debian: apt-get install slurmctld slurmd slurm-client munge, or bash jobs/install-deps.sh --with-test-deps)"
    exit 77
fi

T=$(mktemp -d /tmp/grslurm.XXXXXX)
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
teardown() {
    local rc=$?
    if [ -s "$T/slurmctld.pid" ]; then
        scancel --quiet --user="$(id -un)" 2>/dev/null
        for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    fi
    stop slurmd
    stop slurmctld
    stop munged
    if [ "$FAILS" -gt 0 ] || [ "$rc" -ne 0 ]; then
        for f in slurmctld.log slurmd.log munged.log; do
            [ -s "$T/$f" ] && { echo "=== last lines of $f"; tail -n 25 "$T/$f"; }
        done
    fi
    if [ "${GR_SLURM_KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap teardown EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- munge
note "munge: key and daemon in $T"
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge.key"
munged --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed" --force ||
    { fail "munged did not start"; exit 1; }
munge -S "$T/munge.sock" -n | unmunge -S "$T/munge.sock" >/dev/null ||
    { fail "munge credential round trip failed"; exit 1; }

# ---------------------------------------------------------------- slurm.conf
HOST=$(hostname -s)
# the node as slurmd sees it: CPUs, sockets, cores, threads, RealMemory
NODE_HW=$(slurmd -C 2>/dev/null | head -n 1 | sed 's/^NodeName=[^ ]* //')
[ -n "$NODE_HW" ] || { fail "slurmd -C printed nothing"; exit 1; }
NCPU=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$NODE_HW")

# two free TCP ports
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=$((20000 + RANDOM % 20000))
while ! port_free $PORT || ! port_free $((PORT + 1)); do PORT=$((PORT + 2)); done

mkdir -p "$T/dev" "$T/state" "$T/spool" "$T/submit/build" "$T/results" "$T/pmix"
FAKE_CHAR=1
for i in $(seq 0 $((NGPU - 1))); do
    if ! mknod "$T/dev/fakegpu$i" c 1 3 2>/dev/null; then
        FAKE_CHAR=0
        : >"$T/dev/fakegpu$i"
    fi
done
[ $FAKE_CHAR = 1 ] || note "mknod not allowed: placeholder GPUs are regular files; GPU binding checks are skipped"

PLUGIN_DIR=$(dirname "$(ls /usr/lib/*/slurm-wlm/select_cons_tres.so /usr/lib*/slurm/select_cons_tres.so 2>/dev/null | head -n 1)")
MPI_DEFAULT=none
ls "$PLUGIN_DIR"/mpi_pmix*.so >/dev/null 2>&1 && MPI_DEFAULT=pmix

write_conf() { # TASK_PLUGIN
    cat >"$T/slurm.conf" <<EOF
ClusterName=grtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
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
NodeName=$HOST NodeAddr=127.0.0.1 $NODE_HW Gres=gpu:$NGPU State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    echo "NodeName=$HOST Name=gpu File=$T/dev/fakegpu[0-$((NGPU - 1))]" >"$T/gres.conf"
    # the pmix plugin's per-step directories (spmix_appdir_UID_JOB.STEP) in $T,
    # not /tmp: job ids restart at 1 in every run, and a directory another run
    # failed to remove (or a run in parallel) makes that step fail to launch
    echo "PMIxCliTmpDirBase=$T/pmix" >"$T/mpi.conf"
}
export SLURM_CONF=$T/slurm.conf

# start_slurm TASK_PLUGIN: daemons up and the node idle, or return 1
start_slurm() {
    write_conf "$1"
    slurmctld -f "$SLURM_CONF" || return 1
    slurmd -f "$SLURM_CONF" || return 1
    for _ in $(seq 100); do
        [ "$(sinfo -h -n "$HOST" -o %T 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    return 1
}
note "slurmctld + slurmd: node $HOST ($NODE_HW), gpu:$NGPU, ports $PORT-$((PORT + 1)), MpiDefault=$MPI_DEFAULT"
TASK_PLUGIN=task/affinity
if ! start_slurm $TASK_PLUGIN; then
    # task/affinity needs sched_setaffinity; some containers refuse it
    note "node not idle with task/affinity; retrying with task/none"
    stop slurmd
    stop slurmctld
    rm -rf "${T:?}/state"/* "${T:?}/spool"/*
    TASK_PLUGIN=task/none
    start_slurm $TASK_PLUGIN || { fail "the node never became idle"; sinfo; exit 1; }
fi
check
scontrol show node "$HOST" | grep -q "Gres=gpu:$NGPU" || fail "node has no Gres=gpu:$NGPU"
note "node idle ($TASK_PLUGIN); srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n\t ' ' ')"
check
srun --mpi=list 2>&1 | grep -qw pmix || fail "srun --mpi=list does not offer pmix (install slurm-wlm-basic-plugins and libpmix2)"

# ---------------------------------------------------------------- helpers
# submit NAME [sbatch options] SCRIPT [args]: queue a job, output in $T/NAME.out.
# No --cpus-per-task unless a test gives one: the scripts' own defaults must
# fit this small node (a fixed --cpus-per-task=8 pended for ever here).
declare -A JOB
submit() {
    local name=$1; shift
    local id
    id=$(sbatch --parsable --output="$T/$name.out" "$@" 2>"$T/$name.sbatch.err") || {
        fail "$name: sbatch refused the job: $(cat "$T/$name.sbatch.err")"
        return 1
    }
    JOB[$name]=${id%%;*}
}
# wait_job NAME: RC = the job's exit code (124 on timeout); OUT = its output file
wait_job() {
    local name=$1 id=${JOB[$1]:-} state="" info t
    OUT=$T/$name.out
    RC=124
    [ -n "$id" ] || { RC=125; return; }
    for t in $(seq $((JOB_TIMEOUT * 5))); do
        info=$(scontrol -o show job "$id" 2>/dev/null)
        state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
        case $state in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
            RC=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<<"$info")
            note "$name: job $id $state, exit code $RC"
            return ;;
        esac
        sleep 0.2
    done
    fail "$name: job $id not done after $JOB_TIMEOUT s (state $state)"
    scancel "$id"
}
show() { echo "    --- $1:"; sed 's/^/    | /' "$1" | head -n 60; }
expect_rc() { check; [ "$RC" -eq "$1" ] || { fail "$2: exit code $RC, expected $1"; show "$OUT"; }; }
expect_rc_nonzero() { check; [ "$RC" -ne 0 ] || { fail "$1: exit code 0, expected non-zero"; show "$OUT"; }; }
expect_in() { check; grep -Eq -- "$1" "$OUT" || { fail "$2: no /$1/ in the output"; show "$OUT"; }; }
world_ok() { expect_in "^# world size check: MPI world size $1 = SLURM_NTASKS $1: ok" "$2: world size check"; }
placement_ok() { # NP LABEL: a placement row per rank
    local r
    for r in $(seq 0 $(($1 - 1))); do expect_in "^#[[:space:]]+$r[[:space:]]+$HOST[[:space:]]" "$2: placement of rank $r"; done
}

# ---------------------------------------------------------------- jobs
ln -s "$GPUREDUCE" "$T/submit/build/gpureduce"
cat >"$T/singleton.sh" <<'EOF'
#!/bin/bash
# start the task as an MPI singleton: hide the Slurm step from the MPI library
for v in $(env | grep -o '^SLURM_[A-Z_]*'); do unset "$v"; done
exec "$@"
EOF
chmod +x "$T/singleton.sh"
J=$GR_SRC/jobs
PKGS_NOTE="the job scripts default to 2 tasks on 1 node with --gpus-per-task=1 --gpu-bind=closest"
note "submitting the jobs ($PKGS_NOTE)"
cd "$T/submit"
# default binary path: build/gpureduce under the submit directory; the
# script is found through the submitted path (no jobs/ in the submit dir)
GR_BIN=$GPUREDUCE
unset GPUREDUCE
submit reduce "$J/reduce.sbatch" --backend cpu --n 1M --gen ones --verify --repeat 3
export GPUREDUCE=$GR_BIN
submit reduce_json "$J/reduce.sbatch" --backend=cpu --per-rank 2^18 --dtype f64 --mode exact --format json --repeat 2
GR_LAUNCHER=mpirun submit reduce_mpirun "$J/reduce.sbatch" --backend cpu --n 1M --gen ones --repeat 2
GR_WRAP=$T/singleton.sh submit singleton "$J/reduce.sbatch" --backend cpu --n 1M
submit pernode --gpus-per-task=0 --gpus-per-node=$NGPU --gpu-bind=none "$J/reduce.sbatch" --backend cpu --n 1M --gen ones --repeat 2
submit badarg "$J/reduce.sbatch" --backend cpu --n nonsense
submit cpus_given --cpus-per-task=1 "$J/reduce.sbatch" --backend cpu --n 1M --gen ones --repeat 2
GR_OUTDIR=$T/results submit scaling "$J/scaling.sbatch" --backend cpu --weak 64K --repeat 3 --warmup 1
GR_OUTDIR=$T/results submit scaling_strong --ntasks-per-node=$NCPU "$J/scaling.sbatch" --backend cpu --strong 256K --mode exact --repeat 2 --warmup 1
submit bench "$J/bench.sbatch" --backend cpu --min 2^10 --max 2^16 --iters 3 --format csv

wait_job reduce
expect_rc 0 "reduce.sbatch"
world_ok 2 "reduce.sbatch"
placement_ok 2 "reduce.sbatch"
expect_in "^# launcher: srun --mpi=pmix" "reduce.sbatch: srun --mpi=pmix"
expect_in "gpureduce: $T/submit/build/gpureduce" "reduce.sbatch: default binary build/gpureduce of the submit dir"
expect_in "^# job [0-9]+ .*: 2 task\(s\), 2 per node, [0-9]+ CPU\(s\) per task \(allocation: [0-9]+ CPU\(s\), 2 task\(s\) per node\), GPUs 1 per task, gpu-bind closest" "reduce.sbatch: job line, CPUs per task from the allocation"
expect_in "^result +1048576 +0x1p\+20 +backend cpu" "reduce.sbatch: result line"
expect_in "^verify .*: ok" "reduce.sbatch: --verify"
expect_in "^# gpureduce exit status 0" "reduce.sbatch: exit status line"

wait_job reduce_json
expect_rc 0 "reduce.sbatch --format json"
world_ok 2 "reduce.sbatch json"
check
if ! sed -n '/^{/,/^}/p' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['np']==2 and d['n']==524288 and d['mode']=='exact' and len(d['placement'])==2" 2>"$T/json.err"; then
    fail "reduce.sbatch json document: $(cat "$T/json.err")"
    show "$OUT"
fi

wait_job reduce_mpirun
expect_rc 0 "reduce.sbatch with GR_LAUNCHER=mpirun"
world_ok 2 "mpirun in the job"
expect_in "^# launcher: mpirun -np 2" "mpirun launcher line"
expect_in "^result +1048576 " "mpirun result"

wait_job singleton
expect_rc_nonzero "singleton launch"
expect_in "MPI world size 1 \(in 2 placement report\(s\)\) is not SLURM_NTASKS=2: .*singleton launch" "singleton detected"
check
if grep -q "^result" "$OUT"; then fail "singleton launch: the reduction ran anyway"; fi

wait_job pernode
expect_rc 0 "reduce.sbatch, --gpus-per-node variant"
world_ok 2 "--gpus-per-node variant"
expect_in "GPUs $NGPU per node, gpu-bind none" "--gpus-per-node variant: job line"

wait_job badarg
expect_rc 2 "reduce.sbatch with a bad size"
expect_in "--n: cannot parse size 'nonsense'" "bad size message"

wait_job cpus_given
expect_rc 0 "reduce.sbatch --cpus-per-task=1"
expect_in "^# job [0-9]+ .*: 2 task\(s\), 2 per node, 1 CPU\(s\) per task \(--cpus-per-task\)," "sbatch --cpus-per-task=1: job line"
expect_in "^result +1048576 " "sbatch --cpus-per-task=1: result"

wait_job scaling
expect_rc 0 "scaling.sbatch --weak"
world_ok 2 "scaling.sbatch"
placement_ok 2 "scaling.sbatch"
CSV=$(ls "$T"/results/scale-weak-*.csv 2>/dev/null | head -n 1)
check
if [ -z "$CSV" ]; then
    fail "scaling.sbatch wrote no results/scale-weak-JOBID.csv"
else
    v=$(python3 -c "import csv; r=list(csv.DictReader(open('$CSV'))); print(' '.join(x['ranks']+':'+x['n'] for x in r))")
    [ "$v" = "1:65536 2:131072" ] || fail "scaling.sbatch weak rows: '$v'"
    if command -v gnuplot >/dev/null; then
        check
        png=${CSV%.csv}-scaling.png
        [ "$(head -c 4 "$png" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ] || fail "scaling.sbatch: no plot $png"
    fi
fi

wait_job scaling_strong
expect_rc 0 "scaling.sbatch --strong on $NCPU tasks"
world_ok "$NCPU" "scaling.sbatch strong"
CSV=$(ls "$T"/results/scale-strong-*.csv 2>/dev/null | head -n 1)
check
v=$( [ -n "$CSV" ] && python3 -c "import csv; r=list(csv.DictReader(open('$CSV'))); print(len(r), len({x['result_hex'] for x in r}), r[-1]['ranks'])")
[ "$v" = "$(python3 -c "import math; n=$NCPU; k=sum(1 for p in range(30) if 2**p < n)+1; print(k, 1, n)")" ] ||
    fail "scaling.sbatch strong: rows, distinct exact results, last ranks = '$v'"

wait_job bench
expect_rc 0 "bench.sbatch"
world_ok 2 "bench.sbatch"
placement_ok 2 "bench.sbatch"
expect_in "^size_bytes,count,dtype,variant," "bench.sbatch: CSV header"
expect_in "^65536,16384,f32,cpu," "bench.sbatch: the cpu row at 2^14"
expect_in "^# gpureduce bench exit status 0" "bench.sbatch: exit status line"
# --exclusive: the node's CPUs shared out over its 2 tasks
CPT=$((NCPU / 2)); [ $CPT -ge 1 ] || CPT=1
expect_in "^# job [0-9]+ .*, $CPT CPU\(s\) per task \(allocation: $NCPU CPU\(s\), 2 task\(s\) per node\)," "bench.sbatch: CPUs per task = node CPUs / tasks"

# ---------------------------------------------------------------- GPU directives
if [ $FAKE_CHAR = 1 ]; then
    note "GPU binding of the placeholder GPUs"
    out=$(timeout 60 srun --quiet -n 2 --cpus-per-task=1 --gpus-per-task=1 bash -c 'echo "$SLURM_PROCID:$CUDA_VISIBLE_DEVICES"' 2>&1 | sort | tr '\n' ' ')
    check
    [ "$out" = "0:0 1:1 " ] || fail "srun --gpus-per-task=1: CUDA_VISIBLE_DEVICES per task '$out', expected '0:0 1:1'"
    out=$(timeout 60 srun --quiet -n 2 --cpus-per-task=1 --gpus-per-node=$NGPU --gpu-bind=closest bash -c 'echo "$SLURM_PROCID:$CUDA_VISIBLE_DEVICES"' 2>&1 | sort | tr '\n' ' ')
    check
    [ "$out" = "0:0,1 1:0,1 " ] || fail "srun --gpus-per-node=$NGPU: every task sees both GPUs: '$out'"
fi
check
out=$(timeout 30 srun -n 1 --gpus-per-task=$((NGPU + 1)) true 2>&1)
[ $? -ne 0 ] || fail "srun asking for $((NGPU + 1)) GPUs on a $NGPU-GPU node was accepted"

# ---------------------------------------------------------------- launchers
note "srun --mpi=pmix, direct"
OUT=$T/srun.out
timeout 60 srun -n 2 --cpus-per-task=1 --mpi=pmix "$GPUREDUCE" --backend cpu --n 1M --gen ones --repeat 2 --format json >"$OUT" 2>"$T/srun.err"
RC=$?
[ $RC -eq 0 ] || cat "$T/srun.err"
expect_rc 0 "srun --mpi=pmix gpureduce"
check
v=$(python3 -c "import json; d=json.load(open('$OUT')); print(d['np'], d['result'])" 2>&1)
[ "$v" = "2 1048576" ] || { fail "srun --mpi=pmix: np and result '$v'"; show "$OUT"; }

note "mpirun under salloc"
OUT=$T/salloc.out
MPIRUN_ROOT=""
[ "$(id -u)" -eq 0 ] && MPIRUN_ROOT=--allow-run-as-root
timeout 90 salloc -N 1 -n 2 --cpus-per-task=1 mpirun $MPIRUN_ROOT -np 2 "$GPUREDUCE" --backend cpu --n 1M --gen ones \
    --repeat 2 >"$OUT" 2>&1
RC=$?
expect_rc 0 "salloc + mpirun"
expect_in "^# gpureduce .*: np 2, n 1048576" "salloc + mpirun: np 2"
expect_in "^result +1048576 " "salloc + mpirun: result"

note "done: $CHECKS checks, $FAILS failed"
[ "$FAILS" -eq 0 ]
