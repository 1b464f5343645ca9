# Progress on stderr (issue 26; docs/CLI.md "Progress and --quiet").
#  - a short piped run prints no progress; stdout is the same table, CSV or JSON;
#  - GR_PROGRESS_AFTER=0 shows every phase, on stderr only, never in CSV/JSON;
#  - under a pseudo-terminal the line is redrawn in place (\r) and ends with a
#    newline; --quiet and GR_PROGRESS=off silence it (SKIP, 77, without a pty).
# Timing-independent: a phase prints its last line when it ran at least
# GR_PROGRESS_AFTER seconds, so 0 shows every phase of a tiny run.
. "$(dirname "$0")/lib.sh"

PROG='^gpureduce: (generating|warm-up|timed runs|reading|writing|scale|bench|--verify)'
C="--backend cpu"

# no_progress DESCRIPTION: stderr has no progress line
no_progress() {
    CHECKS=$((CHECKS + 1))
    if grep -Eq "$PROG" "$TMP/err"; then fail "$1: progress on stderr"; fi
}
# stdout_clean DESCRIPTION: nothing of the progress in stdout
stdout_clean() {
    CHECKS=$((CHECKS + 1))
    if grep -q 'gpureduce: ' "$TMP/out" || grep -q $'\r' "$TMP/out"; then fail "$1: progress text in stdout"; fi
}

# ---- a short piped run: silent by default (threshold 5 s off a terminal) ----
unset GR_PROGRESS GR_PROGRESS_AFTER
run 1 $C --n 4096 --repeat 2 --format csv --verify
expect_rc 0 "piped csv"
no_progress "short piped run"
cp "$TMP/out" "$TMP/quiet_ref.csv"
# (under mpirun a stalled CI machine could stretch a phase past 5 s: 60 s says the same)
GR_PROGRESS_AFTER=60 run 2 $C --n 4096 --repeat 2
expect_rc 0 "piped table np 2"
no_progress "short piped run under mpirun"

# ---- every phase shown (log style off a terminal): stderr only ----
export GR_PROGRESS_AFTER=0
run 1 $C --n 4096 --repeat 2 --format csv --verify
expect_rc 0 "csv with progress"
stdout_clean "csv"
expect_err "^gpureduce: generating 4096 f32 elements \(uniform\): .* in " "generation phase"
expect_err "^gpureduce: warm-up: 2 runs in " "warm-up phase"
expect_err "^gpureduce: timed runs: 2 runs in " "timed runs phase"
expect_err "^gpureduce: --verify: the exact CPU reference: done in " "--verify phase"
CHECKS=$((CHECKS + 1))
if grep -q $'\r' "$TMP/err"; then fail "log style: no carriage return off a terminal"; fi
CHECKS=$((CHECKS + 1))
n=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(len(r), len(set(map(len, r))))" "$TMP/out")
[ "$n" = "3 1" ] || fail "csv with progress: header + 2 rows of one width expected, got '$n'"
CHECKS=$((CHECKS + 1))
[ "$(head -1 "$TMP/out")" = "$(head -1 "$TMP/quiet_ref.csv")" ] || fail "csv header differs with progress"
# forced redraw style in a pipe still keeps stdout clean
GR_PROGRESS=tty run 1 $C --n 4096 --repeat 2 --format json
expect_rc 0 "json, GR_PROGRESS=tty"
stdout_clean "json, GR_PROGRESS=tty"
CHECKS=$((CHECKS + 1))
[ "$(json_get "d['n'], d['repeat']")" = "4096 2" ] || fail "json with progress does not parse"
expect_err $'\rgpureduce: timed runs: 2 runs in ' "GR_PROGRESS=tty: the line starts with \\r"
run 2 $C --n 4096 --repeat 2 --format json
stdout_clean "json np 2"
expect_err "^gpureduce: timed runs: 2 runs in " "np 2: rank 0 reports"
CHECKS=$((CHECKS + 1))
[ "$(grep -c "timed runs: 2 runs in" "$TMP/err")" = 1 ] || fail "np 2: one rank (0) reports, not each"
# --op stats, gen --out, --input, scale and bench have their phases
run 1 $C --op stats --gen ones --n 4096 --repeat 2 --format csv
stdout_clean "stats csv"
expect_err "^gpureduce: timed runs: 2 runs in " "stats: timed runs"
run 2 gen --out "$TMP/p.npy" --n 20000 --gen iota --dtype f64 --chunk 16K --format csv
expect_rc 0 "gen"
stdout_clean "gen csv"
expect_err "^gpureduce: writing .*p\.npy: 0\.16 MB in " "gen: writing phase with its bytes"
run 2 --input "$TMP/p.npy" --chunk 16K --repeat 2 --warmup 1 --format csv $C
expect_rc 0 "input"
stdout_clean "input csv"
expect_err "^gpureduce: reading .*p\.npy \(warm-up 1 of 1\): 0\.16 MB in " "input: warm-up pass"
expect_err "^gpureduce: reading .*p\.npy \(run 2 of 2\): 0\.16 MB in .*GB/s" "input: timed pass"
run 2 scale --strong 4096 $C --repeat 1 --format csv
expect_rc 0 "scale"
stdout_clean "scale csv"
expect_err "^gpureduce: scale: 2 rows in " "scale: rows"
run 1 bench $C --min 2^10 --max 2^12 --iters 2 --format csv
expect_rc 0 "bench"
stdout_clean "bench csv"
expect_err "^gpureduce: bench: 2 groups in " "bench: groups"
# --quiet and GR_PROGRESS=off
run 1 $C --n 4096 --repeat 2 --quiet
no_progress "--quiet"
GR_PROGRESS=off run 1 $C --n 4096 --repeat 2
no_progress "GR_PROGRESS=off"
run 1 bench $C --min 2^10 --max 2^10 --iters 2 --quiet
no_progress "bench --quiet"

