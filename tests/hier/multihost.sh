#!/bin/sh
# One job of ranks spread over pretend hosts on this machine (as_host.sh),
# between "hosts" over UCX (TCP on loopback unless UCX_TLS says otherwise).
#   multihost.sh XC_INFO XCRUN HOSTS [XCRUN OPTIONS...] -- PROGRAM ARGS...
# HOSTS: one host name per rank, comma-separated ("a,a,b,b": 2 hosts x 2).
# Exit 77 (skipped) when the build has no UCX transport.
set -eu
xc_info=$1 xcrun=$2 hosts=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
if ! "$xc_info" --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["build"]["ucx"] else 1)'; then
  echo "skipped: this build has no UCX transport, so ranks on different hosts cannot reach each other"
  exit 77
fi
n=$(echo "$hosts" | tr ',' '\n' | wc -l)
opts=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  opts="$opts $1"
  shift
done
[ $# -gt 0 ] || { echo "multihost.sh: no -- before the program" >&2; exit 2; }
shift
# shellcheck disable=SC2086  # opts are words on purpose
exec "$xcrun" -n "$n" -x XC_TEST_HOSTS="$hosts" -x UCX_TLS="${UCX_TLS:-tcp}" $opts "$here/as_host.sh" "$@"
