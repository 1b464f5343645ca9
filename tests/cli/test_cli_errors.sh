# Every bad input gives its message and exit status 2 (usage) or non-zero
# through MPI_Abort (runtime), on every rank count, with no hang.
. "$(dirname "$0")/lib.sh"

# Every case as a singleton; the cases marked (np 2) again under mpirun -np 2,
# where all ranks must agree on the exit status.
check_usage_errors() {
    local np=$1
    run $np --frobnicate
    expect_rc 2 "unknown option (np $np)"; expect_err "unknown option '--frobnicate'" "unknown option text"
    expect_err "Try 'gpureduce --help'" "usage hint"; expect_no_result "unknown option"

    run $np --n 12Q
    expect_rc 2 "bad size suffix"; expect_err "cannot parse size '12Q'" "bad size text"
    run $np --n -5
    expect_rc 2 "negative size"; expect_err "cannot parse size" "negative size text"
    run $np --n 2^64
    expect_rc 2 "2^64 overflows"
    run $np --n 1.5M
    expect_rc 2 "fractional size"
    run $np --per-rank 17179869184T
    expect_rc 2 "per-rank overflow"

    run $np --op powsum:0
    expect_rc 2 "powsum:0"; expect_err "powsum needs an integer power in 1..8" "powsum:0 text"
    run $np --op powsum:9
    expect_rc 2 "powsum:9"
    run $np --op powsum:x
    expect_rc 2 "powsum:x"
    run $np --op median
    expect_rc 2 "unknown op"; expect_err "unknown op 'median'" "unknown op text"
    run $np --dtype f8
    expect_rc 2 "unknown dtype"; expect_err "unknown type 'f8' \\(use f32, f64, i32, i64, f16 or bf16\\)" "unknown dtype text"
    run $np --dtype bf16 --gen uniform --mode exact --op sumsq --backend cpu --n 100
    expect_rc 0 "bf16 exact sumsq is accepted"
    run $np --dtype f16 --mode exact --op powsum:3 --backend cpu --n 100
    expect_rc 2 "f16 exact powsum:3"; expect_err "mode exact supports" "f16 exact powsum:3 text"
    run $np --gen gauss
    expect_rc 2 "unknown generator"
    run $np --backend tpu
    expect_rc 2 "unknown backend"
    run $np --format xml
    expect_rc 2 "unknown format"
    run $np --mode sloppy
    expect_rc 2 "unknown mode"
    run $np --repeat 0
    expect_rc 2 "repeat 0"
    run $np --n
    expect_rc 2 "missing value"; expect_err "needs a value" "missing value text"
    run $np --verify=yes
    expect_rc 2 "flag with a value"
    run $np --n 10 --per-rank 10
    expect_rc 2 "--n with --per-rank"
    run $np positional
    expect_rc 2 "positional argument"

    # dtype/op/generator combinations that make no sense
    run $np --dtype i32 --gen normal
    expect_rc 2 "integer normal"; expect_err "makes real numbers" "integer normal text"
    run $np --dtype f64 --op powsum:3 --mode exact
    expect_rc 2 "exact f64 powsum:3"; expect_err "mode exact supports" "exact f64 powsum:3 text"
    run $np --dtype f32 --op powsum:3 --mode exact
    expect_rc 2 "exact f32 powsum:3"
    run $np --root 5
    expect_rc 2 "root out of range"; expect_err "only $np rank" "root text"
    run $np --cuda-block 100 --backend cpu --n 100
    expect_rc 2 "cuda-block 100"; expect_err "not a built block size: 128, 256, 512 or 1024" "cuda-block text"
    run $np --cuda-grid 2000000 --backend cpu --n 100
    expect_rc 2 "cuda-grid too large"
    # --seed: decimal only, no silent clamping
    run $np --seed 0x8 --backend cpu --n 100
    expect_rc 2 "hex seed"; expect_err "--seed: '0x8' is not a decimal integer" "hex seed text"
    run $np --seed 99999999999999999999999 --backend cpu --n 100
    expect_rc 2 "seed overflow"
    run $np --seed -1 --backend cpu --n 100
    expect_rc 2 "negative seed"
}
check_usage_errors 1

for np in 2; do
    run $np --frobnicate
    expect_rc 2 "unknown option (np $np)"; expect_err "unknown option '--frobnicate'" "unknown option text"
    expect_no_result "unknown option (np $np)"
    run $np --n 12Q
    expect_rc 2 "bad size suffix (np $np)"
    run $np --op powsum:0
    expect_rc 2 "powsum:0 (np $np)"
    run $np --dtype f64 --op powsum:4 --mode exact
    expect_rc 2 "exact f64 powsum:4 (np $np)"
    run $np --root 5
    expect_rc 2 "root out of range (np $np)"; expect_err "only $np rank" "root text (np $np)"
done

# messages come once, from rank 0, not once per rank
run 3 --frobnicate
CHECKS=$((CHECKS + 1))
if [ "$(grep -c "unknown option" "$TMP/err")" -ne 1 ]; then fail "usage error printed more than once"; fi

# a log level or subsystem that does not exist is named, not silently ignored
GR_DEBUG=bogus run 1 --backend cpu --n 100
expect_rc 0 "GR_DEBUG=bogus still runs"; expect_err "GR_DEBUG='bogus' is not a log level" "GR_DEBUG=bogus text"
GR_DEBUG_SUBSYS=bind,nope run 1 --backend cpu --n 100
expect_rc 0 "GR_DEBUG_SUBSYS with an unknown name runs"; expect_err "GR_DEBUG_SUBSYS: 'nope' is not a subsystem" "subsys text"

# a size whose shard does not fit in the address space: an error through MPI_Abort, no crash
run 1 --backend cpu --gen ones --n 2^62
expect_nonzero "2^62 f32 elements"; expect_err "do not fit in this process's address space" "2^62 text"
expect_err "\[rank 0 host " "2^62 error names rank and host"
run 2 --backend cpu --gen ones --per-rank 2^62 --op stats
expect_nonzero "2^62 per rank, stats"; expect_err "do not fit in this process.s address space" "2^62 per rank text"

# --backend cuda where no GPU is visible (or CUDA is not built): non-zero, says so
if ! nvidia-smi -L >/dev/null 2>&1; then
    run 2 --backend cuda --n 1000
    expect_nonzero "--backend cuda without a GPU"
    expect_err "no CUDA GPU is visible|built without CUDA" "--backend cuda text"
    expect_err "\[rank [0-9]+ host " "error line names rank and host"
    expect_no_result "--backend cuda without a GPU"
fi

# help and version succeed
run 1 --help
expect_rc 0 "--help"; expect_out "--per-rank SIZE" "help lists options"; expect_out "powsum:P" "help lists powsum"
run 2 --version
expect_rc 0 "--version"; expect_out "^gpureduce [0-9]+\.[0-9]+\.[0-9]+$" "version line"

finish
