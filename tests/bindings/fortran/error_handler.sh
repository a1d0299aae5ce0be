#!/usr/bin/env bash
# usage: error_handler.sh XCRUN PROGRAM
# The program must fail (non-zero exit) and name the routine and the library's
# message on stderr; it must never get past the failing call.
xcrun=$1
prog=$2
out=$("$xcrun" -n 2 "$prog" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -eq 0 ]; then
  echo "FAIL: exit status 0, expected a failure" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q 'xcomm: xc_send failed: .*(-1): .*out of range'; then
  echo "FAIL: no 'xcomm: xc_send failed: ... (-1): ...out of range' line" >&2
  exit 1
fi
if printf '%s\n' "$out" | grep -q UNREACHABLE; then
  echo "FAIL: the program went on after the error" >&2
  exit 1
fi
echo "ok: exit status $status"
