# lib.sh - two (or more) emulated hosts on one machine for Open MPI (sourced).
#
# Each "host" is a UTS namespace with its own host name: mpirun runs as host
# n0, and Open MPI's rsh launcher starts the daemon (orted) of every other
# host through mn_agent.sh instead of ssh, under `unshare --uts` with the host
# name set. Open MPI then sees separate nodes: node-local ranks, the shared-
# memory split (MPI_COMM_TYPE_SHARED) and the BTL choice (tcp over loopback
# between hosts, vader within one) follow the host names, as on a cluster.
#
# Per host, optional files in $MN_T:
#   host-NAME.env    sourced before the daemon (or mpirun, for n0) starts:
#                    the host's own environment, e.g. GR_TOPOLOGY_XML and
#                    GR_FAKE_GPUS for that host's GPUs. mpirun does not pass
#                    GR_* variables to other hosts, so each host has its own.
#   host-NAME.mount  sourced inside a private mount namespace (the daemon's
#                    only): mounts that only this host sees, e.g. a stale copy
#                    of an input file.
#
# Environment from CTest: MPIRUN, GPUREDUCE, GR_SRC, GR_BUILD.
# Exit 77 (skip) with the reason when this machine cannot do it.
set -u
: "${MPIRUN:?MPIRUN is set by CTest}"
: "${GPUREDUCE:?GPUREDUCE is set by CTest}"
: "${GR_SRC:?GR_SRC is set by CTest}"

MN_FAILS=0
MN_CHECKS=0
MN_T0=$(date +%s)
MN_RUN_TIMEOUT=${MN_RUN_TIMEOUT:-90} # seconds for any one mpirun
mn_skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; MN_FAILS=$((MN_FAILS + 1)); }
note() { echo "--- [$(($(date +%s) - MN_T0)) s] $*"; }
check() { MN_CHECKS=$((MN_CHECKS + 1)); }

# ---------------------------------------------------------------- capabilities
mn_require() {
    local p
    for p in unshare hostname timeout; do
        command -v "$p" >/dev/null || mn_skip "'$p' is not installed (util-linux, coreutils)"
    done
    command -v orted >/dev/null ||
        mn_skip "no orted on PATH: the two-host harness drives Open MPI 4's rsh launcher (mpirun --version: $($MPIRUN --version 2>&1 | head -n 1))"
    $MPIRUN --version 2>&1 | grep -Eqi "open ?mpi|openrte|open-mpi\.org" ||
        mn_skip "mpirun is not Open MPI ($($MPIRUN --version 2>&1 | head -n 1)); the harness uses Open MPI's rsh launcher"
    local why
    why=$(unshare --uts /bin/sh -c 'hostname mn-probe && [ "$(hostname)" = mn-probe ]' 2>&1) ||
        mn_skip "no UTS namespace here (unshare --uts needs CAP_SYS_ADMIN; containers often lack it): ${why:-hostname not changed}"
    MN_MOUNT_NS=0
    if unshare --mount --propagation private /bin/sh -c 'mount -t tmpfs mn-probe /mnt 2>/dev/null || mount -t tmpfs mn-probe /tmp' 2>/dev/null; then
        MN_MOUNT_NS=1
    fi
}

# ---------------------------------------------------------------- set-up
mn_setup() {
    mn_require
    MN_T=$(mktemp -d /tmp/grmultinode.XXXXXX)
    chmod 755 "$MN_T"
    : >"$MN_T/daemons"
    cat >"$MN_T/mn_agent.sh" <<EOF
#!/bin/bash
# rsh agent: mn_agent.sh HOST COMMAND... -> COMMAND as host HOST (own UTS
# namespace; own mount namespace when $MN_T/host-HOST.mount exists)
h=\$1; shift
T=$MN_T
echo "\$\$ \$h" >>"\$T/daemons"
ns=(--uts)
[ -r "\$T/host-\$h.mount" ] && ns+=(--mount --propagation private)
exec unshare "\${ns[@]}" /bin/bash -c '
    T=\$1 h=\$2; shift 2
    hostname "\$h" || exit 1
    if [ -r "\$T/host-\$h.mount" ]; then . "\$T/host-\$h.mount" || exit 1; fi
    if [ -r "\$T/host-\$h.env" ]; then set -a; . "\$T/host-\$h.env"; set +a; fi
    exec /bin/sh -c "\$*"' mn-agent "\$T" "\$h" "\$@"
EOF
    chmod +x "$MN_T/mn_agent.sh"
    # Between hosts: ob1 + tcp over loopback (vader stays within a host), the
    # daemons' wire-up on loopback too; the rsh launcher starts remote daemons
    # through the agent. (OMPI 5 / PRRTE reads PRTE_MCA_plm_ssh_agent.)
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo \
        OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_plm=rsh OMPI_MCA_plm_rsh_agent=$MN_T/mn_agent.sh \
        PRTE_MCA_plm_ssh_agent=$MN_T/mn_agent.sh OMPI_MCA_btl_vader_single_copy_mechanism=none \
        OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
    trap mn_teardown EXIT
    trap 'exit 1' INT TERM
}

