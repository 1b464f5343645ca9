#!/usr/bin/env bash
# python_install.sh - the package as a user installs it: `cmake --install` of
# this build into a temporary prefix (the shared library's SONAME and every
# symbol the package calls checked), `pip install` of python/ (a copy, so the
# source tree gets no build files), then docs/PYTHON.md's example, which must
# be python/example.py verbatim, under mpirun -np 2 with the library found
# through pkg-config alone (GPUREDUCE_LIBRARY unset).
# Environment from CTest: MPIRUN, GR_SRC, GR_BUILD, GR_PYTHON.
set -euo pipefail
: "${MPIRUN:?}" "${GR_SRC:?}" "${GR_BUILD:?}" "${GR_PYTHON:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$GR_SRC/tests/python/common.sh"
python_needs numpy mpi4py setuptools wheel
# docs/PYTHON.md quotes python/example.py verbatim
sed -n '/^<!-- example.py -->$/,/^```$/p' "$GR_SRC/docs/PYTHON.md" | sed '1,2d;$d' |
    diff -u "$GR_SRC/python/example.py" - || fail "docs/PYTHON.md's copy of python/example.py differs from the file"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$GR_BUILD" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(cd "$prefix" && ls -d lib*/pkgconfig | head -n1)
libdir=$prefix/${libdir%/pkgconfig}
if [ ! -e "$libdir/libgpureduce.so" ]; then
    echo "SKIP: a static libgpureduce (GR_BUILD_STATIC) cannot be loaded by ctypes"
    exit 77
fi
soname=$(readelf -d "$libdir/libgpureduce.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
want=$(sed -n 's/^SONAME = "\(.*\)" % ABI$/\1/p' "$GR_SRC/python/gpureduce/_lib.py")
abi=$(sed -n 's/^ABI = (\([0-9]*\), \([0-9]*\))$/\1.\2/p' "$GR_SRC/python/gpureduce/_lib.py")
[ "$soname" = "libgpureduce.so.$abi" ] || fail "the library's SONAME is '$soname'; the package loads libgpureduce.so.$abi ($want)"
[ -e "$libdir/$soname" ] || fail "SONAME $soname is not installed"
exported=$(nm -D --defined-only "$libdir/$soname" | awk '{print $3}')
for sym in $(grep -o '"gr_[a-z_0-9]*"' "$GR_SRC/python/gpureduce/_lib.py" | tr -d '"' | sort -u); do
    grep -qx "$sym" <<< "$exported" || fail "$soname does not export $sym, which the package calls"
done

cp -r "$GR_SRC/python" "$tmp/src"
"$GR_PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --no-build-isolation --target "$tmp/site" "$tmp/src" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install"; }
[ -f "$tmp/site/gpureduce/__init__.py" ] || fail "pip installed no gpureduce package"
cd "$tmp"
out=$(env -u GPUREDUCE_LIBRARY PYTHONPATH="$tmp/site" PKG_CONFIG_PATH="$libdir/pkgconfig" PYTHONDONTWRITEBYTECODE=1 \
    $MPIRUN -np 2 "$GR_PYTHON" -c "
import runpy, gpureduce as gr
import os; assert os.path.realpath(gr.library_path()) == os.path.realpath('$libdir/$soname'), gr.library_path()
runpy.run_path('$tmp/src/example.py')") || fail "the example under mpirun -np 2"
echo "$out"
grep -q '^sum .* at [0-9]*, x.x .*, |x| ' <<< "$out" || fail "the example printed no result line"
echo "python_install: ok ($soname from $libdir through pkg-config)"
