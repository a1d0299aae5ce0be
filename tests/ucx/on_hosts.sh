#!/bin/sh
# on_hosts.sh HOSTS PROG [ARGS...]: run under xcrun, puts the ranks on HOSTS
# hosts as far as xcomm can tell (XC_HOST_ID; ranks in blocks: 0..k-1 on
# host 0, and so on; the last host may hold fewer), so ranks on one host id
# share memory and the others talk over UCX. UCX is kept to TCP, what two
# real hosts without an RDMA network would use (its shared-memory transports
# would otherwise join two "hosts" of one machine).
hosts=$1
shift
per_host=$(( (XC_SIZE + hosts - 1) / hosts ))
XC_HOST_ID="uxhost$((XC_RANK / per_host))"
UCX_TLS=${UCX_TLS:-tcp}
export XC_HOST_ID UCX_TLS
exec "$@"
