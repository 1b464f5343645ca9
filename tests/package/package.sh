#!/usr/bin/env bash
# package.sh MODE - libgpureduce as an installed package (issue 19).
# Installs the build tree into a temporary prefix (cmake --install, no
# rebuild), checks what is installed, then builds the examples out of tree
# against it, once with find_package and once with pkg-config:
#   cpu: examples/host_sum, run under mpirun -np 1 and 3; examples/stream_sum
#        is built too (not run) when the build has CUDA.
#        examples/cg (gpureduce-cg) with find_package, run on the cpu backend
#        under mpirun -np 1 and 3: the same bits in exact mode.
#   gpu: examples/stream_sum, run under mpirun -np 1 and 2 (exit 77 when the
#        build has no CUDA or no GPU is visible); examples/cg with
#        find_package, its cuda exact run the same bits as its cpu one.
# Environment from CTest: GR_BUILD, GR_SRC, MPIRUN.
set -euo pipefail
mode=${1:-cpu}
: "${GR_BUILD:?}" "${GR_SRC:?}" "${MPIRUN:?}"
cache=$GR_BUILD/CMakeCache.txt
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n1; }

if [ -n "$(cache_get GR_SANITIZE)" ]; then
    echo "SKIP: a sanitizer build's library cannot be linked by uninstrumented example programs"
    exit 77
fi
cuda=0
if grep -q '^CMAKE_CUDA_COMPILER:.*=/' "$cache" && [ "$(cache_get GR_WITH_CUDA)" = ON ]; then
    cuda=1
fi
if [ "$mode" = gpu ] && [ $cuda = 0 ]; then
    echo "SKIP: this build has no CUDA backend"
    exit 77
