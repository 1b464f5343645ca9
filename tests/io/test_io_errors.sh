# Bad input: every case gives one line from rank 0 naming the file and the
# problem, exit status 1 (2 for command-line misuse), no result, no hang.
. "$(dirname "$0")/lib_io.sh"
cd "$TMP" || exit 1
C="--backend cpu"

$NPYW write good.npy --shape 100 >/dev/null
mkdir adir
: >empty.npy
$NPYW write badmagic.npy --magic 934e554d505a >/dev/null
printf 'PK\003\004 this is a zip, not an npy' >archive.npy
$NPYW write v4.npy --major 4 >/dev/null
$NPYW write hlen_long.npy --shape 3 --hlen-delta 4096 >/dev/null
$NPYW write hlen_short.npy --hlen-delta -60 >/dev/null
$NPYW write hlen_cut.npy --hlen-delta -80 >/dev/null
$NPYW write hlen_into_data.npy --shape 64 --hlen-delta 64 >/dev/null
$NPYW write fortran.npy --shape 2,3 --fortran >/dev/null
$NPYW write bigendian.npy --descr '>f8' >/dev/null
$NPYW write object.npy --descr '|O' >/dev/null
$NPYW write uint.npy --descr '<u4' >/dev/null
$NPYW write overflow.npy --shape 4294967296,4294967296 --no-data >/dev/null
$NPYW write truncated.npy --shape 1000 --truncate 8 >/dev/null
$NPYW write raw10.bin --raw --descr '<f4' --shape 2 --extra 2 >/dev/null
$NPYW write raw16.bin --raw --descr '<f8' --shape 2 >/dev/null
cp good.npy noperm.npy

for np in 1 3; do
    run $np --input missing.npy $C
    expect_rc 1 "missing (np $np)"; expect_one_error "input 'missing.npy': no such file" "missing"; expect_no_result "missing"
    run $np --input adir $C
    expect_rc 1 "directory (np $np)"; expect_one_error "input 'adir': is a directory" "directory"; expect_no_result "dir"
    run $np --input empty.npy $C
    expect_rc 1 "empty (np $np)"; expect_one_error "input 'empty.npy': the file is empty" "empty"; expect_no_result "empty"
    run $np --input badmagic.npy $C
    expect_rc 1 "bad magic (np $np)"; expect_one_error "'badmagic.npy': not a .npy file: bad magic" "bad magic"
    expect_no_result "bad magic"
    run $np --input archive.npy $C
    expect_rc 1 "zip named .npy"; expect_one_error "'archive.npy': not a .npy file: bad magic 'PK" "zip named .npy"
    run $np --input v4.npy $C
    expect_rc 1 "version 4 (np $np)"; expect_one_error "'v4.npy': unsupported .npy format version 4.0" "version"
    expect_no_result "version"
    run $np --input hlen_long.npy $C
    expect_rc 1 "header length past EOF (np $np)"; expect_one_error "'hlen_long.npy': header length [0-9]+ runs past the end of the file" "header length past EOF"
    run $np --input hlen_short.npy $C
    expect_rc 1 "header length short (np $np)"; expect_one_error "'hlen_short.npy': header length [0-9]+ is wrong: the header does not end with" "header length short"
    run $np --input hlen_cut.npy $C
    expect_rc 1 "header length cuts the dict (np $np)"; expect_one_error "'hlen_cut.npy': header length [0-9]+ is wrong: the header dict is cut short" "header length cuts the dict"
    run $np --input hlen_into_data.npy $C
    expect_rc 1 "header length into data (np $np)"; expect_one_error "'hlen_into_data.npy': header length [0-9]+ is wrong: non-padding bytes" "header length into data"
    expect_no_result "header length"
    run $np --input fortran.npy $C
    expect_rc 1 "fortran (np $np)"; expect_one_error "'fortran.npy': fortran_order is True" "fortran"; expect_no_result "fortran"
    run $np --input bigendian.npy $C
    expect_rc 1 "big-endian (np $np)"; expect_one_error "'bigendian.npy': big-endian data \(descr '>f8'\)" "big-endian"
    run $np --input object.npy $C
    expect_rc 1 "object (np $np)"; expect_one_error "'object.npy': object array" "object"
    run $np --input uint.npy $C
    expect_rc 1 "unsupported dtype (np $np)"; expect_one_error "'uint.npy': unsupported dtype '<u4'" "unsupported dtype"
    run $np --input overflow.npy $C
    expect_rc 1 "shape overflow (np $np)"; expect_one_error "'overflow.npy': shape's element count overflows 64 bits" "shape overflow"
    expect_no_result "shape overflow"
    run $np --input truncated.npy $C
    expect_rc 1 "truncated (np $np)"; expect_one_error "'truncated.npy': truncated: the header promises 4000 bytes of data .* only 3992" "truncated"
    expect_no_result "truncated"
    run $np --input raw10.bin --dtype f32 $C
    expect_rc 1 "raw size (np $np)"; expect_one_error "'raw10.bin': raw data of 10 bytes .* not a multiple of the f32 item size \(4 bytes\)" "raw size"
    run $np --input raw16.bin --dtype f64 --offset 17 $C
    expect_rc 1 "offset past end (np $np)"; expect_one_error "'raw16.bin': --offset 17 is past the end of the file \(16 bytes\)" "offset past end"
    expect_no_result "offset past end"
    run $np --input raw16.bin --dtype f64 --offset 1K $C
    expect_rc 1 "offset 1K past end (np $np)"; expect_one_error "--offset 1024 is past the end of the file" "offset 1K is 1024 bytes"
    run $np --input raw16.bin $C
    expect_rc 1 "raw without dtype (np $np)"; expect_one_error "'raw16.bin': not a .npy file .*give --dtype" "raw without dtype"
    run $np --input good.npy --dtype f64 $C
    expect_rc 1 "dtype mismatch (np $np)"; expect_one_error "--dtype f64 does not match the file's descr '<f4'" "dtype mismatch"
    run $np --input good.npy --offset 8 $C
    expect_rc 1 "offset with npy (np $np)"; expect_one_error "--offset applies to raw files only" "offset with npy"

    # no read permission: real for a normal user; as root (whom mode 000 does
    # not stop) the open_guard shim makes open() fail with EACCES instead
    if [ "$(id -u)" -ne 0 ]; then
        chmod 000 noperm.npy
        run $np --input noperm.npy $C
        chmod 644 noperm.npy
    else
        [ $np -eq 1 ] && echo "note: running as root: no-permission is simulated with the open_guard shim (EACCES)"
        GR_DENY_PATH="$TMP/noperm.npy" LD_PRELOAD="$GR_OPEN_GUARD" run $np --input noperm.npy $C
    fi
    expect_rc 1 "no permission (np $np)"; expect_one_error "'noperm.npy': permission denied" "no permission"
    expect_no_result "no permission"
