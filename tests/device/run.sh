#!/usr/bin/env bash
# run.sh COMMAND...: the device suite's wrapper. The tests run on the emulated
# device unless the caller chose one (XC_DEVICE=cuda meson test --suite device
# runs the same tests on a GPU); XC_TIMEOUT defaults to 20 s so that a
# deadlock between streams fails the test instead of hanging it.
export XC_DEVICE=${XC_DEVICE:-emulated}
export XC_TIMEOUT=${XC_TIMEOUT:-20000}
exec "$@"
