"""Run the Python binding tests with pytest; used by meson (directly and
through xcrun, where every rank runs this same script and so the same tests in
the same order, which the collectives need).

Exit status: pytest's, except 77 (meson's "skipped") when numpy, pytest or
cffi cannot be imported, and 1 instead of pytest's 5 ("no tests collected"),
which would mean the test files were not found: never a pass.
"""

import os
import sys


def main(argv):
    try:
        import cffi  # noqa: F401
        import numpy  # noqa: F401
        import pytest
    except ImportError as e:
        print("skipping the Python binding tests: %s (install numpy, pytest and cffi)" % e)
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    # -x: stop at the first failure, so a rank that failed exits (and xcrun
    # stops the job) instead of running on out of step with the other ranks.
    args = ["-q", "-x", "-p", "no:cacheprovider", "--rootdir", here, "-c", os.path.join(here, "pytest.ini")]
    rc = int(pytest.main(args + argv))
    if rc == int(pytest.ExitCode.NO_TESTS_COLLECTED):
        print("error: pytest collected no tests from %s" % " ".join(argv))
        return 1
    return rc


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
