# slurm-common.sh - what jobs/reduce.sbatch, bench.sbatch and scaling.sbatch
# share (sourced, not run): find the binary, pick the launcher, check that the
# MPI world is the Slurm job, print the placement.
#
# Environment (all optional):
#   GPUREDUCE     the gpureduce binary (default build/gpureduce; a relative
#                 path is taken relative to the submit directory)
#   GR_LAUNCHER   srun (default) or mpirun
#   GR_SRUN_MPI   the srun --mpi plugin (default: pmix when `srun --mpi=list`
#                 offers it, else pmix_v5/v4/v3, else pmi2)
#   GR_MPIRUN     the mpirun command for GR_LAUNCHER=mpirun (default mpirun)
#   GR_WRAP       a command put before gpureduce on every task, e.g.
#                 "nsys profile -o rep.%q{SLURM_PROCID}" or "numactl -l"
#   GR_OUTDIR     where scaling.sbatch writes its CSV and plots
#                 (default results/ in the submit directory)

gr_fail() {
    echo "gpureduce job: error: $*" >&2
    exit 1
}

# gr_cpus_per_task: the CPUs each task may use, into GR_CPUS_PER_TASK, and
# where the figure came from into GR_CPUS_FROM. The scripts carry no
# --cpus-per-task directive (a fixed figure pends for ever on nodes with fewer
# cores, reason PartitionConfig): what sbatch was given (SLURM_CPUS_PER_TASK)
# wins; otherwise the job's CPUs on its smallest node (SLURM_JOB_CPUS_PER_NODE,
# e.g. "16(x2),8") divided by the most tasks on one node
# (SLURM_TASKS_PER_NODE, e.g. "2(x3)"), at least 1. With --exclusive that is
# the whole node shared out; without, the CPUs Slurm gave each task.
gr_cpus_per_task() {
    if [ -n "${SLURM_CPUS_PER_TASK:-}" ]; then
        GR_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
        GR_CPUS_FROM="--cpus-per-task"
        return
    fi
    local cpn tpn
    cpn=$(tr ',' '\n' <<<"${SLURM_JOB_CPUS_PER_NODE:-}" | sed 's/(.*//' | grep -E '^[0-9]+$' | sort -n | head -n 1)
    tpn=$(tr ',' '\n' <<<"${SLURM_TASKS_PER_NODE:-}" | sed 's/(.*//' | grep -E '^[0-9]+$' | sort -n | tail -n 1)
    GR_CPUS_PER_TASK=1
    if [ -n "$cpn" ] && [ -n "$tpn" ] && [ "$tpn" -gt 0 ] && [ $((cpn / tpn)) -gt 1 ]; then
        GR_CPUS_PER_TASK=$((cpn / tpn))
    fi
    GR_CPUS_FROM="allocation: ${SLURM_JOB_CPUS_PER_NODE:-?} CPU(s), ${SLURM_TASKS_PER_NODE:-?} task(s) per node"
}

