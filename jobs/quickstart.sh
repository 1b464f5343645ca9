#!/bin/bash
# quickstart.sh - from a fresh checkout: install what is missing, build, and
# run one real reduction on 2 ranks (on the GPUs when present, else the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash jobs/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
MPIFLAGS="--oversubscribe"
if [ "$(id -u)" -eq 0 ]; then MPIFLAGS="$MPIFLAGS --allow-run-as-root"; fi
mpirun $MPIFLAGS -np 2 build/gpureduce --n 2^24 --dtype f32 --op sum --gen uniform --verify
