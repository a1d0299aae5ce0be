# xcrun --nnodes: two xcruns on this machine as node 0 and node 1 of one
# job (both on 127.0.0.1, one host id), the environment each rank gets, a
# node that never arrives, and the options that go with --nnodes.
# Arguments: xcrun, helper, launch_check, coll_matrix.
source "$(dirname "$0")/common.sh"
LAUNCH_CHECK=$3
COLL_MATRIX=$4

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'; }

# two_nodes P NODE0_ARGS... -- NODE1_ARGS...: node 1 in the background, node 0
# in front (through run); node 1's status and output land in rc1, out1, err1.
two_nodes() {
  local p=$1 a=() b=()
  shift
  while [ "$1" != -- ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  timeout -s KILL 20 "$XCRUN" --nnodes 2 --node-rank 1 --rdzv "127.0.0.1:$p" "${b[@]}" \
    </dev/null >"$tmp/out1" 2>"$tmp/err1" &
  local pid=$!
  run --nnodes 2 --node-rank 0 --rdzv "127.0.0.1:$p" "${a[@]}"
  wait "$pid"
  rc1=$?
  out1=$(cat "$tmp/out1")
  err1=$(cat "$tmp/err1")
}

# The environment: global ranks K*N.., local ones 0..N-1, the same job id,
# token and store address on both nodes, MASTER_PORT = PORT + 1, the
# store's socket for global rank 0 only.
show='echo "$XC_RANK $XC_SIZE $XC_LOCAL_RANK $XC_LOCAL_SIZE $XC_NNODES $XC_NODE_RANK $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE"
echo "same $XC_STORE_ADDR $MASTER_ADDR $MASTER_PORT $XC_JOB_ID $XC_STORE_TOKEN"
echo "fd ${XC_STORE_FD-none}"'
p=$(free_port)
two_nodes "$p" -n 2 --tag-output sh -c "$show" -- -n 2 --tag-output sh -c "$show"
expect_rc 0 "node 0 printing its environment"
[ "$rc1" = 0 ] || fail "node 1 printing its environment: exit status $rc1: $err1"
for r in 0 1; do expect_grep "$out" "^\[$r\] $r 4 $r 2 2 0 $r 4 $r 2\$" "node 0, rank $r"; done
for r in 2 3; do expect_grep "$out1" "^\[$r\] $r 4 $((r - 2)) 2 2 1 $r 4 $((r - 2)) 2\$" "node 1, rank $r"; done
expect_grep "$out" "^\[0\] fd [0-9]+\$" "rank 0 gets the store's socket"
expect_grep "$out" "^\[1\] fd none\$" "rank 1 gets no socket"
expect_no_grep "$out1" "fd [0-9]" "node 1's ranks get no socket"
same=$( (grep -h ' same ' <<<"$out"; grep -h ' same ' <<<"$out1") | sed 's/^\[[0-9]*\] //' | sort -u)
[ "$(wc -l <<<"$same")" = 1 ] || fail "the nodes disagree on the job: $same"
expect_grep "$same" "^same 127\.0\.0\.1:$p 127\.0\.0\.1 $((p + 1)) xn-[0-9a-f]{16} [0-9a-f]{32}\$" "store, master, job, token"

# Another --job-id: another job id and token. XC_STORE_TOKEN: that token.
run --nnodes 2 --node-rank 1 --rdzv "127.0.0.1:$p" --job-id other -n 1 sh -c "$show"
expect_rc 0 "node 1 alone with --job-id"
expect_no_grep "$out" "$(cut -d' ' -f5 <<<"$same")" "--job-id changes the job id"
XC_STORE_TOKEN=s3cret run --nnodes 2 --node-rank 1 --rdzv "127.0.0.1:$p" -n 1 sh -c "$show"
expect_grep "$out" " s3cret\$" "XC_STORE_TOKEN is the token"

# A job over both nodes: the launch checks (world size, local ranks,
# allreduce of the ranks) and the allreduce matrix, results checked.
p=$(free_port)
two_nodes "$p" -n 2 "$LAUNCH_CHECK" 4 all -- -n 2 "$LAUNCH_CHECK" 4 all
expect_rc 0 "launch_check on node 0"
[ "$rc1" = 0 ] || fail "launch_check on node 1: exit status $rc1: $out1 $err1"
expect_grep "$out$out1" "rank 3 of 4: ok" "rank 3 of 4 checked"
p=$(free_port)
two_nodes "$p" -n 2 "$COLL_MATRIX" --quick allreduce -- -n 2 "$COLL_MATRIX" --quick allreduce
expect_rc 0 "coll_matrix allreduce on node 0"
[ "$rc1" = 0 ] || fail "coll_matrix allreduce on node 1: exit status $rc1: $out1 $err1"
expect_grep "$out" "cases passed" "the allreduce results were checked"

# Node 1 never comes: node 0 fails within the deadline (2 s, plus start-up
# and xcrun's settling time) naming node rank 1 and its ranks 2 and 3.
p=$(free_port)
XC_TIMEOUT=2000 run --nnodes 2 --node-rank 0 --rdzv "127.0.0.1:$p" -n 2 "$LAUNCH_CHECK" 4 all
expect_rc 1 "node 0 without node 1"
expect_grep "$err" "ranks 2, 3 never arrived \(node rank 1," "the message names node rank 1 and ranks 2, 3"
expect_faster 8000 "node 0 without node 1"

# Option checks.
bad() {  # DESCRIPTION ERE ARGS...
  local what=$1 want=$2
  shift 2
  run "$@"
  expect_rc 2 "$what"
  expect_grep "$err" "^xcrun: .*$want" "$what says what is wrong"
}
bad "--node-rank out of range" "--node-rank 2 is out of range" --nnodes 2 --node-rank 2 --rdzv 127.0.0.1:1 -n 1 true
bad "--node-rank -1" "--node-rank wants" --nnodes 2 --node-rank -1 --rdzv 127.0.0.1:1 -n 1 true
bad "--nnodes 0" "--nnodes wants" --nnodes 0 --node-rank 0 --rdzv 127.0.0.1:1 -n 1 true
bad "no --rdzv" "--nnodes wants --rdzv" --nnodes 2 --node-rank 0 -n 1 true
bad "no --node-rank" "--nnodes wants --node-rank" --nnodes 2 --rdzv 127.0.0.1:1 -n 1 true
bad "--rdzv without --nnodes" "add --nnodes" --rdzv 127.0.0.1:1 -n 1 true
bad "--rdzv without port" "the port is missing" --nnodes 2 --node-rank 0 --rdzv 127.0.0.1 -n 1 true
bad "--rdzv port 0" "from 1 to 65534" --nnodes 2 --node-rank 0 --rdzv 127.0.0.1:0 -n 1 true
bad "--rdzv port 65535" "from 1 to 65534" --nnodes 2 --node-rank 0 --rdzv 127.0.0.1:65535 -n 1 true
bad "--rdzv port x" "from 1 to 65534" --nnodes 2 --node-rank 0 --rdzv host:x -n 1 true
bad "--rdzv empty host" "the host is empty" --nnodes 2 --node-rank 0 --rdzv :80 -n 1 true
bad "--rdzv bare IPv6" "brackets" --nnodes 2 --node-rank 0 --rdzv ::1:80 -n 1 true
bad "--rdzv bad brackets" "\[IPv6\]:PORT" --nnodes 2 --node-rank 0 --rdzv '[::1]80' -n 1 true
bad "too many ranks" "more than 1048576 ranks" --nnodes 1000 --node-rank 0 --rdzv 127.0.0.1:1 -n 4096 true
# Node 0 somewhere else: refused before any rank starts.
run --nnodes 2 --node-rank 0 --rdzv 192.0.2.1:5000 -n 1 true
expect_rc 1 "node 0 not on the rendezvous host"
expect_grep "$err" "is not an address of this node" "node 0 not on the rendezvous host says so"

finish
