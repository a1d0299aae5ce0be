#!/bin/sh
# fault_blame (XC_TEST_FAULT_BLAME) on two hosts: ranks alternate between
# the two host ids, so every victim has a host mate and survivors on the
# other host, reached over UCX.
XC_HOST_ID="uxhost$((XC_RANK % 2))"
UCX_TLS=${UCX_TLS:-tcp}
export XC_HOST_ID UCX_TLS
exec "$XC_TEST_FAULT_BLAME" "$@"
