#!/usr/bin/env python3
"""Check that the layers of src/ point down only (docs/ARCHITECTURE.md).

    cli -> report, harness -> backends -> ops -> base

Every `#include "..."` of every file under src/ is resolved (relative to
the file, then to src/) and must land in the file's own layer or in one
the table below allows; report and harness never include each other.
The generated tb_config.h and tb_commit.h may be included anywhere; a
header generated in the build tree belongs to the folder its include
names.
Prints TAP for the test suite (one '# ' line per offending include) and
exits 1 on any offence.

Usage: check_layers.py [SRC_DIR]   (default: src next to this script)
"""
import os
import re
import sys

ALLOWED = {
    "base": {"base"},
    "ops": {"ops", "base"},
    "backends": {"backends", "ops", "base"},
    "harness": {"harness", "backends", "ops", "base"},
    "report": {"report", "base"},
    "cli": {"cli", "report", "harness", "backends", "ops", "base"},
}
GENERATED = {"tb_config.h", "tb_commit.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path, src):
    rel = os.path.relpath(path, src)
    top = rel.split(os.sep)[0]
    return top if top in ALLOWED else None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                          else os.path.join(here, "..", "src"))
    bad = []
    files = 0
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".c", ".h", ".inc", ".cu", ".cuh")):
                continue
            path = os.path.join(root, name)
            mine = layer_of(path, src)
            if mine is None:
                continue
            files += 1
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                if os.path.basename(inc) in GENERATED:
                    continue
                cands = [os.path.normpath(os.path.join(root, inc)),
                         os.path.normpath(os.path.join(src, inc))]
                target = next((c for c in cands if os.path.exists(c)), None)
                # a header generated in the build tree (cpu_config.h):
                # its layer is the folder the include names
                theirs = layer_of(target or cands[1], src)
                if theirs is None:
                    continue
                if theirs not in ALLOWED[mine]:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"src/{os.path.relpath(path, src)}:{line}: "
                               f"{mine} includes {theirs} "
                               f'("{inc}"): layers point down only')
    print("1..1")
    if bad:
        print("not ok 1 - layers point down only")
        for b in bad:
            print(f"# {b}")
        return 1
    print(f"ok 1 - layers point down only ({files} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
