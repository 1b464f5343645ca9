# jobs/ncu-stalls.py on a hand-made ncu source-page CSV: the warp count from the
# first instruction, the once-per-warp / loop split, the reason totals and the
# top list; gzip input; a clear error on a file without the CSV header.
. "$(dirname "$0")/../cli/lib.sh"
TOOL="$GR_SRC/jobs/ncu-stalls.py"
H='"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_long_sb","stall_no_inst","stall_barrier","stall_long_sb (Not Issued)"'
# 4 warps: the first instruction (lowest address) runs 4 times; 0x30 and 0x40
# form the loop (40 executions each); 0x50 runs twice per warp, 0x58 in one
# warp only (the last block's end: still "once per warp"); 0x60 never runs
cat >"$TMP/src.csv" <<CSV
==PROF== Connected to process 1
# the program's own output, before the CSV
$H
"0x1000","LDC R1, c[0x0][0x28]","5","4","0","5","0","0"
"0x1030","LDG.E.128 R4, desc[UR4][R2.64]","0","40","0","0","0","0"
"0x1040","LOP3.LUT R8, R4, 0x7f800000","60","40","58","0","2","99"
"0x1050","BAR.SYNC 0x0","7","8","0","3","4","0"
"0x1058","STG.E desc[UR4][R2.64], R4","1","1","0","1","0","0"
"0x1060","EXIT","9","0","9","0","0","0"
CSV

tool() { python3 "$TOOL" "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }

tool "$TMP/src.csv" 2
expect_rc 0 "summary of a valid file"
expect_out '^warps: 4; instructions executed: 5 of 6; stall samples: 73$' "warp count, executed instructions, samples"
expect_out '^once per warp +3 instructions, +13 samples \(17\.8%\): no_inst 9, barrier 4$' "start and end: 0x1000, 0x1050, 0x1058"
expect_out '^loops +2 instructions, +60 samples \(82\.2%\): long_sb 58, barrier 2$' "the loop (Not Issued columns not counted)"
expect_out '^top 2 instructions by samples:$' "top list header"
CHECKS=$((CHECKS + 1))
if [ "$(sed -n 5p "$TMP/out" | awk '{print $1}')" != 0x1040 ] || [ "$(sed -n 6p "$TMP/out" | awk '{print $1}')" != 0x1050 ]; then
    fail "top list: 0x1040 (60 samples) then 0x1050 (7); 0x1000 (5) cut at 2"
fi

gzip -c "$TMP/src.csv" >"$TMP/src.csv.gz"
tool "$TMP/src.csv.gz" 1
expect_rc 0 "gzip input"
expect_out 'stall samples: 73$' "gzip input read whole"

printf 'no csv here\n' >"$TMP/bad.txt"
tool "$TMP/bad.txt"
expect_nonzero "a file without the source-page CSV"
expect_err 'no source-page CSV header' "the error names what is missing"

finish
