#!/bin/sh
# Runs a rank as if on the host XC_TEST_HOSTS (comma-separated, one entry per
# rank) names for XC_RANK: XC_HOST_ID makes the fabric see several hosts on
# this machine (shared memory within one id, UCX between ids).
#   as_host.sh PROGRAM ARGS...
i=0
old_ifs=$IFS
IFS=,
for h in $XC_TEST_HOSTS; do
  if [ "$i" = "$XC_RANK" ]; then XC_HOST_ID=$h; fi
  i=$((i + 1))
done
IFS=$old_ifs
if [ -z "${XC_HOST_ID:-}" ]; then
  echo "as_host.sh: XC_TEST_HOSTS='$XC_TEST_HOSTS' names no host for rank ${XC_RANK:-?}" >&2
  exit 1
fi
export XC_HOST_ID
exec "$@"
