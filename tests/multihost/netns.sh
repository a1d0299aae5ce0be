# Sourced by the multihost tests: H "hosts" as network namespaces on this
# machine, joined by a bridge in the root namespace, each running one xcrun
# node of a job. Needs root (CAP_NET_ADMIN) and iproute2: without them the
# test prints why and exits 77 (meson's "skipped"). The sourcing script sets
# MH_XCRUN and MH_XC_BENCH (paths of the built xcrun and xc-bench).
#
#   mh_hosts H              make hosts 0..H-1 (addresses 10.77.<net>.<h+1>/24)
#   mh_addr h               host h's address
#   run_on h CMD...         CMD inside host h's namespace (ip netns exec)
#   mh_job NAME H R [--expect-fail|--any-status] [--timeout S] [--started K] -- PROG ARGS...
#                           one job: xcrun --nnodes H on each host, R ranks
#                           each; mh_start + mh_wait, to act while it runs
#   mh_out NAME h           host h's output of that job
#   mh_wait_lines NAME ERE COUNT S   poll the job's stdout for COUNT lines
#   mh_link_down h          take host h's link down (its veth in the root namespace)
#   mh_check_shm JOBID      fail if /dev/shm holds xcomm-JOBID-*
#   mh_need_network_transport   skip (77) without a transport between hosts (UCX)
#   mh_fail TEXT / mh_finish    record a failure / exit 1 if any, else 0
#
# The namespaces share the kernel, /dev/shm and the boot id, so each host
# sets XC_HOST_ID=nshost<h>: without it the ranks of all hosts would count as
# one host and talk through shared memory, and nothing would cross the
# network. UCX_TLS=tcp: between namespaces only TCP over the veths is a
# network; UCX's shared-memory and CMA transports would reach the peer
# through the shared kernel, which real hosts cannot. UCX_NET_DEVICES=eth0:
# each host's one link; lo's 127.0.0.1 is every namespace's own, so a peer's
# loopback address would lead a rank back to its own host.
#
# Names carry $$ (bridge xcmb<pid>, namespaces xcm<pid>h<h>), and the /24 is
# picked from $$ too, so tests running at once do not collide; everything is
# removed on exit (trap), also after a failure.
set -u

MH_FAILURES=0
MH_PID=$$
MH_NET=$(( (MH_PID % 200) + 20 ))  # 10.77.20.0/24 .. 10.77.219.0/24
MH_BRIDGE=xcmb$MH_PID
MH_HOSTS=0
MH_DIR=$(mktemp -d)
MH_TIMEOUT_MS=${MH_TIMEOUT_MS:-10000}  # XC_TIMEOUT of every job
declare -a mh_rc

mh_fail() {
  echo "FAIL: $*"
  MH_FAILURES=$((MH_FAILURES + 1))
}

mh_skip() {
  echo "SKIP: $*"
  exit 77
}

mh_ns() { echo "xcm${MH_PID}h$1"; }
mh_veth() { echo "xcm${MH_PID}v$1"; }  # the root namespace's end of host $1's link
mh_addr() { echo "10.77.$MH_NET.$(($1 + 1))"; }

