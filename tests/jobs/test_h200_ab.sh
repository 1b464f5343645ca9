# jobs/h200-ab.sh without a GPU: the argument checks (each a clear message and
# exit 2) and a failed build (exit 1, named in the summary, no bench run).
. "$(dirname "$0")/../cli/lib.sh"
AB="$GR_SRC/jobs/h200-ab.sh"
# ab [env NAME=VALUE | -u NAME]... -- [bench command lines]...
ab() {
    local e=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do e+=("$1"); shift; done
    shift
    env "${e[@]}" bash "$AB" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}
mkdir -p "$TMP/a" "$TMP/b"

ab -u GR_AB_A GR_AB_B="$TMP/b" OUT="$TMP/o1" -- x
expect_rc 2 "no A tree"
expect_err 'GR_AB_A' "the message names GR_AB_A"

ab GR_AB_A="$TMP/nonexistent" GR_AB_B="$TMP/b" OUT="$TMP/o2" -- x
expect_rc 2 "an A tree that does not exist"

ab GR_AB_A="$TMP/a" GR_AB_B="$TMP/b" OUT="$TMP/o3" --
expect_rc 2 "no bench command line"
expect_err '^usage: ' "usage on stderr"

# two trees with nothing to configure: the build fails, and no bench runs
ab GR_AB_A="$TMP/a" GR_AB_B="$TMP/b" OUT="$TMP/o4" DEADLINE=120 -- '--backend cpu --min 2^10 --max 2^10'
expect_rc 1 "a build that fails"
grep -q '^FAIL  build (A exit [1-9]' "$TMP/o4/summary.txt" || fail "summary names the failed build: $(cat "$TMP/o4/summary.txt")"
CHECKS=$((CHECKS + 1))
if [ -s "$TMP/o4/ab.txt" ]; then fail "a bench ran after a failed build"; fi
CHECKS=$((CHECKS + 1))

finish
