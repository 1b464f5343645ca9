#!/bin/bash
# install-deps.sh - install what gpureduce needs on Debian 12 / Ubuntu 24.04.
# Idempotent: installs only the packages that are missing. The CUDA toolkit
# is not installed here (use NVIDIA's); without it the cpu backend is built.
set -euo pipefail
PKGS="build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhwloc-dev hwloc libmpfr-dev python3"
# Test-only packages, with --with-test-deps (CI): a real single-node Slurm
# for tests/slurm (label slurm), gnuplot for jobs/plot, clang for the fuzz test. Not by default:
# they install and enable daemons (munged, slurmd) a workstation need not run.
GR_TEST_PKGS="slurmctld slurmd slurm-client munge gnuplot-nox clang libclang-rt-dev"
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
