#!/usr/bin/env python3
"""plot.py OUT_DIR RESULTS.md... : busbw against size, xcomm beside Open MPI.

Reads the markdown that docs/bench/compare.sh prints (one table per op, rank
count and placement, headed "### OP, N ranks, ..., PLACEMENT"; several files
are merged, e.g. a small-size run and a large-size run) and writes one PNG per
rank count into OUT_DIR, busbw-Nranks.png: a panel per collective, busbw
(GB/s) against message size on log-log axes, solid for xcomm, dashed for
Open MPI, one colour per placement. Barrier has no busbw and is left out;
columns of "-" (compare.sh run without Open MPI) are left out.

Needs matplotlib (Debian: apt-get install python3-matplotlib). A tool for the
docs: nothing in the tests or CI runs it.
"""

import math
import re
import sys
from collections import defaultdict

HEADING = re.compile(r"^###\s+(\w+),\s+(\d+)\s+ranks?,.*?,?\s*(out-of-place|in-place)\s*$")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and v > 0 else None


def parse(paths):
    """{(op, ranks): {placement: {"xcomm"|"Open MPI": {size: busbw}}}}"""
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for path in paths:
        key = columns = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = HEADING.match(line.strip())
                if m:
                    key = (m.group(1), int(m.group(2)), m.group(3))
                    columns = None
                    continue
                if key is None or not line.lstrip().startswith("|"):
                    continue  # text around the tables
                row = cells(line)
                if columns is None:
                    columns = row
                    continue
                if all(set(c) <= set("-: ") for c in row):
                    continue  # the alignment row
                named = dict(zip(columns, row))
                size = number(named.get("size (B)", ""))
                if size is None:
                    continue
                op, ranks, placement = key
                for lib, col in (("xcomm", "xcomm busbw GB/s"), ("Open MPI", "OMPI busbw GB/s")):
                    bw = number(named.get(col, ""))
                    if bw is not None:
                        data[(op, ranks)][placement][lib][size] = bw
    return data


def size_label(b, _pos=None):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale:
            return "%g%s" % (b / scale, unit)
    return "%g" % b


def plot(data, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    written = []
    for ranks in sorted({r for _, r in data}):
        ops = [op for op, r in data if r == ranks]
        ops = sorted(set(ops), key=lambda o: [k[0] for k in data].index(o))  # file order
        cols = 4
        rows = (len(ops) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
        for ax, op in zip(axes.flat, ops):
            for placement, colour in (("out-of-place", "tab:blue"), ("in-place", "tab:orange")):
                for lib, style in (("xcomm", "-"), ("Open MPI", "--")):
                    points = sorted(data[(op, ranks)].get(placement, {}).get(lib, {}).items())
                    if points:
                        ax.plot([p[0] for p in points], [p[1] for p in points], style, color=colour,
                                marker="o" if lib == "xcomm" else "x", markersize=3,
                                label="%s, %s" % (lib, placement))
            ax.set_title("%s, %d ranks" % (op, ranks), fontsize=10)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(size_label))
            ax.tick_params(labelsize=7)
            ax.grid(True, which="major", alpha=0.3)
            ax.set_xlabel("size (B)", fontsize=8)
            ax.set_ylabel("busbw (GB/s)", fontsize=8)
            ax.legend(fontsize=6)
        for ax in list(axes.flat)[len(ops):]:
            ax.set_visible(False)
        fig.tight_layout()
        path = "%s/busbw-%dranks.png" % (out_dir.rstrip("/"), ranks)
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    data = parse(argv[2:])
    if not data:
        sys.stderr.write("plot.py: no compare.sh tables with busbw in %s\n" % " ".join(argv[2:]))
        return 1
    try:
        written = plot(data, argv[1])
    except ImportError:
        sys.stderr.write("plot.py: needs matplotlib (Debian: apt-get install python3-matplotlib)\n")
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