done

# command-line misuse: exit 2, the usual usage message
run 2 --offset 8 --n 100
expect_rc 2 "--offset without --input"; expect_err "belong to --input" "--offset without --input text"
run 2 --input good.npy --chunk 0
expect_rc 2 "--chunk 0"; expect_err "--chunk: '0' is not a byte count" "--chunk 0 text"
run 2 --input good.npy --chunk 2G
expect_rc 2 "--chunk 2G"
run 2 --input good.npy --n 100
expect_rc 2 "--input with --n"; expect_err "--n does not apply to --input" "--input with --n text"
run 2 --input good.npy --gen ones
expect_rc 2 "--input with --gen"
run 2 --out x.npy --n 10
expect_rc 2 "--out without gen"; expect_err "belong to the gen command" "--out without gen text"
$NPYW write f64.npy --descr '<f8' >/dev/null
run 2 --input f64.npy --op powsum:3 --mode exact $C
expect_rc 2 "exact powsum:3 of an f64 file"; expect_err "input 'f64.npy' holds f64: --mode exact supports" "exact powsum:3 text"
run 2 --input f64.npy --op sumsq --mode exact $C
expect_rc 0 "exact sumsq of an f64 file (exact since issue 20)"

# gen refusals
run 2 gen --n 10
expect_rc 2 "gen without --out"; expect_err "gen needs --out" "gen without --out text"
run 2 gen --out new.npy
expect_rc 2 "gen without --n"
run 2 gen --out good.npy --n 10
expect_rc 1 "gen over an existing file"; expect_one_error "output 'good.npy': exists; pass --force" "gen existing"
run 2 gen --out nodir/x.npy --n 10
expect_rc 1 "gen into a missing directory"; expect_one_error "output 'nodir/x.npy': cannot create it: its directory does not exist" "gen nodir"
run 2 gen --out adir --n 10 --force
expect_rc 1 "gen onto a directory"; expect_one_error "output 'adir': is a directory" "gen dir"
run 2 gen --out good.npy --n 10 --force --input good.npy
expect_rc 2 "gen over --input"; expect_err "refusing to write over the --input file" "gen over --input text"
run 2 gen --out y.npy --n 10 --op max
expect_rc 2 "gen with a reduce option"; expect_err "--op does not apply to gen" "gen --op text"
run 2 gen --out y.npy --n 10 --dtype i32 --gen normal
expect_rc 2 "gen integer normal"
CHECKS=$((CHECKS + 1))
[ -e y.npy ] && fail "a refused gen left y.npy behind"
finish