# ---- a pseudo-terminal: script(1), or Python's pty ----
# pty_run FILE CMD: the terminal's transcript of sh -c CMD into FILE
pty_run() {
    local f=$1
    shift
    if [ "$PTY" = script ]; then
        timeout 120 script -qec "$*" /dev/null >"$f" 2>&1 </dev/null
    else
        timeout 120 python3 -c 'import pty, sys; sys.exit(pty.spawn(["sh", "-c", sys.argv[1]]) >> 8)' "$*" >"$f" \
            2>&1 </dev/null
    fi
}
# pty_works KIND: KIND (script or python) gives a child a terminal on stderr
pty_works() {
    PTY=$1
    pty_run "$TMP/probe" 'test -t 2 && echo pty-ok' && grep -q pty-ok "$TMP/probe"
}
if command -v script >/dev/null && pty_works script; then
    :
elif command -v python3 >/dev/null && pty_works python; then
    :
else
    PTY=
fi
echo "pseudo-terminal: ${PTY:-none}"
if [ -z "$PTY" ]; then
    echo "no pseudo-terminal here (neither script nor python3 pty works): the terminal checks are skipped"
    finish || exit 1
    exit 77
fi
unset GR_PROGRESS
# stdout to a file, stderr on the terminal: the line is redrawn, stdout is pure CSV
pty_run "$TMP/tty" "GR_PROGRESS_AFTER=0 '$GPUREDUCE' $C --n 4096 --repeat 3 --format csv >'$TMP/tty.csv'"
CHECKS=$((CHECKS + 1))
grep -q $'\rgpureduce: timed runs: 3 runs in .*s *\r*$' "$TMP/tty" ||
    { fail "pty ($PTY): no redrawn progress line"; cat -v "$TMP/tty" | head -20; }
CHECKS=$((CHECKS + 1))
grep -q $'\rgpureduce: generating 4096 f32' "$TMP/tty" || fail "pty: no generation line"
CHECKS=$((CHECKS + 1))
n=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(len(r), len(set(map(len, r))))" "$TMP/tty.csv")
[ "$n" = "4 1" ] || fail "pty: stdout is not header + 3 CSV rows: '$n'"
CHECKS=$((CHECKS + 1))
if grep -q 'gpureduce: ' "$TMP/tty.csv"; then fail "pty: progress in stdout"; fi
# --quiet and GR_PROGRESS=off on the terminal
pty_run "$TMP/tty" "GR_PROGRESS_AFTER=0 '$GPUREDUCE' $C --n 4096 --repeat 3 --quiet >/dev/null"
CHECKS=$((CHECKS + 1))
if grep -q 'gpureduce: ' "$TMP/tty"; then fail "pty: --quiet still shows progress"; fi
pty_run "$TMP/tty" "GR_PROGRESS=off GR_PROGRESS_AFTER=0 '$GPUREDUCE' $C --n 4096 --repeat 3 >/dev/null"
CHECKS=$((CHECKS + 1))
if grep -q 'gpureduce: ' "$TMP/tty"; then fail "pty: GR_PROGRESS=off still shows progress"; fi
unset GR_PROGRESS_AFTER

finish
