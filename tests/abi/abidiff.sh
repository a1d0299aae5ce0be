#!/usr/bin/env bash
# abidiff.sh LIB RECORD SUPPRESSIONS: the library's public ABI (the xc_*
# functions and the types xcomm.h defines, from its debug info) must equal
# the record in the repository. Any difference fails: a break by accident,
# or an intended addition whose commit did not update the record with
#   abidw --suppressions tests/abi/abi.supp --no-corpus-path --short-locs --no-comp-dir-path \
#         --out-file tests/abi/xcomm.abi build/src/libxcomm.so.1
set -uo pipefail
lib=$1 record=$2 supp=$3
if ! command -v abidiff >/dev/null; then
  echo "abidiff not found (Debian: abigail-tools; .ci/deps installs it)"
  exit 77
fi
abidiff --suppressions "$supp" "$record" "$lib"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: the ABI differs from tests/abi/xcomm.abi (abidiff exit $rc). If the change is intended"
  echo "(an addition), record it in the same commit:"
  echo "  abidw --suppressions tests/abi/abi.supp --no-corpus-path --short-locs --no-comp-dir-path --out-file tests/abi/xcomm.abi $lib"
  exit 1
fi
echo "ABI as recorded"
