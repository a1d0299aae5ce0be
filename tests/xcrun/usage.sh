# Bad usage exits 2 with a message and the usage; --help and --version exit 0.
source "$(dirname "$0")/common.sh"

bad() {  # DESCRIPTION ARGS...
  local what=$1
  shift
  run "$@"
  expect_rc 2 "$what"
  expect_grep "$err" '^usage: xcrun -n N' "$what shows the usage"
  expect_grep "$err" '^xcrun: ' "$what says what is wrong"
}

bad "no arguments"
bad "no -n" true
bad "-n 0" -n 0 true
bad "-n 4097" -n 4097 true
bad "-n abc" -n abc true
bad "-n 2x" -n 2x true
bad "-n without value" -n
bad "no program" -n 2
bad "unknown option" --bogus -n 2 true
bad "unknown short option" -q -n 2 true
bad "-x without =" -n 2 -x NOEQUALS true
bad "-x bad name" -n 2 -x 1A=b true
bad "-x managed name" -n 2 -x XC_RANK=3 true
bad "--timeout 0" -n 2 --timeout 0 true
bad "--timeout -1" -n 2 --timeout -1 true
bad "--grace x" -n 2 --grace x true
bad "--tag-output with value" -n 2 --tag-output=yes true

run --help
expect_rc 0 "--help"
expect_grep "$out" '^usage: xcrun -n N' "--help prints the usage"
run -h
expect_rc 0 "-h"
run --version
expect_rc 0 "--version"
expect_grep "$out" '^xcrun \(xcomm\) [0-9]+\.[0-9]+\.[0-9]+$' "--version"

# The other spellings of -n.
run --np 2 true
expect_rc 0 "--np 2"
run --np=2 true
expect_rc 0 "--np=2"
run -n2 true
expect_rc 0 "-n2"
run -n 4096 --grace 0 --help
expect_rc 0 "-n 4096 is accepted"

finish