# Every daemon the agent started is gone (a test that leaves an orted behind
# fails: on a cluster that is a rank still holding a node).
mn_teardown() {
    local rc=$? pid h left=""
    if [ -n "${MN_T:-}" ] && [ -s "$MN_T/daemons" ]; then
        for _ in $(seq 50); do
            left=""
            while read -r pid h; do kill -0 "$pid" 2>/dev/null && left="$left $pid($h)"; done <"$MN_T/daemons"
            [ -z "$left" ] && break
            sleep 0.1
        done
        if [ -n "$left" ]; then
            echo "FAIL: daemon(s) still running 5 s after mpirun returned:$left; killing them"
            while read -r pid h; do kill -9 "$pid" 2>/dev/null; done <"$MN_T/daemons"
            [ $rc -ne 0 ] || rc=1
        fi
    fi
    [ -n "${MN_T:-}" ] && rm -rf "$MN_T"
    exit $rc
}

# mn_host_env HOST LINES...: the environment of HOST (one VAR=value a line)
mn_host_env() {
    local h=$1; shift
    printf '%s\n' "$@" >"$MN_T/host-$h.env"
}

# ---------------------------------------------------------------- running
# mn_run NAME HOSTSPEC CMD...: `mpirun --host HOSTSPEC -np N CMD` as host n0,
# N the sum of HOSTSPEC's slots (n0:2,n1:2 -> 4); HOSTSPEC "local:N" runs
# plain mpirun -np N on the real host (the one-host reference). Output in
# $MN_T/NAME.out / .err; sets RC, OUT, ERR, SECS.
mn_run() {
    local name=$1 spec=$2; shift 2
    local np=0 s t0
    OUT=$MN_T/$name.out
    ERR=$MN_T/$name.err
    t0=$(date +%s)
    if [[ $spec == local:* ]]; then
        np=${spec#local:}
        timeout -k 10 "$MN_RUN_TIMEOUT" $MPIRUN -np "$np" "$@" >"$OUT" 2>"$ERR"
        RC=$?
    else
        for s in ${spec//,/ }; do np=$((np + ${s#*:})); done
        timeout -k 10 "$MN_RUN_TIMEOUT" unshare --uts /bin/bash -c '
            T=$1; shift
            hostname n0 || exit 1
            if [ -r "$T/host-n0.env" ]; then set -a; . "$T/host-n0.env"; set +a; fi
            exec "$@"' mn-n0 "$MN_T" $MPIRUN --host "$spec" -np "$np" "$@" >"$OUT" 2>"$ERR"
        RC=$?
    fi
    SECS=$(($(date +%s) - t0))
    note "$name ($spec, np $np): exit $RC in $SECS s: $*"
}

show() {
    echo "    --- stdout:"; sed 's/^/    | /' "$OUT" | head -n 40
    echo "    --- stderr:"; sed 's/^/    | /' "$ERR" | head -n 40
}
expect_rc0() { check; [ "$RC" -eq 0 ] || { fail "$1: exit status $RC, expected 0"; show; }; }
expect_in() { # FILE ERE LABEL
    check
    grep -Eq -- "$2" "$1" || { fail "$3: no /$2/ in $(basename "$1")"; show; }
}
# expect_same FILE_A FILE_B LABEL: identical text
expect_same() {
    check
    if ! diff -u "$1" "$2" >"$MN_T/diff"; then
        fail "$3"
        sed 's/^/    /' "$MN_T/diff" | head -n 40
    fi
}

# placement FILE: "rank host local gpu pci" per row of a placement table
placement() {
    awk '/^#[[:space:]]+[0-9]+[[:space:]]/ { print $2, $3, $5, $6, $7 }' "$1"
}

mn_finish() {
    note "done: $MN_CHECKS checks, $MN_FAILS failed"
    [ "$MN_FAILS" -eq 0 ]
}
