#!/usr/bin/env bash
# python_test.sh NP cpu|gpu - the Python package's pytest suite under
# mpirun -np NP, on the library of this build tree (GPUREDUCE_LIBRARY, set by
# CTest to the shared library target) and the package in python/ (PYTHONPATH):
# nothing installed is used. Exit 77 (SKIP) without numpy, mpi4py or pytest,
# for a sanitizer or static build, and (gpu) without a CUDA build or a GPU.
# Environment from CTest: MPIRUN, GR_SRC, GR_BUILD, GR_PYTHON, GPUREDUCE_LIBRARY.
set -euo pipefail
np=${1:?NP}
suite=${2:-cpu}
: "${MPIRUN:?}" "${GR_SRC:?}" "${GR_BUILD:?}" "${GR_PYTHON:?}" "${GPUREDUCE_LIBRARY:?}"
. "$GR_SRC/tests/python/common.sh"
python_needs numpy mpi4py pytest
case $GPUREDUCE_LIBRARY in
*.so*) ;;
*) echo "SKIP: a static libgpureduce (GR_BUILD_STATIC) cannot be loaded by ctypes"; exit 77 ;;
esac
if [ "$suite" = gpu ]; then
    # the CUDA runtime the library links (none: a build without CUDA)
    cudart=$(ldd "$GPUREDUCE_LIBRARY" | sed -n 's/.*libcudart[^ ]* => \([^ ]*\).*/\1/p' | head -n1)
    if [ -z "$cudart" ]; then
        echo "SKIP: this build has no CUDA backend"
        exit 77
    fi
    n=$("$GR_PYTHON" -c "import ctypes,sys; c=ctypes.c_int(0); l=ctypes.CDLL(sys.argv[1]); \
print(c.value if l.cudaGetDeviceCount(ctypes.byref(c)) == 0 else 0)" "$cudart" 2> /dev/null || echo 0)
    if [ "$n" = 0 ]; then
        echo "SKIP: no GPU visible"
        exit 77
    fi
    export GR_CUDART=$cudart
fi
export PYTHONPATH=$GR_SRC/python PYTHONDONTWRITEBYTECODE=1 GR_PY_DATA=$GR_BUILD/python_data
# an mpi4py built against another MPI than the library's cannot share the process with it
if ! msg=$($MPIRUN -np 1 "$GR_PYTHON" -c 'import gpureduce; gpureduce.library_version()' 2>&1); then
    if grep -q "two MPI libraries" <<< "$msg"; then
        echo "SKIP: $(grep -o 'gpureduce: two MPI libraries.*' <<< "$msg" | head -n1)"
        exit 77
    fi
fi
exec $MPIRUN -np "$np" "$GR_PYTHON" -m pytest -q -p no:cacheprovider -rs "$GR_SRC/tests/python/test_$suite.py"
