#!/bin/bash
# h200-ab.sh - price one change on the GPU machine in one device call: build two
# trees, A (before) and B (after), then run the same `gpureduce bench` commands on
# each, alternating A B A B ..., so machine drift shows up as A-to-A spread rather
# than as a difference. Logs under $OUT: ab.txt (every run, labelled), summary.txt.
#
#   GR_AB_A=dirA GR_AB_B=dirB [GR_AB_ROUNDS=2] [GR_AB_TESTS=regex] \
#       bash jobs/h200-ab.sh 'bench args 1' ['bench args 2' ...]
#
# Each argument is one bench command line (split on spaces), run as
# `mpirun -np 1 DIR/build-ab/gpureduce bench ARGS` from that tree; an argument that
# starts with "cg " runs `DIR/build-ab/examples/cg/gpureduce-cg` with the rest instead, and
# one that starts with "embed " `DIR/build-ab/gr_embed_cost` (both trees then build it). GR_AB_TESTS runs the gpu-labelled tests matching the regex on
# B once, after the builds (a change worth pricing must still be right); their
# programs are built (GR_AB_TEST_TARGETS, default the backend, exact, stats and vector
# op tests). Make the trees with `git archive`:
#   rm -rf .ab-a .ab-b && mkdir .ab-a .ab-b
#   git archive main | tar -x -C .ab-a && git archive HEAD | tar -x -C .ab-b
#   run: bash .ab-b/jobs/h200-ab.sh ...   (carry: [".ab-a", ".ab-b"], both git-ignored)
set -uo pipefail
DEADLINE=${DEADLINE:-560}
A=$(cd "${GR_AB_A:?set GR_AB_A to the before tree}" && pwd) || exit 2
B=$(cd "${GR_AB_B:?set GR_AB_B to the after tree}" && pwd) || exit 2
ROUNDS=${GR_AB_ROUNDS:-2}
cd "$(dirname "$0")/.." || exit 1
. jobs/device-lib.sh
LOG=$OUT/ab.txt
: >"$LOG"
[ $# -ge 1 ] || { echo "usage: GR_AB_A=dir GR_AB_B=dir bash jobs/h200-ab.sh 'bench args' ..." >&2; exit 2; }
note "A: $A   B: $B   rounds: $ROUNDS"
note "GPU: $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null | tr '\n' ';')"

build() { # build TREE: configure and build gpureduce (and the gpu tests when asked) in TREE/build-ab
    local d=$1
    (
        cd "$d" || exit 1
        configure_args build-ab
        # trees since the benchmark became its own program also need gpureduce-bench
        local bench="" cg="" tests=""
        grep -q gpureduce_bench CMakeLists.txt && bench=gpureduce_bench
        [ -n "$CG" ] && cg=gpureduce-cg
        [ -n "$EMB" ] && cg="$cg gr_embed_cost"
        [ -n "${GR_AB_TESTS:-}" ] && tests=${GR_AB_TEST_TARGETS:-test_cuda_backend test_exact_gpu test_stats_gpu test_vec_gpu}
        # shellcheck disable=SC2086 # target lists
        cmake "${CMAKE_ARGS[@]}" >build-ab.log 2>&1 &&
            cmake --build build-ab -j"$(( $(nproc) / 2 ))" --target gpureduce_cli $bench $cg $tests >>build-ab.log 2>&1
    )
}
CG="" EMB=""
for args in "$@"; do case "$args" in "cg "*) CG=1 ;; "embed "*) EMB=1 ;; esac; done
t0=$SECONDS
build "$A" & pa=$!
build "$B" & pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
cat "$A/build-ab.log" "$B/build-ab.log" >"$OUT/build.log" 2>/dev/null
if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
    note "FAIL  build (A exit $ra, B exit $rb; see build.log)"
    tail -30 "$OUT/build.log"
    exit 1
fi
note "PASS  build A and B ($((SECONDS - t0)) s)"

if [ -n "${GR_AB_TESTS:-}" ]; then
    step "ctest -L gpu -R $GR_AB_TESTS (B)" 200 "$OUT/ctest-b.log" ctest --test-dir "$B/build-ab" -L gpu -R "$GR_AB_TESTS" \
        --output-on-failure --timeout 150
    grep -E "tests passed|tests failed|\*\*\*|Failed" "$OUT/ctest-b.log" | sed 's/^/      /' | tee -a "$SUMMARY"
fi

for r in $(seq 1 "$ROUNDS"); do
    for args in "$@"; do
        for side in A B; do
            d=$A
            [ $side = B ] && d=$B
            case "$args" in
            "cg "*)
                echo "=== round $r side $side: $args" >>"$LOG"
                # shellcheck disable=SC2086
                step "round $r $side: $args" 120 "$LOG" $MPIRUN -np 1 "$d/build-ab/examples/cg/gpureduce-cg" ${args#cg } ;;
            "embed "*)
                echo "=== round $r side $side: $args" >>"$LOG"
                # shellcheck disable=SC2086
                step "round $r $side: $args" 120 "$LOG" $MPIRUN -np 1 "$d/build-ab/gr_embed_cost" ${args#embed } ;;
            *)
                echo "=== round $r side $side: bench $args" >>"$LOG"
                # shellcheck disable=SC2086
                step "round $r $side: bench $args" 120 "$LOG" $MPIRUN -np 1 "$d/build-ab/gpureduce" bench $args ;;
            esac
        done
    done
done
[ $failed -eq 0 ] && note "overall: PASS" || note "overall: FAIL"
exit $failed
