#!/bin/bash
# install-deps.sh - install what gpureduce needs on Debian 12 / Ubuntu 24.04.
# Idempotent: installs only the packages that are missing. The CUDA toolkit
# is not installed here (use NVIDIA's); without it the cpu backend is built.
set -euo pipefail
PKGS="build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhwloc-dev hwloc libmpfr-dev python3"
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