fi
mpicc=$(cache_get MPI_C_COMPILER)
[ -x "$mpicc" ] || mpicc=mpicc
cuda_arch=$(cache_get CMAKE_CUDA_ARCHITECTURES)
cuda_arch=${cuda_arch%%;*}
cuda_arch=${cuda_arch:-90}
nvcc=$(cache_get CMAKE_CUDA_COMPILER)
cuda_home=${nvcc%/bin/nvcc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$GR_BUILD" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(cd "$prefix" && ls -d lib*/cmake/gpureduce | head -n1)
libdir=${libdir%/cmake/gpureduce}
[ -n "$libdir" ] || fail "no lib*/cmake/gpureduce under the prefix"

# --- what is installed: the public header, the library, the CLI, the package files
[ "$(ls "$prefix/include")" = gpureduce.h ] || fail "include/ holds more than the public header: $(ls "$prefix/include")"
shared=0
pc_flags=--static
if ls "$prefix/$libdir"/libgpureduce.so.* > /dev/null 2>&1; then
    shared=1
    pc_flags=
    soname=$(readelf -d "$prefix/$libdir/libgpureduce.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
    [ -n "$soname" ] || fail "libgpureduce.so has no SONAME"
    [ -e "$prefix/$libdir/$soname" ] || fail "SONAME $soname is not installed"
    echo "shared library, SONAME $soname"
else
    [ -f "$prefix/$libdir/libgpureduce.a" ] || fail "no libgpureduce.so.* nor libgpureduce.a installed"
    echo "static library (GR_BUILD_STATIC)"
fi
[ -x "$prefix/bin/gpureduce" ] || fail "bin/gpureduce is not installed"
for f in gpureduceConfig.cmake gpureduceConfigVersion.cmake gpureduceTargets.cmake; do
    [ -f "$prefix/$libdir/cmake/gpureduce/$f" ] || fail "$libdir/cmake/gpureduce/$f is not installed"
done
[ -f "$prefix/$libdir/pkgconfig/gpureduce.pc" ] || fail "$libdir/pkgconfig/gpureduce.pc is not installed"
if grep -q "GR_WITH_CUDA\|$GR_SRC\|$GR_BUILD" "$prefix/$libdir/cmake/gpureduce/"gpureduceTargets*.cmake; then
    fail "the exported targets carry a private definition or a path of the build tree"
fi
extra=$(cd "$prefix" && find . -type f -o -type l | grep -v -E "^\./(include/gpureduce\.h|bin/gpureduce(-bench)?|$libdir/libgpureduce\.(so[.0-9]*|a)|$libdir/cmake/gpureduce/gpureduce[A-Za-z-]*\.cmake|$libdir/pkgconfig/gpureduce\.pc)$" || true)
[ -z "$extra" ] || fail "installed files beyond the package: $extra"
# the installed commands find the installed library by themselves
"$prefix/bin/gpureduce" --help > /dev/null || fail "the installed bin/gpureduce does not run"
if [ -e "$prefix/bin/gpureduce-bench" ]; then
    "$prefix/bin/gpureduce-bench" --help > /dev/null || fail "the installed bin/gpureduce-bench does not run"
fi

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pkg-config --exists gpureduce || fail "pkg-config cannot read gpureduce.pc"
[ "$(pkg-config --modversion gpureduce)" = "$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$cache")" ] ||
    fail "gpureduce.pc's version differs from the project's"

# --- the examples, out of tree
cmake_example() { # name build-dir [extra cmake args]
    local name=$1 dir=$2
    shift 2
    cmake -S "$GR_SRC/examples/$name" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_COMPILER="$(cache_get CMAKE_C_COMPILER)" "$@" > "$dir.log" 2>&1 &&
        cmake --build "$dir" >> "$dir.log" 2>&1 || { cat "$dir.log"; fail "$name: CMake build with find_package"; }
}
make_example() { # name build-dir [make args]
    local name=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    cp "$GR_SRC/examples/$name"/* "$dir"/
    rm -f "$dir/CMakeLists.txt"
    make -C "$dir" MPICC="$mpicc" PC_FLAGS="$pc_flags" "$@" > "$dir.log" 2>&1 || { cat "$dir.log"; fail "$name: make with pkg-config"; }
}
cg_bits() { # np gpureduce-cg args...: the bits its exact run must agree on
    local np=$1
    shift
    $MPIRUN -np "$np" "$@" --n 12 --mode exact --format json |
        sed -n 's/.*"iterations": \([0-9]*\).*"residual_hex": "\([^"]*\)".*"solution_hash": "\([0-9a-f]*\)".*/\1 \2 \3/p'
}
run() { # np program
    local np=$1
    shift
    local rc=0
    $MPIRUN -np "$np" "$@" || rc=$?
    return $rc
}

if [ "$mode" = cpu ]; then
    # docs/LIBRARY.md quotes host_sum.c verbatim
    sed -n '/^<!-- host_sum.c -->$/,/^```$/p' "$GR_SRC/docs/LIBRARY.md" | sed '1,2d;$d' > "$tmp/quoted.c"
    diff -u "$GR_SRC/examples/host_sum/host_sum.c" "$tmp/quoted.c" > "$tmp/quoted.diff" ||
        { cat "$tmp/quoted.diff"; fail "docs/LIBRARY.md's copy of host_sum.c differs from the file"; }
    cmake_example host_sum "$tmp/hs-cmake"
    make_example host_sum "$tmp/hs-make"
    for exe in "$tmp/hs-cmake/host_sum" "$tmp/hs-make/host_sum"; do
        # a CPU-only program of 30 lines is small: the kernels stay in libgpureduce
        if [ $shared = 1 ]; then
            bytes=$(stat -c %s "$exe")
            [ "$bytes" -lt 1048576 ] || fail "$exe is $bytes bytes: it carries the library"
        fi
        for np in 1 3; do
            run "$np" "$exe" || fail "$exe under mpirun -np $np"
        done
    done
    if [ $cuda = 1 ]; then
        cmake_example stream_sum "$tmp/ss-cmake" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"
        make_example stream_sum "$tmp/ss-make" CUDA_HOME="$cuda_home" CUDA_ARCH="sm_$cuda_arch"
        echo "stream_sum built with find_package and with pkg-config (it runs under the gpu label)"
        cmake_example cg "$tmp/cg-cmake" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"
    else
        cmake_example cg "$tmp/cg-cmake"
    fi
    # gpureduce-cg out of tree: exact mode on the cpu backend, the same bits on 1 and 3 ranks
    cg1=$(cg_bits 1 "$tmp/cg-cmake/gpureduce-cg" --backend cpu) || fail "gpureduce-cg under mpirun -np 1"
    cg3=$(cg_bits 3 "$tmp/cg-cmake/gpureduce-cg" --backend cpu) || fail "gpureduce-cg under mpirun -np 3"
    [ -n "$cg1" ] && [ "$cg1" = "$cg3" ] || fail "gpureduce-cg exact: np 1 gives '$cg1', np 3 gives '$cg3'"
    echo "gpureduce-cg built with find_package; exact np 1 = np 3: $cg1"
else
    cmake_example stream_sum "$tmp/ss-cmake" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"
    make_example stream_sum "$tmp/ss-make" CUDA_HOME="$cuda_home" CUDA_ARCH="sm_$cuda_arch"
    rc=0
    run 1 "$tmp/ss-cmake/stream_sum" || rc=$?
    if [ $rc = 77 ]; then
        echo "SKIP: no GPU visible"
        exit 77
    fi
    [ $rc = 0 ] || fail "stream_sum (find_package) under mpirun -np 1: exit $rc"
    run 2 "$tmp/ss-cmake/stream_sum" || fail "stream_sum (find_package) under mpirun -np 2"
    run 1 "$tmp/ss-make/stream_sum" || fail "stream_sum (pkg-config) under mpirun -np 1"
    cmake_example cg "$tmp/cg-cmake" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch"
    cgc=$(cg_bits 1 "$tmp/cg-cmake/gpureduce-cg" --backend cpu) || fail "gpureduce-cg --backend cpu"
    cgg=$(cg_bits 1 "$tmp/cg-cmake/gpureduce-cg" --backend cuda) || fail "gpureduce-cg --backend cuda"
    [ -n "$cgc" ] && [ "$cgc" = "$cgg" ] || fail "gpureduce-cg exact: cpu gives '$cgc', cuda gives '$cgg'"
    echo "gpureduce-cg built with find_package; exact cuda = cpu: $cgg"
fi
echo "package: ok ($mode)"
