#!/usr/bin/env bash
# Starts launch_check the way other launchers would, without them: the
# environment of torchrun, Slurm, Open MPI or MPICH/Hydra for N background
# processes, or xcrun with two host ids; torchrun2, slurm2 and openmpi2 as if
# on two nodes (below). Every rank must exit 0.
set -euo pipefail
xcrun=$1 prog=$2 mode=$3 n=${4:-3}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fail() { echo "FAIL: $*"; exit 1; }

if [ "$mode" = hosts ]; then
  # Two "hosts" on one machine: XC_HOST_ID by rank parity.
  "$xcrun" -n "$n" bash -c 'XC_HOST_ID=host$((XC_RANK % 2)) exec "$0" "$@"' "$prog" "$n" parity
  exit $?
fi

# torchrun2, slurm2, openmpi2: the same launchers started on two nodes of
# (n+1)/2 ranks, faked with XC_HOST_ID per node: node-local variables count
# the node's ranks only (LOCAL_RANK, SLURM_LOCALID, ...), and xcomm must take
# local ranks and sizes from the host ids, never assume every rank is here.
per=$(((n + 1) / 2))
pids=()
for ((r = 0; r < n; ++r)); do
  node=$((r / per)) lr=$((r % per)) ln=$(( r / per == (n - 1) / per ? n - (n - 1) / per * per : per ))
  case $mode in
    torchrun2) env XC_HOST_ID=node$node RANK=$r WORLD_SIZE=$n LOCAL_RANK=$lr LOCAL_WORLD_SIZE=$ln GROUP_RANK=$node \
                 GROUP_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TORCHELASTIC_RUN_ID=test$port \
                 "$prog" "$n" nodes=$per & ;;
    slurm2) env XC_HOST_ID=node$node SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$lr SLURM_NODEID=$node \
              SLURM_NNODES=2 SLURM_NTASKS_PER_NODE=$per SLURM_JOB_ID=$port SLURM_STEP_ID=0 \
              XC_STORE_ADDR=127.0.0.1:$port "$prog" "$n" nodes=$per & ;;
    openmpi2) env XC_HOST_ID=node$node OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$lr \
                OMPI_COMM_WORLD_LOCAL_SIZE=$ln OMPI_COMM_WORLD_NODE_RANK=$lr PMIX_NAMESPACE=ns$port \
                XC_STORE_ADDR=127.0.0.1:$port "$prog" "$n" nodes=$per & ;;
    torchrun) env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                TORCHELASTIC_RUN_ID=test$port "$prog" "$n" all & ;;
    slurm) env SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$r SLURM_JOB_ID=$port SLURM_STEP_ID=0 \
             XC_STORE_ADDR=127.0.0.1:$port "$prog" "$n" all & ;;
    openmpi) env OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$r \
               PMIX_NAMESPACE=ns$port XC_STORE_ADDR=127.0.0.1:$port "$prog" "$n" all & ;;
    mpich) env PMI_RANK=$r PMI_SIZE=$n MPI_LOCALRANKID=$r PMI_KVSNAME=kvs$port XC_STORE_ADDR=127.0.0.1:$port \
             "$prog" "$n" all & ;;
    *) fail "unknown mode $mode" ;;
  esac
  pids+=($!)
done
status=0
for ((r = 0; r < n; ++r)); do
  wait "${pids[$r]}" || { echo "rank $r exited with $?"; status=1; }
done
[ $status -eq 0 ] || fail "$mode: a rank failed"
echo "ok: $n ranks started as $mode"
