#!/usr/bin/env python3
"""Print the tests of a meson build dir that a selection picks, or the files
ninja must build for them (what they run and, through ninja, what that links).

    test_targets.py BUILD names   [--suite S]... [--no-suite S]... [--match REGEX]
    test_targets.py BUILD outputs [same selection]

A test is picked when it is in one of the --suite suites (any suite when none
is given), in none of the --no-suite ones, and its name matches REGEX (when
given). The sanitizer builds (.ci/sanitize) build only these, not the tree.
"""
import argparse
import json
import os
import re
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("what", choices=["names", "outputs"])
    p.add_argument("--suite", action="append", default=[])
    p.add_argument("--no-suite", action="append", default=[])
    p.add_argument("--match")
    a = p.parse_args()
    info = os.path.join(a.build, "meson-info")
    with open(os.path.join(info, "intro-tests.json")) as f:
        tests = json.load(f)
    with open(os.path.join(info, "intro-targets.json")) as f:
        targets = {t["id"]: t for t in json.load(f)}

    def suites(t):  # "xcomm:fault" -> "fault"
        return {s.split(":", 1)[-1] for s in t["suite"]}

    picked = [t for t in tests
              if (not a.suite or suites(t) & set(a.suite))
              and not suites(t) & set(a.no_suite)
              and (not a.match or re.search(a.match, t["name"]))]
    if a.what == "names":
        print("\n".join(t["name"] for t in picked))
        return 0
    outputs = set()
    for t in picked:
        for d in t["depends"]:
            for f in targets[d]["filename"]:
                outputs.add(os.path.relpath(f, a.build))
    print("\n".join(sorted(outputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