# gr_setup: resolve GPUREDUCE, the launcher and the CPUs per task.
gr_setup() {
    [ -n "${SLURM_JOB_ID:-}" ] || gr_fail "not inside a Slurm job: submit with sbatch (sbatch jobs/reduce.sbatch --n 1M)"
    local submit=${SLURM_SUBMIT_DIR:-$PWD}
    GPUREDUCE=${GPUREDUCE:-build/gpureduce}
    case $GPUREDUCE in /*) ;; *) GPUREDUCE=$submit/$GPUREDUCE ;; esac
    [ -x "$GPUREDUCE" ] || gr_fail "no gpureduce binary at $GPUREDUCE: build it (cmake -S . -B build && cmake --build build) and submit from the repository root, or set GPUREDUCE=/path/to/gpureduce"

    gr_cpus_per_task
    # Since Slurm 22.05 srun does not inherit --cpus-per-task from the job:
    # pass it on explicitly, or every task gets one CPU.
    if [ -z "${SRUN_CPUS_PER_TASK:-}" ]; then
        export SRUN_CPUS_PER_TASK=$GR_CPUS_PER_TASK
    else
        GR_CPUS_FROM="SRUN_CPUS_PER_TASK"
    fi

    GR_LAUNCHER=${GR_LAUNCHER:-srun}
    case $GR_LAUNCHER in
    srun)
        if [ -z "${GR_SRUN_MPI:-}" ]; then
            local offered p
            offered=$(srun --mpi=list 2>&1 | sed -e 's/^[[:space:]]*//' -e 's/.*available:[[:space:]]*//' | tr ' ,' '\n\n')
            for p in pmix pmix_v5 pmix_v4 pmix_v3 pmi2; do
                if grep -qx "$p" <<<"$offered"; then GR_SRUN_MPI=$p; break; fi
            done
            [ -n "${GR_SRUN_MPI:-}" ] || gr_fail "srun offers no PMIx or PMI-2 plugin (srun --mpi=list: $(tr '\n' ' ' <<<"$offered")); ask the admins for slurm-wlm-basic-plugins with pmix, or use GR_LAUNCHER=mpirun"
        fi
        GR_LAUNCH=(srun "--mpi=$GR_SRUN_MPI" --kill-on-bad-exit=1)
        ;;
    mpirun)
        # Open MPI reads the allocation from Slurm and starts its daemons with srun
        read -r -a GR_LAUNCH <<<"${GR_MPIRUN:-mpirun}"
        GR_LAUNCH+=(-np "$SLURM_NTASKS")
        if [ "$(id -u)" -eq 0 ]; then GR_LAUNCH+=(--allow-run-as-root); fi
        ;;
    *) gr_fail "GR_LAUNCHER=$GR_LAUNCHER: use srun or mpirun" ;;
    esac
    GR_WRAP_CMD=()
    if [ -n "${GR_WRAP:-}" ]; then read -r -a GR_WRAP_CMD <<<"$GR_WRAP"; fi

    local gpus=""
    if [ -n "${SLURM_GPUS_PER_TASK:-}" ] && [ "$SLURM_GPUS_PER_TASK" != 0 ]; then
        gpus="$SLURM_GPUS_PER_TASK per task"
    fi
    [ -z "${SLURM_GPUS_PER_NODE:-}" ] || gpus="${gpus:+$gpus, }$SLURM_GPUS_PER_NODE per node"
    [ -n "$gpus" ] || gpus=${SLURM_GPUS:-none}
    echo "# job ${SLURM_JOB_ID} (${SLURM_JOB_NAME:-}) on ${SLURM_JOB_NUM_NODES:-?} node(s) ${SLURM_JOB_NODELIST:-}:" \
        "${SLURM_NTASKS:-?} task(s), ${SLURM_NTASKS_PER_NODE:-?} per node, $SRUN_CPUS_PER_TASK CPU(s) per task ($GR_CPUS_FROM)," \
        "GPUs $gpus, gpu-bind ${SLURM_GPU_BIND:-default}"
    echo "# launcher: ${GR_LAUNCH[*]}${GR_WRAP:+ $GR_WRAP}; gpureduce: $GPUREDUCE"
}

# gr_run ARGS...: gpureduce ARGS on every task of the job.
gr_run() {
    "${GR_LAUNCH[@]}" "${GR_WRAP_CMD[@]}" "$GPUREDUCE" "$@"
}

# gr_placement_args ARGS...: the options among ARGS that decide placement
# (backend, binding, GPU sharing, threads), into GR_PLACE_ARGS.
gr_placement_args() {
    GR_PLACE_ARGS=()
    while [ $# -gt 0 ]; do
        case $1 in
        --backend=* | --bind=* | --threads=* | --share-gpus) GR_PLACE_ARGS+=("$1") ;;
        --backend | --bind | --threads) [ $# -ge 2 ] && GR_PLACE_ARGS+=("$1" "$2") && shift ;;
        esac
        shift
    done
}

# gr_check_world ARGS...: one placement run; fails when the MPI world is not
# the job (a singleton launch: every task an MPI job of 1), prints the table.
gr_check_world() {
    gr_placement_args "$@"
    local out rc=0 np heads rows
    out=$(gr_run --topo "${GR_PLACE_ARGS[@]}" 2>&1) || rc=$?
    echo "$out"
    [ $rc -eq 0 ] || gr_fail "the placement run (gpureduce --topo) failed with exit status $rc; see above"
    heads=$(grep -c '^# gpureduce .* placement: np ' <<<"$out" || true)
    np=$(sed -n 's/^# gpureduce .* placement: np \([0-9]*\),.*/\1/p' <<<"$out" | head -n 1)
    rows=$(grep -cE '^#[[:space:]]+[0-9]+[[:space:]]' <<<"$out" || true)
    if [ "$heads" -ne 1 ] || [ "${np:-0}" -ne "${SLURM_NTASKS:-0}" ]; then
        gr_fail "MPI world size ${np:-?} (in $heads placement report(s)) is not SLURM_NTASKS=${SLURM_NTASKS:-?}: the tasks did not join one MPI job (a singleton launch). Launch with srun --mpi=pmix (srun --mpi=list shows what this Slurm offers; set GR_SRUN_MPI) and an MPI built with PMIx, or use GR_LAUNCHER=mpirun"
    fi
    [ "$rows" -eq "$np" ] || gr_fail "the placement report has $rows row(s) for $np rank(s)"
    echo "# world size check: MPI world size $np = SLURM_NTASKS $SLURM_NTASKS: ok"
}
