#!/usr/bin/env python3
"""ncu-stalls.py - summarise ncu's source-level warp stall sampling of one kernel.

Input: the output of
    ncu --page source --print-source sass --csv --section SourceCounters \
        --section WarpStateStats -k regex:KERNEL --launch-count 1 PROGRAM ...
(lines before the CSV header, such as the program's own output, are skipped).

Output: the stall samples by reason, split between the instructions every warp
runs about once (at most twice per warp: the kernel's start and end; the warp
count is read off the kernel's first instruction, which every warp runs once)
and the rest (its loops), then the TOP instructions by samples with their two
main reasons. docs/EXACT.md ("Loads in flight") read the exact kernel's fixed
cost this way.

Usage: ncu-stalls.py FILE [TOP]   (FILE may be gzip-compressed; TOP default 20)
"""
import csv
import gzip
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        lines = f.readlines()
    for i, line in enumerate(lines):
        if line.startswith('"Address"'):
            return list(csv.DictReader(lines[i:]))
    sys.exit(f"ncu-stalls: no source-page CSV header (\"Address\",...) in {path}: "
             "run ncu with --page source --print-source sass --csv")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rows = read_rows(sys.argv[1])
    reasons = [k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    ran = [r for r in rows if number(r[EXECUTED]) > 0]
    if not ran:
        sys.exit("ncu-stalls: no executed instructions in the file")
    warps = number(min(ran, key=lambda r: int(r["Address"], 16))[EXECUTED])
    total = sum(number(r[SAMPLES]) for r in ran)
    print(f"warps: {warps:.0f}; instructions executed: {len(ran)} of {len(rows)}; stall samples: {total:.0f}")
    for part, pick in (("once per warp", lambda e: e <= 2 * warps), ("loops", lambda e: e > 2 * warps)):
        sel = [r for r in ran if pick(number(r[EXECUTED]))]
        got = sum(number(r[SAMPLES]) for r in sel)
        by = sorted(((sum(number(r[k]) for r in sel), k) for k in reasons), reverse=True)
        main_reasons = ", ".join(f"{k[6:]} {v:.0f}" for v, k in by[:5] if v > 0)
        print(f"{part:14s} {len(sel):6d} instructions, {got:6.0f} samples ({100 * got / max(total, 1):4.1f}%): {main_reasons}")
    print(f"top {top} instructions by samples:")
    for r in sorted(ran, key=lambda r: -number(r[SAMPLES]))[:top]:
        by = sorted(((number(r[k]), k) for k in reasons), reverse=True)[:2]
        why = ", ".join(f"{k[6:]} {v:.0f}" for v, k in by if v > 0)
        print(f"  {r['Address']:>16s} {r['Source'][:56]:56s} {number(r[SAMPLES]):6.0f}  x{number(r[EXECUTED]):<8.0f} {why}")


if __name__ == "__main__":
    main()
