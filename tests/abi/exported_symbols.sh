#!/usr/bin/env bash
# The shared library must export only xc_* symbols, all of them in the
# XCOMM_1 version node, exactly the list recorded in xcomm.symbols (a new or
# vanished symbol is an ABI decision: update the list on purpose), and carry
# the soname libxcomm.so.1.
set -euo pipefail
lib=$1
recorded=$2
status=0

defined=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sed 's/@.*//' | sort -u)
foreign=$(grep -v '^xc_' <<<"$defined" || true)
if [ -n "$foreign" ]; then
  echo "FAIL: symbols exported without the xc_ prefix:"; echo "$foreign"; status=1
fi

unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" 2>/dev/null | awk '{print $3}' | grep '^xc_' | grep -v '@@XCOMM_1$' || true)
if [ -n "$unversioned" ]; then
  echo "FAIL: xc_ symbols outside the XCOMM_1 version node:"; echo "$unversioned"; status=1
fi

if ! diff -u "$recorded" <(grep '^xc_' <<<"$defined"); then
  echo "FAIL: exported symbols differ from $recorded (lines with + are new, - vanished)"; status=1
fi

soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
if [ "$soname" != "libxcomm.so.1" ]; then
  echo "FAIL: soname is '$soname', expected libxcomm.so.1"; status=1
fi

[ $status -eq 0 ] && echo "ok: $(wc -l <"$recorded") xc_ symbols, soname $soname"
exit $status
