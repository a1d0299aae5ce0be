# Placement: --bind-to core|numa|none within xcrun's own affinity,
# --report-bindings, XC_LOCAL_GPU and XC_LOCAL_NIC; on this machine, and on
# made-up machines described under XCRUN_FSROOT (whose cpus are real ones,
# so the binding itself still happens).
source "$(dirname "$0")/common.sh"
unset CUDA_VISIBLE_DEVICES XCRUN_FSROOT XC_LOCAL_GPU XC_LOCAL_NIC

# canon LIST: "0-2,5" → "0 1 2 5", the form every comparison below uses.
canon() {
  local item out=()
  for item in ${1//,/ }; do
    if [[ $item == *-* ]]; then
      out+=($(seq "${item%-*}" "${item#*-}"))
    else
      out+=("$item")
    fi
  done
  echo "${out[*]}"
}

# intersect "A B C" "B C D" → "B C"
intersect() {
  local x y out=()
  for x in $1; do
    for y in $2; do [ "$x" = "$y" ] && out+=("$x"); done
  done
  echo "${out[*]}"
}

allowed=$(canon "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")
allowed_list=($allowed)

# core_of CPU: the cpus of CPU's physical core that xcrun may use.
core_of() {
  local topo=/sys/devices/system/cpu/cpu$1/topology sib
  sib=$(cat "$topo/core_cpus_list" 2>/dev/null || cat "$topo/thread_siblings_list" 2>/dev/null || echo "$1")
  sib=$(intersect "$(canon "$sib")" "$allowed")
  echo "${sib:-$1}"
}
declare -A seen_core=()
for c in $allowed; do seen_core[$(core_of "$c")]=1; done
cores=${#seen_core[@]}

# The NUMA nodes' cpus that xcrun may use, one line each.
node_sets=""
for f in /sys/devices/system/node/node*/cpulist; do
  [ -e "$f" ] || continue
  set_=$(intersect "$(canon "$(cat "$f")")" "$allowed")
  [ -n "$set_" ] && node_sets+="$set_"$'\n'
done
[ -n "$node_sets" ] || node_sets="$allowed"$'\n'

# field RANK NAME: what the helper printed for that rank (cpus in canon form).
field() {
  local v
  v=$(sed -n "s/^rank=$1 .*\\<$2=\\([^ ]*\\).*/\\1/p" <<<"$out")
  if [ "$2" = cpus ]; then canon "$v"; else echo "$v"; fi
}

# check_core N DESCRIPTION: each of N ranks has one whole core, no two the same.
check_core() {
  local n=$1 what=$2 r cpus first
  declare -A taken=()
  for ((r = 0; r < n; r++)); do
    cpus=$(field $r cpus)
    first=${cpus%% *}
    if [ -z "$cpus" ]; then
      fail "$what: rank $r reported no cpus"
      continue
    fi
    [ "$cpus" = "$(core_of "$first")" ] || fail "$what: rank $r has cpus '$cpus', not one core ('$(core_of "$first")')"
    [ -z "${taken[$cpus]:-}" ] || fail "$what: ranks ${taken[$cpus]} and $r share cpus '$cpus'"
    taken[$cpus]=$r
  done
}

# check_all N WANT DESCRIPTION: every rank has exactly the cpus WANT.
check_all() {
  local r
  for ((r = 0; r < $1; r++)); do
    [ "$(field $r cpus)" = "$2" ] || fail "$3: rank $r has cpus '$(field $r cpus)', want '$2'"
  done
}

# --bind-to core, explicit and by default, up to one rank per core.
for n in 1 2 "$cores"; do
  ((n <= cores)) || continue
  run -n "$n" --bind-to core "$HELPER" affinity
  expect_rc 0 "--bind-to core -n $n"
  check_core "$n" "--bind-to core -n $n"
  run -n "$n" "$HELPER" affinity
  expect_rc 0 "default binding -n $n"
  check_core "$n" "default binding -n $n (ranks <= cores)"
done
# On this machine (2 cores, no SMT) that is exactly one cpu each.
if ((cores >= 2)) && [ "$cores" = "${#allowed_list[@]}" ]; then
  run -n 2 --bind-to core "$HELPER" affinity
  [ "$(field 0 cpus)" != "$(field 1 cpus)" ] && [[ "$(field 0 cpus)" != *" "* ]] && [[ "$(field 1 cpus)" != *" "* ]] ||
    fail "--bind-to core -n 2: want one distinct cpu per rank, got '$(field 0 cpus)' and '$(field 1 cpus)'"
fi

# More ranks than cores: unbound by default; shared cores, with a warning,
# when asked for.
n=$((cores + 1))
run -n "$n" "$HELPER" affinity
expect_rc 0 "default binding -n $n"
check_all "$n" "$allowed" "default binding with more ranks ($n) than cores ($cores)"
run -n "$n" --bind-to core "$HELPER" affinity
expect_rc 0 "--bind-to core -n $n"
expect_grep "$err" '^xcrun: --bind-to core: .* they share cores$' "oversubscribed --bind-to core warns"
for ((r = 0; r < n; r++)); do
  cpus=$(field $r cpus)
  [ "$cpus" = "$(core_of "${cpus%% *}")" ] || fail "--bind-to core -n $n: rank $r has '$cpus', not one core"
done

# none: xcrun's own set, whatever the count.
for n in 1 2 5; do
  run -n "$n" --bind-to none "$HELPER" affinity
  expect_rc 0 "--bind-to none -n $n"
  check_all "$n" "$allowed" "--bind-to none -n $n"
done

# numa: all of one node's cpus.
run -n 3 --bind-to numa "$HELPER" affinity
expect_rc 0 "--bind-to numa"
for r in 0 1 2; do
  grep -qxF -- "$(field $r cpus)" <<<"$node_sets" ||
    fail "--bind-to numa: rank $r has cpus '$(field $r cpus)', which are no NUMA node's: $(tr '\n' '|' <<<"$node_sets")"
done

# --report-bindings says, before the ranks start, what each rank then has.
run -n 2 --bind-to core --report-bindings "$HELPER" affinity
expect_rc 0 "--report-bindings"
for r in 0 1; do
  line=$(grep -E "^xcrun: rank $r: cpus " <<<"$err")
  reported=$(sed -E 's/^xcrun: rank [0-9]+: cpus ([0-9,-]+) .*/\1/' <<<"$line")
  [ -n "$line" ] && [ "$(canon "$reported")" = "$(field $r cpus)" ] ||
    fail "--report-bindings for rank $r: '$line', but the rank has '$(field $r cpus)'"
done
expect_grep "$err" '^xcrun: rank 0: cpus [0-9,-]+ \(core on [^)]*\); GPU [a-z0-9]+; NIC [^ ]+$' "report format"
run -n 2 --bind-to none --report-bindings true
expect_grep "$err" '^xcrun: rank 1: cpus [0-9,-]+ \(not bound\); ' "--report-bindings with --bind-to none"
run -n 2 true
expect_no_grep "$err" 'rank 0: cpus' "no report unless asked"

# Only cpus xcrun may use: under taskset the ranks stay in its set.
if ((${#allowed_list[@]} >= 2)) && command -v taskset >/dev/null; then
  last=${allowed_list[-1]}
  for args in "-n 1 --bind-to core" "-n 2 --bind-to core" "-n 2 --bind-to numa" "-n 2 --bind-to none" "-n 2"; do
    timeout -s KILL 20 taskset -c "$last" "$XCRUN" $args "$HELPER" affinity </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    expect_rc 0 "taskset -c $last xcrun $args"
    check_all "${args:3:1}" "$last" "taskset -c $last xcrun $args"
  done
fi

# Bad values are usage errors.
for args in "--bind-to socket" "--bind-to=" "--bind-to CORE" "--report-bindings=yes"; do
  run -n 2 $args true
  expect_rc 2 "xcrun $args"
  expect_grep "$err" '^usage: xcrun -n N' "xcrun $args shows the usage"
done
run -n 2 --bind-to
expect_rc 2 "--bind-to without a value"
run -n 2 -x XC_LOCAL_GPU=1 true
expect_rc 2 "-x XC_LOCAL_GPU (xcrun sets it)"

# XC_LOCAL_GPU and XC_LOCAL_NIC on this machine; an outer job's values do
# not leak in.
gpus=$(ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l)
nics=$( (ls /sys/class/infiniband 2>/dev/null; ls /sys/class/net 2>/dev/null | grep -vx lo) | sort -u)
XC_LOCAL_GPU=7 XC_LOCAL_NIC=outer run -n 3 "$HELPER" affinity
expect_rc 0 "local GPU and NIC"
for r in 0 1 2; do
  want=-
  ((gpus > 0)) && want=$((r % gpus))
  [ "$(field $r gpu)" = "$want" ] || fail "rank $r: XC_LOCAL_GPU '$(field $r gpu)', want '$want' ($gpus GPUs)"
  if [ -z "$nics" ]; then
    [ "$(field $r nic)" = - ] || fail "rank $r: XC_LOCAL_NIC '$(field $r nic)' on a host without NICs"
  else
    grep -qxF -- "$(field $r nic)" <<<"$nics" || fail "rank $r: XC_LOCAL_NIC '$(field $r nic)' is none of: $nics"
  fi
done

# Made-up machines: two NUMA nodes (and a memory-only third) holding one of
# our real cpus each, GPUs and NICs on either node.
if ((${#allowed_list[@]} >= 2)); then
  A=${allowed_list[0]}
  B=${allowed_list[1]}
  root=$tmp/root
  mk() {  # FILE CONTENT
    mkdir -p "$(dirname "$root/$1")"
    echo "$2" >"$root/$1"
  }
  mk sys/devices/system/cpu/online "$A,$B"
  mk sys/devices/system/node/node0/cpulist "$A"
  mk sys/devices/system/node/node1/cpulist "$B"
  mk sys/devices/system/node/node2/cpulist ""
  mkdir -p "$root/proc/driver/nvidia/gpus/0000:18:00.0" "$root/proc/driver/nvidia/gpus/0000:3b:00.0"
  mk sys/bus/pci/devices/0000:18:00.0/numa_node 1  # GPU 0 on node 1
  mk sys/bus/pci/devices/0000:3b:00.0/numa_node 0  # GPU 1 on node 0
  mk sys/class/infiniband/mlx5_0/device/numa_node 1
  mk sys/class/infiniband/mlx5_1/device/numa_node 0
  mk sys/class/net/docker0/operstate up  # virtual: no device
  mk sys/class/net/eth0/operstate up
  mk sys/class/net/eth0/device/numa_node 0
  mk sys/class/net/eth1/operstate down
  mk sys/class/net/eth1/device/numa_node 1
  mkdir -p "$root/sys/class/net/lo"
  export XCRUN_FSROOT=$root

  # expect_ranks DESCRIPTION "CPUS GPU NIC" ... (one per rank; CPUS "all": A
  # and B; "unbound": the mask xcrun was started with, all of this machine's
  # allowed cpus, which are more than A and B on a machine of more cores)
  expect_ranks() {
    local what=$1 r=0 want cpus gpu nic
    shift
    expect_rc 0 "$what"
    for want in "$@"; do
      read -r cpus gpu nic <<<"$want"
      [ "$cpus" = all ] && cpus="$A $B"
      [ "$cpus" = unbound ] && cpus=$allowed
      [ "$cpus" = A ] && cpus=$A
      [ "$cpus" = B ] && cpus=$B
      local got="$(field $r cpus)/$(field $r gpu)/$(field $r nic)"
      [ "$got" = "$cpus/$gpu/$nic" ] || fail "$what: rank $r got $got, want $cpus/$gpu/$nic"
      r=$((r + 1))
    done
  }

  # The GPU decides the node: GPU 0 is on node 1 (cpu B, mlx5_0).
  run -n 2 --bind-to core "$HELPER" affinity
  expect_ranks "made-up machine, core" "B 0 mlx5_0" "A 1 mlx5_1"
  run -n 4 --bind-to numa --report-bindings "$HELPER" affinity
  expect_ranks "made-up machine, numa" "B 0 mlx5_0" "A 1 mlx5_1" "B 0 mlx5_0" "A 1 mlx5_1"
  expect_grep "$err" "^xcrun: rank 0: cpus $B \\(NUMA node 1\\); GPU 0; NIC mlx5_0$" "made-up machine, report"
  run -n 4 "$HELPER" affinity  # two ranks per one-core node: not bound
  expect_ranks "made-up machine, default with 4 ranks" "unbound 0 mlx5_0" "unbound 1 mlx5_1" "unbound 0 mlx5_0" \
    "unbound 1 mlx5_1"
  run -n 4 --bind-to core "$HELPER" affinity
  expect_ranks "made-up machine, 4 ranks on 2 cores" "B 0 mlx5_0" "A 1 mlx5_1" "B 0 mlx5_0" "A 1 mlx5_1"
  expect_grep "$err" "^xcrun: --bind-to core: 2 ranks on the 1 core of NUMA node 0; they share cores$" "share warning"
  CUDA_VISIBLE_DEVICES=1 run -n 1 "$HELPER" affinity  # the one visible GPU is on node 0
  expect_ranks "made-up machine, CUDA_VISIBLE_DEVICES=1" "A 0 mlx5_1"
  CUDA_VISIBLE_DEVICES= run -n 1 "$HELPER" affinity
  expect_ranks "made-up machine, CUDA_VISIBLE_DEVICES empty" "A - mlx5_1"

  # No GPUs: blocks of ranks per node; no RDMA: the interface on the node,
  # physical before virtual, then the first.
  rm -r "$root/proc" "$root/sys/class/infiniband"
  run -n 2 --bind-to core "$HELPER" affinity
  expect_ranks "made-up machine without GPUs, core" "A - eth0" "B - eth1"
  run -n 4 --bind-to numa "$HELPER" affinity
  expect_ranks "made-up machine without GPUs, numa" "A - eth0" "A - eth0" "B - eth1" "B - eth1"
  run -n 1 "$HELPER" affinity
  expect_ranks "made-up machine without GPUs, -n 1" "A - eth0"
  # Nothing says where the NICs are: the first (physical and up) one.
  rm "$root/sys/class/net/eth1/device/numa_node"
  run -n 2 --bind-to core "$HELPER" affinity
  expect_ranks "NICs of unknown node" "A - eth0" "B - eth0"

  # No NUMA information at all: one node of every cpu.
  rm -r "$root/sys/devices/system/node"
  run -n 2 --bind-to numa --report-bindings "$HELPER" affinity
  expect_ranks "made-up machine without NUMA, numa" "all - eth0" "all - eth0"
  expect_grep "$err" '^xcrun: rank 1: cpus [0-9,-]+ \(the only NUMA node\); ' "no NUMA report"
  run -n 2 --bind-to core "$HELPER" affinity
  expect_ranks "made-up machine without NUMA, core" "A - eth0" "B - eth0"
  unset XCRUN_FSROOT
fi

finish
