#!/bin/bash
# sass-diff.sh - is the device code of two builds the same, kernel by kernel?
#
#   jobs/sass-diff.sh BEFORE AFTER [OUTDIR]
#
# BEFORE, AFTER: a library, executable or object with device code (e.g.
# build-before/libgpureduce.so and build/libgpureduce.so), or a text file
# that already holds `cuobjdump -sass` of one. Every kernel's SASS is taken
# out of both, its name demangled and normalised (the renames below: a
# template argument that became a type names the same instance), and the
# bodies compared name by name. Prints one line per kernel that differs or
# exists on one side only, then a summary; exit 0 when every kernel of both
# is present in both with the same SASS, 1 otherwise, 2 on a usage error.
# OUTDIR (default: a temporary folder) keeps the dumps and per-kernel files.
#
# Needs cuobjdump and nvdisasm (the CUDA toolkit's; or, where the toolkit
# came without them: python3 -m pip install --target DIR
# nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, then put DIR/nvidia/cu13/bin
# on PATH) and c++filt (binutils).
#
# The restructure of issue 18 (branch tuning: the instance table, the tuning
# policies, the exact kernel's policy type) was checked with:
#   git archive f496e36 | tar -x -C /tmp/before      # the commit before
#   cmake -S /tmp/before -B /tmp/before/build -DCMAKE_BUILD_TYPE=Release
#   cmake --build /tmp/before/build -j2 --target gpureduce gr_exact_ablate
#   cmake --build build -j2 --target gpureduce gr_exact_ablate
#   jobs/sass-diff.sh /tmp/before/build/libgpureduce.so build/libgpureduce.so
#   o=tests/CMakeFiles/gr_exact_ablate.dir/exact_gpu/exact_ablate.cu.o
#   jobs/sass-diff.sh /tmp/before/build/$o build/$o
# Result: libgpureduce 287 of 287 kernels identical; the tests' ablation
# instances 34 of 34 identical; after merging main e72abdb (batch launches),
# libgpureduce 290 of 290 identical against main.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,14p' "$0" >&2
    exit 2
fi
before=$1 after=$2
out=${3:-$(mktemp -d)}
mkdir -p "$out"
for t in cuobjdump nvdisasm c++filt python3; do
    if ! command -v "$t" >/dev/null 2>&1 && ! [ -x "/usr/local/cuda/bin/$t" ]; then
        echo "sass-diff: $t not found (see the header of $0 for where to get it)" >&2
        exit 2
    fi
done
export PATH="$PATH:/usr/local/cuda/bin"

dump() { # file -> OUTDIR/name.sass
    if head -c 4 "$1" | grep -q $'\x7fELF'; then
        cuobjdump -sass "$1" >"$2"
    else
        cp "$1" "$2"
    fi
}
dump "$before" "$out/before.sass"
dump "$after" "$out/after.sass"

python3 - "$out" <<'EOF'
import os, re, subprocess, sys

out = sys.argv[1]

# Renames that keep the instance: old spelling <- new spelling (issue 18).
RENAMES = [
    # the exact kernel's ablation flags (an int, 0 in production) became a
    # policy type (gr_exact_policy in production, kernels/gr_exact.cuh)
    (re.compile(r", gr_exact_policy>"), ", 0>"),
    # the tests' ablation instances: flag set F became the policy gr_xf_policy<F>
    # (tests/exact_gpu/exact_ablate.cu)
    (re.compile(r", gr_xf_policy<(\d+)> ?>"), r", \1>"),
]

def kernels(path):
    text = open(path, errors="replace").read()
    parts = re.split(r"^\s*Function : (\S+)\s*$", text, flags=re.M)
    names = parts[1::2]
    bodies = parts[2::2]
    dem = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    dem = dem.split("\n")[: len(names)]
    table = {}
    for name, body in zip(dem, bodies):
        for pat, rep in RENAMES:
            name = pat.sub(rep, name)
        # the body ends where the next section's header starts
        body = re.split(r"^\s*\.{6,}\s*$", body, flags=re.M)[0]
        lines = [l.strip() for l in body.splitlines() if l.strip()]
        key = name
        n = 2
        while key in table:  # the same kernel in two objects (never expected): keep both
            key = "%s #%d" % (name, n)
            n += 1
        table[key] = lines
    return table

b = kernels(os.path.join(out, "before.sass"))
a = kernels(os.path.join(out, "after.sass"))
same = differ = 0
bad = []
for name in sorted(set(b) | set(a)):
    if name not in a:
        bad.append("only before: " + name)
    elif name not in b:
        bad.append("only after:  " + name)
    elif a[name] == b[name]:
        same += 1
    else:
        differ += 1
        ia = sum(1 for l in a[name] if l.startswith("/*") and ";" in l)
        ib = sum(1 for l in b[name] if l.startswith("/*") and ";" in l)
        bad.append("differs:     %s (%d -> %d instructions)" % (name, ib, ia))
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:150]
        with open(os.path.join(out, "differs-%s.before" % safe), "w") as f:
            f.write("\n".join(b[name]) + "\n")
        with open(os.path.join(out, "differs-%s.after" % safe), "w") as f:
            f.write("\n".join(a[name]) + "\n")
for line in bad:
    print(line)
print("sass-diff: %d kernels before, %d after; %d identical, %d differ, %d on one side only (dumps in %s)"
      % (len(b), len(a), same, differ, len(bad) - differ, out))
sys.exit(0 if not bad else 1)
EOF
