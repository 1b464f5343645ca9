# jobs/plot: PNG and SVG from a cpu-backend scale CSV and a small bench CSV;
# clear failures on missing columns. Skips (77) only without gnuplot.
. "$(dirname "$0")/../cli/lib.sh"
PLOT="$GR_SRC/jobs/plot"
if ! command -v gnuplot >/dev/null; then
    echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox; bash jobs/install-deps.sh --with-test-deps)"
    exit 77
fi

# is_png FILE / is_svg FILE: non-empty, with the format's signature
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1" && grep -q '</svg>' "$1"; }

# plot_run ARGS...: runs jobs/plot; RC, and its output in TMP/out, TMP/err
plot_run() {
    bash "$PLOT" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

# scale CSVs from real cpu-backend runs (strong and weak)
run 3 scale --strong 256K --backend cpu --repeat 2 --warmup 1 --format csv
expect_rc 0 "strong scale run"
cp "$TMP/out" "$TMP/strong.csv"
run 2 scale --weak 128K --backend cpu --repeat 2 --warmup 1 --format csv
expect_rc 0 "weak scale run"
cp "$TMP/out" "$TMP/weak.csv"

# a bench CSV as gpureduce bench writes it: comment preamble, header, rows
cat >"$TMP/bench.csv" <<'CSV'
# gpureduce bench: hand-made sample for the plot test
size,count,dtype,variant,time_us,GB/s,pct_copy,pct_peak,vs_cub,wrong
4194304,1048576,f32,copy,5.0,1677.7,100.0,35.0,,0
4194304,1048576,f32,cub,11.1,377.9,22.5,7.9,1.00,0
4194304,1048576,f32,tuned,6.0,699.1,41.7,14.6,1.85,0
67108864,16777216,f32,copy,30.0,4473.9,100.0,93.2,,0
67108864,16777216,f32,cub,20.7,3242.0,72.5,67.5,1.00,0
67108864,16777216,f32,tuned,16.0,4194.3,93.7,87.4,1.29,0
8388608,1048576,f64,cub,12.0,699.0,,,1.00,0
8388608,1048576,f64,"tuned-e2e",8.0,1048.6,,,1.50,0
CSV

OUTD="$TMP/plots"
plot_run -o "$OUTD" "$TMP/strong.csv" "$TMP/weak.csv" "$TMP/bench.csv"
CHECKS=$((CHECKS + 1))
[ "$RC" -eq 0 ] || fail "jobs/plot exit status $RC"
for f in bench-gbps-f32 bench-gbps-f64 strong+1-scaling; do
    CHECKS=$((CHECKS + 2))
    is_png "$OUTD/$f.png" || fail "$f.png missing, empty or not a PNG"
    is_svg "$OUTD/$f.svg" || fail "$f.svg missing, empty or not an SVG"
done
CHECKS=$((CHECKS + 1))
grep -q "copy ceiling" "$OUTD/bench-gbps-f32.svg" || fail "f32 plot has no copy ceiling line"

# one scale CSV alone, and a flat --ceiling on a bench without copy rows
grep -v ',copy,' "$TMP/bench.csv" >"$TMP/nocopy.csv"
plot_run -o "$OUTD" --ceiling 4800 "$TMP/weak.csv" "$TMP/nocopy.csv"
CHECKS=$((CHECKS + 3))
[ "$RC" -eq 0 ] || fail "plot of weak.csv + nocopy.csv: exit status $RC"
is_png "$OUTD/weak-scaling.png" || fail "weak-scaling.png"
grep -q "ceiling 4800" "$OUTD/nocopy-gbps-f32.svg" || fail "--ceiling line missing"

# a real bench CSV (cpu rows) as gpureduce bench writes it today
run 1 bench --backend cpu --min 2^10 --max 2^14 --iters 2 --warmup 1 --format csv
expect_rc 0 "gpureduce bench --backend cpu --format csv"
cp "$TMP/out" "$TMP/cpubench.csv"
plot_run -o "$OUTD" "$TMP/cpubench.csv"
CHECKS=$((CHECKS + 2))
[ "$RC" -eq 0 ] || fail "plot of a real bench CSV: exit status $RC: $(cat "$TMP/err")"
is_png "$OUTD/cpubench-gbps-f32.png" && is_svg "$OUTD/cpubench-gbps-f32.svg" || fail "cpubench-gbps-f32.png/.svg"

# -n NAME names the figures
plot_run -o "$OUTD" -n study "$TMP/weak.csv" "$TMP/strong.csv"
CHECKS=$((CHECKS + 1))
[ "$RC" -eq 0 ] && is_png "$OUTD/study-scaling.png" && is_svg "$OUTD/study-scaling.svg" || fail "-n study"

# bench header names: gbps + count (bytes from dtype)
printf 'count,dtype,variant,gbps\n1024,f64,cub,10\n2048,f64,cub,20\n' >"$TMP/alt.csv"
plot_run -o "$OUTD" "$TMP/alt.csv"
CHECKS=$((CHECKS + 1))
[ "$RC" -eq 0 ] && is_png "$OUTD/alt-gbps-f64.png" || fail "count+dtype+gbps header"

# missing columns fail clearly
printf 'size,dtype,variant,time_us\n1024,f32,cub,3\n' >"$TMP/nogbps.csv"
plot_run -o "$OUTD" "$TMP/nogbps.csv"
CHECKS=$((CHECKS + 2))
[ "$RC" -eq 1 ] || fail "bench without GB/s: exit status $RC, expected 1"
grep -q "no GB/s column" "$TMP/err" || fail "bench without GB/s: message: $(cat "$TMP/err")"
printf 'variant,gbps\ncub,3\n' >"$TMP/nosize.csv"
plot_run -o "$OUTD" "$TMP/nosize.csv"
CHECKS=$((CHECKS + 2))
[ "$RC" -eq 1 ] || fail "bench without size: exit status $RC"
grep -q "no size (bytes) or count column" "$TMP/err" || fail "bench without size: message: $(cat "$TMP/err")"
cut -d, -f1-3,5- "$TMP/strong.csv" >"$TMP/nogpus.csv"
plot_run -o "$OUTD" "$TMP/nogpus.csv"
CHECKS=$((CHECKS + 2))
[ "$RC" -eq 1 ] || fail "scale without gpus: exit status $RC"
grep -q "no gpus column" "$TMP/err" || fail "scale without gpus: message: $(cat "$TMP/err")"
printf 'a,b\n1,2\n' >"$TMP/other.csv"
plot_run -o "$OUTD" "$TMP/other.csv"
CHECKS=$((CHECKS + 2))
[ "$RC" -eq 1 ] || fail "unknown CSV: exit status $RC"
grep -q "neither a bench CSV" "$TMP/err" || fail "unknown CSV message"
plot_run
CHECKS=$((CHECKS + 1))
[ "$RC" -eq 2 ] || fail "no arguments: exit status $RC, expected 2"

finish