mh_cleanup() {
  local h
  for ((h = 0; h < MH_HOSTS; ++h)); do
    # Whatever still runs in the namespace (a test that failed half-way).
    local pids
    pids=$(ip netns pids "$(mh_ns "$h")" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$(mh_ns "$h")" 2>/dev/null
    ip link del "$(mh_veth "$h")" 2>/dev/null
  done
  ip link del "$MH_BRIDGE" 2>/dev/null
  rm -rf "$MH_DIR"
}
trap mh_cleanup EXIT
trap 'exit 130' INT TERM

run_on() {
  local h=$1
  shift
  ip netns exec "$(mh_ns "$h")" "$@"
}

# mh_hosts H: the bridge, then per host a namespace, a veth pair (one end on
# the bridge, the other inside as eth0 with its address) and lo up.
mh_hosts() {
  local n=$1 h
  [ "$(id -u)" = 0 ] || mh_skip "network namespaces need root (CAP_NET_ADMIN)"
  command -v ip >/dev/null || mh_skip "ip (iproute2) is not installed"
  ip link add "$MH_BRIDGE" type bridge 2>"$MH_DIR/ip.err" ||
    mh_skip "cannot make a bridge: $(cat "$MH_DIR/ip.err")"
  ip link set "$MH_BRIDGE" up
  for ((h = 0; h < n; ++h)); do
    ip netns add "$(mh_ns "$h")" 2>"$MH_DIR/ip.err" || mh_skip "cannot make a network namespace: $(cat "$MH_DIR/ip.err")"
    MH_HOSTS=$((h + 1))
    ip link add "$(mh_veth "$h")" type veth peer name eth0 netns "$(mh_ns "$h")" &&
      ip link set "$(mh_veth "$h")" master "$MH_BRIDGE" &&
      ip link set "$(mh_veth "$h")" up &&
      run_on "$h" ip addr add "$(mh_addr "$h")/24" dev eth0 &&
      run_on "$h" ip link set eth0 up &&
      run_on "$h" ip link set lo up || mh_skip "cannot wire host $h"
  done
  # The bridge may take a moment to forward (a link comes up asynchronously):
  # poll with a deadline until host 0 reaches every other.
  for ((h = 1; h < n; ++h)); do
    local deadline=$((SECONDS + 10))
    until mh_reaches 0 "$h"; do
      [ $SECONDS -lt $deadline ] || { mh_fail "host 0 cannot reach host $h ($(mh_addr "$h"))"; mh_finish; }
    done
  done
}

# mh_reaches A B: whether host A reaches host B over TCP. ping is not always
# installed; a TCP connect to a closed port answers with a reset when B is
# reachable (refused = reached) and times out when it is not.
mh_reaches() {
  run_on "$1" python3 -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], 9), timeout=1).close()
except ConnectionRefusedError:
    pass
except OSError:
    sys.exit(1)' "$(mh_addr "$2")"
}

mh_link_down() { ip link set "$(mh_veth "$1")" down; }

# A TCP port free in host 0's namespace now (each namespace has its own ports).
mh_port() { run_on 0 python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'; }

# mh_start NAME H R [--expect-fail|--any-status] [--timeout S] [--started K] -- PROG ARGS...:
# starts one job in the background: xcrun --nnodes H on hosts 0..K-1 (K
# defaults to H; fewer: the others never arrive), R ranks each, every xcrun
# bounded by `timeout` (S seconds, default 60). mh_wait waits for it.
mh_start() {
  MH_NAME=$1 MH_JOB_HOSTS=$2 MH_EXPECT_FAIL=0 MH_LIMIT=60 MH_STARTED=$2
  local ranks=$3 h
  shift 3
  while [ "$1" != -- ]; do
    case $1 in
      --expect-fail) MH_EXPECT_FAIL=1 ;;
      --any-status) MH_EXPECT_FAIL=2 ;;
      --timeout) MH_LIMIT=$2; shift ;;
      --started) MH_STARTED=$2; shift ;;
    esac
    shift
  done
  shift
  MH_WHAT="$MH_NAME ($MH_JOB_HOSTS hosts x $ranks ranks: ${*##*/})"
  local port rdzv
  port=$(mh_port)
  rdzv=$(mh_addr 0):$port
  MH_JOB_ID=$(mh_job_id "$rdzv")
  MH_PIDS=()
  MH_T0=$(mh_now_ms)
  # --bind-to none: every "host" is this one machine, and each node's xcrun
  # would pin its local rank 0 to the same core as the others' (one core
  # time-sliced between the hosts' ranks: 530 µs per 8 B message, not 8).
  for ((h = 0; h < MH_STARTED; ++h)); do
    run_on "$h" env XC_HOST_ID="nshost$h" UCX_TLS=tcp UCX_NET_DEVICES=eth0 XC_TIMEOUT="$MH_TIMEOUT_MS" \
      timeout -s KILL "$MH_LIMIT" "$MH_XCRUN" --nnodes "$MH_JOB_HOSTS" --node-rank "$h" --rdzv "$rdzv" -n "$ranks" \
      --bind-to none --tag-output "$@" </dev/null >"$MH_DIR/$MH_NAME.$h.out" 2>"$MH_DIR/$MH_NAME.$h.err" &
    MH_PIDS+=($!)
  done
}

