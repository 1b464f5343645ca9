# No output line that does not apply to the run (issue 26): the cpu backend
# makes no transfer to a GPU, so no H2D figure in the table, CSV or JSON; a
# single run proves nothing about repeatability, so it says "1 run" plainly.
. "$(dirname "$0")/lib.sh"

C="--backend cpu"
export GR_PROGRESS=off

# --input on the cpu backend: no h2d row, no h2d rate; null / empty in JSON / CSV
run 1 gen --out "$TMP/a.npy" --n 10000 --gen ones --dtype f32
expect_rc 0 "gen"
run 2 --input "$TMP/a.npy" $C --chunk 8K --repeat 2
expect_rc 0 "input table"
expect_out "^read +[0-9.]+" "read row"
expect_out "^bandwidth +read [0-9.]+ GB/s, reduce [0-9.]+ GB/s, pipeline" "bandwidth line without h2d"
CHECKS=$((CHECKS + 1))
if grep -Eqi "h2d" "$TMP/out"; then fail "cpu backend: an H2D line or figure in the table"; fi
expect_out "^repeatable +yes, same bits every run \(2 runs\)" "2 runs compared"
run 2 --input "$TMP/a.npy" $C --chunk 8K --repeat 2 --format json
expect_rc 0 "input json"
expect_eq "$(json_get "d['time']['h2d'], d['gbps']['h2d'], d['h2d_reference'], d['time']['read']['median'] > 0, d['repeatable']")" \
    "None None None True True" "json: h2d null on the cpu backend"
run 2 --input "$TMP/a.npy" $C --chunk 8K --repeat 2 --format csv
expect_rc 0 "input csv"
expect_eq "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), repr(r[0]['h2d_s']), repr(r[1]['h2d_gbps']), float(r[0]['read_s']) > 0)" "$TMP/out")" \
    "2 '' '' True" "csv: h2d columns empty on the cpu backend"

# one run: "1 run", no claim (table), null (JSON), empty (scale CSV)
run 1 $C --n 1000 --repeat 1
expect_rc 0 "repeat 1 table"
expect_out "^repeatable +not checked: 1 run " "repeat 1 says 1 run"
CHECKS=$((CHECKS + 1))
if grep -Eq "same bits|1 runs" "$TMP/out"; then fail "repeat 1: a repeatability claim from one run"; fi
run 1 $C --n 1000 --repeat 1 --format json
expect_eq "$(json_get "d['repeat'], d['repeatable']")" "1 None" "repeat 1 json: repeatable null"
run 1 $C --n 1000 --repeat 3
expect_out "^repeatable +yes, same bits every run \(3 runs\)" "repeat 3 compares"
run 1 --input "$TMP/a.npy" $C
expect_rc 0 "input, one pass (its default)"
expect_out "^repeatable +not checked: 1 run " "input default: 1 run"
run 1 --input "$TMP/a.npy" $C --op stats
expect_out "^repeatable +not checked: 1 run " "input stats: 1 run"
run 2 $C --op stats --gen ones --n 1000 --repeat 1 --format json
expect_eq "$(json_get "d['repeat'], d['repeatable']")" "1 None" "stats repeat 1 json"
run 2 scale --strong 1000 $C --repeat 1 --format csv
expect_rc 0 "scale repeat 1"
expect_eq "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), [x['repeatable'] for x in r])" "$TMP/out")" \
    "2 ['', '']" "scale csv, repeat 1: repeatable empty"
run 2 scale --strong 1000 $C --repeat 2 --format csv
expect_eq "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print([x['repeatable'] for x in r])" "$TMP/out")" \
    "['1', '1']" "scale csv, repeat 2: repeatable 1"

finish
