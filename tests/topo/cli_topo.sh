#!/bin/bash
# `gpureduce --topo [--format json]`: the placement table / JSON of all ranks.
# Skips (77) until the CLI offers --topo.
. "$(dirname "$0")/lib.sh"
: "${GPUREDUCE:?GPUREDUCE is set by CTest}"
G=$GPUREDUCE
if ! "$G" --help 2>&1 | grep -q -- "--topo"; then
    echo "SKIP: $G --help does not mention --topo yet"
    exit 77
fi
if ! command -v python3 >/dev/null; then
    echo "SKIP: python3 is needed to read the JSON"
    exit 77
fi

# check_json FILE NP KEY=v0/v1/..  : the placement array has NP entries in
# rank order with the given values per rank (one value = all ranks).
check_json() {
    python3 - "$@" <<'PY' || fail "json check: $*"
import json, sys
path, np = sys.argv[1], int(sys.argv[2])
text = open(path).read()
start = text.find("{")
if start < 0:
    sys.exit("no JSON object on stdout")
doc, _ = json.JSONDecoder().raw_decode(text[start:])
pl = doc.get("placement")
if not isinstance(pl, list) or len(pl) != np:
    sys.exit("placement is not an array of %d: %r" % (np, pl))
keys = ["rank", "host", "pid", "local_rank", "gpu", "gpu_name", "pci_bus_id", "cpuset", "numa", "bound", "gpu_choice"]
bad = 0
for i, p in enumerate(sorted(pl, key=lambda p: p.get("rank", -1))):
    for k in keys:
        if k not in p:
            print("rank %d: key %s missing" % (i, k)); bad = 1
    if p.get("rank") != i:
        print("rank %d: rank is %r" % (i, p.get("rank"))); bad = 1
    for spec in sys.argv[3:]:
        k, vals = spec.split("=", 1)
        vals = vals.split("/")
        want = vals[0] if len(vals) == 1 else vals[i]
        got = p.get(k)
        if k == "bound" or k == "gpu_choice":
            ok = want in str(got)
        else:
            ok = str(got) == want
        if not ok:
            print("rank %d: %s is %r, expected %r" % (i, k, got, want)); bad = 1
sys.exit(bad)
PY
}

export GR_TOPOLOGY_XML="$TOPO_DIR/dgx8.xml" GR_FAKE_GPUS=$DGX8_GPUS

run json8 $MPIRUN -np 8 "$G" --topo --format json
expect_rc0 json8
S0=$DGX8_S0 S1=$DGX8_S1
check_json "$OUT" 8 gpu=0/1/2/3/4/5/6/7 numa=0/0/0/0/1/1/1/1 local_rank=0/1/2/3/4/5/6/7 \
    pci_bus_id=${DGX8_GPUS//,//} cpuset=$S0/$S0/$S0/$S0/$S1/$S1/$S1/$S1 host="$HOST" bound="cpu+mem by gpureduce"

run table $MPIRUN -np 8 "$G" --topo
expect_rc0 table
for b in ${DGX8_GPUS//,/ }; do expect_in "$OUT" "$b" table; done
expect_in "$OUT" "$S1" table

run launcher env GR_FAKE_LAUNCHER_CPUSET=8/0/9/1 $MPIRUN -np 4 "$G" --topo --format json
expect_rc0 launcher
check_json "$OUT" 4 gpu=4/0/5/1 cpuset=8/0/9/1 numa=1/0/1/0

run bind_none $MPIRUN -np 2 "$G" --topo --format json --bind none
expect_rc0 bind_none
check_json "$OUT" 2 cpuset=0-31 "bound=nothing (--bind none)"

run bind_launcher env GR_FAKE_LAUNCHER_CPUSET=8-11/12-15 $MPIRUN -np 2 "$G" --topo --format json --bind launcher
expect_rc0 bind_launcher
check_json "$OUT" 2 cpuset=8-11/12-15 "bound=cpu by launcher"

run too_many env GR_TOPOLOGY_XML="$TOPO_DIR/small2.xml" GR_FAKE_GPUS=$SMALL2_GPUS $MPIRUN -np 4 "$G" --topo
expect_rc_nonzero too_many
expect_in "$ERR" "host $HOST runs 4 ranks but has 2 GPU(s)" too_many

run share env GR_TOPOLOGY_XML="$TOPO_DIR/small2.xml" GR_FAKE_GPUS=$SMALL2_GPUS $MPIRUN -np 4 "$G" --topo \
    --format json --share-gpus
expect_rc0 share
check_json "$OUT" 4 gpu=0/1/0/1 cpuset=0-1/2-3/0-1/2-3 numa=0/1/0/1 "gpu_choice=shared by 2 ranks"

run single_gpu $MPIRUN -np 2 "$TOPO_DIR/with_rank_env.sh" GR_FAKE_GPUS=0000:b7:00.0/0000:07:00.0 -- \
    "$G" --topo --format json
expect_rc0 single_gpu
check_json "$OUT" 2 gpu=0 pci_bus_id=0000:b7:00.0/0000:07:00.0 numa=1/0

run epyc4 env GR_TOPOLOGY_XML="$TOPO_DIR/epyc4.xml" GR_FAKE_GPUS=0000:01:00.0,0000:41:00.0,0000:81:00.0,0000:c1:00.0 \
    $MPIRUN -np 4 "$G" --topo --format json
expect_rc0 epyc4
check_json "$OUT" 4 gpu=0/1/2/3 cpuset=0-3/4-7/8-11/12-15 numa=0/1/2/3

run h200 env GR_TOPOLOGY_XML="$TOPO_DIR/h200pair.xml" GR_FAKE_GPUS=$H200_GPUS $MPIRUN -np 2 "$G" --topo --format json
expect_rc0 h200
check_json "$OUT" 2 gpu=0/1 pci_bus_id=0000:18:00.0/0000:2a:00.0 cpuset=0-15 numa=0

run bad_xml env GR_TOPOLOGY_XML="$TOPO_DIR/no-such-file.xml" $MPIRUN -np 2 "$G" --topo
expect_rc_nonzero bad_xml
expect_in "$ERR" "no-such-file.xml" bad_xml

finish
