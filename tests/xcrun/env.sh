# The environment of every rank: XC_* and torchrun variables, the rendezvous
# socket in rank 0 only, -x, inheritance, argument and stdin passing.
source "$(dirname "$0")/common.sh"

# check_job N: every rank's env check passed and all ranks agree on the job.
check_job() {
  local n=$1
  expect_rc 0 "env check at -n $n"
  local ranks
  ranks=$(grep -Eo 'rank=[0-9]+' <<<"$out" | sort -t= -k2 -n | tr '\n' ' ')
  local want=""
  for ((r = 0; r < n; r++)); do want+="rank=$r "; done
  [ "$ranks" = "$want" ] || fail "-n $n: ranks reported '$ranks', want '$want'"
  local shared
  shared=$(sed 's/^rank=[0-9]* //' <<<"$out" | sort -u | wc -l)
  [ "$shared" = 1 ] || fail "-n $n: ranks disagree on token, job or port"
}

for n in 1 3 64; do
  run -n "$n" "$HELPER" env "$n"
  check_job "$n"
done
first_job=$out

run -n 3 "$HELPER" env 3
check_job 3
[ "$(sed -n 's/.*token=\([^ ]*\).*/\1/p' <<<"$first_job" | head -1)" != \
  "$(sed -n 's/.*token=\([^ ]*\).*/\1/p' <<<"$out" | head -1)" ] || fail "two jobs got the same token"
[ "$(sed -n 's/.*job=\([^ ]*\).*/\1/p' <<<"$first_job" | head -1)" != \
  "$(sed -n 's/.*job=\([^ ]*\).*/\1/p' <<<"$out" | head -1)" ] || fail "two jobs got the same job id"

# -x, long form, inherited values, and -x replacing an inherited value.
export XC_TEST_INHERITED=yes XC_TEST_REPLACED=old
run -n 2 -x XC_TEST_EXTRA=hello --env 'XC_TEST_SPACES=a b=c' -x XC_TEST_REPLACED=new -x XC_TEST_TWICE=1 -x XC_TEST_TWICE=2 \
  "$HELPER" env 2 XC_TEST_EXTRA=hello 'XC_TEST_SPACES=a b=c' XC_TEST_INHERITED=yes XC_TEST_REPLACED=new \
  XC_TEST_TWICE=2
check_job 2
unset XC_TEST_INHERITED XC_TEST_REPLACED

# Variables of an outer job (a nested xcrun) must not leak into the ranks:
# the helper fails if rank 1 sees XC_STORE_FD or RANK is not its own.
XC_STORE_FD=99 RANK=7 XC_JOB_ID=outer run -n 2 "$HELPER" env 2
check_job 2
expect_no_grep "$out" 'job=outer' "inherited XC_JOB_ID"

# XC_LOCAL_CORES: the cpus xcrun may use (the library's count of this
# host's cores); an outer job's value is replaced, and taskset narrows it.
XC_LOCAL_CORES=99 run -n 2 sh -c 'echo "cores=$XC_LOCAL_CORES"'
expect_rc 0 "XC_LOCAL_CORES"
[ "$(sort -u <<<"$out")" = "cores=$(nproc)" ] || fail "XC_LOCAL_CORES: '$out', want cores=$(nproc) on every rank"
if command -v taskset >/dev/null; then
  RUN_WRAP="taskset -c 0" run -n 2 sh -c 'echo "cores=$XC_LOCAL_CORES"'
  expect_rc 0 "XC_LOCAL_CORES under taskset"
  [ "$(sort -u <<<"$out")" = "cores=1" ] || fail "XC_LOCAL_CORES under taskset -c 0: '$out', want cores=1"
  # ... and the library counts those (xc-info's "job cores").
  RUN_WRAP="taskset -c 0" run -n 1 "$3"
  expect_grep "$out" 'job cores +1 \(XC_LOCAL_CORES' "the library's core count under taskset -c 0"
fi

# The program is found through PATH.
run -n 2 sh -c 'test "$RANK" = "$XC_RANK" && test "$WORLD_SIZE" = 2'
expect_rc 0 "program from PATH"

# Options end at the program; "--" ends them too.
run -n 1 "$HELPER" args -n 5 --tag-output -- x
expect_rc 0 "arguments after the program"
[ "$out" = $'-n\n5\n--tag-output\n--\nx' ] || fail "arguments reached the program as: $out"
run -n 1 -- "$HELPER" args a
expect_rc 0 "-- before the program"
[ "$out" = "a" ] || fail "arguments after --: $out"

# Standard input reaches rank 0; the others read /dev/null.
echo hello >"$tmp/stdin"
RUN_STDIN=$tmp/stdin run -n 2 "$HELPER" stdin
expect_rc 0 "stdin"
expect_grep "$out" '^rank 0 read \[hello$' "rank 0 reads xcrun's stdin"
expect_grep "$out" '^rank 1 read \[\]$' "rank 1 reads nothing"

finish
