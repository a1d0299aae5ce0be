#!/usr/bin/env bash
# xc-info reports on this machine (no GPU, no driver here) and on every
# shipped topology description: the text report names the classification,
# the JSON parses and carries the same class, and a bad file is reported,
# not crashed on; the algorithm table it prints is the one docs/collectives.md
# describes.
set -euo pipefail
xc_info=$1 topo_dir=$2 algo_doc=$3
fail() { echo "FAIL: $*"; exit 1; }

text=$("$xc_info") || fail "xc-info exited $?"
grep -q '^Build' <<<"$text" || fail "no build section"
grep -q 'class ' <<<"$text" || fail "no classification in: $text"
grep -q 'XC_TOPO_FILE' <<<"$text" || fail "the XC_TOPO_FILE variable is not listed"
"$xc_info" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["topology"] is not None, d.get("topology_error")' \
  || fail "--json on the live machine"

"$xc_info" --json | python3 -c '
import json, re, sys
table = [e["name"] for e in json.load(sys.stdin)["algorithms"]["table"]]
doc = re.findall(r"^\| `([a-z_]+)` \|", open(sys.argv[1]).read(), re.M)
assert sorted(table) == sorted(doc), f"table {sorted(table)} but {sys.argv[1]} lists {sorted(doc)}"
' "$algo_doc" || fail "docs/collectives.md and the algorithm table disagree"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
expect() {  # file class gpus
  XC_TOPO_FILE="$topo_dir/$1" "$xc_info" --json >"$tmp" || fail "xc-info on $1 exited $?"
  python3 - "$1" "$2" "$3" "$tmp" <<'PY' || fail "xc-info --json on $1"
import json, sys
name, cls, gpus, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
assert d["class"] == cls, f"{name}: class {d['class']}, expected {cls}"
assert len(d["topology"]["gpus"]) == gpus, f"{name}: {len(d['topology']['gpus'])} GPUs, expected {gpus}"
PY
  local text
  text=$(XC_TOPO_FILE="$topo_dir/$1" "$xc_info") || fail "xc-info on $1 exited $?"
  grep -q "class        $2" <<<"$text" || fail "text report on $1 lacks class $2"
}
expect dgx_h100.json fully_connected 8
expect dgx1_v100.json hybrid_cube_mesh 8
expect pcie4.json pcie_only 4
expect nvlink_bridge2.json fully_connected 2
expect cpu_2socket.json no_gpu 0

out=$(XC_TOPO_FILE=/nonexistent/topology.json "$xc_info") || fail "xc-info must still report with a bad XC_TOPO_FILE"
grep -q 'topology     unavailable' <<<"$out" || fail "a bad XC_TOPO_FILE is not reported"
echo "ok"