# mh_wait: waits for the job of mh_start; sets mh_rc[h] and MH_ELAPSED_MS.
# Fails the test if a host's xcrun did not exit 0 (with --expect-fail: if
# every host did), if the guard had to kill one, or if /dev/shm keeps the
# job's files.
mh_wait() {
  local h any_failed=0
  for ((h = 0; h < MH_STARTED; ++h)); do
    wait "${MH_PIDS[$h]}"
    mh_rc[$h]=$?
    [ "${mh_rc[$h]}" = 0 ] || any_failed=1
    [ "${mh_rc[$h]}" != 137 ] || [ "$MH_EXPECT_FAIL" != 0 ] || mh_fail "$MH_WHAT: host $h's xcrun was killed (past ${MH_LIMIT}s?)"
  done
  MH_ELAPSED_MS=$(($(mh_now_ms) - MH_T0))
  if [ "$MH_EXPECT_FAIL" = 0 ] && [ $any_failed = 1 ]; then
    mh_fail "$MH_WHAT: exit statuses ${mh_rc[*]:0:$MH_STARTED}"
    mh_show "$MH_NAME" "$MH_STARTED"
  elif [ "$MH_EXPECT_FAIL" = 1 ] && [ $any_failed = 0 ]; then
    mh_fail "$MH_WHAT: every host succeeded, a failure was expected"
  else
    echo "ok: $MH_WHAT in $MH_ELAPSED_MS ms"
  fi
  mh_check_shm "$MH_JOB_ID"
}

mh_job() {  # mh_start's arguments; then mh_wait
  mh_start "$@"
  mh_wait
}

# mh_wait_lines NAME ERE COUNT SECONDS: polls until the job's stdout (all
# hosts) has COUNT lines matching ERE; false after SECONDS.
mh_wait_lines() {
  local deadline=$((SECONDS + $4))
  until [ "$(cat "$MH_DIR/$1".*.out 2>/dev/null | grep -Ec -- "$2")" -ge "$3" ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.05  # between looks; the deadline above bounds the wait
  done
}

mh_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Skips (77) unless the library has a transport between hosts (until then
# every op between the namespaces fails as unsupported): asked of the
# library itself, by one message from host 0 to host 1 (xc-info's list of
# transports is text written by hand).
mh_have_network_transport() {
  MH_TIMEOUT_MS=5000 mh_start probe 2 1 --any-status -- "$MH_XC_BENCH" pingpong -b 8 -e 8 -n 1 -w 0
  mh_wait >/dev/null
  MH_NO_TRANSPORT=$(cat "$MH_DIR"/probe.*.err | grep -m 1 'no inter-host transport')
  [ -z "$MH_NO_TRANSPORT" ]
}
mh_need_network_transport() {
  mh_have_network_transport || mh_skip "no transport between hosts in this build: $MH_NO_TRANSPORT"
}

# The job id xcrun derives from --rdzv (and no --job-id): read back from a
# rank's environment rather than computed here, so the two cannot drift.
mh_job_id() {
  run_on 0 env -u XC_STORE_TOKEN "$MH_XCRUN" --nnodes 2 --node-rank 1 --rdzv "$1" -n 1 sh -c 'echo "$XC_JOB_ID"'
}

mh_show() {  # NAME H: every host's output, indented
  local h
  for ((h = 0; h < $2; ++h)); do
    echo "  host $h (exit ${mh_rc[$h]}):"
    sed 's/^/    | /' "$MH_DIR/$1.$h.out" "$MH_DIR/$1.$h.err" | tail -n 20
  done
}

mh_out() { cat "$MH_DIR/$1.$2.out" "$MH_DIR/$1.$2.err"; }  # NAME h: host h's stdout and stderr

mh_check_shm() {
  local left
  left=$(find /dev/shm -maxdepth 1 -name "xcomm-$1-*" 2>/dev/null)
  [ -z "$left" ] || mh_fail "job $1 left files in /dev/shm: $left"
}

mh_finish() {
  if [ "$MH_FAILURES" -ne 0 ]; then
    echo "$MH_FAILURES check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
