#!/bin/bash
# No topology file: the binding runs on the real machine with real syscalls
# (hwloc_get_cpubind, hwloc_set_cpubind, hwloc_set_membind). Works without a
# GPU: a real PCI device of this machine stands in for one via GR_FAKE_GPUS.
. "$(dirname "$0")/lib.sh"
P=$TOPO_PROBE
unset GR_TOPOLOGY_XML GR_FAKE_GPUS GR_FAKE_LAUNCHER_CPUSET

# No GPU: cpu backend, nothing to bind to; the reported mask is the real one.
run nogpu $MPIRUN -np 2 "$P" --check-affinity --expect-gpu -1 --expect-bound "(--bind gpu: no GPU to bind to)"
if grep -q "gpu=-1" "$TOPO_TMP/nogpu.out" || [ "$RC" -ne 0 ]; then
    expect_rc0 nogpu
else
    note "this machine has a GPU: skipping the no-GPU case"
fi

ncpu=$(nproc --all 2>/dev/null || echo 1)
if command -v taskset >/dev/null && [ "$ncpu" -ge 2 ]; then
    # The launcher (here taskset) bound the rank to CPU 1: kept, reported.
    run launcher $MPIRUN -np 1 taskset -c 1 "$P" --check-affinity --expect-cpuset 1 --expect-bound "cpu by launcher"
    expect_rc0 launcher
    run launcher_none $MPIRUN -np 1 taskset -c 1 "$P" --bind none --check-affinity --expect-cpuset 1 \
        --expect-bound "nothing (--bind none)"
    expect_rc0 launcher_none
else
    note "taskset missing or one CPU: skipping the launcher-mask cases"
fi

# A real PCI device of this machine as the "GPU": its locality comes from the
# real topology and the binding syscalls really run.
busid=""
if command -v lstopo-no-graphics >/dev/null; then
    busid=$(lstopo-no-graphics --of xml - 2>/dev/null | grep -o 'type="PCIDev"[^>]*pci_busid="[0-9a-f:.]*"' \
            | head -1 | sed 's/.*pci_busid="\([^"]*\)"/\1/')
fi
if [ -n "$busid" ]; then
    run realpci env GR_FAKE_GPUS=$busid $MPIRUN -np 1 "$P" --check-affinity --expect-pci "$busid" --expect-gpu 0 \
        --expect-bound "(--bind gpu"
    expect_rc0 realpci
    expect_not_in "$OUT" "simulated" realpci
    if command -v taskset >/dev/null && [ "$ncpu" -ge 2 ]; then
        # Bound to the device's cores within the launcher's mask: never wider.
        run realpci_mask env GR_FAKE_GPUS=$busid $MPIRUN -np 1 taskset -c 1 "$P" --check-affinity \
            --expect-cpuset 1 --expect-bound "cpu by launcher"
        expect_rc0 realpci_mask
    fi
else
    note "no PCI device found by lstopo: skipping the real-syscall case"
fi

finish
