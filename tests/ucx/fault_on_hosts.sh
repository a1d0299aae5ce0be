#!/bin/sh
# fault_kill (XC_TEST_FAULT_KILL) on two hosts: ranks alternate between the
# two host ids, so the victim (the last rank) is on the other host from
# rank 0 and shares one with rank 1 (as fault_kill.sh expects of a PROG).
XC_HOST_ID="uxhost$((XC_RANK % 2))"
UCX_TLS=${UCX_TLS:-tcp}
export XC_HOST_ID UCX_TLS
exec "$XC_TEST_FAULT_KILL" "$@"
