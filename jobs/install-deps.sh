#!/bin/bash
# install-deps.sh - install what gpureduce needs on Debian 12 / Ubuntu 24.04.
# Idempotent: installs only the packages that are missing. The CUDA toolkit
# is not installed here (use NVIDIA's); without it the cpu backend is built.
set -euo pipefail
PKGS="build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhwloc-dev hwloc libmpfr-dev python3"
# Test-only packages, with --with-test-deps (CI): a real single-node Slurm
# for tests/slurm (label slurm), gnuplot for jobs/plot, clang for the fuzz test. Not by default:
# they install and enable daemons (munged, slurmd) a workstation need not run.
# python3-pip and python3-dev: the Python tests' packages below (mpi4py compiles against Python's headers).
GR_TEST_PKGS="slurmctld slurmd slurm-client munge gnuplot-nox clang libclang-rt-dev python3-pip python3-dev"
if [ "${1:-}" = --with-test-deps ]; then PKGS="$PKGS $GR_TEST_PKGS"; fi
PKGS="$PKGS ${GR_EXTRA_PKGS:-}"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "install-deps: installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "install-deps: all of: $PKGS present"
# The Python package's tests (tests/python, label python) import numpy, mpi4py,
# pytest, ml_dtypes (bfloat16) and wheel (pip install --no-build-isolation of
# python/ with setuptools) into the python3 on PATH, the one CMake finds.
# mpi4py is built from source against the system Open MPI, the libmpi that
# libgpureduce links (about 3 CPU-minutes, once); the others are wheels.
if [ "${1:-}" = --with-test-deps ]; then
    py=$(command -v python3)
    if ! "$py" -c 'import numpy, mpi4py, pytest, ml_dtypes, wheel' 2> /dev/null; then
        pip_flags=""
        # PEP 668: an interpreter marked externally managed (Debian's) needs the flag
        if [ -e "$("$py" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/EXTERNALLY-MANAGED" ]; then
            pip_flags=--break-system-packages
        fi
        echo "install-deps: pip installing numpy mpi4py pytest ml_dtypes wheel into $py"
        "$py" -m pip install -q --disable-pip-version-check --root-user-action=ignore $pip_flags --no-binary=mpi4py numpy mpi4py pytest ml_dtypes wheel
    fi
    echo "install-deps: $py imports numpy, mpi4py, pytest, ml_dtypes, wheel"
fi
