# The host id (boot id + hostname + /dev/shm mount, src/base/host_id.cc) decides which ranks
# share memory. A process in other UTS and network namespaces, as in a
# container, with another hostname must get another host id, also when
# xcrun started it beside a rank that did not move; XC_HOST_ID overrides
# the id everywhere. Read through xc-info --json (the third argument).
# Needs unshare (util-linux) and the right to use it (root, or unprivileged
# user namespaces): skipped (77) without.
source "$(dirname "$0")/common.sh"
XC_INFO=$3
unset XC_HOST_ID

# host_ids TEXT: every "host_id" value in xc-info JSON output, one a line.
host_ids() { sed -n 's/.*"host_id": *"\([^"]*\)".*/\1/p' <<<"$1"; }

boot_id=$(cat /proc/sys/kernel/random/boot_id)
outer=$(host_ids "$("$XC_INFO" --json)")
shm=$(stat -c '%d.%i' /dev/shm)
[ "$outer" = "$boot_id:$(hostname):$shm" ] || fail "host id '$outer', want '$boot_id:$(hostname):$shm'"

other=xcomm-ns-$$
UNSHARE=(unshare --uts --net)
if ! "${UNSHARE[@]}" hostname "$other" 2>/dev/null; then
  UNSHARE=(unshare --user --map-root-user --uts --net)
  if ! "${UNSHARE[@]}" hostname "$other" 2>/dev/null; then
    echo "SKIP: cannot make UTS and network namespaces here (unshare needs CAP_SYS_ADMIN or user namespaces)"
    exit 77
  fi
fi

# in_namespace CMD...: CMD in new UTS and network namespaces named $other.
in_namespace() { "${UNSHARE[@]}" sh -c 'hostname "$0" && exec "$@"' "$other" "$@"; }

inner=$(host_ids "$(in_namespace "$XC_INFO" --json)")
[ "$inner" = "$boot_id:$other:$shm" ] || fail "host id in the namespace '$inner', want '$boot_id:$other:$shm'"
[ "$inner" != "$outer" ] || fail "the host id in another namespace equals the outer one: '$inner'"
[ "$(hostname)" != "$other" ] || fail "the namespace changed the outer hostname"

# Same hostname but a private /dev/shm (a container without shared IPC):
# another host, since segments cannot be shared.
if private=$(unshare --mount sh -c 'mount -t tmpfs xcomm-test /dev/shm && exec "$0" --json' "$XC_INFO" 2>/dev/null); then
  [ "$(host_ids "$private")" != "$outer" ] || fail "a private /dev/shm kept the host id '$outer'"
fi

# XC_HOST_ID overrides the id inside and out, so both are one host again.
[ "$(host_ids "$(XC_HOST_ID=shared-host "$XC_INFO" --json)")" = shared-host ] || fail "XC_HOST_ID outside"
[ "$(host_ids "$(XC_HOST_ID=shared-host in_namespace "$XC_INFO" --json)")" = shared-host ] ||
  fail "XC_HOST_ID in the namespace"

# Two ranks of one job, rank 1 moved into the namespaces: two hosts; with
# -x XC_HOST_ID, one.
export XC_INFO other
rank_program='if [ "$XC_RANK" = 1 ]; then exec '"${UNSHARE[*]}"' sh -c '\''hostname "$0" && exec "$1" --json'\'' "$other" "$XC_INFO"; fi
exec "$XC_INFO" --json'
run -n 2 sh -c "$rank_program"
expect_rc 0 "xcrun with rank 1 in other namespaces"
ids=$(host_ids "$out" | sort)
[ "$ids" = "$(printf '%s\n' "$inner" "$outer" | sort)" ] || fail "the two ranks reported host ids: $ids"
run -n 2 -x XC_HOST_ID=one-host sh -c "$rank_program"
expect_rc 0 "xcrun with XC_HOST_ID"
[ "$(host_ids "$out" | sort -u)" = one-host ] || fail "with -x XC_HOST_ID the ranks reported: $(host_ids "$out")"

finish
