#!/bin/sh
# ft (XC_TEST_FT, tests/fault/ft.c) with the ranks alternating between two
# host ids, so revoke, agreement and shrink cross UCX (TCP) between every
# pair of neighbours, as tests/fault/ft.sh expects of a PROG.
XC_HOST_ID="uxhost$((XC_RANK % 2))"
UCX_TLS=${UCX_TLS:-tcp}
export XC_HOST_ID UCX_TLS
exec "$XC_TEST_FT" "$@"
