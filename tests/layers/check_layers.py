#!/usr/bin/env python3
"""Fails on an #include that points up or sideways between layers of src/.

Usage: check_layers.py SRC_DIR TIER [TIER ...]

Each TIER is a comma-separated list of layers (folders under SRC_DIR), bottom
tier first, as src/meson.build declares them. A file belongs to the layer
whose folder is the longest prefix of its path. It may include headers of its
own layer and of any lower tier; an include of a higher tier, or of another
layer of its own tier, is reported with file, line and both layers.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    tier_of = {}
    for tier, spec in enumerate(sys.argv[2:]):
        for layer in spec.split(','):
            tier_of[layer] = tier
    layers = sorted(tier_of, key=len, reverse=True)

    def layer_of(path):
        for layer in layers:
            if path == layer or path.startswith(layer + '/'):
                return layer
        return None

    problems, checked = [], 0
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith(('.h', '.cc', '.cuh', '.cu')):
                continue
            path = os.path.relpath(os.path.join(root, name), src)
            mine = layer_of(path)
            if mine is None:
                continue  # the programs (tools/) and the build's own files
            checked += 1
            with open(os.path.join(root, name), encoding='utf-8') as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    theirs = layer_of(m.group(1))
                    if theirs is None or theirs == mine:
                        continue
                    if tier_of[theirs] >= tier_of[mine]:
                        way = 'up' if tier_of[theirs] > tier_of[mine] else 'sideways'
                        problems.append(f'{path}:{lineno}: {mine}/ includes "{m.group(1)}" of {theirs}/ ({way})')
    for p in problems:
        print(p)
    if checked == 0:
        print(f'no source files found under {src}', file=sys.stderr)
        return 1
    print(f'{checked} files checked, {len(problems)} includes against the layering')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
