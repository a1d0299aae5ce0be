#!/usr/bin/env bash
# Runs the Rust bindings' tests for meson (tests/bindings/rust/meson.build).
#   run.sh CARGO XCRUN MANIFEST test               cargo test (single process)
#   run.sh CARGO XCRUN MANIFEST run EXAMPLE NRANKS build one example of the
#                                                  xcomm crate, run it under xcrun
# CARGO is empty when meson found no cargo: the test is skipped (exit 77).
# XCOMM_LIB_DIR (the built libxcomm) and CARGO_TARGET_DIR (inside the meson
# build directory) come from the environment meson sets. Concurrent runs share
# the target directory; cargo's lock on it serialises their builds.
set -euo pipefail
cargo=$1 xcrun=$2 manifest=$3 mode=$4
if [ -z "$cargo" ] || [ ! -x "$cargo" ]; then
  echo "cargo not found: skipping the Rust bindings' tests"
  exit 77
fi
: "${CARGO_TARGET_DIR:?set CARGO_TARGET_DIR}"
export CARGO_TARGET_DIR
export PATH="$(dirname "$cargo"):$PATH" # rustc next to cargo (rustup's proxies)
case "$mode" in
  test)
    exec "$cargo" test --offline --manifest-path "$manifest"
    ;;
  run)
    example=$5 n=$6
    "$cargo" build --offline --quiet --manifest-path "$manifest" -p xcomm --example "$example"
    exec "$xcrun" -n "$n" --timeout 240 "$CARGO_TARGET_DIR/debug/examples/$example"
    ;;
  *)
    echo "run.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
